// RUN: ridge-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// Round trip of the transformer ops.
// CHECK-LABEL: func @ops
// CHECK: ridge.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
// CHECK: ridge.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : tensor<3x5xi1>) nonpad(%{{.*}} : tensor<2xi64>) {is_causal = true, left_window = 2 : i64, qk_matmul_output_mode = 3 : i64, scale = 1.250000e-01 : f32, softcap = 3.000000e+00 : f32}
// CHECK: ridge.rms_norm %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK: ridge.gelu %{{.*}} {approximate = "tanh"} : tensor<2x3x4xf32>
// CHECK: ridge.gelu %{{.*}} : tensor<2x3x4xf32>
// CHECK: ridge.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} {rotary_embedding_dim = 4 : i64} : tensor<2x4x3x8xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>
// CHECK: ridge.rotary_embedding %{{.*}}, %{{.*}}, %{{.*}} positions(%{{.*}} : tensor<2x3xi64>) {interleaved = true, rotary_embedding_dim = 8 : i64} : tensor<2x4x3x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>
func.func @ops(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x5x8xf32>,
               %v: tensor<2x2x5x6xf32>, %m: tensor<3x5xi1>, %n: tensor<2xi64>,
               %x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>,
               %c: tensor<2x3x2xf32>, %t: tensor<16x4xf32>,
               %p: tensor<2x3xi64>) {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
  %1:2 = ridge.attention %q, %k, %v mask(%m : tensor<3x5xi1>) nonpad(%n : tensor<2xi64>) {scale = 0.125 : f32, is_causal = true, left_window = 2 : i64, softcap = 3.0 : f32, qk_matmul_output_mode = 3 : i64} : tensor<2x4x3x8xf32>, tensor<2x2x5x8xf32>, tensor<2x2x5x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x4x3x5xf32>
  %2 = ridge.rms_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-3 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %3 = ridge.gelu %x {approximate = "tanh"} : tensor<2x3x4xf32>
  %4 = ridge.gelu %x : tensor<2x3x4xf32>
  %5 = ridge.rotary_embedding %q, %c, %c {rotary_embedding_dim = 4 : i64} : tensor<2x4x3x8xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>
  %6 = ridge.rotary_embedding %q, %t, %t positions(%p : tensor<2x3xi64>) {rotary_embedding_dim = 8 : i64, interleaved = true} : tensor<2x4x3x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x3x2x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{key/value heads (2) must divide query heads (3)}}
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<1x3x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x3x2x8xf32>, tensor<1x3x2x5xf32>
  return
}

// -----

func.func @attention_head_size(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{query head size 4 differs from the key's 8}}
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<1x2x2x4xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x2x8xf32>, tensor<1x2x2x5xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>, %m: tensor<2x4xi1>) {
  // expected-error @+1 {{mask 'tensor<2x4xi1>' does not broadcast to the scores' shape}}
  %0:2 = ridge.attention %q, %k, %v mask(%m : tensor<2x4xi1>) {scale = 0.5 : f32} : tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x2x8xf32>, tensor<1x2x2x5xf32>
  return
}

// -----

func.func @attention_mode(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{qk_matmul_output_mode must be 0..3, got 4}}
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32, qk_matmul_output_mode = 4 : i64} : tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32> -> tensor<1x2x2x8xf32>, tensor<1x2x2x5xf32>
  return
}

// -----

func.func @rms_norm_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = ridge.rms_norm %x, %s {axis = 2 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @rms_norm_scale(%x: tensor<2x3xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{scale 'tensor<2xf32>' does not broadcast to the normalized shape}}
  %0 = ridge.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @gelu_mode(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "fast"}}
  %0 = ridge.gelu %x {approximate = "fast"} : tensor<2x3xf32>
  return
}

// -----

func.func @rotary_dim(%x: tensor<1x2x3x8xf32>, %c: tensor<1x3x2xf32>) {
  // expected-error @+1 {{rotary_embedding_dim 5 must be even, positive and <= head size 8}}
  %0 = ridge.rotary_embedding %x, %c, %c {rotary_embedding_dim = 5 : i64} : tensor<1x2x3x8xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>
  return
}

// -----

// CHECK-LABEL: func @linear_attention
// CHECK: ridge.linear_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} decay(%{{.*}} : tensor<2x2x3x1xf32>) beta(%{{.*}} : tensor<2x1x3x1xf32>) {scale = 5.000000e-01 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x6xf32>, tensor<2x2x8x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x8x6xf32>
func.func @linear_attention(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x6xf32>, %s: tensor<2x2x8x6xf32>, %g: tensor<2x2x3x1xf32>, %b: tensor<2x1x3x1xf32>) {
  %0:2 = ridge.linear_attention %q, %k, %v, %s decay(%g : tensor<2x2x3x1xf32>) beta(%b : tensor<2x1x3x1xf32>) {scale = 0.5 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x6xf32>, tensor<2x2x8x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x8x6xf32>
  return
}

// -----

func.func @linear_attention_state(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x6xf32>, %s: tensor<2x2x6x8xf32>) {
  // expected-error @+1 {{state must be [2, 2, 8, 6]}}
  %0:2 = ridge.linear_attention %q, %k, %v, %s {scale = 0.5 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x6xf32>, tensor<2x2x6x8xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x6x8xf32>
  return
}
