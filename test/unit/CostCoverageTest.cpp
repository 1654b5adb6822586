//===- CostCoverageTest.cpp - Every graph op states its cost and role -----===//
//
// The roofline needs FLOPs and bytes for every op the importer can produce,
// and the fusion planner needs every op's fusion role. An op added without
// CostOpInterface would silently drop out of the report, and one without
// FusionOpInterface would silently run alone, so this test lists every
// registered op of the ridge dialect that lacks either.
//
//===----------------------------------------------------------------------===//

#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

int main() {
  mlir::MLIRContext context;
  context.loadDialect<mlir::ridge::RidgeDialect>();
  unsigned ops = 0, missingCost = 0, missingRole = 0;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    // Terminators (ridge.yield) hand values on and are no graph ops.
    if (name.getDialectNamespace() != "ridge" ||
        name.hasTrait<mlir::OpTrait::IsTerminator>())
      continue;
    ++ops;
    if (!name.hasInterface<mlir::ridge::CostOpInterface>()) {
      llvm::outs() << "FAIL: " << name.getStringRef()
                   << " does not implement CostOpInterface\n";
      ++missingCost;
    }
    if (!name.hasInterface<mlir::ridge::FusionOpInterface>()) {
      llvm::outs() << "FAIL: " << name.getStringRef()
                   << " does not implement FusionOpInterface\n";
      ++missingRole;
    }
  }
  bool pass = missingCost == 0 && missingRole == 0 && ops > 0;
  llvm::outs() << ops << " ridge ops, " << missingCost << " without a cost\n"
               << ops << " ridge ops, " << missingRole
               << " without a fusion role\n"
               << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : 1;
}
