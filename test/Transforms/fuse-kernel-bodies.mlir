// RUN: ridge-opt %s -split-input-file -ridge-convert-graph-to-linalg -ridge-fuse-kernel-bodies | FileCheck %s

// Each kernel function becomes one loop nest (one GPU kernel).

// A pointwise kernel is one elementwise generic: no loop needed.
// CHECK-LABEL: func.func private @k0_pointwise
// CHECK-NOT: scf.forall
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<64x128xf16>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.truncf
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
func.func private @k0_pointwise(%x: tensor<64x128xf32>, %y: tensor<128xf32>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.add %x, %y : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %1 = ridge.tanh %0 : tensor<64x128xf32>
  %2 = ridge.cast %1 : tensor<64x128xf32> -> tensor<64x128xf16>
  return %2 : tensor<64x128xf16>
}

// -----

// Matmul + bias + GELU: one forall over the output elements; each computes
// its dot product (the reduction) and the epilogue.
// CHECK-LABEL: func.func private @k1_matmul
// CHECK: %[[F:.*]] = scf.forall (%[[I:.*]], %[[J:.*]]) in (16, 64)
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0] [1, 32] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[J]]] [32, 1] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.erf
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]
func.func private @k1_matmul(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.add %0, %b : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %2 = ridge.gelu %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// Scaled softmax: one forall over rows; the row (reduced by max and sum and
// broadcast back) stays whole.
// CHECK-LABEL: func.func private @k2_reduction
// CHECK: %[[F:.*]] = scf.forall (%[[R:.*]]) in (8)
// CHECK: tensor.extract_slice %{{.*}}[%[[R]], 0] [1, 128] [1, 1]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[R]], 0] [1, 128] [1, 1]
// CHECK: return %[[F]]
func.func private @k2_reduction(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction"} {
  %c = ridge.constant dense<0.125> : tensor<f32>
  %0 = ridge.mul %x, %c : (tensor<8x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %1 = ridge.softmax %0 {axis = 1 : i64} : tensor<8x128xf32>
  return %1 : tensor<8x128xf32>
}

// -----

// Residual add + LayerNorm with both results returned: the forall over rows
// yields the add's value too.
// CHECK-LABEL: func.func private @k3_reduction
// CHECK: %[[F:.*]]:2 = scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK-COUNT-2: tensor.parallel_insert_slice
// CHECK: return %[[F]]#1, %[[F]]#0
func.func private @k3_reduction(%x: tensor<4x256xf32>, %h: tensor<4x256xf32>, %s: tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x256xf32>) attributes {ridge.kernel = "reduction"} {
  %0 = ridge.add %x, %h : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %1:3 = ridge.layer_norm %0, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %0, %1#0 : tensor<4x256xf32>, tensor<4x256xf32>
}

// -----

// A sliced, reshaped and transposed operand is read in place by the matmul.
// CHECK-LABEL: func.func private @k4_matmul
// CHECK: %[[F:.*]] = scf.forall ({{.*}}) in (4, 8, 8)
// CHECK-NOT: tensor.expand_shape
// CHECK: tensor.extract %{{.*}} : tensor<1x8x96xf32>
// CHECK: return %[[F]]
func.func private @k4_matmul(%qkv: tensor<1x8x96xf32>, %k: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.slice %qkv starts [0, 0, 0] sizes [1, 8, 32] steps [1, 1, 1] : tensor<1x8x96xf32> -> tensor<1x8x32xf32>
  %1 = ridge.reshape %0 : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %2 = ridge.transpose %1, [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %3 = ridge.matmul %2, %k : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %3 : tensor<1x4x8x8xf32>
}

// -----

// Functions not outlined from a fusion group are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: scf.forall
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @not_a_kernel(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.relu %0 : tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}
