// RUN: ridge-opt %s -split-input-file -ridge-outline-fusion-groups | FileCheck %s

// Each fusion group becomes a private kernel function and a call. Values from
// outside become arguments; the constant it reads is cloned into the kernel.

// CHECK-LABEL: func.func @two_kernels
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16x8xf32>)
// CHECK: %[[C:.*]] = ridge.constant dense<5.000000e-01>
// CHECK: %[[A:.*]] = call @k0_matmul(%[[X]], %[[W]]) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[B:.*]]:2 = call @k1_reduction(%[[A]]) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: return %[[B]]#1, %[[B]]#0

// CHECK: func.func private @k1_reduction(%[[ARG:.*]]: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) attributes {ridge.kernel = "reduction"}
// CHECK-NEXT: %[[HALF:.*]] = ridge.constant dense<5.000000e-01>
// CHECK-NEXT: %[[S:.*]] = ridge.mul %[[ARG]], %[[HALF]]
// CHECK-NEXT: %[[P:.*]] = ridge.softmax %[[S]]
// CHECK-NEXT: return %[[S]], %[[P]]

// CHECK: func.func private @k0_matmul(%[[A0:.*]]: tensor<4x16xf32>, %[[A1:.*]]: tensor<16x8xf32>) -> tensor<4x8xf32> attributes {ridge.kernel = "contraction"}
// CHECK-NEXT: %[[M:.*]] = ridge.matmul %[[A0]], %[[A1]]
// CHECK-NEXT: %[[T:.*]] = ridge.tanh %[[M]]
// CHECK-NEXT: return %[[T]]
func.func @two_kernels(%x: tensor<4x16xf32>, %w: tensor<16x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %c = ridge.constant dense<0.5> : tensor<f32>
  %0 = ridge.fusion_group "k0_matmul" kind "contraction" -> tensor<4x8xf32> {
    %1 = ridge.matmul %x, %w : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    %2 = ridge.tanh %1 : tensor<4x8xf32>
    ridge.yield %2 : tensor<4x8xf32>
  }
  %3:2 = ridge.fusion_group "k1_reduction" kind "reduction" -> tensor<4x8xf32>, tensor<4x8xf32> {
    %4 = ridge.mul %0, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    %5 = ridge.softmax %4 {axis = 1 : i64} : tensor<4x8xf32>
    ridge.yield %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>
  }
  return %3#1, %3#0 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// An attention kernel reads its operands through strided views of its
// arguments (ridge.online_attention), so its tensor constants (a rotary
// prologue's caches) are passed in; a scalar constant is still copied.
// CHECK-LABEL: func @attention_constants
// CHECK-SAME: (%[[Q:.*]]: tensor<1x1x4x8xf32>)
// CHECK-DAG: %[[COS:.*]] = ridge.constant dense<1.000000e+00> : tensor<1x4x4xf32>
// CHECK-DAG: %[[SIN:.*]] = ridge.constant dense<0.000000e+00> : tensor<1x4x4xf32>
// CHECK: call @k0_attention(%[[Q]], %[[COS]], %[[SIN]])
// CHECK: func.func private @k0_attention(%{{.*}}: tensor<1x1x4x8xf32>, %[[C:.*]]: tensor<1x4x4xf32>, %[[S:.*]]: tensor<1x4x4xf32>)
// CHECK-NEXT: ridge.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: ridge.rotary_embedding %{{.*}}, %[[C]], %[[S]]
func.func @attention_constants(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %cos = ridge.constant dense<1.0> : tensor<1x4x4xf32>
  %sin = ridge.constant dense<0.0> : tensor<1x4x4xf32>
  %two = ridge.constant dense<2.0> : tensor<f32>
  %0 = ridge.fusion_group "k0_attention" kind "attention" -> tensor<1x1x4x8xf32> {
    %r = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 8 : i64} : tensor<1x1x4x8xf32>, tensor<1x4x4xf32>, tensor<1x4x4xf32>
    %s = ridge.mul %q, %two : (tensor<1x1x4x8xf32>, tensor<f32>) -> tensor<1x1x4x8xf32>
    %o:2 = ridge.attention %r, %s, %q {scale = 0.5 : f32} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32> -> tensor<1x1x4x8xf32>, tensor<1x1x4x4xf32>
    ridge.yield %o#0 : tensor<1x1x4x8xf32>
  }
  return %0 : tensor<1x1x4x8xf32>
}
