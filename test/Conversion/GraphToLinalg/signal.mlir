// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// A real DFT is a contraction over the input bins against twiddle factors
// computed from the loop indices, accumulated in f64.
// CHECK-DAG: #[[RE:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, 0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @dft_real
// CHECK: linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<2x5x2xf64>)
// CHECK: linalg.generic {indexing_maps = [#[[RE]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:   arith.remui
// CHECK:   math.cos
// CHECK:   math.sin
// CHECK: arith.truncf %{{.*}} : f64 to f32
func.func @dft_real(%x: tensor<2x8x1xf32>) -> tensor<2x5x2xf32> {
  %0 = ridge.dft %x {axis = 1 : i64, length = 8 : i64, onesided = true} : tensor<2x8x1xf32> -> tensor<2x5x2xf32>
  return %0 : tensor<2x5x2xf32>
}

// -----

// A complex inverse DFT reads both parts, truncates the signal to the DFT
// size and scales by 1 / length.
// CHECK-DAG: #[[RE:.*]] = affine_map<(d0, d1, d2) -> (d2, 0)>
// CHECK-DAG: #[[IM:.*]] = affine_map<(d0, d1, d2) -> (d2, 1)>
// CHECK-LABEL: func @idft_complex_truncated
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %{{.*}}[0, 0] [4, 2] [1, 1] : tensor<6x2xf64> to tensor<4x2xf64>
// CHECK: linalg.generic {indexing_maps = [#[[RE]], #[[IM]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SLICE]], %[[SLICE]] : tensor<4x2xf64>, tensor<4x2xf64>)
// CHECK: arith.constant 2.500000e-01 : f64
func.func @idft_complex_truncated(%x: tensor<6x2xf64>) -> tensor<4x2xf64> {
  %0 = ridge.dft %x {axis = 0 : i64, length = 4 : i64, inverse = true} : tensor<6x2xf64> -> tensor<4x2xf64>
  return %0 : tensor<4x2xf64>
}

// -----

// Det: LU with partial pivoting per matrix, in scf loops over an f64 copy.
// CHECK-LABEL: func @det_batched
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2], [3]] : tensor<2x3x4x4xf32> into tensor<6x4x4xf32>
// CHECK: arith.extf
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       math.absf
// CHECK:       arith.cmpf ogt
// CHECK:     arith.divf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
func.func @det_batched(%x: tensor<2x3x4x4xf32>) -> tensor<2x3xf32> {
  %0 = ridge.det %x : tensor<2x3x4x4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A single matrix is viewed as a batch of one.
// CHECK-LABEL: func @det_single
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 3, 3] : tensor<3x3xf64> into tensor<1x3x3xf64>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf64> into tensor<f64>
func.func @det_single(%x: tensor<3x3xf64>) -> tensor<f64> {
  %0 = ridge.det %x : tensor<3x3xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

// -----

// The inverse real transform reads length / 2 + 1 bins and counts the
// mirrored ones twice; its result holds only real parts.
// CHECK-LABEL: func @irfft
// CHECK: tensor.extract_slice %{{.*}}[0, 0] [4, 2] [1, 1] : tensor<5x2xf32> to tensor<4x2xf32>
// CHECK: linalg.generic
// CHECK:   arith.ori
// CHECK:   arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK: arith.constant 0.1666{{[0-9]*}} : f64
func.func @irfft(%x: tensor<5x2xf32>) -> tensor<6x1xf32> {
  %0 = ridge.dft %x {axis = 0 : i64, length = 6 : i64, inverse = true, onesided = true} : tensor<5x2xf32> -> tensor<6x1xf32>
  return %0 : tensor<6x1xf32>
}
