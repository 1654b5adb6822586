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
