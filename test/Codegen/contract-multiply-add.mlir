// RUN: ridge-opt %s -split-input-file -ridge-contract-multiply-add | FileCheck %s

// A dot product's step: the single-use multiply feeding the add becomes one
// fma, in either operand order, and so do both forms of subtraction
// (negation is exact).
// CHECK-LABEL: func.func @contract
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32)
// CHECK-NEXT: %[[R0:.*]] = math.fma %[[A]], %[[B]], %[[C]] : f32
// CHECK-NEXT: %[[R1:.*]] = math.fma %[[A]], %[[B]], %[[C]] : f32
// CHECK-NEXT: %[[NC:.*]] = arith.negf %[[C]] : f32
// CHECK-NEXT: %[[R2:.*]] = math.fma %[[A]], %[[B]], %[[NC]] : f32
// CHECK-NEXT: %[[NA:.*]] = arith.negf %[[A]] : f32
// CHECK-NEXT: %[[R3:.*]] = math.fma %[[NA]], %[[B]], %[[C]] : f32
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]]
func.func @contract(%a: f32, %b: f32, %c: f32) -> (f32, f32, f32, f32) {
  %m0 = arith.mulf %a, %b : f32
  %r0 = arith.addf %m0, %c : f32
  %m1 = arith.mulf %a, %b : f32
  %r1 = arith.addf %c, %m1 : f32
  %m2 = arith.mulf %a, %b : f32
  %r2 = arith.subf %m2, %c : f32
  %m3 = arith.mulf %a, %b : f32
  %r3 = arith.subf %c, %m3 : f32
  return %r0, %r1, %r2, %r3 : f32, f32, f32, f32
}

// -----

// f64 and vectors contract too.
// CHECK-LABEL: func.func @wide_and_vector
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NOT: arith.mulf
func.func @wide_and_vector(%a: f64, %b: f64, %v: vector<4xf32>) -> (f64, vector<4xf32>) {
  %m = arith.mulf %a, %b : f64
  %r = arith.addf %m, %a : f64
  %vm = arith.mulf %v, %v : vector<4xf32>
  %vr = arith.addf %vm, %v : vector<4xf32>
  return %r, %vr : f64, vector<4xf32>
}

// -----

// Left alone: a product that is used twice (contracting would compute it
// twice, rounded differently), and f16 (not every target's fma takes it).
// CHECK-LABEL: func.func @not_contracted
// CHECK: %[[M:.*]] = arith.mulf
// CHECK-NEXT: arith.addf %[[M]]
// CHECK: arith.mulf {{.*}} : f16
// CHECK-NEXT: arith.addf {{.*}} : f16
// CHECK-NOT: math.fma
func.func @not_contracted(%a: f32, %b: f32, %h: f16) -> (f32, f32, f16) {
  %m = arith.mulf %a, %b : f32
  %r = arith.addf %m, %a : f32
  %hm = arith.mulf %h, %h : f16
  %hr = arith.addf %hm, %h : f16
  return %r, %m, %hr : f32, f32, f16
}
