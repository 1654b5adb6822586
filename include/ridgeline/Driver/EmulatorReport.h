//===- EmulatorReport.h - Measured kernels against the plan -----*- C++ -*-===//
//
// ridge-run --emulator-report: the counters the PTX emulator measured for
// each GPU kernel of a run, next to what the fusion plan predicted for the
// fusion group the kernel came from (ridgec --report), so that the plan's
// traffic claims are checked against the code.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_DRIVER_EMULATORREPORT_H
#define RIDGELINE_DRIVER_EMULATORREPORT_H

#include "ridgeline/Analysis/Roofline.h"
#include "ridgeline/Analysis/RooflineReport.h"
#include "ridgeline/Analysis/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::ridge {

/// The roofline report of the imported graph `module` with the kernels that
/// compiling it forms (the same graph and fusion-group pipelines as the
/// compile; `module` is left as it is). Null after reporting an error.
std::optional<RooflineReport>
buildPlannedReport(ModuleOp module, const TargetSpec &target, bool fusion,
                   const RooflineModel &model, StringRef modelName);

/// The fusion group a GPU kernel was outlined from: "k5_matmul" for
/// "k5_matmul_kernel" and "k0_recurrent_kernel_3"; empty for a kernel of no
/// group.
std::string getKernelGroupName(StringRef kernelName);

/// Prints the emulator's counters (`countersJson`, the runtime's
/// getEmulatorCountersJson) per fusion group of `plan`: a table (`json`
/// false) or the JSON document of docs/emulator.md ("The emulator report").
/// Fails with `error` on counters it cannot read.
LogicalResult printEmulatorReport(const RooflineReport &plan,
                                  StringRef countersJson, StringRef chip,
                                  StringRef gpuName, bool json,
                                  llvm::raw_ostream &os, std::string &error);

/// The time one kernel's launches took (the runtime's KernelTime).
struct MeasuredKernelTime {
  std::string name;
  uint64_t launches = 0;
  double milliseconds = 0;
};

/// Prints the measured time of each fusion group of `plan` (its kernels'
/// times added up) next to its roofline prediction on `gpuName`. `what`
/// says what was measured ("GPU" or "emulation").
void printKernelTimes(const RooflineReport &plan,
                      ArrayRef<MeasuredKernelTime> times, StringRef chip,
                      StringRef gpuName, StringRef what, llvm::raw_ostream &os);

} // namespace mlir::ridge

#endif // RIDGELINE_DRIVER_EMULATORREPORT_H
