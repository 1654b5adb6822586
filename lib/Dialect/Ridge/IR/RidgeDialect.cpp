//===- RidgeDialect.cpp - ridge dialect registration ----------------------===//

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ridge;

#include "ridgeline/Dialect/Ridge/IR/RidgeOpsDialect.cpp.inc"

void RidgeDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ridgeline/Dialect/Ridge/IR/RidgeOps.cpp.inc"
      >();
}

Operation *RidgeDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
