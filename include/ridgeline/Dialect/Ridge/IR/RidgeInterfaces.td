//===- RidgeInterfaces.td - Interfaces of the ridge dialect -*- tablegen -*-===//
//
// The cost interface is the contract between graph ops and the roofline
// analysis: each op states its arithmetic work and the least device-memory
// traffic any implementation of it must cause. The fusion interface is the
// contract between graph ops and the fusion planner: each op states what it
// can be inside a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_INTERFACES
#define RIDGE_INTERFACES

include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Ridge_CostOpInterface : OpInterface<"CostOpInterface"> {
  let description = [{
    Reports the work of a graph op for roofline analysis.

    Conventions (all counts are for the op's static shapes):
    * a multiply-add counts as 2 FLOPs; add, sub, mul, div, max, compare and
      select count 1 FLOP per element; a transcendental (exp, tanh, erf, log,
      sqrt, sigmoid) counts as 1 FLOP per element, like the SFU instruction it
      becomes; a reduction of N elements counts N - 1 FLOPs per output;
      data movement (transpose, slice, gather, nearest resize, ...), casts
      and index arithmetic count 0;
    * minimum bytes assume every operand is read once and every used result
      written once from/to device memory, at the tensor's element size (i1
      and sub-byte types take a byte); a result without uses is not written;
      ops that are views of their operand (reshape) move zero bytes, and
      constants are charged to the ops that read them;
    * contractions (isContraction) are ops whose FLOPs are matrix
      multiply-adds that run on tensor cores.

    The per-op formulas are stated in each op's description or beside its
    getFlops/getMinBytes implementation, and collected in
    docs/cost-model.md.

    An op whose cost is unknown (dynamic shapes) returns failure-like -1.
  }];
  let cppNamespace = "::mlir::ridge";

  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the floating-point operations the op performs, or -1 "
               "when shapes are not static.",
      /*retTy=*/"int64_t",
      /*methodName=*/"getFlops",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return 0;">,
    InterfaceMethod<
      /*desc=*/"Returns the minimum device-memory bytes the op moves: each "
               "tensor operand read once and each result written once, or -1 "
               "when shapes are not static.",
      /*retTy=*/"int64_t",
      /*methodName=*/"getMinBytes",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::ridge::detail::sumOperandAndResultBytes($_op);
      }]>,
    InterfaceMethod<
      /*desc=*/"Returns true when the op's FLOPs are matrix multiply-adds, "
               "which the GPU lowering maps onto tensor cores; the roofline "
               "then bounds the op by the tensor-core peak at the chosen "
               "precision rather than by the SIMT (CUDA core) peak.",
      /*retTy=*/"bool",
      /*methodName=*/"isContraction",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return false;">,
  ];
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def Ridge_FusionRole : I32Enum<"FusionRole",
    "what a graph op can be inside a kernel (FusionOpInterface)", [
      I32EnumCase<"View", 0, "view">,
      I32EnumCase<"Elementwise", 1, "elementwise">,
      I32EnumCase<"Layout", 2, "layout">,
      I32EnumCase<"Reduction", 3, "reduction">,
      I32EnumCase<"Contraction", 4, "contraction">,
      I32EnumCase<"Movement", 5, "movement">,
      I32EnumCase<"Opaque", 6, "opaque">,
      I32EnumCase<"Attention", 7, "attention">
    ]> {
  let cppNamespace = "::mlir::ridge";
}

def Ridge_FusionOpInterface : OpInterface<"FusionOpInterface"> {
  let description = [{
    Tells the fusion planner (lib/Analysis/FusionPlan.cpp) what a graph op
    can be inside a kernel. The planner only reads these methods; which
    merges of two groups it offers for each pair of roles is its own rule
    (docs/fusion.md).

    Roles (`FusionRole`):
    * `View`: no data of its own, joins either neighbour (reshape, bitcast);
    * `Elementwise`: computes each output element from the matching
      (broadcast) input elements: arithmetic, math, logic, compares, select,
      casts, GELU, trilu;
    * `Layout`: re-indexes what it reads and folds into the reads of its
      consumer or the writes of its producer: transpose, slice, expand,
      gather, gather_elements, concat;
    * `Reduction`: reduces contiguous rows, the trailing axes of its first
      operand, possibly with the arithmetic around it: reduce and
      (log-)softmax over trailing axes, layer_norm, rms_norm. Such an op
      also states its row count (`getReductionRows`);
    * `Contraction`: matrix multiply-add that takes an elementwise epilogue
      and simple prologues: matmul, gemm, conv;
    * `Movement`: data movement that computes its output elements
      independently and takes an elementwise epilogue: pad, tile, pool,
      resize;
    * `Opaque`: runs as a kernel of its own (everything else);
    * `Attention`: one attention computed with an online softmax
      (ridge.attention whose scores nothing reads): a kernel of its own that
      reads its operands element by element, so layout and elementwise
      producers that feed only it (the head split, RoPE) fold into its reads.

    The default `getFusionRole` is fail-safe: `Opaque`, so an op that states
    nothing is never fused. An op whose role is fixed states it with one of
    the trait lists below instead of an implementation of its own:
    `Ridge_ViewFusion`, `Ridge_ElementwiseFusion`, `Ridge_LayoutFusion`,
    `Ridge_ContractionFusion`, `Ridge_MovementFusion`, or
    `Ridge_OpaqueFusion` (the interface with its defaults). An op whose role
    depends on its attributes (a reduction over trailing axes or not)
    implements the methods with
    `DeclareOpInterfaceMethods<Ridge_FusionOpInterface, [...]>`.

    Every op of the dialect except terminators implements the interface;
    `ridge-cost-coverage-test` fails when one does not.
  }];
  let cppNamespace = "::mlir::ridge";

  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns what the op can be inside a kernel. The default is "
               "the role of the op's fusion role trait (Ridge_ViewFusion, "
               "...), and Opaque for an op without one.",
      /*retTy=*/"::mlir::ridge::FusionRole",
      /*methodName=*/"getFusionRole",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::ridge::detail::getFusionRoleFromTraits<ConcreteOp>();
      }]>,
    InterfaceMethod<
      /*desc=*/"Returns the number of rows a Reduction-role op reduces: the "
               "elements of its reduced result, each owning one contiguous "
               "row of its first operand. Returns failure when the shapes "
               "are not static or the op reduces no rows.",
      /*retTy=*/"::mlir::FailureOr<int64_t>",
      /*methodName=*/"getReductionRows",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return ::mlir::failure();">,
  ];
}

// The fusion role traits: an op takes its role from the default
// getFusionRole() by carrying one of these lists, each the interface plus a
// marker trait (ridgeline/Dialect/Ridge.h) that the default reads.
class Ridge_FusionRoleTrait<string name>
    : NativeOpTrait<name # "Fusion"> {
  let cppNamespace = "::mlir::ridge::FusionTrait";
}
def Ridge_ViewFusion : TraitList<[Ridge_FusionOpInterface,
                                  Ridge_FusionRoleTrait<"View">]>;
def Ridge_ElementwiseFusion : TraitList<[Ridge_FusionOpInterface,
                                         Ridge_FusionRoleTrait<"Elementwise">]>;
def Ridge_LayoutFusion : TraitList<[Ridge_FusionOpInterface,
                                    Ridge_FusionRoleTrait<"Layout">]>;
def Ridge_ContractionFusion : TraitList<[Ridge_FusionOpInterface,
                                         Ridge_FusionRoleTrait<"Contraction">]>;
def Ridge_MovementFusion : TraitList<[Ridge_FusionOpInterface,
                                      Ridge_FusionRoleTrait<"Movement">]>;
// Opaque: the interface's defaults, stated so that the op is covered.
def Ridge_OpaqueFusion : TraitList<[Ridge_FusionOpInterface]>;

#endif // RIDGE_INTERFACES
