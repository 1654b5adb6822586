//===- RidgeInterfaces.td - Cost interface of the ridge dialect -*- tablegen -*-===//
//
// The cost interface is the contract between graph ops and the roofline
// analysis: each op states its arithmetic work and the least device-memory
// traffic any implementation of it must cause.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGE_INTERFACES
#define RIDGE_INTERFACES

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

#endif // RIDGE_INTERFACES
