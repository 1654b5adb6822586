//===- MathToPtx.cpp - Remaining math ops -> PTX instructions -------------===//
//
// Each op here is exact in PTX (no approximation), so emitting the
// instruction directly is both correct and independent of libdevice.
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

/// Replaces a float math op by one PTX instruction `mnemonic.{f32,f64}`.
template <typename OpTy> struct PtxInstructionPattern : OpRewritePattern<OpTy> {
  PtxInstructionPattern(MLIRContext *ctx, StringRef mnemonic)
      : OpRewritePattern<OpTy>(ctx), mnemonic(mnemonic) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return rewriter.notifyMatchFailure(op, "only f32 and f64 scalars");
    bool f32 = type.isF32();
    // Conversions name source and destination types (cvt.rmi.f32.f32).
    StringRef suffix = f32 ? ".f32" : ".f64";
    std::string text = mnemonic + suffix.str();
    if (StringRef(mnemonic).starts_with("cvt."))
      text += suffix;
    text += " $0";
    std::string constraints = f32 ? "=f" : "=d";
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      text += ", $" + std::to_string(i + 1);
      constraints += f32 ? ",f" : ",d";
    }
    text += ";";
    auto asmOp = LLVM::InlineAsmOp::create(
        rewriter, op.getLoc(), TypeRange{type}, op->getOperands(), text,
        constraints, /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(op.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/ArrayAttr());
    rewriter.replaceOp(op, asmOp.getResults());
    return success();
  }

  std::string mnemonic;
};

struct MathToPtxPass : ridge::impl::MathToPtxPassBase<MathToPtxPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<PtxInstructionPattern<math::FloorOp>>(ctx, "cvt.rmi");
    patterns.add<PtxInstructionPattern<math::CeilOp>>(ctx, "cvt.rpi");
    patterns.add<PtxInstructionPattern<math::RoundEvenOp>>(ctx, "cvt.rni");
    patterns.add<PtxInstructionPattern<math::TruncOp>>(ctx, "cvt.rzi");
    patterns.add<PtxInstructionPattern<math::SqrtOp>>(ctx, "sqrt.rn");
    patterns.add<PtxInstructionPattern<math::AbsFOp>>(ctx, "abs");
    patterns.add<PtxInstructionPattern<math::FmaOp>>(ctx, "fma.rn");
    // Each rewrite is one op for one instruction and creates nothing to
    // rewrite further: one walk, without the greedy driver's folding and
    // region simplification over the whole kernel module.
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
