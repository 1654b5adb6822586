//===- LowerStridedCopies.cpp - Non-contiguous memref.copy -> linalg.copy -===//
//
// finalize-memref-to-llvm lowers a memref.copy whose buffers are not both
// contiguous to a call of the C runner utilities' `memrefCopy`, which no
// compiled model links. This pass rewrites those copies to linalg.copy, which
// both back ends lower to loops.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Codegen/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ridge-lower-strided-copies"

namespace mlir::ridge {
#define GEN_PASS_DEF_LOWERSTRIDEDCOPIESPASS
#include "ridgeline/Codegen/Passes.h.inc"
} // namespace mlir::ridge

using namespace mlir;

/// Whether finalize-memref-to-llvm copies a buffer of `type` with a memcpy
/// (its MemRefCopyOpLowering's test): an identity layout, or a static shape
/// laid out contiguously in row-major order.
static bool isContiguousBuffer(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

/// Whether a buffer of `type` starts at a non-zero or dynamic offset from
/// its allocation.
static bool hasOffset(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return failed(memref.getStridesAndOffset(strides, offset)) || offset != 0;
}

namespace {
struct LowerStridedCopiesPass
    : ridge::impl::LowerStridedCopiesPassBase<LowerStridedCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      Type source = copy.getSource().getType();
      Type target = copy.getTarget().getType();
      if (!isa<MemRefType>(source) || !isa<MemRefType>(target))
        return;
      if (!isContiguousBuffer(source) || !isContiguousBuffer(target) ||
          (offsetCopies && (hasOffset(source) || hasOffset(target))))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      LLVM_DEBUG(llvm::dbgs() << "lowering " << copy << "\n");
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      rewriter.eraseOp(copy);
      ++numLoweredCopies;
    }
  }
};
} // namespace
