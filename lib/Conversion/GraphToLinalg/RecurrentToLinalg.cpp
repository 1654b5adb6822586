//===- RecurrentToLinalg.cpp - recurrent networks (RNN, LSTM, GRU) -------===//
//
// Lowering of the ridge recurrent networks (RNN, LSTM, GRU) to linalg on
// tensors.
//
//===----------------------------------------------------------------------===//

#include "GraphToLinalgCommon.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::linalg_lowering;

void mlir::ridge::linalg_lowering::populateRecurrentToLinalgPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {}
