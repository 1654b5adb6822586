// RUN: ridge-opt %s -split-input-file -ridge-approximate-erf | FileCheck %s

// erf(x) is x * P(x^2) below |x| = 1 (P of degree 5: 5 fused
// multiply-adds) and copysign(1 - 2^Q(min(|x|, 4)), x) from 1 on (Q of
// degree 6: 6 fused multiply-adds; the exp2 becomes one ex2.approx in
// ridge-exp-to-ex2-approx); both are computed and one is selected, a NaN
// taking the second.
// CHECK-LABEL: func @scalar
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: arith.constant -5.66789939E-4 : f32
// CHECK-COUNT-5: math.fma {{.*}}, %[[SQ]], {{.*}} : f32
// CHECK: %[[SMALL:.*]] = arith.mulf %[[X]], {{.*}} : f32
// CHECK: %[[FOUR:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: %[[T:.*]] = arith.minimumf %[[ABS]], %[[FOUR]] : f32
// CHECK: arith.constant 2.69140699E-4 : f32
// CHECK-COUNT-6: math.fma {{.*}}, %[[T]], {{.*}} : f32
// CHECK: %[[TAIL:.*]] = math.exp2 {{.*}} : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[DIFF:.*]] = arith.subf %[[ONE]], %[[TAIL]] : f32
// CHECK: %[[LARGE:.*]] = math.copysign %[[DIFF]], %[[X]] : f32
// CHECK: %[[IS_SMALL:.*]] = arith.cmpf olt, %[[ABS]], {{.*}} : f32
// CHECK: %[[R:.*]] = arith.select %[[IS_SMALL]], %[[SMALL]], %[[LARGE]] : f32
// CHECK: return %[[R]]
// CHECK-NOT: math.erf
func.func @scalar(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// -----

// A vector (a 16-byte pointwise access) is computed the same way on the
// vector, its constants splats.
// CHECK-LABEL: func @vector
// CHECK: arith.constant dense<4.000000e+00> : vector<4xf32>
// CHECK: math.exp2 {{.*}} : vector<4xf32>
// CHECK: arith.select {{.*}} : vector<4xi1>, vector<4xf32>
// CHECK-NOT: math.erf
func.func @vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.erf %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// -----

// Other types keep their erf for ridge-approximate-math.
// CHECK-LABEL: func @other_types
// CHECK: math.erf %{{.*}} : f64
// CHECK: math.erf %{{.*}} : f16
// CHECK-NOT: math.exp2
func.func @other_types(%x: f64, %h: f16) -> (f64, f16) {
  %0 = math.erf %x : f64
  %1 = math.erf %h : f16
  return %0, %1 : f64, f16
}
