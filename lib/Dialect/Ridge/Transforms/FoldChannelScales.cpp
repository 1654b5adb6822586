//===- FoldChannelScales.cpp - A channel scale into the next conv's weights
//===//
//
// A squeeze-and-excitation block scales each channel of an activation by a
// factor computed from a pooled branch and convolves the result:
//
//   %m = ridge.mul %x, %s   // x: [1, C, H, W], s: [1, C, 1, 1]
//   %y = ridge.conv %m, %w  // w: [M, C, kh, kw]
//
// The Mul is a pass over the activation (read x, write m, and the conv
// reads m). Since conv(x * s, w) = conv(x, w * s) with s broadcast along the
// weight's input channels (zero padding is still zero after the scale), the
// scale can go to the weights instead:
//
//   %ws = ridge.mul %w, %s  // [M, C, kh, kw] * [1, C, 1, 1]
//   %y = ridge.conv %x, %ws
//
// a pass over the weights, which pays when they are smaller than the
// activation (a 3x3 convolution of 32 channels at 28x28: 9,216 weights
// against 25,088 activations; not one of 512 channels at 7x7). The decision
// is the control function's (shouldFoldChannelScale); the rewrite is the
// pass's. Per-image scales of a batch larger than one would need one
// weight tensor per image and are left alone.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-fold-channel-scales"

namespace mlir::ridge {
#define GEN_PASS_DEF_FOLDCHANNELSCALESPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// A Mul that scales the channels of a convolution's input.
struct ChannelScale {
  MulOp mul;
  ConvOp conv;
  /// The scaled activation [N, C, spatial...] and the scale [1, C, 1...].
  Value activation, scale;
};
} // namespace

/// Elements of a static tensor, or -1.
static int64_t getNumElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : -1;
}

/// Matches `mul` as a channel scale of `conv`'s input; on failure, `why`
/// says what does not hold.
static std::optional<ChannelScale> matchChannelScale(MulOp mul,
                                                     std::string &why) {
  if (!mul->hasOneUse()) {
    why = "the scaled activation has other uses than one convolution";
    return std::nullopt;
  }
  auto conv = dyn_cast<ConvOp>(*mul->user_begin());
  if (!conv || conv.getInput() != mul.getResult()) {
    why = "the product is not a convolution's input";
    return std::nullopt;
  }
  if (conv.getGroup() != 1) {
    why = "grouped convolution";
    return std::nullopt;
  }
  // (The scale's [1, C, 1, ...] shape is the channels-second form's.)
  if (conv.getChannelsLast()) {
    why = "channels-last convolution";
    return std::nullopt;
  }
  auto resultType = dyn_cast<RankedTensorType>(mul.getType());
  auto weightType = dyn_cast<RankedTensorType>(conv.getWeight().getType());
  if (!resultType || !weightType || !resultType.hasStaticShape() ||
      !weightType.hasStaticShape() || !resultType.getElementType().isF32() ||
      weightType.getElementType() != resultType.getElementType()) {
    why = "not static f32 tensors";
    return std::nullopt;
  }
  int64_t rank = resultType.getRank();
  // The scale: [1, C, 1, ...] (a channel vector broadcast over the batch of
  // one and the spatial dims); the activation: the result's shape.
  auto isChannelScale = [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getRank() != rank || !type.hasStaticShape() ||
        type.getDimSize(0) != 1 ||
        type.getDimSize(1) != resultType.getDimSize(1))
      return false;
    for (int64_t d = 2; d < rank; ++d)
      if (type.getDimSize(d) != 1)
        return false;
    return true;
  };
  ChannelScale match{mul, conv, Value(), Value()};
  for (auto [a, b] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())})
    if (a.getType() == resultType && isChannelScale(b)) {
      match.activation = a;
      match.scale = b;
      break;
    }
  if (!match.activation) {
    why = "not an activation times a [1, C, 1, ...] channel scale";
    return std::nullopt;
  }
  return match;
}

/// The control function: fold when the pass over the weights (read w,
/// write w * s) is smaller than the pass over the activation it replaces
/// (read x, write x * s).
static bool shouldFoldChannelScale(ChannelScale match, std::string &why) {
  int64_t weights = getNumElements(match.conv.getWeight());
  int64_t activations = getNumElements(match.activation);
  if (weights >= activations) {
    why = "the weights (" + std::to_string(weights) +
          " elements) are not smaller than the activation (" +
          std::to_string(activations) + ")";
    return false;
  }
  return true;
}

namespace {
struct FoldChannelScalesPass
    : public ridge::impl::FoldChannelScalesPassBase<FoldChannelScalesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) { muls.push_back(mul); });
    IRRewriter rewriter(&getContext());
    for (MulOp mul : muls) {
      std::string why;
      std::optional<ChannelScale> match = matchChannelScale(mul, why);
      if (match && shouldFoldChannelScale(*match, why)) {
        rewriter.setInsertionPoint(match->conv);
        Value weight = match->conv.getWeight();
        Value scaled = MulOp::create(rewriter, mul.getLoc(), weight.getType(),
                                     weight, match->scale);
        rewriter.modifyOpInPlace(match->conv, [&] {
          match->conv.getInputMutable().assign(match->activation);
          match->conv.getWeightMutable().assign(scaled);
        });
        rewriter.eraseOp(mul);
        ++numFolded;
        LLVM_DEBUG(llvm::dbgs()
                   << "folded the channel scale at " << mul.getLoc() << "\n");
        continue;
      }
      // Only near misses are worth a remark: a Mul that feeds a conv.
      if (remarks && mul->hasOneUse() && isa<ConvOp>(*mul->user_begin()))
        mul.emitRemark() << "channel scale not folded into the convolution's "
                            "weights: "
                         << why;
    }
  }
};
} // namespace
