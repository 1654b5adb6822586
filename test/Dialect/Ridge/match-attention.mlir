// RUN: ridge-opt %s -split-input-file -ridge-match-attention=remarks=true -canonicalize -verify-diagnostics | FileCheck %s

// GPT-2: Q and K^T from the head-split transposes, the scores divided by
// sqrt(d), the causal triangle applied with Where(mask, s, finfo.min). The
// constant triangle becomes is_causal; the K transpose [0,2,3,1] composed
// with the swap gives K as [B, H, S, D]. The op records the bytes the chain
// moves as exported, one kernel per node (the report's per-node plan).
// CHECK-LABEL: func @gpt2
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: tensor<1x4x2x8xf32>
// CHECK: %[[Q:[a-z0-9_]+]] = ridge.transpose %[[X]], [0, 2, 1, 3]
// CHECK: %[[K:[a-z0-9_]+]] = ridge.transpose %{{.*}}, [0, 2, 1, 3]
// CHECK: %[[R:[a-z0-9_]+]], %{{.*}} = ridge.attention %[[Q]], %[[K]], %[[V:[a-z0-9_]+]] {is_causal = true, ridge.per_node_bytes = 2072 : i64, scale = 1.250000e-01 : f32} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32> -> tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
// CHECK-NOT: ridge.softmax
// CHECK: return %[[R]]
func.func @gpt2(%x: tensor<1x4x2x8xf32>, %y: tensor<1x4x2x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %q = ridge.transpose %x, [0, 2, 1, 3] : tensor<1x4x2x8xf32> -> tensor<1x2x4x8xf32>
  %kt = ridge.transpose %y, [0, 2, 3, 1] : tensor<1x4x2x8xf32> -> tensor<1x2x8x4xf32>
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = ridge.constant dense<8.0> : tensor<f32>
  %d = ridge.div %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = ridge.constant dense<[[[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]]]> : tensor<1x1x4x4xi1>
  %min = ridge.constant dense<-3.40282347E+38> : tensor<f32>
  %w = ridge.select %m, %d, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %w {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// BERT: heads folded into the batch (3-D), Q divided before the MatMul and
// the scores multiplied after it, an additive padding mask [N, 1, Skv]. The
// operands become [1, N, S, D] views; the mask broadcasts as it is.
// CHECK-LABEL: func @bert
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<2x4x8xf32>, %[[KT:[a-z0-9_]+]]: tensor<2x8x4xf32>, %[[V:[a-z0-9_]+]]: tensor<2x4x8xf32>, %[[M:[a-z0-9_]+]]: tensor<2x1x4xf32>)
// CHECK-DAG: %[[K:[a-z0-9_]+]] = ridge.transpose %[[KT]], [0, 2, 1] : tensor<2x8x4xf32> -> tensor<2x4x8xf32>
// CHECK-DAG: %[[Q4:[a-z0-9_]+]] = ridge.reshape %[[Q]] : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-DAG: %[[K4:[a-z0-9_]+]] = ridge.reshape %[[K]] : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK-DAG: %[[V4:[a-z0-9_]+]] = ridge.reshape %[[V]] : tensor<2x4x8xf32> -> tensor<1x2x4x8xf32>
// CHECK: %[[R:[a-z0-9_]+]], %{{.*}} = ridge.attention %[[Q4]], %[[K4]], %[[V4]] mask(%[[M]] : tensor<2x1x4xf32>) {ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 2.500000e-01 : f32}
// CHECK: %[[R3:[a-z0-9_]+]] = ridge.reshape %[[R]] : tensor<1x2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: return %[[R3]]
func.func @bert(%q: tensor<2x4x8xf32>, %kt: tensor<2x8x4xf32>, %v: tensor<2x4x8xf32>, %m: tensor<2x1x4xf32>) -> tensor<2x4x8xf32> {
  %c = ridge.constant dense<2.0> : tensor<f32>
  %qs = ridge.div %q, %c : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
  %s = ridge.matmul %qs, %kt : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %h = ridge.constant dense<0.5> : tensor<f32>
  %sc = ridge.mul %s, %h : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %a = ridge.add %sc, %m : (tensor<2x4x4xf32>, tensor<2x1x4xf32>) -> tensor<2x4x4xf32>
  %p = ridge.softmax %a {axis = 2 : i64} : tensor<2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// ViT: no mask.
// CHECK-LABEL: func @vit
// CHECK: ridge.attention %{{.*}}, %{{.*}}, %{{.*}} {ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.250000e-01 : f32} : tensor<1x2x5x8xf32>
func.func @vit(%q: tensor<2x5x8xf32>, %kt: tensor<2x8x5xf32>, %v: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %c = ridge.constant dense<8.0> : tensor<f32>
  %qs = ridge.div %q, %c : (tensor<2x5x8xf32>, tensor<f32>) -> tensor<2x5x8xf32>
  %s = ridge.matmul %qs, %kt : (tensor<2x5x8xf32>, tensor<2x8x5xf32>) -> tensor<2x5x5xf32>
  %p = ridge.softmax %s {axis = 2 : i64} : tensor<2x5x5xf32>
  %o = ridge.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %o : tensor<2x5x8xf32>
}

// -----

// LLaMA: K and V heads repeated per query head (Reshape -> Expand ->
// Reshape: grouped-query attention with 2 query heads per key head), a
// float causal mask of zeros and -inf. The key/value heads go in as they
// are; the mask becomes is_causal.
// CHECK-LABEL: func @llama
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<1x4x3x8xf32>, %[[K:[a-z0-9_]+]]: tensor<1x2x3x8xf32>, %[[V:[a-z0-9_]+]]: tensor<1x2x3x8xf32>)
// CHECK: ridge.attention %[[Q]], %[[K]], %[[V]] {is_causal = true, ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 0.353553385 : f32} : tensor<1x4x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32> -> tensor<1x4x3x8xf32>, tensor<1x4x3x3xf32>
func.func @llama(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x3x8xf32>, %v: tensor<1x2x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %k5 = ridge.reshape %k : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ke = ridge.expand %k5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %kr = ridge.reshape %ke : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %v5 = ridge.reshape %v : tensor<1x2x3x8xf32> -> tensor<1x2x1x3x8xf32>
  %ve = ridge.expand %v5 : tensor<1x2x1x3x8xf32> -> tensor<1x2x2x3x8xf32>
  %vr = ridge.reshape %ve : tensor<1x2x2x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = ridge.transpose %kr, [0, 1, 3, 2] : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = ridge.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %c = ridge.constant dense<2.82842708> : tensor<f32>
  %d = ridge.div %s, %c : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x4x3x3xf32>
  %m = ridge.constant dense<[[[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]]]> : tensor<1x1x3x3xf32>
  %a = ridge.add %d, %m : (tensor<1x4x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %p = ridge.softmax %a {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = ridge.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// -----

// T5: a relative position bias and no scale.
// CHECK-LABEL: func @t5
// CHECK-SAME: %[[BIAS:[a-z0-9_]+]]: tensor<1x2x4x4xf32>
// CHECK: ridge.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[BIAS]] : tensor<1x2x4x4xf32>) {ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.000000e+00 : f32}
func.func @t5(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %bias: tensor<1x2x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %a = ridge.add %bias, %s : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %a {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// f16 scores with the softmax in f32 (Cast, Softmax, Cast back): the
// attention keeps f16 operands and computes its softmax in f32.
// CHECK-LABEL: func @cast_wrapped_softmax
// CHECK: ridge.attention {{.*}} {ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.250000e-01 : f32, softmax_type = f32} : tensor<1x2x4x8xf16>
// CHECK-NOT: ridge.cast
func.func @cast_wrapped_softmax(%q: tensor<1x2x4x8xf16>, %kt: tensor<1x2x8x4xf16>, %v: tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf16>, tensor<1x2x8x4xf16>) -> tensor<1x2x4x4xf16>
  %c = ridge.constant dense<8.0> : tensor<f16>
  %d = ridge.div %s, %c : (tensor<1x2x4x4xf16>, tensor<f16>) -> tensor<1x2x4x4xf16>
  %up = ridge.cast %d : tensor<1x2x4x4xf16> -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %up {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %down = ridge.cast %p : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf16>
  %o = ridge.matmul %down, %v : (tensor<1x2x4x4xf16>, tensor<1x2x4x8xf16>) -> tensor<1x2x4x8xf16>
  return %o : tensor<1x2x4x8xf16>
}

// -----

// The scale split over Q and K^T (each multiplied by d^-1/4).
// CHECK-LABEL: func @sqrt_scale_on_q_and_k
// CHECK: ridge.attention {{.*}} {ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 2.500000e-01 : f32}
// CHECK-NOT: ridge.mul
func.func @sqrt_scale_on_q_and_k(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = ridge.constant dense<0.5> : tensor<f32>
  %qs = ridge.mul %q, %c : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %ks = ridge.mul %c, %kt : (tensor<f32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %s = ridge.matmul %qs, %ks : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A decode step: the new token's K/V appended to the cache (Concat along
// the sequence), one query that sees every cached key: the all-true mask of
// one row is the causal triangle of the last query (offset 3).
// CHECK-LABEL: func @decode_with_cache
// CHECK: %[[K:[a-z0-9_]+]] = ridge.concat
// CHECK: %[[V:[a-z0-9_]+]] = ridge.concat
// CHECK: ridge.attention %{{.*}}, %[[K]], %[[V]] {is_causal = true, query_offset = 3 : i64, ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.250000e-01 : f32} : tensor<1x2x1x8xf32>, tensor<1x2x4x8xf32>
func.func @decode_with_cache(%q: tensor<1x2x1x8xf32>, %pk: tensor<1x2x3x8xf32>, %nk: tensor<1x2x1x8xf32>, %pv: tensor<1x2x3x8xf32>, %nv: tensor<1x2x1x8xf32>) -> tensor<1x2x1x8xf32> {
  %k = ridge.concat %pk, %nk {axis = 2 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x1x8xf32>) -> tensor<1x2x4x8xf32>
  %v = ridge.concat %pv, %nv {axis = 2 : i64} : (tensor<1x2x3x8xf32>, tensor<1x2x1x8xf32>) -> tensor<1x2x4x8xf32>
  %kt = ridge.transpose %k, [0, 1, 3, 2] : tensor<1x2x4x8xf32> -> tensor<1x2x8x4xf32>
  %s = ridge.matmul %q, %kt : (tensor<1x2x1x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32>
  %c = ridge.constant dense<0.125> : tensor<f32>
  %d = ridge.mul %s, %c : (tensor<1x2x1x4xf32>, tensor<f32>) -> tensor<1x2x1x4xf32>
  %m = ridge.constant dense<true> : tensor<1x1x1x4xi1>
  %min = ridge.constant dense<-3.40282347E+38> : tensor<f32>
  %w = ridge.select %m, %d, %min : (tensor<1x1x1x4xi1>, tensor<1x2x1x4xf32>, tensor<f32>) -> tensor<1x2x1x4xf32>
  %p = ridge.softmax %w {axis = 3 : i64} : tensor<1x2x1x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x1x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x1x8xf32>
  return %o : tensor<1x2x1x8xf32>
}

// -----

// A boolean mask that is not the causal triangle (an input) becomes the
// additive mask Where(m, 0, fill): the same probabilities, rows with every
// key masked included (uniform, as the exported graph computes them).
// CHECK-LABEL: func @padding_where
// CHECK-SAME: %[[M:[a-z0-9_]+]]: tensor<1x1x1x4xi1>
// CHECK-DAG: %[[ZERO:[a-z0-9_]+]] = ridge.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[FILL:[a-z0-9_]+]] = ridge.constant dense<-1.000000e+09> : tensor<f32>
// CHECK: %[[BIAS:[a-z0-9_]+]] = ridge.select %[[M]], %[[ZERO]], %[[FILL]]
// CHECK: ridge.attention {{.*}} mask(%[[BIAS]] : tensor<1x1x1x4xf32>)
func.func @padding_where(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x1x4xi1>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %fill = ridge.constant dense<-1.0e9> : tensor<f32>
  %w = ridge.select %m, %s, %fill : (tensor<1x1x1x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %w {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Almost attention, left alone with a remark: the scale multiplies the
// mask too.
// CHECK-LABEL: func @scale_after_mask
// CHECK-NOT: ridge.attention
func.func @scale_after_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %a = ridge.add %s, %m : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = ridge.constant dense<8.0> : tensor<f32>
  %d = ridge.div %a, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %d {axis = 3 : i64} : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not matched: the scale applies after the mask}}
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The scores are also a result of the function: they must stay.
// CHECK-LABEL: func @scores_read_twice
// CHECK-NOT: ridge.attention
func.func @scores_read_twice(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %s {axis = 3 : i64} : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not matched: the scores of 'ridge.matmul' are also read by another op}}
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %s : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// A softmax over another axis is no attention's.
// CHECK-LABEL: func @softmax_over_queries
// CHECK-NOT: ridge.attention
func.func @softmax_over_queries(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %s {axis = 2 : i64} : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not matched: the softmax is not over the last axis}}
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A plain MatMul chain gets no remark.
// CHECK-LABEL: func @not_attention
func.func @not_attention(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = ridge.matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// A causal mask built from position ranges (kpos <= qpos, as the KV-cache
// GPT export writes it) and one from Trilu are recognized without
// materializing them.
// CHECK-LABEL: func @causal_from_compare
// CHECK: ridge.attention {{.*}} {is_causal = true, ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.000000e+00 : f32}
// CHECK: ridge.attention {{.*}} {is_causal = true, ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.000000e+00 : f32}
func.func @causal_from_compare(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %kpos = ridge.constant dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>
  %qpos = ridge.constant dense<[[0], [1], [2], [3]]> : tensor<4x1xi64>
  %m = ridge.less_equal %kpos, %qpos : (tensor<1x4xi64>, tensor<4x1xi64>) -> tensor<4x4xi1>
  %min = ridge.constant dense<-3.40282347E+38> : tensor<f32>
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %w = ridge.select %m, %s, %min : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %w {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %ones = ridge.constant dense<true> : tensor<4x4xi1>
  %tri = ridge.trilu %ones {upper = false} : tensor<4x4xi1>
  %s2 = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %w2 = ridge.select %tri, %s2, %min : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p2 = ridge.softmax %w2 {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o2 = ridge.matmul %p2, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o, %o2 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// Gemma 2: the scaled scores soft-capped, cap * tanh(s / cap), before the
// causal mask.
// CHECK-LABEL: func @softcap
// CHECK: ridge.attention {{.*}} {is_causal = true, ridge.per_node_bytes = {{[0-9]+}} : i64, scale = 1.250000e-01 : f32, softcap = 5.000000e+01 : f32}
// CHECK-NOT: ridge.tanh
func.func @softcap(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = ridge.constant dense<0.125> : tensor<f32>
  %d = ridge.mul %s, %c : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %cap = ridge.constant dense<50.0> : tensor<f32>
  %x = ridge.div %d, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %t = ridge.tanh %x : tensor<1x2x4x4xf32>
  %y = ridge.mul %t, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %m = ridge.constant dense<[[[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]]]> : tensor<1x1x4x4xf32>
  %a = ridge.add %y, %m : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %a {axis = 3 : i64} : tensor<1x2x4x4xf32>
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Multi-query attention: one key/value head tiled for every query head.
// CHECK-LABEL: func @mqa_tile
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: tensor<1x4x3x8xf32>, %[[K:[a-z0-9_]+]]: tensor<1x1x3x8xf32>, %[[V:[a-z0-9_]+]]: tensor<1x1x3x8xf32>)
// CHECK: ridge.attention %[[Q]], %[[K]], %[[V]] {{.*}} : tensor<1x4x3x8xf32>, tensor<1x1x3x8xf32>, tensor<1x1x3x8xf32>
func.func @mqa_tile(%q: tensor<1x4x3x8xf32>, %k: tensor<1x1x3x8xf32>, %v: tensor<1x1x3x8xf32>) -> tensor<1x4x3x8xf32> {
  %kr = ridge.tile %k, [1, 4, 1, 1] : tensor<1x1x3x8xf32> -> tensor<1x4x3x8xf32>
  %vr = ridge.tile %v, [1, 4, 1, 1] : tensor<1x1x3x8xf32> -> tensor<1x4x3x8xf32>
  %kt = ridge.transpose %kr, [0, 1, 3, 2] : tensor<1x4x3x8xf32> -> tensor<1x4x8x3xf32>
  %s = ridge.matmul %q, %kt : (tensor<1x4x3x8xf32>, tensor<1x4x8x3xf32>) -> tensor<1x4x3x3xf32>
  %p = ridge.softmax %s {axis = 3 : i64} : tensor<1x4x3x3xf32>
  %o = ridge.matmul %p, %vr : (tensor<1x4x3x3xf32>, tensor<1x4x3x8xf32>) -> tensor<1x4x3x8xf32>
  return %o : tensor<1x4x3x8xf32>
}

// -----

// A softcap under the mask caps the bias too: left alone.
// CHECK-LABEL: func @softcap_after_mask
// CHECK-NOT: ridge.attention
func.func @softcap_after_mask(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<1x1x4x4xf32>) -> tensor<1x2x4x8xf32> {
  %s = ridge.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %a = ridge.add %s, %m : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
  %cap = ridge.constant dense<50.0> : tensor<f32>
  %x = ridge.div %a, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %t = ridge.tanh %x : tensor<1x2x4x4xf32>
  %y = ridge.mul %t, %cap : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = ridge.softmax %y {axis = 3 : i64} : tensor<1x2x4x4xf32>
  // expected-remark @+1 {{attention not matched: the softcap applies after the mask}}
  %o = ridge.matmul %p, %v : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
