// RUN: ridge-opt %s --ridge-convert-graph-to-linalg --split-input-file -verify-diagnostics | FileCheck %s

// A contraction's ridge.precision rounds each f32 operand inside the
// contraction's body, right before the multiply: block argument ->
// arith.truncf -> arith.extf -> arith.mulf (the pattern the tensor-core code
// generator recognizes). Operands stay f32 in memory; the sum stays f32.
// CHECK-LABEL: func @matmul_bf16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x16xf32>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %[[SUM:.*]]: f32):
// CHECK-NEXT:   %[[LN:.*]] = arith.truncf %[[L]] : f32 to bf16
// CHECK-NEXT:   %[[LW:.*]] = arith.extf %[[LN]] : bf16 to f32
// CHECK-NEXT:   %[[RN:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:   %[[RW:.*]] = arith.extf %[[RN]] : bf16 to f32
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[LW]], %[[RW]] : f32
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[SUM]], %[[P]] : f32
// CHECK-NEXT:   linalg.yield %[[S]] : f32
func.func @matmul_bf16(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = ridge.matmul %a, %b {ridge.precision = "bf16"} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// Without the attribute nothing is rounded.
// CHECK-LABEL: func @matmul_fp32
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @matmul_fp32(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = ridge.matmul %a, %b : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// Gemm rounds A and B in the contraction; its alpha/beta/bias epilogue stays
// f32.
// CHECK-LABEL: func @gemm_fp16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   arith.truncf %[[A]] : f32 to f16
// CHECK-NEXT:   arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:   arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT:   arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT:   arith.mulf
// CHECK: linalg.generic
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @gemm_fp16(%a: tensor<32x64xf32>, %b: tensor<16x32xf32>, %c: tensor<16xf32>) -> tensor<64x16xf32> {
  %0 = ridge.gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 2.0 : f32, ridge.precision = "fp16"} : (tensor<32x64xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// A convolution rounds its (padded) input and its weight in the body.
// CHECK-LABEL: func @conv_bf16
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   arith.truncf %[[X]] : f32 to bf16
// CHECK-NEXT:   arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT:   arith.truncf %[[W]] : f32 to bf16
// CHECK-NEXT:   arith.extf %{{.*}} : bf16 to f32
// CHECK-NEXT:   arith.mulf
func.func @conv_bf16(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>, %bias: tensor<32xf32>) -> tensor<1x32x8x8xf32> {
  %0 = ridge.conv %x, %w, %bias {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>
  return %0 : tensor<1x32x8x8xf32>
}

// -----

// tf32 rounds the same way, through the builtin tf32 type (19 bits, f32's
// exponent): what the tensor-core lowering rounds with cvt.rna.tf32.f32, and
// what ridge-expand-tf32-rounding computes on the bits elsewhere.
// CHECK-LABEL: func @matmul_tf32
// CHECK: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[LN:.*]] = arith.truncf %[[L]] : f32 to tf32
// CHECK-NEXT:   arith.extf %[[LN]] : tf32 to f32
// CHECK-NEXT:   %[[RN:.*]] = arith.truncf %[[R]] : f32 to tf32
// CHECK-NEXT:   arith.extf %[[RN]] : tf32 to f32
// CHECK-NEXT:   arith.mulf
func.func @matmul_tf32(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = ridge.matmul %a, %b {ridge.precision = "tf32"} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// A rounded contraction's f32 weight (a ridge.constant) is stored in the
// narrow type, rounded here, at compile time, to nearest even as the body's
// arith.truncf would round it; the body only widens it. w = [1, 1 + 2^-8,
// 1 + 3 * 2^-8, f32 max]: 3F80, a tie kept even (3F80), a tie rounded up to
// even (3F82), and a carry into the exponent, to infinity (7F80).
// CHECK-LABEL: func @matmul_bf16_weight
// CHECK: %[[W:.*]] = arith.constant dense_resource<w.bf16> : tensor<2x2xbf16>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<64x2xf32>, tensor<2x2xbf16>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: f32, %[[R:.*]]: bf16, %[[SUM:.*]]: f32):
// CHECK-NEXT:   %[[LN:.*]] = arith.truncf %[[L]] : f32 to bf16
// CHECK-NEXT:   %[[LW:.*]] = arith.extf %[[LN]] : bf16 to f32
// CHECK-NEXT:   %[[RW:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT:   arith.mulf %[[LW]], %[[RW]] : f32
// CHECK: w.bf16: "0x02000000803F803F823F807F"
func.func @matmul_bf16_weight(%a: tensor<64x2xf32>) -> tensor<64x2xf32> {
  %w = ridge.constant dense_resource<w> : tensor<2x2xf32>
  %0 = ridge.matmul %a, %w {ridge.precision = "bf16"} : (tensor<64x2xf32>, tensor<2x2xf32>) -> tensor<64x2xf32>
  return %0 : tensor<64x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0080803F0080813FFFFF7F7F"
    }
  }
#-}

// -----

// Two contractions narrowing one weight share one narrow copy. Gemm's C
// (its bias, added in f32) is not multiplied and stays f32. fp16: 1 -> 3C00,
// 2^-20 (an f16 subnormal) -> 0010, 65520 (a tie above f16's max) -> inf
// (7C00), -0.1 -> AE66.
// CHECK-LABEL: func @gemm_fp16_shared_weight
// CHECK-DAG: arith.constant dense_resource<c> : tensor<2xf32>
// CHECK-DAG: arith.constant dense_resource<b.f16> : tensor<2x2xf16>
// CHECK: ^bb0(%{{.*}}: f32, %[[B:.*]]: f16, %{{.*}}: f32):
// CHECK: arith.extf %[[B]] : f16 to f32
// CHECK: arith.constant dense_resource<b.f16> : tensor<2x2xf16>
// CHECK: ^bb0(%{{.*}}: f32, %[[B2:.*]]: f16, %{{.*}}: f32):
// CHECK: arith.extf %[[B2]] : f16 to f32
// CHECK-NOT: b.f16_
// CHECK: b.f16: "0x02000000003C1000007C66AE"
func.func @gemm_fp16_shared_weight(%a: tensor<32x2xf32>, %x: tensor<32x2xf32>) -> (tensor<32x2xf32>, tensor<32x2xf32>) {
  %b = ridge.constant dense_resource<b> : tensor<2x2xf32>
  %c = ridge.constant dense_resource<c> : tensor<2xf32>
  %0 = ridge.gemm %a, %b, %c {trans_b = true, ridge.precision = "fp16"} : (tensor<32x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<32x2xf32>
  %1 = ridge.matmul %x, %b {ridge.precision = "fp16"} : (tensor<32x2xf32>, tensor<2x2xf32>) -> tensor<32x2xf32>
  return %0, %1 : tensor<32x2xf32>, tensor<32x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      b: "0x040000000000803F0000803500F07F47CDCCCCBD",
      c: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// A tf32 contraction's f32 weight stays f32 (tf32 has no storage type) but
// is stored rounded to tf32 at compile time, as cvt.rna.tf32.f32 rounds (to
// nearest, ties away from zero); the body's rounding of it is then exact.
// A MatMul's [K, N] weight (B) is stored K-major, [N, K], read through
// (n, k): the only layout in which sm_90a's wgmma reads tf32. A Gemm's B
// without trans_b is the same transposed weight (one copy); with trans_b
// it is K-major already and only rounded. w = [[1 + 2^-11, 1 + 2^-12],
// [-(1 + 2^-11), f32 max]]: a tie rounded away from zero (3F802000), one
// below a tie rounded down (3F800000), a negative tie rounded away
// (BF802000), and a carry into the exponent, to infinity (7F800000). A
// convolution's weight narrows to bf16 as a MatMul's does.
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func @weights_tf32_and_conv
// CHECK: %[[WT:.*]] = arith.constant dense_resource<w.tf32.nk> : tensor<2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[NK]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[WT]] : tensor<64x2xf32>, tensor<2x2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[W:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.truncf %[[W]] : f32 to tf32
// CHECK: %[[GT:.*]] = arith.constant dense_resource<w.tf32.nk> : tensor<2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[NK]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[GT]] : tensor<64x2xf32>, tensor<2x2xf32>)
// CHECK: %[[GR:.*]] = arith.constant dense_resource<w.tf32> : tensor<2x2xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[NK]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[GR]] : tensor<64x2xf32>, tensor<2x2xf32>)
// CHECK: arith.constant dense_resource<k.bf16> : tensor<2x1x1x1xbf16>
// CHECK: ^bb0(%{{.*}}: f32, %[[K:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.extf %[[K]] : bf16 to f32
// CHECK: w.tf32.nk: "0x040000000020803F002080BF0000803F0000807F"
// CHECK: w.tf32: "0x040000000020803F0000803F002080BF0000807F"
func.func @weights_tf32_and_conv(%a: tensor<64x2xf32>, %x: tensor<1x1x4x4xf32>) -> (tensor<64x2xf32>, tensor<64x2xf32>, tensor<64x2xf32>, tensor<1x2x4x4xf32>) {
  %w = ridge.constant dense_resource<w> : tensor<2x2xf32>
  %0 = ridge.matmul %a, %w {ridge.precision = "tf32"} : (tensor<64x2xf32>, tensor<2x2xf32>) -> tensor<64x2xf32>
  %1 = ridge.gemm %a, %w {ridge.precision = "tf32"} : (tensor<64x2xf32>, tensor<2x2xf32>) -> tensor<64x2xf32>
  %2 = ridge.gemm %a, %w {trans_b = true, ridge.precision = "tf32"} : (tensor<64x2xf32>, tensor<2x2xf32>) -> tensor<64x2xf32>
  %k = ridge.constant dense_resource<k> : tensor<2x1x1x1xf32>
  %3 = ridge.conv %x, %k {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %0, %1, %2, %3 : tensor<64x2xf32>, tensor<64x2xf32>, tensor<64x2xf32>, tensor<1x2x4x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000010803F0008803F001080BFFFFF7F7F",
      k: "0x040000000000803F00000040"
    }
  }
#-}

// -----

// fp8 (docs/precision.md): each operand is scaled by a power of two and
// rounded to e4m3; the product is scaled back. An activation gets a
// whole-tensor max |x| and a quantizing op; a constant weight is quantized at
// compile time into a resource, transposed so that k is innermost (wgmma
// reads e4m3 only K-major). w = [[1, 2], [3, 0.1], [-1.5, 0], [0.25, 0.5]]:
// amax 3 takes 2^7 (384 <= 448 < 768); transposed, 128 384 -192 32 | 256
// 12.8 0 64 round to 70 7C F4 60 | 78 55 00 68 (12.8 to 13).
// CHECK-LABEL: func @matmul_fp8_weight
// CHECK-SAME: (%[[A:.*]]: tensor<64x4xf32>)
// CHECK: %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[A]] : tensor<64x4xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:   math.absf
// CHECK:   arith.maximumf
// CHECK: %[[QA:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[AMAX]] : tensor<64x4xf32>, tensor<f32>) outs(%{{.*}} : tensor<64x4xf8E4M3FN>)
// CHECK:   arith.bitcast %{{.*}} : f32 to i32
// CHECK:   arith.mulf
// CHECK:   arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK:   arith.minimumf
// CHECK:   arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK: %[[W:.*]] = arith.constant dense_resource<w.e4m3> : tensor<2x4xf8E4M3FN>
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[WMAP:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[QA]], %[[W]] : tensor<64x4xf8E4M3FN>, tensor<2x4xf8E4M3FN>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: f8E4M3FN, %[[R:.*]]: f8E4M3FN, %[[S:.*]]: f32):
// CHECK-NEXT:   %[[LW:.*]] = arith.extf %[[L]] : f8E4M3FN to f32
// CHECK-NEXT:   %[[RW:.*]] = arith.extf %[[R]] : f8E4M3FN to f32
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[LW]], %[[RW]] : f32
// CHECK-NEXT:   arith.addf %[[S]], %[[P]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[AMAX]] : tensor<64x2xf32>, tensor<f32>)
// CHECK:   arith.subi
// CHECK:   arith.mulf
// CHECK:   %[[INV:.*]] = arith.constant 7.812500e-03 : f32
// CHECK:   arith.mulf %{{.*}}, %[[INV]] : f32
// CHECK: w.e4m3: "0x01000000707CF46078550068"
func.func @matmul_fp8_weight(%a: tensor<64x4xf32>) -> tensor<64x2xf32> {
  %w = ridge.constant dense_resource<w> : tensor<4x2xf32>
  %0 = ridge.matmul %a, %w {ridge.precision = "fp8"} : (tensor<64x4xf32>, tensor<4x2xf32>) -> tensor<64x2xf32>
  return %0 : tensor<64x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000004000004040CDCCCC3D0000C0BF000000000000803E0000003F"
    }
  }
#-}

// -----

// Two activations (Gemm, B not transposed): both get an amax; B is written
// k innermost by its quantizing op, which reads it transposed.
// CHECK-LABEL: func @gemm_fp8_activations
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<64x32xf8E4M3FN>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<f32>) outs(%{{.*}} : tensor<16x32xf8E4M3FN>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<64x32xf8E4M3FN>, tensor<16x32xf8E4M3FN>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64x16xf32>, tensor<f32>, tensor<f32>)
func.func @gemm_fp8_activations(%a: tensor<64x32xf32>, %b: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %0 = ridge.gemm %a, %b {ridge.precision = "fp8"} : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  return %0 : tensor<64x16xf32>
}

// -----

// A convolution has no fp8 form (the policy gives it bf16).
func.func @conv_fp8(%x: tensor<1x16x8x8xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32> {
  // expected-error @+2 {{'ridge.precision' = "fp8" is not supported by code generation yet (fp32, tf32, bf16 or fp16)}}
  // expected-error @+1 {{failed to legalize operation 'ridge.conv'}}
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "fp8"} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  return %0 : tensor<1x32x8x8xf32>
}
