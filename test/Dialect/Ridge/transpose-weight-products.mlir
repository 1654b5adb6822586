// RUN: ridge-opt %s -split-input-file -ridge-transpose-weight-products=remarks=true -verify-diagnostics | FileCheck %s

// MLP-Mixer's token mixing: X [1, 4, 2] by a constant W [2, 3], a bias
// along the product's 3 columns, transposed back to [1, 3, 4]. Computed
// transposed: W^T [3, 2] made at compile time (its values in the resource
// below, 1 4 2 5 3 6), the transpose on X, the bias a [3, 1] column; the
// residual add reads the result as it did.
// CHECK-LABEL: func @token_mixing
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2xf32>, %[[B:.*]]: tensor<3xf32>, %[[R:.*]]: tensor<1x3x4xf32>)
// CHECK: %[[WT:.*]] = ridge.constant dense_resource<weight.t> : tensor<3x2xf32>
// CHECK: %[[XT:.*]] = ridge.transpose %[[X]], [0, 2, 1] : tensor<1x4x2xf32> -> tensor<1x2x4xf32>
// CHECK: %[[P:.*]] = ridge.matmul %[[WT]], %[[XT]] : (tensor<3x2xf32>, tensor<1x2x4xf32>) -> tensor<1x3x4xf32>
// CHECK: %[[C:.*]] = ridge.reshape %[[B]] : tensor<3xf32> -> tensor<3x1xf32>
// CHECK: %[[Y:.*]] = ridge.add %[[C]], %[[P]] : (tensor<3x1xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
// CHECK-NOT: ridge.transpose
// CHECK: ridge.add %[[R]], %[[Y]]
// CHECK: weight.t: "0x040000000000803F00008040000000400000A040000040400000C040"
func.func @token_mixing(%x: tensor<1x4x2xf32>, %b: tensor<3xf32>, %r: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %w = ridge.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %p = ridge.matmul %x, %w : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  %s = ridge.add %b, %p : (tensor<3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %t = ridge.transpose %s, [0, 2, 1] : tensor<1x4x3xf32> -> tensor<1x3x4xf32>
  %y = ridge.add %r, %t : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %y : tensor<1x3x4xf32>
}

// -----

// A 2-D product with no bias, the bias-free transpose of X W: W^T X^T.
// CHECK-LABEL: func @plain_product
// CHECK: %[[WT:.*]] = ridge.constant dense_resource<weight.t> : tensor<3x2xf32>
// CHECK: %[[XT:.*]] = ridge.transpose %arg0, [1, 0] : tensor<4x2xf32> -> tensor<2x4xf32>
// CHECK: %[[P:.*]] = ridge.matmul %[[WT]], %[[XT]] : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: return %[[P]]
func.func @plain_product(%x: tensor<4x2xf32>) -> tensor<3x4xf32> {
  %w = ridge.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %p = ridge.matmul %x, %w : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %t = ridge.transpose %p, [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  return %t : tensor<3x4xf32>
}

// -----

// Left as exported, with a remark: a product that another op reads too
// (computing it twice would cost a second product), a weight that is an
// activation (no compile-time transpose), and a bias that varies along the
// rows. A transpose of other dimensions, and one of no product, are not
// this pass's: no remark.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: weight.t
// CHECK-COUNT-5: ridge.transpose
// CHECK-NOT: ridge.transpose
func.func @left_alone(%x: tensor<1x4x2xf32>, %a: tensor<2x3xf32>, %b: tensor<4x1xf32>) -> (tensor<1x3x4xf32>, tensor<1x4x3xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<3x1x4xf32>, tensor<1x2x4xf32>) {
  %w = ridge.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %p = ridge.matmul %x, %w : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  // expected-remark @below {{transposed product left as exported: the product is read elsewhere than through the transpose}}
  %t = ridge.transpose %p, [0, 2, 1] : tensor<1x4x3xf32> -> tensor<1x3x4xf32>
  %q = ridge.matmul %x, %a : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  // expected-remark @below {{transposed product left as exported: the product's weight is not a 2-D f32 constant at hand}}
  %u = ridge.transpose %q, [0, 2, 1] : tensor<1x4x3xf32> -> tensor<1x3x4xf32>
  %r = ridge.matmul %x, %w : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  %s = ridge.add %r, %b : (tensor<1x4x3xf32>, tensor<4x1xf32>) -> tensor<1x4x3xf32>
  // expected-remark @below {{transposed product left as exported: the added operand is not a bias along the product's columns}}
  %v = ridge.transpose %s, [0, 2, 1] : tensor<1x4x3xf32> -> tensor<1x3x4xf32>
  %o = ridge.matmul %x, %w : (tensor<1x4x2xf32>, tensor<2x3xf32>) -> tensor<1x4x3xf32>
  %z = ridge.transpose %o, [2, 0, 1] : tensor<1x4x3xf32> -> tensor<3x1x4xf32>
  %n = ridge.transpose %x, [0, 2, 1] : tensor<1x4x2xf32> -> tensor<1x2x4xf32>
  return %t, %p, %u, %v, %z, %n : tensor<1x3x4xf32>, tensor<1x4x3xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<3x1x4xf32>, tensor<1x2x4xf32>
}
