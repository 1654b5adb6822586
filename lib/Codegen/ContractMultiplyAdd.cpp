//===- ContractMultiplyAdd.cpp - a * b + c -> fma in GPU kernels ---------===//
//
// The NVPTX backend emits `mul.rn.f32` + `add.rn.f32` for a multiply that
// feeds an add, and the explicit rounding modifiers keep ptxas from fusing
// them into one FFMA: twice the instructions of a dot product's inner loop,
// and two roundings where the hardware needs one. This pass contracts each
// single-use multiply that feeds an add or subtract into `math.fma`, as
// CUDA compilers do by default (nvcc's -fmad=true), which then lowers to
// `fma.rn`.
//
// Only GPU kernels are contracted. The CPU build keeps both roundings and
// stays the numerics oracle: a contracted result differs from it by at most
// the one rounding the multiply no longer does, half an ulp of the product,
// so a chain of n contracted steps (a dot product of length n) stays within
// the n-ulp-order error the conformance tolerances (rtol 1e-3) already
// absorb for the uncontracted sum's reassociation (docs/target.md).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-contract-multiply-add"

namespace mlir::ridge {
#define GEN_PASS_DEF_CONTRACTMULTIPLYADDPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// The single-use multiply `value` is, in a type the fma instructions of
/// every target take (f32 and f64, scalar or vector), or null.
arith::MulFOp getContractibleMultiply(Value value) {
  auto mul = value.getDefiningOp<arith::MulFOp>();
  if (!mul || !mul->hasOneUse())
    return nullptr;
  Type element = getElementTypeOrSelf(mul.getType());
  if (!element.isF32() && !element.isF64())
    return nullptr;
  return mul;
}

struct ContractMultiplyAddPass
    : ridge::impl::ContractMultiplyAddPassBase<ContractMultiplyAddPass> {
  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::AddFOp, arith::SubFOp>(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : candidates) {
      Value lhs = op->getOperand(0), rhs = op->getOperand(1);
      bool isSub = isa<arith::SubFOp>(op);
      // a * b + c, c + a * b, a * b - c (= a * b + -c) and c - a * b
      // (= -a * b + c); negation is exact.
      arith::MulFOp mul = getContractibleMultiply(lhs);
      Value addend = rhs;
      bool negateProduct = false, negateAddend = isSub;
      if (!mul) {
        mul = getContractibleMultiply(rhs);
        addend = lhs;
        negateProduct = isSub;
        negateAddend = false;
      }
      if (!mul)
        continue;
      LLVM_DEBUG(llvm::dbgs() << "contracting " << *op << "\n");
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      Value a = mul.getLhs(), b = mul.getRhs();
      if (negateProduct)
        a = arith::NegFOp::create(rewriter, loc, a);
      if (negateAddend)
        addend = arith::NegFOp::create(rewriter, loc, addend);
      rewriter.replaceOpWithNewOp<math::FmaOp>(op, a, b, addend);
      rewriter.eraseOp(mul);
      ++numContracted;
    }
  }
};

} // namespace
