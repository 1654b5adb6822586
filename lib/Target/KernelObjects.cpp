//===- KernelObjects.cpp - GPU kernel objects of a module -----------------===//

#include "ridgeline/Target/KernelObjects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::ridge;

SmallVector<std::pair<std::string, std::string>>
mlir::ridge::getKernelObjects(ModuleOp module) {
  SmallVector<std::pair<std::string, std::string>> objects;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      objects.emplace_back(binary.getName().str(),
                           object.getObject().getValue().str());
    }
  });
  return objects;
}
