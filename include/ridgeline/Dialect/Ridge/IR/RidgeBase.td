//===- RidgeBase.td - ridge dialect definition -------------*- tablegen -*-===//

#ifndef RIDGE_BASE
#define RIDGE_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Ridge_Dialect : Dialect {
  let name = "ridge";
  let cppNamespace = "::mlir::ridge";
  let summary = "Ridgeline's graph dialect: one op per ONNX concept";
  let description = [{
    The `ridge` dialect is the level at which Ridgeline imports ONNX models and
    makes graph-level decisions (folding, composite matching, roofline
    analysis, fusion grouping) before lowering to linalg/tensor.

    Ops work on ranked tensors with value semantics. Elementwise ops follow
    ONNX multidirectional (numpy) broadcasting. Every op implements
    `CostOpInterface`, which reports FLOPs and minimum device-memory bytes,
    and `FusionOpInterface`, which tells the fusion planner its role.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let hasConstantMaterializer = 1;
}

// Tensors the graph dialect accepts: ranked tensors of the ONNX numeric types.
def Ridge_ElementType : AnyTypeOf<[AnyFloat, AnySignlessInteger,
                                    AnyUnsignedInteger, AnySignedInteger]>;
def Ridge_Tensor : RankedTensorOf<[Ridge_ElementType]>;
def Ridge_FloatTensor : RankedTensorOf<[AnyFloat]>;

#endif // RIDGE_BASE
