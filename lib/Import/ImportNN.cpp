//===- ImportNN.cpp - convolution, pooling and resizing ---===//
//
// ONNX node handlers: convolution, pooling and resizing.
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

void mlir::ridge::onnx_import::registerNNHandlers(OnnxHandlerTable &table) {}
