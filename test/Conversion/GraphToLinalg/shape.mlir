// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// Concat: one generic over the result; the position along the axis picks the
// input, and only that input is read.
// CHECK-LABEL: func @concat
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %[[J]], %c3
// CHECK: scf.if %[[IN0]] -> (f32)
// CHECK: tensor.extract %arg0
// CHECK: } else {
// CHECK: %[[OFF:.*]] = arith.subi %[[J]], %c3
// CHECK: tensor.extract %arg1[%{{.*}}, %[[OFF]]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %0 = ridge.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Slices read start + step * i, also for negative steps.
// CHECK-LABEL: func @slice_reversed
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[S:.*]] = arith.muli %[[I]], %c-2
// CHECK: %[[P:.*]] = arith.addi %[[S]], %c4
// CHECK: tensor.extract %arg0[%[[P]]]
func.func @slice_reversed(%a: tensor<5xf32>) -> tensor<3xf32> {
  %0 = ridge.slice %a starts [4] sizes [3] steps [-2] : tensor<5xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Gather indices wrap when negative and are clamped into range.
// CHECK-DAG: #[[IDX:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @gather
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.*}}]
// CHECK-SAME: ins(%arg1 : tensor<2x2xi64>)
// CHECK: arith.index_cast
// CHECK: arith.cmpi slt
// CHECK: arith.addi %{{.*}}, %c5
// CHECK: arith.select
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.*}}, %c4
// CHECK: tensor.extract %arg0
func.func @gather(%d: tensor<3x5xf32>, %i: tensor<2x2xi64>) -> tensor<3x2x2xf32> {
  %0 = ridge.gather %d, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>
  return %0 : tensor<3x2x2xf32>
}

// -----

// Scatters are sequential: an scf.for nest threads the result through
// tensor.insert, combining with the element in place for reductions.
// CHECK-LABEL: func @scatter_elements_add
// CHECK: scf.for %[[I:.*]] = %c0 to %c1 step %c1{{.*}} iter_args(%[[A0:.*]] = %arg0)
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %c2 step %c1{{.*}} iter_args(%[[A1:.*]] = %[[A0]])
// CHECK: tensor.extract %arg1[%[[I]], %[[J]]] : tensor<1x2xi64>
// CHECK: %[[U:.*]] = tensor.extract %arg2[%[[I]], %[[J]]]
// CHECK: %[[OLD:.*]] = tensor.extract %[[A1]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[U]]
// CHECK: tensor.insert %[[NEW]] into %[[A1]]
func.func @scatter_elements_add(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %0 = ridge.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return %0 : tensor<1x5xf32>
}

// -----

// CHECK-LABEL: func @scatter_nd
// CHECK: scf.for %[[I:.*]] = %c0 to %c2
// CHECK: scf.for %[[J:.*]] = %c0{{.*}} to %c4
// CHECK: %[[ROW:.*]] = tensor.extract %arg1[%[[I]], %c0{{.*}}] : tensor<2x1xi64>
// CHECK: tensor.extract %arg2[%[[I]], %[[J]]]
// CHECK: tensor.insert
func.func @scatter_nd(%d: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = ridge.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tile broadcasts into [r0, d0, r1, d1] and collapses the pairs.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-LABEL: func @tile
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<2x2x3x3xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2, 3]] : tensor<2x2x3x3xf32> into tensor<4x9xf32>
func.func @tile(%a: tensor<2x3xf32>) -> tensor<4x9xf32> {
  %0 = ridge.tile %a, [2, 3] : tensor<2x3xf32> -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @expand
// CHECK: linalg.generic {indexing_maps = [#[[B]], #{{.*}}]
func.func @expand(%a: tensor<3x1xf32>) -> tensor<3x4xf32> {
  %0 = ridge.expand %a : tensor<3x1xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Constant padding reads the input only inside its window.
// CHECK-LABEL: func @pad_constant
// CHECK: linalg.generic
// CHECK: %[[J:.*]] = arith.subi %{{.*}}, %c1
// CHECK: arith.cmpi ult, %[[J]], %c3
// CHECK: scf.if
// CHECK: tensor.extract %arg0
// CHECK: } else {
// CHECK: tensor.extract %arg1[]
func.func @pad_constant(%a: tensor<3xf32>, %v: tensor<f32>) -> tensor<6xf32> {
  %0 = ridge.pad %a, %v pads [1, 2] : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Reflect padding mirrors with period 2 * (dim - 1).
// CHECK-LABEL: func @pad_reflect
// CHECK: linalg.generic
// CHECK: arith.remsi %{{.*}}, %c4
// CHECK: arith.subi %c4
// CHECK: arith.cmpi slt, %{{.*}}, %c3
// CHECK: tensor.extract %arg0
func.func @pad_reflect(%a: tensor<3xf32>) -> tensor<7xf32> {
  %0 = ridge.pad %a pads [2, 2] {mode = "reflect"} : (tensor<3xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// CHECK-LABEL: func @trilu
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[D:.*]] = arith.subi %[[J]], %[[I]]
// CHECK: arith.cmpi sge, %[[D]], %c1
// CHECK: arith.select
func.func @trilu(%a: tensor<3x4xi64>) -> tensor<3x4xi64> {
  %0 = ridge.trilu %a {k = 1 : i64} : tensor<3x4xi64>
  return %0 : tensor<3x4xi64>
}

// -----

// CHECK-LABEL: func @one_hot
// CHECK: %[[OFF:.*]] = tensor.extract %arg1[%c0]
// CHECK: %[[ON:.*]] = tensor.extract %arg1[%c1]
// CHECK: linalg.generic
// CHECK: arith.fptosi %{{.*}} : f32 to i64
// CHECK: arith.cmpi eq
// CHECK: arith.select %{{.*}}, %[[ON]], %[[OFF]]
func.func @one_hot(%i: tensor<3xf32>, %v: tensor<2xi32>) -> tensor<3x5xi32> {
  %0 = ridge.one_hot %i, %v {axis = 1 : i64, depth = 5 : i64} : (tensor<3xf32>, tensor<2xi32>) -> tensor<3x5xi32>
  return %0 : tensor<3x5xi32>
}

// -----

// Sequence lengths are runtime data: clamped to [0, steps] before use.
// CHECK-LABEL: func @reverse_sequence
// CHECK: linalg.generic
// CHECK: tensor.extract %arg1
// CHECK: arith.maxsi
// CHECK: arith.minsi %{{.*}}, %c4
// CHECK: tensor.extract %arg0
func.func @reverse_sequence(%a: tensor<4x3xf32>, %l: tensor<3xi64>) -> tensor<4x3xf32> {
  %0 = ridge.reverse_sequence %a, %l {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x3xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Unsigned data becomes signless; max picks the unsigned comparison.
// CHECK-LABEL: func @scatter_max_unsigned
// CHECK: arith.maxui
func.func @scatter_max_unsigned(%d: tensor<4xui8>, %i: tensor<2xi64>, %u: tensor<2xui8>) -> tensor<4xui8> {
  %0 = ridge.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = "max"} : (tensor<4xui8>, tensor<2xi64>, tensor<2xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// TensorScatter: each cache element reads the update written to it, if any
// (circular positions wrap modulo the cache length).
// CHECK-LABEL: func @tensor_scatter_circular
// CHECK: linalg.generic
// CHECK:   tensor.extract %{{.*}}[%{{.*}}] : tensor<2xi64>
// CHECK:   arith.remsi
// CHECK:   tensor.extract %{{.*}} : tensor<2x1x2x5xf32>
// CHECK:   arith.select
func.func @tensor_scatter_circular(%past: tensor<2x1x4x5xf32>, %update: tensor<2x1x2x5xf32>, %idx: tensor<2xi64>) -> tensor<2x1x4x5xf32> {
  %0 = ridge.tensor_scatter %past, %update, %idx {axis = 2 : i64, circular = true} : (tensor<2x1x4x5xf32>, tensor<2x1x2x5xf32>, tensor<2xi64>) -> tensor<2x1x4x5xf32>
  return %0 : tensor<2x1x4x5xf32>
}
