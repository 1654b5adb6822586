//===- PrecisionPolicy.h - Number format of each contraction ----*- C++ -*-===//
//
// The control function of ridge-select-precision (the pass is the
// mechanism, as FusionPolicy.cpp is to ridge-form-fusion-groups): given a
// contraction of the ridge graph (ridge.matmul, ridge.gemm, ridge.conv) and
// the target, decide the number format its f32 operands are rounded to
// before they are multiplied. The rule (docs/precision.md):
//
//  * operands that are not f32 keep their type (f16/bf16 models, integer
//    contractions);
//  * `numerics` fp32 (the CPU's default, or `--precision=fp32`): fp32;
//  * otherwise the requested format only where it shortens the predicted
//    time: the contraction is compute-bound on the fp32 SIMT roofline of
//    the target GPU (FLOPs / fp32 peak > bytes / bandwidth) and every GEMM
//    dimension (M, N, K) is at least 16, one tensor-core tile; or its f32
//    weights, stored in the narrow format once rounded, cut at least a
//    fifth of its time, its bytes taking a microsecond or more at full
//    bandwidth (then M or N may be under 16: a decode step's projection,
//    read by the bandwidth path). A memory-bound contraction of
//    activations only stays fp32: rounding it adds error and saves no
//    time, since its operands stay fp32 in memory;
//  * a memory-bound contraction fused into one kernel with a rounded one
//    takes its format (the kernel's products share its tensor cores);
//  * fp8 (e4m3 with per-tensor power-of-two scales) for MatMul and Gemm
//    only; a convolution or attention asked for fp8 is rounded to bf16.
//
// The decision depends on the GPU model and the requested numerics only, so
// a CPU build with `--precision=bf16` rounds exactly the contractions that
// the GPU build with the same `--gpu` rounds.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_PRECISIONPOLICY_H
#define RIDGELINE_ANALYSIS_PRECISIONPOLICY_H

#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace mlir::ridge {

/// The smallest M, N and K a contraction needs to be given a tensor-core
/// format: one mma tile (m16n8k16 for bf16/fp16) along each dimension.
inline constexpr int64_t kMinTensorCoreDim = 16;

/// The most rows (M) or columns (N) of a contraction that takes the
/// bandwidth path (a GEMV: 16-byte loads of the large operand, f32 FMA;
/// ridge-select-kernel-config) instead of tensor-core tiles, in f32 and in
/// the f16/bf16 it is stored in: each element of the large operand (the
/// weight, or A's rows when N is the short side) is used at most this many
/// times, so what sets its time is that operand's bytes.
inline constexpr int64_t kMaxBandwidthPathRows = 16;

/// The most FLOPs per byte of its large operand a skinny contraction does
/// on the bandwidth path, whose FMAs run on SIMT in f32: under the fp32
/// SIMT ridge point of every GPU in the table (B200's 9.4 and A100's 9.6
/// the lowest), with room for the loads, conversions and shuffles issued
/// beside the FMAs.
inline constexpr int64_t kMaxBandwidthPathIntensity = 8;

/// Whether a contraction whose short side (M, or N) is `shortSide`, its
/// operands stored in `elementBytes` bytes each, is skinny enough for the
/// bandwidth path: at most kMaxBandwidthPathRows, and at most
/// kMaxBandwidthPathIntensity FLOPs (2 * shortSide / elementBytes) per byte
/// of the large operand. f32 up to 16, f16/bf16 up to 8.
inline bool isBandwidthPathSide(int64_t shortSide, int64_t elementBytes) {
  return shortSide <= kMaxBandwidthPathRows &&
         2 * shortSide <= kMaxBandwidthPathIntensity * elementBytes;
}

/// Why a contraction got its format; one Statistic each in
/// ridge-select-precision.
enum class PrecisionReason {
  /// Compute-bound on the fp32 roofline: rounded to the requested format.
  Rounded,
  /// fp32 requested (`--precision=fp32`, or the CPU's default numerics).
  Fp32Requested,
  /// An operand is not f32 (f16, bf16, integer): the types stay.
  NotF32,
  /// A dynamic shape: no cost to decide by.
  UnknownShape,
  /// M, N or K below kMinTensorCoreDim.
  TooSmall,
  /// Memory-bound on the fp32 roofline: rounding saves no time.
  MemoryBound,
  /// Memory-bound on the fp32 roofline, but rounded: its f32 weights are
  /// then stored in the narrow format (getCompileTimeWeightType), which
  /// shortens the memory term (a layer's projection of a few dozen rows).
  NarrowedWeights,
  /// Memory-bound, but in one fusion group with a rounded contraction (a
  /// residual block's 1x1 downsampling convolution beside its 3x3 one):
  /// rounded to the same format, since one product in fp32 would keep the
  /// whole kernel off the tensor cores.
  FusedWithRounded,
  /// An attention asked for a format its kernels do not multiply in (tf32,
  /// fp8; they take bf16/fp16 or f32): fp32.
  NoAttentionFormat,
  /// fp8 requested for a convolution or an attention, whose kernels take no
  /// per-tensor scales: compute-bound, so rounded to bf16 instead.
  Fp8Fallback,
};

struct PrecisionDecision {
  /// The format the f32 operands are rounded to; nullopt: none (operands
  /// are multiplied in their own type).
  std::optional<Precision> roundTo;
  PrecisionReason reason = PrecisionReason::Fp32Requested;
  /// One line for LLVM_DEBUG and remarks.
  std::string explanation;
};

/// The GEMM view of a contraction: M x N outputs per batch, K terms each.
/// A convolution is its implicit GEMM: M output channels per group, N
/// output pixels (batch included), K input channels per group times the
/// kernel window.
struct ContractionShape {
  int64_t m = 0, n = 0, k = 0;
};

/// Whether the policy decides for `op`: ridge.matmul, ridge.gemm, ridge.conv,
/// and a ridge.attention computed online (AttentionOp::isOnlineSoftmaxForm),
/// whose Q, K, V and probabilities are then rounded as its tensor-core
/// kernel multiplies them (docs/attention.md).
bool isPrecisionCandidate(Operation *op);

/// The float type the MatMul, Gemm or Conv `op` multiplies on tensor
/// cores: the format ridge.precision rounds its operands to (bf16, f16,
/// tf32, f8E4M3FN), or its first operand's 16-bit storage type (a bf16 or
/// f16 model); null when it runs on the SIMT path.
Type getTensorCoreMultiplyType(Operation *op);

/// The GEMM view of a candidate; nullopt for a dynamic shape.
std::optional<ContractionShape> getContractionShape(Operation *op);

/// The type in which the compiled model stores `operand`, a multiplied
/// operand of the MatMul, Gemm or Conv `op`: bf16 or f16 when an f32
/// ridge.constant (a weight) defines it and `op` rounds its operands to that
/// format (kPrecisionAttr "bf16" or "fp16"); a null type when the operand is
/// stored as it is. The graph-to-linalg lowering rounds such a weight once,
/// at compile time, to nearest even as the contraction's body would round
/// it at run time (arith.truncf), so the products are the same and the
/// kernel reads 2 bytes an element instead of 4. tf32 has no storage type
/// (LLVM has none), and fp8's weights are quantized with their scales by
/// buildFp8Contraction.
Type getCompileTimeWeightType(Operation *op, Value operand);

/// Whether `operand`, a multiplied operand of the MatMul, Gemm or Conv
/// `op` that the precision policy rounds to tf32, is an f32 weight that the
/// compiled model stores rounded to tf32 (still as f32: the same bytes). The
/// body's rounding of it at run time is then exact, so a kernel may multiply
/// it as it is stored: sm_90a's wgmma reads its operands from shared memory
/// and ignores the 13 low mantissa bits instead of rounding them, and
/// cp.async and TMA copy bytes. The graph-to-linalg lowering rounds it as
/// the body would (to nearest, ties away from zero: `cvt.rna.tf32.f32`) and
/// stores a MatMul's or Gemm's B K-major, the only layout in which wgmma
/// reads tf32.
bool isCompileTimeTf32Weight(Operation *op, Value operand);

/// The bytes the MatMul, Gemm or Conv `op` saves when rounded to `format`:
/// bf16 and fp16 store its f32 weights (the operands getCompileTimeWeightType
/// narrows) in 2 bytes an element instead of 4. 0 for other formats: tf32
/// has no storage type, and fp8's weights come with its scale passes
/// (getPrecisionTrafficAdjustment prices both).
int64_t getNarrowedWeightBytes(Operation *op, Precision format);

/// The type a kernel stores its result `result` in: bf16 or f16 when
/// `result` is an f32 result of a ridge.fusion_group (a pointwise,
/// reduction or contraction kernel, or the output of an attention that
/// rounds its products to that format) that only rounded contractions read,
/// each as a multiplied operand (a MatMul's, Gemm's or Conv's first two, or an
/// attention's Q, K or V, in a kernel of their own, directly or through that
/// kernel's reshapes, transposes and slices: an attention's head split) in that
/// format; a null type otherwise. Each reader would round the tensor to that
/// format before multiplying it, so storing it rounded (once, as the producer
/// writes it) gives the same products and halves the bytes written and read
/// across the kernel boundary (ridge-narrow-kernel-boundaries;
/// docs/precision.md).
Type getKernelBoundaryType(OpResult result);

/// The type of a narrow copy of the f32 result `result` that its kernel
/// stores beside it, and in `roundedUses` the uses that read the copy
/// instead: bf16 or f16 when getKernelBoundaryType keeps `result` f32
/// because some readers need its f32 values (a residual add, a graph
/// output) while others, in kernels of their own, round it to that one
/// format to multiply it (post-LN BERT's LayerNorm output feeds the next
/// projection and the residual after it). The producer (a pointwise,
/// reduction or contraction kernel) writes the copy's bytes once; each
/// rounded reader reads half the bytes, with the same products, and copies
/// its tiles as stored (cp.async, TMA) rather than converting them in
/// registers. A null type when no use rounds, when every use does
/// (getKernelBoundaryType's case), when uses round it to two formats, or
/// when a kernel reads the tensor both ways (it would read more bytes, not
/// fewer).
Type getKernelBoundaryCopyType(OpResult result,
                               SmallVectorImpl<OpOperand *> &roundedUses);

/// The decision for the candidate `op` on `target` (its GPU and numerics);
/// `model` is the target's roofline (its GPU's fp32 peak and bandwidth
/// place the contraction).
PrecisionDecision selectContractionPrecision(Operation *op,
                                             const TargetSpec &target,
                                             const RooflineModel &model);

/// The decisions for every candidate under `root`, in walk order:
/// selectContractionPrecision for each, then, inside each ridge.fusion_group
/// that rounds one of its MatMul/Gemm/Conv to a format, that format for the
/// group's other MatMul/Gemm/Conv that are only memory-bound
/// (PrecisionReason::FusedWithRounded): products of one kernel share its
/// tensor cores, and an fp32 one would put the kernel on SIMT.
SmallVector<std::pair<Operation *, PrecisionDecision>>
selectPrecisions(Operation *root, const TargetSpec &target,
                 const RooflineModel &model);

/// Candidates of `root` that `selectPrecisions` rounds (a tool's summary:
/// ridge-run widens its comparison for them).
unsigned countRoundedContractions(Operation *root, const TargetSpec &target,
                                  const RooflineModel &model);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_PRECISIONPOLICY_H
