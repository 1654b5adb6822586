// RUN: ridge-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func @conv_group
// CHECK: ridge.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
func.func @conv_group(%x: tensor<1x4x7x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x3xf32> {
  %0 = ridge.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x7x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x3xf32>
  return %0 : tensor<1x6x4x3xf32>
}

// -----

// CHECK-LABEL: func @conv_transpose
// CHECK: ridge.conv_transpose
func.func @conv_transpose(%x: tensor<1x1x3x3xf32>, %w: tensor<1x2x3x3xf32>) -> tensor<1x2x10x8xf32> {
  %0 = ridge.conv_transpose %x, %w {strides = array<i64: 3, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x10x8xf32>
  return %0 : tensor<1x2x10x8xf32>
}

// -----

// CHECK-LABEL: func @pools
// CHECK: ridge.pool %{{.*}} {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, kind = "avg"
// CHECK: ridge.pool %{{.*}} {{.*}}with_indices = true{{.*}} -> tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
func.func @pools(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %0 = ridge.pool %x {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  %1, %2 = ridge.pool %x {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, with_indices = true} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
  return %0, %1, %2 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// -----

// The channels-last form: [N, H, W, C] in, [N, OH, OW, C] out.
// CHECK-LABEL: func @pool_channels_last
// CHECK: ridge.pool %{{.*}} {channels_last, {{.*}}} : tensor<2x7x5x3xf32> -> tensor<2x4x3x3xf32>
func.func @pool_channels_last(%x: tensor<2x7x5x3xf32>) -> tensor<2x4x3x3xf32> {
  %0 = ridge.pool %x {channels_last, kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<2x7x5x3xf32> -> tensor<2x4x3x3xf32>
  return %0 : tensor<2x4x3x3xf32>
}

// -----

func.func @pool_channels_last_indices(%x: tensor<1x4x4x2xf32>) {
  // expected-error @+1 {{indices are only defined channels-second}}
  %0, %1 = ridge.pool %x {channels_last, kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, with_indices = true} : tensor<1x4x4x2xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
  return
}

// -----

// CHECK-LABEL: func @resize_and_quant
// CHECK: ridge.resize
// CHECK: ridge.quantize_linear
// CHECK: ridge.dequantize_linear
// CHECK: ridge.dynamic_quantize_linear
func.func @resize_and_quant(%x: tensor<1x1x2x2xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x1x4x4xf32> {
  %0 = ridge.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  %1 = ridge.quantize_linear %0, %s, %z : (tensor<1x1x4x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x1x4x4xui8>
  %2 = ridge.dequantize_linear %1, %s, %z : (tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x4x4xf32>
  %3:3 = ridge.dynamic_quantize_linear %2 : tensor<1x1x4x4xf32> -> tensor<1x1x4x4xui8>, tensor<f32>, tensor<ui8>
  return %2 : tensor<1x1x4x4xf32>
}

// -----

// The channels-last form: [N, H, W, C] input, [M, kh, kw, C] weight,
// [N, OH, OW, M] result, the bias along the last dimension.
// CHECK-LABEL: func @conv_channels_last
// CHECK: ridge.conv %{{.*}}, %{{.*}}, %{{.*}} {channels_last, {{.*}}} : (tensor<1x7x5x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x4x3x6xf32>
func.func @conv_channels_last(%x: tensor<1x7x5x4xf32>, %w: tensor<6x3x3x4xf32>, %b: tensor<6xf32>) -> tensor<1x4x3x6xf32> {
  %0 = ridge.conv %x, %w, %b {channels_last, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x7x5x4xf32>, tensor<6x3x3x4xf32>, tensor<6xf32>) -> tensor<1x4x3x6xf32>
  return %0 : tensor<1x4x3x6xf32>
}

// -----

// Depthwise, channels-last: weight [1, kh, kw, C].
// CHECK-LABEL: func @conv_channels_last_depthwise
// CHECK: ridge.conv %{{.*}}, %{{.*}} {channels_last, {{.*}}group = 4 : i64{{.*}}} : (tensor<1x7x5x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32>
func.func @conv_channels_last_depthwise(%x: tensor<1x7x5x4xf32>, %w: tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32> {
  %0 = ridge.conv %x, %w {channels_last, group = 4 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x7x5x4xf32>, tensor<1x3x3x4xf32>) -> tensor<1x4x3x4xf32>
  return %0 : tensor<1x4x3x4xf32>
}

// -----

func.func @conv_channels_last_grouped(%x: tensor<1x5x5x4xf32>, %w: tensor<2x3x3x2xf32>) {
  // expected-error @+2 {{a channels_last conv has group 1 or is depthwise (group = 4 channels, weight [1, K..., 4]), got group 2 and weight 2x...x2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<2x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  return
}

// -----

func.func @conv_channels_last_bad_channels(%x: tensor<1x5x5x4xf32>, %w: tensor<2x3x3x8xf32>) {
  // expected-error @+2 {{input channels 4 do not match weight channels 8 x group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<2x3x3x8xf32>) -> tensor<1x3x3x2xf32>
  return
}

// -----

func.func @conv_bad_group(%x: tensor<1x4x5x5xf32>, %w: tensor<2x4x3x3xf32>) {
  // expected-error @+2 {{input channels 4 do not match weight channels 4 x group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @conv_out_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error @+2 {{output channels 3 are not divisible by group 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----

func.func @conv_kernel_rank(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+2 {{conv weight rank 3 differs from the input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @conv_bad_pads(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+2 {{expects 4 pads, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x1x5x5xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{bias must have shape [2]}}
  %0 = ridge.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<2x1x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  return
}

// -----

func.func @pool_kernel_rank(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+2 {{expects 2 kernel_shape entries, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.pool %x {kind = "max", kernel_shape = array<i64: 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @pool_kind(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{kind must be max, avg or lp, got 'min'}}
  %0 = ridge.pool %x {kind = "min", kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  return
}

// -----

func.func @avg_pool_int(%x: tensor<1x1x4x4xi8>) {
  // expected-error @+1 {{avg pooling needs a float input}}
  %0 = ridge.pool %x {kind = "avg", kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xi8> -> tensor<1x1x3x3xi8>
  return
}

// -----

func.func @resize_mode(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{mode must be nearest, linear or cubic, got 'area'}}
  %0 = ridge.resize %x {mode = "area", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @resize_scales(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+1 {{expects 4 scales, got 2}}
  %0 = ridge.resize %x {mode = "nearest", coordinate_transformation_mode = "half_pixel", scales = array<f64: 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @quantize_axis(%x: tensor<2x3xf32>, %s: tensor<2xf32>, %z: tensor<2xui8>) {
  // expected-error @+2 {{scale must be a scalar or have shape [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xui8>) -> tensor<2x3xui8>
  return
}

// -----

// CHECK-LABEL: func @sampling
// CHECK: ridge.grid_sample
// CHECK: ridge.roi_align
// CHECK: ridge.max_unpool
func.func @sampling(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x5x2xf32>, %r: tensor<3x4xf32>, %b: tensor<3xi64>, %v: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> (tensor<1x2x3x5xf32>, tensor<3x2x2x2xf32>, tensor<1x2x4x4xf32>) {
  %0 = ridge.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners = true} : (tensor<1x2x4x4xf32>, tensor<1x3x5x2xf32>) -> tensor<1x2x3x5xf32>
  %1 = ridge.roi_align %x, %r, %b {mode = "avg", output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 2 : i64, spatial_scale = 1.0 : f32, half_pixel = true} : (tensor<1x2x4x4xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x2x2xf32>
  %2 = ridge.max_unpool %v, %i {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  return %0, %1, %2 : tensor<1x2x3x5xf32>, tensor<3x2x2x2xf32>, tensor<1x2x4x4xf32>
}

// -----

func.func @grid_sample_grid(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x5x3xf32>) {
  // expected-error @+2 {{grid must have shape [1, ..., 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros"} : (tensor<1x2x4x4xf32>, tensor<1x3x5x3xf32>) -> tensor<1x2x3x5xf32>
  return
}

// -----

func.func @roi_align_ratio(%x: tensor<1x2x4x4xf32>, %r: tensor<3x4xf32>, %b: tensor<3xi64>) {
  // expected-error @+1 {{sampling_ratio must be positive, got 0}}
  %0 = ridge.roi_align %x, %r, %b {mode = "avg", output_height = 2 : i64, output_width = 2 : i64, sampling_ratio = 0 : i64, spatial_scale = 1.0 : f32, half_pixel = true} : (tensor<1x2x4x4xf32>, tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x2x2x2xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x2x3x3xf32>, %w: tensor<1x2x3x3xf32>) {
  // expected-error @+2 {{input channels 2 do not match weight dim 0 (1) or group 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.conv_transpose %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @col2im_blocks(%x: tensor<1x5x4xf32>) {
  // expected-error @+1 {{does not match the result}}
  %0 = ridge.col2im %x {block_shape = array<i64: 1, 5>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x5x4xf32> -> tensor<1x1x5x5xf32>
  return
}

// -----

func.func @deform_conv_offset(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>, %o: tensor<1x4x2x2xf32>, %b: tensor<1xf32>, %m: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{offset must be [N, offset_group * kH * kW * 2, oH, oW]}}
  %0 = ridge.deform_conv %x, %w, %o, %b, %m {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1xf32>, tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @grid_sample_bicubic_3d(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) {
  // expected-error @+1 {{bicubic sampling needs a 2-d (rank-4) input}}
  %0 = ridge.grid_sample %x, %g {mode = "bicubic", padding_mode = "zeros", align_corners = false} : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32>
  return
}
