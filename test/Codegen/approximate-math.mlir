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

// log(1 + y) is computed as log1p(y): the approximation of log1p (Kahan's
// y * log(u) / (u - 1), u = 1 + y) keeps the low bits of a small y that
// rounding 1 + y drops, and returns y itself where u rounds to 1. Softplus
// and Mish build their log(1 + exp(x)) this way.
// CHECK-LABEL: func @log_one_plus
// CHECK-SAME: (%[[Y:.*]]: f32, %[[V:.*]]: vector<4xf32>)
// CHECK-NOT: math.log
// CHECK: arith.select %{{.*}}, %[[Y]], %{{.*}} : f32
// CHECK: arith.select %{{.*}}, %[[V]], %{{.*}} : vector<4xi1>, vector<4xf32>
// CHECK: return
func.func @log_one_plus(%y: f32, %v: vector<4xf32>) -> (f32, vector<4xf32>) {
  %one = arith.constant 1.0 : f32
  %ones = arith.constant dense<1.0> : vector<4xf32>
  %0 = arith.addf %y, %one : f32
  %1 = math.log %0 : f32
  %2 = arith.addf %ones, %v : vector<4xf32>
  %3 = math.log %2 : vector<4xf32>
  return %1, %3 : f32, vector<4xf32>
}

// Not 1 + y: a plain log, whose approximation never returns y itself.
// An f64 log is left to the target (no polynomial for it), also unchanged.
// CHECK-LABEL: func @log_not_one_plus
// CHECK-SAME: (%[[Y:.*]]: f32, %[[D:.*]]: f64)
// CHECK-NOT: arith.select %{{.*}}, %[[Y]], %{{.*}} : f32
// CHECK-NOT: math.log1p
// CHECK: %[[SUM:.*]] = arith.addf %[[D]], %{{.*}} : f64
// CHECK: math.log %[[SUM]] : f64
// CHECK: return
func.func @log_not_one_plus(%y: f32, %d: f64) -> (f32, f64) {
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f64
  %0 = arith.addf %y, %two : f32
  %1 = math.log %0 : f32
  %2 = arith.addf %d, %one : f64
  %3 = math.log %2 : f64
  return %1, %3 : f32, f64
}

// An f32 tanh takes its rational polynomial, which returns x itself for
// |x| < 4e-4, not the expansion through exp, whose 1 - exp(-2|x|) cancels
// for small |x|. An f64 tanh, which has no polynomial, keeps the expansion.
// CHECK-LABEL: func @tanh_small_argument
// CHECK-SAME: (%[[X:.*]]: f32, %[[D:.*]]: f64)
// CHECK-DAG: %[[TINY:.*]] = arith.constant 4.000000e-04 : f32
// CHECK: %[[ABS:.*]] = math.absf %[[X]] : f32
// CHECK: %[[SMALL:.*]] = arith.cmpf olt, %[[ABS]], %[[TINY]] : f32
// CHECK-NOT: math.floor {{.*}} : f32
// CHECK: arith.select %[[SMALL]], %{{.*}}, %{{.*}} : f32
// CHECK-NOT: math.floor {{.*}} : f32
// CHECK: math.exp %{{.*}} : f64
// CHECK: return
func.func @tanh_small_argument(%x: f32, %d: f64) -> (f32, f64) {
  %0 = math.tanh %x : f32
  %1 = math.tanh %d : f64
  return %0, %1 : f32, f64
}
