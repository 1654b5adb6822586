//===- TransformerToLinalg.cpp - transformer building blocks (attention, RMS
//normalization, rotary embeddings, gated activations) -------===//
//
// Lowering of the ridge transformer building blocks (attention, RMS
// normalization, rotary embeddings, gated activations) to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

void mlir::ridge::linalg_lowering::populateTransformerToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {}
