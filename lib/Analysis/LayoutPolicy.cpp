//===- LayoutPolicy.cpp - Where convolutions store channels last ----------===//
//
// The rule is in LayoutPolicy.h and docs/tensor-cores.md.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/LayoutPolicy.h"
#include "ridgeline/Analysis/PrecisionPolicy.h"

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::ridge;

/// Bytes of one staged piece of a tensor-core operand: a 16-byte load.
static constexpr int64_t kStagedChunkBytes = 16;

/// Bytes of one element of `conv`'s multiply type on tensor cores as it is
/// staged: 2 for bf16/fp16 (rounded to, or stored in), 4 for tf32 (staged
/// as f32); 0 when it does not run on tensor cores.
static int64_t getMultiplyBytes(ConvOp conv) {
  Type type = getTensorCoreMultiplyType(conv);
  if (!type)
    return 0;
  if (isa<FloatTF32Type>(type))
    return 4;
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

/// Whether `conv` reads its input as a whole number of non-overlapping
/// patches: 2-D, kernel = stride, no padding or dilation, group 1, each
/// spatial extent a multiple of the kernel's.
static bool isPatchify(ConvOp conv) {
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  if (input.getRank() != 4 || conv.getGroup() != 1)
    return false;
  ArrayRef<int64_t> window = weight.getShape().drop_front(2);
  for (auto [size, stride, dilation, extent] :
       llvm::zip(window, conv.getStrides(), conv.getDilations(),
                 input.getShape().drop_front(2)))
    if (size != stride || dilation != 1 || extent % size != 0)
      return false;
  return llvm::all_of(conv.getPads(), [](int64_t pad) { return pad == 0; });
}

ConvLayoutDecision
mlir::ridge::decideConvolutionLayout(ConvOp conv, const TargetSpec &target,
                                     bool inputChannelsLast) {
  ConvLayoutDecision decision;
  auto decide = [&](ConvLayoutReason reason, const Twine &why) {
    decision.channelsLast = reason == ConvLayoutReason::ChannelsLast ||
                            reason == ConvLayoutReason::FollowsInput ||
                            reason == ConvLayoutReason::PaddedChannels;
    decision.reason = reason;
    decision.explanation = why.str();
    return decision;
  };
  if (conv.getChannelsLast())
    return decide(ConvLayoutReason::AlreadyChannelsLast,
                  "the convolution is channels-last already");
  if (!target.isGpu())
    return decide(ConvLayoutReason::CpuTarget,
                  "the CPU target keeps the exported layout");
  auto input = cast<RankedTensorType>(conv.getInput().getType());
  auto weight = cast<RankedTensorType>(conv.getWeight().getType());
  if (!input.hasStaticShape() || !weight.hasStaticShape())
    return decide(ConvLayoutReason::UnknownShape, "dynamic shape");
  if (conv.getGroup() != 1) {
    bool depthwise = conv.isDepthwise();
    if (depthwise && inputChannelsLast)
      return decide(ConvLayoutReason::FollowsInput,
                    "a depthwise convolution whose input is channels-last "
                    "(channels-second would transpose it)");
    return decide(
        ConvLayoutReason::Grouped,
        "grouped convolution (group " + Twine(conv.getGroup()) +
            (depthwise ? ", depthwise, its input channels-second)" : ")"));
  }
  int64_t multiplyBytes = getMultiplyBytes(conv);
  if (multiplyBytes == 0) {
    if (inputChannelsLast)
      return decide(ConvLayoutReason::FollowsInput,
                    "its input is channels-last (channels-second would "
                    "transpose it)");
    return decide(ConvLayoutReason::NotTensorCore,
                  "the convolution does not run on tensor cores (not "
                  "rounded to bf16, fp16 or tf32, nor stored in f16/bf16)");
  }
  int64_t channels = input.getDimSize(1);
  int64_t chunk = kStagedChunkBytes / multiplyBytes;
  if (channels % chunk != 0) {
    // Padding multiplies the work by padded / channels; the gather it
    // replaces costs once per read of an input element, which a window
    // reads (kernel elements) / (stride elements) times.
    int64_t padded = llvm::alignTo(channels, chunk);
    ArrayRef<int64_t> window = weight.getShape().drop_front(2);
    int64_t windowElements = ShapedType::getNumElements(window);
    int64_t strideElements = 1;
    for (int64_t stride : conv.getStrides())
      strideElements *= stride;
    bool paddingPays = windowElements * channels >= padded * strideElements;
    if (!paddingPays && isPatchify(conv)) {
      decision.patchMatmul = true;
      return decide(ConvLayoutReason::PatchMatmul,
                    Twine(channels) + " input channels read in " +
                        Twine(windowElements) +
                        "-pixel patches that do not overlap: a GEMM over "
                        "the patches");
    }
    if (!paddingPays)
      return decide(ConvLayoutReason::ChannelsNotWholeChunks,
                    Twine(channels) +
                        " input channels are not a whole number of 16-byte "
                        "pieces (" +
                        Twine(chunk) + " channels), and padding them to " +
                        Twine(padded) +
                        " would cost more than the gather it saves (each "
                        "input element read " +
                        Twine(windowElements) + "/" + Twine(strideElements) +
                        " times by the windows)");
    decision.paddedChannels = padded;
    return decide(ConvLayoutReason::PaddedChannels,
                  Twine(channels) + " input channels padded with zeros to " +
                      Twine(padded) + ", a whole 16-byte piece");
  }
  return decide(ConvLayoutReason::ChannelsLast,
                Twine(channels) + " input channels, " + Twine(chunk) +
                    " to a 16-byte piece");
}
