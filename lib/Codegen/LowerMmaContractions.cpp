//===- LowerMmaContractions.cpp - Tensor-core GEMM kernels (sm_80) --------===//
//
// The mechanism of the tensor-core path: a kernel whose `ridge.kernel_config`
// carries an `mma_tile` (decided by ridge-select-kernel-config from the
// kernel's shape and the target) is rebuilt, on buffers, as one gpu.launch
// in the structure CUTLASS's and Triton's sm_80 GEMMs share:
//
//   - one block per {m, n} tile of the output (and batch index), its warps
//     splitting the tile into warp tiles of 16 x 8 `mma.sync` tiles;
//   - each k step stages the A and B tiles in shared memory, two stages
//     deep: the next tile's global loads (16 bytes a thread, rounded to the
//     multiply type in registers when the operand is stored as f32) are in
//     flight while the warps multiply the current one;
//   - shared memory is XOR-swizzled in 16-byte chunks, so that the 16-byte
//     stores and the `ldmatrix` row reads of a quarter warp hit 8 distinct
//     chunks of a 128-byte line: no bank conflicts, without padding;
//   - fragments are loaded with `ldmatrix` (`.trans` for an operand stored
//     the other way round: the mma's B is "column-major") and multiplied by
//     `mma.sync.m16n8k16` (bf16 or f16 in, f32 accumulators in registers);
//   - the epilogue (the kernel's elementwise op: bias, activation, residual,
//     cast) is applied to the accumulators in registers and stored once.
//
// On sm_90a with `mma_tma` (operands stored as multiplied, whole row-major
// tensors), the threads copy nothing: as in CUTLASS 3's warp-specialized
// GEMMs, a producer warp issues TMA tensor copies of each k tile (64 of k,
// the 128-byte swizzle) into dynamic shared memory, full and empty
// mbarriers per stage order them with the consumer warpgroups' wgmmas, and
// the host encodes the tensor maps before the launch.
//
// The rounding of f32 operands is the one the contraction's body spells
// (`extf(truncf(x))`, placed by ridge-select-precision), so the CPU build
// of the same linalg computes the same products: it is the oracle.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Codegen/Passes.h"

#include "MmaFragments.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-lower-mma-contractions"

namespace mlir::ridge {
#define GEN_PASS_DEF_LOWERMMACONTRACTIONSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {

using mma::kChunk;
using mma::kSlabChunks;

/// One operand's tile in shared memory: rows of `innerLen` elements along
/// the operand's contiguous dimension, `outerLen` rows.
struct StagedOperand {
  const MmaOperand *operand;
  /// Whether the operand is A (rows m) or B (rows n).
  bool isLhs;
  int64_t outerLen, innerLen;
  int64_t outerExtent, innerExtent;
  /// What its 16-byte loads read: the operand, or the view of it that
  /// collapses its k dimensions into one (MmaOperand::collapsedK).
  Value source;
  /// The shared buffer: one tile of outerLen x innerLen per stage.
  Value smem;
  /// TMA (KernelConfig::mmaTma): how the tensor map views the operand, and
  /// the map: its value on the host (the 128 bytes the launch passes), its
  /// address in the kernel.
  MmaTmaLayout tmaLayout;
  Value hostTensorMap, tensorMap;

  int64_t stageElements() const { return outerLen * innerLen; }
  int64_t chunksPerRow() const { return innerLen / kChunk; }
};

class MmaKernelBuilder {
public:
  MmaKernelBuilder(OpBuilder &b, Location loc, const MmaContraction &mma,
                   const KernelConfig &config)
      : b(b), loc(loc), mma(mma) {
    numBatch = mma.batch.size();
    gemvWarps = config.warpsPerBlock;
    if (!config.usesTensorCores())
      return;
    tileM = config.mmaTile[0];
    tileN = config.mmaTile[1];
    tileK = config.mmaTile[2];
    warpsM = config.mmaWarps[0];
    warpsN = config.mmaWarps[1];
    warpTileM = tileM / warpsM;
    warpTileN = tileN / warpsN;
    fragsM = warpTileM / 16;
    fragsN = warpTileN / 8;
    threads = warpsM * warpsN * kWarpSize;
    stages = config.mmaStages;
    splitK = config.mmaSplitK;
    wgmma = config.wgmma;
    tma = config.mmaTma;
  }

  /// `encodeFn`: the runtime's ridgeTensorMapEncodeTiled, which the host
  /// code of a TMA kernel calls (declared by the caller).
  LogicalResult build(func::FuncOp encodeFn);
  /// The bandwidth path (KernelConfig::gemv): one warp per output column n,
  /// all m rows of it; lanes take 16-byte pieces of k 128 elements apart,
  /// then a shuffle reduction; lane 0 applies the epilogue and stores.
  LogicalResult buildGemv();

private:
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
  Value lessThan(Value lhs, Value rhs) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lhs, rhs);
  }
  Value lessThan(Value lhs, int64_t rhs) { return lessThan(lhs, index(rhs)); }
  Value minimum(Value lhs, int64_t rhs) {
    return arith::MinUIOp::create(b, loc, lhs, index(rhs));
  }

  /// The element offset in one stage of row `row`'s chunk `chunk`, after the
  /// swizzle: chunk c of row r lands in chunk c ^ f(r), where f spreads the 8
  /// rows an `ldmatrix` quarter warp reads (and the rows 8 consecutive
  /// chunks are stored to) over the 8 chunk slots of a 128-byte line.
  Value swizzledOffset(const StagedOperand &staged, Value row, Value chunk);
  /// The (row, chunk) of the q-th chunk of a tile in the order threads
  /// stage them.
  std::pair<Value, Value> getChunkPosition(const StagedOperand &staged,
                                           Value q);
  /// The wgmma shared-memory matrix descriptor of `staged` in stage
  /// `stage` at k16 step `kStep`, starting `rowOffset` rows (m or n) in.
  Value getDescriptor(const StagedOperand &staged, Value stage, int64_t kStep,
                      Value rowOffset);
  /// The bytes of a wgmma tile row and the span of its swizzle: 128 for
  /// TMA's stages (k tiles of 64), else 64 (k tiles of 32; the threads'
  /// 16-byte stores and cp.async copies write that layout).
  int64_t getSwizzleBytes() const { return tma ? 128 : mma::kSlabRowBytes; }
  /// The wgmma multiplies of the tile in stage `stage`.
  void multiplyStageWgmma(Value stage, SmallVectorImpl<Value> &acc);
  /// The wgmmas of stage `stage` on the warpgroup's accumulators, `packed`
  /// as the struct wgmma reads and writes, committed as one group and not
  /// waited for; returns the accumulators' new struct.
  Value issueWgmmaStage(Value stage, Value packed);
  /// The accumulators as that struct, and back.
  Value packAccumulators(ArrayRef<Value> acc);
  SmallVector<Value> unpackAccumulators(Value packed, int64_t count);

  /// TMA (KernelConfig::mmaTma).
  /// Host code before the launch: the tensor map of `staged`, encoded by the
  /// runtime into a stack slot, as the 128-byte value the launch passes.
  Value encodeTensorMap(const StagedOperand &staged, func::FuncOp encode);
  /// The shared-memory address (`!llvm.ptr<3>`) `byteOffset` bytes into
  /// `memref`.
  Value getSharedPointer(Value memref, Value byteOffset);
  /// The full (the stage's tiles have landed) or empty (the consumers are
  /// done reading it) mbarrier of stage `stage`.
  Value getFullBarrier(Value stage) {
    return getSharedPointer(barriers, mul(stage, 8));
  }
  Value getEmptyBarrier(Value stage) {
    return getSharedPointer(barriers, mul(add(stage, stages), 8));
  }
  /// Waits until the phase of `barrier` of parity `parity` (0 or 1) has
  /// completed.
  void waitBarrier(Value barrier, Value parity);
  /// The tensor copies of k tile `kTile` of `staged` into stage `stage`,
  /// completing their bytes on `barrier`: one box of the tile for a K-major
  /// operand, one per 64-element slab for an MN-major one.
  void copyTileTma(const StagedOperand &staged, Value kTile, Value stage,
                   Value barrier);
  /// The producer warp: for each k tile, waits until the consumers released
  /// its stage, announces the stage's bytes on its full barrier and issues
  /// the copies (one lane).
  void buildTmaProducer();
  /// The consumer warpgroups' k loop: waits for each stage's full barrier,
  /// issues its wgmmas, keeps one group in flight, and releases the stage
  /// before it on its empty barrier (every thread arrives); returns the
  /// final accumulators.
  SmallVector<Value> buildTmaConsumer();
  /// What a block does with the products' accumulators: the epilogue and
  /// stores, or (split-K) its partial sums.
  void finishResults(ArrayRef<SmallVector<Value>> results, Value split,
                     Value tile, Value partials);
  /// Makes shared-memory writes of this thread visible to wgmma (the async
  /// proxy) before the barrier that publishes them.
  void fenceSharedForWgmma();

  /// The batch loops' indices of block `linear` (row-major over them).
  void setBatchIndices(Value linear) {
    batchIndices.assign(numBatch, Value());
    for (int64_t i = static_cast<int64_t>(numBatch) - 1; i >= 0; --i) {
      batchIndices[i] = rem(linear, mma.batch[i]);
      linear = div(linear, mma.batch[i]);
    }
  }
  /// Which loops a flat GEMM coordinate decodes into.
  enum class GemmDim { M, N, K };
  /// Writes the loop indices of flat coordinate `flat` along `dim` into
  /// `coords` (row-major over its loops).
  void decode(Value flat, GemmDim dim, SmallVectorImpl<Value> &coords);
  /// Loop indices of the contraction: the block's batch indices, the
  /// others zero until decoded.
  SmallVector<Value> getLoopCoordinates();
  /// The results of `map` at loop indices `coords`.
  SmallVector<Value> evaluateMap(AffineMap map, ArrayRef<Value> coords);
  /// Indices into `operand` of the element at (batch, m|n, k) coordinates.
  SmallVector<Value> operandIndices(const StagedOperand &staged, Value rowCoord,
                                    Value kCoord);
  /// The epilogue's loop indices of element (batch, m, n): the result
  /// loops, permuted as the epilogue reads the contraction.
  SmallVector<Value> epilogueCoordinates(Value m, Value n);
  /// The element of a gathered operand at loop indices `coords`, as stored
  /// (a load through its map, or its computation cloned from the
  /// contraction's body).
  Value gatherElement(const MmaOperand &operand, ArrayRef<Value> coords);
  /// loadTile for a gathered operand: 8 elements a chunk, read one by one,
  /// rounded, zero outside the operand.
  SmallVector<Value> gatherTile(const StagedOperand &staged, Value kTile);

  /// Global loads of k tile `kTile` of `staged` into registers: one vector
  /// of 8 multiply-type elements per chunk the thread stages, zero outside
  /// the operand.
  SmallVector<Value> loadTile(const StagedOperand &staged, Value kTile);
  /// Stores what loadTile returned into stage `stage`.
  void storeTile(const StagedOperand &staged, ArrayRef<Value> chunks,
                 Value stage);
  /// The cp.async copies of k tile `kTile` of `staged` into stage `stage`:
  /// 16 bytes a chunk, zero-filled (a source size of 0) outside the operand.
  void copyTileAsync(const StagedOperand &staged, Value kTile, Value stage);
  /// The multiplies of the tile in stage `stage` into the accumulators.
  void multiplyStage(Value stage, SmallVectorImpl<Value> &acc);
  /// The k loop staged through registers (2 stages), or filled by cp.async
  /// (3 or 4 stages); returns the final accumulators.
  /// Both multiply k tiles `kFirst` .. `kFirst + kCount - 1` of the
  /// current product (all of them, or a split's share).
  SmallVector<Value> buildRegisterStagedLoop();
  /// The loop over the block's `kCount` k tiles, carrying the accumulators
  /// (fragsM x fragsN fragments of 4, zero to start).
  scf::ForOp createKLoop() {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    SmallVector<Value> init(fragsM * fragsN * 4, zero);
    return scf::ForOp::create(b, loc, index(0), kCount, index(1), init);
  }
  SmallVector<Value> buildAsyncCopyLoop();
  /// Sets the block's k range of a product of `numKTiles` k tiles: all of
  /// them, or split `split`'s ceil(numKTiles / splitK) (fewer, or none, for
  /// the last splits).
  void setKRange(int64_t numKTiles, Value split);
  /// Sets the thread's and block's coordinates (tid, lane, warps, tile
  /// origin) from a launch's ids; `batchLinear` is the batch block index.
  void setBlockCoordinates(gpu::LaunchOp launch, Value batchLinear);
  /// The linear index of the block's output tile: batch index, then m and
  /// n tiles (row-major), from a launch's block ids.
  Value getTileIndex(Value batchLinear, gpu::KernelDim3 blockIds) {
    Value row =
        add(mul(batchLinear, llvm::divideCeil(mma.m, tileM)), blockIds.y);
    return add(mul(row, llvm::divideCeil(mma.n, tileN)), blockIds.x);
  }
  /// The index into the split-K partial sums of accumulator `reg` of this
  /// thread in split `split` of output tile `tile` (fragment order, thread
  /// fastest: coalesced whole-block writes and reads).
  Value getPartialIndex(Value tile, Value split, int64_t reg);
  /// The second launch of a split kernel: adds the splits' partial sums in
  /// split order (the result does not depend on which block finished first)
  /// and stores them through the epilogue.
  void buildSplitKFixup(Value partials, Value gridX, Value gridY,
                        int64_t batchCount, int64_t numResults);
  /// The chunk (row, chunk-in-row) and operand coordinates of the
  /// `first`-th chunk the thread stages of k tile `kTile`.
  struct ChunkCoordinates {
    Value row, chunk, inBounds;
    SmallVector<Value> indices;
  };
  ChunkCoordinates getChunk(const StagedOperand &staged, Value kTile,
                            int64_t first);

  /// The `ldmatrix` x4 of the 16 x 16 block of `staged` at row `rowOffset`
  /// (m or n) and k16 step `kStep`, as 4 registers: A's a0..a3 when the row
  /// half is the minor matrix index, else b0, b1 of two 8-wide B fragments.
  SmallVector<Value> loadBlock(const StagedOperand &staged, Value stageOffset,
                               Value rowOffset, int64_t kStep,
                               bool rowHalfMinor);

  /// The element `op` (an elementwise generic) computes at its loop indices
  /// `at`: its body cloned, its inputs not in `mapping` loaded through their
  /// maps, its linalg.index ops replaced by `at`.
  Value cloneElement(linalg::GenericOp op, ArrayRef<Value> at,
                     IRMapping &mapping);
  /// The epilogue's result for accumulator `value` of element (m, n) (the
  /// accumulator itself without an epilogue).
  Value applyEpilogue(ArrayRef<Value> values, Value m, Value n);
  /// The position among the epilogue's inputs of the first product's
  /// result (the products' results are read through the same map).
  unsigned getEpilogueInput();
  /// The buffer the kernel's result is stored to.
  Value getResultBuffer();
  /// Stores the accumulators: lane pairs exchange halves so that each lane
  /// holds 4 consecutive elements of one row, applies the epilogue to them
  /// and stores them with one vector store.
  void storeResults(ArrayRef<SmallVector<Value>> results);

  OpBuilder &b;
  Location loc;
  MmaContraction mma;
  /// The product whose k loop is being built.
  const MmaProduct *product = nullptr;
  // The tensor-core tile (zero on the GEMV path).
  int64_t tileM = 0, tileN = 0, tileK = 0, warpsM = 0, warpsN = 0;
  int64_t warpTileM = 0, warpTileN = 0, fragsM = 0, fragsN = 0, threads = 0;
  int64_t stages = 0, gemvWarps = 0, splitK = 1;
  bool wgmma = false, tma = false;
  /// TMA: the stages' full and empty mbarriers (memref<2 x stages x i64>).
  Value barriers;
  unsigned numBatch;

  StagedOperand lhs, rhs;
  Value tid, lane, warpM, warpN;
  Value mBase, nBase;
  /// The current product's k tiles for this block: the first, and how many.
  Value kFirst, kCount;
  /// Static bound of kCount (the prologue's guards fold when it is exact).
  int64_t kCountBound = 0;
  bool kCountExact = true;
  SmallVector<Value> batchIndices;
};

} // namespace

Value MmaKernelBuilder::swizzledOffset(const StagedOperand &staged, Value row,
                                       Value chunk) {
  if (wgmma && staged.chunksPerRow() > kSlabChunks)
    return mma::getSlabOffset(b, loc, row, chunk, staged.outerLen);
  return mma::getSwizzledOffset(b, loc, row, chunk, staged.innerLen);
}

std::pair<Value, Value>
MmaKernelBuilder::getChunkPosition(const StagedOperand &staged, Value q) {
  if (wgmma)
    return mma::getSlabChunkPosition(b, loc, q, staged.outerLen,
                                     staged.chunksPerRow());
  return {div(q, staged.chunksPerRow()), rem(q, staged.chunksPerRow())};
}

void MmaKernelBuilder::decode(Value flat, GemmDim dim,
                              SmallVectorImpl<Value> &coords) {
  unsigned first = numBatch;
  ArrayRef<int64_t> extents = mma.mLoops;
  if (dim != GemmDim::M) {
    first += mma.mLoops.size();
    extents = mma.nLoops;
  }
  if (dim == GemmDim::K) {
    first += mma.nLoops.size();
    extents = product->kLoops;
  }
  // Row-major: the innermost loop varies fastest. The outermost loop of
  // extent > 1 needs no remainder, as flat coordinates stay inside the
  // extents; loops of extent 1 are 0.
  int64_t outermost = 0;
  while (outermost + 1 < static_cast<int64_t>(extents.size()) &&
         extents[outermost] == 1)
    ++outermost;
  for (int64_t i = static_cast<int64_t>(extents.size()) - 1; i >= 0; --i) {
    if (i < outermost) {
      coords[first + i] = index(0);
      continue;
    }
    if (i == outermost) {
      coords[first + i] = flat;
      continue;
    }
    coords[first + i] = rem(flat, extents[i]);
    flat = div(flat, extents[i]);
  }
}

SmallVector<Value> MmaKernelBuilder::getLoopCoordinates() {
  Value zero = index(0);
  SmallVector<Value> coords(product->getNumLoops(), zero);
  for (unsigned i = 0; i < numBatch; ++i)
    coords[i] = batchIndices[i];
  return coords;
}

SmallVector<Value> MmaKernelBuilder::evaluateMap(AffineMap map,
                                                 ArrayRef<Value> coords) {
  SmallVector<Value> indices;
  ArrayRef<Value> dims = coords.take_front(map.getNumDims());
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(coords[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(index(constant.getValue()));
    else
      indices.push_back(affine::expandAffineExpr(b, loc, expr, dims, {}));
  }
  return indices;
}

SmallVector<Value> MmaKernelBuilder::operandIndices(const StagedOperand &staged,
                                                    Value rowCoord,
                                                    Value kCoord) {
  const MmaOperand &operand = *staged.operand;
  SmallVector<Value> coords = getLoopCoordinates();
  decode(rowCoord, staged.isLhs ? GemmDim::M : GemmDim::N, coords);
  if (!operand.collapsedK) {
    decode(kCoord, GemmDim::K, coords);
    return evaluateMap(operand.map, coords);
  }
  // The k results are one dimension of the collapsed view: the flat k.
  AffineMap map = operand.map;
  SmallVector<Value> indices = evaluateMap(
      map.getSliceMap(0, map.getNumResults() - product->kLoops.size()), coords);
  indices.push_back(kCoord);
  return indices;
}

SmallVector<Value> MmaKernelBuilder::epilogueCoordinates(Value m, Value n) {
  SmallVector<Value> coords = getLoopCoordinates();
  decode(m, GemmDim::M, coords);
  decode(n, GemmDim::N, coords);
  coords.truncate(mma.getNumParallelLoops());
  if (!mma.epilogue)
    return coords;
  AffineMap read = mma.epilogue.getMatchingIndexingMap(
      mma.epilogue.getDpsInputOperand(getEpilogueInput()));
  SmallVector<Value> permuted(coords.size());
  for (unsigned i = 0; i < read.getNumResults(); ++i)
    permuted[read.getDimPosition(i)] = coords[i];
  return permuted;
}

Value MmaKernelBuilder::gatherElement(const MmaOperand &operand,
                                      ArrayRef<Value> coords) {
  if (linalg::GenericOp producer = operand.producer) {
    // The producer's element at its loop indices (its result is indexed by
    // them).
    IRMapping mapping;
    return cloneElement(producer, evaluateMap(operand.map, coords), mapping);
  }
  if (operand.value)
    return memref::LoadOp::create(b, loc, operand.value,
                                  evaluateMap(operand.map, coords));
  // The body's computation of the element (a padded or strided window,
  // clamped and selected as the fused producer wrote it), with its loop
  // indices replaced by this element's.
  Block *body = linalg::LinalgOp(product->contraction).getBlock();
  SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.filter = [&](Operation *op) { return op->getBlock() == body; };
  options.inclusive = true;
  (void)getBackwardSlice(operand.bodyValue, &slice, options);
  IRMapping mapping;
  for (Operation &op : body->without_terminator()) {
    if (!slice.contains(&op))
      continue;
    if (auto indexOp = dyn_cast<linalg::IndexOp>(op)) {
      mapping.map(indexOp.getResult(), coords[indexOp.getDim()]);
      continue;
    }
    b.clone(op, mapping);
  }
  return mapping.lookup(operand.bodyValue);
}

SmallVector<Value> MmaKernelBuilder::gatherTile(const StagedOperand &staged,
                                                Value kTile) {
  const MmaOperand &operand = *staged.operand;
  Type mmaType = operand.mmaType;
  auto chunkType = VectorType::get({kChunk}, mmaType);
  Value zero =
      arith::ConstantOp::create(b, loc, mmaType, b.getZeroAttr(mmaType));
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  bool kInner = operand.kContiguous;
  Value outerBase = kInner ? rowBase : kBase;
  Value innerBase = kInner ? kBase : rowBase;
  GemmDim rowDim = staged.isLhs ? GemmDim::M : GemmDim::N;
  GemmDim outerDim = kInner ? rowDim : GemmDim::K;
  GemmDim innerDim = kInner ? GemmDim::K : rowDim;
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < numChunks; first += threads) {
    auto [row, chunk] = getChunkPosition(staged, add(tid, first));
    Value outer = add(outerBase, row);
    Value outerInBounds = lessThan(outer, staged.outerExtent);
    // The outer coordinate is decoded once a chunk, the inner one per
    // element; clamped coordinates keep every load inside the operand.
    SmallVector<Value> coords = getLoopCoordinates();
    decode(minimum(outer, staged.outerExtent - 1), outerDim, coords);
    Value innerStart = add(innerBase, mul(chunk, kChunk));
    SmallVector<Value> elements;
    for (int64_t i = 0; i < kChunk; ++i) {
      Value inner = add(innerStart, i);
      Value inBounds = arith::AndIOp::create(
          b, loc, outerInBounds, lessThan(inner, staged.innerExtent));
      decode(minimum(inner, staged.innerExtent - 1), innerDim, coords);
      Value element = gatherElement(operand, coords);
      if (element.getType() != mmaType)
        element = arith::TruncFOp::create(b, loc, mmaType, element);
      elements.push_back(
          arith::SelectOp::create(b, loc, inBounds, element, zero));
    }
    chunks.push_back(
        vector::FromElementsOp::create(b, loc, chunkType, elements));
  }
  return chunks;
}

MmaKernelBuilder::ChunkCoordinates
MmaKernelBuilder::getChunk(const StagedOperand &staged, Value kTile,
                           int64_t first) {
  const MmaOperand &operand = *staged.operand;
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  // Outer and inner coordinates of the tile's origin: the operand's rows
  // are m|n and its row elements k, or the other way round.
  bool kInner = operand.kContiguous;
  Value outerBase = kInner ? rowBase : kBase;
  Value innerBase = kInner ? kBase : rowBase;
  ChunkCoordinates result;
  std::tie(result.row, result.chunk) =
      getChunkPosition(staged, add(tid, first));
  Value outer = add(outerBase, result.row);
  Value inner = add(innerBase, mul(result.chunk, kChunk));
  result.inBounds =
      arith::AndIOp::create(b, loc, lessThan(outer, staged.outerExtent),
                            lessThan(inner, staged.innerExtent));
  // Clamped coordinates keep the access inside the buffer; what lies
  // outside the operand (the k tail, the m|n edge) is zeroed.
  Value safeOuter = minimum(outer, staged.outerExtent - 1);
  Value safeInner = minimum(inner, staged.innerExtent - kChunk);
  Value rowCoord = kInner ? safeOuter : safeInner;
  Value kCoord = kInner ? safeInner : safeOuter;
  result.indices = operandIndices(staged, rowCoord, kCoord);
  return result;
}

SmallVector<Value> MmaKernelBuilder::loadTile(const StagedOperand &staged,
                                              Value kTile) {
  const MmaOperand &operand = *staged.operand;
  if (operand.gathered)
    return gatherTile(staged, kTile);
  Type mmaType = operand.mmaType;
  auto chunkType = VectorType::get({kChunk}, mmaType);
  Type stored = operand.elementType;
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  Value zero =
      arith::ConstantOp::create(b, loc, chunkType, b.getZeroAttr(chunkType));
  SmallVector<Value> chunks;
  for (int64_t first = 0; first < numChunks; first += threads) {
    ChunkCoordinates chunk = getChunk(staged, kTile, first);
    SmallVector<Value> &indices = chunk.indices;
    Value value;
    if (stored == mmaType) {
      value =
          vector::LoadOp::create(b, loc, chunkType, staged.source, indices,
                                 /*nontemporal=*/false, llvm::MaybeAlign(16));
    } else {
      // An f32 operand: two 16-byte loads, rounded to the multiply type as
      // the contraction's body rounds it.
      auto halfType = VectorType::get({kChunk / 2}, stored);
      Value low =
          vector::LoadOp::create(b, loc, halfType, staged.source, indices,
                                 /*nontemporal=*/false, llvm::MaybeAlign(16));
      indices.back() = add(indices.back(), kChunk / 2);
      Value high =
          vector::LoadOp::create(b, loc, halfType, staged.source, indices,
                                 /*nontemporal=*/false, llvm::MaybeAlign(16));
      Value wide = vector::ShuffleOp::create(
          b, loc, low, high, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
      value = arith::TruncFOp::create(b, loc, chunkType, wide);
    }
    chunks.push_back(
        arith::SelectOp::create(b, loc, chunk.inBounds, value, zero));
  }
  return chunks;
}

void MmaKernelBuilder::copyTileAsync(const StagedOperand &staged, Value kTile,
                                     Value stage) {
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, index(staged.stageElements()));
  int64_t numChunks = staged.outerLen * staged.chunksPerRow();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  for (int64_t first = 0; first < numChunks; first += threads) {
    ChunkCoordinates chunk = getChunk(staged, kTile, first);
    Value offset =
        add(stageOffset, swizzledOffset(staged, chunk.row, chunk.chunk));
    Value sourceElements = arith::SelectOp::create(b, loc, chunk.inBounds,
                                                   index(kChunk), index(0));
    nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, staged.smem, ValueRange{offset}, staged.source,
        chunk.indices, b.getIndexAttr(kChunk), sourceElements, b.getUnitAttr());
  }
}

void MmaKernelBuilder::storeTile(const StagedOperand &staged,
                                 ArrayRef<Value> chunks, Value stage) {
  Value stageOffset =
      arith::MulIOp::create(b, loc, stage, index(staged.stageElements()));
  for (auto [i, value] : llvm::enumerate(chunks)) {
    auto [row, chunk] =
        getChunkPosition(staged, add(tid, static_cast<int64_t>(i) * threads));
    Value offset = add(stageOffset, swizzledOffset(staged, row, chunk));
    vector::StoreOp::create(b, loc, value, staged.smem, offset,
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

SmallVector<Value> MmaKernelBuilder::loadBlock(const StagedOperand &staged,
                                               Value stageOffset,
                                               Value rowOffset, int64_t kStep,
                                               bool rowHalfMinor) {
  mma::FragmentBlock block{staged.smem, stageOffset, staged.operand->mmaType,
                           staged.innerLen, staged.operand->kContiguous};
  return mma::loadFragmentBlock(b, loc, block, lane, rowOffset, kStep,
                                rowHalfMinor);
}

Value MmaKernelBuilder::cloneElement(linalg::GenericOp op, ArrayRef<Value> at,
                                     IRMapping &mapping) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (!arg.use_empty() && !mapping.contains(arg))
      mapping.map(arg, memref::LoadOp::create(
                           b, loc, input->get(),
                           evaluateMap(op.getMatchingIndexingMap(input), at)));
  }
  Block *body = op.getBody();
  for (Operation &inner : body->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(indexOp.getResult(), at[indexOp.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
}

Value MmaKernelBuilder::applyEpilogue(ArrayRef<Value> values, Value m,
                                      Value n) {
  linalg::GenericOp epilogue = mma.epilogue;
  if (!epilogue)
    return values.front();
  // The products' results are the accumulators in registers; the other
  // inputs are loaded at the element's (permuted) indices.
  IRMapping mapping;
  for (auto [product, value] : llvm::zip(mma.products, values)) {
    Value acc =
        linalg::LinalgOp(product.contraction).getDpsInitOperand(0)->get();
    for (OpOperand *input : epilogue.getDpsInputOperands())
      if (input->get() == acc)
        mapping.map(epilogue.getMatchingBlockArgument(input), value);
  }
  return cloneElement(epilogue, epilogueCoordinates(m, n), mapping);
}

unsigned MmaKernelBuilder::getEpilogueInput() {
  Value acc = mma.products.front().contraction.getDpsInitOperand(0)->get();
  for (OpOperand *input : mma.epilogue.getDpsInputOperands())
    if (input->get() == acc)
      return input->getOperandNumber();
  llvm_unreachable("the matcher found the epilogue reading the result");
}

Value MmaKernelBuilder::getResultBuffer() {
  Value buffer =
      mma.epilogue
          ? mma.epilogue.getDpsInitOperand(0)->get()
          : mma.products.front().contraction.getDpsInitOperand(0)->get();
  memref::CopyOp copy = mma.resultCopy;
  if (!copy)
    return buffer;
  // The buffer is copied to the kernel's result argument, through a view
  // that reshapes it: store into the argument, viewed the other way.
  auto type = cast<MemRefType>(buffer.getType());
  Value target = copy.getTarget();
  Operation *view = copy.getSource().getDefiningOp();
  if (auto collapse = dyn_cast_if_present<memref::CollapseShapeOp>(view))
    return memref::ExpandShapeOp::create(b, loc, type.getShape(), target,
                                         collapse.getReassociationIndices());
  if (auto expand = dyn_cast_if_present<memref::ExpandShapeOp>(view))
    return memref::CollapseShapeOp::create(b, loc, target,
                                           expand.getReassociationIndices());
  return target;
}

/// Whether `memref` is a buffer the kernel gets whole (a device allocation,
/// 256-byte aligned) with rows of whole 16-byte units: the 16-byte stores of
/// the epilogue are aligned.
static bool isRowAligned(Value memref, int64_t rowElements) {
  auto type = cast<MemRefType>(memref.getType());
  int64_t bytes = rowElements * type.getElementTypeBitWidth() / 8;
  // A reshaping view of a whole buffer starts where the buffer does.
  if (auto expand = memref.getDefiningOp<memref::ExpandShapeOp>())
    memref = expand.getSrc();
  else if (auto collapse = memref.getDefiningOp<memref::CollapseShapeOp>())
    memref = collapse.getSrc();
  return type.getLayout().isIdentity() && bytes % 16 == 0 &&
         (isa<BlockArgument>(memref) ||
          memref.getDefiningOp<memref::AllocOp>());
}

void MmaKernelBuilder::fenceSharedForWgmma() {
  if (wgmma)
    NVVM::FenceProxyOp::create(
        b, loc,
        NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
}

Value MmaKernelBuilder::getDescriptor(const StagedOperand &staged, Value stage,
                                      int64_t kStep, Value rowOffset) {
  // Byte offsets in the buffer (2-byte elements), rows of R bytes (the
  // swizzle span: 64, or 128 for TMA's stages). K-major (rows of k): 8-row
  // groups 8R bytes apart (SBO), k16 steps 32 bytes along the row. MN-major
  // (rows of R / 2 m|n elements, slab after slab): 8 k-row groups 8R bytes
  // apart (SBO), slabs LBO apart, k16 steps 16 rows.
  int64_t rowBytes = getSwizzleBytes();
  int64_t groupBytes = 8 * rowBytes;
  Value stageBytes = mul(stage, staged.stageElements() * 2);
  Value offset;
  int64_t leading;
  if (staged.operand->kContiguous) {
    offset = add(add(stageBytes, mul(rowOffset, rowBytes)), kStep * 32);
    leading = 16; // unused by the swizzled K-major layout
  } else {
    int64_t slabBytes = staged.outerLen * rowBytes;
    offset = add(add(stageBytes, mul(div(rowOffset, rowBytes / 2), slabBytes)),
                 kStep * 16 * rowBytes);
    leading = slabBytes;
  }
  return mma::getWgmmaDescriptor(b, loc, staged.smem, offset, leading,
                                 groupBytes, rowBytes);
}

Value MmaKernelBuilder::packAccumulators(ArrayRef<Value> acc) {
  auto structType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(acc.size(), b.getF32Type()));
  Value packed = LLVM::PoisonOp::create(b, loc, structType);
  for (auto [i, value] : llvm::enumerate(acc))
    packed = LLVM::InsertValueOp::create(b, loc, packed, value, i);
  return packed;
}

SmallVector<Value> MmaKernelBuilder::unpackAccumulators(Value packed,
                                                        int64_t count) {
  SmallVector<Value> acc;
  for (int64_t i = 0; i < count; ++i)
    acc.push_back(LLVM::ExtractValueOp::create(b, loc, packed, i));
  return acc;
}

Value MmaKernelBuilder::issueWgmmaStage(Value stage, Value packed) {
  MLIRContext *context = b.getContext();
  Value warpgroup = div(div(tid, kWarpSize), 4);
  Value rowOffset = mul(warpgroup, 64);
  auto type = NVVM::WGMMATypesAttr::get(context, product->lhs.mmaType.isBF16()
                                                     ? NVVM::WGMMATypes::bf16
                                                     : NVVM::WGMMATypes::f16);
  auto layout = [&](bool transposed) {
    return NVVM::MMALayoutAttr::get(context, transposed ? NVVM::MMALayout::col
                                                        : NVVM::MMALayout::row);
  };
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kStep = 0; kStep < tileK / 16; ++kStep) {
    Value descA = getDescriptor(lhs, stage, kStep, rowOffset);
    Value descB = getDescriptor(rhs, stage, kStep, index(0));
    packed = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, packed.getType(), packed, descA, descB,
        NVVM::MMAShapeAttr::get(context, 64, tileN, 16), type, type,
        NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one),
        NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
        NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one),
        // A: row = K-major; B: col = K-major (the transposes are for
        // MN-major operands).
        layout(!product->lhs.kContiguous), layout(product->rhs.kContiguous),
        NVVM::MMAIntOverflowAttr());
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return packed;
}

void MmaKernelBuilder::multiplyStageWgmma(Value stage,
                                          SmallVectorImpl<Value> &acc) {
  // This warpgroup's accumulators (64 x tileN, f32) as the struct wgmma
  // reads and writes.
  Value packed = issueWgmmaStage(stage, packAccumulators(acc));
  // The stage is read before the barrier that lets its next copies in.
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> result = unpackAccumulators(packed, acc.size());
  llvm::copy(result, acc.begin());
}

void MmaKernelBuilder::multiplyStage(Value stage, SmallVectorImpl<Value> &acc) {
  if (wgmma)
    return multiplyStageWgmma(stage, acc);
  Value lhsStage = mul(stage, lhs.stageElements());
  Value rhsStage = mul(stage, rhs.stageElements());
  for (int64_t kStep = 0; kStep < tileK / 16; ++kStep) {
    SmallVector<SmallVector<Value>> aFrags, bFrags;
    for (int64_t fragM = 0; fragM < fragsM; ++fragM)
      aFrags.push_back(loadBlock(lhs, lhsStage,
                                 add(mul(warpM, warpTileM), fragM * 16), kStep,
                                 /*rowHalfMinor=*/true));
    for (int64_t pair = 0; pair < fragsN / 2; ++pair) {
      SmallVector<Value> regs =
          loadBlock(rhs, rhsStage, add(mul(warpN, warpTileN), pair * 16), kStep,
                    /*rowHalfMinor=*/false);
      bFrags.push_back({regs[0], regs[1]});
      bFrags.push_back({regs[2], regs[3]});
    }
    for (int64_t fragM = 0; fragM < fragsM; ++fragM) {
      for (int64_t fragN = 0; fragN < fragsN; ++fragN) {
        int64_t base = (fragM * fragsN + fragN) * 4;
        SmallVector<Value> c(ArrayRef<Value>(acc).slice(base, 4));
        SmallVector<Value> d = mma::createMma16816(
            b, loc, aFrags[fragM], bFrags[fragN], c, product->lhs.mmaType);
        llvm::copy(d, acc.begin() + base);
      }
    }
  }
}

SmallVector<Value> MmaKernelBuilder::buildRegisterStagedLoop() {
  Value zeroIndex = index(0);
  // Prologue: the first k tile into stage 0 (a split with no tiles loads
  // zeros past k and multiplies nothing).
  SmallVector<Value> a = loadTile(lhs, kFirst);
  SmallVector<Value> bTile = loadTile(rhs, kFirst);
  storeTile(lhs, a, zeroIndex);
  storeTile(rhs, bTile, zeroIndex);
  fenceSharedForWgmma();
  gpu::BarrierOp::create(b, loc);

  scf::ForOp loop = createKLoop();
  OpBuilder::InsertionGuard loopGuard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kTile = loop.getInductionVar();
  Value next = add(kTile, 1);
  Value hasNext = lessThan(next, kCount);
  Value current = rem(kTile, 2);
  Value nextStage = rem(next, 2);
  // 1. The next tile's global loads, in flight during the multiplies.
  SmallVector<Type> chunkTypes;
  int64_t lhsCount = lhs.outerLen * lhs.chunksPerRow() / threads;
  int64_t rhsCount = rhs.outerLen * rhs.chunksPerRow() / threads;
  chunkTypes.append(lhsCount, VectorType::get({kChunk}, product->lhs.mmaType));
  chunkTypes.append(rhsCount, VectorType::get({kChunk}, product->rhs.mmaType));
  auto prefetch = scf::IfOp::create(b, loc, chunkTypes, hasNext,
                                    /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPointToStart(prefetch.thenBlock());
    SmallVector<Value> loaded = loadTile(lhs, add(kFirst, next));
    llvm::append_range(loaded, loadTile(rhs, add(kFirst, next)));
    scf::YieldOp::create(b, loc, loaded);
    b.setInsertionPointToStart(prefetch.elseBlock());
    SmallVector<Value> zeros;
    for (Type type : chunkTypes)
      zeros.push_back(arith::ConstantOp::create(
          b, loc, type, b.getZeroAttr(cast<ShapedType>(type))));
    scf::YieldOp::create(b, loc, zeros);
  }
  // 2. The multiplies of the current stage.
  SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                         loop.getRegionIterArgs().end());
  multiplyStage(current, acc);
  // 3. The next tile into the other stage, which every warp finished
  //    reading before the previous iteration's barrier.
  auto store = scf::IfOp::create(b, loc, hasNext, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    ResultRange loaded = prefetch.getResults();
    storeTile(lhs, SmallVector<Value>(loaded.take_front(lhsCount)), nextStage);
    storeTile(rhs, SmallVector<Value>(loaded.drop_front(lhsCount)), nextStage);
    fenceSharedForWgmma();
  }
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(loop.getResults());
}

SmallVector<Value> MmaKernelBuilder::buildAsyncCopyLoop() {
  // Prologue: the block's first stages-1 k tiles in flight, one commit
  // group each (an empty group past its last tile keeps the wait counts
  // uniform).
  for (int64_t tile = 0; tile < stages - 1; ++tile) {
    if (tile < kCountBound) {
      OpBuilder::InsertionGuard ifGuard(b);
      if (!kCountExact) {
        auto guard = scf::IfOp::create(b, loc, lessThan(index(tile), kCount),
                                       /*withElseRegion=*/false);
        b.setInsertionPoint(guard.thenBlock()->getTerminator());
      }
      copyTileAsync(lhs, add(kFirst, tile), index(tile));
      copyTileAsync(rhs, add(kFirst, tile), index(tile));
    }
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  }
  scf::ForOp loop = createKLoop();
  OpBuilder::InsertionGuard loopGuard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kTile = loop.getInductionVar();
  // 1. Tile kTile has landed once at most stages-2 younger groups are in
  //    flight; the barrier makes every thread's copies visible, and
  //    guarantees every warp finished multiplying tile kTile-1, whose stage
  //    the copies issued next overwrite.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, stages - 2);
  fenceSharedForWgmma();
  gpu::BarrierOp::create(b, loc);
  // 2. Tile kTile + stages - 1 into the stage tile kTile - 1 used.
  Value ahead = add(kTile, stages - 1);
  auto issue = scf::IfOp::create(b, loc, lessThan(ahead, kCount),
                                 /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(issue.thenBlock()->getTerminator());
    Value stage = rem(ahead, stages);
    copyTileAsync(lhs, add(kFirst, ahead), stage);
    copyTileAsync(rhs, add(kFirst, ahead), stage);
  }
  NVVM::CpAsyncCommitGroupOp::create(b, loc);
  // 3. The multiplies of tile kTile.
  SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                         loop.getRegionIterArgs().end());
  multiplyStage(rem(kTile, stages), acc);
  scf::YieldOp::create(b, loc, acc);
  return SmallVector<Value>(loop.getResults());
}

Value MmaKernelBuilder::encodeTensorMap(const StagedOperand &staged,
                                        func::FuncOp encode) {
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto pointer = LLVM::LLVMPointerType::get(context);
  auto mapType = LLVM::LLVMArrayType::get(i64, 16);
  const MmaOperand &operand = *staged.operand;
  const MmaTmaLayout &layout = staged.tmaLayout;
  auto type = cast<MemRefType>(operand.value.getType());
  int64_t elementBytes = operand.mmaType.getIntOrFloatBitWidth() / 8;
  // Dimensions innermost first: the contiguous one, the rows, then the
  // batch loops the operand reads, innermost first.
  SmallVector<int64_t> dims = {layout.inner, layout.outer};
  // Boxes of one swizzle span of the contiguous dimension (all of a K-major
  // tile's k; one slab of an MN-major tile) by the tile's rows.
  int64_t spanElements = getSwizzleBytes() / elementBytes;
  SmallVector<int64_t> boxes = {spanElements,
                                operand.kContiguous ? staged.outerLen : tileK};
  ArrayRef<int64_t> shape = type.getShape();
  unsigned numBatchDims = layout.batchLoops.size();
  for (unsigned i = 0; i < numBatchDims; ++i) {
    dims.push_back(shape[numBatchDims - 1 - i]);
    boxes.push_back(1);
  }
  SmallVector<int64_t> strides;
  int64_t stride = layout.inner * elementBytes;
  for (size_t i = 1; i < dims.size(); ++i) {
    strides.push_back(stride);
    stride *= dims[i];
  }
  auto i32Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  auto i64Constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, value);
  };
  // CUtensorMapDataType: 6 float16, 9 bfloat16; CUtensorMapSwizzle 3: 128B.
  constexpr int64_t kSwizzle128B = 3;
  Value slot = LLVM::AllocaOp::create(b, loc, pointer, mapType, i64Constant(1),
                                      /*alignment=*/64);
  Value base = arith::IndexCastUIOp::create(
      b, loc, i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, operand.value));
  SmallVector<Value> args = {slot,
                             LLVM::IntToPtrOp::create(b, loc, pointer, base),
                             i32Constant(operand.mmaType.isBF16() ? 9 : 6),
                             i32Constant(static_cast<int64_t>(dims.size()))};
  for (size_t i = 0; i < 5; ++i)
    args.push_back(i64Constant(i < dims.size() ? dims[i] : 1));
  for (size_t i = 0; i < 4; ++i)
    args.push_back(i64Constant(i < strides.size() ? strides[i] : 0));
  for (size_t i = 0; i < 5; ++i)
    args.push_back(i32Constant(i < boxes.size() ? boxes[i] : 1));
  args.push_back(i32Constant(kSwizzle128B));
  func::CallOp::create(b, loc, encode, args);
  return LLVM::LoadOp::create(b, loc, mapType, slot, /*alignment=*/64);
}

Value MmaKernelBuilder::getSharedPointer(Value memref, Value byteOffset) {
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  Value address = arith::IndexCastUIOp::create(b, loc, b.getI64Type(),
                                               add(base, byteOffset));
  return LLVM::IntToPtrOp::create(
      b, loc,
      LLVM::LLVMPointerType::get(
          b.getContext(), static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared)),
      address);
}

void MmaKernelBuilder::waitBarrier(Value barrier, Value parity) {
  // try_wait's suspend-time hint, in nanoseconds: as upstream's nvgpu.
  constexpr int64_t kSuspendHint = 10000000;
  Type i32 = b.getI32Type();
  NVVM::MBarrierTryWaitParityOp::create(
      b, loc, barrier, arith::IndexCastUIOp::create(b, loc, i32, parity),
      arith::ConstantIntOp::create(b, loc, i32, kSuspendHint));
}

void MmaKernelBuilder::copyTileTma(const StagedOperand &staged, Value kTile,
                                   Value stage, Value barrier) {
  MLIRContext *context = b.getContext();
  Type i32 = b.getI32Type();
  const MmaOperand &operand = *staged.operand;
  auto toI32 = [&](Value value) -> Value {
    return arith::IndexCastUIOp::create(b, loc, i32, value);
  };
  // The batch coordinates, innermost first.
  SmallVector<Value> batchCoords;
  for (unsigned loop : llvm::reverse(staged.tmaLayout.batchLoops))
    batchCoords.push_back(toI32(batchIndices[loop]));
  Value kBase = mul(kTile, tileK);
  Value rowBase = staged.isLhs ? mBase : nBase;
  int64_t elementBytes = operand.mmaType.getIntOrFloatBitWidth() / 8;
  Value stageBytes = mul(stage, staged.stageElements() * elementBytes);
  auto cluster = LLVM::LLVMPointerType::get(
      context, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
  auto copy = [&](Value byteOffset, Value inner, Value outer) {
    SmallVector<Value> coords = {toI32(inner), toI32(outer)};
    llvm::append_range(coords, batchCoords);
    // A CTA's own shared memory is its part of the (trivial) cluster's.
    Value destination = LLVM::AddrSpaceCastOp::create(
        b, loc, cluster, getSharedPointer(staged.smem, byteOffset));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, destination, staged.tensorMap, coords, barrier,
        /*im2colOffsets=*/ValueRange(), /*multicastMask=*/Value(),
        /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
        /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
  };
  if (operand.kContiguous) {
    // Rows of 64 k elements (128 bytes), the 128-byte swizzle (chunk c of
    // row r at c ^ (r % 8)): the layout wgmma's K-major descriptors read, as
    // the tensor copy writes it.
    copy(stageBytes, kBase, rowBase);
    return;
  }
  // MN-major: slabs of 64 m|n elements by the tile's 64 k rows, slab after
  // slab.
  int64_t slabElements = getSwizzleBytes() / elementBytes;
  int64_t slabBytes = staged.outerLen * getSwizzleBytes();
  for (int64_t slab = 0; slab < staged.innerLen / slabElements; ++slab)
    copy(add(stageBytes, slab * slabBytes), add(rowBase, slab * slabElements),
         kBase);
}

void MmaKernelBuilder::buildTmaProducer() {
  Type i32 = b.getI32Type();
  int64_t elementBytes = product->lhs.mmaType.getIntOrFloatBitWidth() / 8;
  Value stageBytes = arith::ConstantIntOp::create(
      b, loc, i32, (lhs.stageElements() + rhs.stageElements()) * elementBytes);
  auto loop = scf::ForOp::create(b, loc, index(0), kCount, index(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value kTile = loop.getInductionVar();
  Value stage = rem(kTile, stages);
  // From the second round on, the stage is free once the consumers have
  // released the tile `stages` before (the previous phase of its empty
  // barrier).
  auto reuse =
      scf::IfOp::create(b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                              kTile, index(stages)),
                        /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(reuse.thenBlock()->getTerminator());
    Value round = div(kTile, stages);
    waitBarrier(getEmptyBarrier(stage),
                rem(arith::SubIOp::create(b, loc, round, index(1)), 2));
  }
  // The full barrier's phase completes with this arrival and the copies'
  // bytes (whole boxes: the zeros past the tensor's edges count too).
  Value full = getFullBarrier(stage);
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), full, stageBytes,
                                         NVVM::MemScopeKind::CTA,
                                         /*relaxed=*/false,
                                         /*predicate=*/Value());
  copyTileTma(lhs, add(kFirst, kTile), stage, full);
  copyTileTma(rhs, add(kFirst, kTile), stage, full);
}

SmallVector<Value> MmaKernelBuilder::buildTmaConsumer() {
  int64_t count = fragsM * fragsN * 4;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  Value init = packAccumulators(SmallVector<Value>(count, zero));
  auto loop =
      scf::ForOp::create(b, loc, index(0), kCount, index(1), ValueRange{init});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kTile = loop.getInductionVar();
    Value stage = rem(kTile, stages);
    waitBarrier(getFullBarrier(stage), rem(div(kTile, stages), 2));
    Value packed = issueWgmmaStage(stage, loop.getRegionIterArgs()[0]);
    // One group in flight: the previous tile's wgmmas are done, and its
    // stage goes back to the producer. Every consumer thread arrives: a
    // branch around one lane's arrival would make the warp diverge right
    // before the next wgmma.fence, whose .aligned form needs it converged.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
    auto releaseIf = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, kTile,
                              index(0)),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(releaseIf.thenBlock()->getTerminator());
      Value previous = rem(add(kTile, stages - 1), stages);
      NVVM::MBarrierArriveOp::create(b, loc, b.getI64Type(),
                                     getEmptyBarrier(previous),
                                     /*count=*/Value());
    }
    scf::YieldOp::create(b, loc, packed);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return unpackAccumulators(loop.getResult(0), count);
}

void MmaKernelBuilder::finishResults(ArrayRef<SmallVector<Value>> results,
                                     Value split, Value tile, Value partials) {
  if (splitK == 1) {
    storeResults(results);
    return;
  }
  // This split's partial sums, for the second launch.
  int64_t reg = 0;
  for (ArrayRef<Value> productResults : results)
    for (Value value : productResults)
      memref::StoreOp::create(b, loc, value, partials,
                              getPartialIndex(tile, split, reg++));
}

void MmaKernelBuilder::storeResults(ArrayRef<SmallVector<Value>> results) {
  // Accumulator (fragM, fragN, i) is element (group + 8 (i / 2),
  // 2 * (lane % 4) + i % 2) of its 16 x 8 fragment. Lanes 2j and 2j + 1
  // swap halves (shfl.bfly 1): the even lane then holds row `group`,
  // columns 4 (j % 2) .. + 3, the odd lane row `group + 8`, the same columns.
  Value group = div(lane, 4);
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    rem(lane, 2), index(1));
  Value quadColumn = mul(div(rem(lane, 4), 2), 4);
  Value rowOffset = arith::SelectOp::create(b, loc, odd, index(8), index(0));
  Value warpRow = add(mBase, mul(warpM, warpTileM));
  Value warpColumn = add(nBase, mul(warpN, warpTileN));
  Value buffer = getResultBuffer();
  auto bufferType = cast<MemRefType>(buffer.getType());
  Type resultType = bufferType.getElementType();
  auto vectorType = VectorType::get({4}, resultType);
  // Quads of 4 consecutive n stay in one row of the result when its
  // innermost extent is a multiple of 4 (one vector store); otherwise (a
  // 7 x 7 convolution output) each element is stored on its own.
  int64_t rowElements = mma.nLoops.back();
  bool quadStores = rowElements % 4 == 0;
  // An epilogue that permutes the result keeps quads together only when the
  // innermost loop stays innermost.
  if (mma.epilogue) {
    AffineMap read = mma.epilogue.getMatchingIndexingMap(
        mma.epilogue.getDpsInputOperand(getEpilogueInput()));
    unsigned last = read.getNumResults() - 1;
    quadStores &= read.getDimPosition(last) == last;
  }
  bool aligned = isRowAligned(buffer, rowElements);
  int64_t vectorBytes = 4 * bufferType.getElementTypeBitWidth() / 8;
  Value one32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 1);
  Value width32 =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  for (int64_t fragM = 0; fragM < fragsM; ++fragM) {
    for (int64_t fragN = 0; fragN < fragsN; ++fragN) {
      // quads[i][p]: element i of the quad, product p.
      SmallVector<SmallVector<Value>> quads(4);
      for (ArrayRef<Value> productResults : results) {
        ArrayRef<Value> c =
            productResults.slice((fragM * fragsN + fragN) * 4, 4);
        Value sent[2], received[2];
        for (int64_t i = 0; i < 2; ++i) {
          sent[i] = arith::SelectOp::create(b, loc, odd, c[i], c[2 + i]);
          received[i] = gpu::ShuffleOp::create(b, loc, sent[i], one32, width32,
                                               gpu::ShuffleMode::XOR)
                            .getShuffleResult();
        }
        for (int64_t i = 0; i < 4; ++i) {
          Value even = i < 2 ? c[i] : received[i - 2];
          Value oddValue = i < 2 ? received[i] : c[i];
          quads[i].push_back(
              arith::SelectOp::create(b, loc, odd, oddValue, even));
        }
      }
      Value m = add(add(add(warpRow, group), rowOffset), fragM * 16);
      Value n = add(add(warpColumn, quadColumn), fragN * 8);
      if (!quadStores) {
        for (int64_t i = 0; i < 4; ++i) {
          Value column = add(n, i);
          Value inside = arith::AndIOp::create(b, loc, lessThan(m, mma.m),
                                               lessThan(column, mma.n));
          auto guardIf = scf::IfOp::create(b, loc, inside,
                                           /*withElseRegion=*/false);
          OpBuilder::InsertionGuard ifGuard(b);
          b.setInsertionPoint(guardIf.thenBlock()->getTerminator());
          memref::StoreOp::create(b, loc, applyEpilogue(quads[i], m, column),
                                  buffer, epilogueCoordinates(m, column));
        }
        continue;
      }
      // n is a multiple of 4 and so is the extent: the quad is inside or
      // outside together.
      Value inside =
          arith::AndIOp::create(b, loc, lessThan(m, mma.m), lessThan(n, mma.n));
      auto guardIf = scf::IfOp::create(b, loc, inside,
                                       /*withElseRegion=*/false);
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(guardIf.thenBlock()->getTerminator());
      SmallVector<Value> values;
      for (int64_t i = 0; i < 4; ++i)
        values.push_back(applyEpilogue(quads[i], m, add(n, i)));
      Value vector = vector::FromElementsOp::create(b, loc, vectorType, values);
      vector::StoreOp::create(b, loc, vector, buffer, epilogueCoordinates(m, n),
                              /*nontemporal=*/false,
                              aligned ? llvm::MaybeAlign(vectorBytes)
                                      : llvm::MaybeAlign());
    }
  }
}

LogicalResult MmaKernelBuilder::build(func::FuncOp encodeFn) {
  MLIRContext *context = b.getContext();
  int64_t batchCount = 1;
  for (int64_t extent : mma.batch)
    batchCount *= extent;
  auto stage = [&](const MmaProduct &product, bool isLhs) {
    const MmaOperand &operand = isLhs ? product.lhs : product.rhs;
    StagedOperand staged;
    staged.operand = &operand;
    staged.isLhs = isLhs;
    staged.source = operand.value;
    int64_t rowLen = isLhs ? tileM : tileN;
    int64_t rowExtent = isLhs ? mma.m : mma.n;
    if (operand.kContiguous) {
      staged.outerLen = rowLen;
      staged.innerLen = tileK;
      staged.outerExtent = rowExtent;
      staged.innerExtent = product.k;
    } else {
      staged.outerLen = tileK;
      staged.innerLen = rowLen;
      staged.outerExtent = product.k;
      staged.innerExtent = rowExtent;
    }
    return staged;
  };
  // Every product stages A and B tiles of the same size: one pair of shared
  // buffers serves them all.
  for (const MmaProduct &candidate : mma.products) {
    Operation *contraction = candidate.contraction;
    for (bool isLhs : {true, false}) {
      StagedOperand staged = stage(candidate, isLhs);
      if ((staged.outerLen * staged.chunksPerRow()) % threads != 0)
        return contraction->emitError()
               << "tensor-core tile " << tileM << "x" << tileN << "x" << tileK
               << " does not split evenly over " << threads << " threads";
      if (stages <= 2)
        continue;
      const MmaOperand &operand = *staged.operand;
      if (operand.gathered)
        return contraction->emitError()
               << "'mma_stages' " << stages
               << " fills shared memory with cp.async, which copies 16-byte "
                  "chunks: an operand read element by element (a "
                  "convolution's window, or rows that are not whole chunks) "
                  "needs 2 (register-staged) stages";
      if (operand.elementType != operand.mmaType)
        return contraction->emitError()
               << "'mma_stages' " << stages
               << " fills shared memory with cp.async, which copies bytes: "
                  "an operand stored as "
               << operand.elementType << " and multiplied in "
               << operand.mmaType << " needs 2 (register-staged) stages";
    }
  }

  auto workgroup = gpu::AddressSpaceAttr::get(
      context, gpu::GPUDialect::getWorkgroupAddressSpace());
  auto smemType = [&](const StagedOperand &staged) {
    return MemRefType::get({stages * staged.stageElements()},
                           staged.operand->mmaType, MemRefLayoutAttrInterface(),
                           workgroup);
  };
  Value gridX = index(llvm::divideCeil(mma.n, tileN));
  Value gridY = index(llvm::divideCeil(mma.m, tileM));
  Value gridZ = index(batchCount * splitK);
  Value one = index(1);
  // Split-K: each split's partial sums, in fragment order, for the second
  // launch to add (accumulators of every product, every thread, every
  // split of every output tile).
  int64_t numResults =
      static_cast<int64_t>(mma.products.size()) * fragsM * fragsN * 4;
  int64_t numTiles = batchCount * llvm::divideCeil(mma.n, tileN) *
                     llvm::divideCeil(mma.m, tileM);
  Value partials;
  if (splitK > 1)
    partials = memref::AllocOp::create(
        b, loc,
        MemRefType::get({numTiles * splitK * numResults * threads},
                        b.getF32Type()));
  // TMA: each operand's tensor map, encoded on the host before the launch.
  if (tma) {
    if (mma.products.size() != 1)
      return mma.products.front().contraction->emitError()
             << "'mma_tma' loads the operands of one product";
    product = &mma.products.front();
    lhs = stage(*product, /*isLhs=*/true);
    rhs = stage(*product, /*isLhs=*/false);
    for (StagedOperand *staged : {&lhs, &rhs}) {
      std::string reason;
      std::optional<MmaTmaLayout> layout = getMmaTmaLayout(
          mma, *product, *staged->operand, staged->isLhs, reason);
      if (!layout)
        return product->contraction->emitError()
               << "'mma_tma' needs TMA to copy operand "
               << (staged->isLhs ? "A" : "B") << ", but " << reason;
      staged->tmaLayout = *layout;
      staged->hostTensorMap = encodeTensorMap(*staged, encodeFn);
    }
  }
  // The TMA kernel's shared memory is dynamic (its stages may pass the 48
  // KiB of static shared memory), aligned in the kernel; its producer warp
  // comes after the consumer warpgroups.
  Value dynamicSharedBytes;
  if (tma)
    dynamicSharedBytes = arith::ConstantIntOp::create(
        b, loc, b.getI32Type(),
        getTmaSharedMemoryBytes(tileM, tileN, tileK, stages));
  SmallVector<Type> attributions;
  if (!tma)
    attributions = {smemType(stage(mma.products[0], true)),
                    smemType(stage(mma.products[0], false))};
  auto launch = gpu::LaunchOp::create(
      b, loc, gridX, gridY, gridZ, index(tma ? threads + kWarpSize : threads),
      one, one, dynamicSharedBytes, /*asyncTokenType=*/nullptr,
      /*asyncDependencies=*/ValueRange(), attributions);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  // z runs over the batch, and over the splits of each batch index.
  Value split, batchLinear = blockIds.z;
  if (splitK > 1) {
    split = rem(blockIds.z, splitK);
    batchLinear = div(blockIds.z, splitK);
  }
  setBlockCoordinates(launch, batchLinear);
  Value tile;
  if (splitK > 1)
    tile = getTileIndex(batchLinear, blockIds);

  if (tma) {
    // A's stages, B's stages, then the mbarriers, from the first 1024-byte
    // boundary of the dynamic shared memory (the 128-byte swizzle's atom,
    // on which TMA and wgmma agree; ridge-extern-dynamic-shared-memory
    // aligns the array so, and this keeps the kernel right without it).
    int64_t elementBytes = product->lhs.mmaType.getIntOrFloatBitWidth() / 8;
    auto dynamicType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                       MemRefLayoutAttrInterface(), workgroup);
    Value dynamic = gpu::DynamicSharedMemoryOp::create(b, loc, dynamicType);
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, dynamic);
    Value offset = rem(
        arith::SubIOp::create(b, loc, index(1024), rem(address, 1024)), 1024);
    for (StagedOperand *staged : {&lhs, &rhs}) {
      staged->smem = memref::ViewOp::create(b, loc, smemType(*staged), dynamic,
                                            offset, ValueRange());
      offset = add(offset, stages * staged->stageElements() * elementBytes);
      staged->tensorMap = UnrealizedConversionCastOp::create(
                              b, loc, LLVM::LLVMPointerType::get(context),
                              staged->hostTensorMap)
                              .getResult(0);
    }
    barriers = memref::ViewOp::create(
        b, loc,
        MemRefType::get({2 * stages}, b.getI64Type(),
                        MemRefLayoutAttrInterface(), workgroup),
        dynamic, offset, ValueRange());
    setKRange(llvm::divideCeil(product->k, tileK), split);
    // One thread initializes the barriers: a stage is full after the
    // producer's one arrival and the copies' bytes, empty after one
    // arrival of each consumer thread.
    Type i32 = b.getI32Type();
    auto initIf = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0)),
        /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(initIf.thenBlock()->getTerminator());
      for (int64_t i = 0; i < stages; ++i) {
        NVVM::MBarrierInitOp::create(
            b, loc, getFullBarrier(index(i)),
            arith::ConstantIntOp::create(b, loc, i32, 1), Value());
        NVVM::MBarrierInitOp::create(
            b, loc, getEmptyBarrier(index(i)),
            arith::ConstantIntOp::create(b, loc, i32, threads), Value());
      }
      NVVM::FenceMbarrierInitOp::create(b, loc);
    }
    gpu::BarrierOp::create(b, loc);
    // The roles: no block-wide barrier after this point.
    Value producer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge,
                                           tid, index(threads));
    auto roles = scf::IfOp::create(b, loc, producer, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard ifGuard(b);
      b.setInsertionPoint(roles.thenBlock()->getTerminator());
      auto laneIf = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                index(0)),
          /*withElseRegion=*/false);
      b.setInsertionPoint(laneIf.thenBlock()->getTerminator());
      buildTmaProducer();
      b.setInsertionPoint(roles.elseBlock()->getTerminator());
      SmallVector<SmallVector<Value>> results = {buildTmaConsumer()};
      finishResults(results, split, tile, partials);
    }
  } else {
    // The products one after the other, each with its own accumulators; the
    // barrier between them keeps the second's first stores out of stages
    // the first is still reading.
    SmallVector<SmallVector<Value>> results;
    for (const MmaProduct &current : mma.products) {
      if (!results.empty())
        gpu::BarrierOp::create(b, loc);
      product = &current;
      lhs = stage(current, /*isLhs=*/true);
      rhs = stage(current, /*isLhs=*/false);
      lhs.smem = launch.getWorkgroupAttributions()[0];
      rhs.smem = launch.getWorkgroupAttributions()[1];
      for (StagedOperand *staged : {&lhs, &rhs}) {
        if (!staged->operand->collapsedK)
          continue;
        // Its k dimensions (the trailing ones, contiguous) as one.
        int64_t rank = cast<MemRefType>(staged->source.getType()).getRank();
        int64_t numK = current.kLoops.size();
        SmallVector<ReassociationIndices> groups;
        for (int64_t i = 0; i < rank - numK; ++i)
          groups.push_back({i});
        groups.emplace_back();
        for (int64_t i = rank - numK; i < rank; ++i)
          groups.back().push_back(i);
        staged->source =
            memref::CollapseShapeOp::create(b, loc, staged->source, groups);
      }
      setKRange(llvm::divideCeil(current.k, tileK), split);
      results.push_back(stages > 2 ? buildAsyncCopyLoop()
                                   : buildRegisterStagedLoop());
    }
    finishResults(results, split, tile, partials);
  }
  gpu::TerminatorOp::create(b, loc);
  if (splitK == 1)
    return success();
  b.setInsertionPointAfter(launch);
  buildSplitKFixup(partials, gridX, gridY, batchCount, numResults);
  memref::DeallocOp::create(b, loc, partials);
  return success();
}

void MmaKernelBuilder::setKRange(int64_t numKTiles, Value split) {
  if (splitK == 1) {
    kFirst = index(0);
    kCount = index(numKTiles);
    kCountBound = numKTiles;
    kCountExact = true;
    return;
  }
  int64_t perSplit = llvm::divideCeil(numKTiles, splitK);
  kFirst = mul(split, perSplit);
  // min(perSplit, max(numKTiles - kFirst, 0)), in unsigned arithmetic:
  // kFirst may pass numKTiles when the splits outnumber a product's tiles.
  Value left = arith::SubIOp::create(
      b, loc, arith::MaxUIOp::create(b, loc, index(numKTiles), kFirst), kFirst);
  kCount = minimum(left, perSplit);
  kCountBound = perSplit;
  kCountExact = perSplit * splitK == numKTiles;
  if (kCountExact)
    kCount = index(perSplit);
}

void MmaKernelBuilder::setBlockCoordinates(gpu::LaunchOp launch,
                                           Value batchLinear) {
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value warp = div(tid, kWarpSize);
  warpM = div(warp, warpsN);
  warpN = rem(warp, warpsN);
  mBase = mul(blockIds.y, tileM);
  nBase = mul(blockIds.x, tileN);
  setBatchIndices(batchLinear);
}

Value MmaKernelBuilder::getPartialIndex(Value tile, Value split, int64_t reg) {
  int64_t numResults =
      static_cast<int64_t>(mma.products.size()) * fragsM * fragsN * 4;
  Value slot = add(mul(add(mul(tile, splitK), split), numResults), reg);
  return add(mul(slot, threads), tid);
}

void MmaKernelBuilder::buildSplitKFixup(Value partials, Value gridX,
                                        Value gridY, int64_t batchCount,
                                        int64_t numResults) {
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(b, loc, gridX, gridY, index(batchCount),
                                      index(threads), one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  setBlockCoordinates(launch, blockIds.z);
  Value tile = getTileIndex(blockIds.z, blockIds);
  // Split 0 first, then 1, ...: a fixed order of f32 additions, whichever
  // block finished first.
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  auto loop = scf::ForOp::create(b, loc, index(0), index(splitK), one,
                                 SmallVector<Value>(numResults, zero));
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> sums;
    for (int64_t reg = 0; reg < numResults; ++reg) {
      Value partial = memref::LoadOp::create(
          b, loc, partials, getPartialIndex(tile, loop.getInductionVar(), reg));
      sums.push_back(arith::AddFOp::create(
          b, loc, loop.getRegionIterArgs()[reg], partial));
    }
    scf::YieldOp::create(b, loc, sums);
  }
  SmallVector<SmallVector<Value>> results(mma.products.size());
  int64_t perProduct = numResults / static_cast<int64_t>(mma.products.size());
  for (int64_t reg = 0; reg < numResults; ++reg)
    results[reg / perProduct].push_back(loop.getResult(reg));
  storeResults(results);
  gpu::TerminatorOp::create(b, loc);
}

LogicalResult MmaKernelBuilder::buildGemv() {
  const MmaProduct &only = mma.products.front();
  product = &only;
  int64_t batchCount = 1;
  for (int64_t extent : mma.batch)
    batchCount *= extent;
  constexpr int64_t kPiece = 4;
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(
      b, loc, index(llvm::divideCeil(mma.n, gemvWarps)), one, index(batchCount),
      index(gemvWarps * kWarpSize), one, one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  tid = launch.getThreadIds().x;
  lane = rem(tid, kWarpSize);
  Value n = add(mul(blockIds.x, gemvWarps), div(tid, kWarpSize));
  setBatchIndices(blockIds.z);
  // Every lane of a warp past the last column still takes part in the
  // shuffles: it reads the last column and does not store.
  Value column = minimum(n, mma.n - 1);
  StagedOperand a, w;
  a.operand = &only.lhs;
  a.isLhs = true;
  a.source = only.lhs.value;
  w.operand = &only.rhs;
  w.isLhs = false;
  w.source = only.rhs.value;
  Type f32 = b.getF32Type();
  auto pieceType = VectorType::get({kPiece}, f32);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<Value> init(mma.m, zero);
  auto loop = scf::ForOp::create(b, loc, mul(lane, kPiece), index(only.k),
                                 index(kWarpSize * kPiece), init);
  {
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value k = loop.getInductionVar();
    Value weights = vector::LoadOp::create(
        b, loc, pieceType, w.source, operandIndices(w, column, k),
        /*nontemporal=*/false, llvm::MaybeAlign(16));
    SmallVector<Value> sums;
    for (int64_t m = 0; m < mma.m; ++m) {
      // The row's piece: one 16-byte load, or (a gathered row, such as a
      // class token picked by a Gather) element by element.
      Value row;
      if (!only.lhs.gathered) {
        row = vector::LoadOp::create(
            b, loc, pieceType, a.source, operandIndices(a, index(m), k),
            /*nontemporal=*/false, llvm::MaybeAlign(16));
      } else {
        SmallVector<Value> elements;
        for (int64_t i = 0; i < kPiece; ++i) {
          SmallVector<Value> coords = getLoopCoordinates();
          decode(index(m), GemmDim::M, coords);
          decode(add(k, i), GemmDim::K, coords);
          elements.push_back(gatherElement(only.lhs, coords));
        }
        row = vector::FromElementsOp::create(b, loc, pieceType, elements);
      }
      Value sum = loop.getRegionIterArgs()[m];
      for (int64_t i = 0; i < kPiece; ++i) {
        Value x = vector::ExtractOp::create(b, loc, row, i);
        Value y = vector::ExtractOp::create(b, loc, weights, i);
        sum = math::FmaOp::create(b, loc, x, y, sum);
      }
      sums.push_back(sum);
    }
    scf::YieldOp::create(b, loc, sums);
  }
  Value width = arith::ConstantIntOp::create(b, loc, b.getI32Type(), kWarpSize);
  SmallVector<Value> results;
  for (Value sum : loop.getResults()) {
    for (int64_t offset = kWarpSize / 2; offset > 0; offset /= 2) {
      Value offset32 =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), offset);
      Value other = gpu::ShuffleOp::create(b, loc, sum, offset32, width,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      sum = arith::AddFOp::create(b, loc, sum, other);
    }
    results.push_back(sum);
  }
  Value store = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, index(0)),
      lessThan(n, mma.n));
  auto storeIf = scf::IfOp::create(b, loc, store, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard ifGuard(b);
    b.setInsertionPoint(storeIf.thenBlock()->getTerminator());
    Value buffer = getResultBuffer();
    for (int64_t m = 0; m < mma.m; ++m)
      memref::StoreOp::create(b, loc, applyEpilogue(results[m], index(m), n),
                              buffer, epilogueCoordinates(index(m), n));
  }
  gpu::TerminatorOp::create(b, loc);
  return success();
}

/// The runtime's tensor-map encoder (MgpuApi.cpp), declared in `module`.
static func::FuncOp declareTensorMapEncoder(ModuleOp module) {
  constexpr StringLiteral kName = "ridgeTensorMapEncodeTiled";
  if (auto existing = module.lookupSymbol<func::FuncOp>(kName))
    return existing;
  MLIRContext *context = module.getContext();
  Type pointer = LLVM::LLVMPointerType::get(context);
  Type i32 = IntegerType::get(context, 32), i64 = IntegerType::get(context, 64);
  // (map, base, data type, rank, 5 dims, 4 strides, 5 boxes, swizzle).
  SmallVector<Type> inputs = {pointer, pointer, i32, i32};
  inputs.append(5, i64);
  inputs.append(4, i64);
  inputs.append(5, i32);
  inputs.push_back(i32);
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto encoder = func::FuncOp::create(builder, module.getLoc(), kName,
                                      FunctionType::get(context, inputs, {}));
  encoder.setPrivate();
  return encoder;
}

namespace {
struct LowerMmaContractionsPass
    : public ridge::impl::LowerMmaContractionsPassBase<
          LowerMmaContractionsPass> {
  void runOnOperation() override {
    // A module pass: TMA kernels' host code calls a runtime function that
    // the module declares.
    ModuleOp module = getOperation();
    for (auto kernel :
         llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (failed(lowerKernel(kernel)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp kernel) {
    if (kernel.isExternal() || !kernel->hasAttr(kKernelAttr))
      return success();
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(kernel);
    if (failed(config))
      return failure();
    if (!*config || !(*config)->usesDedicatedKernel())
      return success();
    std::string reason;
    FailureOr<MmaContraction> mma =
        matchMmaContraction(kernel, reason, /*allowF32=*/(*config)->gemv);
    if (failed(mma)) {
      kernel.emitError() << "kernel configured for tensor cores is not a "
                            "tensor-core contraction on buffers: "
                         << reason;
      return failure();
    }
    if (!mma->products.front().contraction.hasPureBufferSemantics()) {
      kernel.emitError() << "ridge-lower-mma-contractions runs on buffers "
                            "(after bufferization)";
      return failure();
    }
    // At the last of the ops, where every operand they read is defined (an
    // epilogue's residual may be a view made after the contraction).
    Operation *last = mma->epilogue
                          ? mma->epilogue.getOperation()
                          : mma->products.back().contraction.getOperation();
    OpBuilder builder(last);
    MmaKernelBuilder kernelBuilder(builder, last->getLoc(), *mma, **config);
    func::FuncOp encoder;
    if ((*config)->mmaTma)
      encoder = declareTensorMapEncoder(getOperation());
    if (failed((*config)->gemv ? kernelBuilder.buildGemv()
                               : kernelBuilder.build(encoder)))
      return failure();
    // The linalg ops are now the launch; the accumulator buffer of an
    // epilogue kernel, and a result buffer copied out, are no longer needed.
    llvm::SetVector<Value> buffers;
    if (mma->epilogue) {
      buffers.insert(mma->epilogue.getDpsInitOperand(0)->get());
      mma->epilogue->erase();
    }
    for (memref::CopyOp copy : mma->zeroCopies)
      copy->erase();
    llvm::SetVector<Operation *> fills;
    for (MmaProduct &done : mma->products) {
      buffers.insert(done.contraction.getDpsInitOperand(0)->get());
      buffers.insert(done.fill.getDpsInitOperand(0)->get());
      done.contraction->erase();
      fills.insert(done.fill);
    }
    for (Operation *fill : fills)
      fill->erase();
    for (linalg::GenericOp producer : mma->producers) {
      buffers.insert(producer.getDpsInitOperand(0)->get());
      producer->erase();
    }
    if (memref::CopyOp copy = mma->resultCopy) {
      Operation *view = copy.getSource().getDefiningOp();
      copy->erase();
      if (view && isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(view))
        view->erase();
    }
    for (Value buffer : buffers) {
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      if (!alloc)
        continue;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      if (alloc->use_empty())
        alloc->erase();
    }
    if (!(*config)->gemv)
      ++numTensorCoreKernels;
    if ((*config)->mmaTma)
      ++numTmaKernels;
    LLVM_DEBUG({
      if (!(*config)->gemv)
        llvm::dbgs() << kernel.getName() << ": tensor-core kernel of "
                     << mma->products.size() << " product(s), "
                     << (*config)->mmaTile[0] << "x" << (*config)->mmaTile[1]
                     << "x" << (*config)->mmaTile[2]
                     << ((*config)->mmaTma ? ", TMA" : "") << "\n";
    });
    return success();
  }
};
} // namespace
