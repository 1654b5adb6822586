//===- RidgeRecurrentOps.cpp - ridge Recurrent ops
//---------------------------===//
//
// Type inference, verifiers, folders and costs of the ops declared in
// RidgeRecurrentOps.td.
//
//===----------------------------------------------------------------------===//

#include "RidgeOpsCommon.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ridge;
using namespace mlir::ridge::detail;
