//===- SignalToLinalg.cpp - signal processing and linear algebra (DFT, STFT, mel
//filters, determinants) -------===//
//
// Lowering of the ridge signal processing and linear algebra (DFT, STFT, mel
// filters, determinants) to linalg on tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

void mlir::ridge::linalg_lowering::populateSignalToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {}
