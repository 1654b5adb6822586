//===- ExpToEx2Approx.cpp - exp in GPU kernels by the ex2 unit ------------===//
//
// MLIR's polynomial exp (ridge-approximate-math) costs about fifteen
// instructions an element: range reduction, a degree-6 polynomial, the
// exponent rebuilt in integer arithmetic, clamps for overflow and NaN. The
// multi-function unit computes 2^x in one instruction, `ex2.approx.ftz.f32`,
// which the attention kernels already use for their probabilities. This
// pass rewrites each f32 `math.exp` of a GPU kernel into that instruction
// of x * log2(e), and `math.exp2` into it directly, as nvcc's __expf does.
// A sigmoid (SiLU's, or GELU's tanh form x / (1 + exp(-2u))) then costs a
// multiply, the ex2, an add and a divide.
//
// The error: ex2.approx is within 2 ulp of 2^t (PTX ISA; subnormal results
// flush to zero), and rounding t = x * log2(e) moves t by at most
// |t| 2^-24, the result by |x| 2^-24 relative: 5e-6 at x = +-88, where exp
// leaves the normal range. Both are far inside the rtol 1e-3 at which the
// GPU build is compared with the CPU oracle, which keeps libm's expf
// (docs/precision.md, "exp on the GPU"). Overflow (+inf past x = 88.72),
// -inf (0) and NaN come out as expf's.
//
// Only f32 (scalar or vector, elementwise): the lowering computes a bf16
// model's math in f32 already, and the other types keep the polynomial.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "ridge-exp-to-ex2-approx"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXPTOEX2APPROXPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// 2^t for an f32 `t`: `ex2.approx.ftz.f32`.
Value createEx2(OpBuilder &b, Location loc, Value t) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"), ValueRange{t})
      .getResult(0);
}

/// e^x (`scaleByLog2e`) or 2^x of an f32 `x`.
Value createScalarExp(OpBuilder &b, Location loc, Value x, bool scaleByLog2e) {
  if (scaleByLog2e)
    x = arith::MulFOp::create(
        b, loc, x,
        arith::ConstantOp::create(
            b, loc, b.getF32FloatAttr(static_cast<float>(M_LOG2E))));
  return createEx2(b, loc, x);
}

struct ExpToEx2ApproxPass
    : ridge::impl::ExpToEx2ApproxPassBase<ExpToEx2ApproxPass> {
  void runOnOperation() override {
    SmallVector<Operation *> exps;
    getOperation()->walk([&](Operation *op) {
      if (!isa<math::ExpOp, math::Exp2Op>(op))
        return;
      Type type = op->getResult(0).getType();
      auto vector = dyn_cast<VectorType>(type);
      if (vector ? vector.getElementType().isF32() && vector.getRank() == 1 &&
                       !vector.isScalable()
                 : type.isF32())
        exps.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : exps) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      bool natural = isa<math::ExpOp>(op);
      Value x = op->getOperand(0);
      Value result;
      if (auto vector = dyn_cast<VectorType>(x.getType())) {
        // One ex2 an element: the instruction is scalar.
        SmallVector<Value> elements;
        for (int64_t i = 0; i < vector.getNumElements(); ++i)
          elements.push_back(createScalarExp(
              rewriter, loc, vector::ExtractOp::create(rewriter, loc, x, i),
              natural));
        result =
            vector::FromElementsOp::create(rewriter, loc, vector, elements);
      } else {
        result = createScalarExp(rewriter, loc, x, natural);
      }
      LLVM_DEBUG(llvm::dbgs() << "ex2.approx for " << *op << "\n");
      rewriter.replaceOp(op, result);
      ++numRewritten;
    }
  }
};

} // namespace
