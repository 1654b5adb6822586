//===- Pipelines.h - Ridgeline's compilation pipelines ------------*- C++
//-*-===//
//
// The stages of the compiler as pass pipelines, also registered in ridge-opt:
//
//   ridge-graph-to-linalg   graph dialect -> linalg on tensors (shared)
//   ridge-lower-cpu         linalg -> bufferized loops -> LLVM dialect
//   ridge-lower-gpu         linalg -> bufferized parallel loops -> GPU kernels
//                           -> NVVM -> gpu.binary (PTX or cubin) + host code
//
// Both back ends finish with the model ABI (ridge_model_run/_describe).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_PIPELINES_H
#define RIDGELINE_TARGET_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::ridge {

struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA architecture (sm_80, sm_90a)"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel object format: isa (PTX text, JIT-compiled by the "
                     "driver) or bin (cubin, needs ptxas)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit for ptxas (default: $CUDA_HOME, PATH)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> blockSize{*this, "block-size",
                                         llvm::cl::desc("Threads per block"),
                                         llvm::cl::init(256)};
};

struct GraphToLinalgOptions : public PassPipelineOptions<GraphToLinalgOptions> {
  PassOptions::Option<bool> fusion{
      *this, "fusion",
      llvm::cl::desc("Form roofline-driven fusion groups and lower each to "
                     "one kernel (off: one or more kernels per graph op)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> gpu{
      *this, "gpu",
      llvm::cl::desc("GPU whose roofline drives the fusion decisions"),
      llvm::cl::init("H100-SXM")};
  PassOptions::Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Number format of contractions for the fusion policy"),
      llvm::cl::init("bf16")};
};

/// Returns the PTX ISA feature string each supported chip needs; the NVVM
/// pipeline's +ptx60 default aborts for sm_80+ (toolchain notes, P7).
FailureOr<std::string> getPtxFeatures(StringRef chip);

/// Graph-level clean-up (folding, canonicalization, CSE) on the ridge
/// dialect: the graph that the roofline report and the lowering both see.
void buildGraphOptimizationPipeline(OpPassManager &pm);
void buildGraphToLinalgPipeline(OpPassManager &pm,
                                const GraphToLinalgOptions &options = {});
void buildCpuLoweringPipeline(OpPassManager &pm);
void buildGpuLoweringPipeline(OpPassManager &pm,
                              const GpuPipelineOptions &options);

/// Registers the three pipelines with the global pass registry (ridge-opt).
void registerRidgePipelines();

} // namespace mlir::ridge

#endif // RIDGELINE_TARGET_PIPELINES_H
