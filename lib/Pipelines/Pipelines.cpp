//===- Pipelines.cpp - Ridgeline's compilation pipelines ------------------===//
//
// Short, explicit pipelines in the style of GPUToNVVMPipeline.cpp. The GPU
// one differs from upstream's gpu-lower-to-nvvm-pipeline where the toolchain
// notes found traps: explicit PTX features, index computations sunk into
// kernels before outlining, math approximated instead of libdevice calls.
//
// The pipelines assemble passes of Dialect/Ridge/Transforms, Conversion and
// Codegen only. The model ABI's entry points (ridge-emit-model-abi, a Target
// pass) are added by the driver after the lowering pipeline.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Pipelines/Pipelines.h"

#include "ridgeline/Codegen/Passes.h"
#include "ridgeline/Conversion/Passes.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::ridge;

void mlir::ridge::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registry.insert<RidgeDialect>();
}

FailureOr<std::string> mlir::ridge::getPtxFeatures(StringRef chip) {
  if (chip == "sm_80" || chip == "sm_86" || chip == "sm_89")
    return std::string("+ptx78");
  if (chip == "sm_90" || chip == "sm_90a")
    return std::string("+ptx80");
  if (chip == "sm_100" || chip == "sm_100a")
    return std::string("+ptx86");
  return failure();
}

//===----------------------------------------------------------------------===//
// Graph level
//===----------------------------------------------------------------------===//

void mlir::ridge::buildGraphOptimizationPipeline(OpPassManager &pm,
                                                 bool matchComposites) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (!matchComposites)
    return;
  // RoPE before the attention that reads it.
  pm.addNestedPass<func::FuncOp>(createMatchRotaryEmbeddingPass());
  pm.addNestedPass<func::FuncOp>(createMatchAttentionPass());
  pm.addNestedPass<func::FuncOp>(createMatchGeluPass());
  // Squeeze-and-excitation scales into the next convolution's weights.
  pm.addNestedPass<func::FuncOp>(createFoldChannelScalesPass());
  // Products read transposed computed transposed, once the attentions (whose
  // K^T is theirs) are matched.
  pm.addNestedPass<func::FuncOp>(createTransposeWeightProductsPass());
  // The chains' K transposes and scale constants left unused.
  pm.addPass(createCanonicalizerPass());
}

void mlir::ridge::buildFusionGroupPipeline(OpPassManager &pm, bool fusion,
                                           bool recordUnfused) {
  FormFusionGroupsPassOptions groups;
  groups.policy = fusion ? "roofline" : "never";
  groups.recordUnfused = recordUnfused;
  pm.addNestedPass<func::FuncOp>(createFormFusionGroupsPass(groups));
}

void mlir::ridge::buildContractionFormatPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createSelectPrecisionPass());
  // The tensor-core convolutions channels-last, which needs their formats.
  pm.addNestedPass<func::FuncOp>(createAssignChannelsLastPass());
}

void mlir::ridge::buildKernelFormatPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(createSelectPrecisionPass());
  pm.addNestedPass<func::FuncOp>(createNarrowKernelBoundariesPass());
}

void mlir::ridge::buildGraphToLinalgPipeline(
    OpPassManager &pm, const GraphToLinalgOptions &options) {
  // 1. The target, stored once as the module's ridge.target.
  AttachTargetPassOptions target;
  target.chip = options.chip;
  target.gpu = options.gpu;
  target.gpuSpec = options.gpuSpec;
  target.precision = options.precision;
  pm.addPass(createAttachTargetPass(target));
  // 2. Graph-level clean-up and composite matching.
  buildGraphOptimizationPipeline(pm, options.fusion);
  // 3. The number format of each contraction (ridge.precision), from the
  //    target's numerics and roofline, before fusion moves the ops into
  //    kernels; the convolutions on tensor cores channels-last.
  buildContractionFormatPipeline(pm);
  // 4. The fusion plan decides the kernels; each kernel function is lowered
  //    on its own, so no fusion crosses a kernel boundary, then inlined back.
  buildFusionGroupPipeline(pm, options.fusion);
  //    Once more with the kernels known: a contraction fused beside a
  //    rounded one takes its format, so that all of a kernel's products run
  //    on its tensor cores (PrecisionPolicy.h); the results that only
  //    rounded contractions read are stored rounded.
  buildKernelFormatPipeline(pm);
  pm.addPass(createOutlineFusionGroupsPass());
  // 5. Graph ops -> linalg on tensors (a contraction's ridge.precision
  //    rounds its operands in its body); each kernel's producers fold into
  //    their consumers.
  pm.addPass(createConvertGraphToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createFuseKernelBodiesPass());
  // 6. Each kernel's tiling and GPU mapping is decided once, from
  //    ridge.target and its fused body (ridge.kernel_config), and the kernel
  //    becomes one loop nest by it.
  //    The bodies are canonical first: the config reads how each operand
  //    is indexed (a channels-last window's channel index, whole 16-byte
  //    chunks), which the fusion leaves in compositions to fold.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createSelectKernelConfigPass());
  pm.addNestedPass<func::FuncOp>(createTileKernelBodiesPass());
  // Kernels stay functions that @main calls: one-shot bufferization and the
  // later passes then analyze one kernel at a time, and compile time grows
  // linearly with the graph. The GPU pipeline inlines the host side of each
  // kernel (its launch) once the kernels are outlined.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

//===----------------------------------------------------------------------===//
// Back ends
//===----------------------------------------------------------------------===//

/// Tensors -> memrefs with the model function taking identity-layout buffers
/// for inputs and outputs (destination-passing style), temporaries freed.
static void addBufferizationPasses(OpPassManager &pm, bool sequentialLoops) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(createMarkModelInputsReadOnlyPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  // Constants are bufferized in an order that varies between runs.
  pm.addPass(createNumberConstantGlobalsPass());
  PrivatizeLoopBuffersPassOptions privatize;
  privatize.sequential = sequentialLoops;
  pm.addNestedPass<func::FuncOp>(createPrivatizeLoopBuffersPass(privatize));
  // buffer-deallocation-pipeline, with each buffer of a straight-line block
  // freed after its last use before the simplification (which is quadratic
  // in the buffers of one dealloc).
  memref::ExpandReallocPassOptions realloc;
  realloc.emitDeallocs = false;
  pm.addNestedPass<func::FuncOp>(memref::createExpandReallocPass(realloc));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createDeallocateAfterLastUsePass());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Copies into or out of strided subviews become linalg.copy: the back ends
  // lower them to loops, where finalize-memref-to-llvm would call
  // `memrefCopy`, which nothing links.
  // On the GPU, so do copies of buffers at an offset (gpu.memcpy would drop
  // it).
  LowerStridedCopiesPassOptions copies;
  copies.offsetCopies = !sequentialLoops;
  pm.addNestedPass<func::FuncOp>(createLowerStridedCopiesPass(copies));
  // Kernel bodies tiled with scf.forall (ridge-tile-kernel-bodies) become
  // the parallel loops that the back ends map, keeping their config.
  KernelsToParallelLoopsPassOptions loops;
  loops.linalg = false;
  pm.addNestedPass<func::FuncOp>(createKernelsToParallelLoopsPass(loops));
}

/// Which host code addHostToLLVMPasses lowers besides memref, arith, index,
/// cf and func.
enum class HostCode {
  /// CPU: math ops left after the libm lowering become LLVM intrinsics.
  Cpu,
  /// GPU: the host's gpu ops (allocations, copies, launches) become the
  /// runtime's mgpu* calls.
  GpuLaunches,
};

/// The host code's memref/arith/index/cf/func -> LLVM dialect conversions,
/// shared by both back ends. The model function takes bare pointers (the
/// model ABI).
static void addHostToLLVMPasses(OpPassManager &pm, HostCode host) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  if (host == HostCode::Cpu)
    pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  if (host == HostCode::GpuLaunches) {
    GpuToLLVMConversionPassOptions launches;
    launches.hostBarePtrCallConv = true;
    launches.kernelBarePtrCallConv = true;
    pm.addPass(createGpuToLLVMConversionPass(launches));
  }
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::ridge::buildCpuLoweringPipeline(OpPassManager &pm) {
  // 1. Bufferization; loops run in order, per-iteration buffers are hoisted.
  addBufferizationPasses(pm, /*sequentialLoops=*/true);
  // 2. Loops; loops over empty buffers fold away before their arguments are
  //    retyped.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createRetypeEmptyBuffersPass());
  // 3. Math to libm calls (the rest to LLVM intrinsics in step 4), loops to
  //    branches; LLVM keeps each kernel a function of its own and knows
  //    which of its buffers cannot overlap.
  pm.addPass(createMarkKernelsNoInlinePass());
  pm.addPass(createMarkKernelArgsNoAliasPass());
  // bf16 math and arithmetic (a bf16 model's bias add, its GELU) run in f32
  // with the roundings explicit, as LLVM would promote them; f16 stays as it
  // is. The bf16 roundings left (those and ridge.precision's) become integer
  // arithmetic: x86 has no bf16 instructions and the host's C runtime
  // (libgcc 12) no __truncsfbf2.
  math::MathExtendToSupportedTypesOptions mathTypes;
  mathTypes.extraTypeStrs = {"f16"};
  pm.addPass(math::createMathExtendToSupportedTypes(mathTypes));
  arith::ArithEmulateUnsupportedFloatsOptions bf16Arithmetic;
  bf16Arithmetic.sourceTypeStrs = {"bf16"};
  bf16Arithmetic.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(bf16Arithmetic));
  // fp8 contractions' e4m3 roundings and widenings (their math.roundeven
  // goes on to libm with the rest).
  pm.addPass(createExpandFloat8ConversionsPass());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createExpandBf16ConversionsPass());
  pm.addPass(createExpandTf32RoundingPass());
  pm.addPass(createSCFToControlFlowPass());
  // 4. Host code -> LLVM dialect.
  addHostToLLVMPasses(pm, HostCode::Cpu);
  pm.addPass(createCanonicalizerPass());
}

void mlir::ridge::buildGpuLoweringPipeline(OpPassManager &pm,
                                           const GpuPipelineOptions &options) {
  // 1. An fp8 activation's amax is computed by the kernel that stores it,
  //    when that is a contraction kernel; then bufferization, every parallel
  //    iteration getting its own buffers.
  pm.addPass(createMoveScaleReductionsToProducersPass());
  addBufferizationPasses(pm, /*sequentialLoops=*/false);
  // 2. Tensor-core kernels (an `mma_tile` or `attention_tile` in their
  //    config) become their gpu.launch; the other kernels' ops become parallel
  //    loops, keeping each kernel's config; loops over empty buffers fold away
  //    first.
  pm.addPass(createLowerMmaContractionsPass());
  pm.addPass(createLowerFlashAttentionPass());
  // tf32 and e4m3 roundings the tensor-core kernels did not take (SIMT
  // kernels).
  pm.addPass(createExpandTf32RoundingPass());
  pm.addPass(createExpandFloat8ConversionsPass());
  // A row kernel's result amax (an fp8 consumer's scale, step 1) is
  // computed row by row in its row loop.
  pm.addNestedPass<func::FuncOp>(createFoldResultAmaxIntoRowLoopsPass());
  //    ridge-kernels-to-parallel-loops drops the unit dimensions of the
  //    loops it builds but a kernel's last one, which the canonicalizer
  //    would fold (a one-row kernel would become a launch per op).
  pm.addNestedPass<func::FuncOp>(createKernelsToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass(
      GreedyRewriteConfig(),
      /*disabledPatterns=*/{
          "(anonymous namespace)::ParallelOpSingleOrZeroIterationDimsFolder"}));
  pm.addPass(createRetypeEmptyBuffersPass());
  // 3. GPU mapping. Row-kernel grids fill the SMs of the module's
  //    ridge.target GPU.
  pm.addNestedPass<func::FuncOp>(createMapRowLoopsToWarpsPass());
  // An accumulator bufferized in the result (a pooling with no epilogue)
  // is kept by its thread and stored once.
  pm.addNestedPass<func::FuncOp>(createPrivatizeOwnedElementsPass());
  pm.addNestedPass<func::FuncOp>(createVectorizePointwiseLoopsPass());
  MapParallelLoopsToGpuPassOptions mapping;
  mapping.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createMapParallelLoopsToGpuPass(mapping));
  pm.addPass(createGpuHostBuffersPass());
  // 4. Kernels. Launch sizes must fold to constants for
  //    convert-parallel-loops-to-gpu; merging the block loop with its thread
  //    loop would drop their mapping (a loop whose extent is a multiple of
  //    the block size has a constant thread loop) and leave the loop on the
  //    host.
  pm.addPass(createCanonicalizerPass(
      GreedyRewriteConfig(),
      /*disabledPatterns=*/{
          "(anonymous namespace)::MergeNestedParallelLoops"}));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createWorkgroupAllocasToAttributionsPass());
  pm.addPass(createCanonicalizerPass());
  // Loops of one iteration folded above (a sequential reduction's
  // single-thread wrapper, a one-element kernel) left their element
  // accesses on the host: they become one-thread kernels again.
  pm.addNestedPass<func::FuncOp>(createLaunchHostMemoryAccessesPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createMergeGpuModulesPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createAlignWorkgroupMemoryPass());
  // What is left of each kernel function on the host (its allocations and
  // launches) is inlined into @main, so that the launches form one
  // stream-ordered chain.
  pm.addPass(createInlinerPass());
  // The weights and temporaries of @main move into two device blocks the
  // runtime's session owns: a run allocates and copies nothing itself.
  pm.addPass(createPlanDeviceMemoryPass());
  if (options.stopAfterDeviceMemoryPlan)
    return;
  // gpu-to-llvm lowers allocations, copies and launches only in their async
  // (stream-ordered) forms.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  // 5. The NVVM target of the kernel module.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // Unknown chips (ridge-opt users) get nvvm-attach-target's own choice, the
  // minimum PTX ISA for the chip.
  target.features = getPtxFeatures(options.chip).value_or("");
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));

  // 6. Kernel bodies -> NVVM, with no libdevice calls. Views (subviews,
  //    reshapes) are folded into their descriptors here, not left to the
  //    host conversion: the kernel module is complete LLVM before it is
  //    serialized.
  pm.addPass(createSCFToControlFlowPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  if (options.kernelTestPasses)
    options.kernelTestPasses(kernels);
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createApproximateErfPass());
  kernels.addPass(createExpToEx2ApproxPass());
  kernels.addPass(createApproximateMathPass());
  kernels.addPass(createContractMultiplyAddPass());
  kernels.addPass(createMathToPtxPass());
  // ldmatrix (tensor-core kernels) -> NVVM.
  kernels.addPass(createConvertNVGPUToNVVMPass());
  // Kernels take each buffer as one bare pointer, as the host's launches
  // pass them (gpu-to-llvm's kernel-bare-ptr-calling-convention below): the
  // two sides must agree, and every kernel buffer has a static shape.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // TMA tensor maps the launches pass by value -> __grid_constant__;
  // dynamic shared memory -> the kernel's extern array.
  kernels.addPass(createGridConstantKernelArgsPass());
  kernels.addPass(createExternDynamicSharedMemoryPass());
  // NVVM ops written as PTX (wgmma) -> inline assembly.
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // 7. Kernel modules -> gpu.binary (PTX or cubin), before the host
  //    conversions, so that those walk the host code only and not every
  //    kernel's LLVM dialect again.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // 8. Host code -> LLVM dialect, launches -> mgpu* calls.
  addHostToLLVMPasses(pm, HostCode::GpuLaunches);
  pm.addPass(createCanonicalizerPass());
}

void mlir::ridge::registerRidgePipelines() {
  PassPipelineRegistration<GraphToLinalgOptions>(
      "ridge-graph-to-linalg",
      "Lower the ridge graph dialect to fused linalg on tensors",
      buildGraphToLinalgPipeline);
  PassPipelineRegistration<>(
      "ridge-lower-cpu",
      "Lower linalg on tensors to the LLVM dialect for the host CPU",
      buildCpuLoweringPipeline);
  PassPipelineRegistration<GpuPipelineOptions>(
      "ridge-lower-gpu",
      "Lower linalg on tensors to GPU kernels (gpu.binary) and LLVM host code",
      buildGpuLoweringPipeline);
}
