//===- PrecisionPolicy.cpp - Number format of each contraction ------------===//
//
// The policy half of ridge-select-precision: whether rounding a
// contraction's f32 operands to the requested tensor-core format pays, from
// the fp32 roofline of the target GPU.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Analysis/FusionPlan.h"
#include "ridgeline/Dialect/Ridge/IR/ConstantElements.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ridge;

bool mlir::ridge::isPrecisionCandidate(Operation *op) {
  if (auto attention = dyn_cast<AttentionOp>(op))
    return attention.isOnlineSoftmaxForm();
  return isa<MatMulOp, GemmOp, ConvOp>(op);
}

/// The multiplied operands of a candidate (not Gemm's or Conv's bias; an
/// attention's Q, K and V).
static SmallVector<Value, 3> getMultipliedOperands(Operation *op) {
  if (auto attention = dyn_cast<AttentionOp>(op))
    return {attention.getQuery(), attention.getKey(), attention.getValue()};
  if (auto matmul = dyn_cast<MatMulOp>(op))
    return {matmul.getLhs(), matmul.getRhs()};
  if (auto gemm = dyn_cast<GemmOp>(op))
    return {gemm.getA(), gemm.getB()};
  auto conv = cast<ConvOp>(op);
  return {conv.getInput(), conv.getWeight()};
}

/// Whether `operand` is a weight the lowering can store narrow: a static
/// f32 ridge.constant whose elements are at hand (not an unloaded
/// resource).
static bool isNarrowableWeight(Value operand) {
  auto type = dyn_cast<RankedTensorType>(operand.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32() &&
         operand.getDefiningOp<ConstantOp>() &&
         getConstantElements(operand).has_value();
}

/// The storage type of `op`'s rounded operands: bf16 or f16 for a
/// kPrecisionAttr of "bf16" or "fp16"; null for none, fp32, tf32 (no
/// storage type) and fp8 (stored with its scales).
static Type getRoundedStorageType(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr);
  if (!attr)
    return Type();
  MLIRContext *ctx = op->getContext();
  if (attr.getValue() == "bf16")
    return BFloat16Type::get(ctx);
  if (attr.getValue() == "fp16")
    return Float16Type::get(ctx);
  return Type();
}

Type mlir::ridge::getTensorCoreMultiplyType(Operation *op) {
  MLIRContext *ctx = op->getContext();
  if (auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr)) {
    return llvm::StringSwitch<Type>(attr.getValue())
        .Case("bf16", BFloat16Type::get(ctx))
        .Case("fp16", Float16Type::get(ctx))
        .Case("tf32", FloatTF32Type::get(ctx))
        .Case("fp8", Float8E4M3FNType::get(ctx))
        .Default(Type());
  }
  Type element = getElementTypeOrSelf(op->getOperand(0).getType());
  return element.isBF16() || element.isF16() ? element : Type();
}

Type mlir::ridge::getCompileTimeWeightType(Operation *op, Value operand) {
  if (!isa<MatMulOp, GemmOp, ConvOp>(op) ||
      !llvm::is_contained(getMultipliedOperands(op), operand) ||
      !isNarrowableWeight(operand))
    return Type();
  return getRoundedStorageType(op);
}

bool mlir::ridge::isCompileTimeTf32Weight(Operation *op, Value operand) {
  auto attr = op->getAttrOfType<StringAttr>(kPrecisionAttr);
  return attr && attr.getValue() == "tf32" &&
         isa<MatMulOp, GemmOp, ConvOp>(op) &&
         llvm::is_contained(getMultipliedOperands(op), operand) &&
         isNarrowableWeight(operand);
}

static bool isOnlyRoundedByReaders(Value value, Type &format);

/// Whether `use` rounds its value to one format before multiplying it (that
/// format into `format`), as isOnlyRoundedByReaders asks of every use.
static bool isRoundedUse(OpOperand &use, Type &format) {
  Operation *user = use.getOwner();
  // A reshape between kernels is a view of the stored tensor, whatever
  // its element type (bert_tiny's attention output, [1, H, L, d] viewed
  // as [H, L, d] before its head merge).
  bool inKernel = user->getParentOfType<FusionGroupOp>() != nullptr;
  if (!inKernel && !isa<ReshapeOp>(user))
    return false;
  if (isa<ReshapeOp, TransposeOp, SliceOp>(user))
    return isOnlyRoundedByReaders(user->getResult(0), format);
  bool multiplied =
      (isa<MatMulOp, GemmOp, ConvOp>(user) && use.getOperandNumber() <= 1) ||
      (isa<AttentionOp>(user) && use.getOperandNumber() <= 2);
  Type stored = getRoundedStorageType(user);
  if (!multiplied || !stored || (format && stored != format))
    return false;
  format = stored;
  return true;
}

/// Whether every reader of `value` rounds it to one format before
/// multiplying it (that format into `format`): a MatMul's, Gemm's or Conv's
/// multiplied operand, or an attention's Q, K or V, rounded by its
/// kPrecisionAttr, in a kernel (fusion group), reached directly or through
/// the layout changes that kernel applies to it (reshape, transpose, slice:
/// an attention's head split) and the reshapes between kernels. Any other
/// reader (a rotary embedding, a graph output, an op that computes with it)
/// needs the f32 values.
static bool isOnlyRoundedByReaders(Value value, Type &format) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    return isRoundedUse(use, format);
  });
}

Type mlir::ridge::getKernelBoundaryType(OpResult result) {
  auto group = dyn_cast<FusionGroupOp>(result.getOwner());
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!group || !type || !type.hasStaticShape() ||
      !type.getElementType().isF32() || result.use_empty())
    return Type();
  // An attention that rounds its products to bf16/f16 stores its result
  // with the rounding of its last store (ridge-lower-flash-attention writes
  // O in its result buffer's type, as for a bf16 model), in the same format
  // only; its other results (KV-cache concatenations) are copies and stay
  // as they are.
  Type attentionFormat;
  if (group.getKind() == "attention") {
    Value yielded = group.getBody().front().getTerminator()->getOperand(
        result.getResultNumber());
    auto attention = yielded.getDefiningOp<AttentionOp>();
    // Only the tiled and decode kernels store the result themselves: the
    // online SIMT loop that computes the others writes f32, and rounding
    // it would take a launch and a buffer of its own.
    if (!attention || yielded != attention.getResult() ||
        !(isTiledAttention(attention) || isDecodeAttention(attention)))
      return Type();
    attentionFormat = getRoundedStorageType(attention);
    if (!attentionFormat)
      return Type();
  }
  Type format;
  if (!isOnlyRoundedByReaders(result, format) ||
      (attentionFormat && format != attentionFormat))
    return Type();
  return format;
}

/// The kernels (fusion groups) that read the tensor through `use`: its
/// owner's, or those reading a reshape between kernels; none for a return.
static void collectReadingKernels(OpOperand &use,
                                  llvm::SmallPtrSetImpl<Operation *> &kernels) {
  Operation *user = use.getOwner();
  if (auto kernel = user->getParentOfType<FusionGroupOp>()) {
    kernels.insert(kernel);
    return;
  }
  if (isa<ReshapeOp>(user))
    for (OpOperand &viewUse : user->getResult(0).getUses())
      collectReadingKernels(viewUse, kernels);
}

Type mlir::ridge::getKernelBoundaryCopyType(
    OpResult result, SmallVectorImpl<OpOperand *> &roundedUses) {
  roundedUses.clear();
  auto group = dyn_cast<FusionGroupOp>(result.getOwner());
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!group || !type || !type.hasStaticShape() ||
      !type.getElementType().isF32() ||
      !llvm::is_contained({"pointwise", "reduction", "contraction"},
                          group.getKind()) ||
      getKernelBoundaryType(result))
    return Type();
  // The uses that round the tensor to one format, and the kernels that read
  // it as it is.
  Type format;
  SmallVector<OpOperand *> rounded;
  llvm::SmallPtrSet<Operation *, 4> roundingReaders, wideReaders;
  bool readAsIs = false;
  for (OpOperand &use : result.getUses()) {
    Type useFormat;
    if (!isRoundedUse(use, useFormat)) {
      readAsIs = true;
      collectReadingKernels(use, wideReaders);
      continue;
    }
    // Readers of two formats: which one a copy should serve is not this
    // rule's to choose.
    if (format && useFormat != format)
      return Type();
    format = useFormat;
    rounded.push_back(&use);
    collectReadingKernels(use, roundingReaders);
  }
  // The copy costs its bytes once, written; each kernel that multiplies it
  // without reading it as it is saves them, read (and reads its tiles as
  // stored, with cp.async or TMA, instead of converting each in registers,
  // however many times its block columns read them). A kernel that read
  // both would read more, not less.
  if (!readAsIs || rounded.empty() ||
      llvm::any_of(roundingReaders, [&](Operation *kernel) {
        return wideReaders.contains(kernel);
      }))
    return Type();
  roundedUses.assign(rounded.begin(), rounded.end());
  return format;
}

std::optional<ContractionShape>
mlir::ridge::getContractionShape(Operation *op) {
  SmallVector<Value, 3> operands = getMultipliedOperands(op);
  auto lhs = dyn_cast<RankedTensorType>(operands[0].getType());
  auto rhs = dyn_cast<RankedTensorType>(operands[1].getType());
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!lhs || !rhs || !result || !lhs.hasStaticShape() ||
      !rhs.hasStaticShape() || !result.hasStaticShape())
    return std::nullopt;
  ContractionShape shape;
  if (isa<AttentionOp>(op)) {
    // Its first product, Q K^T per head: Sq x Skv outputs of d terms (the
    // second, P V, has the same count of multiplies when dv = d).
    shape.m = lhs.getDimSize(2);
    shape.n = rhs.getDimSize(2);
    shape.k = lhs.getDimSize(3);
    return shape;
  }
  if (isa<MatMulOp>(op)) {
    // numpy: a vector operand is a 1 x K row or a K x 1 column.
    int64_t lhsRank = lhs.getRank(), rhsRank = rhs.getRank();
    shape.m = lhsRank == 1 ? 1 : lhs.getDimSize(lhsRank - 2);
    // A weight shared by the batch (a 2-D right operand) makes the batch
    // part of M: a sequence-first [L, 1, E] x [E, F] projection is one GEMM
    // of M = L, as the tensor-core kernel computes it.
    if (rhsRank <= 2 && lhsRank > 2)
      for (int64_t dim : lhs.getShape().drop_back(2))
        shape.m *= dim;
    shape.k = lhs.getDimSize(lhsRank - 1);
    shape.n = rhsRank == 1 ? 1 : rhs.getDimSize(rhsRank - 1);
    return shape;
  }
  if (auto gemm = dyn_cast<GemmOp>(op)) {
    shape.m = lhs.getDimSize(gemm.getTransA() ? 1 : 0);
    shape.k = lhs.getDimSize(gemm.getTransA() ? 0 : 1);
    shape.n = rhs.getDimSize(gemm.getTransB() ? 0 : 1);
    return shape;
  }
  // Convolution as an implicit GEMM over [M, C/group, K1, ...] weights.
  // A depthwise channels-last weight is [1, K..., C]: one output channel
  // per group, prod(K) products each.
  auto conv = cast<ConvOp>(op);
  int64_t group = std::max<int64_t>(conv.getGroup(), 1);
  bool depthwiseLast = conv.getChannelsLast() && conv.isDepthwise();
  shape.m = depthwiseLast ? 1 : rhs.getDimSize(0) / group;
  shape.k = 1;
  for (int64_t dim : depthwiseLast ? rhs.getShape().drop_front().drop_back()
                                   : rhs.getShape().drop_front())
    shape.k *= dim;
  // n: the images and their output pixels (channels second, or last).
  shape.n = result.getDimSize(0);
  for (int64_t i = conv.getFirstSpatialDim(), end = i + result.getRank() - 2;
       i < end; ++i)
    shape.n *= result.getDimSize(i);
  return shape;
}

/// The most of its fp32 time a memory-bound contraction may keep when
/// rounded for its weights' bytes alone (getNarrowedWeightBytes): it must
/// save a fifth, as a split of the bandwidth path must (GemvConfig.cpp).
static constexpr double kMinNarrowedWeightsGain = 0.8;

/// The least time a memory-bound contraction's bytes take at full
/// bandwidth for its weights' bytes to set its time: about one loaded DRAM
/// latency (a kernel that moves less, 3.35 MB on the H100, waits on its
/// latency, as the bandwidth path's model of KernelConfigPolicy.h has it),
/// so halving a smaller weight saves no time.
static constexpr double kMinBandwidthBoundSeconds = 1e-6;

int64_t mlir::ridge::getNarrowedWeightBytes(Operation *op, Precision format) {
  if (!isa<MatMulOp, GemmOp, ConvOp>(op) ||
      (format != Precision::BF16 && format != Precision::FP16))
    return 0;
  int64_t saved = 0;
  for (Value operand : getMultipliedOperands(op))
    if (isNarrowableWeight(operand))
      saved += cast<RankedTensorType>(operand.getType()).getNumElements() * 2;
  return saved;
}

static std::string formatTime(double seconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.3g us", seconds * 1e6);
  return text;
}

PrecisionDecision
mlir::ridge::selectContractionPrecision(Operation *op, const TargetSpec &target,
                                        const RooflineModel &model) {
  PrecisionDecision decision;
  auto keep = [&](PrecisionReason reason, const Twine &why) {
    decision.reason = reason;
    decision.explanation = why.str();
    return decision;
  };

  for (Value operand : getMultipliedOperands(op)) {
    Type element = getElementTypeOrSelf(operand.getType());
    if (!element.isF32()) {
      std::string name;
      llvm::raw_string_ostream os(name);
      os << element;
      return keep(PrecisionReason::NotF32,
                  "operands are " + name + ", not f32: they keep their type");
    }
  }
  if (target.numerics == Precision::FP32)
    return keep(PrecisionReason::Fp32Requested, "fp32 requested");
  // fp8 takes per-tensor scales, which the MatMul/Gemm lowering builds
  // (docs/precision.md); a convolution or an attention asked for fp8 gets
  // the next narrowest format its kernels multiply, bf16.
  Precision format = target.numerics;
  bool fp8Fallback = format == Precision::FP8 && !isa<MatMulOp, GemmOp>(op);
  if (fp8Fallback)
    format = Precision::BF16;
  if (isa<AttentionOp>(op) && format != Precision::BF16 &&
      format != Precision::FP16)
    return keep(PrecisionReason::NoAttentionFormat,
                "the attention kernels multiply bf16 or fp16, not " +
                    stringifyPrecision(format) + ": fp32");

  std::optional<ContractionShape> shape = getContractionShape(op);
  auto costed = cast<CostOpInterface>(op);
  int64_t flops = costed.getFlops(), bytes = costed.getMinBytes();
  if (!shape || flops < 0 || bytes < 0)
    return keep(PrecisionReason::UnknownShape, "dynamic shape");
  std::string dims = "M=" + std::to_string(shape->m) +
                     ", N=" + std::to_string(shape->n) +
                     ", K=" + std::to_string(shape->k);
  // A skinny contraction of a weight (a decode step's projection: M under
  // a tile, K at least one, bytes enough to take a microsecond) is priced
  // as the rest: the bandwidth path reads its weight as stored, so a narrow
  // copy halves its time.
  const GpuSpec &gpu = model.getGpu();
  double memoryTime = static_cast<double>(bytes) / gpu.bandwidth;
  int64_t narrowedBytes = getNarrowedWeightBytes(op, format);
  bool skinnyOfWeight = shape->k >= kMinTensorCoreDim && narrowedBytes > 0 &&
                        memoryTime >= kMinBandwidthBoundSeconds;
  if ((shape->m < kMinTensorCoreDim || shape->n < kMinTensorCoreDim ||
       shape->k < kMinTensorCoreDim) &&
      !skinnyOfWeight)
    return keep(PrecisionReason::TooSmall,
                dims + ": below one tensor-core tile (" +
                    std::to_string(kMinTensorCoreDim) + " in each)");

  // The fp32 SIMT roofline: what the contraction costs unrounded. Rounded,
  // the compute term shrinks, and so does the memory term by the weights
  // stored narrow; activations still live in fp32 memory.
  double roundedMemoryTime =
      static_cast<double>(bytes - narrowedBytes) / gpu.bandwidth;
  // An unrounded attention of more than kMaxDecodeQueries rows runs the
  // SIMT online loop, which reads every key and value a row sees once per
  // row: its time is that traffic's, not the minimum's.
  double fp32MemoryTime = memoryTime;
  std::string simtBytes;
  if (auto attention = dyn_cast<AttentionOp>(op);
      attention && shape->m > kMaxDecodeQueries) {
    // f32 operands (checked above): 4 bytes an element, D + Dv a score.
    int64_t dims = shape->k + attention.getValue().getType().getDimSize(3);
    int64_t scores = flops / (2 * dims + 6);
    double loopBytes =
        static_cast<double>(bytes) + static_cast<double>(scores) * dims * 4;
    fp32MemoryTime = loopBytes / gpu.bandwidth;
    llvm::raw_string_ostream bytesOs(simtBytes);
    bytesOs << llvm::format("; the f32 loop reads K and V once per query "
                            "row, %.3g B",
                            loopBytes);
  }
  double fp32Time =
      std::max(static_cast<double>(flops) / gpu.fp32Flops, fp32MemoryTime);
  double matrixPeak = gpu.getMatrixFlops(format);
  double roundedTime =
      matrixPeak > 0
          ? std::max(static_cast<double>(flops) / matrixPeak, roundedMemoryTime)
          : fp32Time;
  std::string intensity;
  llvm::raw_string_ostream os(intensity);
  os << llvm::format("intensity %.1f FLOP/B, fp32 ridge point %.1f on ",
                     static_cast<double>(flops) / std::max<int64_t>(bytes, 1),
                     gpu.fp32Flops / gpu.bandwidth)
     << gpu.name << simtBytes;
  if (!(roundedTime < fp32Time))
    return keep(PrecisionReason::MemoryBound,
                dims + ": memory-bound on the fp32 roofline (" + intensity +
                    "): rounding saves no time");
  // Rounded for its weights' bytes alone (an attention's f32 loop is
  // priced by its own traffic above, and says compute-bound as before).
  bool byWeights =
      narrowedBytes > 0 &&
      !(static_cast<double>(flops) / gpu.fp32Flops > fp32MemoryTime);
  // A small weight beside large activations (a router's 8 columns under
  // thousands of rows) saves a sliver of the bytes: within the model's
  // error, and the activations' rounding costs accuracy and instructions.
  if (byWeights && !(roundedTime < kMinNarrowedWeightsGain * fp32Time))
    return keep(PrecisionReason::MemoryBound,
                dims + ": memory-bound on the fp32 roofline (" + intensity +
                    "): its weights stored narrow would save under a fifth "
                    "of its time");
  if (byWeights && memoryTime < kMinBandwidthBoundSeconds)
    return keep(PrecisionReason::MemoryBound,
                dims + ": memory-bound on the fp32 roofline (" + intensity +
                    "), its bytes under a microsecond at full bandwidth: "
                    "latency sets its time, not its weights' bytes");

  decision.roundTo = format;
  decision.reason = fp8Fallback ? PrecisionReason::Fp8Fallback
                    : byWeights ? PrecisionReason::NarrowedWeights
                                : PrecisionReason::Rounded;
  std::string weights;
  if (narrowedBytes > 0) {
    llvm::raw_string_ostream weightsOs(weights);
    weightsOs << llvm::format(", its weights stored in %s (%.3g B less)",
                              stringifyPrecision(format).str().c_str(),
                              static_cast<double>(narrowedBytes));
  }
  decision.explanation =
      dims + (byWeights ? ": memory-bound" : ": compute-bound") +
      " on the fp32 roofline (" + intensity +
      "): " + stringifyPrecision(format).str() + weights + " takes " +
      formatTime(roundedTime) + " instead of " + formatTime(fp32Time);
  if (fp8Fallback)
    decision.explanation += "; no fp8 kernel for " +
                            op->getName().getStringRef().str() +
                            " (per-tensor scales are built for MatMul and "
                            "Gemm), so bf16";
  return decision;
}

SmallVector<std::pair<Operation *, PrecisionDecision>>
mlir::ridge::selectPrecisions(Operation *root, const TargetSpec &target,
                              const RooflineModel &model) {
  SmallVector<std::pair<Operation *, PrecisionDecision>> decisions;
  root->walk([&](Operation *op) {
    if (isPrecisionCandidate(op))
      decisions.emplace_back(op, selectContractionPrecision(op, target, model));
  });
  // A fusion group's contractions become one kernel's products, which run
  // on tensor cores only together (a residual block's 3x3 convolution and
  // its 1x1 downsampling branch, summed in one epilogue).
  llvm::DenseMap<Operation *, Precision> groupFormat;
  for (auto &[op, decision] : decisions)
    if (decision.roundTo && !isa<AttentionOp>(op))
      if (auto group = op->getParentOfType<FusionGroupOp>())
        groupFormat.try_emplace(group, *decision.roundTo);
  for (auto &[op, decision] : decisions) {
    if (decision.reason != PrecisionReason::MemoryBound || isa<AttentionOp>(op))
      continue;
    auto group = op->getParentOfType<FusionGroupOp>();
    auto format = group ? groupFormat.find(group) : groupFormat.end();
    if (format == groupFormat.end())
      continue;
    decision.roundTo = format->second;
    decision.reason = PrecisionReason::FusedWithRounded;
    decision.explanation += "; rounded to " +
                            stringifyPrecision(format->second).str() +
                            " with the contraction fused beside it";
  }
  return decisions;
}

unsigned mlir::ridge::countRoundedContractions(Operation *root,
                                               const TargetSpec &target,
                                               const RooflineModel &model) {
  return llvm::count_if(
      selectPrecisions(root, target, model),
      [](const auto &entry) { return entry.second.roundTo.has_value(); });
}
