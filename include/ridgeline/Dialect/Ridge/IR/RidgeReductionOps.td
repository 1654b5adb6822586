//===- RidgeReductionOps.td - ridge Reduction ops -----------------*- tablegen -*-===//
//
// reductions and normalizations (reduce, arg-reduce, layer norm, ...).
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_REDUCTION_OPS
#define RIDGE_REDUCTION_OPS

include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Ridge_ReduceKind : I32EnumAttr<"ReduceKind",
    "how ridge.reduce combines the elements it reduces", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Mean", 1, "mean">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">,
      I32EnumAttrCase<"Prod", 4, "prod">
    ]> {
  let cppNamespace = "::mlir::ridge";
}

def Ridge_ArgReduceKind : I32EnumAttr<"ArgReduceKind",
    "which extremum ridge.arg_reduce locates", [
      I32EnumAttrCase<"ArgMax", 0, "argmax">,
      I32EnumAttrCase<"ArgMin", 1, "argmin">
    ]> {
  let cppNamespace = "::mlir::ridge";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

def Ridge_ReduceOp : Ridge_Op<"reduce", [InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface,
                              ["getFusionRole", "getReductionRows"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Reduction over a set of axes (ONNX ReduceSum/Mean/Max/Min/Prod)";
  let description = [{
    Combines the elements along `axes` (sorted, unique, non-negative) with
    `kind`. With `keepdims` the reduced dimensions stay as size 1, otherwise
    they are dropped. An empty `axes` list reduces nothing (the result is the
    input); the importer spells ONNX's "all axes" default out.

    Reducing an empty set yields the identity of `kind`: 0 for sum, 1 for
    prod, the lowest value (-inf for floats) for max and the highest for min.
    Integer mean divides with truncation. The ReduceL1/L2/LogSum/LogSumExp/
    SumSquare variants are expressed by the importer with elementwise ops
    around this op.

    FLOPs: N - 1 per output for N reduced elements, i.e. |input| - |result|
    (mean adds one divide per output). Bytes: default.

    ```mlir
    %r = ridge.reduce sum %x {axes = array<i64: 1>, keepdims = true}
        : tensor<3x4xf32> -> tensor<3x1xf32>
    ```
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_ReduceKind:$kind,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $kind $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_ArgReduceOp : Ridge_Op<"arg_reduce", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Index of the maximum or minimum along an axis (ONNX ArgMax/ArgMin)";
  let description = [{
    Returns the i64 position along `axis` (non-negative) of the largest
    (`argmax`) or smallest (`argmin`) element. Ties resolve to the first
    position, or to the last with `select_last_index`. With `keepdims` the
    reduced dimension stays as size 1.

    FLOPs: N - 1 compares per output for N elements along `axis`, i.e.
    |input| - |result|.
  }];
  let arguments = (ins Ridge_Tensor:$input, Ridge_ArgReduceKind:$kind,
                       I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $kind $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Ridge_CumSumOp : Ridge_Op<"cumsum", [SameOperandsAndResultType,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Cumulative sum along an axis (ONNX CumSum)";
  let description = [{
    Running sum along `axis` (non-negative). `exclusive` leaves out the
    element itself; `reverse` sums from the end of the axis.
    FLOPs: one add per element.
  }];
  let arguments = (ins Ridge_Tensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_CumProdOp : Ridge_Op<"cumprod", [SameOperandsAndResultType,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Cumulative product along an axis (ONNX CumProd)";
  let description = [{
    Running product along `axis` (non-negative). `exclusive` leaves out the
    element itself (the first product is 1); `reverse` multiplies from the
    end of the axis.
    FLOPs: one multiply per element.
  }];
  let arguments = (ins Ridge_Tensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_TopKOp : Ridge_Op<"topk", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "The k largest or smallest elements along an axis (ONNX TopK)";
  let description = [{
    Returns the `k` largest (or, without `largest`, smallest) elements along
    `axis` (non-negative) and their i64 positions, ordered best first. Equal
    values are ordered by position (lower index first), so the result is
    always sorted; ONNX allows that for `sorted = 0` too.
    FLOPs: one compare per input element per output slot (k selection
    passes).
  }];
  let arguments = (ins Ridge_Tensor:$input, I64Attr:$axis, I64Attr:$k,
                       DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Ridge_Tensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($values) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Ridge_EinsumOp : Ridge_Op<"einsum", [InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "Einstein summation (ONNX Einsum)";
  let description = [{
    Sum of products over the labels of `equation` that do not appear in the
    output. The equation uses lower/upper-case letters, may contain one
    `...` per term for broadcast dimensions, and may omit `->` (the output
    then holds the labels seen once, alphabetically, after the ellipsis
    dimensions). A label repeated within a term takes a diagonal.
    Operands share one element type.
    FLOPs: 2 per point of the iteration space with two or more operands;
    with one operand, points - |result| (the adds of a sum; 0 for a
    transpose or diagonal, which is then not a contraction either).

    ```mlir
    %c = ridge.einsum %a, %b {equation = "ij,jk->ik"}
        : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Ridge_Tensor>:$inputs, StrAttr:$equation);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The iteration space of the equation: one loop per label, output
    /// labels first (parallel), summed labels after them (reduction).
    /// Fills one indexing map per operand and one for the result, and the
    /// loop bounds. Size-1 ellipsis dims broadcast (constant-0 map entries).
    LogicalResult getLoopStructure(SmallVectorImpl<AffineMap> &maps,
                                   SmallVectorImpl<int64_t> &loopSizes,
                                   int64_t &numOutputLoops);
  }];
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

def Ridge_LogSoftmaxOp : Ridge_Op<"log_softmax", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface,
                              ["getFusionRole", "getReductionRows"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Log of softmax along one axis (ONNX LogSoftmax-13)";
  let description = [{
    x - max(x) - log(sum(exp(x - max(x)))) along `axis` (non-negative), which
    stays finite for large inputs. Older opsets' flatten-to-2-D semantics are
    expressed with reshapes by the importer.
    FLOPs per row of N: N-1 (max) + N (sub) + N (exp) + N-1 (sum) + 1 (log)
    + N (sub).
  }];
  let arguments = (ins Ridge_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_HardmaxOp : Ridge_Op<"hardmax", [SameOperandsAndResultType,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "One-hot of the first maximum along an axis (ONNX Hardmax-13)";
  let description = [{
    1 at the first position of the maximum along `axis` (non-negative), 0
    elsewhere. FLOPs per row of N: N - 1 compares for the argmax, N selects
    for the one-hot.
  }];
  let arguments = (ins Ridge_Tensor:$input, I64Attr:$axis);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Ridge_LayerNormOp : Ridge_Op<"layer_norm", [
    InferTypeOpAdaptor,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface,
                              ["getFusionRole", "getReductionRows"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Layer normalization over the trailing dims (ONNX LayerNormalization)";
  let description = [{
    Normalizes `input` over the dimensions from `axis` (non-negative) to the
    end: y = (x - mean) * inv_std_dev * scale + bias with
    inv_std_dev = 1 / sqrt(var + epsilon), `var` the biased variance.
    `scale` and the optional `bias` broadcast (numpy rules) to the
    normalized shape. The statistics are computed in the `stash_type`
    precision (1 = f32; otherwise the input's type) and returned as the
    `mean` and `inv_std_dev` results, whose normalized dims are size 1.
    FLOPs: about 8 per element (mean, centering, square, variance sum,
    scale, shift, normalize) plus a sqrt and division per row.
  }];
  let arguments = (ins Ridge_FloatTensor:$input, Ridge_FloatTensor:$scale,
                       Optional<Ridge_FloatTensor>:$bias, I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs Ridge_FloatTensor:$result, Ridge_FloatTensor:$mean,
                      Ridge_FloatTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Ridge_LRNOp : Ridge_Op<"lrn", [SameOperandsAndResultType,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Local response normalization across channels (ONNX LRN)";
  let description = [{
    y = x / (bias + alpha / size * square_sum) ^ beta, where square_sum sums
    x^2 over the channels (dimension 1) c - floor((size - 1) / 2) to
    c + ceil((size - 1) / 2) that exist. Input rank >= 3.
    FLOPs: 2 per element per window position plus 4 per element.
  }];
  let arguments = (ins Ridge_FloatTensor:$input, I64Attr:$size,
                       DefaultValuedAttr<F32Attr, "1.0e-4">:$alpha,
                       DefaultValuedAttr<F32Attr, "0.75">:$beta,
                       DefaultValuedAttr<F32Attr, "1.0">:$bias);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

#endif // RIDGE_REDUCTION_OPS
