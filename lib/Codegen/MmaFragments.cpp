//===- MmaFragments.cpp - Shared-memory tiles and mma.sync fragments ------===//

#include "MmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::ridge;

static Value index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}
static Value add(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  return arith::AddIOp::create(b, loc, lhs, rhs);
}
static Value mul(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::MulIOp::create(b, loc, lhs, index(b, loc, rhs));
}
static Value div(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::DivUIOp::create(b, loc, lhs, index(b, loc, rhs));
}
static Value rem(OpBuilder &b, Location loc, Value lhs, int64_t rhs) {
  return arith::RemUIOp::create(b, loc, lhs, index(b, loc, rhs));
}

Value mma::getSwizzledOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                             int64_t rowElements) {
  int64_t chunks = rowElements / kChunk;
  Value pattern;
  if (chunks >= 8)
    pattern = rem(b, loc, row, 8);
  else if (chunks == 4)
    pattern = rem(b, loc, div(b, loc, row, 2), 4);
  else if (chunks == 2)
    pattern = rem(b, loc, div(b, loc, row, 4), 2);
  Value physical =
      pattern ? arith::XOrIOp::create(b, loc, chunk, pattern).getResult()
              : chunk;
  return add(b, loc, mul(b, loc, row, rowElements),
             mul(b, loc, physical, kChunk));
}

Value mma::packPair(OpBuilder &b, Location loc, Value pair, Type mmaType) {
  if (mmaType.isF16())
    return pair;
  auto wordType = VectorType::get({1}, b.getI32Type());
  Value word = vector::BitCastOp::create(b, loc, wordType, pair);
  return vector::ExtractOp::create(b, loc, word, 0);
}

SmallVector<Value> mma::loadFragmentBlock(OpBuilder &b, Location loc,
                                          const FragmentBlock &block,
                                          Value lane, Value rowOffset,
                                          int64_t kStep, bool rowHalfMinor) {
  // ldmatrix x4: lanes 8i..8i+7 give the row addresses of matrix i, the
  // (row half, k half) 8 x 8 block of the 16 x 16 block. A's registers
  // a0..a3 take the row half as the minor index (i % 2); B's b0, b1 of two
  // 8-wide fragments the k half.
  Value quarter = div(b, loc, lane, 8), rowInMatrix = rem(b, loc, lane, 8);
  Value rowHalf =
      rowHalfMinor ? rem(b, loc, quarter, 2) : div(b, loc, quarter, 2);
  Value kHalf =
      rowHalfMinor ? div(b, loc, quarter, 2) : rem(b, loc, quarter, 2);
  Value row, chunk;
  if (block.kContiguous) {
    // Stored (m|n) x k: rows m|n, chunks along k.
    row = add(b, loc, add(b, loc, rowOffset, mul(b, loc, rowHalf, 8)),
              rowInMatrix);
    chunk = add(b, loc, kHalf, index(b, loc, kStep * 2));
  } else {
    // Stored k x (m|n): rows k, chunks along m|n; the transposing ldmatrix.
    row = add(b, loc, add(b, loc, mul(b, loc, kHalf, 8), rowInMatrix),
              index(b, loc, kStep * 16));
    chunk = add(b, loc, div(b, loc, rowOffset, 8), rowHalf);
  }
  Value offset = add(b, loc, block.stageOffset,
                     getSwizzledOffset(b, loc, row, chunk, block.rowElements));
  auto resultType = VectorType::get({4, 2}, block.mmaType);
  Value matrix = nvgpu::LdMatrixOp::create(
      b, loc, resultType, block.smem, ValueRange{offset},
      b.getBoolAttr(!block.kContiguous), b.getI32IntegerAttr(4));
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i)
    registers.push_back(packPair(
        b, loc, vector::ExtractOp::create(b, loc, matrix, i), block.mmaType));
  return registers;
}

SmallVector<Value> mma::createMma16816(OpBuilder &b, Location loc, ValueRange a,
                                       ValueRange bFragment, ValueRange c,
                                       Type mmaType) {
  Type f32 = b.getF32Type();
  auto type = mmaType.isBF16() ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                     SmallVector<Type>(4, f32));
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, a, bFragment, c, ArrayRef<int64_t>{16, 8, 16},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> results;
  for (int64_t i = 0; i < 4; ++i)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, op, i));
  return results;
}
