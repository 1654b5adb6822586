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
    `include/ridgeline/Runtime/ModelAbi.h`. `ridge_model_describe()` returns
    the descriptor's address; the runtime reads it without parsing.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // RIDGELINE_TARGET_PASSES
