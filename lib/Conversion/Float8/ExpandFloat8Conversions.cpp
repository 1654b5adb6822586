//===- ExpandFloat8Conversions.cpp - float8 truncf/extf as integer ops ----===//
//
// An fp8 contraction (docs/precision.md) keeps its quantized operands as
// f8E4M3FN tensors: `arith.truncf` rounds a scaled f32 to e4m3 and the
// contraction's body widens it back with `arith.extf`. The tensor-core
// lowering turns those into `cvt.rn.satfinite.e4m3x2.f32` and e4m3 wgmma
// operands; the CPU build and SIMT kernels have no float8 type in LLVM,
// whose conversion stores float8 values as i8. This pass replaces the two
// conversions with the exact integer arithmetic of Float8Arithmetic.h, so
// that both run the rounding the tensor-core kernel runs.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Conversion/Float8Arithmetic.h"
#include "ridgeline/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-expand-float8-conversions"

namespace mlir::ridge {
#define GEN_PASS_DEF_EXPANDFLOAT8CONVERSIONSPASS
#include "ridgeline/Conversion/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;
using namespace mlir::ridge;

namespace {
/// `value` converted between float types (no op when they are the same).
Value convertFloat(OpBuilder &b, Location loc, Value value, Type to) {
  unsigned from = value.getType().getIntOrFloatBitWidth();
  unsigned width = to.getIntOrFloatBitWidth();
  if (value.getType() == to)
    return value;
  if (width > from)
    return arith::ExtFOp::create(b, loc, to, value);
  return arith::TruncFOp::create(b, loc, to, value);
}

struct ExpandFloat8ConversionsPass
    : public ridge::impl::ExpandFloat8ConversionsPassBase<
          ExpandFloat8ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> conversions;
    WalkResult walk = getOperation()->walk([&](Operation *op) {
      Type converted;
      if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        converted = trunc.getType();
      else if (auto ext = dyn_cast<arith::ExtFOp>(op))
        converted = ext.getIn().getType();
      else
        return WalkResult::advance();
      if (!isOnnxFloat8(getElementTypeOrSelf(converted)))
        return WalkResult::advance();
      if (!converted.isIntOrFloat()) {
        op->emitOpError() << "converts a vector of " << converted
                          << ", which ridge-expand-float8-conversions does "
                             "not expand (scalars only)";
        return WalkResult::interrupt();
      }
      conversions.push_back(op);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    Type i8 = rewriter.getI8Type();
    for (Operation *op : conversions) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        // arith.truncf is an IEEE conversion: overflow gives NaN for
        // f8E4M3FN, infinity for f8E5M2 (no saturation).
        auto type = cast<FloatType>(trunc.getType());
        Value bits = encodeFloat8(rewriter, loc, trunc.getIn(), type,
                                  /*saturate=*/false);
        rewriter.replaceOpWithNewOp<arith::BitcastOp>(trunc, type, bits);
        ++numRoundings;
        continue;
      }
      auto ext = cast<arith::ExtFOp>(op);
      auto type = cast<FloatType>(ext.getIn().getType());
      Value bits = arith::BitcastOp::create(rewriter, loc, i8, ext.getIn());
      Value value = decodeFloat8(rewriter, loc, bits, type);
      rewriter.replaceOp(ext,
                         convertFloat(rewriter, loc, value, ext.getType()));
      ++numWidenings;
    }
    LLVM_DEBUG(llvm::dbgs()
               << "expanded " << conversions.size() << " float8 conversions\n");
  }
};
} // namespace
