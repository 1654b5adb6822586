// RUN: ridge-opt %s --split-input-file -ridge-convert-graph-to-linalg | FileCheck %s

// An attention whose scores nothing reads is lowered in its online form: one
// scf.forall iteration per query row (b, h, i), the query row scaled once by
// scale * log2(e), one pass over the keys the masks allow with a running max,
// a running sum and an f32 accumulator row (two exp2 per key), then acc / l.
// Short rows (8 + 6 elements here) are scalars carried by the key loop, which
// a GPU thread keeps in registers. The causal limit bounds the key loop; no
// tensor holds the 3x5 scores.
// CHECK-LABEL: func @causal_gqa
// CHECK-NOT: tensor<1x4x3x5xf32>
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (1, 4, 3)
// CHECK:   %[[KVH:.*]] = arith.divui %[[H]], %c2
// CHECK:   %[[Q0:.*]] = tensor.extract %{{.*}}[%[[B]], %[[H]], %[[I]], %c0{{.*}}] : tensor<1x4x3x8xf32>
// CHECK:   arith.mulf %[[Q0]], %cst{{.*}} : f32
// CHECK:   %[[POS:.*]] = arith.addi %[[I]], %c2
// CHECK:   %[[END:.*]] = arith.addi %[[POS]], %c1
// CHECK:   %[[UPPER:.*]] = arith.minsi %c5{{.*}}, %[[END]]
// CHECK:   %[[STATE:.*]]:8 = scf.for %[[J:.*]] = %c0{{.*}} to %[[UPPER]] step %c1{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:     tensor.extract %{{.*}}[%[[B]], %[[KVH]], %[[J]], %c0{{.*}}] : tensor<1x2x5x8xf32>
// CHECK:     math.fma
// CHECK:     arith.maximumf
// CHECK:     math.exp2
// CHECK:     math.exp2
// CHECK:     tensor.extract %{{.*}}[%[[B]], %[[KVH]], %[[J]], %c0{{.*}}] : tensor<1x2x5x6xf32>
// CHECK:     math.fma
// CHECK:   arith.divf
// CHECK:   %[[ROW:.*]] = tensor.from_elements {{.*}} : tensor<6xf32>
// CHECK:   tensor.parallel_insert_slice %[[ROW]] into %{{.*}}[%[[B]], %[[H]], %[[I]], 0] [1, 1, 1, 6]
func.func @causal_gqa(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x6xf32>) -> tensor<1x4x3x6xf32> {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32, is_causal = true, query_offset = 2 : i64} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32> -> tensor<1x4x3x6xf32>, tensor<1x4x3x5xf32>
  return %0#0 : tensor<1x4x3x6xf32>
}

// -----

// A float mask (BERT's padding mask, broadcast from [H, 1, Skv]) is read per
// key and added in the log2 domain; a softcap keeps log2(e) out of the query
// row and multiplies it into the cap.
// CHECK-LABEL: func @masks
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (1, 4, 3)
// CHECK:   arith.constant 5.000000e-01 : f32
// CHECK:   scf.for %[[J:.*]] = %c0{{.*}} to %c5
// CHECK:     math.tanh
// CHECK:     arith.mulf %cst{{.*}}, %{{.*}} : f32
// CHECK:     %[[BIAS:.*]] = tensor.extract %{{.*}}[%[[H]], %c0{{.*}}, %[[J]]] : tensor<4x1x5xf32>
// CHECK:     math.fma %[[BIAS]], %cst{{.*}}, %{{.*}} : f32
func.func @masks(%q: tensor<1x4x3x8xf32>, %k: tensor<1x4x5x8xf32>, %v: tensor<1x4x5x6xf32>, %m: tensor<4x1x5xf32>) -> tensor<1x4x3x6xf32> {
  %0:2 = ridge.attention %q, %k, %v mask(%m : tensor<4x1x5xf32>) {scale = 0.5 : f32, softcap = 2.0 : f32} : tensor<1x4x3x8xf32>, tensor<1x4x5x8xf32>, tensor<1x4x5x6xf32> -> tensor<1x4x3x6xf32>, tensor<1x4x3x5xf32>
  return %0#0 : tensor<1x4x3x6xf32>
}

// -----

// Sliding windows and the valid key length of each batch row bound the key
// loop from both sides: [max(0, pos - left), min(Skv, len[b], pos + 1 +
// right)), with pos = len[b] - Sq + i; a row with no allowed key runs it
// zero times and writes 0.
// CHECK-LABEL: func @windows
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[I:.*]]) in (2, 1, 3)
// CHECK:   %[[LEN64:.*]] = tensor.extract %{{.*}}[%[[B]]] : tensor<2xi64>
// CHECK:   %[[LEN:.*]] = arith.index_cast %[[LEN64]]
// CHECK:   arith.minsi %c5{{.*}}, %[[LEN]]
// CHECK:   %[[UPPER:.*]] = arith.minsi
// CHECK:   %[[LOWER:.*]] = arith.maxsi %c0
// CHECK:   scf.for %{{.*}} = %[[LOWER]] to %[[UPPER]]
func.func @windows(%q: tensor<2x1x3x4xf32>, %k: tensor<2x1x5x4xf32>, %v: tensor<2x1x5x4xf32>, %lens: tensor<2xi64>) -> tensor<2x1x3x4xf32> {
  %0:2 = ridge.attention %q, %k, %v nonpad(%lens : tensor<2xi64>) {scale = 0.5 : f32, left_window = 1 : i64, right_window = 0 : i64} : tensor<2x1x3x4xf32>, tensor<2x1x5x4xf32>, tensor<2x1x5x4xf32> -> tensor<2x1x3x4xf32>, tensor<2x1x3x5xf32>
  return %0#0 : tensor<2x1x3x4xf32>
}

// -----

// Rows longer than registers hold (96 + 96 elements) are private buffers
// walked by loops: the query row (every element written, so it starts
// empty) and the zeroed accumulator row carried by the key loop.
// CHECK-LABEL: func @long_rows
// CHECK: scf.forall
// CHECK:   %[[QROW:[a-z0-9_]+]] = scf.for {{.*}} -> (tensor<96xf32>) {
// CHECK-NEXT: tensor.extract %{{.*}} : tensor<1x1x2x96xf32>
// CHECK:   %[[ACC:[a-z0-9_]+]] = scf.for {{.*}} -> (tensor<96xf32>) {
// CHECK-NEXT: tensor.insert %cst{{.*}} : tensor<96xf32>
// CHECK:   scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[ACC]]) -> (f32, f32, tensor<96xf32>)
// CHECK:     scf.for {{.*}} -> (f32)
// CHECK:       tensor.extract %[[QROW]]
// CHECK:     scf.for {{.*}} -> (tensor<96xf32>)
func.func @long_rows(%q: tensor<1x1x2x96xf32>, %k: tensor<1x1x3x96xf32>, %v: tensor<1x1x3x96xf32>) -> tensor<1x1x2x96xf32> {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.1 : f32} : tensor<1x1x2x96xf32>, tensor<1x1x3x96xf32>, tensor<1x1x3x96xf32> -> tensor<1x1x2x96xf32>, tensor<1x1x2x3xf32>
  return %0#0 : tensor<1x1x2x96xf32>
}

// -----

// f16 attention (a half-precision export) takes the online form too: the
// operands read as f16 and extended, the products rounded to f16 (round_to
// = f16: keys in tiles of 64, P rounded before it multiplies V), O rounded
// to f16 once, as its row is stored.
// CHECK-LABEL: func @f16_online
// CHECK: scf.forall {{.*}} -> (tensor<1x1x2x4xf16>)
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: scf.for {{.*}} step %c64
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: tensor.from_elements {{.*}} : tensor<4xf16>
// CHECK: round_to = f16
func.func @f16_online(%q: tensor<1x1x2x4xf16>, %k: tensor<1x1x3x4xf16>, %v: tensor<1x1x3x4xf16>) -> tensor<1x1x2x4xf16> {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<1x1x2x4xf16>, tensor<1x1x3x4xf16>, tensor<1x1x3x4xf16> -> tensor<1x1x2x4xf16>, tensor<1x1x2x3xf16>
  return %0#0 : tensor<1x1x2x4xf16>
}

// -----

// An f16 attention whose scores are returned keeps the reference lowering,
// with ONNX's roundings.
// CHECK-LABEL: func @f16_scores_returned
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
func.func @f16_scores_returned(%q: tensor<1x1x2x4xf16>, %k: tensor<1x1x3x4xf16>, %v: tensor<1x1x3x4xf16>) -> (tensor<1x1x2x4xf16>, tensor<1x1x2x3xf16>) {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<1x1x2x4xf16>, tensor<1x1x3x4xf16>, tensor<1x1x3x4xf16> -> tensor<1x1x2x4xf16>, tensor<1x1x2x3xf16>
  return %0#0, %0#1 : tensor<1x1x2x4xf16>, tensor<1x1x2x3xf16>
}
