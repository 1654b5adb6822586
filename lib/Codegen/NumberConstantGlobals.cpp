//===- NumberConstantGlobals.cpp - Name bufferized constants by first use -===//
//
// One-shot module bufferization turns each tensor constant into a
// `memref.global @__constant_<shape>[_N]`, numbered in the order it visits
// the functions, and that order is not stable from run to run once a model
// is made of many kernel functions. Two compilations of one model must give
// the same bytes, so the globals are renamed `__constant_<K>` and placed in
// the order of their first use in the module, which depends on the IR only.
// Renaming is one walk over the uses, not a symbol-table search per global.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_NUMBERCONSTANTGLOBALSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

static constexpr llvm::StringLiteral kConstantPrefix = "__constant_";

namespace {
struct NumberConstantGlobalsPass
    : ridge::impl::NumberConstantGlobalsPassBase<NumberConstantGlobalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<memref::GlobalOp> globals;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (global.getSymName().starts_with(kConstantPrefix))
        globals[global.getSymName()] = global;
    if (globals.empty())
      return;
    // First uses, in module order.
    llvm::MapVector<memref::GlobalOp, std::string> order;
    SmallVector<memref::GetGlobalOp> uses;
    module.walk([&](memref::GetGlobalOp use) {
      auto it = globals.find(use.getName());
      if (it == globals.end())
        return;
      uses.push_back(use);
      if (!order.count(it->second))
        order.insert(
            {it->second, (kConstantPrefix + Twine(order.size())).str()});
    });
    // Unused ones (none after canonicalization, but keep them named).
    for (auto global : module.getOps<memref::GlobalOp>())
      if (globals.count(global.getSymName()) && !order.count(global))
        order.insert({global, (kConstantPrefix + Twine(order.size())).str()});

    MLIRContext *context = &getContext();
    // Uses first, then the definitions. The new names cannot collide with
    // upstream's, which always spell a shape (`__constant_4xf32_1`).
    for (auto use : uses) {
      memref::GlobalOp global = globals.lookup(use.getName());
      use.setNameAttr(FlatSymbolRefAttr::get(context, order.lookup(global)));
    }
    Operation *anchor = nullptr;
    for (Operation &op : module.getBody()->getOperations())
      if (!isa<memref::GlobalOp>(op)) {
        anchor = &op;
        break;
      }
    for (auto &[global, name] : order) {
      global.setSymName(name);
      if (anchor)
        global->moveBefore(anchor);
      ++numNumberedGlobals;
    }
  }
};
} // namespace
