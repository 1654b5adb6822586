//===- Passes.h - Ridgeline code generation passes --------------*- C++ -*-===//
//
// Tensor -> GPU: kernel bodies fused into one loop nest, per-iteration and
// empty buffers, parallel loops mapped to blocks, threads and warps, device
// buffers, kernel-module merging and libdevice-free math.
//
//===----------------------------------------------------------------------===//

#ifndef RIDGELINE_CODEGEN_PASSES_H
#define RIDGELINE_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "ridgeline/Dialect/Ridge/IR/Ridge.h"

namespace mlir::ridge {

#define GEN_PASS_DECL
#include "ridgeline/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "ridgeline/Codegen/Passes.h.inc"

} // namespace mlir::ridge

#endif // RIDGELINE_CODEGEN_PASSES_H
