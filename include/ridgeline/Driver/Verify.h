//===- Verify.h - Compare a fused plan with an unfused reference *- C++ -*-===//
//
// Support for `ridge-run --verify`: the fusion groups are fixed once, every
// group's results become extra outputs of the model, and the same module is
// compiled twice, fused and with the groups dissolved into one kernel per op.
// Running both on the same inputs and comparing the extra outputs in program
// order names the first kernel whose result is wrong, with its ONNX nodes.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DRIVER_VERIFY_H
#define RIDGELINE_DRIVER_VERIFY_H

#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::ridge {

/// One kernel whose results the verification compares.
struct KernelProbe {
  std::string name;
  std::vector<std::string> nodes;
  /// The model output index of each of its results.
  std::vector<unsigned> outputs;
};

/// Runs the graph pipeline and the fusion planner (for `target`, stored as
/// the module's ridge.target) on @main, then appends the results of every
/// fusion group to @main's results, named "<kernel>.<i>". Returns the groups
/// in program order.
FailureOr<std::vector<KernelProbe>>
exposeKernelOutputs(ModuleOp module, const TargetSpec &target);

/// Dissolves every fusion group into its ops: the unfused reference.
void dissolveFusionGroups(ModuleOp module);

} // namespace mlir::ridge

#endif // RIDGELINE_DRIVER_VERIFY_H
