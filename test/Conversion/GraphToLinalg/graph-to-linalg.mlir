// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Broadcasting is expressed in the indexing maps, not by materialization.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_bcast
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:   arith.addf
func.func @add_bcast(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = ridge.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Unsigned division stays unsigned after the signless conversion.
// CHECK-LABEL: func @div_u8
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> tensor<4xi8>
// CHECK: arith.divui
func.func @div_u8(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = ridge.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @matmul
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[ZERO]]
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @matmul(%a: tensor<4x16xf32>, %b: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %0 = ridge.matmul %a, %b : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// f16 contractions accumulate in f32 and round once at the end.
// CHECK-LABEL: func @matmul_f16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:   arith.extf
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @matmul_f16(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %0 = ridge.matmul %a, %b : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// -----

// Gemm with transB reads B through a transposed map; alpha/beta form one
// epilogue generic.
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @gemm
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}]
// CHECK: linalg.generic
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @gemm(%a: tensor<3x5xf32>, %b: tensor<4x5xf32>, %c: tensor<4xf32>) -> tensor<3x4xf32> {
  %0 = ridge.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, trans_b = true}
      : (tensor<3x5xf32>, tensor<4x5xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Softmax: max-reduce, exp(x - max), sum-reduce, divide.
// CHECK-LABEL: func @softmax
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:   arith.subf
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   arith.divf
func.func @softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// Reshapes are views: collapse to 1-D, expand to the target.
// CHECK-LABEL: func @reshape
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = ridge.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// ONNX Cast: float -> int truncates, anything -> bool tests != 0.
// CHECK-LABEL: func @casts
// CHECK: arith.fptosi
// CHECK: arith.cmpf une
func.func @casts(%x: tensor<8xf32>) -> (tensor<8xi32>, tensor<8xi1>) {
  %0 = ridge.cast %x : tensor<8xf32> -> tensor<8xi32>
  %1 = ridge.cast %x : tensor<8xf32> -> tensor<8xi1>
  return %0, %1 : tensor<8xi32>, tensor<8xi1>
}

// -----

// CHECK-LABEL: func @transpose
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
func.func @transpose(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = ridge.transpose %x, [1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Weight blobs are flat 1-D constants viewed with expand_shape, so that the
// LLVM global is one flat array; small dense constants stay as they are.
// CHECK-LABEL: func @weights
// CHECK: %[[FLAT:.*]] = arith.constant dense_resource<w> : tensor<6xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK: arith.constant dense<1.000000e+00> : tensor<2x3xf32>
func.func @weights() -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ridge.constant dense_resource<w> : tensor<2x3xf32>
  %1 = ridge.constant dense<1.0> : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x04000000000000000000803F0000004000004040000080400000A040"
    }
  }
#-}
