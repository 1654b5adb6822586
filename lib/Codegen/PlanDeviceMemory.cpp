//===- PlanDeviceMemory.cpp - Weights and temporaries in device blocks ----===//
//
// This file implements ridge-plan-device-memory. After ridge-gpu-host-buffers
// a GPU model's host function allocates every temporary with gpu.alloc and
// copies every weight into a fresh device buffer with gpu.memcpy, on every
// run: dozens of cuMemAlloc/cuMemFree calls (cuMemFree synchronizes the
// device) and megabytes of host-to-device copies per inference. Here the
// function's device memory becomes two blocks that it takes as arguments,
// owned by the runtime's session:
//
//  * the weights block holds every weight at a fixed offset; the session
//    uploads the weights into it once;
//  * the arena holds every temporary at an offset planned from the buffers'
//    live ranges (ArenaPlan.h), so that buffers that are never live at the
//    same time share bytes; before them, the buffers that every run leaves
//    zero (kKeptZeroAttr: split-K's tile counters), which the session
//    zeroes once instead of a memset per run.
//
// A temporary that is only copied into an output at the end is replaced by
// the output itself, which saves the copy. The plan is recorded in the
// module's kDeviceMemoryAttr for the descriptor (ridge-emit-model-abi) and
// the report.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/ArenaPlan.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "ridge-plan-device-memory"

STATISTIC(numWeights, "Weights placed in the device weights block");
STATISTIC(numTemporaries, "Temporaries placed in the arena");
STATISTIC(numElidedCopies, "Output copies elided (written in place)");
STATISTIC(numKeptZero, "Buffers kept zero placed in the arena's zeroed bytes");
STATISTIC(numUnplanned, "Device allocations left to run time");

namespace mlir::ridge {
#define GEN_PASS_DEF_PLANDEVICEMEMORYPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// Bytes of a static memref of integer, float or index elements, or nullopt
/// (getElementByteWidth: elements narrower than a byte take a byte each, as
/// the LLVM lowering of memrefs stores them; index is 64-bit on the host).
static std::optional<uint64_t> getByteSize(MemRefType type) {
  Type element = type.getElementType();
  if (!type.hasStaticShape() || !(element.isIndex() || element.isIntOrFloat()))
    return std::nullopt;
  uint64_t elementBytes = element.isIndex() ? 8 : getElementByteWidth(element);
  return elementBytes * static_cast<uint64_t>(type.getNumElements());
}

/// A gpu.alloc the plan can replace: static, identity layout, device memory,
/// synchronous (the async form is made later, by gpu-async-region), in
/// `block` itself.
static bool isPlannable(gpu::AllocOp alloc, Block &block) {
  MemRefType type = alloc.getType();
  return alloc->getBlock() == &block && !alloc.getHostShared() &&
         !alloc.getAsyncToken() && alloc.getAsyncDependencies().empty() &&
         type.getLayout().isIdentity() && getByteSize(type).has_value() &&
         !type.getMemorySpace();
}

/// The first kernel launch of `block` after `op`, or null.
static Operation *findNextLaunch(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (isa<gpu::LaunchFuncOp, gpu::LaunchOp>(next))
      return next;
  return nullptr;
}

/// The last op of `block` (by `positions`) that uses `buffer` or a view of
/// it, deallocations aside; nullopt when a use may let the buffer escape (an
/// op that makes a memref that is not a view of it).
static std::optional<unsigned>
findLastUse(Value buffer, Block &block,
            const DenseMap<Operation *, unsigned> &positions) {
  unsigned last = positions.lookup(buffer.getDefiningOp());
  SmallVector<Value> worklist{buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<gpu::DeallocOp>(user))
        continue;
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        // An address taken on the host: a TMA tensor map's base, encoded
        // right before the launch that reads the buffer through it (the
        // launch names the map, not the buffer). The buffer lives through
        // that launch, or a temporary the same launch writes (split-K's
        // partial sums) could be given its bytes.
        Operation *ancestor = block.findAncestorOpInBlock(*user);
        Operation *launch = ancestor ? findNextLaunch(ancestor) : nullptr;
        if (!launch)
          return std::nullopt;
        last = std::max(last, positions.lookup(launch));
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != value)
          return std::nullopt;
        worklist.push_back(view.getViewDest());
      } else if (llvm::any_of(user->getResultTypes(),
                              llvm::IsaPred<BaseMemRefType>)) {
        return std::nullopt;
      }
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return std::nullopt;
      last = std::max(last, positions.lookup(ancestor));
    }
  }
  return last;
}

/// Erases the gpu.deallocs of `buffer`.
static void eraseDeallocs(Value buffer) {
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    if (isa<gpu::DeallocOp>(user))
      user->erase();
}

namespace {
struct PlanDeviceMemoryPass
    : ridge::impl::PlanDeviceMemoryPassBase<PlanDeviceMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal())
      return;
    if (!llvm::isPowerOf2_64(alignment)) {
      module.emitError("ridge-plan-device-memory: 'alignment' must be a "
                       "power of two, got ")
          << static_cast<uint64_t>(alignment);
      return signalPassFailure();
    }
    if (module->hasAttr(kDeviceMemoryAttr)) {
      main.emitError("ridge-plan-device-memory: the module already has '")
          << kDeviceMemoryAttr << "'; the plan is made once";
      return signalPassFailure();
    }
    Block &block = main.getBody().front();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Location loc = main.getLoc();
    auto byteMemRef = [&](uint64_t bytes) {
      return MemRefType::get({static_cast<int64_t>(bytes)}, b.getI8Type());
    };

    // The two blocks are arguments after the tensors; their sizes are set
    // once the plan is known.
    unsigned numTensors = main.getNumArguments();
    if (failed(main.insertArguments(
            {numTensors, numTensors}, {byteMemRef(0), byteMemRef(0)},
            {DictionaryAttr(), DictionaryAttr()}, {loc, loc})))
      return signalPassFailure();
    BlockArgument weightsArg = main.getArgument(numTensors);
    BlockArgument arenaArg = main.getArgument(numTensors + 1);

    // A view of `bytes` at `offset` of `source`, with `alloc`'s type,
    // replacing it.
    auto replaceByView = [&](gpu::AllocOp alloc, Value source,
                             uint64_t offset) {
      b.setInsertionPoint(alloc);
      Value shift = arith::ConstantIndexOp::create(
          b, alloc.getLoc(), static_cast<int64_t>(offset));
      Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                          source, shift, ValueRange{});
      eraseDeallocs(alloc.getMemref());
      alloc.getMemref().replaceAllUsesWith(view);
      alloc.erase();
    };

    // 1. Weights: a device buffer filled by one copy of a constant global.
    //    Each global gets one slot, however often it is staged.
    llvm::MapVector<StringAttr, std::pair<uint64_t, uint64_t>> weightSlots;
    uint64_t weightsBytes = 0;
    for (auto copy :
         llvm::make_early_inc_range(block.getOps<gpu::MemcpyOp>())) {
      auto global = copy.getSrc().getDefiningOp<memref::GetGlobalOp>();
      auto alloc = copy.getDst().getDefiningOp<gpu::AllocOp>();
      if (!global || !alloc || copy.getAsyncToken() ||
          !copy.getAsyncDependencies().empty() || !isPlannable(alloc, block) ||
          global.getType() != alloc.getType())
        continue;
      auto definition = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          global, global.getNameAttr());
      if (!definition || !definition.getConstant())
        continue;
      auto [slot, inserted] =
          weightSlots.try_emplace(global.getNameAttr().getAttr());
      if (inserted) {
        uint64_t bytes = *getByteSize(alloc.getType());
        slot->second = {weightsBytes, bytes};
        weightsBytes = llvm::alignTo(weightsBytes + bytes, alignment);
        ++numWeights;
      }
      copy.erase();
      replaceByView(alloc, weightsArg, slot->second.first);
      if (global->use_empty())
        global.erase();
    }

    // 2. Outputs written in place: a temporary whose data is copied whole
    //    into an output, which nothing else touches, after every other use.
    //    Program points: erasing ops below keeps the others in order.
    DenseMap<Operation *, unsigned> positions;
    for (auto [index, op] : llvm::enumerate(block))
      positions[&op] = index;
    for (auto copy :
         llvm::make_early_inc_range(block.getOps<gpu::MemcpyOp>())) {
      auto output = dyn_cast<BlockArgument>(copy.getDst());
      auto alloc = copy.getSrc().getDefiningOp<gpu::AllocOp>();
      if (!output || output.getOwner() != &block || !output.hasOneUse() ||
          !alloc || !isPlannable(alloc, block) || copy.getAsyncToken() ||
          !copy.getAsyncDependencies().empty() ||
          output.getType() != alloc.getType())
        continue;
      std::optional<unsigned> last =
          findLastUse(alloc.getMemref(), block, positions);
      if (!last || *last != positions.lookup(copy))
        continue;
      copy.erase();
      eraseDeallocs(alloc.getMemref());
      alloc.getMemref().replaceAllUsesWith(output);
      alloc.erase();
      ++numElidedCopies;
    }

    // 3. Buffers kept zero (split-K's tile counters): zeroed by a memset
    //    right after their allocation, and left zero by the kernels that
    //    use them. Each gets bytes of its own at the start of the arena,
    //    which the session zeroes once, and the memsets go.
    uint64_t zeroedBytes = 0;
    for (auto alloc :
         llvm::make_early_inc_range(block.getOps<gpu::AllocOp>())) {
      if (!alloc->hasAttr(kKeptZeroAttr) || !isPlannable(alloc, block))
        continue;
      auto memset = dyn_cast_or_null<gpu::MemsetOp>(alloc->getNextNode());
      if (!memset || memset.getDst() != alloc.getMemref() ||
          memset.getAsyncToken() || !memset.getAsyncDependencies().empty() ||
          !matchPattern(memset.getValue(), m_Zero()) ||
          !findLastUse(alloc.getMemref(), block, positions))
        continue;
      memset.erase();
      uint64_t offset = zeroedBytes;
      zeroedBytes =
          llvm::alignTo(zeroedBytes + *getByteSize(alloc.getType()), alignment);
      replaceByView(alloc, arenaArg, offset);
      ++numKeptZero;
    }

    // 4. Temporaries: the rest of the arena, offsets from live ranges.
    SmallVector<gpu::AllocOp> temporaries;
    SmallVector<LiveBuffer> live;
    main.walk([&](gpu::AllocOp alloc) {
      std::optional<unsigned> last;
      if (isPlannable(alloc, block))
        last = findLastUse(alloc.getMemref(), block, positions);
      if (!last) {
        LLVM_DEBUG(llvm::dbgs() << "left to run time: " << alloc << "\n");
        ++numUnplanned;
        return;
      }
      temporaries.push_back(alloc);
      live.push_back(
          {*getByteSize(alloc.getType()), positions.lookup(alloc), *last});
    });
    ArenaPlan plan = planArena(live, alignment);
    for (auto [alloc, offset] : llvm::zip_equal(temporaries, plan.offsets))
      replaceByView(alloc, arenaArg, zeroedBytes + offset);
    uint64_t arenaBytes = zeroedBytes + plan.arenaBytes;
    numTemporaries += temporaries.size();
    LLVM_DEBUG(llvm::dbgs()
               << "arena " << arenaBytes << " bytes (" << zeroedBytes
               << " kept zero), peak " << plan.peakLiveBytes
               << " live, weights " << weightsBytes << " bytes\n");

    // The blocks' final sizes.
    weightsArg.setType(byteMemRef(weightsBytes));
    arenaArg.setType(byteMemRef(arenaBytes));
    SmallVector<Type> argTypes(block.getArgumentTypes());
    main.setFunctionType(
        FunctionType::get(ctx, argTypes, main.getResultTypes()));

    SmallVector<Attribute> weights;
    for (auto &[name, slot] : weightSlots)
      weights.push_back(b.getDictionaryAttr({
          b.getNamedAttr("global", FlatSymbolRefAttr::get(name)),
          b.getNamedAttr("offset", b.getI64IntegerAttr(slot.first)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(slot.second)),
      }));
    module->setAttr(
        kDeviceMemoryAttr,
        b.getDictionaryAttr({
            b.getNamedAttr("weights_bytes", b.getI64IntegerAttr(weightsBytes)),
            b.getNamedAttr("arena_bytes", b.getI64IntegerAttr(arenaBytes)),
            b.getNamedAttr("peak_live_bytes",
                           b.getI64IntegerAttr(plan.peakLiveBytes)),
            b.getNamedAttr("zeroed_bytes", b.getI64IntegerAttr(zeroedBytes)),
            b.getNamedAttr("weights", b.getArrayAttr(weights)),
        }));
  }
};
} // namespace
