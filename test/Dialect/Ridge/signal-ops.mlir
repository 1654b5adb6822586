// RUN: ridge-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// Round trip of the signal processing and linear algebra ops.
// CHECK-LABEL: func @ops
// CHECK: ridge.dft %{{.*}} {axis = 1 : i64, length = 10 : i64} : tensor<1x10x4x1xf32> -> tensor<1x10x4x2xf32>
// CHECK: ridge.dft %{{.*}} {axis = 2 : i64, length = 4 : i64, onesided = true} : tensor<1x10x4x1xf32> -> tensor<1x10x3x2xf32>
// CHECK: ridge.dft %{{.*}} {axis = 1 : i64, inverse = true, length = 16 : i64} : tensor<1x10x4x2xf64> -> tensor<1x16x4x2xf64>
// CHECK: ridge.dft %{{.*}} {axis = 1 : i64, inverse = true, length = 18 : i64, onesided = true} : tensor<1x10x4x2xf64> -> tensor<1x18x4x1xf64>
// CHECK: ridge.det %{{.*}} : tensor<3x2x2xf32> -> tensor<3xf32>
// CHECK: ridge.det %{{.*}} : tensor<4x4xf64> -> tensor<f64>
func.func @ops(%x: tensor<1x10x4x1xf32>, %c: tensor<1x10x4x2xf64>,
               %m: tensor<3x2x2xf32>, %s: tensor<4x4xf64>) {
  %0 = ridge.dft %x {axis = 1 : i64, length = 10 : i64} : tensor<1x10x4x1xf32> -> tensor<1x10x4x2xf32>
  %1 = ridge.dft %x {axis = 2 : i64, length = 4 : i64, onesided = true} : tensor<1x10x4x1xf32> -> tensor<1x10x3x2xf32>
  %2 = ridge.dft %c {axis = 1 : i64, length = 16 : i64, inverse = true} : tensor<1x10x4x2xf64> -> tensor<1x16x4x2xf64>
  %3 = ridge.dft %c {axis = 1 : i64, length = 18 : i64, inverse = true, onesided = true} : tensor<1x10x4x2xf64> -> tensor<1x18x4x1xf64>
  %4 = ridge.det %m : tensor<3x2x2xf32> -> tensor<3xf32>
  %5 = ridge.det %s : tensor<4x4xf64> -> tensor<f64>
  return
}

// -----

func.func @dft_axis_on_parts(%x: tensor<1x10x1xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 3}}
  %0 = ridge.dft %x {axis = 2 : i64, length = 10 : i64} : tensor<1x10x1xf32> -> tensor<1x10x2xf32>
  return
}

// -----

func.func @dft_bad_parts(%x: tensor<1x10x3xf32>) {
  // expected-error @+1 {{last input dimension must be 1 (real) or 2 (complex), got 3}}
  %0 = ridge.dft %x {axis = 1 : i64, length = 10 : i64} : tensor<1x10x3xf32> -> tensor<1x10x2xf32>
  return
}

// -----

func.func @dft_bad_length(%x: tensor<1x10x1xf32>) {
  // expected-error @+1 {{length 0 must be positive}}
  %0 = ridge.dft %x {axis = 1 : i64, length = 0 : i64} : tensor<1x10x1xf32> -> tensor<1x0x2xf32>
  return
}

// -----

func.func @dft_wrong_result(%x: tensor<1x10x1xf32>) {
  // A onesided forward DFT of length 10 yields 6 bins.
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{inferred type(s) 'tensor<1x6x2xf32>' are incompatible with return type(s) of operation 'tensor<1x10x2xf32>'}}
  %0 = ridge.dft %x {axis = 1 : i64, length = 10 : i64, onesided = true} : tensor<1x10x1xf32> -> tensor<1x10x2xf32>
  return
}

// -----

func.func @det_not_square(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{matrices must be square, got 2x3}}
  %0 = ridge.det %x : tensor<2x3xf32> -> tensor<f32>
  return
}

// -----

func.func @det_rank1(%x: tensor<4xf32>) {
  // expected-error @+1 {{input rank 1 is below 2}}
  %0 = ridge.det %x : tensor<4xf32> -> tensor<f32>
  return
}
