//===- ExpandTf32Rounding.cpp - f32 -> tf32 -> f32 as integer arithmetic --===//
//
// A contraction the precision policy rounds to tf32 (docs/precision.md)
// rounds its f32 operands to tf32 and widens them back in its body:
// `arith.extf(arith.truncf(x : f32 to tf32) : tf32 to f32)`. The tensor-core
// lowering multiplies such operands with mma.sync m16n8k8, rounding them
// with `cvt.rna.tf32.f32`; what is left (the CPU build, SIMT kernels) has no
// tf32 type in LLVM. This pass computes the same rounding on the f32's bits:
// round to nearest, ties away from zero, on the 13 mantissa bits tf32 drops
// (add half of the dropped unit, clear the dropped bits; a carry moves into
// the exponent and past the largest finite value to infinity, as cvt's
// does), NaN kept. The CPU build is then the numerics oracle of a tf32 GPU
// build bit for bit.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-expand-tf32-rounding"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXPANDTF32ROUNDINGPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// Bits of an f32 that tf32 drops (the low 13 of its 23 mantissa bits), and
/// half of their unit.
static constexpr uint32_t kDroppedMask = 0x1fffu;
static constexpr uint32_t kHalfDroppedUnit = 0x1000u;

namespace {
bool isTf32(Type type) { return getElementTypeOrSelf(type).isTF32(); }

/// `value` of `type` (i32 or a vector of it) as a constant.
Value createI32Constant(OpBuilder &b, Location loc, Type type, uint32_t value) {
  APInt bits(32, value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(shaped, bits));
  return arith::ConstantOp::create(b, loc, IntegerAttr::get(type, bits));
}

/// f32 `x` rounded to tf32 and widened back.
Value createTf32Rounding(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Type bitsType = i32;
  if (auto vector = dyn_cast<VectorType>(x.getType()))
    bitsType = vector.clone(i32);
  Value bits = arith::BitcastOp::create(b, loc, bitsType, x);
  Value up = arith::AddIOp::create(
      b, loc, bits, createI32Constant(b, loc, bitsType, kHalfDroppedUnit));
  Value cleared = arith::AndIOp::create(
      b, loc, up, createI32Constant(b, loc, bitsType, ~kDroppedMask));
  Value rounded = arith::BitcastOp::create(b, loc, x.getType(), cleared);
  // A NaN whose payload lies in the dropped bits would become infinity.
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  return arith::SelectOp::create(b, loc, isNan, x, rounded);
}

struct ExpandTf32RoundingPass
    : public ridge::impl::ExpandTf32RoundingPassBase<ExpandTf32RoundingPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<arith::ExtFOp> widenings;
    getOperation()->walk([&](arith::ExtFOp ext) {
      if (isTf32(ext.getIn().getType()))
        widenings.push_back(ext);
    });
    IRRewriter rewriter(&getContext());
    for (arith::ExtFOp ext : widenings) {
      auto trunc = ext.getIn().getDefiningOp<arith::TruncFOp>();
      if (!trunc || !getElementTypeOrSelf(trunc.getIn().getType()).isF32() ||
          !getElementTypeOrSelf(ext.getType()).isF32()) {
        ext.emitOpError() << "widens a tf32 value that is not an f32 rounded "
                             "to tf32 (LLVM has no tf32 type)";
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(ext);
      rewriter.replaceOp(
          ext, createTf32Rounding(rewriter, ext.getLoc(), trunc.getIn()));
      if (trunc->use_empty())
        rewriter.eraseOp(trunc);
      ++numExpanded;
    }
    // A rounding whose tf32 result is used otherwise (stored, passed on)
    // has no f32 form.
    WalkResult leftover = getOperation()->walk([&](arith::TruncFOp trunc) {
      if (!isTf32(trunc.getType()))
        return WalkResult::advance();
      trunc.emitOpError() << "rounds to a tf32 value that is used other than "
                             "widened back to f32 (LLVM has no tf32 type)";
      return WalkResult::interrupt();
    });
    if (leftover.wasInterrupted())
      return signalPassFailure();
    LLVM_DEBUG(llvm::dbgs()
               << "expanded " << widenings.size() << " tf32 roundings\n");
  }
};
} // namespace
