//===- RidgeNNOps.td - ridge NN ops -----------------*- tablegen -*-===//
//
// spatial neural-network ops (convolution, pooling, resize, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_NN_OPS
#define RIDGE_NN_OPS

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

def Ridge_ConvOp : Ridge_Op<"conv", [InferTypeOpAdaptor,
    Ridge_ContractionFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "N-D grouped convolution (ONNX Conv)";
  let description = [{
    `input` is [N, C, D1, ..., Dk], `weight` is [M, C / group, K1, ..., Kk]
    and the optional `bias` is [M]. `strides` and `dilations` have k entries,
    `pads` has 2k (all begins, then all ends); the importer resolves
    `auto_pad` into explicit pads. Output spatial size per dim:
    (D + pad_begin + pad_end - ((K - 1) * dilation + 1)) / stride + 1.
    Integer operands (ConvInteger after zero-point subtraction) accumulate in
    their own type; f16 accumulates in f32.
    FLOPs: 2 * N * M * prod(out spatial) * C / group * prod(K), plus one
    add per output element with a bias.

    With `channels_last` (set by ridge-assign-channels-last, never by the
    importer) the channels are the innermost dimension instead: `input` is
    [N, D1, ..., Dk, C], `weight` [M, K1, ..., Kk, C] and the result [N,
    O1, ..., Ok, M], so that an implicit GEMM reads each window position's
    channels as contiguous 16-byte pieces. Only `group` 1 and depthwise
    convolutions have that form; a depthwise one (`group` = C = M) takes
    its weight as [1, K1, ..., Kk, C], each tap's channels contiguous.
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_Tensor:$weight,
                       Optional<Ridge_Tensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       UnitAttr:$channels_last);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The channel dimension of the input and the result (the weight's
    /// input channels too): 1, or the last with channels_last.
    int64_t getChannelDim() {
      return getChannelsLast()
                 ? cast<RankedTensorType>(getInput().getType()).getRank() - 1
                 : 1;
    }
    /// The first spatial dimension of the input, weight and result: 2, or
    /// 1 with channels_last.
    int64_t getFirstSpatialDim() { return getChannelsLast() ? 1 : 2; }
    /// Whether each output channel filters its own input channel alone
    /// (group = input channels = output channels > 1).
    bool isDepthwise() {
      int64_t channels = cast<RankedTensorType>(getInput().getType())
                             .getDimSize(getChannelDim());
      int64_t outChannels =
          cast<RankedTensorType>(getType()).getDimSize(getChannelDim());
      return getGroup() > 1 && getGroup() == channels &&
             outChannels == channels;
    }
  }];
  let hasVerifier = 1;
}

def Ridge_DeformConvOp : Ridge_Op<"deform_conv", [
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "2-D deformable convolution (ONNX DeformConv)";
  let description = [{
    A grouped convolution of `input` [N, C, H, W] with `weight`
    [M, C / group, kH, kW] whose kernel taps are moved per output position:
    `offset` [N, offset_group * kH * kW * 2, oH, oW] holds the (y, x) shift
    of every tap, the input is read there by bilinear interpolation (zero
    outside the image) and scaled by `mask` [N, offset_group * kH * kW, oH,
    oW]. Input channel c uses offset group c / (C / offset_group). `bias` is
    [M]. The importer supplies a zero bias and a unit mask when ONNX omits
    them. `strides`, `dilations` have 2 entries, `pads` 4 (begins, then
    ends). Output size per dim as for Conv.
    FLOPs: about 12 per tap (interpolation and multiply-add).
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$weight,
                       Ridge_FloatTensor:$offset, Ridge_FloatTensor:$bias,
                       Ridge_FloatTensor:$mask,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<I64Attr, "1">:$group,
                       DefaultValuedAttr<I64Attr, "1">:$offset_group);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $offset `,` $bias `,` $mask attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_ConvTransposeOp : Ridge_Op<"conv_transpose", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "N-D grouped transposed convolution (ONNX ConvTranspose)";
  let description = [{
    `input` is [N, C, D1, ..., Dk], `weight` is [C, M / group, K1, ..., Kk]
    and the optional `bias` is [M]. The importer resolves `auto_pad` and
    `output_shape` into explicit `pads` (2k entries; an end pad may be
    negative, which extends the output). Output spatial size per dim:
    stride * (D - 1) + output_padding + (K - 1) * dilation + 1
    - pad_begin - pad_end.
    FLOPs: 2 * N * C * prod(in spatial) * M / group * prod(K), plus one
    add per output element with a bias.
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_Tensor:$weight,
                       Optional<Ridge_Tensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Ridge_PoolOp : Ridge_Op<"pool", [InferTypeOpAdaptor,
    Ridge_MovementFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Max, average or Lp pooling over the spatial dims";
  let description = [{
    ONNX MaxPool, AveragePool, LpPool and their Global* forms (whose kernel
    covers all spatial dims). `kind` is "max", "avg" or "lp" (with `p`).
    `input` is [N, C, D1, ..., Dk]; `kernel_shape`, `strides`, `dilations`
    have k entries and `pads` 2k (begins, then ends). With `ceil_mode` the
    output size rounds up, but a window may not start in the end padding.
    Average pooling divides by the number of non-padding elements in each
    window, or by the window clipped to the padded input with
    `count_include_pad`. With `with_indices` (max only) a second i64 result
    holds the flattened input index of each maximum (row-major, or with
    column-major spatial dims when `storage_order` is 1).
    FLOPs per output for a window of K elements: K - 1 (max), K (avg:
    K - 1 adds and a divide), 2K (lp).

    With `channels_last` (set by ridge-assign-channels-last, never by the
    importer) `input` is [N, D1, ..., Dk, C] and the result [N, O1, ..., Ok,
    C]: a pooling between channels-last convolutions (or of their result)
    reads and writes the channels as the innermost, contiguous dimension.
    The indices result has no channels-last form.
  }];
  let arguments = (ins Ridge_Tensor:$input, StrAttr:$kind,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                       DenseI64ArrayAttr:$dilations,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
                       DefaultValuedAttr<I64Attr, "2">:$p,
                       DefaultValuedAttr<BoolAttr, "false">:$with_indices,
                       DefaultValuedAttr<I64Attr, "0">:$storage_order,
                       UnitAttr:$channels_last);
  let results = (outs Ridge_Tensor:$result, Optional<Ridge_Tensor>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type(results)
  }];
  let extraClassDeclaration = [{
    /// The channel dimension of the input and the result: 1, or the last
    /// with channels_last.
    int64_t getChannelDim() {
      return getChannelsLast()
                 ? cast<RankedTensorType>(getInput().getType()).getRank() - 1
                 : 1;
    }
    /// The first spatial dimension of the input and the result: 2, or 1
    /// with channels_last.
    int64_t getFirstSpatialDim() { return getChannelsLast() ? 1 : 2; }
  }];
  let hasVerifier = 1;
}

def Ridge_MaxUnpoolOp : Ridge_Op<"max_unpool", [
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Partial inverse of max pooling (ONNX MaxUnpool)";
  let description = [{
    Writes each `input` element to the flattened position its `indices`
    entry names (as MaxPool's second result defines them) in the
    default-size result, (D - 1) * stride + K - pad_begin - pad_end per
    spatial dim; every other element is 0. A larger result (ONNX
    `output_shape`) extends that with zeros at the end of each dim. The window attributes are
    those of the MaxPool that produced the indices: each result element only
    looks for its source among the input windows that cover it. The importer
    resolves the result shape (default or `output_shape`).
    FLOPs: one compare per covering window per output element.
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_Tensor:$indices,
                       DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_Col2ImOp : Ridge_Op<"col2im", [
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Rearranges sliding blocks into an image (ONNX Col2Im)";
  let description = [{
    The inverse of im2col: `input` [N, C * prod(block_shape), L] holds, for
    each of the L block positions (row-major over the spatial dims), the
    block's C * prod(block_shape) values; the result [N, C, image...] sums
    every block value into the image element it covers. Block positions
    follow `strides`, `dilations` and `pads` (begin values, then end values)
    as a convolution's windows over the padded image; L must equal their
    number. The image shape is the result's spatial shape.
    FLOPs: one add per block value.
  }];
  let arguments = (ins Ridge_FloatTensor:$input,
                       DenseI64ArrayAttr:$block_shape,
                       DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$dilations, DenseI64ArrayAttr:$pads);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

def Ridge_ResizeOp : Ridge_Op<"resize", [
    Ridge_MovementFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "getMinBytes"]>]> {
  let summary = "Nearest, n-linear or cubic resampling (ONNX Resize/Upsample)";
  let description = [{
    Each output coordinate maps to an input coordinate through
    `coordinate_transformation_mode` ("half_pixel", "pytorch_half_pixel",
    "align_corners", "asymmetric", "tf_half_pixel_for_nn",
    "tf_crop_and_resize") using the per-dim `scales` (output / input, as
    ONNX computes them from either its scales or sizes input) and, for
    tf_crop_and_resize, `roi` (starts, then ends, normalized). `mode` is
    "nearest" (rounded per `nearest_mode`), "linear" or "cubic"
    (`cubic_coeff_a`, `exclude_outside`). Neighbours outside the input
    replicate the edge; tf_crop_and_resize writes `extrapolation_value` where
    the mapped coordinate leaves the input. With `antialias`, linear and
    cubic downscaling stretch the interpolation kernel by 1 / scale (more
    taps per output element, weights normalized to sum 1), as ONNX
    Resize-18 defines. "half_pixel_symmetric" is half_pixel with the
    resized image centered on the input when the output length was rounded.
    FLOPs: 2 per neighbour per output element (0 for nearest, a gather).
    Bytes: |input| + |result|, but nearest reads at most
    min(|input|, |result|) input elements.
  }];
  let arguments = (ins Ridge_Tensor:$input, StrAttr:$mode,
                       StrAttr:$coordinate_transformation_mode,
                       DefaultValuedAttr<StrAttr, "\"round_prefer_floor\"">:
                           $nearest_mode,
                       DefaultValuedAttr<F32Attr, "-0.75">:$cubic_coeff_a,
                       DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                       DefaultValuedAttr<F32Attr, "0.0">:$extrapolation_value,
                       DenseF64ArrayAttr:$scales,
                       OptionalAttr<DenseF64ArrayAttr>:$roi,
                       DefaultValuedAttr<BoolAttr, "false">:$antialias);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Input elements one output element reads, at most: the lowering
    /// unrolls the product of the per-dim taps in the kernel body.
    static constexpr int64_t kMaxTapsPerElement = int64_t(1) << 16;
    /// Taps per output element along a dim resized by `scale`: 1 (nearest),
    /// 2 (linear) or 4 (cubic), or the antialias filter's 2 - 2 * first tap
    /// when downscaling; a double, since a tiny scale makes it huge.
    static double getTapCount(llvm::StringRef mode, bool antialias,
                              double scale);
    /// The antialias filter's first tap offset, floor(-support / scale) + 1
    /// (support 1 for linear, 2 for cubic), for a bounded getTapCount.
    static int64_t getFirstAntialiasTap(bool linear, double scale);
    /// Product of getTapCount over the dims that are resized.
    double getTapsPerElement();
  }];
}

def Ridge_GridSampleOp : Ridge_Op<"grid_sample", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Samples an image at normalized grid locations (GridSample)";
  let description = [{
    ONNX GridSample-16/20: `input` is [N, C, H, W], `grid` is
    [N, Ho, Wo, 2] holding (x, y) in [-1, 1]; the result is [N, C, Ho, Wo].
    Volumetric inputs [N, C, D, H, W] take a grid [N, Do, Ho, Wo, 3] of
    (x, y, z). `mode` is "bilinear" (n-linear for volumes), "nearest"
    (round half to even) or "bicubic" (A = -0.75, 2-d only);
    `padding_mode` is "zeros", "border" or "reflection"; with
    `align_corners`, -1 and 1 are the centers of the corner pixels rather
    than their outer edges.
    FLOPs: about 10 per tap per output element.
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$grid,
                       StrAttr:$mode, StrAttr:$padding_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grid attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_RoiAlignOp : Ridge_Op<"roi_align", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Average or max of bilinear samples per region bin (RoiAlign)";
  let description = [{
    ONNX RoiAlign: `input` is [N, C, H, W], `rois` [R, 4] holds (x1, y1, x2,
    y2) in input coordinates times 1 / `spatial_scale`, `batch_indices` [R]
    picks the image of each region. Each region is split into
    `output_height` x `output_width` bins, each sampled on a
    `sampling_ratio` x `sampling_ratio` grid (positive: the adaptive grid of
    sampling_ratio 0 depends on the data). With `half_pixel` the region is
    shifted by -0.5 pixel; without it (output_half_pixel) its size is at
    least 1. The result is [R, C, output_height, output_width].
    FLOPs: about 12 per sample.
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$rois,
                       Ridge_Tensor:$batch_indices, StrAttr:$mode,
                       I64Attr:$output_height, I64Attr:$output_width,
                       I64Attr:$sampling_ratio, F32Attr:$spatial_scale,
                       BoolAttr:$half_pixel);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $rois `,` $batch_indices attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def Ridge_QuantizeLinearOp : Ridge_Op<"quantize_linear", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "saturate(round_half_even(x / scale) + zero_point)";
  let description = [{
    ONNX QuantizeLinear. `scale` (float, like `input`) and `zero_point` (the
    8-bit result type) are scalars (rank 0 or one element) or 1-D along
    `axis` (per-axis quantization). The result saturates to the range of the
    zero point's type. With a float8 zero point (which ONNX requires to be
    zero) the result is x / scale cast to that type, rounding to nearest
    even; `saturate` (QuantizeLinear-19) then says what overflow gives, as
    for ridge.cast.
    FLOPs: 4 per element (divide, round, add, clamp).
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$scale,
                       Ridge_Tensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:`
    functional-type(operands, results)
  }];
}

def Ridge_DequantizeLinearOp : Ridge_Op<"dequantize_linear", [
    InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "(x - zero_point) * scale";
  let description = [{
    ONNX DequantizeLinear. `zero_point` has the input's integer type, the
    result has `scale`'s float type; both are scalars or 1-D along `axis`.
    A float8 input (whose zero point ONNX requires to be zero) gives
    x * scale.
    FLOPs: 2 per element.
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_FloatTensor:$scale,
                       Ridge_Tensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:`
    functional-type(operands, results)
  }];
}

def Ridge_DynamicQuantizeLinearOp : Ridge_Op<"dynamic_quantize_linear", [
    InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "uint8 quantization with a scale and zero point from the data";
  let description = [{
    ONNX DynamicQuantizeLinear: scale = (max(0, max(x)) - min(0, min(x))) /
    255, zero_point = saturate(round(-min(0, min(x)) / scale)), and
    y = saturate(round(x / scale) + zero_point), all ui8.
    FLOPs: 2 per element for min/max, 4 per element to quantize.
  }];
  let arguments = (ins Ridge_FloatTensor:$input);
  let results = (outs Ridge_Tensor:$result, Ridge_FloatTensor:$scale,
                      Ridge_Tensor:$zero_point);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type(results)";
}

#endif // RIDGE_NN_OPS
