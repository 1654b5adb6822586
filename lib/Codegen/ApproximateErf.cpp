//===- ApproximateErf.cpp - erf in GPU kernels from two short polynomials -===//
//
// MLIR's erf approximation (ridge-approximate-math) evaluates a rational
// function on three intervals, each coefficient chosen by a select, and
// divides: in BERT's GELU epilogue about 43 PTX instructions an element,
// 21 of them selects and one a division. BERT, ViT and MLP-Mixer export
// GELU in its erf form, so that is most of their MLP epilogues. This pass
// rewrites each f32 `math.erf` of a GPU kernel into
//
//   |x| < 1:  x * P(x^2)                          P of degree 5
//   |x| >= 1: copysign(1 - 2^Q(min(|x|, 4)), x)   Q of degree 6
//
// both evaluated by fused multiply-adds (no branch) and one selected;
// `math.exp2` of Q becomes one `ex2.approx` in ridge-exp-to-ex2-approx,
// which runs next. About 20 instructions.
//
// P is a weighted least-squares fit of erf(x) / x in relative error on
// [0, 1]; Q one of log2(erfc(t)), weighted by erfc(t) ln 2 (the error of
// erf a unit of Q's error makes), on [1, 4]. Past 4, erfc < 2^-26 and erf
// rounds to +-1, which the clamp keeps (a polynomial would turn back). The
// error against erf in double, both pieces evaluated in f32 over [-6, 6]
// and down to 1e-30: 3.3 ulp at most; ex2.approx's 2 ulp of 2^Q add at
// most 0.3 ulp of erf on [1, 4] (2^Q <= erfc(1) = 0.157). The CPU build,
// the numerics oracle, keeps MLIR's approximation; the two agree far
// inside the rtol 1e-3 the GPU build is held to. erf(NaN) is NaN, erf(+-inf)
// +-1, erf(-0) -0 (docs/target.md, "erf on the GPU").
//
// Only f32 (scalar or vector): the lowering computes a bf16 model's math in
// f32 already, and the other types keep the rational approximation.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-approximate-erf"

namespace mlir::ridge {
#define GEN_PASS_DEF_APPROXIMATEERFPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// erf(x) / x ~ P(x^2) on [0, 1], highest degree first.
constexpr float kSmallCoefficients[] = {-5.667899386e-04f, 4.927395843e-03f,
                                        -2.672087215e-02f, 1.128057837e-01f,
                                        -3.761239052e-01f, 1.128379107e+00f};
/// log2(erfc(t)) ~ Q(t) on [1, 4], highest degree first.
constexpr float kLargeCoefficients[] = {
    2.691406989e-04f,  -4.254464991e-03f, 3.151106834e-02f, -1.487587094e-01f,
    -9.206446409e-01f, -1.626045823e+00f, -4.932875163e-04f};

/// `value` as a constant of `type` (f32, or a vector of f32).
Value createConstant(OpBuilder &b, Location loc, Type type, float value) {
  Attribute scalar = b.getF32FloatAttr(value);
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vector, scalar));
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(scalar));
}

/// The polynomial with `coefficients` (highest degree first) at `x`, by
/// Horner's rule in fused multiply-adds.
Value evaluatePolynomial(OpBuilder &b, Location loc,
                         ArrayRef<float> coefficients, Value x) {
  Type type = x.getType();
  Value result = createConstant(b, loc, type, coefficients.front());
  for (float coefficient : coefficients.drop_front())
    result = math::FmaOp::create(b, loc, result, x,
                                 createConstant(b, loc, type, coefficient));
  return result;
}

Value createErf(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value magnitude = math::AbsFOp::create(b, loc, x);
  Value square = arith::MulFOp::create(b, loc, x, x);
  Value small = arith::MulFOp::create(
      b, loc, x, evaluatePolynomial(b, loc, kSmallCoefficients, square));
  Value clamped = arith::MinimumFOp::create(b, loc, magnitude,
                                            createConstant(b, loc, type, 4.0f));
  Value tail = math::Exp2Op::create(
      b, loc, evaluatePolynomial(b, loc, kLargeCoefficients, clamped));
  Value large = math::CopySignOp::create(
      b, loc,
      arith::SubFOp::create(b, loc, createConstant(b, loc, type, 1.0f), tail),
      x);
  // A NaN compares false: the large piece, NaN through the clamp too.
  Value isSmall =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, magnitude,
                            createConstant(b, loc, type, 1.0f));
  return arith::SelectOp::create(b, loc, isSmall, small, large);
}

struct ApproximateErfPass
    : ridge::impl::ApproximateErfPassBase<ApproximateErfPass> {
  void runOnOperation() override {
    SmallVector<math::ErfOp> erfs;
    getOperation()->walk([&](math::ErfOp op) {
      Type type = op.getType();
      auto vector = dyn_cast<VectorType>(type);
      if (vector ? vector.getElementType().isF32() && !vector.isScalable()
                 : type.isF32())
        erfs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (math::ErfOp op : erfs) {
      rewriter.setInsertionPoint(op);
      LLVM_DEBUG(llvm::dbgs() << "two-piece erf for " << op << "\n");
      rewriter.replaceOp(op, createErf(rewriter, op.getLoc(), op.getOperand()));
      ++numRewritten;
    }
  }
};

} // namespace
