//===- ExternalizeWeights.cpp - Weights out of the shared object ----------===//
//
// This file implements ridge-externalize-weights. A model of 1B parameters
// embedded in its shared object costs the compiler two more copies of the
// weights (the LLVM constant and the object's section) and makes the
// artifact as large as the weights; 2 GiB of them do not even link in the
// small code model. Instead, each weight global is replaced by a pointer
// slot, `@<name>_address`, and every use of the weight's address by a load
// from its slot; the module records where the weight's bytes go in the
// weights file (WeightsFile.h). The runtime maps the file and fills the
// slots when it loads the model, so that the weights are read from the
// page cache on first use rather than copied.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Target/Passes.h"
#include "ridgeline/Target/WeightsFile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/xxhash.h"

#define DEBUG_TYPE "ridge-externalize-weights"

STATISTIC(numExternalized, "Weights moved to the weights file");

namespace mlir::ridge {
#define GEN_PASS_DEF_EXTERNALIZEWEIGHTSPASS
#include "ridgeline/Target/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// File offsets are multiples of this: every element type's alignment, and
/// a cache line.
constexpr uint64_t kWeightAlignment = 64;

struct ExternalizeWeightsPass
    : ridge::impl::ExternalizeWeightsPassBase<ExternalizeWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (file.empty() || StringRef(file).contains('/')) {
      module.emitError("ridge-externalize-weights: 'file' must be a file "
                       "name in the model's folder, got '")
          << file << "'";
      return signalPassFailure();
    }
    if (module->hasAttr(kExternalWeightsAttr)) {
      module.emitError("ridge-externalize-weights: the module already has '")
          << kExternalWeightsAttr << "'";
      return signalPassFailure();
    }
    Builder b(ctx);
    auto ptrType = LLVM::LLVMPointerType::get(ctx);
    // The uses of each global's address, collected once.
    llvm::StringMap<SmallVector<LLVM::AddressOfOp>> addressUses;
    module.walk([&](LLVM::AddressOfOp address) {
      addressUses[address.getGlobalName()].push_back(address);
    });
    SymbolTable symbols(module);
    SmallVector<Attribute> entries;
    // The fingerprint hashes each weight's offset, size and bytes hash.
    SmallVector<uint64_t> hashed;
    uint64_t offset = kWeightAlignment; // after the header
    for (auto global :
         llvm::make_early_inc_range(module.getOps<LLVM::GlobalOp>())) {
      auto weight =
          dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
      if (!weight)
        continue;
      AsmResourceBlob *blob = weight.getRawHandle().getBlob();
      if (!blob) {
        global.emitError("ridge-externalize-weights: the bytes of '")
            << weight.getRawHandle().getKey() << "' are not loaded";
        return signalPassFailure();
      }
      SmallVector<LLVM::AddressOfOp> &uses = addressUses[global.getSymName()];
      for (LLVM::AddressOfOp use : uses) {
        if (!use->getParentOfType<LLVM::LLVMFuncOp>()) {
          use.emitError("ridge-externalize-weights: the address of '")
              << global.getSymName()
              << "' is used outside a function, where it cannot be loaded "
                 "from a slot";
          return signalPassFailure();
        }
      }
      ArrayRef<char> data = blob->getData();
      offset = llvm::alignTo(offset, kWeightAlignment);
      hashed.append(
          {offset, data.size(),
           llvm::xxh3_64bits(ArrayRef<uint8_t>(
               reinterpret_cast<const uint8_t *>(data.data()), data.size()))});

      // The slot: writable, null until the runtime fills it; not constant,
      // so that LLVM folds no load of it.
      OpBuilder builder(global);
      auto slot = LLVM::GlobalOp::create(
          builder, global.getLoc(), ptrType, /*isConstant=*/false,
          LLVM::Linkage::Internal, (global.getSymName() + "_address").str(),
          Attribute(), /*alignment=*/8);
      symbols.insert(slot);
      OpBuilder init(ctx);
      init.setInsertionPointToStart(
          init.createBlock(&slot.getInitializerRegion()));
      LLVM::ReturnOp::create(
          init, global.getLoc(),
          LLVM::ZeroOp::create(init, global.getLoc(), ptrType).getResult());
      for (LLVM::AddressOfOp use : uses) {
        OpBuilder at(use);
        Value slotAddress = LLVM::AddressOfOp::create(at, use.getLoc(), slot);
        Value address = LLVM::LoadOp::create(at, use.getLoc(), ptrType,
                                             slotAddress, /*alignment=*/8);
        use.replaceAllUsesWith(address);
        use.erase();
      }

      entries.push_back(b.getDictionaryAttr({
          b.getNamedAttr("name",
                         b.getStringAttr(weight.getRawHandle().getKey())),
          b.getNamedAttr("global", FlatSymbolRefAttr::get(slot)),
          b.getNamedAttr("offset", b.getI64IntegerAttr(offset)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(data.size())),
          b.getNamedAttr("data", weight),
      }));
      offset += data.size();
      LLVM_DEBUG(llvm::dbgs() << "externalized " << global.getSymName() << " ("
                              << data.size() << " bytes)\n");
      symbols.erase(global);
      ++numExternalized;
    }
    if (entries.empty())
      return;
    uint64_t fingerprint = llvm::xxh3_64bits(
        ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(hashed.data()),
                          hashed.size() * sizeof(uint64_t)));
    module->setAttr(kExternalWeightsAttr,
                    b.getDictionaryAttr({
                        b.getNamedAttr("file", b.getStringAttr(file)),
                        b.getNamedAttr("fingerprint",
                                       b.getI64IntegerAttr(
                                           static_cast<int64_t>(fingerprint))),
                        b.getNamedAttr("bytes", b.getI64IntegerAttr(offset)),
                        b.getNamedAttr("weights", b.getArrayAttr(entries)),
                    }));
  }
};
} // namespace
