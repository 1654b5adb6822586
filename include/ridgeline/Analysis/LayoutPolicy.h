//===- LayoutPolicy.h - Where convolutions store channels last --*- C++ -*-===//
//
// The control function of ridge-assign-channels-last (the pass is the
// mechanism): whether a convolution of the ridge graph computes in the
// channels-last form (ConvOp's `channels_last`: [N, spatial..., C]
// activations, [M, window..., C] weights).
//
// An implicit GEMM's k runs over (C, window) in the channels-second form,
// and the window positions of one channel are not contiguous in an [N, C,
// H, W] activation: the tensor-core kernel gathers its activation operand
// element by element. Channels last, k runs over (window, C) and each
// window position's channels are contiguous: 16-byte loads of 8 bf16
// channels, as CUTLASS's and cuDNN's NHWC implicit GEMMs read them. The
// weights are permuted once, at compile time; the activations cost a
// transpose only where a channels-last region meets an op that reads the
// channels second (a pooling, a reshape), since the pass cancels the
// transposes between two convolutions and moves them past the elementwise
// ops between (ReLU, residual adds).
//
// The rule: a GPU target, a convolution computed on tensor cores (rounded
// to bf16/fp16/tf32 by the precision policy, or stored in f16/bf16), group
// 1 (a depthwise convolution stays on the SIMT path), and input channels a
// whole number of 16-byte pieces of the multiply type (8 bf16/fp16, 4
// tf32). Input channels short of a whole piece are padded with zeros up to
// the next whole piece where the windows overlap enough to pay for it: the
// padding multiplies the multiply work by padded / channels, and the
// element-by-element gather it replaces costs once per read of an input
// element, which the windows read (kernel elements) / (stride elements)
// times. The 7x7/2 stem of an RGB image (each element read 12.25 times)
// computes on 8 channels (bf16/fp16; 4 for tf32), as CUTLASS's
// fixed-channels stem and cuDNN's padded NHWC first layer do: its input
// costs one pad-and-transpose kernel (the image read once, written as
// [N, H, W, 8]) and its windows are read 8 channels a 16-byte load; its
// result, the pooling after it and the first block then stay
// channels-last. A patchify convolution (ViT's 16x16/16: each element read
// once) is not padded: that would add a pass over the image and 2.67x the
// work and save nothing. It is a GEMM over patches instead (PatchMatmul):
// kernel = stride, no padding, the image a whole number of patches, so each
// output pixel multiplies one [C, kh, kw] patch, whose kw elements are
// contiguous in the image: the patches [N, OH x OW, C x kh x kw] (a
// transpose of the image) times the weights [C x kh x kw, M], on tensor
// cores with k-contiguous rows; its result [N, OH x OW, M] is what a ViT's
// flatten + transpose of the convolution makes anyway.
// A convolution off tensor cores (left in fp32: a ResNet's strided 1x1
// downsampling, memory-bound alone) follows its input: channels-last when
// that is (the pass asks once the tensor-core convolutions are rewritten),
// since keeping it channels-second costs a transpose of the input, and of
// the result where it meets the block's channels-last sum. Once the fusion
// plan puts it beside the 3x3 convolution of that sum, the precision
// policy rounds it too (docs/precision.md, rule 6): one implicit GEMM of
// two products, both channels-last. A depthwise convolution (group = input
// channels = output channels; SIMT, one output per thread) follows its
// input the same way: channels-last, consecutive threads read consecutive
// channels of each window position, and an inverted residual block (1x1
// expansion, depthwise, 1x1 projection) keeps no transpose between its
// three convolutions. Other grouped convolutions stay channels-second.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_ANALYSIS_LAYOUTPOLICY_H
#define RIDGELINE_ANALYSIS_LAYOUTPOLICY_H

#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::ridge {

class ConvOp;

/// Why a convolution takes the layout it does (ridge-assign-channels-last's
/// statistics and remarks).
enum class ConvLayoutReason {
  ChannelsLast,
  FollowsInput,
  AlreadyChannelsLast,
  CpuTarget,
  NotTensorCore,
  Grouped,
  UnknownShape,
  ChannelsNotWholeChunks,
  PaddedChannels,
  PatchMatmul,
};

struct ConvLayoutDecision {
  bool channelsLast = false;
  ConvLayoutReason reason = ConvLayoutReason::CpuTarget;
  /// Channels-last with its input channels padded with zeros to this many
  /// (PaddedChannels); 0 when they are not padded.
  int64_t paddedChannels = 0;
  /// A GEMM over non-overlapping patches instead of a convolution
  /// (PatchMatmul).
  bool patchMatmul = false;
  /// For remarks: what decided it.
  std::string explanation;
};

/// The layout `conv` computes in on `target` (the rule above), its input
/// channels-last already or not. Reads the precision policy's decision
/// (ridge.precision), so it runs after ridge-select-precision.
ConvLayoutDecision decideConvolutionLayout(ConvOp conv,
                                           const TargetSpec &target,
                                           bool inputChannelsLast);

} // namespace mlir::ridge

#endif // RIDGELINE_ANALYSIS_LAYOUTPOLICY_H
