//===- ImportRecurrent.cpp - recurrent networks (RNN, LSTM, GRU) ---===//
//
// ONNX node handlers: recurrent networks (RNN, LSTM, GRU).
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

void mlir::ridge::onnx_import::registerRecurrentHandlers(
    OnnxHandlerTable &table) {}
