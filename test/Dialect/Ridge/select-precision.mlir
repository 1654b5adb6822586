// RUN: ridge-opt %s -split-input-file -ridge-select-precision | FileCheck %s --check-prefixes=CHECK,DEFAULT
// RUN: ridge-opt %s -split-input-file -ridge-select-precision=precision=fp32 | FileCheck %s --check-prefix=FP32
// RUN: ridge-opt %s -split-input-file -ridge-attach-target=chip=cpu -ridge-select-precision | FileCheck %s --check-prefix=FP32
// RUN: ridge-opt %s -split-input-file -ridge-attach-target="chip=cpu precision=bf16" -ridge-select-precision | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-attach-target=chip=sm_80 -ridge-select-precision | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-select-precision=precision=fp16 | FileCheck %s --check-prefix=FP16
// RUN: not ridge-opt %s -split-input-file -ridge-attach-target=chip=sm_80 -ridge-select-precision=precision=fp8 2>&1 | FileCheck %s --check-prefix=NO-FP8
// RUN: ridge-opt %s -split-input-file -ridge-select-precision=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: ridge-opt %s -split-input-file -ridge-select-precision=precision=fp8 | FileCheck %s --check-prefix=FP8

// The default target (sm_90a, the H100: fp32 ridge point 67 TFLOP/s / 3.35
// TB/s = 20 FLOP/B) computes bf16. A CPU target computes fp32 unless bf16 is
// asked for, then rounds exactly where the GPU does; the A100's ridge point
// (9.6 FLOP/B) decides the same for every case here.

// A 1024^3 matmul (170 FLOP/B) is compute-bound on the fp32 roofline.
// CHECK-LABEL: func @big_matmul
// CHECK: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "bf16"}
// FP32-LABEL: func @big_matmul
// FP32-NOT: ridge.precision
// FP16-LABEL: func @big_matmul
// FP16: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "fp16"}
func.func @big_matmul(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = ridge.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A node test's 3x4x5 matmul is smaller than one tensor-core tile.
// CHECK-LABEL: func @tiny_matmul
// CHECK-NOT: ridge.precision
func.func @tiny_matmul(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = ridge.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A sequence-first projection ([L, 1, E] x [E, F], as BERT's exported
// in-projection): the weight is shared by the batch, so the batch is part of
// M (512, not 1) and the product is one compute-bound GEMM (70 FLOP/B).
// CHECK-LABEL: func @sequence_first_projection
// CHECK: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "bf16"}
func.func @sequence_first_projection(%x: tensor<512x1x256xf32>, %w: tensor<256x768xf32>) -> tensor<512x1x768xf32> {
  %0 = ridge.matmul %x, %w : (tensor<512x1x256xf32>, tensor<256x768xf32>) -> tensor<512x1x768xf32>
  return %0 : tensor<512x1x768xf32>
}

// -----

// f16 operands keep their type (and an integer contraction its own).
// CHECK-LABEL: func @f16_matmul
// CHECK-NOT: ridge.precision
// FP16-LABEL: func @f16_matmul
// FP16-NOT: ridge.precision
// FP16: return
func.func @f16_matmul(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>, %c: tensor<1024x1024xi32>) -> (tensor<1024x1024xf16>, tensor<1024x1024xi32>) {
  %0 = ridge.matmul %a, %b : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
  %1 = ridge.matmul %c, %c : (tensor<1024x1024xi32>, tensor<1024x1024xi32>) -> tensor<1024x1024xi32>
  return %0, %1 : tensor<1024x1024xf16>, tensor<1024x1024xi32>
}

// -----

// A decode step (one token: M = 1) is a GEMV.
// CHECK-LABEL: func @decode_matmul
// CHECK-NOT: ridge.precision
func.func @decode_matmul(%a: tensor<1x256xf32>, %b: tensor<256x1024xf32>) -> tensor<1x1024xf32> {
  %0 = ridge.matmul %a, %b : (tensor<1x256xf32>, tensor<256x1024xf32>) -> tensor<1x1024xf32>
  return %0 : tensor<1x1024xf32>
}

// -----

// 16 rows against a 4096x4096 weight: every dim fills a tile, but the weight's
// bytes dominate (7.9 FLOP/B): memory-bound, so fp32.
// CHECK-LABEL: func @skinny_matmul
// CHECK-NOT: ridge.precision
func.func @skinny_matmul(%a: tensor<16x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<16x4096xf32> {
  %0 = ridge.matmul %a, %b : (tensor<16x4096xf32>, tensor<4096x4096xf32>) -> tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}

// -----

// The same shape against a constant weight (16 x 4096 x 4096, 7.9
// FLOP/B): memory-bound, but rounded to bf16 or fp16 the weight is stored
// narrow (67 MB -> 34 MB), which shortens the memory term: rounded
// (NarrowedWeights). So is a decode step's 1 x 4096 x 4096 by that weight,
// under a tile but streamed by the bandwidth path. tf32 has no storage type
// and fp8 credits no weight bytes: fp32. A product of two activations of
// that shape stays fp32, and so does a weight whose bytes take under a
// microsecond at full bandwidth (4 x 64 x 128: latency sets its time), or
// one that saves under a fifth of the bytes (2048 x 512 by 512 x 8).
// CHECK-LABEL: func @skinny_matmul_by_weight
// CHECK: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "bf16"}
// CHECK: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "bf16"}
// CHECK: ridge.matmul %{{.*}}, %{{.*}} :
// CHECK: ridge.matmul %{{.*}}, %{{.*}} :
// CHECK: ridge.matmul %{{.*}}, %{{.*}} :
// FP16-LABEL: func @skinny_matmul_by_weight
// FP16: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "fp16"}
// FP16: ridge.matmul %{{.*}}, %{{.*}} {ridge.precision = "fp16"}
// TF32-LABEL: func @skinny_matmul_by_weight
// TF32-NOT: ridge.precision
// TF32: return
// FP8-LABEL: func @skinny_matmul_by_weight
// FP8-NOT: ridge.precision
// FP8: return
// FP32-LABEL: func @skinny_matmul_by_weight
// FP32-NOT: ridge.precision
// FP32: return
func.func @skinny_matmul_by_weight(%a: tensor<16x4096xf32>, %b: tensor<4096x4096xf32>, %x: tensor<1x4096xf32>, %s: tensor<4x64xf32>, %t: tensor<2048x512xf32>) -> (tensor<16x4096xf32>, tensor<1x4096xf32>, tensor<16x4096xf32>, tensor<4x128xf32>, tensor<2048x8xf32>) {
  %w = ridge.constant dense<0.5> : tensor<4096x4096xf32>
  %0 = ridge.matmul %a, %w : (tensor<16x4096xf32>, tensor<4096x4096xf32>) -> tensor<16x4096xf32>
  %1 = ridge.matmul %x, %w : (tensor<1x4096xf32>, tensor<4096x4096xf32>) -> tensor<1x4096xf32>
  %2 = ridge.matmul %a, %b : (tensor<16x4096xf32>, tensor<4096x4096xf32>) -> tensor<16x4096xf32>
  %small = ridge.constant dense<0.5> : tensor<64x128xf32>
  %3 = ridge.matmul %s, %small : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %router = ridge.constant dense<0.5> : tensor<512x8xf32>
  %4 = ridge.matmul %t, %router : (tensor<2048x512xf32>, tensor<512x8xf32>) -> tensor<2048x8xf32>
  return %0, %1, %2, %3, %4 : tensor<16x4096xf32>, tensor<1x4096xf32>, tensor<16x4096xf32>, tensor<4x128xf32>, tensor<2048x8xf32>
}

// -----

// Attention scores (batch 1x4 of 256x128 by 128x256: 32 FLOP/B), a Gemm with
// transB and a 3x3 convolution (its implicit GEMM: M = 64 channels, N = 3136
// pixels, K = 576) are compute-bound. A depthwise convolution (M = 1 output
// channel per group) is not for tensor cores.
// CHECK-LABEL: func @other_contractions
// CHECK: ridge.matmul {{.*}} {ridge.precision = "bf16"}
// CHECK: ridge.gemm {{.*}}ridge.precision = "bf16"
// CHECK: ridge.conv {{.*}} ridge.precision = "bf16"
// CHECK: ridge.conv
// CHECK-NOT: ridge.precision
// CHECK: return
// FP32-LABEL: func @other_contractions
// FP32-NOT: ridge.precision
func.func @other_contractions(%q: tensor<1x4x256x128xf32>, %k: tensor<1x4x128x256xf32>, %a: tensor<256x512xf32>, %b: tensor<1024x512xf32>, %c: tensor<1024xf32>, %x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %dw: tensor<64x1x3x3xf32>) -> (tensor<1x4x256x256xf32>, tensor<256x1024xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) {
  %0 = ridge.matmul %q, %k : (tensor<1x4x256x128xf32>, tensor<1x4x128x256xf32>) -> tensor<1x4x256x256xf32>
  %1 = ridge.gemm %a, %b, %c {trans_b = true} : (tensor<256x512xf32>, tensor<1024x512xf32>, tensor<1024xf32>) -> tensor<256x1024xf32>
  %2 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %3 = ridge.conv %x, %dw {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 64 : i64} : (tensor<1x64x56x56xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x56x56xf32>
  return %0, %1, %2, %3 : tensor<1x4x256x256xf32>, tensor<256x1024xf32>, tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>
}

// -----

// A causal attention in its online form (2 heads, 128 tokens of 64): its
// visible scores (about half) make 16.5 FLOP/B over Q, K, V and O once,
// under the H100's fp32 ridge point (20). But unrounded, its kernel would
// be the SIMT online loop, which reads every key and value a row sees once
// per row (8.7 MB, not 262 kB): rounded, it runs on the tensor-core kernel,
// which reads them once per 64-row tile. The policy prices that loop, so
// the attention is rounded.
// CHECK-LABEL: func @causal_attention
// CHECK: ridge.attention {{.*}}ridge.precision = "bf16"
// FP32-LABEL: func @causal_attention
// FP32-NOT: ridge.precision
// FP16-LABEL: func @causal_attention
// FP16: ridge.attention {{.*}}ridge.precision = "fp16"
func.func @causal_attention(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>) -> tensor<1x2x128x64xf32> {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>, tensor<1x2x128x128xf32>
  return %0#0 : tensor<1x2x128x64xf32>
}

// fp8 tensor cores came with sm_89; the error names the chip.
// NO-FP8: error: --precision=fp8 needs fp8 tensor cores (sm_89, sm_90a or newer); target sm_80 has none

// -----

// resnet18's last downsampling block: the 3x3 convolution (24 FLOP/B) is
// compute-bound on the H100's fp32 roofline, the 1x1 strided one (15.6
// FLOP/B) memory-bound. Fused into one kernel (their sum is one epilogue),
// the 1x1 takes the 3x3's format: the kernel's products share its tensor
// cores, and an fp32 product would put the whole kernel on SIMT. Outside a
// fusion group each keeps its own decision.
// CHECK-LABEL: func @fused_downsample
// CHECK: ridge.fusion_group
// CHECK: ridge.conv {{.*}}ridge.precision = "bf16"
// CHECK: ridge.conv {{.*}}ridge.precision = "bf16"
// CHECK: ridge.yield
// CHECK-NEXT: }
// CHECK-NEXT: ridge.conv {{.*}}ridge.precision = "bf16"
// On the H100 (the default target) the lone 1x1 stays fp32; the A100's
// ridge point (9.6 FLOP/B) rounds it on its own too.
// DEFAULT-NEXT: ridge.conv %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
// FP32-LABEL: func @fused_downsample
// FP32-NOT: ridge.precision
// FP32: return
// FP16-LABEL: func @fused_downsample
// FP16: ridge.conv {{.*}}ridge.precision = "fp16"
// FP16: ridge.conv {{.*}}ridge.precision = "fp16"
func.func @fused_downsample(%x: tensor<1x512x7x7xf32>, %w: tensor<512x512x3x3xf32>, %b: tensor<512xf32>, %y: tensor<1x256x14x14xf32>, %wd: tensor<512x256x1x1xf32>, %bd: tensor<512xf32>) -> (tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>) {
  %g = ridge.fusion_group "k0_conv" kind "contraction" -> tensor<1x512x7x7xf32> {
    %0 = ridge.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
    %1 = ridge.conv %y, %wd, %bd {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x256x14x14xf32>, tensor<512x256x1x1xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
    %2 = ridge.add %0, %1 : (tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
    ridge.yield %2 : tensor<1x512x7x7xf32>
  }
  %3 = ridge.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
  %4 = ridge.conv %y, %wd, %bd {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x256x14x14xf32>, tensor<512x256x1x1xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
  return %g, %3, %4 : tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>, tensor<1x512x7x7xf32>
}

// -----

// tf32 rounds the contractions it shortens, as bf16 does; an attention stays
// fp32 (its kernels multiply bf16/fp16, or f32 on the SIMT path).
// TF32-LABEL: func @tf32_matmul_and_attention
// TF32: ridge.matmul {{.*}}ridge.precision = "tf32"
// TF32-NOT: ridge.precision
// TF32: return
func.func @tf32_matmul_and_attention(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>) -> (tensor<1024x1024xf32>, tensor<1x2x128x64xf32>) {
  %0 = ridge.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>, tensor<1x2x128x128xf32>
  return %0, %1#0 : tensor<1024x1024xf32>, tensor<1x2x128x64xf32>
}

// -----

// fp8 (sm_90a, the default chip) for MatMul and Gemm, whose lowering builds
// per-tensor scales; a convolution and an attention get bf16 instead.
// FP8-LABEL: func @fp8_matmul_conv_attention
// FP8: ridge.matmul {{.*}}ridge.precision = "fp8"
// FP8: ridge.conv {{.*}}ridge.precision = "bf16"
// FP8: ridge.attention {{.*}}ridge.precision = "bf16"
func.func @fp8_matmul_conv_attention(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>, %x: tensor<1x512x7x7xf32>, %w: tensor<512x512x3x3xf32>, %q: tensor<1x2x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x2x128x64xf32>) -> (tensor<1024x1024xf32>, tensor<1x512x7x7xf32>, tensor<1x2x128x64xf32>) {
  %0 = ridge.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %1 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>) -> tensor<1x512x7x7xf32>
  %2:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>, tensor<1x2x128x128xf32>
  return %0, %1, %2#0 : tensor<1024x1024xf32>, tensor<1x512x7x7xf32>, tensor<1x2x128x64xf32>
}
