//===- MmaKernelBuilder.h - The tensor-core GEMM kernel builder -*- C++ -*-===//
//
// The builder behind ridge-lower-mma-contractions: one tensor-core (or
// GEMV) kernel from a matched contraction and its config. Its threads-staged
// pipelines (registers, cp.async), epilogue and split-K live in
// LowerMmaContractions.cpp; sm_90a's TMA pipeline (a producer warp, tensor
// copies, mbarriers) in MmaTmaPipeline.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_LIB_CODEGEN_MMAKERNELBUILDER_H
#define RIDGELINE_LIB_CODEGEN_MMAKERNELBUILDER_H

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"

#include "MmaFragments.h"
#include "TmaCopies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <tuple>

namespace mlir::ridge {

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
  /// Elements of a 16-byte chunk, and chunks of a row.
  int64_t chunkElements() const { return operand->getChunkElements(); }
  int64_t chunksPerRow() const { return innerLen / chunkElements(); }
  /// Bytes of a staged element (2, or tf32's f32 4).
  int64_t elementBytes() const { return operand->getStagedBytes(); }
};

/// What the blocks of a split kernel share (KernelConfig::mmaSplitK or
/// gemvSplitK > 1): each block stores its partial sums, and the last of a
/// region's blocks to arrive adds them (SplitArrival.h).
struct SplitKBuffers {
  /// f32 partial sums: accumulators of every product, thread, split and
  /// output tile (getPartialIndex).
  Value partials;
  /// One i32 arrival counter per output tile, zero before the launch.
  Value counters;
  /// One i32 of shared memory: thread 0's verdict, for the other threads.
  Value arrival;
};

class MmaKernelBuilder : mma::IndexMath {
public:
  MmaKernelBuilder(OpBuilder &b, Location loc, const MmaContraction &mma,
                   const KernelConfig &config)
      : IndexMath(b, loc), mma(mma) {
    numBatch = mma.batch.size();
    gemvWarps = config.warpsPerBlock;
    gemvSplitK = config.gemvSplitK;
    gemvRowsPerWarp = config.gemvRowsPerWarp;
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
  /// all m rows of it; lanes take 16-byte pieces of k (4 f32 or 8 f16/bf16
  /// elements) a warp's 512 bytes apart, then a shuffle reduction; lane 0
  /// applies the epilogue and stores.
  LogicalResult buildGemv();
  /// The bandwidth path of a weight stored n-contiguous (a MatMul's [K, N]
  /// weight): each lane owns the consecutive columns of 16 bytes of a
  /// weight row (4 f32, 8 f16/bf16), a warp 32 such pieces and a share of
  /// k (KernelConfig::gemvSplitK shares), loading getGemvColumnRowsInFlight
  /// rows before it uses the first; with several shares, the last block of
  /// a column group adds their partial sums in order and applies the
  /// epilogue (combineGemvShares).
  LogicalResult buildGemvColumns();
  /// The bandwidth path of a tall and skinny product (GemvForm::TallSkinny:
  /// n at most 16 below a larger m): KernelConfig::gemvRowsPerWarp rows of
  /// A a warp, its lanes taking 16-byte pieces of its share of k
  /// (getTallSkinnyPiecesInFlight loaded before the first fma), each B
  /// element loaded once for all the rows, all the rows' n sums a lane, a
  /// shuffle reduction of each; lane c applies the epilogue to column c of
  /// each row and stores it, or, with KernelConfig::gemvSplitK shares, stores
  /// its partial sum for combineGemvShares.
  LogicalResult buildGemvTallSkinny();
  /// The end of a GEMV block split into `shares` shares of k, after its
  /// threads stored their partial sums ([share, batch, m, n] in
  /// `splitBuffers.partials`): the last of the `arrivals` blocks of its
  /// region of outputs to arrive (arriveAtTile at counter `region`; with
  /// one block a region, the block after a barrier) adds each output's
  /// partial sums in share order, the threads taking the region's outputs
  /// in turn, and stores them through the epilogue. The region: rows
  /// [mBegin, mBegin + rows) of batch index `batch` by columns [nBegin,
  /// nBegin + columns), clipped to m x n.
  void combineGemvShares(const SplitKBuffers &splitBuffers, int64_t shares,
                         int64_t batchCount, Value region, int64_t arrivals,
                         Value batch, Value mBegin, int64_t rows, Value nBegin,
                         int64_t columns);
  /// Host code before a split launch: its partial sums (`partials` f32) and
  /// `numCounters` arrival counters (none for 0; createArrivalCounters).
  SplitKBuffers createSplitKBuffers(int64_t partials, int64_t numCounters);
  /// Host code after the split launch: frees its buffers.
  void deallocSplitKBuffers(const SplitKBuffers &splitBuffers);
  /// The sum of `value` over the lanes of the warp (a shuffle butterfly:
  /// every lane takes part and ends with the sum).
  Value sumOverWarp(Value value);
  /// Stores the GEMV's outputs (accumulator, m, n) through the epilogue
  /// and folds their magnitudes into the result amaxes (one atomic each).
  void storeGemvOutputs(ArrayRef<std::tuple<Value, Value, Value>> outputs);

private:
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
  /// `stage` at its first k, starting `rowOffset` rows (m or n) in.
  Value getDescriptor(const StagedOperand &staged, Value stage,
                      Value rowOffset);
  /// `descriptor` (getDescriptor's) moved to k16 step `kStep`: one add.
  Value advanceDescriptor(const StagedOperand &staged, Value descriptor,
                          int64_t kStep);
  /// The bytes of a wgmma tile row and the span of its swizzle: 128 for
  /// TMA's stages (k tiles of 64), else 64 (k tiles of 32; the threads'
  /// 16-byte stores and cp.async copies write that layout).
  int64_t getSwizzleBytes() const { return tma ? 128 : mma::kSlabRowBytes; }
  /// The wgmma multiplies of the tile in stage `stage`.
  void multiplyStageWgmma(Value stage, SmallVectorImpl<Value> &acc);
  /// The wgmmas of stage `stage` on the warpgroup's accumulators, `packed`
  /// as the struct wgmma reads and writes, committed as one group and not
  /// waited for; returns the accumulators' new struct. With `fresh`, the
  /// first wgmma ignores `packed` (scale-d 0): the stage's sum alone.
  Value issueWgmmaStage(Value stage, Value packed, bool fresh = false);
  /// Waits until at most `inFlight` of the warpgroup's wgmma groups are
  /// pending and returns the accumulators' struct `packed`. A tf32 stage
  /// multiplies A from registers, pinned around each group so that no move
  /// of them falls between a wgmma and its wait: none stays in flight, and
  /// the accumulators are pinned after the wait.
  Value waitForWgmmaGroups(Value packed, int64_t inFlight);
  /// The accumulators as that struct, and back.
  Value packAccumulators(ArrayRef<Value> acc);
  SmallVector<Value> unpackAccumulators(Value packed, int64_t count);

  /// The staging of operand A (`isLhs`) or B of `product` in this tile.
  StagedOperand stageOperand(const MmaProduct &product, bool isLhs);
  /// The shared buffer of all stages of `staged`.
  MemRefType getStageBufferType(const StagedOperand &staged);
  /// The block's work on buffers the threads stage (registers or
  /// cp.async): the products' k loops one after the other in the launch's
  /// workgroup buffers, then the epilogue or split-K's partial sums.
  void buildThreadStagedBlock(gpu::LaunchOp launch, Value split, Value tile,
                              const SplitKBuffers &splitBuffers);

  /// TMA (KernelConfig::mmaTma; MmaTmaPipeline.cpp).
  /// Host code before the launch: checks that TMA can copy each operand and
  /// encodes its tensor map.
  LogicalResult prepareTmaOperands(func::FuncOp encodeFn);
  /// The block's work: the stages and mbarriers carved from dynamic shared
  /// memory, the barriers initialized, then the producer warp and the
  /// consumer warpgroups (with the epilogue or split-K's partial sums).
  void buildTmaBlock(Value split, Value tile, SplitKBuffers splitBuffers);
  /// Host code before the launch: the tensor map of `staged`, encoded by the
  /// runtime into a stack slot, as the 128-byte value the launch passes.
  Value encodeTensorMap(const StagedOperand &staged, func::FuncOp encode);
  /// The tensor copies of k tile `kTile` of `staged` into stage `stage`,
  /// completing their bytes on `barrier`: one box of the tile for a K-major
  /// operand, one per 64-element slab for an MN-major one.
  void copyTileTma(const StagedOperand &staged, Value kTile, Value stage,
                   Value barrier);
  /// Makes product `index` (of mma.products, its TMA operands) the one the
  /// builder's helpers stage and multiply.
  void selectTmaProduct(size_t index);
  /// The producer warp: for each k tile of each product in turn, waits until
  /// the consumers released its stage, announces the stage's bytes on its
  /// full barrier and issues the copies (one lane).
  void buildTmaProducer(Value split);
  /// The consumer warpgroups' k loops, one a product: wait for each stage's
  /// full barrier, issue its wgmmas, keep one group in flight, and release
  /// the stage before it on its empty barrier (every thread arrives);
  /// returns each product's final accumulators.
  SmallVector<SmallVector<Value>> buildTmaConsumer(Value split);
  /// What a block does with the products' accumulators: the epilogue and
  /// stores; with split-K, its partial sums, and in the tile's last block to
  /// arrive (arriveAtTile), the sums of all splits through the epilogue.
  /// The epilogue stages the accumulators (prepareEpilogueStaging) in
  /// `stagingRows`, shared memory of its own (getDedicatedStagingBytes),
  /// or else in one of `stages`, buffers the block no longer reads once all
  /// its (consumer) threads have passed `stagesBarrier`.
  void finishResults(ArrayRef<SmallVector<Value>> results, Value split,
                     Value tile, const SplitKBuffers &splitBuffers,
                     Value stagingRows, ArrayRef<Value> stages,
                     function_ref<void()> stagesBarrier);
  /// Split-K: after this block stored its partial sums, whether it is the
  /// last of the `arrivals` blocks of tile `tile` to arrive (true in every
  /// thread of the block or in none), and if so the tile's counter is zero
  /// again (createLastArrival, with createAccumulatorBarrier).
  Value arriveAtTile(Value tile, int64_t arrivals,
                     const SplitKBuffers &splitBuffers);
  /// A barrier of the threads that hold accumulators: the whole block, or
  /// the TMA kernel's consumer warpgroups (tma::createConsumerBarrier).
  void createAccumulatorBarrier();
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
  /// Makes `staged.source` of an operand read with its k loops collapsed
  /// (MmaOperand::collapsedK) the view operandIndices indexes: its trailing
  /// k dimensions as one.
  void collapseKDims(StagedOperand &staged);
  /// Indices into `operand` of the element at (batch, m|n, k) coordinates.
  SmallVector<Value> operandIndices(const StagedOperand &staged, Value rowCoord,
                                    Value kCoord);
  /// The epilogue's loop indices of element (batch, m, n): the result
  /// loops, permuted as the epilogue reads the contraction.
  SmallVector<Value> epilogueCoordinates(Value m, Value n);
  /// The element of a gathered operand at loop indices `coords`, as stored
  /// (a load through its map, or its computation cloned from the
  /// contraction's body).
  Value gatherElement(const MmaOperand &operand, ArrayRef<Value> coords,
                      IRMapping *loaded = nullptr);
  /// The inputs of `operand`'s producer that gatherTile loads 4 elements
  /// at a time along the tile's inner dimension (k of a K-major operand):
  /// those read through a map whose last result is that dimension alone,
  /// from a buffer contiguous along it, in whole 16-byte vectors (an fp8
  /// operand's activation, row-major [M, K]). Empty when the tile's inner
  /// extent is not whole vectors.
  SmallVector<OpOperand *> getVectorLoadedInputs(const StagedOperand &staged);
  static constexpr int64_t kVectorLoadElements = 4;
  /// loadTile for a gathered operand: 8 elements a chunk, read one by one,
  /// rounded, zero outside the operand.
  SmallVector<Value> gatherTile(const StagedOperand &staged, Value kTile);

  /// gatherTile for a chunked gather (MmaOperand::chunkedGather): a chunk's
  /// element computation once, its load one 16-byte load (two for f32) of
  /// the chunk's consecutive elements, what the body does with the loaded
  /// value (the padding's select, a rounding) on the whole chunk.
  SmallVector<Value> gatherChunks(const StagedOperand &staged, Value kTile);
  /// copyTileAsync for a chunked gather of zero-filled chunks
  /// (MmaOperand::zeroFilledChunks): each chunk one cp.async of its stored
  /// bytes, of none (zeros) where the body selects zero.
  void copyChunksAsync(const StagedOperand &staged, Value kTile, Value stage);
  /// Where a chunked gather's chunk `first` of k tile `kTile` lives: its
  /// position in the staged tile, whether it lies inside the operand, the
  /// buffer and indices of its first element, and (computed by the body)
  /// `computation`'s independent ops, cloned at them.
  struct GatheredChunk {
    Value row, chunk, inBounds, source;
    SmallVector<Value> indices;
    IRMapping mapping;
  };
  GatheredChunk locateChunk(const StagedOperand &staged, Value kTile,
                            int64_t first, const ChunkComputation &computation);
  /// locateChunk's buffer, indices and cloned computation for the chunk
  /// whose first element is at loop indices `coords`.
  void locateChunkAt(const MmaOperand &operand, ArrayRef<Value> coords,
                     const ChunkComputation &computation, GatheredChunk &chunk);
  /// The `count` elements of chunked gather `operand` that `chunk` locates,
  /// as the body computes them (its load's elements, then what follows the
  /// load, on the whole vector); not rounded to the staged type.
  Value loadGatheredChunk(const MmaOperand &operand, GatheredChunk &chunk,
                          const ChunkComputation &computation, int64_t count);
  /// `result` of `dependents` (their load's value `element`, the rest of
  /// their operands mapped by `mapping`) on the whole `chunk`: each op on
  /// vectors, operands that do not depend on the element broadcast (a
  /// select's condition stays a scalar).
  Value applyToChunk(const llvm::SetVector<Operation *> &dependents,
                     Value element, Value chunk, const IRMapping &mapping,
                     Value result);
  /// `count` consecutive `stored` elements of `source` from `indices` on
  /// (along its last dimension), with 16-byte loads.
  Value loadStoredChunk(Value source, ArrayRef<Value> indices, Type stored,
                        int64_t count);
  /// The chunk of `operand` (stored elements) at `indices` of `source`,
  /// rounded to the staged type: one 16-byte load, or two of an f32 operand
  /// multiplied in bf16/f16.
  Value loadChunk(const MmaOperand &operand, Value source,
                  ArrayRef<Value> indices, VectorType chunkType);

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
  /// Whether this thread's accumulator `reg` (in the order of the products'
  /// results: fragment (fragM, fragN) of each, 4 elements each) lies in the
  /// m x n result, not in a tile's padding.
  Value isAccumulatorInside(int64_t reg);
  /// The index into the split-K partial sums of accumulator `reg` of this
  /// thread in split `split` of output tile `tile` (fragment order, thread
  /// fastest: coalesced whole-block writes and reads).
  Value getPartialIndex(Value tile, Value split, int64_t reg);
  /// The clamped f32 an fp8 quantizing op rounds to e4m3 (the staging
  /// rounds it with cvt), or null when `element` is not such a rounding.
  Value getE4M3RoundingSource(Value element);
  /// One staged chunk of e4m3 elements from their clamped f32 values
  /// (getE4M3RoundingSource), rounded in pairs by
  /// `cvt.rn.satfinite.e4m3x2.f32`.
  Value packE4M3Chunk(ArrayRef<Value> elements, VectorType chunkType);
  /// An fp8 kernel's scale reductions (MmaContraction::scaleReductions),
  /// before its GEMM launch: per reduction, a one-thread launch zeroes the
  /// 0-d result and a grid of blocks folds max |x| into it, each warp with
  /// one atomic max of the bits (NaN-propagating as the CPU's reduction).
  void buildScaleReductions();
  /// The 0-d buffer of result amax `amax` (MmaContraction::resultAmaxes).
  static Value getAmaxBuffer(const MmaContraction::ResultAmax &amax) {
    return linalg::GenericOp(amax.reduction).getDpsInits()[0];
  }
  /// `locals` (one per result amax) folded with the magnitudes of
  /// `stored`, the values of result r stored together (one element or a
  /// quad), for the amaxes of result r.
  void foldStoredMagnitudes(SmallVectorImpl<Value> &locals, unsigned r,
                            ArrayRef<Value> stored);
  /// The splits' partial sums of tile `tile`, added in split order (the
  /// result does not depend on which block arrived last), per product.
  SmallVector<SmallVector<Value>> sumPartials(Value partials, Value tile);
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
  /// maps, its linalg.index ops replaced by `at`. Within an
  /// ElementInvariants scope, what does not depend on the element (0-d
  /// inputs, such as an fp8 scale's amax, and the pure ops of them) is
  /// loaded and computed once for all the elements of the scope.
  Value cloneElement(linalg::GenericOp op, ArrayRef<Value> at,
                     IRMapping &mapping);
  /// cloneElement for every result of `op` (a multi-result epilogue).
  SmallVector<Value> cloneElementResults(linalg::GenericOp op,
                                         ArrayRef<Value> at,
                                         IRMapping &mapping);
  /// The values cloneElement shares between the elements it clones while
  /// this lives, computed before `anchor` (an op made where the scope
  /// begins, so that they dominate elements cloned in nested blocks, such
  /// as the epilogue's bounds guards).
  struct ElementInvariants {
    explicit ElementInvariants(MmaKernelBuilder &builder)
        : builder(builder), outer(builder.invariants) {
      anchor = arith::ConstantIndexOp::create(builder.b, builder.loc, 0);
      builder.invariants = this;
    }
    ~ElementInvariants() { builder.invariants = outer; }
    MmaKernelBuilder &builder;
    ElementInvariants *outer;
    Operation *anchor;
    IRMapping values;
  };
  ElementInvariants *invariants = nullptr;
  /// The epilogue's results for accumulators `values` of element (m, n),
  /// one per kernel result (the accumulator itself without an epilogue).
  SmallVector<Value> applyEpilogue(ArrayRef<Value> values, Value m, Value n,
                                   const IRMapping *loaded = nullptr);
  /// An input of the epilogue (not a product's result) as the staged
  /// epilogue reads it for a run of consecutive columns.
  struct RunInput {
    OpOperand *input = nullptr;
    /// It reads no m loop (a bias): one load serves every row.
    bool rowInvariant = false;
    /// It is stored along the run (its innermost index is the run's
    /// column, a whole buffer with rows of whole 16-byte runs): vector loads.
    bool contiguous = false;
  };
  SmallVector<RunInput> getRunInputs(int64_t run);
  /// `input`'s `run` elements at (m, n..n+run-1).
  SmallVector<Value> loadRunInput(const RunInput &input, Value m, Value n,
                                  int64_t run);
  /// The position among the epilogue's inputs of the first product's
  /// result (the products' results are read through the same map).
  unsigned getEpilogueInput();
  /// The buffers the kernel's results are stored to, one per result (the
  /// epilogue's, in order, or the product's).
  SmallVector<Value> getResultBuffers();
  /// Where a result computed in `buffer` is stored: the kernel's result
  /// argument that `copy` (MmaContraction::resultCopies) copies it to,
  /// viewed as `buffer` is, or `buffer` itself without a copy.
  Value getStoredBuffer(Value buffer, memref::CopyOp copy);
  /// Stores the accumulators: through epilogueSmem where it is set
  /// (storeStagedResults); otherwise lane pairs exchange halves so that
  /// each lane holds 4 consecutive elements of one row, applies the
  /// epilogue to them and stores them with one vector store.
  void storeResults(ArrayRef<SmallVector<Value>> results);
  /// The elements a lane stores at once after staging the accumulators in
  /// shared memory: 8 where a result is narrower than f32 (16 bytes of
  /// bf16), else 4; 0 where runs are not stored whole (a row extent that
  /// is no multiple of them, a permuting epilogue, a result that is not a
  /// whole buffer with rows of whole 16-byte units) or the warp tile's
  /// width is no multiple of them.
  int64_t getEpilogueRun();
  /// The shared memory the block's warps stage their accumulator rows in,
  /// one mma::AccumulatorStaging per warp and product.
  int64_t getEpilogueStagingBytes();
  /// The staging rows' layout where the epilogue stages (a run, and a
  /// conflict-free layout for the warp tile's width).
  std::optional<mma::StagingLayout> getEpilogueStaging();
  /// The shared memory a kernel adds for the epilogue's staging: where it
  /// stages and neither operand's stages hold the warps' rows (small tiles,
  /// the stages of a short k loop), within the shared memory a block may
  /// have (dynamic for TMA, static otherwise); 0 otherwise.
  int64_t getDedicatedStagingBytes();
  /// The f32 workgroup buffer of `bytes` staging rows of their own take.
  MemRefType getStagingBufferType(int64_t bytes);
  /// Sets epilogueSmem to the first of `candidates` that holds the staged
  /// rows of all warps (a 16- or 32-bit float buffer) and emits `barrier`
  /// (the block's threads are done with it) where the epilogue stages
  /// (getEpilogueRun() > 0); otherwise storeResults exchanges the
  /// accumulators between lanes.
  void prepareEpilogueStaging(ArrayRef<Value> candidates,
                              function_ref<void()> barrier);
  /// storeResults through epilogueSmem: each warp stores a fragment row
  /// (16 rows) of accumulators to its staging rows and reads back runs of
  /// consecutive columns, a row's runs on consecutive lanes; the epilogue
  /// is applied to a run and it is stored with 16-byte stores.
  void storeStagedResults(ArrayRef<SmallVector<Value>> results);
  /// Applies the epilogue to a run of consecutive columns at (m, n)
  /// (elements[i][p]: element i, product p; `loaded[i]`, where given, the
  /// inputs read for element i) and stores each result's run in vectors of
  /// at most 16 bytes, folding their magnitudes into `locals`.
  void storeEpilogueRun(ArrayRef<SmallVector<Value>> elements, Value m, Value n,
                        ArrayRef<IRMapping> loaded, ArrayRef<Value> buffers,
                        SmallVectorImpl<Value> &locals);
  /// Where the epilogue stages accumulators, or null.
  Value epilogueSmem;

  MmaContraction mma;
  /// The product whose k loop is being built.
  const MmaProduct *product = nullptr;
  // The tensor-core tile (zero on the GEMV path).
  int64_t tileM = 0, tileN = 0, tileK = 0, warpsM = 0, warpsN = 0;
  int64_t warpTileM = 0, warpTileN = 0, fragsM = 0, fragsN = 0, threads = 0;
  int64_t stages = 0, gemvWarps = 0, splitK = 1, gemvSplitK = 1,
          gemvRowsPerWarp = 1;
  bool wgmma = false, tma = false;
  /// TMA: the stages' full and empty mbarriers.
  tma::StageBarriers barriers;
  unsigned numBatch;

  StagedOperand lhs, rhs;
  /// TMA: each product's operands and their tensor maps.
  struct TmaOperands {
    StagedOperand lhs, rhs;
  };
  SmallVector<TmaOperands, 3> tmaOperands;
  Value tid, lane, warpM, warpN;
  Value mBase, nBase;
  /// The current product's k tiles for this block: the first, and how many.
  Value kFirst, kCount;
  /// Static bound of kCount (the prologue's guards fold when it is exact).
  int64_t kCountBound = 0;
  bool kCountExact = true;
  SmallVector<Value> batchIndices;
};

} // namespace mlir::ridge

#endif // RIDGELINE_LIB_CODEGEN_MMAKERNELBUILDER_H
