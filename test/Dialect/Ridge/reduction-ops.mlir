// RUN: ridge-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s --split-input-file --verify-diagnostics --canonicalize | FileCheck %s --check-prefix=CANON

// Round trip of the reduction and normalization ops.
// CHECK-LABEL: func @ops
// CHECK: ridge.reduce sum %{{.*}} {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK: ridge.reduce max %{{.*}} {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xui8> -> tensor<ui8>
// CHECK: ridge.reduce mean %{{.*}} {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK: ridge.arg_reduce argmin %{{.*}} {axis = 2 : i64, keepdims = false, select_last_index = true} : tensor<2x3x4xf32> -> tensor<2x3xi64>
// CHECK: ridge.log_softmax %{{.*}} {axis = 2 : i64} : tensor<2x3x4xf32>
// CHECK: ridge.hardmax %{{.*}} {axis = 0 : i64} : tensor<2x3x4xf32>
// CHECK: ridge.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
// CHECK: ridge.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64, stash_type = 0 : i64} : (tensor<2x3x4xf16>, tensor<4xf16>) -> (tensor<2x3x4xf16>, tensor<2x3x1xf16>, tensor<2x3x1xf16>)
// CHECK: ridge.lrn %{{.*}} {size = 3 : i64} : tensor<2x3x4xf32>
// CHECK: ridge.cumsum %{{.*}} {axis = 1 : i64, exclusive = true} : tensor<2x3xui8>
// CHECK: ridge.topk %{{.*}} {axis = 2 : i64, k = 2 : i64, largest = false} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xi64>
// CHECK: ridge.einsum %{{.*}}, %{{.*}} {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
// CHECK: ridge.einsum %{{.*}} {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
func.func @ops(%x: tensor<2x3x4xf32>, %u: tensor<2x3xui8>, %s: tensor<3x4xf32>,
               %h: tensor<2x3x4xf16>, %hs: tensor<4xf16>, %a: tensor<2x3xf32>,
               %b: tensor<3x5xf32>, %d: tensor<3x5x5xf32>) {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>, keepdims = true} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %1 = ridge.reduce max %u {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xui8> -> tensor<ui8>
  %2 = ridge.reduce mean %x {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %3 = ridge.arg_reduce argmin %x {axis = 2 : i64, keepdims = false, select_last_index = true} : tensor<2x3x4xf32> -> tensor<2x3xi64>
  %4 = ridge.log_softmax %x {axis = 2 : i64} : tensor<2x3x4xf32>
  %5 = ridge.hardmax %x {axis = 0 : i64} : tensor<2x3x4xf32>
  %6:3 = ridge.layer_norm %x, %s, %s {axis = 1 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  %7:3 = ridge.layer_norm %h, %hs {axis = 2 : i64, stash_type = 0 : i64} : (tensor<2x3x4xf16>, tensor<4xf16>) -> (tensor<2x3x4xf16>, tensor<2x3x1xf16>, tensor<2x3x1xf16>)
  %8 = ridge.lrn %x {size = 3 : i64} : tensor<2x3x4xf32>
  %9 = ridge.cumsum %u {axis = 1 : i64, exclusive = true} : tensor<2x3xui8>
  %10:2 = ridge.topk %x {axis = 2 : i64, k = 2 : i64, largest = false} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>, tensor<2x3x2xi64>
  %11 = ridge.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %12 = ridge.einsum %d {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

// Reducing no axes (noop_with_empty_axes) folds away.
// CANON-LABEL: func @reduce_noop
// CANON-NEXT: return %arg0
func.func @reduce_noop(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = ridge.reduce prod %x {axes = array<i64>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A splat constant reduces at compile time where the result is exact: an
// exporter's element count (a sum of ones, i64: 240; in i8 it wraps to -16),
// a maximum; a float sum is left to run (its rounding is the sequential
// sum's).
// CANON-LABEL: func @reduce_splat
// CANON-DAG: %[[COUNT:.*]] = ridge.constant dense<240> : tensor<i64>
// CANON-DAG: %[[WRAP:.*]] = ridge.constant dense<-16> : tensor<i8>
// CANON-DAG: %[[MAX:.*]] = ridge.constant dense<2.500000e-01> : tensor<3xf32>
// CANON-DAG: %[[SUM:.*]] = ridge.reduce sum
// CANON: return %[[COUNT]], %[[WRAP]], %[[MAX]], %[[SUM]]
func.func @reduce_splat() -> (tensor<i64>, tensor<i8>, tensor<3xf32>, tensor<f32>) {
  %ones = ridge.constant dense<1> : tensor<3x5x4x4xi64>
  %count = ridge.reduce sum %ones {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : tensor<3x5x4x4xi64> -> tensor<i64>
  %bytes = ridge.constant dense<1> : tensor<240xi8>
  %wrap = ridge.reduce sum %bytes {axes = array<i64: 0>, keepdims = false} : tensor<240xi8> -> tensor<i8>
  %quarter = ridge.constant dense<0.25> : tensor<3x7xf32>
  %max = ridge.reduce max %quarter {axes = array<i64: 1>, keepdims = false} : tensor<3x7xf32> -> tensor<3xf32>
  %tenth = ridge.constant dense<0.1> : tensor<7xf32>
  %sum = ridge.reduce sum %tenth {axes = array<i64: 0>, keepdims = false} : tensor<7xf32> -> tensor<f32>
  return %count, %wrap, %max, %sum : tensor<i64>, tensor<i8>, tensor<3xf32>, tensor<f32>
}

// -----

func.func @reduce_axis_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = ridge.reduce sum %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_axes_unsorted(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = ridge.reduce sum %x {axes = array<i64: 1, 0>, keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return
}

// -----

func.func @reduce_bad_kind(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [sum, mean, max, min, prod]}}
  %0 = ridge.reduce avg %x {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<1x3xf32>
  return
}

// -----

func.func @arg_reduce_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -1 out of range for rank 2}}
  %0 = ridge.arg_reduce argmax %x {axis = -1 : i64} : tensor<2x3xf32> -> tensor<2x1xi64>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = ridge.log_softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x3xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{scale/bias 'tensor<4xf32>' does not broadcast to the normalized shape}}
  %0:3 = ridge.layer_norm %x, %s {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4xf32>) -> (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @lrn_rank(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{input rank must be >= 3, got 2}}
  %0 = ridge.lrn %x {size = 3 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 5 out of range for rank 2}}
  %0 = ridge.cumsum %x {axis = 5 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @topk_k(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{k = 4 out of range for a dimension of size 3}}
  %0:2 = ridge.topk %x {axis = 1 : i64, k = 4 : i64} : tensor<2x3xf32> -> tensor<2x4xf32>, tensor<2x4xi64>
  return
}

// -----

func.func @einsum_terms(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{equation has 2 input terms for 1 operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.einsum %x {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @einsum_sizes(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{equation label sizes disagree: 4 vs 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @cumprod_axis(%x: tensor<2x5xf32>) {
  // expected-error @+1 {{axis}}
  %0 = ridge.cumprod %x {axis = 2 : i64} : tensor<2x5xf32>
  return
}
