// RUN: ridge-opt %s -split-input-file -ridge-match-rotary-embedding=remarks=true -verify-diagnostics | FileCheck %s

// LLaMA's rotary embedding as exported: x * cos + rotate_half(x) * sin,
// rotate_half(x) = concat(-x[.., 2:], x[.., :2]), the [1, 1, S, D] tables
// repeating their halves. One ridge.rotary_embedding (rotary dimension D)
// replaces the Add; its caches are the tables' first halves, [B, S, D/2],
// made at compile time as resources: cos (1, 0.5), (0.25, 2), sin (0, 3),
// (4, -1), little-endian f32 after the blob's alignment word.
// CHECK-LABEL: func @llama
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x2x4xf32>)
// CHECK-DAG: %[[COS:.*]] = ridge.constant dense_resource<rope_cos_cache> : tensor<1x2x2xf32>
// CHECK-DAG: %[[SIN:.*]] = ridge.constant dense_resource<rope_sin_cache> : tensor<1x2x2xf32>
// CHECK: %[[Y:.*]] = ridge.rotary_embedding %[[X]], %[[COS]], %[[SIN]] {rotary_embedding_dim = 4 : i64} : tensor<1x2x2x4xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>
// CHECK-NOT: ridge.add
// CHECK: return %[[Y]]
func.func @llama(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %cos = ridge.constant dense<[[[[1.0, 0.5, 1.0, 0.5], [0.25, 2.0, 0.25, 2.0]]]]> : tensor<1x1x2x4xf32>
  %sin = ridge.constant dense<[[[[0.0, 3.0, 0.0, 3.0], [4.0, -1.0, 4.0, -1.0]]]]> : tensor<1x1x2x4xf32>
  %c = ridge.mul %x, %cos : (tensor<1x2x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x2x2x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [1, 2, 2, 2] steps [1, 1, 1, 1] : tensor<1x2x2x4xf32> -> tensor<1x2x2x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [1, 2, 2, 2] steps [1, 1, 1, 1] : tensor<1x2x2x4xf32> -> tensor<1x2x2x2xf32>
  %n = ridge.neg %hi : tensor<1x2x2x2xf32>
  %r = ridge.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %s = ridge.mul %r, %sin : (tensor<1x2x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x2x2x4xf32>
  %y = ridge.add %c, %s : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// CHECK: dialect_resources
// CHECK: rope_cos_cache: "0x040000000000803F0000003F0000803E00000040"
// CHECK: rope_sin_cache: "0x04000000000000000000404000008040000080BF"

// -----

// The operands in the other orders (sin * rotate_half, cos * x, the Add's
// addends swapped), a batch of 2 under [S, D] tables: the caches repeat
// them per batch entry.
// CHECK-LABEL: func @operand_orders
// CHECK: ridge.constant dense_resource<rope_cos_cache> : tensor<2x2x2xf32>
// CHECK: ridge.constant dense_resource<rope_sin_cache> : tensor<2x2x2xf32>
// CHECK: %[[Y:.*]] = ridge.rotary_embedding %arg0
// CHECK: return %[[Y]]
func.func @operand_orders(%x: tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32> {
  %cos = ridge.constant dense<[[1.0, 0.5, 1.0, 0.5], [0.25, 2.0, 0.25, 2.0]]> : tensor<2x4xf32>
  %sin = ridge.constant dense<[[0.0, 3.0, 0.0, 3.0], [4.0, -1.0, 4.0, -1.0]]> : tensor<2x4xf32>
  %c = ridge.mul %cos, %x : (tensor<2x4xf32>, tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [2, 3, 2, 2] steps [1, 1, 1, 1] : tensor<2x3x2x4xf32> -> tensor<2x3x2x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [2, 3, 2, 2] steps [1, 1, 1, 1] : tensor<2x3x2x4xf32> -> tensor<2x3x2x2xf32>
  %n = ridge.neg %hi : tensor<2x3x2x2xf32>
  %r = ridge.concat %n, %lo {axis = 3 : i64} : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x2x4xf32>
  %s = ridge.mul %sin, %r : (tensor<2x4xf32>, tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32>
  %y = ridge.add %s, %c : (tensor<2x3x2x4xf32>, tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32>
  return %y : tensor<2x3x2x4xf32>
}

// -----

// Tables whose halves differ are not cat(freqs, freqs): no [B, S, D/2]
// cache describes them, and the chain stays.
// CHECK-LABEL: func @halves_differ
// CHECK-NOT: ridge.rotary_embedding
// CHECK: ridge.add
func.func @halves_differ(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %cos = ridge.constant dense<[[[[1.0, 0.5, 1.0, 0.75], [0.25, 2.0, 0.25, 2.0]]]]> : tensor<1x1x2x4xf32>
  %sin = ridge.constant dense<[[[[0.0, 3.0, 0.0, 3.0], [4.0, -1.0, 4.0, -1.0]]]]> : tensor<1x1x2x4xf32>
  %c = ridge.mul %x, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %n = ridge.neg %hi : tensor<1x1x2x2xf32>
  %r = ridge.concat %n, %lo {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %s = ridge.mul %r, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  // expected-remark @below {{rotary embedding left as exported: the cos table's halves differ (not cat(freqs, freqs))}}
  %y = ridge.add %c, %s : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}

// -----

// Tables computed at run time (here: arguments) cannot be compared.
func.func @runtime_tables(%x: tensor<1x1x2x4xf32>, %cos: tensor<1x1x2x4xf32>, %sin: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %c = ridge.mul %x, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %n = ridge.neg %hi : tensor<1x1x2x2xf32>
  %r = ridge.concat %n, %lo {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %s = ridge.mul %r, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  // expected-remark @below {{rotary embedding left as exported: the cos table is not an f32 constant}}
  %y = ridge.add %c, %s : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}

// -----

// A table per head ([1, H, S, D]) is not a RotaryEmbedding cache.
func.func @per_head_tables(%x: tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32> {
  %cos = ridge.constant dense<[[[[1.0, 0.5, 1.0, 0.5]], [[0.25, 2.0, 0.25, 2.0]]]]> : tensor<1x2x1x4xf32>
  %sin = ridge.constant dense<[[[[0.0, 3.0, 0.0, 3.0]], [[4.0, -1.0, 4.0, -1.0]]]]> : tensor<1x2x1x4xf32>
  %c = ridge.mul %x, %cos : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [1, 2, 1, 2] steps [1, 1, 1, 1] : tensor<1x2x1x4xf32> -> tensor<1x2x1x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [1, 2, 1, 2] steps [1, 1, 1, 1] : tensor<1x2x1x4xf32> -> tensor<1x2x1x2xf32>
  %n = ridge.neg %hi : tensor<1x2x1x2xf32>
  %r = ridge.concat %n, %lo {axis = 3 : i64} : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x4xf32>
  %s = ridge.mul %r, %sin : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  // expected-remark @below {{rotary embedding left as exported: the cos table differs between heads}}
  %y = ridge.add %c, %s : (tensor<1x2x1x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
  return %y : tensor<1x2x1x4xf32>
}

// -----

// Not a rotation: the halves are not swapped (concat(-lo, hi)).
// CHECK-LABEL: func @not_rotate_half
// CHECK-NOT: ridge.rotary_embedding
func.func @not_rotate_half(%x: tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32> {
  %cos = ridge.constant dense<[[[[1.0, 0.5, 1.0, 0.5], [0.25, 2.0, 0.25, 2.0]]]]> : tensor<1x1x2x4xf32>
  %sin = ridge.constant dense<[[[[0.0, 3.0, 0.0, 3.0], [4.0, -1.0, 4.0, -1.0]]]]> : tensor<1x1x2x4xf32>
  %c = ridge.mul %x, %cos : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  %lo = ridge.slice %x starts [0, 0, 0, 0] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %hi = ridge.slice %x starts [0, 0, 0, 2] sizes [1, 1, 2, 2] steps [1, 1, 1, 1] : tensor<1x1x2x4xf32> -> tensor<1x1x2x2xf32>
  %n = ridge.neg %lo : tensor<1x1x2x2xf32>
  %r = ridge.concat %n, %hi {axis = 3 : i64} : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32>
  %s = ridge.mul %r, %sin : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  // expected-remark @below {{rotary embedding left as exported: the concatenation is not rotate_half of the tensor times cos (concat(-x[.., D/2:], x[.., :D/2]))}}
  %y = ridge.add %c, %s : (tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>) -> tensor<1x1x2x4xf32>
  return %y : tensor<1x1x2x4xf32>
}
