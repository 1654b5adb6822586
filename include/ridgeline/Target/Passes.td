//===- Passes.td - Ridgeline target passes -----------------*- tablegen -*-===//
//
// Passes are grouped by the IR level they run on; within a group the defs
// are in alphabetical order.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_PASSES
#define RIDGELINE_TARGET_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Model ABI (LLVM dialect level)
//===----------------------------------------------------------------------===//

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
    `include/ridgeline/Runtime/ModelAbi.h`. A module with
    `ridge.external_weights` (ridge-externalize-weights) also gets the
    weights file's name and a `ridge_weight_desc` array pointing at the
    globals the runtime fills. A GPU model's module with
    `ridge.device_memory` (ridge-plan-device-memory) has `@main` take the
    device weights block and the arena after its tensors; the streams it
    creates (`mgpuStreamCreate`; more than one where host code split the
    async region) become one last parameter, without their destruction and
    the synchronization at the end, so that a run only queues work on its
    caller's stream; the descriptor gets the blocks' sizes and a
    `ridge_device_weight_desc` array of where each weight goes.
    `ridge_model_describe()` returns the descriptor's address; the runtime
    reads it without parsing.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def BuildFatbinsPass : Pass<"ridge-build-fatbins", "::mlir::ModuleOp"> {
  let summary = "Embed a cubin beside each GPU module's PTX";
  let description = [{
    Runs after `gpu-module-to-binary` has serialized each `gpu.binary` to PTX
    (format `isa`). Each PTX object of an `#nvvm.target` is assembled by
    `ptxas` for its chip and packed with its PTX by `fatbinary`, the PTX
    uncompressed; the object becomes a `fatbin` one, which the host code
    loads with `mgpuModuleLoad`. The driver then loads the cubin on a GPU of
    that chip, without JIT compilation, and JIT-compiles the PTX on a newer
    one; the PTX emulator reads the PTX. Without `ptxas` and `fatbinary`
    (looked for in `toolkit`/bin, `$CUDA_HOME/bin`, `PATH` and
    `/usr/local/cuda/bin`) the module stays PTX, unless `required`.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", /*default=*/"\"\"",
           "CUDA toolkit whose bin/ holds ptxas and fatbinary">,
    Option<"required", "required", "bool", /*default=*/"false",
           "Fail when ptxas or fatbinary is missing">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def ExternalizeWeightsPass
    : Pass<"ridge-externalize-weights", "::mlir::ModuleOp"> {
  let summary = "Keep a model's weights in a file beside its shared object";
  let description = [{
    Every top-level `llvm.mlir.global` initialized from a `dense_resource`
    blob (the importer's weights) is replaced by a pointer slot,
    `@<name>_address` (writable, null), and every `llvm.mlir.addressof` of
    it by a load from the slot, so that the object file holds none of the
    weight's bytes (and a model of over 2 GiB of weights links in the small
    code model). The module's `ridge.external_weights` attribute records,
    for each, its name, its slot, and its offset and size in the weights
    file `file` (64-byte aligned, after a 32-byte header), keeping the blob
    for the driver to write the file from, plus the file's size and a
    fingerprint (xxh3 over every weight's offset, size and bytes).
    ridge-emit-model-abi turns that attribute into the descriptor's weight
    table; the runtime maps the file and fills the slots when it loads the
    model. A module without such globals is left as it is.
  }];
  let options = [
    Option<"file", "file", "std::string", "\"model.weights\"",
           "Name of the weights file, in the shared object's folder">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // RIDGELINE_TARGET_PASSES
