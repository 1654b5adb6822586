//===- RidgeFusionOps.td - Fusion groups -------------------*- tablegen -*-===//
//
// Included from RidgeOps.td. A fusion group holds the graph ops that one
// kernel computes; `ridge-form-fusion-groups` creates them from the fusion
// plan and `ridge-outline-fusion-groups` turns each into a kernel function.
//
//===----------------------------------------------------------------------===//

def Ridge_FusionGroupOp : Op<Ridge_Dialect, "fusion_group", [
    SingleBlock, RecursiveMemoryEffects, RecursivelySpeculatable,
    Ridge_OpaqueFusion,
    DeclareOpInterfaceMethods<Ridge_CostOpInterface,
                              ["getFlops", "getMinBytes", "isContraction"]>]> {
  let summary = "The graph ops one kernel computes";
  let description = [{
    The body's ops run as one kernel: values from outside the region are its
    inputs, the values `ridge.yield`ed are its outputs. `name` names the
    kernel and `kind` says what it is built around: "pointwise",
    "reduction" (rows reduced together with the ops around them),
    "contraction" (a MatMul, Gemm or Conv with its epilogue and prologues),
    "movement" (pad, pool, resize with an epilogue) or "opaque" (an op that
    runs alone).

    Cost: the FLOPs of the body's ops; bytes are the kernel's external
    inputs read once (sliced or gathered inputs only for the elements read)
    and its used results written once. Intermediate values never reach
    device memory.

    ```mlir
    %0 = ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<4x8xf32> {
      %1 = ridge.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
      %2 = ridge.add %1, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
      ridge.yield %2 : tensor<4x8xf32>
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$kind);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "$name `kind` $kind (`->` type($results)^)? attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def Ridge_YieldOp : Op<Ridge_Dialect, "yield", [Pure, Terminator, ReturnLike,
    HasParent<"FusionGroupOp">]> {
  let summary = "The outputs of a fusion group";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}
