//===- SelectPrecision.cpp - Record each contraction's number format ------===//
//
// Mechanism only: the precision policy (PrecisionPolicy.h) decides, from the
// module's ridge.target, the format each contraction's f32 operands are
// rounded to; this pass records it as the op's `ridge.precision` attribute,
// which the graph-to-linalg lowering turns into the rounding.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/PrecisionPolicy.h"
#include "ridgeline/Analysis/Target.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-select-precision"

namespace mlir::ridge {
#define GEN_PASS_DEF_SELECTPRECISIONPASS
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
struct SelectPrecisionPass
    : public ridge::impl::SelectPrecisionPassBase<SelectPrecisionPass> {
  using Base::Base;

  /// The statistic that counts decisions for `reason`.
  Statistic &getStatistic(PrecisionReason reason) {
    switch (reason) {
    case PrecisionReason::Rounded:
      return numRounded;
    case PrecisionReason::Fp32Requested:
      return numFp32Requested;
    case PrecisionReason::NotF32:
      return numNotF32;
    case PrecisionReason::UnknownShape:
      return numUnknownShape;
    case PrecisionReason::TooSmall:
      return numTooSmall;
    case PrecisionReason::MemoryBound:
      return numMemoryBound;
    case PrecisionReason::NarrowedWeights:
      return numNarrowedWeights;
    case PrecisionReason::FusedWithRounded:
      return numFusedWithRounded;
    case PrecisionReason::NoAttentionFormat:
      return numNoAttentionFormat;
    case PrecisionReason::Fp8Fallback:
      return numFp8Fallback;
    }
    llvm_unreachable("unknown precision reason");
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<TargetSpec> target =
        getTargetForPass(func, gpu, gpuSpec, precision);
    if (failed(target))
      return signalPassFailure();
    FailureOr<RooflineModel> model =
        getRooflineForPass(func, gpu, gpuSpec, precision);
    if (failed(model))
      return signalPassFailure();

    bool changed = false;
    for (auto &[op, decision] : selectPrecisions(func, *target, *model)) {
      ++getStatistic(decision.reason);
      LLVM_DEBUG(llvm::dbgs()
                 << op->getName() << " at " << op->getLoc() << ": "
                 << (decision.roundTo ? stringifyPrecision(*decision.roundTo)
                                      : StringRef("no rounding"))
                 << " (" << decision.explanation << ")\n");
      if (decision.roundTo) {
        auto value = StringAttr::get(&getContext(),
                                     stringifyPrecision(*decision.roundTo));
        changed |= op->getAttr(kPrecisionAttr) != value;
        op->setAttr(kPrecisionAttr, value);
      } else {
        changed |= static_cast<bool>(op->removeAttr(kPrecisionAttr));
      }
    }
    if (!changed)
      markAllAnalysesPreserved();
  }
};
} // namespace
