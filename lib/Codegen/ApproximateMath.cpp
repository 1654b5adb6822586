//===- ApproximateMath.cpp - Polynomial approximations for math ops -------===//
//
// GPU kernels would otherwise call libdevice (`__nv_expf`, ...), which only a
// CUDA install provides; without it MLIR's NVVM serializer silently leaves the
// calls unresolved (toolchain notes, P9).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

struct ApproximateMathPass
    : ridge::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    // Expansion first (powf -> exp/log, sinh -> exp, ...), then the
    // approximations of what remains. CFG simplification is left to the
    // canonicalizer that follows: over a module of thousands of kernels, the
    // driver's region simplification costs more than the rewrites.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    RewritePatternSet expansions(&getContext());
    math::populateExpansionPatterns(expansions);
    if (failed(applyPatternsGreedily(getOperation(), std::move(expansions),
                                     config)))
      return signalPassFailure();
    RewritePatternSet approximations(&getContext());
    populateMathPolynomialApproximationPatterns(approximations);
    if (failed(applyPatternsGreedily(getOperation(), std::move(approximations),
                                     config)))
      return signalPassFailure();
  }
};

} // namespace
