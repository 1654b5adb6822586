//===- ConstantElements.h - Reading a ridge.constant's elements -*- C++ -*-===//
//
// Random access to the elements of a ridge.constant where they are stored
// (inline, or a weight's resource blob), for passes that decide by a
// constant's values (an attention mask's shape, an fp8 weight's scale)
// without copying it.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DIALECT_RIDGE_IR_CONSTANTELEMENTS_H
#define RIDGELINE_DIALECT_RIDGE_IR_CONSTANTELEMENTS_H

#include "mlir/IR/Value.h"

#include <functional>
#include <optional>

namespace mlir::ridge {

/// Element `index` (row-major) of a constant, as a double (bool: 1/0).
using ConstantElementFn = std::function<double(int64_t)>;

/// Random access to the elements of `value` when a ridge.constant defines
/// it, read where they are stored (a 16k x 16k mask is not copied); nullopt
/// for a constant whose data is not at hand (an unloaded resource) or whose
/// element type is not read here (f32, f64, i1, i8, i32, i64 from resources;
/// any float or integer inline).
std::optional<ConstantElementFn> getConstantElements(Value value);

} // namespace mlir::ridge

#endif // RIDGELINE_DIALECT_RIDGE_IR_CONSTANTELEMENTS_H
