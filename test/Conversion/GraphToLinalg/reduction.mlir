// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Reductions drop the reduced dims in the accumulator; keepdims is a view.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @reduce_sum_keepdims
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK:   arith.addf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [2, 1, 4] : tensor<2x4xf32> into tensor<2x1x4xf32>
func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Unsigned max starts from 0 and compares unsigned.
// CHECK-LABEL: func @reduce_max_ui8
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[ZERO]] : i8) outs(%{{.*}} : tensor<i8>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK:   arith.maxui
func.func @reduce_max_ui8(%x: tensor<2x3xui8>) -> tensor<ui8> {
  %0 = ridge.reduce max %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x3xui8> -> tensor<ui8>
  return %0 : tensor<ui8>
}

// -----

// Signed min starts from the largest i32.
// CHECK-LABEL: func @reduce_min_i32
// CHECK: arith.constant 2147483647 : i32
// CHECK: arith.minsi
func.func @reduce_min_i32(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %0 = ridge.reduce min %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xi32> -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// f16 mean accumulates in f32, then divides and truncates.
// CHECK-LABEL: func @reduce_mean_f16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.extf %{{.*}} : f16 to f32
// CHECK:   arith.addf %{{.*}} : f32
// CHECK: linalg.generic
// CHECK:   arith.divf %{{.*}} : f32
// CHECK:   arith.truncf %{{.*}} : f32 to f16
func.func @reduce_mean_f16(%x: tensor<2x3xf16>) -> tensor<2xf16> {
  %0 = ridge.reduce mean %x {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf16> -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// ArgMax carries (value, index) pairs; the first maximum wins (strict >).
// CHECK-LABEL: func @argmax
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK:   arith.cmpf ogt
// CHECK:   linalg.index 1
// CHECK:   linalg.yield %{{.*}}, %{{.*}} : f32, i64
// CHECK: tensor.expand_shape %{{.*}} : tensor<2xi64> into tensor<2x1xi64>
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %0 = ridge.arg_reduce argmax %x {axis = 1 : i64} : tensor<2x3xf32> -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// select_last_index makes ties move the index forward (<=).
// CHECK-LABEL: func @argmin_last
// CHECK: arith.cmpi sle
func.func @argmin_last(%x: tensor<2x3xi32>) -> tensor<3xi64> {
  %0 = ridge.arg_reduce argmin %x {axis = 0 : i64, keepdims = false, select_last_index = true} : tensor<2x3xi32> -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

// CHECK-LABEL: func @log_softmax
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.maximumf
// CHECK:   math.exp
// CHECK:   arith.addf
// CHECK: linalg.generic
// CHECK:   arith.subf
// CHECK:   math.log
// CHECK:   arith.subf
func.func @log_softmax(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %0 = ridge.log_softmax %x {axis = 1 : i64} : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}

// -----

// CHECK-LABEL: func @hardmax
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK:   linalg.index 1
// CHECK:   arith.cmpi eq
// CHECK:   arith.select
func.func @hardmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = ridge.hardmax %x {axis = 1 : i64} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Mean, variance (centered), normalize with scale and bias; the statistics
// keep the normalized dims as size 1.
// CHECK-LABEL: func @layer_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK:   arith.addf
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
func.func @layer_norm(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>, %b: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>) {
  %0:3 = ridge.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  return %0#0, %0#2 : tensor<2x3x4xf32>, tensor<2x1x1xf32>
}

// -----

// The window loop gets its bound from a window operand; channels outside
// the tensor are skipped.
// CHECK-LABEL: func @lrn
// CHECK: tensor.empty() : tensor<3xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK:   tensor.extract
// CHECK: math.powf
func.func @lrn(%x: tensor<1x5x2x2xf32>) -> tensor<1x5x2x2xf32> {
  %0 = ridge.lrn %x {size = 3 : i64} : tensor<1x5x2x2xf32>
  return %0 : tensor<1x5x2x2xf32>
}

// -----

// CumSum: an extra reduction loop j adds x[j] where j <= i (reverse: >=).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @cumsum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK:   arith.cmpi sgt
// CHECK:   arith.addi
func.func @cumsum(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = ridge.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// TopK with a small k: one selection pass per output slot (the first
// element after the previous pick in value-then-position order), then a
// gather of the picks into the slots.
// CHECK-LABEL: func @topk_passes
// CHECK: %[[P0:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : tensor<3x4xf32>) outs(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xi64>)
// CHECK:   arith.cmpf ogt
// CHECK: %[[P1:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %[[P0]]#0, %[[P0]]#1 : tensor<3x4xf32>, tensor<3xf32>, tensor<3xi64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK-SAME: ins(%[[P0]]#0, %[[P1]]#0, %[[P0]]#1, %[[P1]]#1 : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
func.func @topk_passes(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %0:2 = ridge.topk %x {axis = 1 : i64, k = 2 : i64} : tensor<3x4xf32> -> tensor<3x2xf32>, tensor<3x2xi64>
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// TopK with a large k: rank every element against all others, then pick
// rank r for output slot r.
// CHECK-LABEL: func @topk_ranks
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:   arith.cmpi ult
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<40xi32>, tensor<40xi64>)
// CHECK:   arith.cmpi eq
func.func @topk_ranks(%x: tensor<50xi32>) -> (tensor<40xi32>, tensor<40xi64>) {
  %0:2 = ridge.topk %x {axis = 0 : i64, k = 40 : i64, largest = false} : tensor<50xi32> -> tensor<40xi32>, tensor<40xi64>
  return %0#0, %0#1 : tensor<40xi32>, tensor<40xi64>
}

// -----

// Einsum is one generic: output labels parallel, summed labels reduction.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @einsum_bmm
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:   arith.mulf
// CHECK:   arith.addf
func.func @einsum_bmm(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = ridge.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// A repeated label reads a diagonal.
// CHECK-DAG: #[[D:.*]] = affine_map<(d0, d1) -> (d0, d1, d1)>
// CHECK-LABEL: func @einsum_diagonal
// CHECK: linalg.generic {indexing_maps = [#[[D]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
func.func @einsum_diagonal(%x: tensor<3x5x5xf32>) -> tensor<3x5xf32> {
  %0 = ridge.einsum %x {equation = "...ii->...i"} : (tensor<3x5x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// CumProd: the CumSum scan with a multiply and identity 1.
// CHECK-LABEL: func @cumprod_exclusive
// CHECK: linalg.fill ins(%{{.*}} : i32)
// CHECK: linalg.generic
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
// CHECK:   arith.muli
func.func @cumprod_exclusive(%x: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %0 = ridge.cumprod %x {axis = 1 : i64, exclusive = true} : tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}
