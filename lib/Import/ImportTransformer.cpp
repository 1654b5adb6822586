//===- ImportTransformer.cpp - transformer building blocks (attention, RMS
//normalization, rotary embeddings, gated activations) ---===//
//
// ONNX node handlers: transformer building blocks (attention, RMS
// normalization, rotary embeddings, gated activations).
//
//===----------------------------------------------------------------------===//

#include "ImporterInternal.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::onnx_import;

void mlir::ridge::onnx_import::registerTransformerHandlers(
    OnnxHandlerTable &table) {}
