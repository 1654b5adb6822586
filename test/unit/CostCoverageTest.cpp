//===- CostCoverageTest.cpp - Every graph op states its cost --------------===//
//
// The roofline needs FLOPs and bytes for every op the importer can produce.
// An op added without CostOpInterface would silently drop out of the report,
// so this test lists every registered op of the ridge dialect that lacks it.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::ridge::RidgeDialect>();
  unsigned ops = 0, missing = 0;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    // Terminators (ridge.yield) hand values on and are no graph ops.
    if (name.getDialectNamespace() != "ridge" ||
        name.hasTrait<mlir::OpTrait::IsTerminator>())
      continue;
    ++ops;
    if (!name.hasInterface<mlir::ridge::CostOpInterface>()) {
      llvm::outs() << "FAIL: " << name.getStringRef()
                   << " does not implement CostOpInterface\n";
      ++missing;
    }
  }
  llvm::outs() << ops << " ridge ops, " << missing << " without a cost\n"
               << (missing == 0 && ops > 0 ? "PASS" : "FAIL") << "\n";
  return missing == 0 && ops > 0 ? 0 : 1;
}
