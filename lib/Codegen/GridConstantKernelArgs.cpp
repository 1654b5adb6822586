//===- GridConstantKernelArgs.cpp - Aggregates as __grid_constant__ -------===//
//
// TMA reads its tensor map (128 opaque bytes, 64-byte aligned) from the
// param, const or global state space. CUDA code passes it as a
// `__grid_constant__ const CUtensorMap` parameter: the launch copies the
// bytes the host encoded into the kernel's parameter space, and the kernel
// takes their generic address (`cvta.param`) instead of copying them to
// local memory. MLIR's launches pass an aggregate by value the same way (a
// pointer to its bytes in the params array), but a gpu.func argument of an
// aggregate type is a value, whose address the kernel cannot take; so the
// kernel builder takes it through an `unrealized_conversion_cast` to
// `!llvm.ptr`, and this pass, on the kernel module once its functions are
// LLVM, turns such an argument into what NVPTX lowers to that parameter: a
// `byval` pointer with `nvvm.grid_constant`, aligned to 64 bytes.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-grid-constant-kernel-args"

namespace mlir::ridge {
#define GEN_PASS_DEF_GRIDCONSTANTKERNELARGSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// The alignment CUtensorMap requires (and cuda.h declares).
static constexpr int64_t kGridConstantAlignment = 64;

/// The casts to `!llvm.ptr` that take the address of `arg`, or failure when
/// it has another use (then it stays a value).
static FailureOr<SmallVector<UnrealizedConversionCastOp>>
getAddressCasts(BlockArgument arg) {
  SmallVector<UnrealizedConversionCastOp> casts;
  for (Operation *user : arg.getUsers()) {
    auto cast = dyn_cast<UnrealizedConversionCastOp>(user);
    if (!cast || cast.getNumOperands() != 1 || cast.getNumResults() != 1 ||
        cast.getResult(0).getType() !=
            LLVM::LLVMPointerType::get(arg.getContext()))
      return failure();
    casts.push_back(cast);
  }
  if (casts.empty())
    return failure();
  return casts;
}

namespace {
struct GridConstantKernelArgsPass
    : ridge::impl::GridConstantKernelArgsPassBase<GridConstantKernelArgsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto pointer = LLVM::LLVMPointerType::get(context);
    Builder builder(context);
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      if (func.isExternal() ||
          !func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        return;
      Block &entry = func.getBody().front();
      SmallVector<Type> inputs(func.getFunctionType().getParams());
      bool changed = false;
      for (BlockArgument arg : entry.getArguments()) {
        auto aggregate = dyn_cast<LLVM::LLVMArrayType>(arg.getType());
        if (!aggregate)
          continue;
        FailureOr<SmallVector<UnrealizedConversionCastOp>> casts =
            getAddressCasts(arg);
        if (failed(casts))
          continue;
        unsigned index = arg.getArgNumber();
        arg.setType(pointer);
        for (UnrealizedConversionCastOp cast : *casts) {
          cast.getResult(0).replaceAllUsesWith(arg);
          cast->erase();
        }
        inputs[index] = pointer;
        func.setArgAttr(index, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(aggregate));
        func.setArgAttr(index, LLVM::LLVMDialect::getAlignAttrName(),
                        builder.getI64IntegerAttr(kGridConstantAlignment));
        func.setArgAttr(index, NVVM::NVVMDialect::getGridConstantAttrName(),
                        builder.getUnitAttr());
        changed = true;
        ++numGridConstantArgs;
        LLVM_DEBUG(llvm::dbgs()
                   << func.getName() << ": argument " << index << " ("
                   << aggregate << ") passed as a __grid_constant__\n");
      }
      if (changed)
        func.setFunctionType(LLVM::LLVMFunctionType::get(
            func.getFunctionType().getReturnType(), inputs,
            func.getFunctionType().isVarArg()));
    });
  }
};
} // namespace
