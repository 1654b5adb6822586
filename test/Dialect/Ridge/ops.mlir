// RUN: ridge-opt %s | ridge-opt | FileCheck %s
// RUN: ridge-opt %s --mlir-print-op-generic | ridge-opt | FileCheck %s

// CHECK-LABEL: func @graph
func.func @graph(%x: tensor<4x64xf32>, %w: tensor<64x8xf32>, %b: tensor<8xf32>)
    -> tensor<8x4xf16> {
  // CHECK: ridge.constant dense<2.000000e+00> : tensor<f32>
  %c = ridge.constant dense<2.0> : tensor<f32>
  // CHECK: ridge.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32}
  %g = ridge.gemm %x, %w, %b {alpha = 0.5 : f32}
      : (tensor<4x64xf32>, tensor<64x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK: ridge.mul {{.*}} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %m = ridge.mul %g, %c : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK: ridge.relu
  %r = ridge.relu %m : tensor<4x8xf32>
  // CHECK: ridge.softmax %{{.*}} {axis = 1 : i64}
  %s = ridge.softmax %r {axis = 1 : i64} : tensor<4x8xf32>
  // CHECK: ridge.transpose %{{.*}}, [1, 0]
  %t = ridge.transpose %s, [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  // CHECK: ridge.cast %{{.*}} : tensor<8x4xf32> -> tensor<8x4xf16>
  %h = ridge.cast %t : tensor<8x4xf32> -> tensor<8x4xf16>
  return %h : tensor<8x4xf16>
}

// CHECK-LABEL: func @batched
func.func @batched(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<30x6xf32> {
  // CHECK: ridge.matmul {{.*}} -> tensor<2x5x3x6xf32>
  %m = ridge.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  // CHECK: ridge.reshape {{.*}} : tensor<2x5x3x6xf32> -> tensor<30x6xf32>
  %r = ridge.reshape %m : tensor<2x5x3x6xf32> -> tensor<30x6xf32>
  return %r : tensor<30x6xf32>
}
