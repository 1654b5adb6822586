// RUN: ridge-opt %s -split-input-file -ridge-convert-graph-to-linalg -ridge-fuse-kernel-bodies | FileCheck %s

// Each kernel function's producers fold into their consumers; what is left
// is the op producing its result and the reductions it reads, not yet tiled
// (ridge-tile-kernel-bodies builds the loop, by the kernel's config).

// A pointwise kernel is one elementwise generic: no loop needed.
// CHECK-LABEL: func.func private @k0_pointwise
// CHECK-NOT: scf.forall
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<64x128xf16>)
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.truncf
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
func.func private @k0_pointwise(%x: tensor<64x128xf32>, %y: tensor<128xf32>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.add %x, %y : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %1 = ridge.tanh %0 : tensor<64x128xf32>
  %2 = ridge.cast %1 : tensor<64x128xf32> -> tensor<64x128xf16>
  return %2 : tensor<64x128xf16>
}

// -----

// Matmul + bias + GELU: the bias add and the GELU fold into one epilogue
// generic that reads the contraction; the zero fill stays its init.
// CHECK-LABEL: func.func private @k1_matmul
// CHECK-NOT: scf.forall
// CHECK: %[[FILL:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} outs(
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : {{.*}}) outs(%[[FILL]] :
// CHECK: %[[E:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %arg2 :
// CHECK: arith.addf
// CHECK: math.erf
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]
func.func private @k1_matmul(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.add %0, %b : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %2 = ridge.gelu %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// Scaled softmax: the scale folds into both row reductions (max, then the
// sum of exponentials) and into the output, which reads the two row values.
// CHECK-LABEL: func.func private @k2_reduction
// CHECK-NOT: scf.forall
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<8x128xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[MAX]] :
// CHECK: math.exp
// CHECK: %[[OUT:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%arg0, %[[MAX]], %[[SUM]] :
// CHECK: arith.divf
// CHECK: return %[[OUT]]
func.func private @k2_reduction(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction"} {
  %c = ridge.constant dense<0.125> : tensor<f32>
  %0 = ridge.mul %x, %c : (tensor<8x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %1 = ridge.softmax %0 {axis = 1 : i64} : tensor<8x128xf32>
  return %1 : tensor<8x128xf32>
}

// -----

// Residual add + LayerNorm with both results returned: the add, which the
// kernel returns, stays whole instead of being recomputed in its readers.
// CHECK-LABEL: func.func private @k3_reduction
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ADD]] :
// CHECK: %[[VAR:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ADD]], %[[MEAN]] :
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[ADD]], %[[MEAN]], %[[VAR]], %arg2 :
// CHECK: return %[[ADD]], %[[NORM]]
func.func private @k3_reduction(%x: tensor<4x256xf32>, %h: tensor<4x256xf32>, %s: tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x256xf32>) attributes {ridge.kernel = "reduction"} {
  %0 = ridge.add %x, %h : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %1:3 = ridge.layer_norm %0, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %0, %1#0 : tensor<4x256xf32>, tensor<4x256xf32>
}

// -----

// A sliced, reshaped and transposed operand is read in place by the matmul.
// CHECK-LABEL: func.func private @k4_matmul
// CHECK-NOT: tensor.expand_shape
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg1 :
// CHECK: tensor.extract %arg0[{{.*}}] : tensor<1x8x96xf32>
// CHECK: return %[[MM]]
func.func private @k4_matmul(%qkv: tensor<1x8x96xf32>, %k: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.slice %qkv starts [0, 0, 0] sizes [1, 8, 32] steps [1, 1, 1] : tensor<1x8x96xf32> -> tensor<1x8x32xf32>
  %1 = ridge.reshape %0 : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
  %2 = ridge.transpose %1, [0, 2, 1, 3] : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
  %3 = ridge.matmul %2, %k : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %3 : tensor<1x4x8x8xf32>
}

// -----

// Functions not outlined from a fusion group are left alone.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: scf.forall
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @not_a_kernel(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.relu %0 : tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}

// -----

// A long chain becomes one generic whose body computes the ops in their
// order, with each broadcast operand read once (the chain fuses pairwise in
// rounds, then the patterns finish; the result is the same).
// CHECK-LABEL: func.func private @k_chain
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0, %arg1, %arg2, %arg3 :
// CHECK: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: math.tanh
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[G]]
func.func private @k_chain(%x: tensor<8x16xf32>, %a: tensor<16xf32>, %b: tensor<8x1xf32>, %c: tensor<1xf32>) -> tensor<8x16xf32> attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.add %x, %a : (tensor<8x16xf32>, tensor<16xf32>) -> tensor<8x16xf32>
  %1 = ridge.mul %0, %b : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %2 = ridge.tanh %1 : tensor<8x16xf32>
  %3 = ridge.sub %2, %c : (tensor<8x16xf32>, tensor<1xf32>) -> tensor<8x16xf32>
  %4 = ridge.exp %3 : tensor<8x16xf32>
  %5 = ridge.add %4, %x : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  return %5 : tensor<8x16xf32>
}

// -----

// A contraction kernel that returns a value of its epilogue besides the
// epilogue's end (an output projection's residual sum, and the sum squared
// for the next RMSNorm): the returned producer merges into its consumer, one
// epilogue of two results after the contraction.
// CHECK-LABEL: func.func private @k_residual_and_square
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}"reduction"]
// CHECK: %[[E:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%arg1, %[[MM]] :
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK-NEXT: %[[SQUARE:.*]] = math.powf %[[SUM]]
// CHECK-NEXT: linalg.yield %[[SUM]], %[[SQUARE]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]#0, %[[E]]#1
func.func private @k_residual_and_square(%x: tensor<16x32xf32>, %res: tensor<16x64xf32>, %w: tensor<32x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) attributes {ridge.kernel = "contraction"} {
  %two = ridge.constant dense<2.0> : tensor<f32>
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.add %res, %0 : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %2 = ridge.pow %1, %two : (tensor<16x64xf32>, tensor<f32>) -> tensor<16x64xf32>
  return %1, %2 : tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// LLaMA's query projection: the head-split product (a transpose, returned)
// and its product with the RoPE cosines (broadcast over the heads) are one
// epilogue that reads the contraction through the transpose.
// CHECK-LABEL: func.func private @k_head_split_and_rope
// CHECK: %[[MM:.*]] = linalg.generic {{.*}}"reduction"]
// CHECK: %[[E:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%[[MM]], %arg1 :
// CHECK-NEXT: ^bb0(%[[P:[a-z0-9_]+]]: f32, %[[COS:[a-z0-9_]+]]: f32,
// CHECK-NEXT: %[[ROPE:.*]] = arith.mulf %[[P]], %[[COS]]
// CHECK-NEXT: linalg.yield %[[P]], %[[ROPE]] : f32, f32
// CHECK: return %[[E]]#0, %[[E]]#1
func.func private @k_head_split_and_rope(%x: tensor<8x32xf32>, %cos: tensor<8x16xf32>, %w: tensor<32x64xf32>) -> (tensor<4x8x16xf32>, tensor<4x8x16xf32>) attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<8x32xf32>, tensor<32x64xf32>) -> tensor<8x64xf32>
  %1 = ridge.reshape %0 : tensor<8x64xf32> -> tensor<8x4x16xf32>
  %2 = ridge.transpose %1, [1, 0, 2] : tensor<8x4x16xf32> -> tensor<4x8x16xf32>
  %3 = ridge.mul %2, %cos : (tensor<4x8x16xf32>, tensor<8x16xf32>) -> tensor<4x8x16xf32>
  return %2, %3 : tensor<4x8x16xf32>, tensor<4x8x16xf32>
}

// -----

// Outside contraction kernels a returned value stays an op of its own (the
// tiled loop yields it; the SIMT path needs no single epilogue).
// CHECK-LABEL: func.func private @k_pointwise_returns_both
// CHECK: %[[ADD:.*]] = linalg.generic
// CHECK: %[[EXP:.*]] = linalg.generic
// CHECK-SAME: ins(%[[ADD]] :
// CHECK: return %[[ADD]], %[[EXP]]
func.func private @k_pointwise_returns_both(%x: tensor<16x64xf32>, %y: tensor<16x64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>) attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.add %x, %y : (tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.exp %0 : tensor<16x64xf32>
  return %0, %1 : tensor<16x64xf32>, tensor<16x64xf32>
}
