// RUN: ridge-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s --split-input-file --verify-diagnostics --canonicalize | FileCheck %s --check-prefix=FOLD

// Round trip of the shape and data-movement ops.

// CHECK-LABEL: func @round_trip
func.func @round_trip(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>,
                      %i: tensor<4xi64>, %j: tensor<2x3xi32>,
                      %s: tensor<f32>, %l: tensor<3xi64>)
    -> (tensor<2x4xf32>, tensor<1x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>,
        tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x6xf32>, tensor<4x7xf32>,
        tensor<2x3xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>) {
  // CHECK: ridge.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %0 = ridge.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  // CHECK: ridge.slice %{{.*}} starts [1, 2] sizes [1, 2] steps [1, -2] : tensor<2x3xf32> -> tensor<1x2xf32>
  %1 = ridge.slice %a starts [1, 2] sizes [1, 2] steps [1, -2] : tensor<2x3xf32> -> tensor<1x2xf32>
  // CHECK: ridge.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  %2 = ridge.gather %a, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<4x3xf32>
  // CHECK: ridge.gather_elements
  %3 = ridge.gather_elements %a, %j {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x3xf32>
  // CHECK: ridge.scatter_elements %{{.*}} {axis = 1 : i64, reduction = "add"}
  %4 = ridge.scatter_elements %a, %j, %a {axis = 1 : i64, reduction = "add"} : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: ridge.expand %{{.*}} : tensor<2x1xf32> -> tensor<4x2x1xf32>
  %5 = ridge.expand %b : tensor<2x1xf32> -> tensor<4x2x1xf32>
  // CHECK: ridge.tile %{{.*}}, [2, 2] : tensor<2x3xf32> -> tensor<4x6xf32>
  %6 = ridge.tile %a, [2, 2] : tensor<2x3xf32> -> tensor<4x6xf32>
  // CHECK: ridge.pad %{{.*}}, %{{.*}} pads [1, 2, 1, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x7xf32>
  %7 = ridge.pad %a, %s pads [1, 2, 1, 2] {mode = "constant"} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x7xf32>
  // CHECK: ridge.trilu %{{.*}} {k = 1 : i64, upper = false} : tensor<2x3xf32>
  %8 = ridge.trilu %a {k = 1 : i64, upper = false} : tensor<2x3xf32>
  // CHECK: ridge.eye {k = -1 : i64} : tensor<4x4xf32>
  %9 = ridge.eye {k = -1 : i64} : tensor<4x4xf32>
  // CHECK: ridge.one_hot %{{.*}}, %{{.*}} {axis = 0 : i64, depth = 3 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  %v = ridge.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %10 = ridge.one_hot %i, %v {axis = 0 : i64, depth = 3 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<3x4xf32>
  // CHECK: ridge.reverse_sequence %{{.*}}, %{{.*}} {batch_axis = 1 : i64, time_axis = 0 : i64}
  %11 = ridge.reverse_sequence %a, %l {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  %r = ridge.reshape %5 : tensor<4x2x1xf32> -> tensor<4x2xf32>
  %x = ridge.expand %a : tensor<2x3xf32> -> tensor<4x2x3xf32>
  %y = ridge.reshape %x : tensor<4x2x3xf32> -> tensor<4x6xf32>
  %z = ridge.slice %y starts [0, 0] sizes [4, 3] steps [1, 2] : tensor<4x6xf32> -> tensor<4x3xf32>
  return %0, %1, %2, %3, %4, %z, %6, %7, %8, %9, %10, %11
      : tensor<2x4xf32>, tensor<1x2xf32>, tensor<4x3xf32>, tensor<2x3xf32>,
        tensor<2x3xf32>, tensor<4x3xf32>, tensor<4x6xf32>, tensor<4x7xf32>,
        tensor<2x3xf32>, tensor<4x4xf32>, tensor<3x4xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @gather_nd_scatter_nd
func.func @gather_nd_scatter_nd(%d: tensor<2x3x4xf32>, %i: tensor<2x1xi64>,
                                %u: tensor<2x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: ridge.gather_nd %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %0 = ridge.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
  %t = ridge.constant dense<[[0, 1], [1, 2]]> : tensor<2x2xi64>
  // CHECK: ridge.scatter_nd %{{.*}} {reduction = "mul"}
  %1 = ridge.scatter_nd %d, %t, %u {reduction = "mul"} : (tensor<2x3x4xf32>, tensor<2x2xi64>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x3x4xf32>
}

// -----

// Folds: shape arithmetic on constants collapses while importing.

// FOLD-LABEL: func @fold_shape_chain
// FOLD: %[[C:.*]] = ridge.constant dense<[3, 4, 10]> : tensor<3xi64>
// FOLD: return %[[C]]
func.func @fold_shape_chain() -> tensor<3xi64> {
  %shape = ridge.constant dense<[2, 3, 4, 5]> : tensor<4xi64>
  %i1 = ridge.constant dense<1> : tensor<i64>
  %i2 = ridge.constant dense<[2]> : tensor<1xi64>
  %d1 = ridge.gather %shape, %i1 {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %u1 = ridge.reshape %d1 : tensor<i64> -> tensor<1xi64>
  %d2 = ridge.gather %shape, %i2 {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ten = ridge.constant dense<10> : tensor<1xi64>
  %cat = ridge.concat %u1, %d2, %ten {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  return %cat : tensor<3xi64>
}

// -----

// FOLD-LABEL: func @fold_slice_expand_tile
// FOLD-DAG: ridge.constant dense<[5, 3]> : tensor<2xi64>
// FOLD-DAG: ridge.constant dense<{{\[}}[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi64>
// FOLD-DAG: ridge.constant dense<[1, 2, 1, 2]> : tensor<4xi64>
// FOLD-DAG: ridge.constant dense<{{\[}}[1.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 1.000000e+00, 0.000000e+00]]> : tensor<2x3xf32>
func.func @fold_slice_expand_tile()
    -> (tensor<2xi64>, tensor<3x2xi64>, tensor<4xi64>, tensor<2x3xf32>) {
  %c = ridge.constant dense<[1, 2, 3, 4, 5]> : tensor<5xi64>
  %0 = ridge.slice %c starts [4] sizes [2] steps [-2] : tensor<5xi64> -> tensor<2xi64>
  %s = ridge.slice %c starts [0] sizes [2] steps [1] : tensor<5xi64> -> tensor<2xi64>
  %1 = ridge.expand %s : tensor<2xi64> -> tensor<3x2xi64>
  %2 = ridge.tile %s, [2] : tensor<2xi64> -> tensor<4xi64>
  %3 = ridge.eye {k = 0 : i64} : tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<3x2xi64>, tensor<4xi64>, tensor<2x3xf32>
}

// -----

// FOLD-LABEL: func @fold_gather_negative
// FOLD: ridge.constant dense<[5, 4]> : tensor<2xi64>
func.func @fold_gather_negative() -> tensor<2xi64> {
  %c = ridge.constant dense<[1, 2, 3, 4, 5]> : tensor<5xi64>
  %neg = ridge.constant dense<[-1, -2]> : tensor<2xi64>
  %0 = ridge.gather %c, %neg {axis = 0 : i64} : (tensor<5xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Identity slices, expands and tiles fold to their input.
// FOLD-LABEL: func @fold_identity
// FOLD-SAME: (%[[A:.*]]: tensor<2x3xf32>)
// FOLD: return %[[A]], %[[A]], %[[A]], %[[A]]
func.func @fold_identity(%a: tensor<2x3xf32>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ridge.slice %a starts [0, 0] sizes [2, 3] steps [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = ridge.expand %a : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = ridge.tile %a, [1, 1] : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = ridge.concat %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Verifier errors.

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{concat inputs differ in dimension 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{concat axis 2 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{dimension 0 reads indices 2..5 outside [0, 4)}}
  %0 = ridge.slice %a starts [2] sizes [2] steps [3] : tensor<4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_zero_step(%a: tensor<4xf32>) {
  // expected-error @+1 {{step of dimension 0 is zero}}
  %0 = ridge.slice %a starts [0] sizes [1] steps [0] : tensor<4xf32> -> tensor<1xf32>
  return
}

// -----

func.func @gather_axis(%a: tensor<4xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{gather axis 1 out of range for rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.gather %a, %i {axis = 1 : i64} : (tensor<4xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @gather_nd_tuple(%a: tensor<4xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+2 {{gather_nd index tuples of length 2 exceed data rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.gather_nd %a, %i : (tensor<4xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @scatter_reduction(%a: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) {
  // expected-error @+1 {{unknown reduction 'avg'}}
  %0 = ridge.scatter_elements %a, %i, %u {axis = 0 : i64, reduction = "avg"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @scatter_nd_updates(%a: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{updates shape 'tensor<2x4xf32>' should be indices.shape[:-1] ++ data.shape[k:]}}
  %0 = ridge.scatter_nd %a, %i, %u : (tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @expand_not_broadcast(%a: tensor<3xf32>) {
  // expected-error @+1 {{input 'tensor<3xf32>' does not broadcast to 'tensor<2x4xf32>'}}
  %0 = ridge.expand %a : tensor<3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @tile_repeats(%a: tensor<3xf32>) {
  // expected-error @+2 {{tile has 2 repeats for an input of rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.tile %a, [1, 2] : tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @pad_mode(%a: tensor<3xf32>) {
  // expected-error @+1 {{unknown mode 'mirror'}}
  %0 = ridge.pad %a pads [1, 1] {mode = "mirror"} : (tensor<3xf32>) -> tensor<5xf32>
  return
}

// -----

func.func @pad_negative(%a: tensor<3xf32>) {
  // expected-error @+2 {{pad amounts must be non-negative}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.pad %a pads [-1, 1] : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @trilu_rank(%a: tensor<3xf32>) {
  // expected-error @+1 {{needs rank >= 2}}
  %0 = ridge.trilu %a : tensor<3xf32>
  return
}

// -----

func.func @one_hot_values(%i: tensor<3xi64>, %v: tensor<3xf32>) {
  // expected-error @+2 {{one_hot values must be a 2-element vector}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = ridge.one_hot %i, %v {axis = 1 : i64, depth = 4 : i64} : (tensor<3xi64>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @reverse_sequence_axes(%a: tensor<2x3xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{batch_axis 0 and time_axis 0 must be different dimensions of rank 2}}
  %0 = ridge.reverse_sequence %a, %l {batch_axis = 0 : i64, time_axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @eye_rank() {
  // expected-error @+1 {{result must have rank 2}}
  %0 = ridge.eye : tensor<3xf32>
  return
}

// -----

func.func @tensor_scatter_axis(%past: tensor<2x4xf32>, %update: tensor<2x2xf32>) {
  // expected-error @+1 {{axis 0 must be a non-batch dim}}
  %0 = ridge.tensor_scatter %past, %update {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  return
}
