// RUN: ridge-opt %s --split-input-file -ridge-convert-graph-to-linalg | FileCheck %s

// Reference attention, for an op whose scores are read (the qk output;
// attention-online.mlir has the form without): QK^T contraction (key heads
// shared by query head groups through floordiv), scale/softcap/bias, row
// max, exp-sum, guarded probabilities, PV contraction.
// CHECK-DAG: #[[KMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d3, d4)>
// CHECK-LABEL: func @attention
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KMAP]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK:   math.tanh
// CHECK:   arith.select
// CHECK:   linalg.index 2
// CHECK:   arith.cmpi sle
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:   arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:   math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]
// CHECK:   arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
func.func @attention(%q: tensor<1x4x3x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x5x6xf32>, %m: tensor<3x5xi1>) -> (tensor<1x4x3x6xf32>, tensor<1x4x3x5xf32>) {
  %0:2 = ridge.attention %q, %k, %v mask(%m : tensor<3x5xi1>) {scale = 0.5 : f32, is_causal = true, query_offset = 2 : i64, softcap = 2.0 : f32} : tensor<1x4x3x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x6xf32> -> tensor<1x4x3x6xf32>, tensor<1x4x3x5xf32>
  return %0#0, %0#1 : tensor<1x4x3x6xf32>, tensor<1x4x3x5xf32>
}

// -----

// f16 attention accumulates in f32 and truncates the probabilities and the
// result.
// CHECK-LABEL: func @attention_f16
// CHECK: arith.extf
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: arith.truncf {{.*}} : f32 to f16
func.func @attention_f16(%q: tensor<1x1x2x4xf16>, %k: tensor<1x1x3x4xf16>, %v: tensor<1x1x3x4xf16>) -> tensor<1x1x2x4xf16> {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.5 : f32} : tensor<1x1x2x4xf16>, tensor<1x1x3x4xf16>, tensor<1x1x3x4xf16> -> tensor<1x1x2x4xf16>, tensor<1x1x2x3xf16>
  return %0#0 : tensor<1x1x2x4xf16>
}

// -----

// Sum of squares over the normalized dims, 1 / sqrt(mean + eps), scale.
// CHECK-LABEL: func @rms_norm
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction"]
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:   arith.mulf
// CHECK:   arith.mulf
func.func @rms_norm(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = ridge.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// The erf form as defined; the tanh form as x sigmoid(2u) =
// x / (1 + exp(x (c1 + c2 x^2))), c1 = -2 sqrt(2 / pi), c2 = 0.044715 c1:
// the same function without tanh's cancellation in 1 + tanh(u) < 0.
// CHECK-LABEL: func @gelu
// CHECK: math.erf
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SQUARE:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: arith.constant -1.59576917 : f32
// CHECK-NEXT: arith.constant -0.0713548139 : f32
// CHECK-NEXT: %[[C2X2:.*]] = arith.mulf %{{.*}}, %[[SQUARE]] : f32
// CHECK-NEXT: %[[FACTOR:.*]] = arith.addf %{{.*}}, %[[C2X2]] : f32
// CHECK-NEXT: %[[ARG:.*]] = arith.mulf %[[X]], %[[FACTOR]] : f32
// CHECK-NEXT: %[[EXP:.*]] = math.exp %[[ARG]] : f32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[DENOM:.*]] = arith.addf %{{.*}}, %[[EXP]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.divf %[[X]], %[[DENOM]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK-NOT: math.tanh
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = ridge.gelu %x : tensor<4xf32>
  %1 = ridge.gelu %x {approximate = "tanh"} : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Each element reads its pair partner and the cache entry (through the
// position table) with tensor.extract.
// CHECK-LABEL: func @rotary
// CHECK: linalg.generic
// CHECK:   tensor.extract %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<1x2x3x8xf32>
// CHECK:   tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<1x3xi64>
// CHECK:   tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<10x2xf32>
func.func @rotary(%x: tensor<1x2x3x8xf32>, %c: tensor<10x2xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  %0 = ridge.rotary_embedding %x, %c, %c positions(%p : tensor<1x3xi64>) {rotary_embedding_dim = 4 : i64} : tensor<1x2x3x8xf32>, tensor<10x2xf32>, tensor<10x2xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// A loop over time carries the f32 state (updated in place) and the output,
// whose time-t slice each step fills.
// CHECK-LABEL: func @linear_attention
// CHECK: scf.for %[[T:.*]] = {{.*}} iter_args(
// CHECK:   math.exp
// CHECK:   tensor.extract_slice %{{.*}}[0, 0, %[[T]], 0] [2, 4, 1, 6] [1, 1, 1, 1]
// CHECK:   tensor.insert_slice
// CHECK:   scf.yield
func.func @linear_attention(%q: tensor<2x4x3x8xf32>, %k: tensor<2x2x3x8xf32>, %v: tensor<2x2x3x6xf32>, %s: tensor<2x2x8x6xf32>, %g: tensor<2x2x3x8xf32>) -> tensor<2x4x3x6xf32> {
  %0:2 = ridge.linear_attention %q, %k, %v, %s decay(%g : tensor<2x2x3x8xf32>) {scale = 0.5 : f32} : tensor<2x4x3x8xf32>, tensor<2x2x3x8xf32>, tensor<2x2x3x6xf32>, tensor<2x2x8x6xf32> -> tensor<2x4x3x6xf32>, tensor<2x2x8x6xf32>
  return %0#0 : tensor<2x4x3x6xf32>
}
