// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Grouped f16 conv: padding is a gather generic, channels are viewed as
// (group, per-group), the window sums in f32 and the epilogue adds the bias.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func @conv_group_f16
// CHECK: %[[PAD:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x4x7x7xf16>)
// CHECK:   tensor.extract
// CHECK:   arith.select
// CHECK: tensor.expand_shape %[[PAD]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 7, 7]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 3]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x3x3x3xf32>)
// CHECK:   arith.extf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BIAS]], #{{.*}}]
// CHECK:   arith.truncf
func.func @conv_group_f16(%x: tensor<1x4x5x5xf16>, %w: tensor<6x2x3x3xf16>, %b: tensor<6xf16>) -> tensor<1x6x3x3xf16> {
  %0 = ridge.conv %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf16>, tensor<6x2x3x3xf16>, tensor<6xf16>) -> tensor<1x6x3x3xf16>
  return %0 : tensor<1x6x3x3xf16>
}

// -----

// One group, or one output channel a group (depthwise): the sums are built
// over the result's own dims, no (group, per-group) view, so that nothing
// stands between them and the epilogue (ridge-tile-kernel-bodies fuses the
// two into one kernel). A depthwise input channel is m * ICg + ic.
// CHECK-DAG: #[[DIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[DOUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[GIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func @conv_depthwise_and_group_1
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {indexing_maps = [#[[DIN]], #[[DW]], #[[DOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x3x3xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[GIN]], #[[DW]], #[[DOUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<1x8x1x1xf32>)
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK:   arith.addf
// CHECK: return
func.func @conv_depthwise_and_group_1(%x: tensor<1x4x5x5xf32>, %dw: tensor<4x1x3x3xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x1x1xf32> {
  %0 = ridge.conv %x, %dw {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %1 = ridge.conv %0, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x3x3xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x1x1xf32>
  return %1 : tensor<1x8x1x1xf32>
}

// -----

// Transposed conv: flipped kernel, input dilated by the stride.
// CHECK-DAG: #[[FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, -d3 + 2)>
// CHECK-LABEL: func @conv_transpose_1d
// CHECK: linalg.generic {indexing_maps = [#[[FLIP]], #{{.*}}]
// CHECK: tensor.collapse_shape %{{.*}} : tensor<1x2x1x3xf32> into tensor<2x1x3xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x9xf32>)
// CHECK:   arith.floordivsi
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x7xf32>)
func.func @conv_transpose_1d(%x: tensor<1x1x3xf32>, %w: tensor<1x2x3xf32>) -> tensor<1x2x7xf32> {
  %0 = ridge.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x1x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x7xf32>
  return %0 : tensor<1x2x7xf32>
}

// -----

// Average pooling divides by per-dim counts of non-padding elements.
// CHECK-DAG: #[[PIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-LABEL: func @avg_pool
// CHECK: linalg.generic {indexing_maps = [#[[PIN]], #[[WIN]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK:   arith.addf
// CHECK: arith.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf64>
// CHECK: linalg.generic
// CHECK:   arith.divf
func.func @avg_pool(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = ridge.pool %x {kind = "avg", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Max pooling of unsigned data compares unsigned and pads with 0.
// CHECK-LABEL: func @max_pool_u8
// CHECK: arith.maxui
func.func @max_pool_u8(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x4x4xui8> {
  %0 = ridge.pool %x {kind = "max", kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : tensor<1x1x4x4xui8> -> tensor<1x1x4x4xui8>
  return %0 : tensor<1x1x4x4xui8>
}

// -----

// Linear resize: the taps of each output index are computed in the body
// from linalg.index in f64, as the ONNX reference does ((o + 0.5) / 2 - 0.5,
// floor, clamped to [0, 1]), with no table per output index; 2 x 2 taps are
// gathered with tensor.extract and weighted in f32.
// CHECK-LABEL: func @resize_linear
// CHECK-NOT: dense<
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x4x4xf32>)
// CHECK:   %[[H:.*]] = linalg.index 2
// CHECK:   %[[HI:.*]] = arith.index_cast %[[H]] : index to i64
// CHECK:   %[[HF:.*]] = arith.sitofp %[[HI]] : i64 to f64
// CHECK:   %[[HALF:.*]] = arith.addf %[[HF]], %{{.*}} : f64
// CHECK:   %[[SCALED:.*]] = arith.divf %[[HALF]], %{{.*}} : f64
// CHECK:   %[[X:.*]] = arith.subf %[[SCALED]], %{{.*}} : f64
// CHECK:   %[[BASE:.*]] = math.floor %[[X]] : f64
// CHECK:   %[[RATIO:.*]] = arith.subf %[[X]], %[[BASE]] : f64
// CHECK:   %[[X0:.*]] = arith.fptosi %[[BASE]] : f64 to i64
// CHECK:   arith.minsi %[[X0]], %c1_i64
// CHECK:   arith.truncf %[[RATIO]] : f64 to f32
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = ridge.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : tensor<1x1x2x2xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

// CHECK-LABEL: func @quantize_per_axis
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[AX:.*]], #[[AX]], #{{.*}}]
// CHECK:   arith.divf
// CHECK:   math.roundeven
// CHECK:   arith.uitofp
// CHECK:   arith.fptoui
func.func @quantize_per_axis(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xui8>) -> tensor<2x3xui8> {
  %0 = ridge.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Max pooling with indices: one generic with two reduction outputs.
// CHECK-LABEL: func @max_pool_indices
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
// CHECK:   arith.cmpf ogt
// CHECK:   arith.index_cast
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @max_pool_indices(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  %0, %1 = ridge.pool %x {kind = "max", kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, with_indices = true, storage_order = 1 : i64} : tensor<1x1x5x5xf32> -> tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
  return %0, %1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// -----

// CHECK-LABEL: func @dynamic_quantize
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK:   arith.minimumf
// CHECK:   arith.maximumf
// CHECK: math.roundeven
// CHECK: linalg.generic
// CHECK: tensor.from_elements
func.func @dynamic_quantize(%x: tensor<6xf32>) -> (tensor<6xui8>, tensor<f32>, tensor<ui8>) {
  %0:3 = ridge.dynamic_quantize_linear %x : tensor<6xf32> -> tensor<6xui8>, tensor<f32>, tensor<ui8>
  return %0#0, %0#1, %0#2 : tensor<6xui8>, tensor<f32>, tensor<ui8>
}

// -----

// Col2Im: a gather over (n, c, h, w) with the block offsets as reductions.
// CHECK-LABEL: func @col2im
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK:   arith.floordivsi
// CHECK:   tensor.extract %{{.*}} : tensor<1x5x5xf32>
// CHECK:   arith.addf
// CHECK:   arith.select
func.func @col2im(%x: tensor<1x5x5xf32>) -> tensor<1x1x5x5xf32> {
  %0 = ridge.col2im %x {block_shape = array<i64: 1, 5>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : tensor<1x5x5xf32> -> tensor<1x1x5x5xf32>
  return %0 : tensor<1x1x5x5xf32>
}

// -----

// Antialiased linear downscaling by 2: the triangle filter stretched to four
// taps x0 - 1 .. x0 + 2 (an integral x counts as x0 = x - 1, ratio 1), each
// weight max(0, 1 - |0.5 (i - ratio)|), normalized by their sum.
// CHECK-LABEL: func @resize_antialias
// CHECK: linalg.generic
// CHECK:   %[[INTEGRAL:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} : f64
// CHECK:   %[[RATIO:.*]] = arith.select %[[INTEGRAL]], %{{.*}}, %{{.*}} : f64
// CHECK-COUNT-4: arith.maximumf
// CHECK:   arith.addf
// CHECK:   arith.addf
// CHECK:   %[[SUM:.*]] = arith.addf
// CHECK:   arith.cmpf une, %[[SUM]]
// CHECK-COUNT-4: arith.divf %{{.*}}, %[[SUM]] : f64
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_antialias(%x: tensor<1x1x1x8xf32>) -> tensor<1x1x1x4xf32> {
  %0 = ridge.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", antialias = true, scales = array<f64: 1.0, 1.0, 1.0, 0.5>} : tensor<1x1x1x8xf32> -> tensor<1x1x1x4xf32>
  return %0 : tensor<1x1x1x4xf32>
}

// -----

// Volumetric grid sampling: three grid components, 2^3 corners.
// CHECK-LABEL: func @grid_sample_3d
// CHECK: linalg.generic
// CHECK-COUNT-8: tensor.extract
func.func @grid_sample_3d(%x: tensor<1x1x2x3x4xf32>, %g: tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32> {
  %0 = ridge.grid_sample %x, %g {mode = "bilinear", padding_mode = "zeros", align_corners = false} : (tensor<1x1x2x3x4xf32>, tensor<1x2x2x2x3xf32>) -> tensor<1x1x2x2x2xf32>
  return %0 : tensor<1x1x2x2x2xf32>
}

// -----

// DeformConv: offsets and mask read per tap, four-corner interpolation,
// then a bias epilogue.
// CHECK-LABEL: func @deform_conv
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK:   math.floor
// CHECK-COUNT-4: tensor.extract %{{.*}} : tensor<1x1x3x3xf32>
// CHECK: linalg.generic
// CHECK:   arith.addf
func.func @deform_conv(%x: tensor<1x1x3x3xf32>, %w: tensor<1x1x2x2xf32>, %o: tensor<1x8x2x2xf32>, %b: tensor<1xf32>, %m: tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %0 = ridge.deform_conv %x, %w, %o, %b, %m {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<1x8x2x2xf32>, tensor<1xf32>, tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
