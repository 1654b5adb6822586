//===- MathToPtx.cpp - Remaining math ops -> PTX instructions -------------===//
//
// Each op here is one exact PTX instruction (no approximation). It becomes a
// generic `llvm.call_intrinsic` of the LLVM intrinsic the NVPTX backend
// selects as that instruction: convert-gpu-to-nvvm marks the typed intrinsic
// ops (llvm.intr.floor, sqrt, fabs, ...) illegal so as to call libdevice, but
// leaves the generic form alone. Unlike inline assembly, the intrinsic stays
// visible to LLVM: constants fold into it, and code generation is cheaper.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::ridge {
#define GEN_PASS_DEF_MATHTOPTXPASS
#include "ridgeline/Conversion/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

namespace {

/// Replaces a float math op by a call of the LLVM intrinsic `llvm.NAME.f32`
/// (or `.f64`), which the NVPTX backend selects as one exact instruction.
template <typename OpTy> struct IntrinsicCallPattern : OpRewritePattern<OpTy> {
  IntrinsicCallPattern(MLIRContext *ctx, StringRef name)
      : OpRewritePattern<OpTy>(ctx), name(name) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return rewriter.notifyMatchFailure(op, "only f32 and f64 scalars");
    std::string intrinsic =
        ("llvm." + name + (type.isF32() ? ".f32" : ".f64")).str();
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, type, rewriter.getStringAttr(intrinsic), op->getOperands());
    return success();
  }

  StringRef name;
};

struct MathToPtxPass : ridge::impl::MathToPtxPassBase<MathToPtxPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<IntrinsicCallPattern<math::FloorOp>>(ctx, "floor");
    patterns.add<IntrinsicCallPattern<math::CeilOp>>(ctx, "ceil");
    patterns.add<IntrinsicCallPattern<math::RoundEvenOp>>(ctx, "roundeven");
    patterns.add<IntrinsicCallPattern<math::TruncOp>>(ctx, "trunc");
    patterns.add<IntrinsicCallPattern<math::SqrtOp>>(ctx, "sqrt");
    patterns.add<IntrinsicCallPattern<math::AbsFOp>>(ctx, "fabs");
    patterns.add<IntrinsicCallPattern<math::FmaOp>>(ctx, "fma");
    // Each rewrite is one op for one instruction and creates nothing to
    // rewrite further: one walk, without the greedy driver's folding and
    // region simplification over the whole kernel module.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
