// RUN: ridge-opt %s -split-input-file -ridge-form-fusion-groups=remarks=true -verify-diagnostics | FileCheck %s
// RUN: ridge-opt %s -split-input-file -ridge-form-fusion-groups="policy=all-legal record-unfused=true" | FileCheck %s --check-prefix=ALL
// RUN: ridge-opt %s -split-input-file -ridge-form-fusion-groups="policy=roofline max-kernel-ops=2 record-unfused=true" | FileCheck %s --check-prefix=LIMIT
// RUN: ridge-opt %s -split-input-file -ridge-form-fusion-groups="policy=roofline max-kernel-operands=3 record-unfused=true" | FileCheck %s --check-prefix=OPERANDS
// RUN: not ridge-opt %s -split-input-file -ridge-form-fusion-groups=gpu=Z100 2>&1 | FileCheck %s --check-prefix=BAD-GPU

// BAD-GPU: unknown GPU 'Z100'

// Fusion groups on the default GPU (H100-SXM): which ops share a kernel, and
// the remark at every edge left between two kernels. The ALL run takes every
// merge the planner allows (policy=all-legal), so that its legality is
// tested apart from the roofline policy; the LIMIT run is the roofline
// policy with a kernel limit of 2 ops. Both record the reason of each edge
// left unfused on its consumer (ridge.unfused).
// A pointwise chain with a cast is one kernel: 4 ops, one read of x and y,
// one write of the f16 result.
// CHECK-LABEL: func @pointwise_chain
// CHECK: %[[G:.*]] = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<1024xf16> {
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.tanh
// CHECK-NEXT: ridge.mul
// CHECK-NEXT: %[[C:.*]] = ridge.cast
// CHECK-NEXT: ridge.yield %[[C]] : tensor<1024xf16>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @pointwise_chain(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf16> {
  %0 = ridge.add %x, %y : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %1 = ridge.tanh %0 : tensor<1024xf32>
  %2 = ridge.mul %1, %x : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %3 = ridge.cast %2 : tensor<1024xf32> -> tensor<1024xf16>
  return %3 : tensor<1024xf16>
}

// -----

// Bias, GELU and the residual add are the matmul's epilogue.
// CHECK-LABEL: func @matmul_epilogue
// CHECK: ridge.fusion_group "k0_matmul" kind "contraction" -> tensor<128x512xf32> {
// CHECK-NEXT: ridge.matmul
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.gelu
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.yield
// CHECK-NOT: ridge.fusion_group
func.func @matmul_epilogue(%x: tensor<128x256xf32>, %w: tensor<256x512xf32>, %b: tensor<512xf32>, %r: tensor<128x512xf32>) -> tensor<128x512xf32> {
  %0 = ridge.matmul %x, %w : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
  %1 = ridge.add %0, %b : (tensor<128x512xf32>, tensor<512xf32>) -> tensor<128x512xf32>
  %2 = ridge.gelu %1 {approximate = "tanh"} : tensor<128x512xf32>
  %3 = ridge.add %2, %r : (tensor<128x512xf32>, tensor<128x512xf32>) -> tensor<128x512xf32>
  return %3 : tensor<128x512xf32>
}

// -----

// The residual add joins the LayerNorm that reads it; its sum is still needed
// outside (the residual stream), so the kernel has two outputs.
// CHECK-LABEL: func @residual_layer_norm
// CHECK: %[[G:.*]]:2 = ridge.fusion_group "k0_reduction" kind "reduction" -> tensor<128x768xf32>, tensor<128x768xf32> {
// CHECK-NEXT: %[[SUM:.*]] = ridge.add
// CHECK-NEXT: %[[NORM:.*]], %{{.*}}, %{{.*}} = ridge.layer_norm %[[SUM]]
// CHECK-NEXT: ridge.yield %[[SUM]], %[[NORM]]
// CHECK: return %[[G]]#0, %[[G]]#1
func.func @residual_layer_norm(%x: tensor<128x768xf32>, %h: tensor<128x768xf32>, %s: tensor<768xf32>, %b: tensor<768xf32>) -> (tensor<128x768xf32>, tensor<128x768xf32>) {
  %0 = ridge.add %x, %h : (tensor<128x768xf32>, tensor<128x768xf32>) -> tensor<128x768xf32>
  %1:3 = ridge.layer_norm %0, %s, %b {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> (tensor<128x768xf32>, tensor<128x1xf32>, tensor<128x1xf32>)
  return %0, %1#0 : tensor<128x768xf32>, tensor<128x768xf32>
}

// -----

// RMSNorm as exported (Pow, ReduceMean, Add, Sqrt, Div, Mul): the ops on
// whole rows and on per-row values form one row-reduction kernel.
// CHECK-LABEL: func @rms_norm_decomposed
// CHECK: ridge.fusion_group "k0_reduction" kind "reduction"
// CHECK-NEXT: ridge.pow
// CHECK-NEXT: ridge.reduce mean
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.sqrt
// CHECK-NEXT: ridge.div
// CHECK-NEXT: ridge.mul
// CHECK-NEXT: ridge.yield
// CHECK-NOT: ridge.fusion_group
func.func @rms_norm_decomposed(%x: tensor<1x128x256xf32>, %w: tensor<256xf32>) -> tensor<1x128x256xf32> {
  %two = ridge.constant dense<2.0> : tensor<f32>
  %eps = ridge.constant dense<1.0e-6> : tensor<f32>
  %0 = ridge.pow %x, %two : (tensor<1x128x256xf32>, tensor<f32>) -> tensor<1x128x256xf32>
  %1 = ridge.reduce mean %0 {axes = array<i64: 2>, keepdims = true} : tensor<1x128x256xf32> -> tensor<1x128x1xf32>
  %2 = ridge.add %1, %eps : (tensor<1x128x1xf32>, tensor<f32>) -> tensor<1x128x1xf32>
  %3 = ridge.sqrt %2 : tensor<1x128x1xf32>
  %4 = ridge.div %x, %3 : (tensor<1x128x256xf32>, tensor<1x128x1xf32>) -> tensor<1x128x256xf32>
  %5 = ridge.mul %4, %w : (tensor<1x128x256xf32>, tensor<256xf32>) -> tensor<1x128x256xf32>
  return %5 : tensor<1x128x256xf32>
}

// -----

// Scale and mask are the softmax's prologue.
// CHECK-LABEL: func @scaled_masked_softmax
// CHECK: ridge.fusion_group "k0_reduction" kind "reduction"
// CHECK-NEXT: ridge.div
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.softmax
// CHECK-NEXT: ridge.yield
// CHECK-NOT: ridge.fusion_group
func.func @scaled_masked_softmax(%s: tensor<1x4x128x128xf32>, %m: tensor<1x1x128x128xf32>) -> tensor<1x4x128x128xf32> {
  %c = ridge.constant dense<8.0> : tensor<f32>
  %0 = ridge.div %s, %c : (tensor<1x4x128x128xf32>, tensor<f32>) -> tensor<1x4x128x128xf32>
  %1 = ridge.add %0, %m : (tensor<1x4x128x128xf32>, tensor<1x1x128x128xf32>) -> tensor<1x4x128x128xf32>
  %2 = ridge.softmax %1 {axis = 3 : i64} : tensor<1x4x128x128xf32>
  return %2 : tensor<1x4x128x128xf32>
}

// -----

// A memory-bound matmul reads its operand through the transpose.
// CHECK-LABEL: func @transpose_prologue
// CHECK: ridge.fusion_group "k0_matmul" kind "contraction"
// CHECK-NEXT: ridge.transpose
// CHECK-NEXT: ridge.matmul
// CHECK-NEXT: ridge.yield
func.func @transpose_prologue(%q: tensor<1x128x4x64xf32>, %k: tensor<1x4x64x128xf32>) -> tensor<1x4x128x128xf32> {
  %0 = ridge.transpose %q, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
  %1 = ridge.matmul %0, %k : (tensor<1x4x128x64xf32>, tensor<1x4x64x128xf32>) -> tensor<1x4x128x128xf32>
  return %1 : tensor<1x4x128x128xf32>
}

// -----

// Negative: a 4096^3 bf16 matmul is compute-bound (intensity ~1400 FLOP/B
// against a ridge of 295): the cast stays a kernel of its own rather than be
// recomputed for every tile.
// CHECK-LABEL: func @prologue_into_compute_bound
// CHECK: ridge.fusion_group "k0_pointwise" kind "pointwise"
// CHECK-NEXT: ridge.cast
// CHECK: ridge.fusion_group "k1_matmul" kind "contraction"
// CHECK-NEXT: ridge.matmul
// The planner allows the prologue; only the policy refuses it.
// ALL-LABEL: func @prologue_into_compute_bound
// ALL: ridge.fusion_group "k0_matmul" kind "contraction"
// ALL-NEXT: ridge.cast
// ALL-NEXT: %[[MM:.*]] = ridge.matmul
// ALL-NEXT: ridge.yield %[[MM]]
// ALL-NEXT: }
// ALL-NEXT: return
func.func @prologue_into_compute_bound(%x: tensor<4096x4096xf32>, %w: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = ridge.cast %x : tensor<4096x4096xf32> -> tensor<4096x4096xbf16>
  // expected-remark @+1 {{consumer is compute-bound: a prologue would be recomputed per tile}}
  %1 = ridge.matmul %0, %w : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  return %1 : tensor<4096x4096xbf16>
}

// -----

// Negative: a softmax row of 100000 floats (391 KiB) does not fit the H100's
// 228 KiB of shared memory per SM, so the exp is not pulled into it.
// CHECK-LABEL: func @row_exceeds_shared_memory
// CHECK: ridge.fusion_group "k0_pointwise"
// CHECK: ridge.fusion_group "k1_reduction"
func.func @row_exceeds_shared_memory(%x: tensor<2x100000xf32>) -> tensor<2x100000xf32> {
  %0 = ridge.exp %x : tensor<2x100000xf32>
  // expected-remark @+1 {{would exceed shared memory: a row of 390.6 KiB > 228.0 KiB per SM on H100-SXM}}
  %1 = ridge.softmax %0 {axis = 1 : i64} : tensor<2x100000xf32>
  return %1 : tensor<2x100000xf32>
}

// -----

// Negative: a scan (cumsum) has no fused lowering; the ops on both sides
// stay separate kernels.
// CHECK-LABEL: func @opaque_op
// CHECK: ridge.fusion_group "k0_pointwise"
// CHECK-NEXT: ridge.exp
// CHECK: ridge.fusion_group "k1_cumsum" kind "opaque"
// CHECK: ridge.fusion_group "k2_pointwise"
// CHECK-NEXT: ridge.neg
func.func @opaque_op(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = ridge.exp %x : tensor<8x16xf32>
  // expected-remark @+1 {{ridge.cumsum runs as a kernel of its own}}
  %1 = ridge.cumsum %0 {axis = 1 : i64} : tensor<8x16xf32>
  // expected-remark @+1 {{ridge.cumsum runs as a kernel of its own}}
  %2 = ridge.neg %1 : tensor<8x16xf32>
  return %2 : tensor<8x16xf32>
}

// -----

// Negative: a LayerNorm needs whole rows of the matmul's output, which the
// matmul kernel computes element by element.
// CHECK-LABEL: func @norm_after_matmul
// CHECK: ridge.fusion_group "k0_matmul" kind "contraction"
// CHECK: ridge.fusion_group "k1_reduction" kind "reduction"
// The planner refuses it, whatever the policy.
// ALL-LABEL: func @norm_after_matmul
// ALL: ridge.fusion_group "k0_matmul" kind "contraction"
// ALL: ridge.fusion_group "k1_reduction" kind "reduction"
// ALL-NEXT: ridge.layer_norm {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "a reduction over a contraction's output needs whole rows of it"}]
func.func @norm_after_matmul(%x: tensor<128x256xf32>, %w: tensor<256x256xf32>, %s: tensor<256xf32>) -> tensor<128x256xf32> {
  %0 = ridge.matmul %x, %w : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  // expected-remark @+1 {{a reduction over a contraction's output needs whole rows of it}}
  %1:3 = ridge.layer_norm %0, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<128x256xf32>, tensor<256xf32>) -> (tensor<128x256xf32>, tensor<128x1xf32>, tensor<128x1xf32>)
  return %1#0 : tensor<128x256xf32>
}

// -----

// Negative: a transpose after a LayerNorm moves its elements across rows;
// in the row kernel its loop would run over the moved elements and
// recompute a row's statistics for each one.
// CHECK-LABEL: func @transpose_after_norm
// CHECK: ridge.fusion_group "k0_reduction" kind "reduction"
// CHECK: ridge.fusion_group "k1_pointwise" kind "pointwise"
// CHECK-NEXT: ridge.transpose
// ALL-LABEL: func @transpose_after_norm
// ALL: ridge.transpose {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "a row-reduction kernel writes its rows in place; ridge.transpose would recompute each row per element it moves"}]
func.func @transpose_after_norm(%x: tensor<128x4x64xf32>, %s: tensor<64xf32>) -> tensor<4x128x64xf32> {
  %0:3 = ridge.layer_norm %x, %s {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<128x4x64xf32>, tensor<64xf32>) -> (tensor<128x4x64xf32>, tensor<128x4x1xf32>, tensor<128x4x1xf32>)
  // expected-remark @+1 {{a row-reduction kernel writes its rows in place; ridge.transpose would recompute each row per element it moves}}
  %1 = ridge.transpose %0#0, [1, 0, 2] : tensor<128x4x64xf32> -> tensor<4x128x64xf32>
  return %1 : tensor<4x128x64xf32>
}

// -----

// A lone reshape is a view: no kernel.
// CHECK-LABEL: func @views_only
// CHECK-NOT: ridge.fusion_group
// CHECK: ridge.reshape
func.func @views_only(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %0 = ridge.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// A reshape of a kernel's result joins the kernel, which hands out the view:
// the merge saves no bytes (the kernel stores the 2x12 result under the
// view either way) and costs none.
// CHECK-LABEL: func @view_after_kernel
// CHECK: %[[G:.*]] = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<6x4xf32> {
// CHECK-NEXT: ridge.tanh
// CHECK-NEXT: %[[V:.*]] = ridge.reshape
// CHECK-NEXT: ridge.yield %[[V]]
// CHECK: return %[[G]]
func.func @view_after_kernel(%x: tensor<2x12xf32>) -> tensor<6x4xf32> {
  %0 = ridge.tanh %x : tensor<2x12xf32>
  %1 = ridge.reshape %0 : tensor<2x12xf32> -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}

// -----

// A chain of three ops is one kernel under the default limit of 64 ops and
// under all-legal; with max-kernel-ops=2 the roofline policy refuses the
// third op, a merge the planner allows.
// CHECK-LABEL: func @chain_over_kernel_op_limit
// CHECK: ridge.fusion_group "k0_pointwise" kind "pointwise"
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.tanh
// CHECK-NEXT: ridge.mul
// CHECK-NEXT: ridge.yield
// CHECK-NOT: ridge.fusion_group
// ALL-LABEL: func @chain_over_kernel_op_limit
// ALL: ridge.fusion_group "k0_pointwise" kind "pointwise"
// ALL-NEXT: ridge.add
// ALL-NEXT: ridge.tanh
// ALL-NEXT: ridge.mul
// ALL-NEXT: ridge.yield
// ALL-NOT: ridge.fusion_group
// LIMIT-LABEL: func @chain_over_kernel_op_limit
// LIMIT: ridge.fusion_group "k0_pointwise" kind "pointwise"
// LIMIT-NEXT: ridge.add
// LIMIT-NEXT: ridge.tanh
// LIMIT-NEXT: ridge.yield
// LIMIT: ridge.fusion_group "k1_pointwise" kind "pointwise"
// LIMIT-NEXT: ridge.mul {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "would exceed the register budget: 3 ops in one kernel (limit 2)"}]
func.func @chain_over_kernel_op_limit(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = ridge.add %x, %y : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %1 = ridge.tanh %0 : tensor<1024xf32>
  %2 = ridge.mul %1, %x : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// -----

// Negative: attention's softmax is a row reduction, and only elementwise
// prologues fold into a contraction (the matmul would recompute the row's
// max and sum for every element it reads). The planner refuses the merge,
// so even all-legal keeps two kernels.
// TODO: a flash-attention style kernel would take it.
// CHECK-LABEL: func @no_fuse_softmax_into_matmul
// CHECK: ridge.fusion_group "k0_reduction" kind "reduction"
// CHECK-NEXT: ridge.softmax
// CHECK: ridge.fusion_group "k1_matmul" kind "contraction"
// CHECK-NEXT: ridge.matmul
// ALL-LABEL: func @no_fuse_softmax_into_matmul
// ALL: ridge.fusion_group "k0_reduction" kind "reduction"
// ALL-NEXT: ridge.softmax
// ALL: ridge.fusion_group "k1_matmul" kind "contraction"
// ALL-NEXT: ridge.matmul {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "only elementwise prologues fold into a contraction"}]
func.func @no_fuse_softmax_into_matmul(%s: tensor<1x4x128x128xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> {
  %0 = ridge.softmax %s {axis = 3 : i64} : tensor<1x4x128x128xf32>
  // expected-remark @+1 {{not fused with its producer ridge.softmax: only elementwise prologues fold into a contraction}}
  %1 = ridge.matmul %0, %v : (tensor<1x4x128x128xf32>, tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
  return %1 : tensor<1x4x128x64xf32>
}

// -----

// RotaryEmbedding's expanded form (the onnx 1.23 node suite's
// rotary_embedding*_expanded): each half of x is multiplied by cos and by
// sin. A group runs as one kernel, so a path that enters it at one op leaves
// it at every other. With k2 = {x2, c*x2} and k3 = {x1, c*x1, s*x2, sub},
// merging k2 into the add's group {s*x1, add} would close a cycle through
// k3 (k2 -> s*x2 in k3, then x1 in k3 -> s*x1), and the concat taking the
// sub one through the add's group (x1 -> s*x1 -> add -> concat). The planner
// refuses both; before, its op-level search
// followed s*x2's users only, missed the path out of k3 through x1, and the
// pass failed with "fusion groups left the graph without a topological
// order".
// CHECK-LABEL: func @rotary_halves
// CHECK: %[[G2:.*]]:2 = ridge.fusion_group "k2_pointwise"
// CHECK-NEXT: %[[X2:.*]] = ridge.slice %arg0 starts [0, 0, 0, 4]
// CHECK-NEXT: ridge.mul %{{.*}}, %[[X2]]
// CHECK: %[[G3:.*]]:2 = ridge.fusion_group "k3_pointwise"
// CHECK: ridge.mul %{{.*}}, %[[G2]]#0
// CHECK: ridge.sub
// CHECK: ridge.fusion_group "k4_pointwise"
// CHECK-NEXT: ridge.mul %{{.*}}, %[[G3]]#0
// CHECK-NEXT: ridge.add %{{.*}}, %[[G2]]#1
// CHECK-NEXT: ridge.concat %[[G3]]#1
// ALL-LABEL: func @rotary_halves
// ALL: ridge.concat {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "fusing would create a cycle through another kernel"}]
func.func @rotary_halves(%x: tensor<2x3x4x8xf32>, %cos: tensor<2x3x4xf32>, %sin: tensor<2x3x4xf32>) -> tensor<2x3x4x8xf32> {
  %x1 = ridge.slice %x starts [0, 0, 0, 0] sizes [2, 3, 4, 4] steps [1, 1, 1, 1] : tensor<2x3x4x8xf32> -> tensor<2x3x4x4xf32>
  %x2 = ridge.slice %x starts [0, 0, 0, 4] sizes [2, 3, 4, 4] steps [1, 1, 1, 1] : tensor<2x3x4x8xf32> -> tensor<2x3x4x4xf32>
  %c = ridge.reshape %cos : tensor<2x3x4xf32> -> tensor<2x3x1x4xf32>
  %s = ridge.reshape %sin : tensor<2x3x4xf32> -> tensor<2x3x1x4xf32>
  // expected-remark @+1 {{not fused with its producer ridge.reshape: saves no device-memory traffic}}
  %0 = ridge.mul %c, %x1 : (tensor<2x3x1x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  // expected-remark @+1 {{not fused with its producer ridge.reshape: saves no device-memory traffic}}
  %1 = ridge.mul %c, %x2 : (tensor<2x3x1x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  // expected-remark @+2 {{not fused with its producer ridge.reshape: saves no device-memory traffic}}
  // expected-remark @+1 {{not fused with its producer ridge.slice: the producer's kernel already ends in ridge.mul}}
  %2 = ridge.mul %s, %x2 : (tensor<2x3x1x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  // expected-remark @+2 {{not fused with its producer ridge.reshape: saves no device-memory traffic}}
  // expected-remark @+1 {{not fused with its producer ridge.slice: the producer's kernel already ends in ridge.mul}}
  %3 = ridge.mul %s, %x1 : (tensor<2x3x1x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %4 = ridge.sub %0, %2 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  // expected-remark @+1 {{not fused with its producer ridge.mul: fusing would create a cycle through another kernel}}
  %5 = ridge.add %3, %1 : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  // expected-remark @+1 {{not fused with its producer ridge.sub: fusing would create a cycle through another kernel}}
  %6 = ridge.concat %4, %5 {axis = 3 : i64} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x8xf32>
  return %6 : tensor<2x3x4x8xf32>
}

// -----

// Splat constants fold into the kernel as immediates and cost no kernel
// operand: under a limit of 3 operands, x, y and the result fill the kernel,
// and only the non-splat weight is one too many.
// OPERANDS-LABEL: func @splat_constants_are_no_operands
// OPERANDS: %[[G:.*]] = ridge.fusion_group "k0_pointwise" kind "pointwise" -> tensor<4xf32> {
// OPERANDS-NEXT: ridge.add
// OPERANDS-NEXT: ridge.mul
// OPERANDS-NEXT: ridge.sub
// OPERANDS-NEXT: ridge.yield
// OPERANDS-NEXT: }
// OPERANDS-NEXT: ridge.fusion_group "k1_pointwise" kind "pointwise" -> tensor<4xf32> {
// OPERANDS-NEXT: ridge.add %[[G]], %{{.*}} {{.*}}ridge.unfused = [{operand = 0 : i64, reason = "would exceed the register budget: 4 tensors in one kernel (limit 3)"}]
func.func @splat_constants_are_no_operands(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %half = ridge.constant dense<0.5> : tensor<1xf32>
  %one = ridge.constant dense<1.0> : tensor<4xf32>
  %w = ridge.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = ridge.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = ridge.mul %0, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %2 = ridge.sub %1, %one : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = ridge.add %2, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}

// -----

// A residual block whose shortcut is the second contraction's own input:
// joining the first contraction into the second's kernel through the
// residual add would also fold it into the second's operand, recomputed per
// read. The two stay two kernels, the add the second's epilogue.
// CHECK-LABEL: func @shortcut_is_operand
// CHECK: ridge.fusion_group "k0_matmul" kind "contraction"
// CHECK-NEXT: ridge.matmul
// CHECK-NEXT: ridge.relu
// CHECK-NEXT: ridge.yield
// CHECK: ridge.fusion_group "k1_matmul" kind "contraction"
// CHECK-NEXT: ridge.matmul
// CHECK-NEXT: ridge.add
// CHECK-NEXT: ridge.yield
func.func @shortcut_is_operand(%x: tensor<128x256xf32>, %w1: tensor<256x256xf32>, %w2: tensor<256x256xf32>) -> tensor<128x256xf32> {
  %0 = ridge.matmul %x, %w1 : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  %1 = ridge.relu %0 : tensor<128x256xf32>
  // expected-remark @+1 {{not fused with its producer ridge.relu: a contraction cannot be the prologue of another}}
  %2 = ridge.matmul %1, %w2 : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
  // expected-remark @+1 {{not fused with its producer ridge.relu: a contraction cannot be the prologue of another}}
  %3 = ridge.add %2, %1 : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
  return %3 : tensor<128x256xf32>
}

// -----

// A tensor-core convolution whose channels-last result is read by the next
// convolution and, transposed back, by a graph output: the transpose stays
// out of the convolution's kernel (whose epilogue writes one layout), in a
// pointwise kernel of its own. Its SIMT twin (fp32, no ridge.precision)
// takes the transpose into its kernel.
// CHECK-LABEL: func @transposed_copy_of_tensor_core_result
// CHECK: ridge.fusion_group "k0_conv" kind "contraction"
// CHECK-NEXT: ridge.conv
// CHECK-NEXT: ridge.relu
// CHECK-NEXT: ridge.yield
// CHECK: kind "pointwise"
// CHECK-NEXT: ridge.transpose
// CHECK-LABEL: func @transposed_copy_of_simt_result
// CHECK: ridge.fusion_group "k0_conv" kind "contraction"
// CHECK-NEXT: ridge.conv
// CHECK-NEXT: ridge.relu
// CHECK-NEXT: ridge.transpose
// CHECK-NEXT: ridge.yield
func.func @transposed_copy_of_tensor_core_result(%x: tensor<1x8x8x16xf32>, %w1: tensor<16x3x3x16xf32>, %w2: tensor<16x3x3x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>) {
  %c1 = ridge.conv %x, %w1 {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %r = ridge.relu %c1 : tensor<1x8x8x16xf32>
  // expected-remark @+1 {{not fused with its producer ridge.relu: a tensor-core kernel writes its result in one layout; ridge.transpose would write a second beside the one read elsewhere}}
  %t = ridge.transpose %r, [0, 3, 1, 2] : tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
  // expected-remark @+1 {{not fused with its producer ridge.relu: a contraction cannot be the prologue of another}}
  %c2 = ridge.conv %r, %w2 {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ridge.precision = "bf16"} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  return %t, %c2 : tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>
}
func.func @transposed_copy_of_simt_result(%x: tensor<1x8x8x16xf32>, %w1: tensor<16x3x3x16xf32>, %w2: tensor<16x3x3x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>) {
  %c1 = ridge.conv %x, %w1 {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  %r = ridge.relu %c1 : tensor<1x8x8x16xf32>
  %t = ridge.transpose %r, [0, 3, 1, 2] : tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
  // expected-remark @+1 {{not fused with its producer ridge.relu: the producer's kernel already ends in ridge.transpose}}
  %c2 = ridge.conv %r, %w2 {channels_last, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>) -> tensor<1x8x8x16xf32>
  return %t, %c2 : tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>
}

// -----

// A rotary embedding of the query and of the key of an attention whose
// products are rounded (the tiled tensor-core kernel) is the attention's
// prologue: its tile loads rotate Q once and each K tile once per 64-row
// query tile (2 here), so the recomputation is one more pass over K's
// rotation, against 2 x 256 KiB of rotated tensors not written and read.
// One kernel. The value has no rotation.
// CHECK-LABEL: func @rotary_prologue
// CHECK: ridge.fusion_group "k0_attention" kind "attention"
// CHECK-NEXT: ridge.rotary_embedding
// CHECK-NEXT: ridge.rotary_embedding
// CHECK-NEXT: ridge.attention
// CHECK-NOT: ridge.fusion_group
func.func @rotary_prologue(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>, %cos: tensor<1x128x32xf32>, %sin: tensor<1x128x32xf32>) -> tensor<1x4x128x64xf32> {
  %qr = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  %kr = ridge.rotary_embedding %k, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  %o:2 = ridge.attention %qr, %kr, %v {scale = 0.125 : f32, is_causal = true, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %o#0 : tensor<1x4x128x64xf32>
}

// -----

// Negative: an f32 attention runs the online loop (one query row per
// thread), which reads each Q element once per key: its rotary embedding
// stays a kernel of its own, and so does one whose rotated tensor is also
// returned.
// CHECK-LABEL: func @rotary_not_prologue
// CHECK: ridge.fusion_group "k0_rotary_embedding" kind "opaque"
// CHECK: ridge.fusion_group "k1_attention" kind "attention"
// CHECK-NEXT: ridge.attention
// CHECK: ridge.fusion_group "k2_rotary_embedding" kind "opaque"
// CHECK: ridge.fusion_group "k3_attention" kind "attention"
// CHECK-NEXT: ridge.attention
func.func @rotary_not_prologue(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>, %cos: tensor<1x128x32xf32>, %sin: tensor<1x128x32xf32>) -> (tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) {
  %qr = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  // expected-remark @+1 {{not fused with its producer ridge.rotary_embedding: ridge.rotary_embedding runs as a kernel of its own}}
  %o:2 = ridge.attention %qr, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  %q2 = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  // expected-remark @+1 {{not fused with its producer ridge.rotary_embedding: a prologue must feed only the attention, but func.return also reads it}}
  %o2:2 = ridge.attention %q2, %k, %v {scale = 0.125 : f32, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %o#0, %o2#0, %q2 : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>
}

// -----

// A decode step's KV-cache appends (present_key/present_value =
// Concat(past, new) along the keys, returned by the graph) join its decode
// attention (2 query rows, head dimension 32, 4 query heads over 2 key
// heads) as results of its kernel: the kernel reads the past keys and the
// new ones where they are and writes each key as it reads it, so the cache
// is read once, not twice (a copy kernel, then the attention). The new
// keys' head split comes along. One kernel of three results.
// CHECK-LABEL: func @kv_cache_append
// CHECK: %[[GROUP:.*]]:3 = ridge.fusion_group "k0_attention" kind "attention"
// CHECK-NEXT: ridge.transpose
// CHECK-NEXT: ridge.concat
// CHECK-NEXT: ridge.transpose
// CHECK-NEXT: ridge.concat
// CHECK-NEXT: ridge.attention
// CHECK-NOT: ridge.fusion_group
// CHECK: return %[[GROUP]]#{{[0-9]}}, %[[GROUP]]#{{[0-9]}}, %[[GROUP]]#{{[0-9]}}
func.func @kv_cache_append(%q: tensor<1x4x2x32xf32>, %k: tensor<1x2x2x32xf32>, %v: tensor<1x2x2x32xf32>, %pk: tensor<1x2x40x32xf32>, %pv: tensor<1x2x40x32xf32>) -> (tensor<1x4x2x32xf32>, tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32>) {
  %kt = ridge.transpose %k, [0, 2, 1, 3] : tensor<1x2x2x32xf32> -> tensor<1x2x2x32xf32>
  %ck = ridge.concat %pk, %kt {axis = 2 : i64} : (tensor<1x2x40x32xf32>, tensor<1x2x2x32xf32>) -> tensor<1x2x42x32xf32>
  %vt = ridge.transpose %v, [0, 2, 1, 3] : tensor<1x2x2x32xf32> -> tensor<1x2x2x32xf32>
  %cv = ridge.concat %pv, %vt {axis = 2 : i64} : (tensor<1x2x40x32xf32>, tensor<1x2x2x32xf32>) -> tensor<1x2x42x32xf32>
  %o:2 = ridge.attention %q, %ck, %cv {scale = 0.17677669 : f32, is_causal = true, query_offset = 40 : i64} : tensor<1x4x2x32xf32>, tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32> -> tensor<1x4x2x32xf32>, tensor<1x4x2x42xf32>
  return %o#0, %ck, %cv : tensor<1x4x2x32xf32>, tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32>
}

// -----

// Negative: the same with head dimension 8 (no decode kernel), and with a
// causal mask under which the last query row sees 41 of the 42 keys (query
// offset 39): the appends stay kernels of their own, and the remarks say
// why.
// CHECK-LABEL: func @kv_cache_append_not_decode
// CHECK-COUNT-2: kind "pointwise"
// CHECK: ridge.fusion_group "k2_attention" kind "attention"
// CHECK-NEXT: ridge.attention
func.func @kv_cache_append_not_decode(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x2x8xf32>, %v: tensor<1x2x2x8xf32>, %pk: tensor<1x2x40x8xf32>, %pv: tensor<1x2x40x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x2x42x8xf32>, tensor<1x2x42x8xf32>) {
  %ck = ridge.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x40x8xf32>, tensor<1x2x2x8xf32>) -> tensor<1x2x42x8xf32>
  %cv = ridge.concat %pv, %v {axis = 2 : i64} : (tensor<1x2x40x8xf32>, tensor<1x2x2x8xf32>) -> tensor<1x2x42x8xf32>
  // expected-remark @+1 {{not fused with its producer ridge.concat: a KV-cache append joins only a decode attention (at most 15 query rows, head dimensions multiples of 32 up to 128), whose kernel writes it as it reads the keys}}
  %o:2 = ridge.attention %q, %ck, %cv {scale = 0.35355339 : f32, is_causal = true, query_offset = 40 : i64} : tensor<1x4x2x8xf32>, tensor<1x2x42x8xf32>, tensor<1x2x42x8xf32> -> tensor<1x4x2x8xf32>, tensor<1x4x2x42xf32>
  return %o#0, %ck, %cv : tensor<1x4x2x8xf32>, tensor<1x2x42x8xf32>, tensor<1x2x42x8xf32>
}

// CHECK-LABEL: func @kv_cache_append_short_offset
// CHECK: kind "pointwise"
// CHECK: ridge.fusion_group "k1_attention" kind "attention"
func.func @kv_cache_append_short_offset(%q: tensor<1x2x2x32xf32>, %k: tensor<1x2x2x32xf32>, %v: tensor<1x2x42x32xf32>, %pk: tensor<1x2x40x32xf32>) -> (tensor<1x2x2x32xf32>, tensor<1x2x42x32xf32>) {
  %ck = ridge.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x40x32xf32>, tensor<1x2x2x32xf32>) -> tensor<1x2x42x32xf32>
  // expected-remark @+1 {{not fused with its producer ridge.concat: a KV-cache append joins a causal attention only when its last query row sees every key}}
  %o:2 = ridge.attention %q, %ck, %v {scale = 0.17677669 : f32, is_causal = true, query_offset = 39 : i64} : tensor<1x2x2x32xf32>, tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32> -> tensor<1x2x2x32xf32>, tensor<1x2x2x42xf32>
  return %o#0, %ck : tensor<1x2x2x32xf32>, tensor<1x2x42x32xf32>
}
