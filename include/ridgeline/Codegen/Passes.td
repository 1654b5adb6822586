//===- Passes.td - Ridgeline code generation passes --------*- tablegen -*-===//
//
// Passes are grouped by the IR level they run on; within a group the defs
// are in alphabetical order.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_PASSES
#define RIDGELINE_CODEGEN_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Kernel bodies (tensor level)
//===----------------------------------------------------------------------===//

def FuseKernelBodiesPass : Pass<"ridge-fuse-kernel-bodies",
                                "::mlir::func::FuncOp"> {
  let summary = "Fold each kernel function's linalg producers into their "
                "consumers";
  let description = [{
    Runs on functions marked `ridge.kernel` after their graph ops became
    linalg on tensors. Elementwise producers fold into their consumers
    (recomputed for several consumers, except values the kernel returns),
    reshapes propagate out of the way and `tensor.extract`s from elementwise
    generics (slices, gathers, concats) compute the element in place. In a
    contraction kernel, a returned elementwise value read by one elementwise
    consumer merges into it as a further result (one epilogue of several
    results, which the tensor-core kernel stores side by side). What
    is left is the op producing the kernel's result and the reductions it
    reads; `ridge-select-kernel-config` decides their tiling from this body
    and `ridge-tile-kernel-bodies` builds the one loop nest.
  }];
  let statistics = [
    Statistic<"numFusedKernels", "num-fused-kernels",
              "Kernel bodies whose producers were fused">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SelectKernelConfigPass : Pass<"ridge-select-kernel-config",
                                  "::mlir::func::FuncOp"> {
  let summary = "Decide each kernel's tiling and GPU mapping once";
  let description = [{
    Runs on functions marked `ridge.kernel` after `ridge-fuse-kernel-bodies`
    and records `ridge.kernel_config = {tile_sizes, warps_per_block,
    vector_width, block_size}` on the function, from the module's
    `ridge.target` and the fused body (selectKernelConfig,
    docs/kernel-config.md). `tile_sizes` (absent for a kernel that is not
    tiled) are the row rule over the op producing the kernel's result: row
    dimensions along which a reduction's result is broadcast stay whole, the
    other parallel loops are tiled by one. `ridge-tile-kernel-bodies` tiles
    by them and stamps the config on the loop nest, which carries it through
    inlining and bufferization to the mapping passes:
    `ridge-map-row-loops-to-warps` takes `warps_per_block` and
    `vector_width`, `ridge-map-parallel-loops-to-gpu` takes `block_size`. A
    kernel that already has a config (set by hand in a test) keeps it; one
    without `tile_sizes` gets the decided ones.
  }];
  let statistics = [
    Statistic<"numConfiguredKernels", "num-configured-kernels",
              "Kernels given a configuration">,
    Statistic<"numTiledKernels", "num-tiled-kernels",
              "Kernels given tile sizes">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TileKernelBodiesPass : Pass<"ridge-tile-kernel-bodies",
                                "::mlir::func::FuncOp"> {
  let summary = "Tile each kernel's result op by its config and fuse its "
                "producers into the loop";
  let description = [{
    Runs on functions marked `ridge.kernel` after
    `ridge-select-kernel-config`. The op producing the kernel's result is
    tiled with `scf.forall` by the config's `tile_sizes` and every producer
    is fused into the loop (values the kernel also returns are yielded by
    it): the body is then one loop nest, one GPU kernel. A kernel whose
    config has no tile sizes is left as it is. When one tile covers the
    whole op (a decode step's one row), the loop keeps one dimension of one
    iteration, mapped to `#gpu.block<x>`, which the canonicalizer does not
    fold. The config is then stamped on
    the kernel's top-level loop nests (the `scf.forall`, or the linalg ops
    of an untiled kernel). A kernel of several ops without a config, or with
    tile sizes that do not match its result op, is an error.
  }];
  let statistics = [
    Statistic<"numTiledKernels", "num-tiled-kernels",
              "Kernels tiled with their producers fused into one loop nest">,
    Statistic<"numOneTileKernels", "num-one-tile-kernels",
              "Tiled kernels whose loop has one iteration (mapped to keep it)">,
    Statistic<"numUntiledKernels", "num-untiled-kernels",
              "Kernels of several ops left one loop nest per op (operand "
              "slices that do not follow from a tile)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Buffers (memref level)
//===----------------------------------------------------------------------===//

def DeallocateAfterLastUsePass : Pass<"ridge-deallocate-after-last-use",
                                      "::mlir::func::FuncOp"> {
  let summary = "Free each buffer of a straight-line block after its last use";
  let description = [{
    Runs between `ownership-based-buffer-deallocation` and
    `buffer-deallocation-simplification`. The ownership-based pass frees
    every buffer of a block in one `bufferization.dealloc` at the block's
    end. In a model function (a straight-line sequence of kernel calls) that
    keeps every intermediate alive until the model returns, and the
    simplification pass splits that op by pairwise alias queries: quadratic
    in the number of kernels (8 s of a 100k-node chain's compile).

    An unconditional `bufferization.dealloc` that retains nothing is split
    into one dealloc per buffer, each placed right after the last op of the
    block that reads or writes the buffer or a view of it. Only buffers
    allocated with `memref.alloc` in the same block move; a buffer that may
    escape (a use that is not a view, an access or a call operand) stays in
    the block-end dealloc.
  }];
  let statistics = [
    Statistic<"numMovedDeallocs", "num-moved-deallocs",
              "Buffers freed after their last use instead of at block end">,
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
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

def LowerStridedCopiesPass : Pass<"ridge-lower-strided-copies",
                                  "::mlir::func::FuncOp"> {
  let summary = "Turn copies between non-contiguous buffers into linalg.copy";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` between two contiguous
    buffers to a memcpy, and any other copy (into or out of a strided
    subview: a state update written into a slice of a bigger buffer) to a
    call of `memrefCopy`, a function of MLIR's C runner utilities that no
    compiled model links, so that the model cannot load. Such copies become
    `linalg.copy`, which the back ends lower like any other linalg op: to
    loops on the CPU, to a parallel loop nest (a GPU kernel, or the loops of
    the kernel it is in) on the GPU. Contiguous copies stay.

    With `offset-copies` (the GPU back end), so do copies of contiguous
    buffers at a non-zero or dynamic offset (a state written into a slice
    of a bigger buffer): the host's copies become `gpu.memcpy`, whose
    gpu-to-llvm lowering copies from and to each buffer's aligned pointer
    without its offset, so that such a copy would write the slice at
    offset 0.
  }];
  let options = [
    Option<"offsetCopies", "offset-copies", "bool", "false",
           "Also rewrite copies of buffers at a non-zero offset (GPU)">,
  ];
  let statistics = [
    Statistic<"numLoweredCopies", "num-lowered-copies",
              "memref.copy ops between non-contiguous buffers rewritten to "
              "linalg.copy">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ExpandBf16ConversionsPass : Pass<"ridge-expand-bf16-conversions"> {
  let summary = "Expand f32 <-> bf16 conversions into integer arithmetic";
  let description = [{
    Rewrites `arith.truncf` f32 -> bf16 (round to nearest even, NaN kept)
    and `arith.extf` bf16 -> f32 into bitcasts, shifts and adds with
    upstream's bf16 expansion patterns (`populateExpandBFloat16Patterns`,
    only those). Run on the CPU build only: without hardware bf16, LLVM
    lowers the truncation to a `__truncsfbf2` call that the C runtime of the
    host (GCC 12's libgcc) does not provide. GPU kernels keep the ops, which
    become `cvt.rn.bf16.f32` and a shift. The rounding is the same, so the
    CPU build stays the numerics oracle of a bf16 GPU build
    (docs/precision.md).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numExpanded", "num-expanded",
              "bf16 conversions expanded into integer arithmetic">,
  ];
}

def ExpandTf32RoundingPass : Pass<"ridge-expand-tf32-rounding"> {
  let summary = "Compute f32 -> tf32 -> f32 roundings with integer arithmetic";
  let description = [{
    Rewrites `arith.extf(arith.truncf(x : f32 to tf32) : tf32 to f32)`, the
    rounding a contraction's body applies to its operands under
    `ridge.precision = "tf32"`, into bitcasts, an add and a mask: round to
    nearest with ties away from zero, as `cvt.rna.tf32.f32` does (carrying
    into the exponent, to infinity past the largest finite value), NaN
    kept. LLVM has no tf32 type; the tensor-core kernels have already
    consumed their roundings (ridge-lower-mma-contractions rounds their
    fragments with cvt.rna), so this runs on what is left: the CPU build,
    which thereby rounds exactly as the GPU build does, and SIMT kernels.
    A tf32 value used other than widened back to f32 is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let statistics = [
    Statistic<"numExpanded", "num-expanded",
              "tf32 roundings expanded into integer arithmetic">,
  ];
}

def MarkKernelArgsNoAliasPass : Pass<"ridge-mark-kernel-args-noalias",
                                     "::mlir::ModuleOp"> {
  let summary = "Mark kernel buffer arguments that cannot overlap noalias";
  let description = [{
    For each private function marked `ridge.kernel` whose symbol is used
    only by direct calls, adds `llvm.noalias` (carried by func-to-llvm onto
    the pointer) to a buffer argument when, at every call, its buffer and
    each other buffer operand are views of distinct allocations (a
    `memref.alloc`, a constant global, or the caller's argument against
    either), or neither buffer is written by the kernel. Two arguments of the
    caller may be one buffer and are never told apart. Without it LLVM's
    vectorizer guards every kernel loop with a runtime overlap check and a
    scalar fallback copy of the loop.
  }];
  let statistics = [
    Statistic<"numNoAliasArgs", "num-noalias-args",
              "Kernel buffer arguments marked noalias">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def MarkModelInputsReadOnlyPass : Pass<"ridge-mark-model-inputs-read-only",
                                       "::mlir::ModuleOp"> {
  let summary = "Keep one-shot bufferization from writing into the model's "
                "input buffers";
  let description = [{
    Marks every tensor argument of a public function with a body (the model
    function) `bufferization.writable = false`. The arguments are the
    caller's input buffers; bufferization, which takes function arguments as
    writable by default, would otherwise update a state in place in the
    caller's input (LinearAttention's past state), so that a second run on
    the same buffers starts from the first run's result. A read-only
    argument that a kernel writes is copied once into a buffer of the
    model's own; one only read is read in place. Runs right before one-shot
    bufferization.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
  let statistics = [
    Statistic<"numReadOnlyInputs", "num-read-only-inputs",
              "Model function arguments marked read-only">,
  ];
}

def MarkKernelsNoInlinePass : Pass<"ridge-mark-kernels-noinline",
                                   "::mlir::ModuleOp"> {
  let summary = "Keep each kernel function a function of its own in the host "
                "object";
  let description = [{
    Adds `noinline` to the `passthrough` of every function marked
    `ridge.kernel`, which func-to-llvm carries onto the llvm.func. On the
    CPU the model function calls one function per kernel; without it, LLVM
    inlines each private single-call kernel back into the model function,
    and its optimization of that one huge function grows faster than the
    graph.
  }];
  let statistics = [
    Statistic<"numMarkedKernels", "num-marked-kernels",
              "Kernel functions marked noinline">,
  ];
}

def NumberConstantGlobalsPass : Pass<"ridge-number-constant-globals",
                                     "::mlir::ModuleOp"> {
  let summary = "Name the globals of bufferized constants by first use";
  let description = [{
    Renames the `memref.global @__constant_*` that one-shot bufferization
    creates for tensor constants to `__constant_<K>`, K in the order of their
    first `memref.get_global` in the module, and moves them to the front of
    the module in that order. Upstream numbers them in the order it visits
    functions, which varies from run to run for a module of many kernel
    functions; after this pass two compilations give the same bytes.
  }];
  let statistics = [
    Statistic<"numNumberedGlobals", "num-numbered-globals",
              "Constant globals renamed">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
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

def RetypeEmptyBuffersPass : Pass<"ridge-retype-empty-buffers",
                                  "::mlir::ModuleOp"> {
  let summary = "Give zero-element buffer arguments a bare-pointer type";
  let description = [{
    A tensor with a zero-sized dimension (an empty KV cache, an empty slice)
    becomes a `memref<3x0x5xf32>` argument, which the bare-pointer calling
    convention of the model ABI cannot express. Such buffers are never read or
    written: copies from and to them are erased, and each argument left
    without uses, or only passed on to calls, is retyped to a one-element
    memref of its element type, whose pointer the caller still passes; the
    model function and the kernel functions it calls are retyped together.
    A zero-element argument that keeps another use is reported.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

//===----------------------------------------------------------------------===//
// GPU mapping (memref level)
//===----------------------------------------------------------------------===//

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

def PlanDeviceMemoryPass
    : Pass<"ridge-plan-device-memory", "::mlir::ModuleOp"> {
  let summary = "Place a GPU model's weights and temporaries in two device "
                "blocks planned at compile time";
  let description = [{
    Runs on the host code of a GPU model after kernel outlining and inlining
    (a straight-line `@main` of `gpu.alloc`, `gpu.memcpy`, `gpu.launch_func`
    and `gpu.dealloc`), before `gpu-async-region`. `@main` gains two
    `memref<Nxi8>` arguments after its tensors, owned by the runtime's
    session so that a run allocates and copies nothing of its own:

    * the weights block: each device buffer filled by one `gpu.memcpy` from
      a constant `memref.global` becomes a `memref.view` of it at the
      global's offset (one offset per global); the session uploads the
      weights there once;
    * the arena: every other static `gpu.alloc` of `@main`'s block becomes
      a view at an offset planned from the buffers' live ranges (greedy by
      size, ArenaPlan.h), so that buffers never live at the same time share
      bytes; their `gpu.dealloc`s go. Before them come the buffers marked
      `ridge.kept_zero` (split-K's tile counters) whose `gpu.memset` to zero
      follows their allocation: each gets bytes of its own in the arena's
      first `zeroed_bytes`, which the session zeroes once, and the memset
      goes.

    A temporary that is copied whole into an output argument after all its
    other uses, where nothing else touches that output, is replaced by the
    output (the copy goes). Allocations the plan cannot place (dynamic
    shapes, nested regions, buffers that escape into non-view memrefs)
    stay. The plan is recorded in the module attribute
    `ridge.device_memory`: `weights_bytes`, `arena_bytes`,
    `peak_live_bytes` (the most bytes live at once, a lower bound of the
    arena's temporaries), `zeroed_bytes` and `weights`, one
    `{global, offset, bytes}` dictionary per weight.
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"256",
           "Byte alignment of every offset (a power of two); 256, as "
           "cuMemAlloc aligns, covers vector loads, cp.async and TMA">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LaunchHostMemoryAccessesPass
    : Pass<"ridge-launch-host-memory-accesses", "::mlir::func::FuncOp"> {
  let summary = "Run what is left of memory accesses on the host as "
                "single-thread kernels";
  let description = [{
    Runs after `convert-parallel-loops-to-gpu`. The canonicalizer that lets
    launch sizes fold to constants also folds one-iteration loops away,
    among them the single-thread ones `ridge-map-parallel-loops-to-gpu`
    wraps around a sequential reduction, and the grid of a one-element
    kernel: their bodies land in the host function, where they would read
    and write device memory from the CPU (a crash on a GPU, silently right
    on the emulator, whose device memory is the host's). Each run of
    consecutive ops of a host block that load or store memref elements
    (directly or in their regions, kernels aside) becomes one `gpu.launch`
    of one thread, with the thread-private buffers (`memref.alloca`: a
    one-element reduction's accumulator) that the run uses, which would
    otherwise be the host's stack. What cannot run in a kernel stays: an op
    whose regions
    launch kernels, allocate, copy or call (a host loop over time steps),
    and a run whose loaded values the host uses afterwards, which gets a
    warning (such a build runs on the emulator only).
  }];
  let statistics = [
    Statistic<"numLaunches", "num-launches",
              "Single-thread kernels made of host memory accesses">,
    Statistic<"numLeftOnHost", "num-left-on-host",
              "Host memory accesses that could not move into a kernel">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def PrivatizeOwnedElementsPass
    : Pass<"ridge-privatize-owned-elements", "::mlir::func::FuncOp"> {
  let summary = "Accumulate a result element that one iteration owns in a "
                "stack buffer, stored once";
  let description = [{
    In a top-level `scf.parallel` whose body has nested loops (a pooling's
    window, a SIMT contraction's k loop), an element of a buffer defined
    outside the loop that the body stores at indices naming it for this
    iteration alone (constants and each induction variable once), and
    that the body otherwise only loads and stores at those indices, the
    first access a store in the body itself, is kept in a rank-0
    `memref.alloca` of the body: the accesses go to it, and one store after
    the body's last op writes the element. One-element views are folded
    into their loads and stores first. A kernel that accumulated in its
    result buffer (one global store per window step) then stores once, and
    `ridge-vectorize-pointwise-loops` can run 4 of its elements jammed.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::memref::MemRefDialect"
  ];
  let statistics = [
    Statistic<"numPrivatized", "num-privatized",
              "Owned result elements accumulated in a stack buffer">,
  ];
}

def VectorizePointwiseLoopsPass
    : Pass<"ridge-vectorize-pointwise-loops", "::mlir::func::FuncOp"> {
  let summary = "Give each thread of a pointwise kernel 4 consecutive "
                "elements, read and written with 16-byte accesses";
  let description = [{
    A kernel whose config asks for 16-byte lane accesses (`vector_width`
    4: it moves 32-bit data) and whose top-level `scf.parallel` is
    straight-line (a pointwise or broadcast kernel; row kernels are mapped
    to warps before) handles 4 consecutive elements of its innermost
    dimension per iteration, when that dimension runs from 0 over a
    multiple of 4. Views of one element (the tiled body's subviews) are
    folded into their loads and stores, a load of an element the iteration
    stored before is the stored value, and then every access whose last
    index is the innermost induction variable on a buffer aligned for it
    (`isVectorAligned`: rows of whole 16-byte units from a 16-byte
    boundary) becomes one `vector.load` / `vector.store` of 4 (16 bytes);
    an operand broadcast along that dimension is read once, the other
    accesses and the arithmetic are repeated for each element.
    `ridge-map-parallel-loops-to-gpu` then maps the loop with a quarter of
    the iterations.

    A body with nested `scf.for` loops (a SIMT contraction's reduction, a
    pooling's window) is unrolled and jammed instead, when its elements
    share no written memory (`canJamElements`: it writes only allocas it
    defines, one per element, and its vectorized stores): each op is
    repeated for the 4 elements where it stands and each nested loop runs
    once, so that the 4 elements' loads of one iteration whose indices do
    not depend on the innermost induction variable but through their last
    (a channels-last depthwise convolution's window, a SIMT matmul's row of
    B) become one 16-byte load there. Every element computes what it
    computed alone, in the same order. (A loop of fewer than 4 x 32
    elements would run on part of one warp jammed: the kernel config gives
    it vector_width 1.)
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::vector::VectorDialect"
  ];
  let statistics = [
    Statistic<"numVectorized", "num-vectorized",
              "Pointwise loops given 4 elements an iteration">,
    Statistic<"numVectorAccesses", "num-vector-accesses",
              "16-byte loads and stores of those loops">,
    Statistic<"numForwarded", "num-forwarded",
              "Loads replaced by the value the iteration stored">,
    Statistic<"numJammed", "num-jammed",
              "Loops with nested loops given 4 elements an iteration">,
  ];
}

def WorkgroupAllocasToAttributionsPass
    : Pass<"ridge-workgroup-allocas-to-attributions"> {
  let summary = "Make workgroup-memory allocas in gpu.launch bodies launch "
                "attributions";
  let description = [{
    A mapping pass that runs on parallel loops (before the launches exist)
    allocates a block's shared buffer as a `memref.alloca` in the workgroup
    address space at the start of the thread loop: the W slots in which
    the warps sharing a row (ridge-map-row-loops-to-warps, `row_warps`)
    combine their totals. convert-parallel-loops-to-gpu moves it into the
    `gpu.launch` body; this pass makes it a workgroup attribution of that
    launch (`.shared` memory, one buffer per block). An alloca nested in a
    loop or branch of the body, of a dynamic shape, or outside a launch is
    an error.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
  let statistics = [
    Statistic<"numPromoted", "num-promoted",
              "Workgroup allocas made launch attributions">,
  ];
}

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
    A row loop that reduces one value of each row over the rows (init 0,
    `arith.maximumf`) into a 0-d buffer zeroed before it (a result's amax,
    ridge-fold-result-amax-into-row-loops) has each row's first thread fold
    the row's value in with one atomic max of its bits.
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
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LowerFlashAttentionPass : Pass<"ridge-lower-flash-attention",
                                   "::mlir::ModuleOp"> {
  let summary = "Build tensor-core attention kernels (FlashAttention-2) "
                "from their config";
  let description = [{
    An attention kernel whose `ridge.kernel_config` has an `attention_tile`
    (chosen by ridge-select-kernel-config from the kernel's
    `ridge.online_attention`) becomes one `gpu.launch` on buffers: a block
    per 64 query rows of one head, each of its 4 warps owning 16 rows; the
    query tile staged once into registers as `mma.sync` fragments; key and
    value tiles of 64 rows staged (rounded to bf16/f16 on the way) through
    XOR-swizzled shared memory, the next tile's loads in flight during the
    current one's products; S = Q K^T and O += P V by
    `mma.sync.m16n8k16` with f32 accumulators (with `mma_instruction =
    "wgmma"` on sm_90a: one `wgmma.mma_async` m64nNk16 per k16 step, the 4
    warps one warpgroup, Q, K and V read by descriptors from the
    64-byte-swizzled layout, P from registers); the online softmax (running
    maximum and sum per row, exp2 with the scale folded into log2(e),
    causal and additive masks per tile) on the accumulators in registers,
    the probabilities reused as the second product's A fragments. The
    scores never leave registers. The rounding and the key tile are those
    of the online form on the CPU, the oracle. With `attention_splits`
    (flash-decoding), blocks split the keys of a query tile, write their
    rows' partial maximum, sum and O to a buffer, and the last of them to
    finish combines them, in the same launch (SplitArrival.h). With `attention_decode` (an f32 attention of a few query
    rows: a decode step), a block of 4 warps per query row and key split,
    the warps taking keys in turn and the lanes the head dimension (a
    shuffle reduction per score), the warps combined in shared memory and
    the splits by the last of a row's blocks to finish, in the same launch
    (its arrival at the row's counter, SplitArrival.h). With `attention_tma` (sm_90a, K and V
    stored in the multiply type), a producer warp beside the warpgroup
    copies the query tile (where it is stored so too) and each key tile's K
    and V with TMA tensor copies into two stages
    of dynamic shared memory, a full and an empty mbarrier per stage
    ordering them with the consumers' wgmmas (FlashAttention-3's warp
    specialization); the host encodes the tensor maps (the runtime's
    `ridgeTensorMapEncodeTiled`, declared in the module: a module pass).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numAttentionKernels", "num-attention-kernels",
              "Attention kernels built on tensor cores">,
    Statistic<"numDecodeKernels", "num-decode-kernels",
              "Decode attention kernels (warps over keys)">,
    Statistic<"numAsyncCopyKernels", "num-async-copy-kernels",
              "Attention kernels staging K and V with cp.async">,
    Statistic<"numTmaKernels", "num-tma-kernels",
              "Attention kernels whose producer warp copies K and V by TMA">,
  ];
}

def MoveScaleReductionsToProducersPass
    : Pass<"ridge-move-scale-reductions-to-producers", "::mlir::ModuleOp"> {
  let summary = "Compute an fp8 activation's amax in the kernel that stores "
                "the activation";
  let description = [{
    An fp8 kernel's scale reduction (`max |x|` of a whole argument into a
    zero-filled 0-d f32) moves into the kernel whose result the argument
    is, when that kernel has each element of the result in registers as it
    stores it: a kernel ridge-lower-mma-contractions builds (its config has
    an `mma_tile` or `gemv`; the result is what its epilogue or product
    stores), or a row kernel (an scf.forall over rows whose rows of the
    result are written by the last op of its body, an elementwise one; the
    reduction is marked `ridge.result_amax` for
    ridge-fold-result-amax-into-row-loops). The
    producer returns the amax as one more result, and the consumer takes it
    as one more argument: the producer folds the magnitudes it stores into
    the amax (one atomic max a warp or a row) instead of the consumer
    reading the whole activation again in launches of its own. The
    one-pass tensor-core attention (ridge-lower-flash-attention) is a
    producer too. Runs on tensors, before bufferization. Kernels called
    more than once are left alone, and so are reductions of anything else
    (a graph input, a split-key or decode attention).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numMovedScaleReductions", "num-moved-scale-reductions",
              "Scale reductions replaced by an amax their producer returns">,
  ];
}

def FoldResultAmaxIntoRowLoopsPass
    : Pass<"ridge-fold-result-amax-into-row-loops", "::mlir::func::FuncOp"> {
  let summary = "Compute a row kernel's result amax row by row, in its row "
                "loop";
  let description = [{
    The `max |x|` of a row kernel's result that
    ridge-move-scale-reductions-to-producers added (marked
    `ridge.result_amax`) becomes part of the row loop before it: each row
    reduces the magnitudes of its elements (the row's elementwise op
    recomputed from its inputs, into a thread-private 0-d accumulator), and
    the row loop, an `scf.parallel` with one reduction (init 0,
    `arith.maximumf`), combines the rows' maxima into the amax buffer.
    ridge-map-row-loops-to-warps folds each row's maximum in with one
    atomic. On buffers, before the kernels' linalg ops become loops. A
    marked amax that does not follow such a row loop is an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
  let statistics = [
    Statistic<"numFoldedAmaxes", "num-folded-amaxes",
              "Result amaxes computed row by row in the row loop">,
  ];
}

def LowerMmaContractionsPass : Pass<"ridge-lower-mma-contractions",
                                    "::mlir::ModuleOp"> {
  let summary = "Build tensor-core GEMM kernels (mma.sync) from their config";
  let description = [{
    A kernel whose `ridge.kernel_config` has an `mma_tile` (chosen by
    ridge-select-kernel-config for a contraction whose operands are
    multiplied in bf16 or f16) becomes one `gpu.launch` on buffers: block
    tiles staged through XOR-swizzled shared memory two stages deep,
    `ldmatrix` fragments, `mma.sync.m16n8k16` with f32 accumulators in
    registers, and the kernel's elementwise epilogue applied to the
    accumulators before the one store. Runs after bufferization, before the
    kernels' remaining linalg ops become loops. The mechanism decides
    nothing: the tile, the warps and the rounding are the config's and the
    contraction body's.

    With `mma_tma` (sm_90a), a producer warp loads the k tiles with TMA
    tensor copies into dynamic shared memory, ordered with the consumer
    warpgroups' wgmmas by full and empty mbarriers; the host encodes each
    operand's tensor map (the runtime's `ridgeTensorMapEncodeTiled`, declared
    in the module) and the launch passes it by value
    (ridge-grid-constant-kernel-args gives the kernel its address).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numTensorCoreKernels", "num-tensor-core-kernels",
              "Kernels built on tensor cores">,
    Statistic<"numTmaKernels", "num-tma-kernels",
              "Tensor-core kernels whose operands TMA loads">,
    Statistic<"numTallSkinnyKernels", "num-tall-skinny-kernels",
              "Bandwidth-path kernels of a tall-skinny product (a warp per "
              "row group of A)">,
    Statistic<"numWeightGemvKernels", "num-weight-gemv-kernels",
              "Bandwidth-path kernels over a weight (m at most 16)">,
  ];
}

def ExternDynamicSharedMemoryPass
    : Pass<"ridge-extern-dynamic-shared-memory", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Declare dynamic shared memory as the kernel's extern array";
  let description = [{
    convert-gpu-to-nvvm lowers `gpu.dynamic_shared_memory` to an internal
    zero-sized shared global, which NVPTX prints as a one-byte static
    variable (`.shared .b8 __dynamic_shmem__0;`): the kernel then indexes
    past it into the dynamic allocation that follows. This pass gives such a
    global external linkage and a 1024-byte alignment, which NVPTX prints as
    CUDA's `extern __shared__ __align__(1024) char smem[]` (`.extern .shared
    .align 1024 .b8 __dynamic_shmem__0[];`): the launch's dynamic shared
    memory itself, starting on the 64- and 128-byte swizzles' atom. Runs on
    the kernel module after convert-gpu-to-nvvm.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def GridConstantKernelArgsPass : Pass<"ridge-grid-constant-kernel-args",
                                      "::mlir::gpu::GPUModuleOp"> {
  let summary = "Pass aggregate kernel arguments as __grid_constant__ "
                "parameters";
  let description = [{
    A kernel argument of an LLVM array type (a TMA tensor map, 128 bytes the
    host encodes before the launch) whose kernel uses only take its address
    (an `unrealized_conversion_cast` to `!llvm.ptr`, as
    ridge-lower-mma-contractions writes it) becomes a `byval` pointer
    argument marked `nvvm.grid_constant` and aligned to 64 bytes: NVPTX then
    declares it `.param .align 64 .b8 p[128]` and takes its generic address
    with `cvta.param`, as nvcc does for a `__grid_constant__ const
    CUtensorMap`. The host's launch still passes the array by value. Runs on
    the kernel module after convert-gpu-to-nvvm.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
  let statistics = [
    Statistic<"numGridConstantArgs", "num-grid-constant-args",
              "Kernel arguments passed as __grid_constant__ parameters">,
  ];
}

def AlignWorkgroupMemoryPass : Pass<"ridge-align-workgroup-memory",
                                    "::mlir::gpu::GPUModuleOp"> {
  let summary = "Align kernels' shared-memory buffers for tensor-core access";
  let description = [{
    Sets `llvm.align` on the workgroup attributions of every `gpu.func` that
    has none: 16 bytes, and 1024 for buffers of a kilobyte or more.
    convert-gpu-to-nvvm otherwise places them at their element type's
    alignment (2 bytes for bf16), while the 16-byte vector stores and the
    `ldmatrix` row reads of the tensor-core kernels need 16, and the
    swizzled layouts wgmma reads are defined on 1024-byte atoms. Runs after kernel outlining, which does not carry attribution
    attributes over from `gpu.launch`.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::LLVM::LLVMDialect"];
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

//===----------------------------------------------------------------------===//
// GPU kernels (math)
//===----------------------------------------------------------------------===//

def ContractMultiplyAddPass : Pass<"ridge-contract-multiply-add"> {
  let summary = "Contract a single-use multiply feeding an add into math.fma";
  let description = [{
    `arith.addf`/`arith.subf` of an `arith.mulf` that has no other use
    becomes `math.fma` (f32 and f64, scalar or vector), as CUDA compilers
    contract by default. Run on GPU kernels only: the NVPTX backend's
    explicitly rounded `mul.rn` + `add.rn` keep ptxas from fusing them, and
    the CPU build, which keeps both roundings, is the numerics oracle.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let statistics = [
    Statistic<"numContracted", "num-contracted",
              "Multiply-adds contracted into math.fma">,
  ];
}

def ApproximateErfPass : Pass<"ridge-approximate-erf"> {
  let summary = "Compute f32 erf in GPU kernels from two short polynomials";
  let description = [{
    `math.erf` of f32 (scalar or vector) becomes x * P(x^2) for |x| < 1
    and copysign(1 - 2^Q(min(|x|, 4)), x) beyond, P of degree 5 and Q of
    degree 6 in fused multiply-adds, both evaluated and one selected: about
    20 instructions with the `math.exp2` that ridge-exp-to-ex2-approx makes
    one ex2.approx, where MLIR's rational approximation takes about 43 (21
    selects and a division). Within 3.3 ulp of erf (plus ex2.approx's, at
    most 0.3 ulp); run on GPU kernels only, before ridge-exp-to-ex2-approx:
    the CPU build keeps MLIR's approximation and stays the numerics oracle.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "erf ops rewritten">
  ];
}

def ExpToEx2ApproxPass : Pass<"ridge-exp-to-ex2-approx"> {
  let summary = "Compute f32 exp in GPU kernels with ex2.approx";
  let description = [{
    `math.exp` of f32 (scalar or vector, element by element) becomes
    `ex2.approx.ftz.f32` of x * log2(e), and `math.exp2` that instruction
    of x: one multi-function-unit instruction where the polynomial exp of
    ridge-approximate-math costs about fifteen (nvcc's __expf). Within 2
    ulp plus |x| 2^-24 relative of expf (5e-6 at the edge of the normal
    range); run on GPU kernels only, before ridge-approximate-math: the CPU
    build keeps libm's expf and stays the numerics oracle.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten",
              "exp and exp2 ops computed by ex2.approx">,
  ];
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

#endif // RIDGELINE_CODEGEN_PASSES
