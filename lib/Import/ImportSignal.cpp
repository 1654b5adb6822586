//===- ImportSignal.cpp - signal processing and linear algebra (DFT, STFT, mel
//filters, determinants) ---===//
//
// ONNX node handlers: signal processing and linear algebra (DFT, STFT, mel
// filters, determinants).
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

void mlir::ridge::onnx_import::registerSignalHandlers(OnnxHandlerTable &table) {
}
