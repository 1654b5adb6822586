//===- Passes.td - Ridgeline conversion passes -------------*- tablegen -*-===//

#ifndef RIDGELINE_CONVERSION_PASSES
#define RIDGELINE_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph to linalg
//===----------------------------------------------------------------------===//

def ConvertGraphToLinalgPass : Pass<"ridge-convert-graph-to-linalg", "ModuleOp"> {
  let summary = "Lower the ridge graph dialect to linalg/tensor/arith/math";
  let description = [{
    Rewrites every `ridge` op into destination-style linalg ops on tensors:
    elementwise ops become `linalg.generic` with broadcasting indexing maps,
    contractions (MatMul with broadcast batch dims, Gemm with transposes)
    become one contraction `linalg.generic` (accumulating f16/bf16 in f32)
    plus an elementwise epilogue where needed, softmax
    becomes max/exp/sum/div generics, reshapes become collapse/expand views.
    Unsigned integer tensors become signless; the ops that care about
    signedness (div, max/min, casts) pick their unsigned forms.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"
  ];
}


//===----------------------------------------------------------------------===//
// GPU kernels to NVVM
//===----------------------------------------------------------------------===//

def MathToPtxPass : Pass<"ridge-math-to-ptx"> {
  let summary = "Lower the remaining math ops of GPU kernels to PTX instructions";
  let description = [{
    `convert-gpu-to-nvvm` turns math ops and several LLVM intrinsics (floor,
    sqrt, fabs, ...) into libdevice calls, which a PTX file cannot resolve
    without a CUDA install. After `ridge-approximate-math`, this pass turns
    the few exact operations that remain into `llvm.call_intrinsic`s of the
    LLVM intrinsics that NVPTX selects as single PTX instructions
    (`cvt.rmi`, `sqrt.rn`, `abs`, `fma.rn`, ...); the conversion leaves that
    generic form alone. Run it on `gpu.module`s only.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // RIDGELINE_CONVERSION_PASSES
