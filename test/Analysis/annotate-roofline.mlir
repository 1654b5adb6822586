// RUN: ridge-opt %s -split-input-file -ridge-annotate-roofline | FileCheck %s

// Hand-computed costs on the default GPU (H100-SXM, bf16 tensor cores:
// 989.4 TFLOP/s, fp32 SIMT 67 TFLOP/s, 3.35 TB/s; ridge point 295.34).
// Each op is placed on the ceiling of the format it computes in: a MatMul or
// Gemm in bf16/fp16 (its ridge.precision, or 16-bit operands) on that
// format's tensor cores, everything else on the fp32 SIMT peak.

// CHECK: module attributes {ridge.roofline.gpu = {bandwidth = 3.350000e+12 : f64, name = "H100-SXM", peak_flops = 9.894000e+14 : f64, precision = "bf16", ridge_point = 295.34{{[0-9]*}} : f64, simt_peak_flops = 6.700000e+13 : f64}}
// CHECK-LABEL: func @matmul
// FLOPs 2*M*N*K = 2*128*512*256; bytes 4*(128*256 + 256*512 + 128*512).
// Without ridge.precision the f32 operands are multiplied in fp32 on the CUDA
// cores: 33554432 / 67e12 s, compute-bound (36.6 FLOP/B > 20.0). Rounded to
// bf16 (ridge-select-precision) the same matmul runs on tensor cores, where
// its time is the memory term, 917504 / 3.35e12 s.
// CHECK: ridge.matmul
// CHECK-SAME: ridge.roofline = {bound = "compute", bytes = 917504 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 33554432 : i64, intensity = 36.571428{{[0-9]*}} : f64, precision = "fp32", time_s = 5.00812{{[0-9]*}}E-7 : f64}
// CHECK: ridge.matmul
// CHECK-SAME: ridge.roofline = {bound = "memory", bytes = 917504 : i64, ceiling_flops = 9.894000e+14 : f64, flops = 33554432 : i64, intensity = 36.571428{{[0-9]*}} : f64, precision = "bf16", time_s = 2.73881{{[0-9]*}}E-7 : f64}
func.func @matmul(%a: tensor<128x256xf32>, %b: tensor<256x512xf32>) -> (tensor<128x512xf32>, tensor<128x512xf32>) {
  %0 = ridge.matmul %a, %b : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  %1 = ridge.matmul %a, %b {ridge.precision = "bf16"} : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  return %0, %1 : tensor<128x512xf32>, tensor<128x512xf32>
}

// -----

// Broadcast batch dims: [4,1] x [3] -> [4,3]; FLOPs 2*(4*3*64*16)*32, bytes
// 4*(4*64*32 + 3*32*16 + 4*3*64*16): the broadcast operand is read once.
// CHECK-LABEL: func @batched_matmul_broadcast
// CHECK: ridge.matmul
// CHECK-SAME: {bound = "memory", bytes = 88064 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 786432 : i64
func.func @batched_matmul_broadcast(%a: tensor<4x1x64x32xf32>, %b: tensor<3x32x16xf32>) -> tensor<4x3x64x16xf32> {
  %0 = ridge.matmul %a, %b : (tensor<4x1x64x32xf32>, tensor<3x32x16xf32>) -> tensor<4x3x64x16xf32>
  return %0 : tensor<4x3x64x16xf32>
}

// -----

// Gemm with bias (alpha = beta = 1): 2*64*256*128 + 64*256 (the bias add);
// bytes 4*(64*128 + 128*256 + 256 + 64*256).
// CHECK-LABEL: func @gemm_bias
// CHECK: ridge.gemm
// CHECK-SAME: {bound = "memory", bytes = 230400 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 4210688 : i64
func.func @gemm_bias(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %c: tensor<256xf32>) -> tensor<64x256xf32> {
  %0 = ridge.gemm %a, %b, %c : (tensor<64x128xf32>, tensor<128x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  return %0 : tensor<64x256xf32>
}

// -----

// 3x3 conv, 64 -> 64 channels on 56x56, pad 1: each of the 64*56*56 outputs
// sums 64*3*3 products: 2*200704*576 FLOPs; bytes 4*(200704 + 36864 + 200704).
// At 131.9 FLOP/B it is compute-bound on the SIMT peak. Rounded to bf16 it
// is an implicit GEMM on tensor cores (docs/tensor-cores.md): on the H100's
// 989.4T bf16 ceiling it is memory-bound, 1753088 B / 3.35 TB/s = 0.52 us.
// CHECK-LABEL: func @conv3x3
// CHECK: ridge.conv
// CHECK-SAME: {bound = "compute", bytes = 1753088 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 231211008 : i64, intensity = 131.887{{[0-9]*}} : f64, precision = "fp32", time_s = 3.45091{{[0-9]*}}E-6 : f64}
// CHECK: ridge.conv
// CHECK-SAME: {bound = "memory", bytes = 1753088 : i64, ceiling_flops = 9.894000e+14 : f64, flops = 231211008 : i64, intensity = 131.887{{[0-9]*}} : f64, precision = "bf16", time_s = 5.23309{{[0-9]*}}E-7 : f64}
func.func @conv3x3(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>) -> (tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>) {
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  %1 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
  return %0, %1 : tensor<1x64x56x56xf32>, tensor<1x64x56x56xf32>
}

// -----

// Depthwise 3x3 (group = channels = 32) on 112x112: each output sums 1*3*3
// products: 2*401408*9 FLOPs; bytes 4*(401408 + 288 + 401408); intensity 2.25.
// CHECK-LABEL: func @conv_depthwise
// CHECK: ridge.conv
// CHECK-SAME: {bound = "memory", bytes = 3212416 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 7225344 : i64, intensity = 2.249{{[0-9]*}} : f64
func.func @conv_depthwise(%x: tensor<1x32x112x112xf32>, %w: tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32> {
  %0 = ridge.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 32 : i64} : (tensor<1x32x112x112xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x112x112xf32>
  return %0 : tensor<1x32x112x112xf32>
}

// -----

// Softmax over rows of 1024: per row max (n-1), sub (n), exp (n), sum (n-1),
// div (n) = 5n-2 FLOPs; 8 rows. Bytes: read and write 8*1024 f32; the time
// is the memory term, 65536 / 3.35e12 s.
// CHECK-LABEL: func @softmax
// CHECK: ridge.softmax
// CHECK-SAME: {bound = "memory", bytes = 65536 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 40944 : i64, intensity = 0.62{{[0-9]*}} : f64, precision = "fp32", time_s = 1.9562{{[0-9]*}}E-8 : f64}
func.func @softmax(%x: tensor<8x1024xf32>) -> tensor<8x1024xf32> {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x1024xf32>
  return %0 : tensor<8x1024xf32>
}

// -----

// LayerNormalization over 768 for 16 rows: 8 FLOPs per element + 3 per row;
// the unused mean and inverse std are never written: bytes 4*(12288 + 768 +
// 768 + 12288).
// CHECK-LABEL: func @layer_norm
// CHECK: ridge.layer_norm
// CHECK-SAME: {bound = "memory", bytes = 104448 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 98352 : i64
func.func @layer_norm(%x: tensor<16x768xf32>, %s: tensor<768xf32>, %b: tensor<768xf32>) -> tensor<16x768xf32> {
  %0:3 = ridge.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<16x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<16x768xf32>, tensor<16x1xf32>, tensor<16x1xf32>)
  return %0#0 : tensor<16x768xf32>
}

// -----

// Attention as exported (MatMul -> Div -> Softmax -> MatMul), 4 heads of 64,
// 128 tokens: every step reads or writes the 1x4x128x128 score matrix
// (262144 bytes). The fused ridge.attention moves only Q, K, V and the output
// (4 * 4 * 32768 bytes) for 65536 scores * (2*(64+64) + 6) FLOPs, on the
// CUDA cores (no tensor-core kernel builds attention): at 32.75 FLOP/B it is
// compute-bound on the SIMT peak.
// CHECK-LABEL: func @attention_subgraph
// CHECK: ridge.transpose
// CHECK-SAME: {bound = "memory", bytes = 262144 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 0 : i64
// CHECK: ridge.matmul
// CHECK-SAME: {bound = "memory", bytes = 524288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 8388608 : i64, intensity = 1.600000e+01 : f64
// CHECK: ridge.div
// CHECK-SAME: {bound = "memory", bytes = 524292 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 65536 : i64
// CHECK: ridge.softmax
// CHECK-SAME: {bound = "memory", bytes = 524288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 326656 : i64
// CHECK: ridge.matmul
// CHECK-SAME: {bound = "memory", bytes = 524288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 8388608 : i64
// CHECK: ridge.attention
// CHECK-SAME: {bound = "compute", bytes = 524288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 17170432 : i64, intensity = 3.275000e+01 : f64, precision = "fp32"
func.func @attention_subgraph(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> (tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) {
  %kt = ridge.transpose %k, [0, 1, 3, 2] : tensor<1x4x128x64xf32> -> tensor<1x4x64x128xf32>
  %s = ridge.matmul %q, %kt : (tensor<1x4x128x64xf32>, tensor<1x4x64x128xf32>) -> tensor<1x4x128x128xf32>
  %c = ridge.constant dense<8.0> : tensor<f32>
  %d = ridge.div %s, %c : (tensor<1x4x128x128xf32>, tensor<f32>) -> tensor<1x4x128x128xf32>
  %p = ridge.softmax %d {axis = 3 : i64} : tensor<1x4x128x128xf32>
  %o = ridge.matmul %p, %v : (tensor<1x4x128x128xf32>, tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
  %f:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %o, %f#0 : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
}

// -----

// Causal, the online form's key loop stops at each row's diagonal: row i
// sees i + 1 keys, 4 * (128 * 129 / 2) = 33024 scores of 262 FLOPs, about
// half the dense count; the bytes are the same, so the intensity halves
// (16.5 FLOP/B, memory-bound under the SIMT ridge point of 20). The
// reference form (scores stored) computes every score and counts them all.
// CHECK-LABEL: func @causal_attention
// CHECK: ridge.attention
// CHECK-SAME: {bound = "memory", bytes = 524288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 8652288 : i64, intensity = 16.5029296875 : f64
// CHECK: ridge.attention
// CHECK-SAME: flops = 17170432 : i64
func.func @causal_attention(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> (tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>) {
  %f:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  %g:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %f#0, %g#1 : tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
}

// -----

// A pointwise chain run op by op: every op reads and writes 1024 floats.
// The constant is charged to its reader, not to itself.
// CHECK-LABEL: func @pointwise_chain
// CHECK: ridge.constant
// CHECK-NOT: ridge.roofline
// CHECK: ridge.add
// CHECK-SAME: {bound = "memory", bytes = 8196 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 1024 : i64
// CHECK: ridge.tanh
// CHECK-SAME: {bound = "memory", bytes = 8192 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 1024 : i64
// CHECK: ridge.mul
// CHECK-SAME: {bound = "memory", bytes = 12288 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 1024 : i64
func.func @pointwise_chain(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c = ridge.constant dense<1.0> : tensor<f32>
  %0 = ridge.add %x, %c : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %1 = ridge.tanh %0 : tensor<1024xf32>
  %2 = ridge.mul %1, %x : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// -----

// A reshape is a view: no FLOPs, no bytes, no time.
// CHECK-LABEL: func @reshape_is_free
// CHECK: ridge.reshape
// CHECK-SAME: {bound = "memory", bytes = 0 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 0 : i64, intensity = 0.000000e+00 : f64, precision = "fp32", time_s = 0.000000e+00 : f64}
func.func @reshape_is_free(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = ridge.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Element sizes: i8 is 1 byte, f16 2. The cast moves 1024*1 + 1024*2 bytes
// (its format is its widest float type, f16); the f16 matmul 2*(3*64*64)
// bytes for 2*64*64*64 FLOPs, on fp16 tensor cores whatever the target's
// precision: its operands are stored in f16.
// CHECK-LABEL: func @element_sizes
// CHECK: ridge.cast
// CHECK-SAME: {bound = "memory", bytes = 3072 : i64, ceiling_flops = 6.700000e+13 : f64, flops = 0 : i64, intensity = 0.000000e+00 : f64, precision = "fp16"
// CHECK: ridge.matmul
// CHECK-SAME: {bound = "memory", bytes = 24576 : i64, ceiling_flops = 9.894000e+14 : f64, flops = 524288 : i64, intensity = 21.3{{[0-9]*}} : f64, precision = "fp16"
func.func @element_sizes(%x: tensor<1024xi8>, %a: tensor<64x64xf16>) -> (tensor<1024xf16>, tensor<64x64xf16>) {
  %0 = ridge.cast %x : tensor<1024xi8> -> tensor<1024xf16>
  %1 = ridge.matmul %a, %a : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0, %1 : tensor<1024xf16>, tensor<64x64xf16>
}

// -----

// A dynamic shape has no cost until --shape makes it static.
// CHECK-LABEL: func @dynamic
// CHECK: ridge.add
// CHECK-SAME: ridge.roofline = "unknown"
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = ridge.add %x, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
