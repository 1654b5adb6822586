//===- KernelConfig.h - How one kernel is tiled and mapped ------*- C++ -*-===//
//
// The GPU mapping of each kernel is decided once, by
// `ridge-select-kernel-config`, from the module's `ridge.target` and the
// kernel's fused body, and recorded as its `ridge.kernel_config`; the passes
// that build and map the loop nest (TileKernelBodies tiles by it,
// KernelsToParallelLoops carries it, MapRowLoopsToWarps and
// MapParallelLoopsToGpu obey it), as IREE's lowering passes obey the
// strategy `LLVMGPUSelectLoweringStrategy` chose. The decision function
// (selectKernelConfig) is the policy; docs/kernel-config.md states it.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_KERNELCONFIG_H
#define RIDGELINE_CODEGEN_KERNELCONFIG_H

#include "ridgeline/Analysis/Target.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "llvm/ADT/SmallBitVector.h"

#include <optional>

namespace mlir::ridge {

/// Attribute holding a kernel's configuration: on the kernel function, then
/// on the loop nest that implements it (the scf.forall of a tiled kernel, the
/// linalg op of a single-op kernel, then the scf.parallel they become).
inline constexpr llvm::StringLiteral kKernelConfigAttr = "ridge.kernel_config";
/// Marks the `max |x|` of a row kernel's result that
/// ridge-move-scale-reductions-to-producers added to the kernel (an fp8
/// consumer's scale), for ridge-fold-result-amax-into-row-loops to fold
/// into the row loop.
inline constexpr llvm::StringLiteral kResultAmaxAttr = "ridge.result_amax";

struct KernelConfig {
  /// Tile size per loop of the kernel's sink op (the op producing its
  /// result); 0 keeps a loop whole. Empty: the kernel is not tiled (one op,
  /// or operand slices that do not follow from a tile).
  SmallVector<int64_t> tileSizes;
  /// Rows (warps) per thread block of a row kernel.
  int64_t warpsPerBlock = 8;
  /// Warps that share one row of a row kernel: 1, or (rows much longer than
  /// a warp, too few to give every SM one) the block's warpsPerBlock, its
  /// threads striding the row together and each reduction combined across
  /// the warps in shared memory (ridge-map-row-loops-to-warps).
  int64_t rowWarps = 1;
  /// Elements a lane owns per step of a row loop: 4 (16-byte accesses where
  /// aligned) or 1.
  int64_t vectorWidth = 4;
  /// Threads per block of an elementwise loop nest.
  int64_t blockSize = 256;
  /// Tensor-core kernels (ridge-lower-mma-contractions): the block tile
  /// {m, n, k} and the warps along {m, n} that split it. Empty: the kernel
  /// is not built on tensor cores.
  SmallVector<int64_t> mmaTile;
  SmallVector<int64_t> mmaWarps;
  /// Shared-memory stages of the tensor-core pipeline: 2 stages staged
  /// through registers (operands converted on the way), 3 or 4 filled by
  /// cp.async (operands already in the multiply type).
  int64_t mmaStages = 0;
  /// Blocks that split the k loop of one output tile (split-K): each
  /// accumulates its share of the k tiles and writes its partial sums, and
  /// the last of them to finish adds the splits in order and applies the
  /// epilogue. 1: no split.
  int64_t mmaSplitK = 1;
  /// The tensor-core instruction: warp-level `mma.sync` (sm_80 and later)
  /// or warpgroup-level `wgmma` (sm_90a; one warpgroup per 64 rows of the
  /// tile, k steps of 32 in 64-byte-swizzled shared memory). The attention
  /// kernel's products too (`mma_instruction` beside `attention_tile`).
  bool wgmma = false;
  /// sm_90a's operand pipeline (with `wgmma`): a producer warp beside the
  /// consumer warpgroups loads each k tile of A and B (k tiles of 64: rows
  /// of 128 bytes in the 128-byte swizzle) with TMA tensor copies into
  /// `mmaStages` stages of dynamic shared memory, whose full and empty
  /// mbarriers order it with the consumers' wgmmas (warp specialization).
  /// The operands must be whole row-major tensors in the multiply type
  /// (getMmaTmaLayout).
  bool mmaTma = false;
  /// The bandwidth path of a skinny contraction (m at most 16: a decode
  /// step, a classifier): one warp per output column, its lanes splitting k
  /// in 16-byte loads, a shuffle reduction (ridge-lower-mma-contractions).
  bool gemv = false;
  /// The bandwidth path over an n-contiguous weight, or tall and skinny:
  /// shares of k, each a warp's, whose partial sums the last block of
  /// their outputs adds. 1: no split.
  int64_t gemvSplitK = 1;
  /// The tall-skinny bandwidth path (GemvForm::TallSkinny): rows of A a
  /// warp computes, each B element it loads used that many times. 1 to 4.
  int64_t gemvRowsPerWarp = 1;
  /// The tensor-core attention kernel (ridge-lower-flash-attention): query
  /// rows and keys per tile, {64, 64}: four warps of 16 query rows each,
  /// walking the keys in tiles staged in shared memory. Empty: an attention
  /// runs its online loop on SIMT, one query row per thread.
  SmallVector<int64_t> attentionTile;
  /// Shared-memory stages of the key and value tiles: 2 (the next tile's
  /// loads in flight during the current tile's products) or 1.
  int64_t attentionStages = 0;
  /// sm_90a's key and value pipeline (with `wgmma`): a producer warp beside
  /// the consumer warpgroup copies each key tile's K and V with TMA tensor
  /// copies (64-byte-swizzled boxes, the layout the wgmma descriptors read)
  /// into `attentionStages` stages of dynamic shared memory, ordered with
  /// the consumers by a full and an empty mbarrier per stage, as
  /// FlashAttention-3 does; K and V must be stored in the multiply type as
  /// views a tensor map describes (whyNotAttentionTma). The producer copies
  /// the query tile too where it is stored so.
  bool attentionTma = false;
  /// Blocks that split the keys of one query tile (flash-decoding): each
  /// writes its rows' partial maximum, sum and unnormalized O, and the last
  /// of them to finish combines them. 1: no split.
  int64_t attentionSplits = 1;
  /// The f32 decode kernel (ridge-lower-flash-attention): a block of 4 warps
  /// per query row, attentionDecodeHeads query heads and key split, warps
  /// taking keys in turn, lanes the head dimension, the splits combined by
  /// the last of a row's blocks to finish.
  bool attentionDecode = false;
  /// Keys each warp of the decode kernel loads (K and V rows) before it
  /// uses the first: the bytes a warp keeps in flight.
  int64_t attentionDecodeKeys = 1;
  /// Query heads of one key head (GQA) each block of the decode kernel
  /// computes from the keys it loads once: a divisor of the group.
  int64_t attentionDecodeHeads = 1;

  bool usesTensorCores() const { return !mmaTile.empty(); }
  bool usesFlashAttention() const { return !attentionTile.empty(); }
  /// Whether ridge-lower-flash-attention builds the kernel.
  bool usesAttentionKernel() const {
    return usesFlashAttention() || attentionDecode;
  }
  /// Whether ridge-lower-mma-contractions builds the kernel.
  bool usesDedicatedKernel() const { return usesTensorCores() || gemv; }

  DictionaryAttr toAttr(MLIRContext *context) const;
  /// Reads a `ridge.kernel_config`; `error` names a missing or out-of-range
  /// field.
  static FailureOr<KernelConfig> fromAttr(DictionaryAttr attr,
                                          std::string &error);
};

/// The config `op` carries, if any. A malformed one is reported at `op`
/// and fails.
FailureOr<std::optional<KernelConfig>> getKernelConfig(Operation *op);

/// The op a kernel's loop nest is built around: the last tileable op whose
/// result the kernel returns, when the kernel has more than one tileable op.
TilingInterface getKernelSink(func::FuncOp kernel);

/// The kOnlineAttentionAttr of an attention kernel: the function's (once
/// ridge-select-kernel-config moved it there) or its scf.forall's; null
/// when it has none.
DictionaryAttr getOnlineAttentionAttr(func::FuncOp kernel);

/// Whether `value` leaves the kernel function (directly or through a cast).
bool isKernelResult(Value value);

/// Loop dimensions of `sink` along which a reduction's result is broadcast:
/// the row of a softmax or a norm, kept whole inside one iteration.
llvm::SmallBitVector getRowDims(linalg::LinalgOp sink);

struct MmaContraction;

/// The bandwidth path's forms (KernelConfig::gemv): skinny contractions,
/// memory-bound by their shape, built without tensor cores.
enum class GemvForm {
  /// m at most 16, the weight stored k-contiguous ([N, K], a Gemm with
  /// transB): one warp per output column, its lanes splitting k.
  KContiguousWeight,
  /// m at most 16, the weight stored n-contiguous ([K, N], a MatMul's):
  /// lanes own the columns of 16 bytes, warps shares of k.
  NContiguousWeight,
  /// n at most 16 below a larger m (a router's expert logits, a low-rank
  /// adapter's down projection): one warp per row of A ([M, K] read
  /// k-contiguous, the operand that sets the time), all n columns of it.
  TallSkinny,
};

/// The bandwidth path `mma` takes, or none: one product whose operands are
/// f32, or f16/bf16 multiplied as stored, of the shapes and layouts above.
/// ridge-select-kernel-config decides by it and ridge-lower-mma-contractions
/// builds what it says.
std::optional<GemvForm> getGemvForm(const MmaContraction &mma);

/// Weight rows a warp of the column GEMV (an n-contiguous weight, `m`
/// activation rows) loads before it uses the first: its bytes in flight,
/// 512 a row. Each costs a lane 4 registers of weight and `m` of
/// activations, 64 at most; 8 rows at most. The policy prices shares of k
/// by it and ridge-lower-mma-contractions loads that many.
int64_t getGemvColumnRowsInFlight(int64_t m);

/// 16-byte pieces of A a lane of the tall-skinny GEMV (GemvForm::TallSkinny)
/// loads before its first fma, over its `rowsPerWarp` rows, when its share
/// of k is `kPerShare` elements of `piece` a piece: 4 in all (2 KiB a warp),
/// fewer when the share is shorter. The policy prices shares of k by it and
/// ridge-lower-mma-contractions loads that many.
int64_t getTallSkinnyPiecesInFlight(int64_t rowsPerWarp, int64_t kPerShare,
                                    int64_t piece);

/// Warps per block of a row kernel with `rows` rows: enough blocks to give
/// every one of `smCount` SMs one before blocks grow past a warp, at most
/// `maxWarps`.
int64_t selectWarpsPerBlock(int64_t rows, int64_t smCount,
                            int64_t maxWarps = 8);

/// Whether every operand slice of the kernel's linalg ops follows from a tile
/// of its loops (indices that are non-negative combinations of loops).
bool hasTileableIndexing(func::FuncOp kernel);

/// Whether a linalg op of the kernel has a loop of zero iterations (a
/// reduction over an empty axis). Such a kernel is not tiled: upstream
/// tile-and-fuse cannot slice an empty dimension, and its loops do nothing.
bool hasEmptyLoop(func::FuncOp kernel);

/// The row rule: tile every parallel loop of `sink` by one except its row
/// dimensions (getRowDims), which stay whole (0), as do reductions.
SmallVector<int64_t> selectTileSizes(TilingInterface sink);

/// The tensor-core block tile {m, n, k} and warps {m, n} for a contraction of
/// `batch` x m x n x k on `target` (the shape policy; docs/kernel-config.md):
/// the largest of 128x128 (8 warps), 64x64 and 32x32 (4 warps) that still
/// gives every SM a block, else the smallest; k tiles of 64 bytes of staged
/// elements (32 of bf16/f16, 16 of tf32's f32, 64 of e4m3). `asyncCopies`:
/// the operands are stored as they are staged, so cp.async can fill the
/// stages (3, or 4 where the static shared memory allows), else 2.
/// `mmaType`: what the tensor cores multiply. sm_90a multiplies with wgmma
/// when `wgmmaOperands` (whyNotWgmmaOperands: always for bf16, f16 and e4m3,
/// for tf32 when B is a K-major tf32 constant), otherwise, and on sm_80,
/// with mma.sync (m16n8k8 for tf32).
void selectMmaTile(int64_t batch, int64_t m, int64_t n, int64_t k,
                   bool asyncCopies, FloatType mmaType, bool wgmmaOperands,
                   const TargetSpec &target, KernelConfig &config);

/// Warps per row of a row kernel (KernelConfig::rowWarps) of `rows` rows of
/// `rowElements` elements on a GPU of `smCount` SMs: 1 when the rows give
/// every SM a warp; otherwise as many as keep at least kRowElementsPerWarp
/// elements a warp (a warp's 8 steps of 4 x 32), at most 8.
int64_t selectRowWarps(int64_t rows, int64_t rowElements, int64_t smCount);

/// Shared-memory stages of a TMA-fed kernel (KernelConfig::mmaTma) with
/// `kTiles` k tiles (of 64): 4 (the k tiles that hide a global load's
/// latency behind the wgmmas of the tiles before it), fewer for shorter k
/// loops, at least 2.
int64_t selectTmaStages(int64_t kTiles);

/// Bytes of dynamic shared memory a TMA-fed kernel's launch asks for:
/// `stages` tiles of A and B (`tileM` and `tileN` rows of one 128-byte
/// swizzle row of k each: 64 bf16/f16 elements, or 32 of tf32's f32), a
/// full and an empty mbarrier per stage, and a kilobyte to align the
/// buffers on the 128-byte swizzle's atom.
int64_t getTmaSharedMemoryBytes(int64_t tileM, int64_t tileN, int64_t stages);

/// Static shared memory of a kernel staged through workgroup buffers:
/// `stages` tiles of A and B (counted at 2 bytes an element: the config does
/// not know the operands; the lowering checks tf32's 4), and split-K's
/// arrival verdict.
int64_t getStaticSharedMemoryBytes(int64_t tileM, int64_t tileN, int64_t tileK,
                                   int64_t stages, int64_t splitK);

/// The dynamic shared memory an sm_90a block may opt in to (227 KiB): the
/// bound of the TMA kernels' (the GEMM's stages, the attention's).
inline constexpr int64_t kMaxTmaSharedMemoryBytes = 227 * 1024;
/// The static shared memory a block may have (48 KiB): the bound of the
/// kernels that stage in workgroup buffers.
inline constexpr int64_t kMaxStaticSharedMemoryBytes = 48 * 1024;
/// The shared memory a split-K block takes beside its stages: one i32, the
/// verdict of its arrival at its tile's counter (last or not) that thread 0
/// tells the others.
inline constexpr int64_t kSplitKArrivalBytes = 4;

/// The k tile of a TMA-fed kernel whose operands are staged in elements of
/// `stagedBytes` bytes: one 128-byte swizzle row (64 of bf16/f16, 32 of
/// tf32's f32).
int64_t getTmaTileK(int64_t stagedBytes);

/// Split-K of a tensor-core kernel with `blocks` output tiles of
/// `tileElements` accumulators each (batch and products included) and
/// `kTiles` k tiles (summed over its products): the split S in [1, 16]
/// that minimizes the k steps on the critical path,
/// waves x ceil(kTiles / S) with waves = ceil(blocks x S / smCount), plus
/// kSplitKTailSteps for the last block's sums when S > 1. Each split keeps at
/// least kMinKTilesPerSplit k tiles, and the partial sums written and read
/// (2 x S x blocks x tileElements) may not outnumber `operandElements`, the
/// GEMM's operands (batch x (m + n) x k). Ties go to the smaller S.
int64_t selectSplitK(int64_t blocks, int64_t tileElements, int64_t kTiles,
                     int64_t operandElements, int64_t smCount);

/// The decision (policy), on a kernel after ridge-fuse-kernel-bodies (its
/// producers fused, not yet tiled): tile sizes by the row rule for a kernel
/// of several tileable ops; as many warps per block (up to 8) as leave one
/// block per SM of the target (rows: the tiles, or an untiled kernel's
/// parallel iterations); the 4-wide lane layout for kernels that move 32-bit
/// data (the mapping checks that each row loop fits and each buffer is
/// aligned); 256 threads per block for elementwise nests.
KernelConfig selectKernelConfig(func::FuncOp kernel, const TargetSpec &target);

} // namespace mlir::ridge

#endif // RIDGELINE_CODEGEN_KERNELCONFIG_H
