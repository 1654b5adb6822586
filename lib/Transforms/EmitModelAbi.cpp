//===- EmitModelAbi.cpp - C entry points of a compiled model --------------===//
//
// The runtime (which links neither MLIR nor LLVM) knows a compiled model only
// through two C symbols; see include/ridgeline/Runtime/Runtime.h.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "ridge-emit-model-abi"

namespace mlir::ridge {
#define GEN_PASS_DEF_EMITMODELABIPASS
#include "ridgeline/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

struct EmitModelAbiPass : ridge::impl::EmitModelAbiPassBase<EmitModelAbiPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto main = module.lookupSymbol<LLVM::LLVMFuncOp>("main");
    if (!main) {
      module.emitError("ridge-emit-model-abi: no LLVM function @main; run it "
                       "after lowering to the LLVM dialect");
      return signalPassFailure();
    }
    auto manifest = module->getAttrOfType<StringAttr>(ridge::kManifestAttr);
    if (!manifest) {
      module.emitError("ridge-emit-model-abi: the module has no '")
          << ridge::kManifestAttr << "' attribute";
      return signalPassFailure();
    }
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    for (Type type : main.getFunctionType().getParams()) {
      if (type != ptrType) {
        main.emitError("ridge-emit-model-abi: @main must take one pointer per "
                       "buffer (bare-pointer convention), found ")
            << type;
        return signalPassFailure();
      }
    }
    if (!isa<LLVM::LLVMVoidType>(main.getFunctionType().getReturnType())) {
      main.emitError("ridge-emit-model-abi: @main must return its results "
                     "through out-parameters");
      return signalPassFailure();
    }

    // Only the two entry points are the model's interface; `main` must not
    // clash with a host program's main.
    main.setLinkage(LLVM::Linkage::Internal);
    // ONNX names live on in the manifest; LLVM IR has no use for them.
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i)
      main.setArgAttrs(i, ArrayRef<NamedAttribute>{});

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = module.getLoc();
    auto voidType = LLVM::LLVMVoidType::get(ctx);

    // void ridge_model_run(void **buffers)
    auto run = LLVM::LLVMFuncOp::create(
        b, loc, "ridge_model_run",
        LLVM::LLVMFunctionType::get(voidType, ptrType));
    Block *body = run.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> buffers;
    for (unsigned i = 0, e = main.getNumArguments(); i < e; ++i) {
      Value slot =
          LLVM::GEPOp::create(b, loc, ptrType, ptrType, body->getArgument(0),
                              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
      buffers.push_back(LLVM::LoadOp::create(b, loc, ptrType, slot));
    }
    LLVM::CallOp::create(b, loc, main, buffers);
    LLVM::ReturnOp::create(b, loc, ValueRange{});

    // const char *ridge_model_manifest(void)
    b.setInsertionPointToEnd(module.getBody());
    std::string text = manifest.getValue().str();
    text.push_back('\0');
    auto arrayType =
        LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), text.size());
    auto global = LLVM::GlobalOp::create(
        b, loc, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
        "ridge_manifest_text", b.getStringAttr(text));
    auto getter =
        LLVM::LLVMFuncOp::create(b, loc, "ridge_model_manifest",
                                 LLVM::LLVMFunctionType::get(ptrType, {}));
    b.setInsertionPointToStart(getter.addEntryBlock(b));
    Value address = LLVM::AddressOfOp::create(b, loc, global);
    LLVM::ReturnOp::create(b, loc, address);
  }
};

} // namespace
