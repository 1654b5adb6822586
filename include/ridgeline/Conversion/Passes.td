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

//===----------------------------------------------------------------------===//
// Float8 conversions to integer arithmetic
//===----------------------------------------------------------------------===//

def ExpandFloat8ConversionsPass : Pass<"ridge-expand-float8-conversions"> {
  let summary = "Compute float8 roundings and widenings with integer arithmetic";
  let description = [{
    An fp8 contraction (docs/precision.md) quantizes its operands with
    `arith.truncf` to `f8E4M3FN` and widens them back with `arith.extf`;
    the tensor-core lowering multiplies them with e4m3 `wgmma`. What is left
    (the CPU build, SIMT kernels) has no LLVM float8 type, and the LLVM
    conversion stores float8 values as i8. This pass rewrites each
    `arith.truncf` to a float8 type into the bit pattern that round to
    nearest even gives (overflow to NaN, as `arith.truncf`'s IEEE
    conversion; an fp8 quantization clamps to the largest finite value
    first), bitcast to the float8 type, and each `arith.extf` from a
    float8 type into its exact value. The CPU build is then the numerics
    oracle of an fp8 GPU build bit for bit.

    ```mlir
    %q = arith.truncf %x : f32 to f8E4M3FN
    %w = arith.extf %q : f8E4M3FN to f32
    // becomes
    %bits = ... integer arithmetic on %x ... : i8
    %q = arith.bitcast %bits : i8 to f8E4M3FN
    %w = ... integer arithmetic on (arith.bitcast %q : f8E4M3FN to i8) ...
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let statistics = [
    Statistic<"numRoundings", "num-roundings",
              "Roundings to a float8 type expanded">,
    Statistic<"numWidenings", "num-widenings",
              "Widenings from a float8 type expanded">,
  ];
}

#endif // RIDGELINE_CONVERSION_PASSES
