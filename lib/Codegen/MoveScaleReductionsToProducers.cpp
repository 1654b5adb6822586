//===- MoveScaleReductionsToProducers.cpp - fp8 amax where it is stored ---===//
//
// An fp8 kernel quantizes its activation with a per-tensor scale taken from
// the activation's amax, max |x| (docs/precision.md). Computed in the
// consuming kernel, the amax costs two launches of their own and one more
// read of the whole activation before the GEMM. When the activation is a
// result of a kernel that has every element in registers when it stores
// it, this pass moves the consumer's scale reduction into the producing
// kernel, as one more (0-d) result that the consumer takes as an argument:
//
//   - a kernel that ridge-lower-mma-contractions builds (a tensor-core or
//     GEMV contraction): its epilogue folds the magnitudes of what it
//     stores into the amax, one atomic max a warp;
//   - a row kernel (LayerNorm, RMSNorm) whose rows of the result are
//     written last, by one elementwise op: the reduction is
//     marked for ridge-fold-result-amax-into-row-loops, which computes it
//     row by row in the row loop, one atomic max a row;
//   - the one-pass tensor-core attention (ridge-lower-flash-attention): its
//     lanes fold the magnitudes of O they store, one atomic max a warp.
//
// On tensors, between ridge-tile-kernel-bodies and bufferization: the
// producer's new result is returned by @main's call and passed to the
// consumer's call. A result whose amax several consumers read is reduced
// once. The amax is exact (a maximum does not depend on the order it is
// taken in), so the GPU build's numerics do not change.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-move-scale-reductions-to-producers"

namespace mlir::ridge {
#define GEN_PASS_DEF_MOVESCALEREDUCTIONSTOPRODUCERSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// `value` without the views of it that keep its elements (reshapes):
/// their amax is the amax of their source.
static Value stripReshapes(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
            op))
      break;
    value = op->getOperand(0);
  }
  return value;
}

namespace {
struct MoveScaleReductionsToProducersPass
    : ridge::impl::MoveScaleReductionsToProducersPassBase<
          MoveScaleReductionsToProducersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Each kernel's call; kernels called more than once are left alone (a
    // new result or argument would change every call).
    DenseMap<Operation *, unsigned> numCalls;
    module.walk([&](func::CallOp call) {
      if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
        ++numCalls[callee];
    });
    // Consumers in call order; calls are looked up when used, since moving
    // a reduction rebuilds the producer's call.
    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::CallOp call) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || !callee->hasAttr(kKernelAttr) || numCalls[callee] != 1)
        return;
      kernels.push_back(callee);
      callOf[callee] = call;
    });
    for (func::FuncOp kernel : kernels)
      if (failed(moveScaleReductions(symbols, callOf[kernel])))
        return signalPassFailure();
  }

  /// Moves the scale reductions of `call`'s kernel that reduce a whole
  /// argument into the kernel producing it.
  LogicalResult moveScaleReductions(SymbolTable &symbols, func::CallOp call) {
    auto consumer = symbols.lookup<func::FuncOp>(call.getCallee());
    if (consumer.isExternal() || !consumer.getBody().hasOneBlock())
      return success();
    SmallVector<linalg::GenericOp> reductions;
    for (auto generic : consumer.front().getOps<linalg::GenericOp>())
      if (isScaleReduction(generic) &&
          isa<BlockArgument>(generic.getDpsInputOperand(0)->get()))
        reductions.push_back(generic);
    // The consumer's new argument per argument it reduced.
    DenseMap<unsigned, Value> amaxArguments;
    for (linalg::GenericOp reduction : reductions) {
      auto argument =
          cast<BlockArgument>(reduction.getDpsInputOperand(0)->get());
      unsigned argNo = argument.getArgNumber();
      Value amaxArgument = amaxArguments.lookup(argNo);
      if (!amaxArgument) {
        FailureOr<Value> amax =
            getProducerAmax(symbols, call.getOperand(argNo));
        if (failed(amax))
          return failure();
        if (!*amax)
          continue;
        unsigned position = consumer.getNumArguments();
        if (failed(consumer.insertArgument(position, (*amax).getType(),
                                           DictionaryAttr(),
                                           reduction.getLoc())))
          return failure();
        call.getOperandsMutable().append(*amax);
        amaxArgument = consumer.getArgument(position);
        amaxArguments[argNo] = amaxArgument;
      }
      LLVM_DEBUG(llvm::dbgs() << consumer.getName() << ": amax of argument "
                              << argNo << " from its producer\n");
      // The reduction, then its zero fill and that fill's empty tensor
      // when nothing else reads them: bufferization would allocate and
      // fill a buffer for them.
      auto fill = reduction.getDpsInits()[0].getDefiningOp<linalg::LinalgOp>();
      reduction->getResult(0).replaceAllUsesWith(amaxArgument);
      reduction->erase();
      if (fill && isZeroFill(fill) && fill->use_empty()) {
        Operation *empty = fill.getDpsInits()[0].getDefiningOp();
        fill->erase();
        if (isa_and_present<tensor::EmptyOp>(empty) && empty->use_empty())
          empty->erase();
      }
      ++numMovedScaleReductions;
    }
    return success();
  }

  /// The 0-d amax of `activation` computed by the kernel producing it (made
  /// a result of that kernel on the first request), or null when that is
  /// not a kernel that stores its results from registers.
  FailureOr<Value> getProducerAmax(SymbolTable &symbols, Value activation) {
    auto result = dyn_cast<OpResult>(stripReshapes(activation));
    auto call = result ? dyn_cast<func::CallOp>(result.getOwner()) : nullptr;
    if (!call)
      return Value();
    auto producer = symbols.lookup<func::FuncOp>(call.getCallee());
    if (!producer || !producer->hasAttr(kKernelAttr) ||
        callOf[producer] != call)
      return Value();
    auto key =
        std::make_pair(producer.getOperation(), result.getResultNumber());
    if (auto known = amaxResults.find(key); known != amaxResults.end())
      return callOf[producer]->getResult(known->second);
    FailureOr<std::optional<KernelConfig>> config = getKernelConfig(producer);
    if (failed(config))
      return failure();
    if (!*config)
      return Value();
    auto returnOp = cast<func::ReturnOp>(producer.front().getTerminator());
    Value returned = returnOp.getOperand(result.getResultNumber());
    Operation *storing = getStoringOp(producer, **config, returned);
    auto tensorType = dyn_cast<RankedTensorType>(returned.getType());
    if (!storing || !tensorType || !tensorType.getElementType().isF32())
      return Value();

    // zero fill at the kernel's start, max |x| after the result's op.
    OpBuilder b(&getContext());
    Location loc = storing->getLoc();
    Type f32 = b.getF32Type();
    auto scalarType = RankedTensorType::get({}, f32);
    b.setInsertionPointToStart(&producer.front());
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f32);
    Value fill = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    b.setInsertionPointAfter(storing);
    int64_t rank = tensorType.getRank();
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                   AffineMap::get(rank, 0, {}, b.getContext())};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    auto reduction = linalg::GenericOp::create(
        b, loc, scalarType, returned, fill, maps, iterators,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          Value magnitude = math::AbsFOp::create(nested, nestedLoc, args[0]);
          Value max =
              arith::MaximumFOp::create(nested, nestedLoc, args[1], magnitude);
          linalg::YieldOp::create(nested, nestedLoc, max);
        });
    if (Attribute kernelConfig = storing->getAttr(kKernelConfigAttr))
      reduction->setAttr(kKernelConfigAttr, kernelConfig);
    // A row kernel's is folded into its row loop on buffers
    // (ridge-fold-result-amax-into-row-loops), which must not miss it.
    if (isa<scf::ForallOp>(storing))
      reduction->setAttr(kResultAmaxAttr, b.getUnitAttr());

    unsigned position = producer.getNumResults();
    if (failed(producer.insertResult(position, scalarType, DictionaryAttr())))
      return failure();
    returnOp.getOperandsMutable().append(reduction.getResult(0));
    // The call returns it too.
    OpBuilder callBuilder(call);
    auto newCall = func::CallOp::create(callBuilder, call.getLoc(), producer,
                                        call.getOperands());
    newCall->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    call.replaceAllUsesWith(
        newCall.getResults().take_front(call.getNumResults()));
    call->erase();
    callOf[producer] = newCall;
    amaxResults[key] = position;
    LLVM_DEBUG(llvm::dbgs() << producer.getName() << ": returns the amax of "
                            << "result " << result.getResultNumber() << "\n");
    return newCall->getResult(position);
  }

  /// The op of `producer` that computes `returned`, a result, as the kernel
  /// stores it, when the kernel's lowering can fold an amax into those
  /// stores: the epilogue (or the product, without one) of a kernel that
  /// ridge-lower-mma-contractions builds, the attention of a one-pass
  /// tensor-core attention kernel, or the row loop (an scf.forall over rows,
  /// each row of the result written by the last op of its body, an
  /// elementwise one) of a row kernel, which ridge-map-row-loops-to-warps
  /// maps one row a warp. Null otherwise.
  Operation *getStoringOp(func::FuncOp producer, const KernelConfig &config,
                          Value returned) {
    if (config.usesDedicatedKernel()) {
      std::string reason;
      FailureOr<MmaContraction> mma =
          matchMmaContraction(producer, reason, /*allowF32=*/config.gemv);
      if (failed(mma)) {
        LLVM_DEBUG(llvm::dbgs()
                   << producer.getName()
                   << ": not a contraction kernel: " << reason << "\n");
        return nullptr;
      }
      Operation *storing =
          mma->epilogue ? mma->epilogue.getOperation()
                        : mma->products.front().contraction.getOperation();
      return returned.getDefiningOp() == storing ? storing : nullptr;
    }
    // The one-pass tensor-core attention stores O from registers; the
    // decode and split-key kernels are not built to fold an amax in.
    if (config.usesFlashAttention() && !config.attentionDecode &&
        config.attentionSplits == 1 && producer.getNumResults() == 1) {
      Operation *attention = returned.getDefiningOp();
      return attention && attention->getBlock() == &producer.front() ? attention
                                                                     : nullptr;
    }
    if (config.usesAttentionKernel() || config.tileSizes.empty())
      return nullptr;
    auto rows = returned.getDefiningOp<scf::ForallOp>();
    auto kind = producer->getAttrOfType<StringAttr>(kKernelAttr);
    if (!rows || !kind || kind.getValue() != "reduction")
      return nullptr;
    // The row of this result comes whole from one elementwise op, the
    // last of the row's body (ridge-fold-result-amax-into-row-loops finds
    // it there on buffers).
    Value shared =
        rows.getRegionIterArgs()[cast<OpResult>(returned).getResultNumber()];
    tensor::ParallelInsertSliceOp insert;
    for (Operation &op : rows.getTerminator().getYieldingOps()) {
      auto candidate = dyn_cast<tensor::ParallelInsertSliceOp>(op);
      if (!candidate || candidate.getDest() != shared)
        continue;
      if (insert)
        return nullptr;
      insert = candidate;
    }
    auto elementwise =
        insert ? insert.getSource().getDefiningOp<linalg::GenericOp>()
               : nullptr;
    if (!elementwise || elementwise.getNumReductionLoops() != 0 ||
        elementwise->getNumResults() != 1 ||
        elementwise->getNextNode() != rows.getTerminator())
      return nullptr;
    return rows;
  }

  /// Each kernel's one call (updated as calls are rebuilt with new results).
  DenseMap<Operation *, func::CallOp> callOf;
  /// (producer kernel, result) -> the producer's result that is its amax.
  DenseMap<std::pair<Operation *, unsigned>, unsigned> amaxResults;
};
} // namespace
