//===- FoldResultAmaxIntoRowLoops.cpp - A row kernel's amax, row by row ---===//
//
// ridge-move-scale-reductions-to-producers gives a row kernel (LayerNorm,
// RMSNorm: one elementwise op writes each row) the amax of its result, an
// fp8 consumer's scale: `max |x|` of the whole result after the row loop.
// As it stands that reduction would be a loop nest of its own, reading the
// result back. This pass folds it into the row loop instead, on buffers
// before the kernel's linalg ops become loops:
//
//   - each row computes the maximum magnitude of its elements with a
//     reduction that recomputes the row's elementwise op from its inputs
//     (the row's threads never read back what other threads stored; the
//     op is a few FLOPs of data already in registers or L1);
//   - the row loop becomes an `scf.parallel` with one reduction (init 0,
//     `arith.maximumf`) of those row maxima, stored into the amax buffer.
//
// ridge-map-row-loops-to-warps then folds each row's maximum into the
// buffer with one atomic (the buffer is zeroed before the row loop).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/KernelConfig.h"
#include "ridgeline/Codegen/MmaContraction.h"
#include "ridgeline/Codegen/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-fold-result-amax-into-row-loops"

namespace mlir::ridge {
#define GEN_PASS_DEF_FOLDRESULTAMAXINTOROWLOOPSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

/// The elementwise op of `rows` (a row loop) that writes each row of
/// `result`: the last op of the loop's body, with one init, a subview of
/// `result`, that its body does not read. Null when there is none.
static linalg::GenericOp getRowWriter(scf::ParallelOp rows, Value result) {
  auto writer = dyn_cast_if_present<linalg::GenericOp>(
      rows.getBody()->getTerminator()->getPrevNode());
  if (!writer || writer.getNumReductionLoops() != 0 ||
      writer.getNumDpsInits() != 1 || !writer.hasPureBufferSemantics())
    return {};
  auto view = writer.getDpsInits()[0].getDefiningOp<memref::SubViewOp>();
  if (!view || view.getSource() != result ||
      !writer.getMatchingBlockArgument(writer.getDpsInitOperand(0)).use_empty())
    return {};
  return writer;
}

namespace {
struct FoldResultAmaxIntoRowLoopsPass
    : ridge::impl::FoldResultAmaxIntoRowLoopsPassBase<
          FoldResultAmaxIntoRowLoopsPass> {
  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    if (kernel.isExternal() || !kernel.getBody().hasOneBlock())
      return;
    SmallVector<linalg::GenericOp> amaxes;
    for (auto generic : kernel.front().getOps<linalg::GenericOp>())
      if (generic->hasAttr(kResultAmaxAttr))
        amaxes.push_back(generic);
    for (linalg::GenericOp amax : amaxes)
      if (failed(fold(amax)))
        return signalPassFailure();
  }

  LogicalResult fold(linalg::GenericOp amax) {
    Value result = amax.getDpsInputOperand(0)->get();
    Value buffer = amax.getDpsInits()[0];
    // The row loop right before it, writing `result`.
    scf::ParallelOp rows;
    for (Operation *op = amax->getPrevNode(); op && !rows;
         op = op->getPrevNode())
      rows = dyn_cast<scf::ParallelOp>(op);
    linalg::GenericOp writer;
    if (rows && rows.getNumResults() == 0 && isScaleReduction(amax))
      writer = getRowWriter(rows, result);
    if (!writer)
      return amax.emitError()
             << "the amax of a row kernel's result does not follow a row "
                "loop whose last op writes the result elementwise";

    // The row's maximum magnitude: the writer's body again, as a reduction
    // into a thread-private 0-d accumulator starting at 0.
    OpBuilder b(writer);
    b.setInsertionPointAfter(writer);
    Location loc = writer.getLoc();
    Type f32 = b.getF32Type();
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value accumulator =
        memref::AllocaOp::create(b, loc, MemRefType::get({}, f32));
    memref::StoreOp::create(b, loc, zero, accumulator, ValueRange());
    unsigned rank = writer.getNumLoops();
    SmallVector<AffineMap> maps;
    for (OpOperand *input : writer.getDpsInputOperands())
      maps.push_back(writer.getMatchingIndexingMap(input));
    maps.push_back(AffineMap::get(rank, 0, {}, b.getContext()));
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    Block *writerBody = writer.getBody();
    auto rowMaximum = linalg::GenericOp::create(
        b, loc, TypeRange(), writer.getDpsInputs(), accumulator, maps,
        iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          IRMapping mapping;
          for (OpOperand *input : writer.getDpsInputOperands())
            mapping.map(writer.getMatchingBlockArgument(input),
                        args[input->getOperandNumber()]);
          for (Operation &op : writerBody->without_terminator())
            nested.clone(op, mapping);
          Value element = mapping.lookup(
              cast<linalg::YieldOp>(writerBody->getTerminator()).getOperand(0));
          Value magnitude = math::AbsFOp::create(nested, nestedLoc, element);
          linalg::YieldOp::create(nested, nestedLoc,
                                  arith::MaximumFOp::create(
                                      nested, nestedLoc, args.back(), magnitude)
                                      .getResult());
        });
    if (Attribute config = writer->getAttr(kKernelConfigAttr))
      rowMaximum->setAttr(kKernelConfigAttr, config);
    Value rowValue =
        memref::LoadOp::create(b, loc, accumulator, ValueRange()).getResult();

    // The row loop, reducing the rows' maxima (0 and maximumf: max |x|
    // over the result), stored into the amax buffer.
    b.setInsertionPoint(rows);
    Value init = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    auto reducing = scf::ParallelOp::create(
        b, rows.getLoc(), rows.getLowerBound(), rows.getUpperBound(),
        rows.getStep(), ValueRange{init});
    reducing.getRegion().takeBody(rows.getRegion());
    reducing->setDiscardableAttrs(rows->getDiscardableAttrDictionary());
    Block *body = reducing.getBody();
    body->getTerminator()->erase();
    b.setInsertionPointToEnd(body);
    auto reduce = scf::ReduceOp::create(b, loc, ValueRange{rowValue});
    Block &combine = reduce.getReductions()[0].front();
    b.setInsertionPointToEnd(&combine);
    scf::ReduceReturnOp::create(
        b, loc,
        arith::MaximumFOp::create(b, loc, combine.getArgument(0),
                                  combine.getArgument(1))
            .getResult());
    rows->erase();
    b.setInsertionPoint(amax);
    memref::StoreOp::create(b, amax.getLoc(), reducing.getResult(0), buffer,
                            ValueRange());
    amax->erase();
    ++numFoldedAmaxes;
    LLVM_DEBUG(llvm::dbgs() << "folded a result amax into the row loop at "
                            << reducing.getLoc() << "\n");
    return success();
  }
};
} // namespace
