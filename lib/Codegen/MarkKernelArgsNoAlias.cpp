//===- MarkKernelArgsNoAlias.cpp - Tell LLVM which kernel buffers differ --===//
//
// On the CPU each kernel is a function that the model function calls with
// its buffers. Without knowing that an output buffer differs from the
// inputs, LLVM's loop vectorizer versions every kernel loop: a runtime
// overlap check, the vector loop and a scalar copy of it. That doubles the
// code LLVM optimizes and compiles (a third of the back end's time on a
// chain of elementwise kernels) for a case that never happens: the model
// function passes each kernel fresh allocations.
//
// The pass proves it per call site. A kernel argument gets `llvm.noalias`
// when, at every call, the buffer it receives and each other buffer operand
// are views of distinct allocations, or neither is written by the kernel.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-mark-kernel-args-noalias"

namespace mlir::ridge {
#define GEN_PASS_DEF_MARKKERNELARGSNOALIASPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Whether the kernel may write the buffer `arg` through itself or a view of
/// it. Unknown effects count as writes.
static bool mayWrite(BlockArgument arg) {
  SmallVector<Value> worklist{arg};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() == value) {
          worklist.push_back(view.getViewDest());
          continue;
        }
      }
      auto effects = dyn_cast<MemoryEffectOpInterface>(user);
      if (!effects)
        return true;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffectsOnValue(value, instances);
      for (const MemoryEffects::EffectInstance &effect : instances)
        if (!isa<MemoryEffects::Read>(effect.getEffect()))
          return true;
      // A memref result that is not a view could alias the buffer unseen.
      if (llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
        return true;
    }
  }
  return false;
}

namespace {
/// Where a buffer operand comes from, looking through views.
struct BufferRoot {
  enum Kind { Allocation, ConstantGlobal, Argument, Unknown } kind;
  /// The allocation, the global's name or the block argument.
  const void *key;

  /// Whether two buffers with these roots cannot overlap.
  bool isDistinctFrom(const BufferRoot &other) const {
    if (kind == Unknown || other.kind == Unknown)
      return false;
    // Two arguments of the caller may be one buffer.
    if (kind == Argument && other.kind == Argument)
      return false;
    return kind != other.kind || key != other.key;
  }
};
} // namespace

static BufferRoot getRoot(Value buffer, SymbolTable &symbols) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(buffer))
      return {BufferRoot::Argument, arg.getAsOpaquePointer()};
    Operation *def = buffer.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return {BufferRoot::Allocation, def};
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      // A kernel may read a constant global directly; a mutable one it could
      // also write behind the argument's back.
      auto global = symbols.lookup<memref::GlobalOp>(get.getName());
      if (!global || !global.getConstant())
        return {BufferRoot::Unknown, nullptr};
      return {BufferRoot::ConstantGlobal, global.getOperation()};
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view || view.getViewDest() != buffer)
      return {BufferRoot::Unknown, nullptr};
    buffer = view.getViewSource();
  }
}

namespace {
struct MarkKernelArgsNoAliasPass
    : ridge::impl::MarkKernelArgsNoAliasPassBase<MarkKernelArgsNoAliasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Every use of a kernel's symbol, in one walk of the module: a use that
    // is not a direct call (an address taken) could pass anything.
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses)
      return;
    DenseMap<StringAttr, SmallVector<func::CallOp>> calls;
    DenseSet<StringAttr> escaping;
    for (const SymbolTable::SymbolUse &use : *uses) {
      StringAttr name = use.getSymbolRef().getRootReference();
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (call && call.getCalleeAttr() == use.getSymbolRef())
        calls[name].push_back(call);
      else
        escaping.insert(name);
    }

    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (kernel.isExternal() || !kernel.isPrivate() ||
          !kernel->hasAttr(kKernelAttr) ||
          escaping.contains(kernel.getSymNameAttr()))
        continue;
      auto sites = calls.find(kernel.getSymNameAttr());
      if (sites == calls.end())
        continue;
      markArguments(kernel, sites->second, symbols);
    }
  }

  void markArguments(func::FuncOp kernel, ArrayRef<func::CallOp> sites,
                     SymbolTable &symbols) {
    Block &body = kernel.getBody().front();
    SmallVector<unsigned> buffers;
    SmallVector<bool> written;
    for (BlockArgument arg : body.getArguments()) {
      if (!isa<BaseMemRefType>(arg.getType()))
        continue;
      buffers.push_back(arg.getArgNumber());
      written.push_back(mayWrite(arg));
    }
    SmallVector<bool> noAlias(buffers.size(), true);
    for (func::CallOp call : sites) {
      SmallVector<BufferRoot> roots;
      for (unsigned index : buffers)
        roots.push_back(getRoot(call.getOperand(index), symbols));
      for (unsigned i = 0; i < buffers.size(); ++i)
        for (unsigned j = 0; j < buffers.size() && noAlias[i]; ++j)
          if (i != j && (written[i] || written[j]) &&
              !roots[i].isDistinctFrom(roots[j]))
            noAlias[i] = false;
    }
    for (auto [index, mark] : llvm::zip_equal(buffers, noAlias)) {
      if (!mark)
        continue;
      kernel.setArgAttr(index, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(&getContext()));
      ++numNoAliasArgs;
    }
    LLVM_DEBUG(llvm::dbgs()
               << kernel.getName() << ": " << llvm::count(noAlias, true)
               << " of " << buffers.size() << " buffers noalias\n");
  }
};
} // namespace
