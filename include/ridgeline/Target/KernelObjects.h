//===- KernelObjects.h - GPU kernel objects of a module ---------*- C++ -*-===//
//
// The PTX or cubin payloads of the gpu.binary ops a GPU lowering produced
// (`ridgec --emit=ptx|cubin`).
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_TARGET_KERNELOBJECTS_H
#define RIDGELINE_TARGET_KERNELOBJECTS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include <string>
#include <utility>

namespace mlir::ridge {

/// Kernel objects of a GPU-lowered module: (gpu.binary name, payload). The
/// payload is PTX text for format "isa" and a cubin for "bin".
SmallVector<std::pair<std::string, std::string>>
getKernelObjects(ModuleOp module);

} // namespace mlir::ridge

#endif // RIDGELINE_TARGET_KERNELOBJECTS_H
