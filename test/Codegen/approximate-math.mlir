// RUN: ridge-opt %s --ridge-approximate-math | FileCheck %s

// Transcendentals become arithmetic: nothing for libdevice to resolve.
// CHECK-LABEL: func @transcendentals
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK-NOT: math.log
// CHECK-NOT: math.powf
// CHECK: return
func.func @transcendentals(%x: f32, %y: f32) -> (f32, f32, f32, f32, f32) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.log %x : f32
  %4 = math.powf %x, %y : f32
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f32
}
