//===- Pipelines.h - Ridgeline's compilation pipelines ----------*- C++ -*-===//
//
// The stages of the compiler as pass pipelines, also registered in ridge-opt:
//
//   ridge-graph-to-linalg   graph dialect -> linalg on tensors (shared)
//   ridge-lower-cpu         linalg -> bufferized loops -> LLVM dialect
//   ridge-lower-gpu         linalg -> bufferized parallel loops -> GPU kernels
//                           -> NVVM -> gpu.binary (PTX or cubin) + host code
//
// They assemble passes of Dialect/Ridge/Transforms, Conversion and Codegen.
// The model ABI (ridge_model_run/_describe, Target's ridge-emit-model-abi)
// is added after either back end by the driver (lowerGraphModule).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_PIPELINES_PIPELINES_H
#define RIDGELINE_PIPELINES_PIPELINES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <functional>

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
  /// Test only, and no textual option: adds passes to the start of the
  /// kernel modules' pipeline (ridge-run's --inject-gpu-fault).
  std::function<void(OpPassManager &)> kernelTestPasses;
  /// No textual option either: stop once the host code has its device
  /// memory plan (ridgec --report reads the arena size from it).
  bool stopAfterDeviceMemoryPlan = false;
};

struct GraphToLinalgOptions : public PassPipelineOptions<GraphToLinalgOptions> {
  PassOptions::Option<bool> fusion{
      *this, "fusion",
      llvm::cl::desc("Form roofline-driven fusion groups (off: one kernel per "
                     "graph op)"),
      llvm::cl::init(true)};
  // The target, for modules without a ridge.target (ridge-attach-target's
  // options; empty: keep the module's, else the default target).
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Code-generation target (cpu, sm_90a, ...)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> gpu{
      *this, "gpu",
      llvm::cl::desc("GPU whose roofline drives the decisions (default: the "
                     "chip's)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> gpuSpec{
      *this, "gpu-spec", llvm::cl::desc("JSON file describing the GPU"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Number format of contractions (default bf16)"),
      llvm::cl::init("")};
};

/// Every dialect, interface and translation the pipelines need. Missing
/// registrations crash rather than diagnose with Debian's MLIR (notes, P5).
void registerCompilerDialects(DialectRegistry &registry);

/// Returns the PTX ISA feature string each supported chip needs; the NVVM
/// pipeline's +ptx60 default aborts for sm_80+ (toolchain notes, P7).
FailureOr<std::string> getPtxFeatures(StringRef chip);

/// Graph-level clean-up (folding, canonicalization, CSE) on the ridge
/// dialect: the graph that the roofline report and the lowering both see.
/// With `matchComposites`, exported attention chains become ridge.attention
/// (ridge-match-attention); without (`--fusion=false`), the graph keeps one
/// op per exported node.
void buildGraphOptimizationPipeline(OpPassManager &pm,
                                    bool matchComposites = true);
/// Groups the graph ops of every function into kernels (fusion groups):
/// the roofline policy, or one kernel per op without `fusion`. The roofline
/// report runs exactly this, so that it lists the kernels that are built.
void buildFusionGroupPipeline(OpPassManager &pm, bool fusion,
                              bool recordUnfused = false);
/// Before the kernels are formed: the number format of each contraction
/// (ridge-select-precision), then the tensor-core convolutions rewritten
/// channels-last (ridge-assign-channels-last). The report runs it too.
void buildContractionFormatPipeline(OpPassManager &pm);
/// With the kernels formed: each kernel's format (a contraction fused
/// beside a rounded one takes its format: ridge-select-precision again),
/// then the kernel results stored in their readers' multiply format
/// (ridge-narrow-kernel-boundaries). The report runs it too, so that it
/// prices the kernels as they are built.
void buildKernelFormatPipeline(OpPassManager &pm);
void buildGraphToLinalgPipeline(OpPassManager &pm,
                                const GraphToLinalgOptions &options = {});
void buildCpuLoweringPipeline(OpPassManager &pm);
void buildGpuLoweringPipeline(OpPassManager &pm,
                              const GpuPipelineOptions &options);

/// Registers the three pipelines with the global pass registry (ridge-opt).
void registerRidgePipelines();

} // namespace mlir::ridge

#endif // RIDGELINE_PIPELINES_PIPELINES_H
