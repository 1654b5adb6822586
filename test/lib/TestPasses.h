//===- TestPasses.h - Ridgeline's test-only passes --------------*- C++ -*-===//
//
// Test hooks that do not ship in the compiler's libraries (test/lib, linked
// by ridge-opt and by ridge-run for its hidden --inject-fault option), as
// mlir-opt links MLIR's test passes from mlir/test/lib.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TEST_LIB_TESTPASSES_H
#define RIDGELINE_TEST_LIB_TESTPASSES_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::ridge {

/// Adds 1 to the first result of fusion group `kernel`: a deliberately wrong
/// kernel, for testing that verification finds it. Fails when no group of
/// that name holds a floating-point first result.
LogicalResult injectKernelFault(ModuleOp module, StringRef kernel);

/// Adds test-ridge-inject-gpu-fault for `spec`, FAULT[:KERNEL], to the pass
/// manager of the GPU kernel modules; fails on an unknown FAULT.
LogicalResult addGpuFaultPass(OpPassManager &kernels, StringRef spec);

namespace test {
/// Registers the test passes: test-ridge-inject-kernel-fault{kernel=NAME}.
void registerRidgeTestPasses();
/// Registers test-ridge-inject-gpu-fault{fault=KIND kernel=NAME}.
void registerRidgeGpuTestPasses();
} // namespace test

} // namespace mlir::ridge

#endif // RIDGELINE_TEST_LIB_TESTPASSES_H
