// RUN: ridge-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s -split-input-file -verify-diagnostics -canonicalize | FileCheck %s --check-prefix=FOLD

// Round trip of the elementwise ops.

// CHECK-LABEL: func @unary
func.func @unary(%x: tensor<2x3xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>, %b: tensor<4xi1>)
    -> (tensor<2x3xf32>, tensor<4xf16>, tensor<4xi32>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  // CHECK: ridge.sin %{{.*}} : tensor<2x3xf32>
  %0 = ridge.sin %x : tensor<2x3xf32>
  // CHECK: ridge.acosh %{{.*}} : tensor<2x3xf32>
  %1 = ridge.acosh %0 : tensor<2x3xf32>
  // CHECK: ridge.round %{{.*}} : tensor<4xf16>
  %2 = ridge.round %h : tensor<4xf16>
  // CHECK: ridge.sign %{{.*}} : tensor<4xi32>
  %3 = ridge.sign %i : tensor<4xi32>
  // CHECK: ridge.not %{{.*}} : tensor<4xi1>
  %4 = ridge.not %b : tensor<4xi1>
  // CHECK: ridge.is_nan %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi1>
  %5 = ridge.is_nan %1 : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: ridge.is_inf %{{.*}} {detect_negative = false} : tensor<2x3xf32> -> tensor<2x3xi1>
  %6 = ridge.is_inf %1 {detect_negative = false} : tensor<2x3xf32> -> tensor<2x3xi1>
  return %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<4xf16>, tensor<4xi32>, tensor<4xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}

// CHECK-LABEL: func @binary
func.func @binary(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %c: tensor<2x1xi1>, %d: tensor<3xi1>)
    -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xui8>, tensor<2x3xui8>, tensor<2x3xui8>) {
  // CHECK: ridge.less_equal {{.*}} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xi1>
  %0 = ridge.less_equal %a, %b : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xi1>
  // CHECK: ridge.xor {{.*}} : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %1 = ridge.xor %c, %d : (tensor<2x1xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  // CHECK: ridge.mod {{.*}} {fmod = true}
  %2 = ridge.mod %a, %b {fmod = true} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  // CHECK: ridge.bit_shift {{.*}} {direction = "left"}
  %3 = ridge.bit_shift %a, %b {direction = "left"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  // CHECK: ridge.select {{.*}} : (tensor<2x1xi1>, tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  %4 = ridge.select %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0, %1, %2, %3, %4 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xui8>, tensor<2x3xui8>, tensor<2x3xui8>
}

// -----

// Invalid ops.

func.func @compare_types(%a: tensor<3xf32>, %b: tensor<3xi32>) {
  // expected-error @+2 {{operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.equal %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xi1>
  return
}

// -----

func.func @compare_result(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = ridge.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Bitwise ops keep the operand type: integers do not give bools.
func.func @bitwise_result_type(%a: tensor<3xi8>, %b: tensor<3xi8>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3xi8>' are incompatible with return type(s) of operation 'tensor<3xi1>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.and %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi1>
  return
}

// -----

func.func @sin_int(%a: tensor<3xi32>) {
  // expected-error @+1 {{must be ranked tensor of floating-point values}}
  %0 = ridge.sin %a : tensor<3xi32>
  return
}

// -----

func.func @bit_shift_direction(%a: tensor<3xui8>, %b: tensor<3xui8>) {
  // expected-error @+1 {{direction must be "left" or "right", got "up"}}
  %0 = ridge.bit_shift %a, %b {direction = "up"} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return
}

// -----

func.func @select_broadcast(%c: tensor<4xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{condition tensor<4xi1> does not broadcast with the values tensor<3xf32>}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.select %c, %a, %b : (tensor<4xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Folding of constant operands (shape arithmetic).

// FOLD-LABEL: func @fold_shape_arith
// FOLD-NEXT: %[[C:.*]] = ridge.constant dense<[2, 3, 8]> : tensor<3xi64>
// FOLD-NEXT: return %[[C]]
func.func @fold_shape_arith() -> tensor<3xi64> {
  %shape = ridge.constant dense<[2, -1, 4]> : tensor<3xi64>
  %minus1 = ridge.constant dense<-1> : tensor<i64>
  %fill = ridge.constant dense<[1, 3, 1]> : tensor<3xi64>
  %two = ridge.constant dense<2> : tensor<i64>
  %eq = ridge.equal %shape, %minus1 : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %sel = ridge.select %eq, %fill, %shape : (tensor<3xi1>, tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %mask = ridge.constant dense<[1, 1, 2]> : tensor<3xi64>
  %mul = ridge.mul %sel, %mask : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %mul : tensor<3xi64>
}

// -----

// FOLD-LABEL: func @fold_broadcast_float
// FOLD-NEXT: ridge.constant dense<{{\[\[}}1.100000e+01, 2.200000e+01], [1.300000e+01, 2.400000e+01]]> : tensor<2x2xf32>
func.func @fold_broadcast_float() -> tensor<2x2xf32> {
  %a = ridge.constant dense<[[1.0], [3.0]]> : tensor<2x1xf32>
  %b = ridge.constant dense<[10.0, 20.0]> : tensor<2xf32>
  %c = ridge.constant dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf32>
  %s = ridge.add %a, %b : (tensor<2x1xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %t = ridge.add %s, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = ridge.round %t : tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Python-style (divisor's sign) and C-style (dividend's sign) remainders,
// unsigned comparison, logical shift, cast of constants.
// FOLD-LABEL: func @fold_int_semantics
// FOLD-DAG: ridge.constant dense<[2, -2, 0]> : tensor<3xi32>
// FOLD-DAG: ridge.constant dense<[-1, 1, 0]> : tensor<3xi32>
// FOLD-DAG: ridge.constant dense<[true, false]> : tensor<2xi1>
// FOLD-DAG: ridge.constant dense<[192, 0]> : tensor<2xui8>
// FOLD-DAG: ridge.constant dense<[2, -3, 1]> : tensor<3xi64>
func.func @fold_int_semantics() -> (tensor<3xi32>, tensor<3xi32>, tensor<2xi1>, tensor<2xui8>, tensor<3xi64>) {
  %a = ridge.constant dense<[-7, 7, 6]> : tensor<3xi32>
  %b = ridge.constant dense<[3, -3, 3]> : tensor<3xi32>
  %m = ridge.mod %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %f = ridge.mod %a, %b {fmod = true} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  %u = ridge.constant dense<[200, 3]> : tensor<2xui8>
  %v = ridge.constant dense<[100, 4]> : tensor<2xui8>
  %g = ridge.greater %u, %v : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xi1>
  %s = ridge.constant dense<[5, 8]> : tensor<2xui8>
  %sh = ridge.bit_shift %u, %s {direction = "right"} : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %sh2 = ridge.bit_shift %sh, %s {direction = "left"} : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %x = ridge.constant dense<[2.7, -3.9, 1.0]> : tensor<3xf32>
  %c = ridge.cast %x : tensor<3xf32> -> tensor<3xi64>
  return %m, %f, %g, %sh2, %c : tensor<3xi32>, tensor<3xi32>, tensor<2xi1>, tensor<2xui8>, tensor<3xi64>
}

// -----

// Non-constant operands are left alone.
// FOLD-LABEL: func @no_fold
// FOLD: ridge.equal
// FOLD: ridge.select
func.func @no_fold(%x: tensor<3xi64>) -> tensor<3xi64> {
  %zero = ridge.constant dense<0> : tensor<i64>
  %eq = ridge.equal %x, %zero : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %one = ridge.constant dense<1> : tensor<i64>
  %sel = ridge.select %eq, %one, %x : (tensor<3xi1>, tensor<i64>, tensor<3xi64>) -> tensor<3xi64>
  return %sel : tensor<3xi64>
}

// -----

// Splats fold at any size; other constants only up to 4096 elements.
// FOLD-LABEL: func @fold_splat
// FOLD-NEXT: %[[C:.*]] = ridge.constant dense<true> : tensor<128x128xi1>
// FOLD-NEXT: return %[[C]]
func.func @fold_splat() -> tensor<128x128xi1> {
  %a = ridge.constant dense<1.0> : tensor<128x128xf32>
  %b = ridge.constant dense<2.0> : tensor<128xf32>
  %s = ridge.add %a, %b : (tensor<128x128xf32>, tensor<128xf32>) -> tensor<128x128xf32>
  %c = ridge.constant dense<3.0> : tensor<f32>
  %e = ridge.equal %s, %c : (tensor<128x128xf32>, tensor<f32>) -> tensor<128x128xi1>
  return %e : tensor<128x128xi1>
}

// -----

// A constant condition picks a branch; not(not(x)) is x.
// FOLD-LABEL: func @fold_select_branch
// FOLD-SAME: (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xi1>)
// FOLD-NEXT: return %[[Y]], %[[B]]
func.func @fold_select_branch(%x: tensor<3xf32>, %y: tensor<3xf32>, %b: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %c = ridge.constant dense<false> : tensor<3xi1>
  %0 = ridge.select %c, %x, %y : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = ridge.not %b : tensor<3xi1>
  %2 = ridge.not %1 : tensor<3xi1>
  return %0, %2 : tensor<3xf32>, tensor<3xi1>
}

// -----

// Integer to float casts round to nearest even (16777217 = 2^24 + 1 becomes
// 2^24 = 0x4B800000 in f32); unsigned sources convert unsigned.
// FOLD-LABEL: func @fold_cast_int_to_float
// FOLD-DAG: ridge.constant dense<[0x4B800000, -1.000000e+00]> : tensor<2xf32>
// FOLD-DAG: ridge.constant dense<2.550000e+02> : tensor<4xf16>
func.func @fold_cast_int_to_float() -> (tensor<2xf32>, tensor<4xf16>) {
  %a = ridge.constant dense<[16777217, -1]> : tensor<2xi64>
  %b = ridge.cast %a : tensor<2xi64> -> tensor<2xf32>
  %u = ridge.constant dense<255> : tensor<4xui8>
  %h = ridge.cast %u : tensor<4xui8> -> tensor<4xf16>
  return %b, %h : tensor<2xf32>, tensor<4xf16>
}

// -----

// Bitwise ops on integers (ONNX Bitwise*), bit casts, signed shifts.
// CHECK-LABEL: func @bitwise
func.func @bitwise(%a: tensor<4xi32>, %b: tensor<4xi32>, %f: tensor<4xf32>, %p: tensor<4xi1>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xui8>) {
  // CHECK: ridge.and {{.*}} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %0 = ridge.and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: ridge.not %{{.*}} : tensor<4xi32>
  %1 = ridge.not %0 : tensor<4xi32>
  // CHECK: ridge.bit_shift {{.*}} {direction = "right"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %2 = ridge.bit_shift %1, %b {direction = "right"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: ridge.bitcast %{{.*}} : tensor<4xi32> -> tensor<4xf32>
  %3 = ridge.bitcast %2 : tensor<4xi32> -> tensor<4xf32>
  // CHECK: ridge.bitcast %{{.*}} : tensor<4xi1> -> tensor<4xui8>
  %4 = ridge.bitcast %p : tensor<4xi1> -> tensor<4xui8>
  return %0, %1, %2, %3, %4 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xui8>
}

// -----

func.func @bitcast_width(%a: tensor<4xi32>) {
  // expected-error @+1 {{element types of different widths: 'i32' vs 'f64'}}
  %0 = ridge.bitcast %a : tensor<4xi32> -> tensor<4xf64>
  return
}

// -----

func.func @and_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of}}
  %0 = ridge.and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Constant folding: arithmetic right shift of signed values, shifts out of
// range, numpy's float mod.
// FOLD-LABEL: func @fold_shift_mod
func.func @fold_shift_mod() -> (tensor<3xi8>, tensor<3xi8>, tensor<3xf32>) {
  %x = ridge.constant dense<[-8, 4, -1]> : tensor<3xi8>
  %s = ridge.constant dense<[1, -1, 9]> : tensor<3xi8>
  // FOLD: dense<[-4, 0, -1]> : tensor<3xi8>
  %0 = ridge.bit_shift %x, %s {direction = "right"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  // FOLD: dense<[-16, 0, 0]> : tensor<3xi8>
  %1 = ridge.bit_shift %x, %s {direction = "left"} : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  %a = ridge.constant dense<[-4.5, 4.5, 4.0]> : tensor<3xf32>
  %b = ridge.constant dense<[2.0, -2.0, -2.0]> : tensor<3xf32>
  // FOLD: dense<[1.500000e+00, -1.500000e+00, -0.000000e+00]> : tensor<3xf32>
  %2 = ridge.mod %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xi8>, tensor<3xi8>, tensor<3xf32>
}

// -----

// The attention scale 1 / sqrt(d) from a shape's constant folds, rounded as
// sqrt.rn and rcp.rn round (0.125 exactly; 1 / sqrt(3) and 1 / 3 to the
// nearest f32).
// FOLD-LABEL: func @fold_scale
// FOLD-NEXT: %[[A:.*]] = ridge.constant dense<1.250000e-01> : tensor<f32>
// FOLD-NEXT: %[[B:.*]] = ridge.constant dense<[0.577350259, 0.333333343]> : tensor<2xf32>
// FOLD-NEXT: return %[[A]], %[[B]]
func.func @fold_scale() -> (tensor<f32>, tensor<2xf32>) {
  %d = ridge.constant dense<64.0> : tensor<f32>
  %s = ridge.sqrt %d : tensor<f32>
  %r = ridge.reciprocal %s : tensor<f32>
  %e = ridge.constant dense<[3.0, 9.0]> : tensor<2xf32>
  %t = ridge.sqrt %e : tensor<2xf32>
  %u = ridge.reciprocal %t : tensor<2xf32>
  return %r, %u : tensor<f32>, tensor<2xf32>
}
