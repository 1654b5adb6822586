// RUN: ridge-opt %s -split-input-file -ridge-expand-tf32-rounding -verify-diagnostics | FileCheck %s

// An f32 -> tf32 -> f32 rounding (a contraction's ridge.precision = "tf32")
// becomes integer arithmetic on the f32's bits: add half of the 13 dropped
// bits' unit (ties away from zero, as cvt.rna.tf32.f32), clear them; a NaN
// is kept. No tf32 type is left. Other conversions are untouched.
// CHECK-LABEL: func @round_through_tf32
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X:.*]] : f32 to i32
// CHECK: %[[HALF:.*]] = arith.constant 4096 : i32
// CHECK: %[[UP:.*]] = arith.addi %[[BITS]], %[[HALF]] : i32
// CHECK: %[[MASK:.*]] = arith.constant -8192 : i32
// CHECK: %[[CLEARED:.*]] = arith.andi %[[UP]], %[[MASK]] : i32
// CHECK: %[[ROUNDED:.*]] = arith.bitcast %[[CLEARED]] : i32 to f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[R:.*]] = arith.select %[[NAN]], %[[X]], %[[ROUNDED]] : f32
// CHECK: arith.truncf %[[X]] : f32 to bf16
// CHECK-NOT: tf32
// CHECK: return %[[R]]
func.func @round_through_tf32(%x: f32) -> (f32, f32) {
  %0 = arith.truncf %x : f32 to tf32
  %1 = arith.extf %0 : tf32 to f32
  %2 = arith.truncf %x : f32 to bf16
  %3 = arith.extf %2 : bf16 to f32
  return %1, %3 : f32, f32
}

// -----

// Vectors round element by element, with splat constants.
// CHECK-LABEL: func @round_vector
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.constant dense<4096> : vector<4xi32>
// CHECK-NOT: tf32
func.func @round_vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = arith.truncf %x : vector<4xf32> to vector<4xtf32>
  %1 = arith.extf %0 : vector<4xtf32> to vector<4xf32>
  return %1 : vector<4xf32>
}

// -----

// A tf32 value that is not widened back has no f32 form.
func.func @tf32_escapes(%x: f32) -> tf32 {
  // expected-error @+1 {{'arith.truncf' op rounds to a tf32 value that is used other than widened back to f32 (LLVM has no tf32 type)}}
  %0 = arith.truncf %x : f32 to tf32
  return %0 : tf32
}

// -----

// A tf32 value from elsewhere (a block argument) cannot be widened.
func.func @tf32_argument(%x: tf32) -> f32 {
  // expected-error @+1 {{'arith.extf' op widens a tf32 value that is not an f32 rounded to tf32 (LLVM has no tf32 type)}}
  %0 = arith.extf %x : tf32 to f32
  return %0 : f32
}
