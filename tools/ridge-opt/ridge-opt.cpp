//===- ridge-opt.cpp - Ridgeline's mlir-opt ------------------------------===//
//
// mlir-opt with every upstream dialect, pass and translation plus Ridgeline's
// dialect, passes and pipelines registered, and its test passes (test/lib).
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Analysis/Passes.h"
#include "ridgeline/Codegen/Passes.h"
#include "ridgeline/Conversion/Passes.h"
#include "ridgeline/Dialect/Ridge/Transforms/Passes.h"
#include "ridgeline/Pipelines/Pipelines.h"
#include "ridgeline/Target/Passes.h"

#include "TestPasses.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::ridge::registerRidgeAnalysisPasses();
  mlir::ridge::registerRidgeConversionPasses();
  mlir::ridge::registerRidgeTransformsPasses();
  mlir::ridge::registerRidgeCodegenPasses();
  mlir::ridge::registerRidgeTargetPasses();
  mlir::ridge::registerRidgePipelines();
  // Test passes (test/lib), as mlir-opt registers MLIR's.
  mlir::ridge::test::registerRidgeTestPasses();

  mlir::DialectRegistry registry;
  mlir::ridge::registerCompilerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Ridgeline optimizer driver\n", registry));
}
