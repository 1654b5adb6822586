//===- ExpandBf16Conversions.cpp - f32 <-> bf16 without libcalls ----------===//
//
// A contraction that the precision policy rounds to bf16 (docs/precision.md)
// truncates its f32 operands to bf16 and widens them back in its body. On a
// CPU without bf16 instructions LLVM lowers the truncation to a call of
// `__truncsfbf2`, which GCC 12's libgcc does not have: the shared object
// would not load. This pass expands both conversions into integer
// arithmetic (upstream's bf16 expansion patterns of arith-expand, without
// the rest of that pass) before the CPU build's arith-to-llvm.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-expand-bf16-conversions"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {
/// Whether `op` is a conversion between bf16 and another float type.
bool isBf16Conversion(Operation *op) {
  if (!isa<arith::TruncFOp, arith::ExtFOp>(op))
    return false;
  auto isBf16 = [](Type type) { return getElementTypeOrSelf(type).isBF16(); };
  return isBf16(op->getOperand(0).getType()) ||
         isBf16(op->getResult(0).getType());
}

struct ExpandBf16ConversionsPass
    : public ridge::impl::ExpandBf16ConversionsPassBase<
          ExpandBf16ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t before = 0;
    getOperation()->walk([&](Operation *op) {
      if (isBf16Conversion(op))
        ++before;
    });
    if (before == 0)
      return markAllAnalysesPreserved();
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    int64_t after = 0;
    getOperation()->walk([&](Operation *op) {
      if (isBf16Conversion(op))
        ++after;
    });
    LLVM_DEBUG(llvm::dbgs() << "expanded " << before - after << " of " << before
                            << " bf16 conversions\n");
    numExpanded += before - after;
  }
};
} // namespace
