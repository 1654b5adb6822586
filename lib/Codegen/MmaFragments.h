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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::ridge::mma {

/// Index arithmetic at one builder and location, with constant operands:
/// the shorthand of the tensor-core kernel builders (the GEMM's and the
/// attention's), which derive from it.
class IndexMath {
protected:
  IndexMath(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value lhs, Value rhs) {
    return arith::AddIOp::create(b, loc, lhs, rhs);
  }
  Value add(Value lhs, int64_t rhs) { return rhs ? add(lhs, index(rhs)) : lhs; }
  Value mul(Value lhs, int64_t rhs) {
    return arith::MulIOp::create(b, loc, lhs, index(rhs));
  }
  Value div(Value lhs, int64_t rhs) {
    return arith::DivUIOp::create(b, loc, lhs, index(rhs));
  }
  Value rem(Value lhs, int64_t rhs) {
    return arith::RemUIOp::create(b, loc, lhs, index(rhs));
  }

  OpBuilder &b;
  Location loc;
};

/// Elements of a 16-byte chunk of a 16-bit type: the unit of staging and of
/// the shared-memory swizzle.
inline constexpr int64_t kChunk = 8;

/// Elements of a 16-byte chunk of a tile multiplied in `mmaType`: 8 of
/// bf16/f16, 4 of tf32 (staged as f32).
inline int64_t getChunkElements(Type mmaType) {
  return mmaType.isTF32() ? 4 : kChunk;
}

/// Which reads of a tile its swizzle keeps free of bank conflicts (stores of
/// whole chunks, 8 consecutive ones of a row or of consecutive rows, are
/// conflict-free under any of them).
enum class SwizzleReads {
  /// `ldmatrix`: a quarter warp reads one chunk of each of 8 consecutive
  /// rows.
  ChunkOf8Rows,
  /// tf32 fragments of an MN-major tile (k x (m|n)), one 32-bit word a lane:
  /// a warp reads an even chunk and the next of 4 consecutive rows.
  ChunkPairOf4Rows,
};

/// The element offset, in a tile whose rows hold `rowElements` elements, of
/// row `row`'s chunk `chunk` after the swizzle: chunk c of row r lands in
/// chunk c ^ f(r), where f spreads the 8 rows an `ldmatrix` quarter warp
/// reads (and the rows 8 consecutive chunks are stored to) over the 8 chunk
/// slots of a 128-byte line, so neither conflicts on a bank. The XOR acts
/// within whole groups of 8 chunks, and the chunks past the last whole
/// group (a 96-element row: chunks 8-11) among themselves with the pattern
/// of their count (4 or 2; a 6-chunk row is not swizzled), so that no chunk
/// leaves its row.
/// ChunkPairOf4Rows swizzles by whole chunk pairs instead: pair p of row r
/// lands in pair p ^ g(r), g spreading 4 consecutive rows over 4 pairs of a
/// 128-byte line. `chunkElements`: elements of a chunk (getChunkElements).
Value getSwizzledOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                        int64_t rowElements, int64_t chunkElements = kChunk,
                        SwizzleReads reads = SwizzleReads::ChunkOf8Rows);

/// Where a 16 x 16 block of a tile sits and how it is stored.
struct FragmentBlock {
  /// The tile in shared memory (a 1-D workgroup buffer of `mmaType`) and
  /// the element offset of its stage.
  Value smem, stageOffset;
  Type mmaType;
  /// Elements per row of the tile.
  int64_t rowElements = 0;
  /// Whether k runs along the tile's rows (A: m x k, B: n x k); otherwise
  /// the tile is k x (m|n) and is read with the transposing `ldmatrix` (16-bit
  /// types) or a word a lane (tf32, swizzled for ChunkPairOf4Rows).
  bool kContiguous = true;
};

/// How the tile of `block` is swizzled: for its fragment loads.
inline SwizzleReads getSwizzleReads(Type mmaType, bool kContiguous) {
  return mmaType.isTF32() && !kContiguous ? SwizzleReads::ChunkPairOf4Rows
                                          : SwizzleReads::ChunkOf8Rows;
}

/// The `ldmatrix` x4 of the 16 x 16 block at row (m or n) `rowOffset` and
/// k16 step `kStep` of `block`, as 4 registers: A's a0..a3 when
/// `rowHalfMinor`, else b0, b1 of two 8-wide B fragments (rows
/// rowOffset..+7, then +8..+15).
/// tf32: the 16 x 8 block of k8 step `kStep`, in the same register order
/// (an m16n8k8 A fragment, or two n8k8 B fragments), each f32 rounded to
/// tf32 (`cvt.rna.tf32.f32`, as the contraction's body rounds it): one
/// `ldmatrix` x4 of 32-bit elements for a K-major tile, 4 loads of a word
/// for an MN-major one (32-bit elements cannot be transposed by ldmatrix).
SmallVector<Value> loadFragmentBlock(OpBuilder &b, Location loc,
                                     const FragmentBlock &block, Value lane,
                                     Value rowOffset, int64_t kStep,
                                     bool rowHalfMinor);

/// The register of a pair of 16-bit values as `mma.sync` takes it (f16: a
/// vector<2xf16>; bf16: the i32 that holds the pair).
Value packPair(OpBuilder &b, Location loc, Value pair, Type mmaType);

/// `mma.sync.m16n8k16.row.col` (bf16, f16) or `mma.sync.m16n8k8.row.col`
/// (tf32): a (4 registers) x b (2) + c (4 f32); the 4 f32 results.
SmallVector<Value> createMma(OpBuilder &b, Location loc, ValueRange a,
                             ValueRange bFragment, ValueRange c, Type mmaType);

/// How a warp's 16 rows of staged f32 accumulators lie in shared memory:
/// rows `rowWords` words apart, and the 16-byte chunk c of row r at
/// c ^ ((c / 8) % 2) ^ (((r / rowPeriod) % rowCycle) * rowXor).
struct StagingLayout {
  int64_t rowWords = 0, rowPeriod = 1, rowCycle = 1, rowXor = 0;
  /// The bytes of the 16 rows.
  int64_t getBytes() const { return 16 * rowWords * 4; }
};

/// The layout of 16 rows of `columns` accumulators that neither the
/// fragments' writes (8 bytes a lane, half-warp phases) nor the reads of
/// `run` consecutive elements a lane (16 bytes a load, quarter-warp phases;
/// a row's runs on consecutive lanes) conflict on a bank: the least padded
/// of a small family, found by counting the banks each phase touches. None
/// for the widths where that family has no conflict-free member (48, 96
/// with runs of 8, ...).
std::optional<StagingLayout> selectStagingLayout(int64_t columns, int64_t run);

/// A warp's 16 rows of f32 accumulators staged through shared memory, so
/// that each lane reads back consecutive elements of one row and a warp's
/// store covers whole rows (CUTLASS's epilogue through shared memory).
/// Stored as the fragments hold them (mma.sync's layout: c0, c1 at row
/// lane / 4, columns 2 (lane % 4) + {0, 1} of each 8-column fragment; c2,
/// c3 eight rows below; a warp's 16 rows of a wgmma accumulator are laid
/// out so), a lane writes 2 elements of a row and a quad 8 columns: 16 bytes
/// of a bf16 result, half of each 32-byte sector a direct store would write.
struct AccumulatorStaging {
  /// A workgroup buffer of 16- or 32-bit elements, and the byte offset of
  /// the warp's rows in it.
  Value smem, byteOffset;
  StagingLayout layout;

  /// Stores the 16 rows' accumulators (4 a fragment, fragment after
  /// fragment along the columns), one 8-byte pair a store.
  void store(OpBuilder &b, Location loc, Value lane,
             ArrayRef<Value> accumulators) const;
  /// The `count` (4 or 8, from a column that is a multiple of it) staged
  /// elements of `row` from `column` on, 16 bytes a load.
  SmallVector<Value> load(OpBuilder &b, Location loc, Value row, Value column,
                          int64_t count) const;

private:
  /// The element offset in `smem` of the staged word (row, column).
  Value getElementOffset(OpBuilder &b, Location loc, Value row,
                         Value column) const;
};

//===----------------------------------------------------------------------===//
// wgmma (sm_90a)
//===----------------------------------------------------------------------===//

/// 16-byte chunks of a row of the wgmma tile layout: 64 bytes of 16-bit
/// elements, the span of the 64-byte swizzle.
inline constexpr int64_t kSlabChunks = 4;
/// Bytes of one row of that layout.
inline constexpr int64_t kSlabRowBytes = kSlabChunks * kChunk * 2;

/// The element offset of row `row`'s chunk `chunk` in a tile of `rows` rows
/// stored as wgmma reads it with the 64-byte swizzle: the contiguous
/// dimension cut into slabs of 32 elements, each slab `rows` rows of 64
/// bytes, slab after slab; chunk c of a row sits at c ^ ((row / 2) % 4)
/// within its slab's row.
Value getSlabOffset(OpBuilder &b, Location loc, Value row, Value chunk,
                    int64_t rows);
/// The (row, chunk) of the `q`-th chunk of a tile of `rows` rows and
/// `chunksPerRow` chunks in the order threads stage them for that layout:
/// slab by slab, so that the 8 chunks a quarter warp stores are two rows of
/// one slab, 8 distinct 16-byte slots of a 128-byte line (no conflict).
std::pair<Value, Value> getSlabChunkPosition(OpBuilder &b, Location loc,
                                             Value q, int64_t rows,
                                             int64_t chunksPerRow);
/// The wgmma shared-memory matrix descriptor of the matrix starting
/// `byteOffset` bytes into `smem`, in rows of `swizzleBytes` (64 or 128)
/// swizzled as TMA's swizzle of that span, with 8-row groups `strideBytes`
/// apart (SBO) and slabs `leadingBytes` apart (LBO; used by MN-major
/// operands).
Value getWgmmaDescriptor(OpBuilder &b, Location loc, Value smem,
                         Value byteOffset, int64_t leadingBytes,
                         int64_t strideBytes, int64_t swizzleBytes = 64);
/// `wgmma.mma_async` m64`n`k`k` with both operands in shared memory
/// (`descA`, `descB`; MN-major when `transposeA` / `transposeB`) of
/// `mmaType` (bf16, f16 or e4m3), accumulating into the f32 struct
/// `packed` (n / 2 per thread), or starting from zero (scale-d 0) when
/// `fresh`. Returns the new struct; it may be read only after a
/// wgmma.wait_group.
Value createWgmmaShared(OpBuilder &b, Location loc, Value descA, Value descB,
                        Value packed, int64_t n, int64_t k, Type mmaType,
                        bool fresh, bool transposeA, bool transposeB);
/// `wgmma.mma_async` m64`n`k16 (k8 for tf32) with A from registers (4 per
/// thread, the warp's 16 rows in the layout of an mma.sync m16n8k16, or
/// m16n8k8 for tf32, A fragment) and B from shared memory (`descB`,
/// MN-major when `transposeB`; tf32 has no transposed form), f32
/// accumulators `acc` (n / 2 per thread, as m16n8 fragments of 4 in n
/// order). MLIR's nvvm.wgmma.mma_async takes A only as a descriptor, so
/// this one is inline PTX. Returns the new accumulators; they may be read
/// only after a wgmma.wait_group and pinRegisters.
SmallVector<Value> createWgmmaRegisterA(OpBuilder &b, Location loc,
                                        ValueRange a, Value descB,
                                        ValueRange acc, int64_t n, Type mmaType,
                                        bool transposeB);
/// Passes each of `values` through an empty inline-asm statement with side
/// effects (CUTLASS's warpgroup_fence_operand): the register then cannot be
/// read or written across the neighbouring wgmma.fence / wait_group, which
/// LLVM would otherwise be free to move pure arithmetic over. f32 values
/// stay f32; 16-bit pairs come back as the i32 that holds them.
SmallVector<Value> pinRegisters(OpBuilder &b, Location loc, ValueRange values);

} // namespace mlir::ridge::mma

#endif // RIDGELINE_LIB_CODEGEN_MMAFRAGMENTS_H
