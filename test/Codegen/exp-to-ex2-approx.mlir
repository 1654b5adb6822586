// RUN: ridge-opt %s -split-input-file -ridge-exp-to-ex2-approx | FileCheck %s

// exp(x) is 2^(x log2(e)) by the multi-function unit's ex2.approx.ftz.f32
// (one instruction; MLIR's polynomial takes about fifteen), exp2(x) is that
// instruction of x itself.
// CHECK-LABEL: func @scalar
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// CHECK: %[[E:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[T]]) : (f32) -> f32
// CHECK: %[[E2:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"(%[[X]]) : (f32) -> f32
// CHECK: return %[[E]], %[[E2]]
func.func @scalar(%x: f32) -> (f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.exp2 %x : f32
  return %0, %1 : f32, f32
}

// -----

// A vector (a 16-byte pointwise access) is computed element by element.
// CHECK-LABEL: func @vector
// CHECK-COUNT-4: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: vector.from_elements {{.*}} : vector<4xf32>
// CHECK-NOT: math.exp
func.func @vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.exp %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// -----

// Other types keep their exp for ridge-approximate-math's polynomial.
// CHECK-LABEL: func @other_types
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.exp %{{.*}} : f16
// CHECK-NOT: llvm.call_intrinsic
func.func @other_types(%x: f64, %h: f16) -> (f64, f16) {
  %0 = math.exp %x : f64
  %1 = math.exp %h : f16
  return %0, %1 : f64, f16
}
