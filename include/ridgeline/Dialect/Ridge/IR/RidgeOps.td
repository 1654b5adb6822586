//===- RidgeOps.td - ridge dialect operations --------------*- tablegen -*-===//
//
// One op per ONNX concept. Ops infer their result types from operands and
// attributes (ONNX shape inference happens while importing), verify their
// operands, and report their cost through CostOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_OPS
#define RIDGE_OPS

include "RidgeBase.td"
include "RidgeInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Ridge_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ridge_Dialect, mnemonic, !listconcat(traits, [Pure])>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Ridge_ConstantOp : Ridge_Op<"constant", [ConstantLike, InferTypeOpAdaptor,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "A constant tensor: an ONNX initializer or Constant node";
  let description = [{
    Holds a weight or constant. Large weights are imported as
    `dense_resource` blobs so that IR dumps never print them inline; small
    constants (shapes, scalars) stay `dense` so that folders can read them.
    FLOPs and bytes: 0; the ops that read a constant pay for its bytes.

    ```mlir
    %w = ridge.constant dense_resource<fc1.weight> : tensor<256x1024xf32>
    %s = ridge.constant dense<[1, 128]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class Ridge_BinaryOp<string mnemonic, string onnxName>
    : Ridge_Op<mnemonic, [InferTypeOpAdaptor,
        Ridge_ElementwiseFusion,
        DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise " # onnxName # " with multidirectional broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{`: both operands broadcast (numpy rules) to the
    result shape; operand element types must match.
    FLOPs: 1 per result element.
  }];
  let arguments = (ins Ridge_Tensor:$lhs, Ridge_Tensor:$rhs);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Ridge_AddOp : Ridge_BinaryOp<"add", "Add"> { let hasFolder = 1; }
def Ridge_SubOp : Ridge_BinaryOp<"sub", "Sub"> { let hasFolder = 1; }
def Ridge_MulOp : Ridge_BinaryOp<"mul", "Mul"> { let hasFolder = 1; }
def Ridge_DivOp : Ridge_BinaryOp<"div", "Div"> { let hasFolder = 1; }
def Ridge_PowOp : Ridge_BinaryOp<"pow", "Pow"> { let hasFolder = 1; }
def Ridge_MaxOp : Ridge_BinaryOp<"max", "Max"> { let hasFolder = 1; }
def Ridge_MinOp : Ridge_BinaryOp<"min", "Min"> { let hasFolder = 1; }

class Ridge_UnaryOp<string mnemonic, string onnxName,
                    Type operandType = Ridge_Tensor>
    : Ridge_Op<mnemonic, [SameOperandsAndResultType,
        Ridge_ElementwiseFusion,
        DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise " # onnxName;
  let description = [{
    ONNX `}] # onnxName # [{`. FLOPs: 1 per element.
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Ridge_ReluOp : Ridge_UnaryOp<"relu", "Relu"> { let hasFolder = 1; }
def Ridge_NegOp : Ridge_UnaryOp<"neg", "Neg"> { let hasFolder = 1; }
def Ridge_AbsOp : Ridge_UnaryOp<"abs", "Abs"> { let hasFolder = 1; }
def Ridge_TanhOp : Ridge_UnaryOp<"tanh", "Tanh", Ridge_FloatTensor>;
def Ridge_ExpOp : Ridge_UnaryOp<"exp", "Exp", Ridge_FloatTensor>;
def Ridge_LogOp : Ridge_UnaryOp<"log", "Log", Ridge_FloatTensor>;
def Ridge_SqrtOp : Ridge_UnaryOp<"sqrt", "Sqrt", Ridge_FloatTensor> {
  let hasFolder = 1;
}
def Ridge_ErfOp : Ridge_UnaryOp<"erf", "Erf", Ridge_FloatTensor>;
def Ridge_SigmoidOp : Ridge_UnaryOp<"sigmoid", "Sigmoid", Ridge_FloatTensor>;
def Ridge_ReciprocalOp : Ridge_UnaryOp<"reciprocal", "Reciprocal",
                                       Ridge_FloatTensor> {
  let hasFolder = 1;
}

def Ridge_CastOp : Ridge_Op<"cast", [SameOperandsAndResultShape,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Element type conversion (ONNX Cast)";
  let description = [{
    Converts each element to the result element type with ONNX semantics:
    float to integer truncates toward zero, integer to float rounds to
    nearest, anything to `i1` (bool) tests for non-zero. To a float8 type
    (f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ) the value rounds to nearest
    even; `saturate` (ONNX Cast-19) clamps what overflows, infinities
    included, to the largest finite value, else overflow gives infinity
    (f8E5M2) or NaN. `saturate` has no effect on other result types.
    FLOPs: 0 (a conversion, not arithmetic).
  }];
  let arguments = (ins Ridge_Tensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Ridge_MatMulOp : Ridge_Op<"matmul", [InferTypeOpAdaptor,
    Ridge_ContractionFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "Matrix product with numpy semantics (ONNX MatMul)";
  let description = [{
    Rank-1 operands are promoted (a leading or trailing 1 is inserted and
    removed again); leading batch dimensions broadcast.
    FLOPs: 2 * batch * M * N * K.
  }];
  let arguments = (ins Ridge_Tensor:$lhs, Ridge_Tensor:$rhs);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Ridge_GemmOp : Ridge_Op<"gemm", [InferTypeOpAdaptor,
    Ridge_ContractionFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "isContraction"]>]> {
  let summary = "alpha * op(A) * op(B) + beta * C (ONNX Gemm)";
  let description = [{
    `A` and `B` are rank 2; `trans_a`/`trans_b` transpose them; the optional
    bias `C` broadcasts unidirectionally to the M x N result.
    FLOPs: 2*M*N*K, plus M*N for alpha != 1, plus M*N for the bias add and
    M*N more for beta != 1.
  }];
  let arguments = (ins Ridge_Tensor:$a, Ridge_Tensor:$b,
                       Optional<Ridge_Tensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Ridge_ReshapeOp : Ridge_Op<"reshape", [
    Ridge_ViewFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getMinBytes"]>]> {
  let summary = "Reinterprets a tensor with a new static shape (a view)";
  let description = [{
    ONNX Reshape, Flatten, Squeeze and Unsqueeze once the target shape is
    known. The element count must not change. A view: FLOPs 0, bytes 0.
  }];
  let arguments = (ins Ridge_Tensor:$input);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_TransposeOp : Ridge_Op<"transpose", [InferTypeOpAdaptor,
    Ridge_LayoutFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface>]> {
  let summary = "Permutes dimensions (ONNX Transpose)";
  let description = [{
    Result dimension `i` is input dimension `perm[i]`.
    FLOPs: 0 (data movement).
  }];
  let arguments = (ins Ridge_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $perm attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

def Ridge_SoftmaxOp : Ridge_Op<"softmax", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Ridge_FusionOpInterface,
                              ["getFusionRole", "getReductionRows"]>,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Softmax along one axis (ONNX Softmax-13)";
  let description = [{
    exp(x - max(x)) / sum(exp(x - max(x))) along `axis` (non-negative).
    Older opsets' flatten-to-2-D semantics are expressed with reshapes by the
    importer. FLOPs per row of N: N-1 (max) + N (sub) + N (exp) + N-1 (sum) +
    N (div).
  }];
  let arguments = (ins Ridge_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Ridge_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

include "RidgeElementwiseOps.td"
include "RidgeShapeOps.td"
include "RidgeReductionOps.td"
include "RidgeNNOps.td"
include "RidgeRecurrentOps.td"
include "RidgeSignalOps.td"
include "RidgeTransformerOps.td"
include "RidgeFusionOps.td"

#endif // RIDGE_OPS
