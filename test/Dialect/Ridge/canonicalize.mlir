// RUN: ridge-opt %s --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func @reshape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = ridge.reshape %[[X]] : tensor<2x3x4xf32> -> tensor<24xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<24xf32> {
  %0 = ridge.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %1 = ridge.reshape %0 : tensor<6x4xf32> -> tensor<24xf32>
  return %1 : tensor<24xf32>
}

// -----

// CHECK-LABEL: func @identity_cast
// CHECK-NEXT: return %arg0
func.func @identity_cast(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = ridge.cast %x : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func @constant_reshape
// CHECK-NEXT: %[[C:.*]] = ridge.constant dense<{{\[\[}}1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-NEXT: return %[[C]]
func.func @constant_reshape() -> tensor<2x2xi64> {
  %0 = ridge.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %1 = ridge.reshape %0 : tensor<4xi64> -> tensor<2x2xi64>
  return %1 : tensor<2x2xi64>
}
