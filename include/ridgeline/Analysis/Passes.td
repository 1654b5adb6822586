//===- Passes.td - Ridgeline analysis passes ---------------*- tablegen -*-===//

#ifndef RIDGELINE_ANALYSIS_PASSES
#define RIDGELINE_ANALYSIS_PASSES

include "mlir/Pass/PassBase.td"

def AnnotateRooflinePass : Pass<"ridge-annotate-roofline", "::mlir::ModuleOp"> {
  let summary = "Attach each graph op's place on a GPU's roofline";
  let description = [{
    Runs the roofline analysis on the `ridge` graph and records its results as
    attributes, for tests and for reading IR:

    * every costed op gets `ridge.roofline = {flops, bytes, intensity,
      precision, ceiling_flops, bound, time_s}`: FLOPs and minimum
      device-memory bytes from CostOpInterface, their ratio, the format the
      op computes in, its compute ceiling (FLOP/s), the ceiling that binds
      ("memory" or "compute") and the predicted time max(FLOPs /
      ceiling_flops, bytes / bandwidth) in seconds; an op with dynamic
      shapes gets `ridge.roofline = "unknown"`;
    * the module gets `ridge.roofline.gpu = {name, precision, peak_flops,
      simt_peak_flops, bandwidth, ridge_point}`.

    The GPU and precision are the module's `ridge.target` (the default
    target when it has none); the options override them for tests. Each op
    is bounded by the ceiling of the format it computes in
    (`getComputeFormat`): a MatMul or Gemm with a `ridge.precision` (run
    `ridge-select-precision` first) or with bf16/f16 operands by the
    tensor-core peak of that format, every other op by the fp32 SIMT peak;
    the precision only sets the module's `peak_flops` and `ridge_point`.
    The pass changes no op; it fails on an unknown GPU, an unreadable spec
    file or a precision the GPU has no tensor cores for.
  }];
  let options = [
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU: A100-SXM-80GB, H100-SXM, H200, "
           "L4, B200, RTX-4090">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU by a JSON spec file">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's number format of contractions: fp32 "
           "(SIMT), tf32, fp16, bf16, fp8">,
  ];
}

#endif // RIDGELINE_ANALYSIS_PASSES
