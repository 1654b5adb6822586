//===- MmaFragments.h - Shared-memory tiles and mma.sync fragments --------===//
//
// The pieces the tensor-core GEMM (ridge-lower-mma-contractions) and the
// tensor-core attention (ridge-lower-flash-attention) build their warps'
// work from: 16-bit tiles in XOR-swizzled shared memory, `ldmatrix` x4 of a
// 16 x 16 block into the registers `mma.sync` takes, and one
// `mma.sync.m16n8k16` with f32 accumulators.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_MMAFRAGMENTS_H
#define RIDGELINE_LIB_CODEGEN_MMAFRAGMENTS_H

#include "mlir/IR/Builders.h"

namespace mlir::ridge::mma {

/// Elements of a 16-byte chunk of a 16-bit type: the unit of staging and of
/// the shared-memory swizzle.
inline constexpr int64_t kChunk = 8;

/// The element offset, in a tile whose rows hold `rowElements` elements, of
/// row `row`'s chunk `chunk` after the swizzle: chunk c of row r lands in
/// chunk c ^ f(r), where f spreads the 8 rows an `ldmatrix` quarter warp
/// reads (and the rows 8 consecutive chunks are stored to) over the 8 chunk
/// slots of a 128-byte line, so neither conflicts on a bank.
Value getSwizzledOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                        int64_t rowElements);

/// Where a 16 x 16 block of a tile sits and how it is stored.
struct FragmentBlock {
  /// The tile in shared memory (a 1-D workgroup buffer of `mmaType`) and
  /// the element offset of its stage.
  Value smem, stageOffset;
  Type mmaType;
  /// Elements per row of the tile.
  int64_t rowElements = 0;
  /// Whether k runs along the tile's rows (A: m x k, B: n x k); otherwise
  /// the tile is k x (m|n) and is read with the transposing `ldmatrix`.
  bool kContiguous = true;
};

/// The `ldmatrix` x4 of the 16 x 16 block at row (m or n) `rowOffset` and
/// k16 step `kStep` of `block`, as 4 registers: A's a0..a3 when
/// `rowHalfMinor`, else b0, b1 of two 8-wide B fragments (rows
/// rowOffset..+7, then +8..+15).
SmallVector<Value> loadFragmentBlock(OpBuilder &b, Location loc,
                                     const FragmentBlock &block, Value lane,
                                     Value rowOffset, int64_t kStep,
                                     bool rowHalfMinor);

/// The register of a pair of 16-bit values as `mma.sync` takes it (f16: a
/// vector<2xf16>; bf16: the i32 that holds the pair).
Value packPair(OpBuilder &b, Location loc, Value pair, Type mmaType);

/// `mma.sync.m16n8k16.row.col`: a (4 registers) x b (2) + c (4 f32); the 4
/// f32 results.
SmallVector<Value> createMma16816(OpBuilder &b, Location loc, ValueRange a,
                                  ValueRange bFragment, ValueRange c,
                                  Type mmaType);

} // namespace mlir::ridge::mma

#endif // RIDGELINE_LIB_CODEGEN_MMAFRAGMENTS_H
