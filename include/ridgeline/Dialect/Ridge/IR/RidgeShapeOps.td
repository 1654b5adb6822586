//===- RidgeShapeOps.td - ridge Shape ops -----------------*- tablegen -*-===//
//
// shape computation and data movement (concat, slice, gather, pad, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
// Everything that decides a result shape (axes, starts, pads, repeats, k,
// depth) is an attribute: ONNX passes many of them as tensors, and the
// importer requires those to be constants and normalizes them (negative
// axes, clamped slice bounds) so that the ops here only see canonical values.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_SHAPE_OPS
#define RIDGE_SHAPE_OPS

// Index operands: ONNX uses int32 or int64 for gather/scatter indices.
def Ridge_IndexTensor : RankedTensorOf<[I32, I64]>;

def Ridge_ConcatOp : Ridge_Op<"concat", [InferTypeOpAdaptor,
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Joins tensors along one axis (ONNX Concat)";
  let description = [{
    All inputs share rank and element type and agree on every dimension but
    `axis` (non-negative), along which the result is their concatenation.
    FLOPs: 0. Bytes: default (every input read once, the result written).

    ```mlir
    %0 = ridge.concat %a, %b {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Ridge_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasFolder = 1;
}

def Ridge_SliceOp : Ridge_Op<"slice", [InferTypeOpAdaptor,
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "Strided window of a tensor (ONNX Slice)";
  let description = [{
    Result dimension `d` has `sizes[d]` elements; element `i` of it reads
    input index `starts[d] + i * steps[d]`. Steps may be negative (reversed
    windows) but not zero; every index read must be in bounds. The importer
    turns ONNX starts/ends/axes/steps (negative indices, clamping,
    INT64_MIN/INT64_MAX sentinels) into this normalized form.
    FLOPs: 0. Bytes: 2 * |result| (only the window is read).
  }];
  let arguments = (ins Ridge_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$sizes, DenseI64ArrayAttr:$steps);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` $starts `sizes` $sizes `steps` $steps attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_GatherOp : Ridge_Op<"gather", [InferTypeOpAdaptor,
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "Takes entries along one axis by index (ONNX Gather)";
  let description = [{
    result[i_0.., j_0.., k_0..] = data[i_0.., indices[j_0..], k_0..] where
    `axis` (non-negative) is the gathered dimension. Negative indices count
    from the end; out-of-range indices are clamped into range (ONNX leaves
    them undefined) so that no read leaves the tensor.
    FLOPs: 0. Bytes: 2 * |result| + |indices| (only gathered rows are read).
  }];
  let arguments = (ins Ridge_Tensor:$data, Ridge_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ridge_GatherElementsOp : Ridge_Op<"gather_elements", [InferTypeOpAdaptor,
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "Elementwise indexed read along one axis (ONNX GatherElements)";
  let description = [{
    The result has the shape of `indices` (same rank as `data`):
    result[p] = data[p with p[axis] replaced by indices[p]]. Negative
    indices count from the end; out-of-range ones are clamped.
    FLOPs: 0. Bytes: 2 * |result| + |indices|.
  }];
  let arguments = (ins Ridge_Tensor:$data, Ridge_IndexTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Ridge_GatherNDOp : Ridge_Op<"gather_nd", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "Gathers slices by index tuples (ONNX GatherND)";
  let description = [{
    The last dimension of `indices` holds index tuples of length `k` into
    `data` after its first `batch_dims` dimensions (which `indices` shares).
    Result shape: indices.shape[:-1] ++ data.shape[batch_dims + k:].
    Negative indices count from the end; out-of-range ones are clamped.
    FLOPs: 0. Bytes: 2 * |result| + |indices|.
  }];
  let arguments = (ins Ridge_Tensor:$data, Ridge_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def Ridge_ScatterElementsOp : Ridge_Op<"scatter_elements", [
    AllTypesMatch<["data", "result"]>,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Writes updates at indexed positions along one axis "
                "(ONNX ScatterElements, Scatter)";
  let description = [{
    A copy of `data` where, for every position p of `updates` (same shape as
    `indices`), the element at p with p[axis] replaced by indices[p] becomes
    updates[p] (`reduction` = "none") or is combined with it ("add", "mul",
    "max", "min"). Updates apply in row-major order, so with "none" the last
    duplicate wins. Negative indices count from the end; out-of-range ones are
    clamped. FLOPs: 0 for "none", else 1 per update element. Bytes:
    default.
  }];
  let arguments = (ins Ridge_Tensor:$data, Ridge_IndexTensor:$indices,
                       Ridge_Tensor:$updates, I64Attr:$axis,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_ScatterNDOp : Ridge_Op<"scatter_nd", [
    AllTypesMatch<["data", "result"]>,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Writes slices at index tuples (ONNX ScatterND)";
  let description = [{
    The last dimension of `indices` (shape [..., k]) holds index tuples into
    the first k dimensions of `data`; `updates` has shape
    indices.shape[:-1] ++ data.shape[k:]. Each slice is written
    (`reduction` = "none") or combined ("add", "mul", "max", "min") in
    row-major order. Negative indices count from the end; out-of-range ones
    are clamped. FLOPs: 0 for "none", else 1 per update element. Bytes:
    default.
  }];
  let arguments = (ins Ridge_Tensor:$data, Ridge_IndexTensor:$indices,
                       Ridge_Tensor:$updates,
                       DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_TensorScatterOp : Ridge_Op<"tensor_scatter", [
    AllTypesMatch<["past", "result"]>,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Writes a sequence into a cache per batch (ONNX TensorScatter)";
  let description = [{
    `past` [B, ..., S_max, ...] with the sequence dim at `axis` (not 0);
    `update` has the same shape but S along `axis`. For batch b the update
    is written at sequence positions write_indices[b] + i (i < S), modulo
    S_max when `circular`; everything else keeps `past`. Without
    `write_indices` every batch writes from position 0. Linear mode
    positions must be in range (ONNX leaves others undefined: they are
    dropped here). FLOPs: 0. Bytes: default (the result is a full copy).
  }];
  let arguments = (ins Ridge_Tensor:$past, Ridge_Tensor:$update,
                       Optional<Ridge_IndexTensor>:$write_indices,
                       I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$circular);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $past `,` $update (`,` $write_indices^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_ExpandOp : Ridge_Op<"expand", [
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Broadcasts a tensor to a larger static shape (ONNX Expand)";
  let description = [{
    Numpy broadcasting of `input` to the result type, which must be the
    broadcast of the input shape with itself (ONNX Expand broadcasts in both
    directions; the importer computes the resulting shape).
    FLOPs: 0. Bytes: default (|input| + |result|).
  }];
  let arguments = (ins Ridge_Tensor:$input);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_TileOp : Ridge_Op<"tile", [InferTypeOpAdaptor,
    Ridge_MovementFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Repeats a tensor along each dimension (ONNX Tile)";
  let description = [{
    Result dimension d has input.shape[d] * repeats[d] elements;
    result[i] = input[i mod input.shape].
    FLOPs: 0. Bytes: default (|input| + |result|).
  }];
  let arguments = (ins Ridge_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $repeats attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def Ridge_PadOp : Ridge_Op<"pad", [InferTypeOpAdaptor,
    Ridge_MovementFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Pads a tensor (ONNX Pad)";
  let description = [{
    `pads` holds the non-negative padding before each dimension, then after
    each dimension (ONNX layout; the importer turns negative ONNX pads into
    a slice). Modes: "constant" fills with the optional scalar `value`
    (zero without it), "edge" repeats the border element, "reflect" mirrors
    without repeating the border, "wrap" continues periodically.
    FLOPs: 0. Bytes: default (|input| + value + |result|).
  }];
  let arguments = (ins Ridge_Tensor:$input, Optional<Ridge_Tensor>:$value,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedStrAttr<StrAttr, "constant">:$mode);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input (`,` $value^)? `pads` $pads attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_TriluOp : Ridge_Op<"trilu", [SameOperandsAndResultType,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Keeps the upper or lower triangle of matrices (ONNX Trilu)";
  let description = [{
    Over the last two dimensions (i, j): `upper` keeps elements with
    j - i >= k, otherwise those with j - i <= k; the rest become zero.
    FLOPs: 1 per element (a select). Bytes: default.
  }];
  let arguments = (ins Ridge_Tensor:$input,
                       DefaultValuedAttr<I64Attr, "0">:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$upper);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_OneHotOp : Ridge_Op<"one_hot", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "One-hot encoding (ONNX OneHot)";
  let description = [{
    Inserts a dimension of size `depth` at `axis` (non-negative, in the
    result's rank). The result is values[1] where the position along `axis`
    equals the index (negative indices count from `depth`; non-integer
    indices are truncated) and values[0] elsewhere.
    FLOPs: 1 per result element (a select). Bytes: default.
  }];
  let arguments = (ins Ridge_Tensor:$indices, Ridge_Tensor:$values,
                       I64Attr:$depth, I64Attr:$axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $indices `,` $values attr-dict `:` functional-type(operands, results)
  }];
}

def Ridge_EyeOp : Ridge_Op<"eye", [
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "A 2-D matrix with ones on one diagonal (ONNX EyeLike)";
  let description = [{
    Element (i, j) is 1 where j - i == k and 0 elsewhere.
    FLOPs: 0. Bytes: default (the result is written; there is no input).
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_ReverseSequenceOp : Ridge_Op<"reverse_sequence", [
    AllTypesMatch<["input", "result"]>,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Reverses the first sequence_lens[b] steps of each batch "
                "entry (ONNX ReverseSequence)";
  let description = [{
    For batch entry b (along `batch_axis`), the first sequence_lens[b]
    elements along `time_axis` are reversed; the rest are copied. Lengths are
    clamped to [0, time steps].
    FLOPs: 0. Bytes: default (input + sequence_lens + result).
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_IndexTensor:$sequence_lens,
                       I64Attr:$batch_axis, I64Attr:$time_axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $sequence_lens attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // RIDGE_SHAPE_OPS
