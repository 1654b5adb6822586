//===- WarpMatrix.cpp - Tensor-core fragments and products ----------------===//
//
// Fragment layouts of mma.sync (PTX ISA, "Matrix Fragments for mma.m16n8k*"),
// the layout chosen for wmma, the warp-wide products and ldmatrix's
// distribution of rows to lanes. In the ISA's terms a lane's groupID is
// lane / 4 and its threadID_in_group lane % 4.
//
//===----------------------------------------------------------------------===//

#include "WarpMatrix.h"

#include "LaneArithmetic.h"

#include <algorithm>
#include <cmath>

using namespace ridge::emu;
using namespace ridge::emu::detail;

std::string detail::getFragmentShape(Opcode opcode,
                                     const MatrixOperands &matrix,
                                     FragmentRole role, Type type,
                                     FragmentShape &shape) {
  bool isWmma = opcode != Opcode::Mma;
  unsigned m = matrix.m, n = matrix.n, k = matrix.k;
  std::string name = "m" + std::to_string(m) + "n" + std::to_string(n) + "k" +
                     std::to_string(k);
  bool known =
      isWmma ? m == 16 && n == 16 && (k == 16 || k == 8)
             : m == 16 && n == 8 && (k == 4 || k == 8 || k == 16 || k == 32);
  if (!known)
    return "shape ." + name;
  unsigned bits = getTypeBits(type);
  bool ok = false;
  switch (role) {
  case FragmentRole::A:
  case FragmentRole::B:
    if (type == Type::F16 || type == Type::BF16)
      ok = k == 16 || (!isWmma && k == 8);
    else if (type == Type::TF32)
      ok = k == 8 || (!isWmma && k == 4);
    else if (type == Type::S8 || type == Type::U8)
      ok = !isWmma && (k == 16 || k == 32);
    break;
  case FragmentRole::C:
    ok = type == Type::F32 || type == Type::F16 || type == Type::S32;
    break;
  }
  if (!ok)
    return std::string(role == FragmentRole::A   ? "A"
                       : role == FragmentRole::B ? "B"
                                                 : "C/D") +
           " type ." + getTypeName(type) + " for ." + name;
  shape.bits = bits;
  shape.perReg = 32 / bits;
  shape.rows = role == FragmentRole::B ? k : m;
  shape.cols = role == FragmentRole::A ? k : n;
  shape.elements = shape.rows * shape.cols / 32;
  // wmma's f16 A and B fragments are 8 registers (the PTX ISA fixes their
  // count), twice what 16x16 elements need: here the second four registers
  // repeat the first four, so elementwise code that visits every element
  // of the fragment keeps both copies equal.
  if (isWmma && type == Type::F16 && role != FragmentRole::C)
    shape.elements *= 2;
  shape.regs = shape.elements / shape.perReg;
  return "";
}

void detail::locateElement(Opcode opcode, const MatrixOperands &matrix,
                           FragmentRole role, const FragmentShape &shape,
                           unsigned lane, unsigned index, unsigned &row,
                           unsigned &col) {
  unsigned g = lane / 4, t = lane % 4, i = index, k = matrix.k;
  bool isWmma = opcode != Opcode::Mma;
  // An m16n8 C fragment: rows g and g + 8, two adjacent columns.
  auto accumulator = [&](unsigned e, unsigned &r, unsigned &c) {
    r = g + 8 * (e >> 1);
    c = 2 * t + (e & 1);
  };
  // The m16n8kK A fragment of elements of `bits`.
  auto fragmentA = [&](unsigned e, unsigned kk, unsigned &r, unsigned &c) {
    if (shape.bits == 16 && kk == 16) {
      r = g + 8 * ((e >> 1) & 1);
      c = 2 * t + (e & 1) + 8 * (e >> 2);
    } else if (shape.bits == 16) { // k8
      r = g + 8 * (e >> 1);
      c = 2 * t + (e & 1);
    } else if (shape.bits == 32 && kk == 8) {
      r = g + 8 * (e & 1);
      c = t + 4 * (e >> 1);
    } else if (shape.bits == 32) { // k4
      r = g + 8 * e;
      c = t;
    } else if (kk == 32) { // 8-bit
      r = g + 8 * ((e >> 2) & 1);
      c = 4 * t + (e & 3) + 16 * (e >> 3);
    } else { // 8-bit k16
      r = g + 8 * (e >> 2);
      c = 4 * t + (e & 3);
    }
  };
  // The m16n8kK B fragment: k rows, column g.
  auto fragmentB = [&](unsigned e, unsigned kk, unsigned &r, unsigned &c) {
    c = g;
    if (shape.bits == 16)
      r = 2 * t + (e & 1) + 8 * (e >> 1);
    else if (shape.bits == 32)
      r = t + 4 * e;
    else
      r = 4 * t + (e & 3) + 16 * (e >> 2);
    (void)kk;
  };
  if (!isWmma) {
    if (role == FragmentRole::A)
      fragmentA(i, k, row, col);
    else if (role == FragmentRole::B)
      fragmentB(i, k, row, col);
    else
      accumulator(i, row, col);
    return;
  }
  // wmma m16n16kK: A is one m16n8kK A fragment (repeated for f16); B and C
  // are two m16n8kK fragments side by side, columns 0-7 then 8-15.
  unsigned per8 = role == FragmentRole::B ? k * 8 / 32 : 4;
  if (role == FragmentRole::A) {
    fragmentA(i % (16 * k / 32), k, row, col);
    return;
  }
  unsigned e = i % (2 * per8);
  unsigned half = e / per8;
  if (role == FragmentRole::B)
    fragmentB(e % per8, k, row, col);
  else
    accumulator(e % per8, row, col);
  col += 8 * half;
}

namespace {
/// One fragment unpacked to a dense rows x cols matrix.
struct Dense {
  unsigned rows = 0, cols = 0;
  std::vector<double> values; // exact for every element type here
  double &at(unsigned r, unsigned c) { return values[r * cols + c]; }
};

double decodeElement(Type type, uint32_t bits) {
  switch (type) {
  case Type::F16:
  case Type::BF16:
    return unpackFloat(type, bits);
  case Type::TF32:
    // A tf32 operand is the top 19 bits of its register; the low 13
    // mantissa bits take no part (cvt.rna.tf32.f32 leaves them 0).
    return bitsToF32(bits & 0xffffe000u);
  case Type::F32:
    return bitsToF32(bits);
  case Type::S8:
    return static_cast<double>(signExtend(bits, 8));
  case Type::S32:
    return static_cast<double>(static_cast<int32_t>(bits));
  default: // U8
    return static_cast<double>(bits & 0xff);
  }
}

std::string unpack(const Instruction &inst, FragmentRole role, Type type,
                   const std::vector<uint32_t> &regs, Dense &dense) {
  FragmentShape shape;
  std::string error =
      getFragmentShape(inst.opcode, inst.matrix, role, type, shape);
  if (!error.empty())
    return error;
  dense.rows = shape.rows;
  dense.cols = shape.cols;
  dense.values.assign(shape.rows * shape.cols, 0.0);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned i = 0; i < shape.elements; ++i) {
      unsigned row, col;
      locateElement(inst.opcode, inst.matrix, role, shape, lane, i, row, col);
      uint32_t reg = regs[(i / shape.perReg) * 32 + lane];
      uint32_t bits = static_cast<uint32_t>(
          (reg >> ((i % shape.perReg) * shape.bits)) & maskOf(shape.bits));
      dense.at(row, col) = decodeElement(type, bits);
    }
  return "";
}
} // namespace

std::string detail::multiplyFragments(const Instruction &inst,
                                      const std::vector<uint32_t> &a,
                                      const std::vector<uint32_t> &b,
                                      const std::vector<uint32_t> &c,
                                      std::vector<uint32_t> &d) {
  const MatrixOperands &matrix = inst.matrix;
  Dense da, db, dc;
  std::string error;
  if (!(error = unpack(inst, FragmentRole::A, matrix.a, a, da)).empty() ||
      !(error = unpack(inst, FragmentRole::B, matrix.b, b, db)).empty() ||
      !(error = unpack(inst, FragmentRole::C, matrix.c, c, dc)).empty())
    return error;
  FragmentShape shapeD;
  error =
      getFragmentShape(inst.opcode, matrix, FragmentRole::C, matrix.d, shapeD);
  if (!error.empty())
    return error;
  bool isInteger = matrix.d == Type::S32;
  unsigned m = da.rows, k = da.cols, n = db.cols;
  std::vector<uint32_t> result(m * n);
  for (unsigned i = 0; i < m; ++i)
    for (unsigned j = 0; j < n; ++j) {
      if (isInteger) {
        // |a * b| < 2^16 and k <= 32: the int64 sum is exact.
        int64_t sum = static_cast<int64_t>(dc.at(i, j));
        for (unsigned kk = 0; kk < k; ++kk)
          sum += static_cast<int64_t>(da.at(i, kk)) *
                 static_cast<int64_t>(db.at(kk, j));
        if (inst.sat)
          sum = std::min<int64_t>(INT32_MAX, std::max<int64_t>(INT32_MIN, sum));
        result[i * n + j] = static_cast<uint32_t>(sum);
        continue;
      }
      // Hardware accumulates in at least f32 in an unspecified order; this
      // is one faithful choice: k ascending, each product exact and added
      // to the f32 sum with one rounding (an fma).
      float sum = static_cast<float>(dc.at(i, j));
      for (unsigned kk = 0; kk < k; ++kk)
        sum = std::fma(static_cast<float>(da.at(i, kk)),
                       static_cast<float>(db.at(kk, j)), sum);
      result[i * n + j] = static_cast<uint32_t>(packFloat(matrix.d, sum));
    }
  d.assign(shapeD.regs * 32, 0);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned e = 0; e < shapeD.elements; ++e) {
      unsigned row, col;
      locateElement(inst.opcode, matrix, FragmentRole::C, shapeD, lane, e, row,
                    col);
      uint32_t bits =
          result[row * n + col] & static_cast<uint32_t>(maskOf(shapeD.bits));
      d[(e / shapeD.perReg) * 32 + lane] |=
          bits << ((e % shapeD.perReg) * shapeD.bits);
    }
  return "";
}

// ldmatrix gives lane l of matrix m the pair of 16-bit elements in row l / 4,
// columns 2 * (l % 4) and 2 * (l % 4) + 1; under .trans the pair in column
// l / 4, rows 2 * (l % 4) and 2 * (l % 4) + 1.
static unsigned rowsIndex(unsigned matrix, bool transpose, unsigned lane,
                          unsigned half) {
  unsigned r = lane / 4, c = 2 * (lane % 4) + half;
  if (transpose)
    std::swap(r, c);
  return matrix * 64 + r * 8 + c;
}

void detail::distributeMatrices(unsigned count, bool transpose,
                                const std::vector<uint16_t> &rows,
                                std::vector<uint32_t> &regs) {
  regs.assign(count * 32, 0);
  for (unsigned m = 0; m < count; ++m)
    for (unsigned lane = 0; lane < 32; ++lane)
      regs[m * 32 + lane] =
          rows[rowsIndex(m, transpose, lane, 0)] |
          (uint32_t(rows[rowsIndex(m, transpose, lane, 1)]) << 16);
}

void detail::collectMatrices(unsigned count, bool transpose,
                             const std::vector<uint32_t> &regs,
                             std::vector<uint16_t> &rows) {
  rows.assign(count * 64, 0);
  for (unsigned m = 0; m < count; ++m)
    for (unsigned lane = 0; lane < 32; ++lane) {
      uint32_t reg = regs[m * 32 + lane];
      rows[rowsIndex(m, transpose, lane, 0)] = static_cast<uint16_t>(reg);
      rows[rowsIndex(m, transpose, lane, 1)] = static_cast<uint16_t>(reg >> 16);
    }
}
