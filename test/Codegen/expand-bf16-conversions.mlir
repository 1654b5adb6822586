// RUN: ridge-opt %s -ridge-expand-bf16-conversions | FileCheck %s

// An f32 -> bf16 -> f32 rounding (a contraction's ridge.precision) becomes
// integer arithmetic: round to nearest even on the bits, NaN kept, and a
// shift back. Other float conversions are left alone.
// CHECK-LABEL: func @round_through_bf16
// CHECK-NOT: arith.truncf
// CHECK: arith.cmpf une, %[[X:.*]], %[[X]] : f32
// CHECK: arith.bitcast %[[X]] : f32 to i32
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @round_through_bf16(%x: f32) -> (f32, f32) {
  %0 = arith.truncf %x : f32 to bf16
  %1 = arith.extf %0 : bf16 to f32
  %2 = arith.truncf %x : f32 to f16
  %3 = arith.extf %2 : f16 to f32
  return %1, %3 : f32, f32
}
