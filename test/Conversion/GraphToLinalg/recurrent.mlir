// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file | FileCheck %s

// f16 GRU, reverse, runtime sequence lengths, reset gate before the
// recurrence (linear_before_reset = 0): the input projection of all steps is
// one contraction in f32 ahead of the loop; each step reads its row from the
// end, contracts H with the z/r rows of R, then (r * H) with the h rows, and
// one generic does the gate math, masking steps beyond an entry's length.
// CHECK-DAG: #[[XT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[LEN:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func @gru_reverse_lens
// CHECK: arith.extf
// CHECK: %[[XW:.*]] = linalg.generic {indexing_maps = [#[[XT]], #[[WT]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<4x2x6xf32>)
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<4x1x2x2xf32>, tensor<2x2x2xf32>)
// CHECK:   %[[H:.*]] = tensor.extract_slice %[[S]][0, 0, 0] [1, 2, 2]
// CHECK:   %[[T:.*]] = arith.subi %{{.*}}, %[[IV]] : index
// CHECK:   tensor.extract_slice %[[XW]][%[[T]], 0, 0] [1, 2, 6]
// CHECK:   linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<2x2xf32>, tensor<4x2xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:   math.exp
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:   %[[STEP:.*]]:2 = linalg.generic {{.*}}#[[LEN]]{{.*}} ins({{.*}}%arg3, %[[H]] : {{.*}}tensor<2xi32>, tensor<2x2xf32>)
// CHECK:     math.tanh
// CHECK:     arith.index_cast %{{.*}} : i32 to index
// CHECK:     arith.cmpi slt, %[[T]]
// CHECK:     arith.select
// CHECK:   %[[YN:.*]] = tensor.insert_slice %[[STEP]]#1 into %[[Y]][%[[T]], 0, 0, 0] [1, 1, 2, 2]
// CHECK:   %[[SN:.*]] = tensor.insert_slice %[[STEP]]#0 into %[[S]][0, 0, 0] [1, 2, 2]
// CHECK:   scf.yield %[[YN]], %[[SN]]
// CHECK: arith.truncf
// CHECK: arith.truncf
func.func @gru_reverse_lens(%x: tensor<4x2x3xf16>, %w: tensor<1x6x3xf16>, %r: tensor<1x6x2xf16>, %lens: tensor<2xi32>)
    -> (tensor<4x1x2x2xf16>, tensor<1x2x2xf16>) {
  %y, %yh = ridge.recurrent %x, %w, %r sequence_lens(%lens) {cell = "gru", direction = "reverse", hidden_size = 2 : i64,
      activations = ["sigmoid", "tanh"], activation_alpha = array<f32: 1.0, 1.0>,
      activation_beta = array<f32: 0.0, 0.0>}
      : (tensor<4x2x3xf16>, tensor<1x6x3xf16>, tensor<1x6x2xf16>, tensor<2xi32>)
      -> (tensor<4x1x2x2xf16>, tensor<1x2x2xf16>)
  return %y, %yh : tensor<4x1x2x2xf16>, tensor<1x2x2xf16>
}

// -----

// Bidirectional LSTM with peepholes and clip: one loop per direction, the
// second counting down; both write their half of Y, and Y_h / Y_c gather
// slot 0 / 1 of both final states with a generic (no strided copies).
// CHECK-DAG: #[[SLOT1:.*]] = affine_map<(d0, d1, d2) -> (1, d1, d2)>
// CHECK-LABEL: func @lstm_bidirectional
// CHECK: %[[F:.*]]:2 = scf.for
// CHECK:   arith.minimumf
// CHECK:   scf.yield
// CHECK: %[[B:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[F]]#0, %{{.*}} = %{{.*}})
// CHECK:   arith.subi
// CHECK:   tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}, 1, 0, 0] [1, 1, 3, 4]
// CHECK:   scf.yield
// CHECK: %[[YC:.*]] = linalg.generic {indexing_maps = [#[[SLOT1]], #[[SLOT1]], #{{.*}}]{{.*}} ins(%[[F]]#1, %[[B]]#1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// CHECK:   linalg.index 0
// CHECK:   arith.select
// CHECK: return %[[B]]#0, %{{.*}}, %[[YC]]
func.func @lstm_bidirectional(%x: tensor<5x3x2xf32>, %w: tensor<2x16x2xf32>, %r: tensor<2x16x4xf32>,
    %b: tensor<2x32xf32>, %p: tensor<2x12xf32>) -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %y, %yh, %yc = ridge.recurrent %x, %w, %r bias(%b) peepholes(%p) {
      cell = "lstm", direction = "bidirectional", hidden_size = 4 : i64,
      activations = ["sigmoid", "tanh", "tanh", "sigmoid", "tanh", "tanh"],
      activation_alpha = array<f32: 1.0, 1.0, 1.0, 1.0, 1.0, 1.0>,
      activation_beta = array<f32: 0.0, 0.0, 0.0, 0.0, 0.0, 0.0>, clip = 3.0 : f32}
      : (tensor<5x3x2xf32>, tensor<2x16x2xf32>, tensor<2x16x4xf32>, tensor<2x32xf32>, tensor<2x12xf32>)
      -> (tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
  return %y, %yh, %yc : tensor<5x2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
