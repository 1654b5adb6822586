//===- RidgeElementwiseOps.td - ridge Elementwise ops ------*- tablegen -*-===//
//
// Elementwise math, comparison and logic ops beyond the arithmetic core.
// Included from RidgeOps.td, which defines Ridge_Op and the op base classes.
//
// All of them fold when every operand is a small dense constant so that the
// shape arithmetic exporters emit (Equal/Where/Mod on shape tensors) becomes
// constants while importing.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_ELEMENTWISE_OPS
#define RIDGE_ELEMENTWISE_OPS

// ONNX `bool` tensors.
def Ridge_BoolTensor : RankedTensorOf<[I1]>;
// Integer tensors, signless or unsigned.
def Ridge_IntegerTensor : RankedTensorOf<[AnySignlessInteger,
                                          AnyUnsignedInteger,
                                          AnySignedInteger]>;

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

class Ridge_FloatUnaryOp<string mnemonic, string onnxName>
    : Ridge_UnaryOp<mnemonic, onnxName, Ridge_FloatTensor> {
  let description = [{
    ONNX `}] # onnxName # [{` on floating-point tensors; f16 and bf16
    compute in f32. FLOPs: 1 per element.
  }];
  let hasFolder = 1;
}

def Ridge_SinOp : Ridge_FloatUnaryOp<"sin", "Sin">;
def Ridge_CosOp : Ridge_FloatUnaryOp<"cos", "Cos">;
def Ridge_TanOp : Ridge_FloatUnaryOp<"tan", "Tan">;
def Ridge_AsinOp : Ridge_FloatUnaryOp<"asin", "Asin">;
def Ridge_AcosOp : Ridge_FloatUnaryOp<"acos", "Acos">;
def Ridge_AtanOp : Ridge_FloatUnaryOp<"atan", "Atan">;
def Ridge_SinhOp : Ridge_FloatUnaryOp<"sinh", "Sinh">;
def Ridge_CoshOp : Ridge_FloatUnaryOp<"cosh", "Cosh">;
def Ridge_AsinhOp : Ridge_FloatUnaryOp<"asinh", "Asinh">;
def Ridge_AcoshOp : Ridge_FloatUnaryOp<"acosh", "Acosh">;
def Ridge_AtanhOp : Ridge_FloatUnaryOp<"atanh", "Atanh">;
def Ridge_FloorOp : Ridge_FloatUnaryOp<"floor", "Floor">;
def Ridge_CeilOp : Ridge_FloatUnaryOp<"ceil", "Ceil">;
def Ridge_RoundOp : Ridge_FloatUnaryOp<"round", "Round"> {
  let description = [{
    ONNX `Round`: rounds to the nearest integer, halves to even
    (`round(2.5) = 2`, `round(-1.5) = -2`). FLOPs: 1 per element.
  }];
}

def Ridge_SignOp : Ridge_UnaryOp<"sign", "Sign"> {
  let description = [{
    ONNX `Sign`: -1, 0 or 1 by the sign of the element; NaN stays NaN and
    unsigned integers give 0 or 1. FLOPs: 1 per element.
  }];
  let hasFolder = 1;
}

def Ridge_NotOp : Ridge_UnaryOp<"not", "Not", Ridge_IntegerTensor> {
  let description = [{
    ONNX `Not` (bool tensors) and `BitwiseNot` (integer tensors): flips every
    bit, which for `i1` is logical negation. FLOPs: 1 per element.
  }];
  let hasFolder = 1;
}

def Ridge_IsNaNOp : Ridge_Op<"is_nan", [InferTypeOpAdaptor,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise NaN test (ONNX IsNaN)";
  let description = [{
    True where the element is a NaN. The result is a bool tensor of the
    operand's shape. FLOPs: 1 per element.
  }];
  let arguments = (ins Ridge_FloatTensor:$input);
  let results = (outs Ridge_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Ridge_IsInfOp : Ridge_Op<"is_inf", [InferTypeOpAdaptor,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise infinity test (ONNX IsInf)";
  let description = [{
    True where the element is +inf (when `detect_positive`) or -inf (when
    `detect_negative`). FLOPs: 1 per element.
  }];
  let arguments = (ins Ridge_FloatTensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_positive,
                       DefaultValuedAttr<BoolAttr, "true">:$detect_negative);
  let results = (outs Ridge_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Binary ops
//===----------------------------------------------------------------------===//

class Ridge_LogicalOp<string mnemonic, string onnxName>
    : Ridge_Op<mnemonic, [InferTypeOpAdaptor,
        Ridge_ElementwiseFusion,
        DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise bitwise " # onnxName # " with broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{` on bool tensors and `Bitwise}] # onnxName #
    [{` on integer tensors: one operation, since on `i1` the bitwise
    operation is the logical one. Both operands (of one element type)
    broadcast (numpy rules) to the result shape. FLOPs: 1 per result
    element.
  }];
  let arguments = (ins Ridge_IntegerTensor:$lhs, Ridge_IntegerTensor:$rhs);
  let results = (outs Ridge_IntegerTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ridge_AndOp : Ridge_LogicalOp<"and", "And">;
def Ridge_OrOp : Ridge_LogicalOp<"or", "Or">;
def Ridge_XorOp : Ridge_LogicalOp<"xor", "Xor">;

class Ridge_CompareOp<string mnemonic, string onnxName>
    : Ridge_Op<mnemonic, [InferTypeOpAdaptor,
        Ridge_ElementwiseFusion,
        DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise " # onnxName # " comparison with broadcasting";
  let description = [{
    ONNX `}] # onnxName # [{`: both operands (of one element type) broadcast
    (numpy rules) to the result shape; the result is a bool tensor. Unsigned
    integers compare unsigned; float comparisons with NaN are false.
    FLOPs: 1 per result element.
  }];
  let arguments = (ins Ridge_Tensor:$lhs, Ridge_Tensor:$rhs);
  let results = (outs Ridge_BoolTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ridge_EqualOp : Ridge_CompareOp<"equal", "Equal">;
def Ridge_LessOp : Ridge_CompareOp<"less", "Less">;
def Ridge_LessEqualOp : Ridge_CompareOp<"less_equal", "LessOrEqual">;
def Ridge_GreaterOp : Ridge_CompareOp<"greater", "Greater">;
def Ridge_GreaterEqualOp : Ridge_CompareOp<"greater_equal", "GreaterOrEqual">;

def Ridge_ModOp : Ridge_Op<"mod", [InferTypeOpAdaptor,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise remainder (ONNX Mod) with broadcasting";
  let description = [{
    With `fmod` false (integers only) the remainder takes the sign of the
    divisor, as Python's `%`; with `fmod` true it takes the sign of the
    dividend, as C's `fmod`. Floating-point operands with `fmod` false follow
    numpy's `mod` (ONNX's reference): a zero remainder takes the divisor's
    sign. An integer remainder by zero yields zero.
    FLOPs: 1 per result element.
  }];
  let arguments = (ins Ridge_Tensor:$lhs, Ridge_Tensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ridge_BitShiftOp : Ridge_Op<"bit_shift", [InferTypeOpAdaptor,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise bit shift (ONNX BitShift)";
  let description = [{
    Shifts each element of `lhs` by the matching element of `rhs` to the
    `left` or `right`. Unsigned values shift logically (zeros are shifted
    in); signed (signless) values shift arithmetically to the right (the
    sign is shifted in), as ONNX defines for signed types. Shift amounts
    compare unsigned: amounts of the bit width or more, negative ones
    included, shift every bit out (zero, or the sign for an arithmetic right
    shift). FLOPs: 1 per result element.
  }];
  let arguments = (ins Ridge_IntegerTensor:$lhs, Ridge_IntegerTensor:$rhs,
                       StrAttr:$direction);
  let results = (outs Ridge_IntegerTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Ridge_SelectOp : Ridge_Op<"select", [InferTypeOpAdaptor,
    Ridge_ElementwiseFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface, ["getFlops"]>]> {
  let summary = "Elementwise choice by a bool condition (ONNX Where)";
  let description = [{
    `condition ? true_value : false_value`, with all three operands
    broadcast (numpy rules) to the result shape. FLOPs: 1 per result
    element.
  }];
  let arguments = (ins Ridge_BoolTensor:$condition, Ridge_Tensor:$true_value,
                       Ridge_Tensor:$false_value);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Ridge_BitCastOp : Ridge_Op<"bitcast", [SameOperandsAndResultShape,
    Ridge_ViewFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "getMinBytes"]>]> {
  let summary = "Reinterprets the bits of each element (ONNX BitCast)";
  let description = [{
    Each element's bits read as the result element type, which has the same
    storage width; bool counts as one byte (0 or 1), as in ONNX tensors, and
    a byte reinterpreted as bool is true when non-zero.
    FLOPs: 0. Bytes: 0 (a view), except a bitcast to bool from another type,
    which reads and writes every element.
  }];
  let arguments = (ins Ridge_Tensor:$input);
  let results = (outs Ridge_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // RIDGE_ELEMENTWISE_OPS
