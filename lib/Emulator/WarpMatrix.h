//===- WarpMatrix.h - Tensor-core fragments and products -------*- C++ -*-===//
//
// Private to the emulator: what the warp-wide matrix instructions compute
// (mma.sync, wmma.mma, ldmatrix, stmatrix), apart from how the executor
// gathers registers and reaches memory. A fragment is the registers of all
// 32 lanes, register-major: regs[r * 32 + lane], 32 bits each. Each lane
// holds its elements in the places the PTX ISA's fragment figures give them
// (mma.sync, ldmatrix); wmma's layout is opaque in the ISA, and this one is
// built from mma.sync m16n8 fragments (see docs/emulator.md).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_EMULATOR_WARPMATRIX_H
#define RIDGELINE_LIB_EMULATOR_WARPMATRIX_H

#include "ridgeline/Emulator/Ptx.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ridge::emu::detail {

/// Which operand of D = A * B + C a fragment holds (D is laid out as C).
enum class FragmentRole : uint8_t { A, B, C };

/// The matrix a fragment holds and how a lane's registers hold it.
struct FragmentShape {
  unsigned rows = 0, cols = 0;
  unsigned regs = 0;     // registers per lane
  unsigned perReg = 0;   // elements per register
  unsigned bits = 0;     // bits per element
  unsigned elements = 0; // elements per lane (regs * perReg)
};

/// The fragment of `role`, with elements of `type`, of an mma.sync
/// (`opcode` Mma) or a wmma instruction of the shape in `matrix`. Returns
/// an error naming the shape and type when they are not implemented.
std::string getFragmentShape(Opcode opcode, const MatrixOperands &matrix,
                             FragmentRole role, Type type,
                             FragmentShape &shape);

/// Row and column of element `index` (register index * perReg + position
/// in the register, as the ISA numbers a0, a1, ...) that `lane` holds.
void locateElement(Opcode opcode, const MatrixOperands &matrix,
                   FragmentRole role, const FragmentShape &shape, unsigned lane,
                   unsigned index, unsigned &row, unsigned &col);

/// D = A * B + C for a whole warp (mma.sync or wmma.mma). Float products
/// are exact and accumulate in f32 in k order, each step one fused
/// multiply-add (an f16 D is rounded once at the end); integer products
/// accumulate exactly and wrap to 32 bits, or clamp under .satfinite.
std::string multiplyFragments(const Instruction &inst,
                              const std::vector<uint32_t> &a,
                              const std::vector<uint32_t> &b,
                              const std::vector<uint32_t> &c,
                              std::vector<uint32_t> &d);

/// ldmatrix: `rows[m * 64 + r * 8 + e]` is element e of row r of matrix m,
/// as the lanes' row addresses read it; the result is register m of each
/// lane, regs[m * 32 + lane] (transposed under .trans).
void distributeMatrices(unsigned count, bool transpose,
                        const std::vector<uint16_t> &rows,
                        std::vector<uint32_t> &regs);
/// stmatrix: the inverse of distributeMatrices.
void collectMatrices(unsigned count, bool transpose,
                     const std::vector<uint32_t> &regs,
                     std::vector<uint16_t> &rows);

} // namespace ridge::emu::detail

#endif // RIDGELINE_LIB_EMULATOR_WARPMATRIX_H
