//===- ExpandBF16Truncations.cpp - bf16 conversions as integer ops (CPU) --===//
//
// f32 -> bf16 truncations become integer arithmetic (round to nearest even,
// NaN kept), so that the CPU build calls no `__truncsfbf2`.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXPANDBF16TRUNCATIONSPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

struct ExpandBF16TruncationsPass
    : ridge::impl::ExpandBF16TruncationsPassBase<ExpandBF16TruncationsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
