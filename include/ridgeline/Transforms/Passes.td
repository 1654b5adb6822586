//===- Passes.td - Ridgeline transformation passes ---------*- tablegen -*-===//

#ifndef RIDGELINE_TRANSFORMS_PASSES
#define RIDGELINE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Fusion (graph level)
//===----------------------------------------------------------------------===//

def AttachTargetPass : Pass<"ridge-attach-target", "::mlir::ModuleOp"> {
  let summary = "Store the compilation's target as the module's ridge.target";
  let description = [{
    Resolves the target once, from a chip (`cpu`, `sm_80`, `sm_90a`, ...),
    a GPU (a built-in name or a spec file; by default the GPU the chip
    stands for: the A100 for sm_8x, the H100 for sm_90a) and the number
    format of contractions, and stores it as one `ridge.target` dictionary:
    chip, GPU name, SM count, shared memory and registers per SM, L2 size,
    bandwidth and peak rates. Passes that decide by target (fusion groups,
    kernel configurations, the roofline annotation) read that attribute.

    With no option given, a module that already has a `ridge.target` keeps
    it and one without gets the default target. A chip that differs from
    the GPU's own architecture is legal (sm_80 code runs on an H100) and
    gets a warning.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Code-generation target: cpu, sm_80, sm_86, sm_89, sm_90, sm_90a, "
           "sm_100, sm_100a (default sm_90a)">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Built-in GPU (default: the chip's)">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "JSON file describing the GPU (overrides `gpu`)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Number format of contractions: fp32, tf32, fp16, bf16 (default), "
           "fp8">,
  ];
}

def FormFusionGroupsPass : Pass<"ridge-form-fusion-groups",
                                "::mlir::func::FuncOp"> {
  let summary = "Group graph ops into kernels as the fusion plan decides";
  let description = [{
    Plans fusion groups over the function's graph ops (FusionPlan.h): the
    planner offers each producer->consumer edge whose merge the code generator
    can emit as one kernel, and a control function decides. `policy` picks
    it: `roofline` (default) keeps the merges that save more traffic than
    they recompute and still fit the module's `ridge.target` GPU;
    `all-legal` takes every legal merge (tests of the planner's legality
    apart from the roofline); `never` leaves every op a kernel of its own
    (`--fusion=false`). Each group that moves data becomes a
    `ridge.fusion_group`; views left on their own stay outside. With
    `remarks`, every edge left between two kernels gets a remark saying why;
    with `record-unfused`, the consumer op records it as
    `ridge.unfused`, a list of (operand, reason) dictionaries, for the
    roofline report.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"roofline\"",
           "Control function: roofline, all-legal or never">,
    Option<"maxKernelOperands", "max-kernel-operands", "int64_t",
           /*default=*/"24",
           "Most distinct tensors one kernel reads or writes (roofline)">,
    Option<"maxKernelOps", "max-kernel-ops", "int64_t", /*default=*/"64",
           "Most graph ops in one kernel (roofline)">,
    Option<"gpu", "gpu", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU (lit tests)">,
    Option<"gpuSpec", "gpu-spec", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's GPU by a JSON spec file">,
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "Override of ridge.target's precision">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark at each unfused edge with the reason">,
    Option<"recordUnfused", "record-unfused", "bool", /*default=*/"false",
           "Record each unfused edge's reason on its consumer op">,
  ];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Fusion groups formed (kernels)">,
    Statistic<"numUnfusedEdges", "num-unfused-edges",
              "Producer-consumer edges left between two kernels">,
  ];
  let dependentDialects = ["::mlir::ridge::RidgeDialect"];
}

def OutlineFusionGroupsPass : Pass<"ridge-outline-fusion-groups",
                                   "::mlir::ModuleOp"> {
  let summary = "Turn each fusion group into a kernel function";
  let description = [{
    Every `ridge.fusion_group` becomes a private `func.func` named after the
    group, marked `ridge.kernel = "<kind>"`, and a `func.call` in its place.
    The kernel's arguments are the values the group reads from outside;
    constants it reads are cloned into it, so that a kernel is self-contained
    and its lowering can fuse everything in its body without crossing into a
    neighbour.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def FuseKernelBodiesPass : Pass<"ridge-fuse-kernel-bodies",
                                "::mlir::func::FuncOp"> {
  let summary = "Lower each kernel function's linalg body to one loop nest";
  let description = [{
    Runs on functions marked `ridge.kernel` after their graph ops became
    linalg on tensors. Elementwise producers fold into their consumers
    (recomputed for several consumers, except values the kernel returns),
    reshapes propagate out of the way and `tensor.extract`s from elementwise
    generics (slices, gathers, concats) compute the element in place. If
    more than one op remains, the op producing the kernel's result is tiled
    with `scf.forall` and all producers are fused into the loop: dimensions
    along which a reduction's result is broadcast (rows) stay whole, all
    others are tiled by one. The body is then one loop nest: one GPU kernel.
  }];
  let statistics = [
    Statistic<"numTiledKernels", "num-tiled-kernels",
              "Kernels tiled with their producers fused into one loop nest">,
    Statistic<"numUntileableKernels", "num-untileable-kernels",
              "Kernels left one loop nest per op (operand slices that do not "
              "follow from a tile)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def SelectKernelConfigPass : Pass<"ridge-select-kernel-config",
                                  "::mlir::func::FuncOp"> {
  let summary = "Decide each kernel's GPU mapping once";
  let description = [{
    Runs on functions marked `ridge.kernel` after `ridge-fuse-kernel-bodies`
    (one loop nest each) and records `ridge.kernel_config = {warps_per_block,
    vector_width, block_size}` from the module's `ridge.target` and the
    kernel's loop nest (selectKernelConfig, docs/kernel-config.md), on the
    function and on its top-level loop nest, which carries it through
    inlining and bufferization. The mapping passes obey it:
    `ridge-map-row-loops-to-warps` takes `warps_per_block` and
    `vector_width`, `ridge-map-parallel-loops-to-gpu` takes `block_size`. A
    kernel that already has a config (set by hand in a test) keeps it; its
    optional `tile_sizes` fix `ridge-fuse-kernel-bodies`' tiling.
  }];
  let statistics = [
    Statistic<"numConfiguredKernels", "num-configured-kernels",
              "Kernels given a configuration">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def KernelsToParallelLoopsPass : Pass<"ridge-kernels-to-parallel-loops",
                                      "::mlir::func::FuncOp"> {
  let summary = "Turn bufferized kernels into scf.parallel, keeping their "
                "configuration";
  let description = [{
    Converts every `scf.forall` (a tiled kernel) to `scf.parallel` and, with
    `linalg`, every linalg op on buffers to parallel loops (reductions stay
    sequential), as upstream's `scf-forall-to-parallel` and
    `convert-linalg-to-parallel-loops` do, but moves the op's
    `ridge.kernel_config` onto the outermost new loop, where
    `ridge-map-row-loops-to-warps` and `ridge-map-parallel-loops-to-gpu` read
    it.
  }];
  let options = [
    Option<"linalg", "linalg", "bool", /*default=*/"true",
           "Also convert linalg ops (off: the CPU pipeline lowers them to "
           "sequential loops)">,
  ];
  let statistics = [
    Statistic<"numConfiguredLoops", "num-configured-loops",
              "Loop nests that carry a kernel configuration">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect"];
}

def PrivatizeLoopBuffersPass : Pass<"ridge-privatize-loop-buffers",
                                    "::mlir::func::FuncOp"> {
  let summary = "Turn buffers allocated inside parallel loops into allocas";
  let description = [{
    A `memref.alloc` inside an `scf.forall` or `scf.parallel` is private to
    one iteration (a tiled kernel's accumulator or row). It becomes a
    `memref.alloca` and its `memref.dealloc`s go, so that the loop can run
    as a GPU kernel (registers or local memory) and costs no heap traffic on
    the CPU. A dynamically sized one is an error. With `sequential` (the
    loops run one iteration after another, as on the CPU) the alloca goes to
    the function's entry and every iteration reuses it, so that the stack
    does not grow with the iteration count.
  }];
  let options = [
    Option<"sequential", "sequential", "bool", /*default=*/"false",
           "Iterations run in order: hoist the buffers to the function entry">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// GPU mapping (memref level)
//===----------------------------------------------------------------------===//

def MapParallelLoopsToGpuPass
    : Pass<"ridge-map-parallel-loops-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Map each top-level scf.parallel nest to a 1-D grid of blocks";
  let description = [{
    Every outermost `scf.parallel` of a host function becomes one kernel:
    its dimensions are collapsed into one linear index (innermost dimension
    fastest, so neighbouring threads touch neighbouring elements), tiled by
    `block-size`, and annotated with the block-x / thread-x mapping that
    `convert-parallel-loops-to-gpu` turns into a `gpu.launch`. Top-level
    `scf.for` nests that touch memory (full reductions) are wrapped in a
    one-iteration parallel loop so that no device memory is accessed on the
    host.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect"
  ];
}

def MapRowLoopsToWarpsPass : Pass<"ridge-map-row-loops-to-warps",
                                  "::mlir::func::FuncOp"> {
  let summary = "Map each row of a fused row kernel to a warp";
  let description = [{
    A top-level `scf.parallel` over rows whose body holds reduction loops
    (`scf.for` updating thread-private accumulators with add, mul, max or
    min) and elementwise row loops (`scf.parallel`) becomes a block x thread
    loop nest mapped to block-x / thread-x: one row per warp, as many warps
    per block (up to `warps-per-block`) as leave at least one block per SM
    (`sm-count`).
    Lane l of a row's warp runs elements l, l + 32, ... of every row loop
    (consecutive lanes, consecutive addresses) and each reduction ends with a
    `gpu.subgroup_reduce`, lowered by upstream's butterfly of `gpu.shuffle
    xor`, leaving the row's total in every lane.
    Other loops are left to `ridge-map-parallel-loops-to-gpu`.
  }];
  let options = [
    Option<"warpsPerBlock", "warps-per-block", "int64_t", /*default=*/"8",
           "Most rows (warps) per thread block">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Streaming multiprocessors the grid should fill (default: "
           "ridge.target's)">,
  ];
  let statistics = [
    Statistic<"numRowKernels", "num-row-kernels",
              "Row kernels mapped one row per warp">,
    Statistic<"numVectorizedLoops", "num-vectorized-loops",
              "Row loops given 4 consecutive elements per lane">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def RetypeEmptyBuffersPass : Pass<"ridge-retype-empty-buffers",
                                  "::mlir::func::FuncOp"> {
  let summary = "Give zero-element buffer arguments a bare-pointer type";
  let description = [{
    A tensor with a zero-sized dimension (an empty KV cache, an empty slice)
    becomes a `memref<3x0x5xf32>` argument, which the bare-pointer calling
    convention of the model ABI cannot express. Such buffers are never read or
    written: copies from and to them are erased, and each argument left
    without uses is retyped to a one-element memref of its element type,
    whose pointer the caller still passes. A zero-element argument that keeps
    a use is reported.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def GpuHostBuffersPass : Pass<"ridge-gpu-host-buffers", "::mlir::ModuleOp"> {
  let summary = "Place host-function buffers in device memory";
  let description = [{
    After bufferization the host function allocates temporaries with
    `memref.alloc` and reads weights with `memref.get_global`; kernels can use
    neither. Allocations become `gpu.alloc`/`gpu.dealloc`, host-level
    `memref.copy`s become `gpu.memcpy`, and each weight is copied once per run
    into a device buffer with `gpu.memcpy`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MergeGpuModulesPass : Pass<"ridge-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Move every outlined kernel into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` creates one `gpu.module` per kernel, hence one
    PTX module, one driver module load and one `.version` header each. A
    model is shipped as a single PTX/cubin, so all kernels move into the
    first `gpu.module` and the launches are retargeted.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ApproximateMathPass : Pass<"ridge-approximate-math"> {
  let summary = "Replace transcendental math ops by polynomial approximations";
  let description = [{
    Rewrites `math.exp/log/tanh/erf/...` (and `powf` via exp/log) into
    arithmetic with MLIR's polynomial approximations, so that GPU kernels need
    no libdevice calls and the emitted PTX is complete without a CUDA install.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def MathToPtxPass : Pass<"ridge-math-to-ptx"> {
  let summary = "Lower the remaining math ops of GPU kernels to PTX instructions";
  let description = [{
    `convert-gpu-to-nvvm` turns math ops and several LLVM intrinsics (floor,
    sqrt, fabs, ...) into libdevice calls, which a PTX file cannot resolve
    without a CUDA install. After `ridge-approximate-math`, this pass emits
    the few exact operations that remain as single PTX instructions
    (`cvt.rmi`, `sqrt.rn`, `abs`, `fma.rn`, ...) through inline assembly.
    Run it on `gpu.module`s only.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// Model ABI (graph level, then LLVM dialect level)
//===----------------------------------------------------------------------===//

def AttachModelAbiPass : Pass<"ridge-attach-model-abi", "::mlir::ModuleOp"> {
  let summary = "Record the model's C interface while ONNX names are known";
  let description = [{
    Describes the inputs and outputs of the graph function `@main` for the
    runtime and stores the description as the module's `ridge.model_abi`
    attribute: a dictionary with the `target` and two arrays, `inputs` and
    `outputs`, of `{name, dtype, shape}` dictionaries. `name` is the ONNX
    name verbatim (from `ridge.onnx_name`, else `input<K>`/`output<K>`),
    `dtype` the `ridge_dtype` value of `include/ridgeline/Runtime/ModelAbi.h`
    (signedness comes from the graph's `ui`/`si` types, which the lowering
    erases) and `shape` the static dims. Fails on a tensor that is not
    statically shaped or whose element type has no `ridge_dtype`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Target the model is compiled for: cpu or sm_XX">,
  ];
}

def EmitModelAbiPass : Pass<"ridge-emit-model-abi", "::mlir::ModuleOp"> {
  let summary = "Add the C entry points and descriptor of a compiled model";
  let description = [{
    Expects the model function `@main`, lowered to the LLVM dialect with the
    bare-pointer calling convention (inputs then outputs, one pointer each),
    and the module's `ridge.model_abi` attribute (ridge-attach-model-abi).
    Adds `void ridge_model_run(void **buffers)`, which unpacks the buffer
    array and calls `@main`, and lowers the attribute to constant globals:
    one per name and per dims array, a `ridge_tensor_desc` array and a
    `ridge_model_desc`, laid out as the C structs of
    `include/ridgeline/Runtime/ModelAbi.h`. `ridge_model_describe()` returns
    the descriptor's address; the runtime reads it without parsing.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // RIDGELINE_TRANSFORMS_PASSES
