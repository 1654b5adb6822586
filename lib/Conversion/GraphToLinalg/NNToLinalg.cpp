//===- NNToLinalg.cpp - spatial neural-network ops -------===//
//
// Lowering of the ridge spatial neural-network ops to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

namespace {} // namespace

void mlir::ridge::linalg_lowering::populateNNToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  (void)ctx;
  (void)converter;
}
