//===- ApproximateMath.cpp - Polynomial approximations for math ops -------===//
//
// GPU kernels would otherwise call libdevice (`__nv_expf`, ...), which only a
// CUDA install provides; without it MLIR's NVVM serializer silently leaves the
// calls unresolved (toolchain notes, P9).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// `log(1 + y)` -> `log1p(y)`. Rounding `1 + y` to f32 loses y's low bits: for
/// y = exp(-10) ~ 4.5e-5 (softplus and Mish of x = -10) the sum keeps ~3
/// significant digits, a relative error up to 1.3e-3 in the log. The log1p
/// approximation recovers them (Kahan: `y * log(u) / (u - 1)` with
/// u = 1 + y). Only for the types the polynomial approximations handle
/// (f16, bf16, f32); a wider log is left as it is.
struct LogOfOnePlusToLog1p : OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::LogOp op,
                                PatternRewriter &rewriter) const override {
    auto elementType = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (!elementType || elementType.getWidth() > 32)
      return rewriter.notifyMatchFailure(op, "not f32 or narrower");
    auto add = op.getOperand().getDefiningOp<arith::AddFOp>();
    if (!add)
      return rewriter.notifyMatchFailure(op, "operand is not an addf");
    Value y;
    if (matchPattern(add.getRhs(), m_OneFloat()))
      y = add.getLhs();
    else if (matchPattern(add.getLhs(), m_OneFloat()))
      y = add.getRhs();
    else
      return rewriter.notifyMatchFailure(op, "addf adds no 1.0");
    rewriter.replaceOpWithNewOp<math::Log1pOp>(op, y, op.getFastmath());
    return success();
  }
};

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
    // An f32 tanh gets its own polynomial rather than the expansion, whose
    // (1 - exp(-2|x|)) / (1 + exp(-2|x|)) cancels for small |x|: relative
    // error up to 6.6e-4 at x = 4.5e-5 (Mish of x = -10), no correct digit
    // below 3e-8. The polynomial returns x for |x| < 4e-4. Other types
    // (f16, f64) keep the expansion. Inserted first, the polynomial is tried
    // first among patterns of equal benefit (the applicator's sort is
    // stable).
    populatePolynomialApproximateTanhPattern(expansions);
    math::populateExpansionPatterns(expansions);
    expansions.add<LogOfOnePlusToLog1p>(&getContext());
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
