// RUN: ridge-opt %s -split-input-file -ridge-fold-channel-scales=remarks=true -verify-diagnostics | FileCheck %s

// A squeeze-and-excitation gate scaling a convolution's input channels goes
// to the convolution's weights: the Mul over the activation (1x16x14x14)
// becomes one over the weights (16x16x3x3, fewer elements), the scale
// broadcast along their input channels; the padding is unchanged.
// CHECK-LABEL: func @se_gate
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x14x14xf32>, %[[S:.*]]: tensor<1x16x1x1xf32>, %[[W:.*]]: tensor<16x16x3x3xf32>)
// CHECK: %[[WS:.*]] = ridge.mul %[[W]], %[[S]] : (tensor<16x16x3x3xf32>, tensor<1x16x1x1xf32>) -> tensor<16x16x3x3xf32>
// CHECK: %[[Y:.*]] = ridge.conv %[[X]], %[[WS]] {{.*}}pads = array<i64: 1, 1, 1, 1>
// CHECK-NOT: ridge.mul
// CHECK: return %[[Y]]
func.func @se_gate(%x: tensor<1x16x14x14xf32>, %s: tensor<1x16x1x1xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %m = ridge.mul %x, %s : (tensor<1x16x14x14xf32>, tensor<1x16x1x1xf32>) -> tensor<1x16x14x14xf32>
  %y = ridge.conv %m, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x16x14x14xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x14x14xf32>
  return %y : tensor<1x16x14x14xf32>
}

// -----

// The scale on the left, and a bias: the same.
// CHECK-LABEL: func @scale_first
// CHECK: ridge.mul %arg2, %arg1
// CHECK: ridge.conv %arg0, %{{.*}}, %arg3
func.func @scale_first(%x: tensor<1x8x16x16xf32>, %s: tensor<1x8x1x1xf32>, %w: tensor<4x8x1x1xf32>, %b: tensor<4xf32>) -> tensor<1x4x16x16xf32> {
  %m = ridge.mul %s, %x : (tensor<1x8x1x1xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %y = ridge.conv %m, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<1x4x16x16xf32>
  return %y : tensor<1x4x16x16xf32>
}

// -----

// Left alone, with a remark: weights as many as the activation (512
// channels at 2x2: a pass over them costs more than the one it saves)...
// CHECK-LABEL: func @big_weights
// CHECK: ridge.mul %arg0, %arg1
func.func @big_weights(%x: tensor<1x512x2x2xf32>, %s: tensor<1x512x1x1xf32>, %w: tensor<512x512x3x3xf32>) -> tensor<1x512x2x2xf32> {
  // expected-remark @+1 {{channel scale not folded into the convolution's weights: the weights (2359296 elements) are not smaller than the activation (2048)}}
  %m = ridge.mul %x, %s : (tensor<1x512x2x2xf32>, tensor<1x512x1x1xf32>) -> tensor<1x512x2x2xf32>
  %y = ridge.conv %m, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x512x2x2xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x2x2xf32>
  return %y : tensor<1x512x2x2xf32>
}

// -----

// ...per-image scales of a batch of 2 (one weight tensor per image)...
func.func @per_image(%x: tensor<2x8x16x16xf32>, %s: tensor<2x8x1x1xf32>, %w: tensor<4x8x1x1xf32>) -> tensor<2x4x16x16xf32> {
  // expected-remark @+1 {{channel scale not folded into the convolution's weights: not an activation times a [1, C, 1, ...] channel scale}}
  %m = ridge.mul %x, %s : (tensor<2x8x16x16xf32>, tensor<2x8x1x1xf32>) -> tensor<2x8x16x16xf32>
  %y = ridge.conv %m, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x16x16xf32>, tensor<4x8x1x1xf32>) -> tensor<2x4x16x16xf32>
  return %y : tensor<2x4x16x16xf32>
}

// -----

// ...a grouped (depthwise) convolution...
func.func @grouped(%x: tensor<1x8x16x16xf32>, %s: tensor<1x8x1x1xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32> {
  // expected-remark @+1 {{channel scale not folded into the convolution's weights: grouped convolution}}
  %m = ridge.mul %x, %s : (tensor<1x8x16x16xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %y = ridge.conv %m, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 8 : i64} : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %y : tensor<1x8x16x16xf32>
}

// -----

// ...and a scaled activation something else reads too.
func.func @shared(%x: tensor<1x8x16x16xf32>, %s: tensor<1x8x1x1xf32>, %w: tensor<4x8x1x1xf32>) -> (tensor<1x4x16x16xf32>, tensor<1x8x16x16xf32>) {
  %m = ridge.mul %x, %s : (tensor<1x8x16x16xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x16x16xf32>
  %y = ridge.conv %m, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x16x16xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x16x16xf32>
  return %y, %m : tensor<1x4x16x16xf32>, tensor<1x8x16x16xf32>
}
