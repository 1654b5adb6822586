// RUN: ridge-opt %s -split-input-file -ridge-narrow-kernel-boundaries | FileCheck %s

// A LayerNorm kernel whose result only a bf16 projection multiplies stores
// it in bf16: its group rounds what it yields, and the reader widens it in
// its own group, where the contraction's rounding of it becomes a no-op.
// CHECK-LABEL: func @norm_then_projection
// CHECK: %[[N:.*]] = ridge.fusion_group "k0_reduction" kind "reduction" -> tensor<128x256xbf16> {
// CHECK:   %[[L:[a-z_0-9]+]], %{{.*}}, %{{.*}} = ridge.layer_norm
// CHECK:   %[[R:.*]] = ridge.cast %[[L]] {ridge.boundary_cast} : tensor<128x256xf32> -> tensor<128x256xbf16>
// CHECK:   ridge.yield %[[R]] : tensor<128x256xbf16>
// CHECK: ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<128x512xf32> {
// CHECK:   %[[W:.*]] = ridge.cast %[[N]] {ridge.boundary_cast} : tensor<128x256xbf16> -> tensor<128x256xf32>
// CHECK:   ridge.matmul %[[W]], %{{.*}} {ridge.precision = "bf16"}
func.func @norm_then_projection(%x: tensor<128x256xf32>, %s: tensor<256xf32>, %b: tensor<256xf32>, %w: tensor<256x512xf32>) -> tensor<128x512xf32> {
  %0 = ridge.fusion_group "k0_reduction" kind "reduction" -> tensor<128x256xf32> {
    %1:3 = ridge.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> (tensor<128x256xf32>, tensor<128x1xf32>, tensor<128x1xf32>)
    ridge.yield %1#0 : tensor<128x256xf32>
  }
  %2 = ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<128x512xf32> {
    %3 = ridge.matmul %0, %w {ridge.precision = "bf16"} : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
    ridge.yield %3 : tensor<128x512xf32>
  }
  return %2 : tensor<128x512xf32>
}

// -----

// Post-LN BERT: the LayerNorm's rows feed the next projection, which rounds
// them, and the residual add after it, which needs them in f32. Its kernel
// stores both: the f32 rows, which the residual's kernel and the function's
// return read, and a bf16 copy after them, which the projection widens
// (its rounding of them a no-op again). A reshape between kernels that
// only the projection reads is retyped to view the copy.
// CHECK-LABEL: func @norm_then_projection_and_residual
// CHECK: %[[N:.*]]:2 = ridge.fusion_group "k0_reduction" kind "reduction" -> tensor<128x256xf32>, tensor<128x256xbf16> {
// CHECK:   %[[L:[a-z_0-9]+]], %{{.*}}, %{{.*}} = ridge.layer_norm
// CHECK:   %[[R:.*]] = ridge.cast %[[L]] {ridge.boundary_cast} : tensor<128x256xf32> -> tensor<128x256xbf16>
// CHECK:   ridge.yield %[[L]], %[[R]] : tensor<128x256xf32>, tensor<128x256xbf16>
// CHECK: ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<128x256xf32> {
// CHECK:   %[[W:.*]] = ridge.cast %[[N]]#1 {ridge.boundary_cast} : tensor<128x256xbf16> -> tensor<128x256xf32>
// CHECK:   ridge.matmul %[[W]], %{{.*}} {ridge.precision = "bf16"}
// CHECK: ridge.fusion_group "k2_pointwise" kind "pointwise" -> tensor<128x256xf32> {
// CHECK:   ridge.add %{{.*}}, %[[N]]#0 :
// CHECK: %[[VIEW:.*]] = ridge.reshape %[[N]]#1 : tensor<128x256xbf16> -> tensor<1x128x256xbf16>
// CHECK: ridge.fusion_group "k3_matmul" kind "contraction" -> tensor<1x128x256xf32> {
// CHECK:   ridge.cast %[[VIEW]] {ridge.boundary_cast} : tensor<1x128x256xbf16> -> tensor<1x128x256xf32>
// CHECK: return %{{.*}}, %[[N]]#0, %{{.*}} :
func.func @norm_then_projection_and_residual(%x: tensor<128x256xf32>, %s: tensor<256xf32>, %b: tensor<256xf32>, %w: tensor<256x256xf32>) -> (tensor<128x256xf32>, tensor<128x256xf32>, tensor<1x128x256xf32>) {
  %0 = ridge.fusion_group "k0_reduction" kind "reduction" -> tensor<128x256xf32> {
    %1:3 = ridge.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> (tensor<128x256xf32>, tensor<128x1xf32>, tensor<128x1xf32>)
    ridge.yield %1#0 : tensor<128x256xf32>
  }
  %2 = ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<128x256xf32> {
    %3 = ridge.matmul %0, %w {ridge.precision = "bf16"} : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
    ridge.yield %3 : tensor<128x256xf32>
  }
  %4 = ridge.fusion_group "k2_pointwise" kind "pointwise" -> tensor<128x256xf32> {
    %5 = ridge.add %2, %0 : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
    ridge.yield %5 : tensor<128x256xf32>
  }
  %6 = ridge.reshape %0 : tensor<128x256xf32> -> tensor<1x128x256xf32>
  %7 = ridge.fusion_group "k3_matmul" kind "contraction" -> tensor<1x128x256xf32> {
    %8 = ridge.matmul %6, %w {ridge.precision = "bf16"} : (tensor<1x128x256xf32>, tensor<256x256xf32>) -> tensor<1x128x256xf32>
    ridge.yield %8 : tensor<1x128x256xf32>
  }
  return %4, %0, %7 : tensor<128x256xf32>, tensor<128x256xf32>, tensor<1x128x256xf32>
}

// -----

// Two fp16 readers (a Gemm's B, a convolution's input are multiplied
// operands too): one rounding, a widening in each reader.
// CHECK-LABEL: func @two_fp16_readers
// CHECK: ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<64x64xf16>
// CHECK: ridge.cast %{{.*}} {ridge.boundary_cast} : tensor<64x64xf32> -> tensor<64x64xf16>
// CHECK: ridge.fusion_group "k1_gemm"
// CHECK:   ridge.cast %{{.*}} {ridge.boundary_cast} : tensor<64x64xf16> -> tensor<64x64xf32>
// CHECK: ridge.fusion_group "k2_matmul"
// CHECK:   ridge.cast %{{.*}} {ridge.boundary_cast} : tensor<64x64xf16> -> tensor<64x64xf32>
func.func @two_fp16_readers(%x: tensor<64x64xf32>, %a: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<64x64xf32> {
    %1 = ridge.tanh %x : tensor<64x64xf32>
    ridge.yield %1 : tensor<64x64xf32>
  }
  %2 = ridge.fusion_group "k1_gemm" kind "contraction" -> tensor<64x64xf32> {
    %3 = ridge.gemm %a, %0 {ridge.precision = "fp16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %3 : tensor<64x64xf32>
  }
  %4 = ridge.fusion_group "k2_matmul" kind "contraction" -> tensor<64x64xf32> {
    %5 = ridge.matmul %0, %a {ridge.precision = "fp16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %5 : tensor<64x64xf32>
  }
  return %2, %4 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Left in f32, with no narrow copy: a result that one kernel both
// multiplies in bf16 and reads as it is (a residual Add beside the product:
// it would read the copy too, more bytes, not fewer), one the function
// returns, one an fp32 contraction reads, one read by readers of two
// formats, one a Gemm adds (its C), and the output of an attention that
// multiplies in f32 (its kernel's store does not round to bf16).
// CHECK-LABEL: func @kept_f32
// CHECK-NOT: ridge.boundary_cast
// CHECK-NOT: xbf16
// CHECK-NOT: xf16
// CHECK: return
func.func @kept_f32(%x: tensor<64x64xf32>, %a: tensor<64x64xf32>, %q: tensor<1x1x64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<1x1x64x64xf32>) {
  %0:5 = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32> {
    %1 = ridge.tanh %x : tensor<64x64xf32>
    %2 = ridge.relu %x : tensor<64x64xf32>
    %3 = ridge.sigmoid %x : tensor<64x64xf32>
    %4 = ridge.exp %x : tensor<64x64xf32>
    %5 = ridge.neg %x : tensor<64x64xf32>
    ridge.yield %1, %2, %3, %4, %5 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
  }
  %6 = ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<64x64xf32> {
    %7 = ridge.matmul %0#0, %a {ridge.precision = "bf16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %8 = ridge.add %7, %0#0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %8 : tensor<64x64xf32>
  }
  %9 = ridge.fusion_group "k2_matmul" kind "contraction" -> tensor<64x64xf32> {
    %10 = ridge.matmul %0#2, %a : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %10 : tensor<64x64xf32>
  }
  %11 = ridge.fusion_group "k3_matmul" kind "contraction" -> tensor<64x64xf32> {
    %12 = ridge.matmul %0#3, %a {ridge.precision = "bf16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %12 : tensor<64x64xf32>
  }
  %13 = ridge.fusion_group "k4_matmul" kind "contraction" -> tensor<64x64xf32> {
    %14 = ridge.matmul %0#3, %a {ridge.precision = "fp16"} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %14 : tensor<64x64xf32>
  }
  %15 = ridge.fusion_group "k5_gemm" kind "contraction" -> tensor<64x64xf32> {
    %16 = ridge.gemm %a, %a, %0#4 {ridge.precision = "bf16"} : (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    ridge.yield %16 : tensor<64x64xf32>
  }
  %17 = ridge.fusion_group "k6_attention" kind "attention" -> tensor<1x1x64x64xf32> {
    %o:2 = ridge.attention %q, %q, %q {scale = 0.125 : f32} : tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32> -> tensor<1x1x64x64xf32>, tensor<1x1x64x64xf32>
    ridge.yield %o#0 : tensor<1x1x64x64xf32>
  }
  %18 = ridge.fusion_group "k7_matmul" kind "contraction" -> tensor<1x1x64x64xf32> {
    %19 = ridge.matmul %17, %a {ridge.precision = "bf16"} : (tensor<1x1x64x64xf32>, tensor<64x64xf32>) -> tensor<1x1x64x64xf32>
    ridge.yield %19 : tensor<1x1x64x64xf32>
  }
  return %6, %9, %11, %13, %15, %0#1, %18 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<1x1x64x64xf32>
}

// -----

// An attention rounds Q, K and V to its precision: a projection that only
// its head split reads (slices, reshapes and transposes in the attention's
// kernel) is stored in bf16, and widened in the attention's kernel before
// each slice (one widening a use), which the kernel reads as strided views
// of its bf16 argument.
// CHECK-LABEL: func @qkv_then_attention
// CHECK: %[[QKV:.*]] = ridge.fusion_group "k0_matmul" kind "contraction" -> tensor<1x128x768xbf16> {
// CHECK: ridge.cast %{{.*}} {ridge.boundary_cast} : tensor<1x128x768xf32> -> tensor<1x128x768xbf16>
// CHECK: ridge.fusion_group "k1_attention" kind "attention" -> tensor<1x4x128x64xf32> {
// CHECK-NEXT: %[[Q:.*]] = ridge.cast %[[QKV]] {ridge.boundary_cast} : tensor<1x128x768xbf16> -> tensor<1x128x768xf32>
// CHECK-NEXT: ridge.slice %[[Q]]
// CHECK-NEXT: %[[K:.*]] = ridge.cast %[[QKV]] {ridge.boundary_cast}
// CHECK-NEXT: ridge.slice %[[K]]
// CHECK-NEXT: %[[V:.*]] = ridge.cast %[[QKV]] {ridge.boundary_cast}
// CHECK-NEXT: ridge.slice %[[V]]
func.func @qkv_then_attention(%x: tensor<1x128x256xf32>, %w: tensor<256x768xf32>) -> tensor<1x4x128x64xf32> {
  %0 = ridge.fusion_group "k0_matmul" kind "contraction" -> tensor<1x128x768xf32> {
    %1 = ridge.matmul %x, %w {ridge.precision = "bf16"} : (tensor<1x128x256xf32>, tensor<256x768xf32>) -> tensor<1x128x768xf32>
    ridge.yield %1 : tensor<1x128x768xf32>
  }
  %2 = ridge.fusion_group "k1_attention" kind "attention" -> tensor<1x4x128x64xf32> {
    %3 = ridge.slice %0 starts [0, 0, 0] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
    %4 = ridge.slice %0 starts [0, 0, 256] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
    %5 = ridge.slice %0 starts [0, 0, 512] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
    %6 = ridge.reshape %3 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
    %7 = ridge.reshape %4 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
    %8 = ridge.reshape %5 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
    %9 = ridge.transpose %6, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
    %10 = ridge.transpose %7, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
    %11 = ridge.transpose %8, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
    %o:2 = ridge.attention %9, %10, %11 {is_causal = true, ridge.precision = "bf16", scale = 1.250000e-01 : f32} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
    ridge.yield %o#0 : tensor<1x4x128x64xf32>
  }
  return %2 : tensor<1x4x128x64xf32>
}

// -----

// Left in f32: a key a rotary embedding rotates in the attention's kernel
// (it computes with the f32 values, then the attention rounds), and Q, K
// and V of an attention that multiplies in f32 (no precision).
// CHECK-LABEL: func @attention_kept_f32
// CHECK-NOT: ridge.boundary_cast
// CHECK-NOT: xbf16
// CHECK: return
func.func @attention_kept_f32(%x: tensor<1x4x128x64xf32>, %cos: tensor<1x128x32xf32>, %sin: tensor<1x128x32xf32>) -> (tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) {
  %0 = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<1x4x128x64xf32> {
    %1 = ridge.tanh %x : tensor<1x4x128x64xf32>
    ridge.yield %1 : tensor<1x4x128x64xf32>
  }
  %2 = ridge.fusion_group "k1_attention" kind "attention" -> tensor<1x4x128x64xf32> {
    %k = ridge.rotary_embedding %0, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
    %o:2 = ridge.attention %x, %k, %x {ridge.precision = "bf16", scale = 1.250000e-01 : f32} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
    ridge.yield %o#0 : tensor<1x4x128x64xf32>
  }
  %3 = ridge.fusion_group "k2_pointwise" kind "pointwise" -> tensor<1x4x128x64xf32> {
    %4 = ridge.exp %x : tensor<1x4x128x64xf32>
    ridge.yield %4 : tensor<1x4x128x64xf32>
  }
  %5 = ridge.fusion_group "k3_attention" kind "attention" -> tensor<1x4x128x64xf32> {
    %6 = ridge.transpose %3, [0, 1, 2, 3] : tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>
    %o:2 = ridge.attention %6, %6, %6 {scale = 1.250000e-01 : f32} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
    ridge.yield %o#0 : tensor<1x4x128x64xf32>
  }
  return %2, %5 : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
}

// -----

// An attention that rounds to bf16 stores its output in bf16 when only a
// bf16 contraction reads it (the output projection, through its head
// merge): the attention kernel's last store rounds O. A reshape between the
// kernels (a view) is retyped, and the reader widens what it views.
// CHECK-LABEL: func @attention_then_projection
// CHECK: %[[O:.*]] = ridge.fusion_group "k0_attention" kind "attention" -> tensor<1x4x128x64xbf16> {
// CHECK: ridge.cast %{{.*}} {ridge.boundary_cast} : tensor<1x4x128x64xf32> -> tensor<1x4x128x64xbf16>
// CHECK: %[[VIEW:.*]] = ridge.reshape %[[O]] : tensor<1x4x128x64xbf16> -> tensor<4x128x64xbf16>
// CHECK: ridge.fusion_group "k1_gemm" kind "contraction" -> tensor<128x256xf32> {
// CHECK-NEXT: %[[WIDE:.*]] = ridge.cast %[[VIEW]] {ridge.boundary_cast} : tensor<4x128x64xbf16> -> tensor<4x128x64xf32>
// CHECK-NEXT: ridge.transpose %[[WIDE]]
func.func @attention_then_projection(%q: tensor<1x4x128x64xf32>, %w: tensor<256x256xf32>) -> tensor<128x256xf32> {
  %0 = ridge.fusion_group "k0_attention" kind "attention" -> tensor<1x4x128x64xf32> {
    %o:2 = ridge.attention %q, %q, %q {ridge.precision = "bf16", scale = 1.250000e-01 : f32} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
    ridge.yield %o#0 : tensor<1x4x128x64xf32>
  }
  %1 = ridge.reshape %0 : tensor<1x4x128x64xf32> -> tensor<4x128x64xf32>
  %2 = ridge.fusion_group "k1_gemm" kind "contraction" -> tensor<128x256xf32> {
    %3 = ridge.transpose %1, [1, 0, 2] : tensor<4x128x64xf32> -> tensor<128x4x64xf32>
    %4 = ridge.reshape %3 : tensor<128x4x64xf32> -> tensor<128x256xf32>
    %5 = ridge.gemm %4, %w {ridge.precision = "bf16", trans_b = true} : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
    ridge.yield %5 : tensor<128x256xf32>
  }
  return %2 : tensor<128x256xf32>
}

// -----

// An attention that its one-kernel lowerings do not compute (a softcap: the
// online SIMT loop, which writes an f32 result) keeps its output f32:
// rounding it would take a launch and a buffer of its own.
// CHECK-LABEL: func @softcap_attention_kept_f32
// CHECK: ridge.fusion_group "k0_attention" kind "attention" -> tensor<1x4x64x32xf32>
// CHECK-NOT: ridge.boundary_cast
func.func @softcap_attention_kept_f32(%q: tensor<1x4x64x32xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
  %0 = ridge.fusion_group "k0_attention" kind "attention" -> tensor<1x4x64x32xf32> {
    %o:2 = ridge.attention %q, %q, %q {ridge.precision = "bf16", scale = 1.250000e-01 : f32, softcap = 30.0 : f32} : tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32>, tensor<1x4x64x32xf32> -> tensor<1x4x64x32xf32>, tensor<1x4x64x64xf32>
    ridge.yield %o#0 : tensor<1x4x64x32xf32>
  }
  %1 = ridge.fusion_group "k1_matmul" kind "contraction" -> tensor<64x128xf32> {
    %2 = ridge.transpose %0, [0, 2, 1, 3] : tensor<1x4x64x32xf32> -> tensor<1x64x4x32xf32>
    %3 = ridge.reshape %2 : tensor<1x64x4x32xf32> -> tensor<64x128xf32>
    %4 = ridge.matmul %3, %w {ridge.precision = "bf16"} : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    ridge.yield %4 : tensor<64x128xf32>
  }
  return %1 : tensor<64x128xf32>
}
