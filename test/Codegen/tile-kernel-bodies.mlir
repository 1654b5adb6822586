// RUN: ridge-opt %s -split-input-file -ridge-convert-graph-to-linalg -ridge-fuse-kernel-bodies -ridge-tile-kernel-bodies -verify-diagnostics | FileCheck %s

// Each kernel becomes one loop nest by the tile sizes of its
// ridge.kernel_config (set by hand here; ridge-select-kernel-config decides
// them in the pipelines, select-kernel-config.mlir), and the loop carries the
// config on to the mapping passes.

// Matmul + bias + GELU tiled by one in both dims: each iteration computes
// its dot product (the fused reduction) and the epilogue.
// CHECK-LABEL: func.func private @matmul_epilogue
// CHECK: %[[F:.*]] = scf.forall (%[[I:.*]], %[[J:.*]]) in (16, 64)
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0] [1, 32] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, %[[J]]] [32, 1] [1, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.erf
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[I]], %[[J]]] [1, 1] [1, 1]
// CHECK: } {ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1>, vector_width = 4 : i64, warps_per_block = 7 : i64}}
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]
func.func private @matmul_epilogue(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1>, vector_width = 4 : i64, warps_per_block = 7 : i64}} {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.add %0, %b : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %2 = ridge.gelu %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// Scaled softmax tiled by rows: the row (reduced by max and sum and
// broadcast back) stays whole; the row max, fused for both the sum and the
// output, is computed once.
// CHECK-LABEL: func.func private @softmax
// CHECK: %[[F:.*]] = scf.forall (%[[R:.*]]) in (8)
// CHECK: tensor.extract_slice %{{.*}}[%[[R]], 0] [1, 128] [1, 1]
// CHECK: arith.maximumf
// CHECK-NOT: arith.maximumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[R]], 0] [1, 128] [1, 1]
// CHECK: return %[[F]]
func.func private @softmax(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %c = ridge.constant dense<0.125> : tensor<f32>
  %0 = ridge.mul %x, %c : (tensor<8x128xf32>, tensor<f32>) -> tensor<8x128xf32>
  %1 = ridge.softmax %0 {axis = 1 : i64} : tensor<8x128xf32>
  return %1 : tensor<8x128xf32>
}

// -----

// Residual add + LayerNorm with both results returned: the loop over rows
// yields the add's value too.
// CHECK-LABEL: func.func private @residual_layer_norm
// CHECK: %[[F:.*]]:2 = scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK-COUNT-2: tensor.parallel_insert_slice
// CHECK: return %[[F]]#1, %[[F]]#0
func.func private @residual_layer_norm(%x: tensor<4x256xf32>, %h: tensor<4x256xf32>, %s: tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x256xf32>) attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %0 = ridge.add %x, %h : (tensor<4x256xf32>, tensor<4x256xf32>) -> tensor<4x256xf32>
  %1:3 = ridge.layer_norm %0, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %0, %1#0 : tensor<4x256xf32>, tensor<4x256xf32>
}

// -----

// One tile covers the kernel (a decode step's one row, with the residual
// add's value returned too): the loop stays, one iteration of its first
// tiled dimension mapped to one block, so that the canonicalization that
// follows tiling does not fold it and leave one kernel per op.
// CHECK-LABEL: func.func private @one_row
// CHECK: %[[F:.*]]:2 = scf.forall (%{{.*}}) in (1) shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: math.sqrt
// CHECK-COUNT-2: tensor.parallel_insert_slice
// CHECK: } {mapping = [#gpu.block<x>], ridge.kernel_config = {{.*}}tile_sizes = array<i64: 1, 1, 0>
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#1, %[[F]]#0
func.func private @one_row(%x: tensor<1x1x256xf32>, %h: tensor<1x1x256xf32>, %s: tensor<256xf32>) -> (tensor<1x1x256xf32>, tensor<1x1x256xf32>) attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %0 = ridge.add %x, %h : (tensor<1x1x256xf32>, tensor<1x1x256xf32>) -> tensor<1x1x256xf32>
  %1:3 = ridge.layer_norm %0, %s {axis = 2 : i64, epsilon = 1.0e-5 : f32} : (tensor<1x1x256xf32>, tensor<256xf32>) -> (tensor<1x1x256xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>)
  return %0, %1#0 : tensor<1x1x256xf32>, tensor<1x1x256xf32>
}

// -----

// The tile sizes are obeyed, not re-derived: two rows per iteration.
// CHECK-LABEL: func.func private @two_rows
// CHECK: scf.forall (%[[R:.*]]) = (0) to (8) step (2)
// CHECK: tensor.extract_slice %{{.*}}[%[[R]], 0] [2, 128] [1, 1]
func.func private @two_rows(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 2, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// A config without tile sizes (a transposed convolution, whose slices do not
// follow from a tile) leaves one loop nest per op, each carrying the config.
// CHECK-LABEL: func.func private @untiled
// CHECK-NOT: scf.forall
// CHECK-COUNT-4: linalg.generic {{.*}}ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}
// CHECK: return
func.func private @untiled(%x: tensor<1x1x3xf32>, %w: tensor<1x2x3xf32>) -> tensor<1x2x7xf32> attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %0 = ridge.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x1x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x7xf32>
  %1 = ridge.relu %0 : tensor<1x2x7xf32>
  return %1 : tensor<1x2x7xf32>
}

// -----

// A one-op kernel is its own loop nest and carries the config itself; a
// function that is no kernel is left alone, even without a config.
// CHECK-LABEL: func.func private @one_op
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 8 : i64}
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: scf.forall
// CHECK-NOT: ridge.kernel_config
func.func private @one_op(%x: tensor<64x128xf16>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 8 : i64}} {
  %0 = ridge.tanh %x : tensor<64x128xf16>
  return %0 : tensor<64x128xf16>
}
func.func @not_a_kernel(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<16x64xf32> {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.relu %0 : tensor<16x64xf32>
  return %1 : tensor<16x64xf32>
}

// -----

// expected-error @+2 {{'ridge.kernel_config' has 3 tile sizes for a kernel whose result op has 2 loops}}
func.func private @bad_tile_count(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 1, 0, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// expected-error @+1 {{'ridge.kernel_config' has tile sizes for a kernel of one op}}
func.func private @tiles_for_one_op(%x: tensor<64x128xf16>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 1 : i64, warps_per_block = 8 : i64}} {
  %0 = ridge.tanh %x : tensor<64x128xf16>
  return %0 : tensor<64x128xf16>
}

// -----

// expected-error @+1 {{kernel of several ops has no 'ridge.kernel_config' to tile it by (run ridge-select-kernel-config)}}
func.func private @no_config(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// A kernel with an empty loop (a reduction over a zero-extent axis) is not
// tiled by the selected config; its loops do nothing and its result is the
// init.
// CHECK-LABEL: func.func private @empty_axis_sum
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-NOT: scf.forall
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-NOT: scf.forall
// CHECK: return
func.func private @empty_axis_sum(%x: tensor<2x0x4xf32>) -> tensor<2x1x4xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<2x0x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Tile sizes set by hand for such a kernel are refused (tile-and-fuse would
// crash on the empty dimension).
// expected-error @+1 {{'ridge.kernel_config' has tile sizes for a kernel with an empty loop (a zero-extent dimension)}}
func.func private @empty_axis_tiled(%x: tensor<2x0x4xf32>) -> tensor<2x1x4xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0, 1>, vector_width = 4 : i64, warps_per_block = 1 : i64}} {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<2x0x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// A mean over every dim (rank 0, expanded to 1x1x1) is read whole by every
// tile: it is computed once, before the loop, not fused into each tile.
// CHECK-LABEL: func.func private @mean_of_all
// CHECK:       linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "reduction"]
// CHECK:       tensor.expand_shape %{{.*}} [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
// CHECK:       scf.forall
// CHECK-NOT:     iterator_types = ["reduction"
// CHECK:       return
func.func private @mean_of_all(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 1>, vector_width = 4 : i64, warps_per_block = 7 : i64}} {
  %0 = ridge.reduce mean %x {axes = array<i64: 0, 1, 2>} : tensor<1x16x64xf32> -> tensor<1x1x1xf32>
  %1 = ridge.sub %x, %0 : (tensor<1x16x64xf32>, tensor<1x1x1xf32>) -> tensor<1x16x64xf32>
  return %1 : tensor<1x16x64xf32>
}

// -----

// The same with a producer that is fused into the loop and also a kernel
// result: the mean before the loop reads the producer computed whole (the
// original op), not the loop's result, which it would precede.
// CHECK-LABEL: func.func private @mean_of_all_kept
// CHECK:       %[[E:.*]] = linalg.generic {{.*}}ins(%arg0 : tensor<1x16x64xf32>)
// CHECK:         math.exp
// CHECK:       linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "reduction"]{{.*}} ins(%[[E]] :
// CHECK:       %[[LOOP:.*]]:2 = scf.forall
// CHECK:         math.exp
// CHECK:       return %[[LOOP]]#{{[01]}}, %[[LOOP]]#{{[01]}}
func.func private @mean_of_all_kept(%x: tensor<1x16x64xf32>) -> (tensor<1x16x64xf32>, tensor<1x16x64xf32>) attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1, 1>, vector_width = 4 : i64, warps_per_block = 7 : i64}} {
  %e = ridge.exp %x : tensor<1x16x64xf32>
  %0 = ridge.reduce mean %e {axes = array<i64: 0, 1, 2>} : tensor<1x16x64xf32> -> tensor<1x1x1xf32>
  %1 = ridge.sub %e, %0 : (tensor<1x16x64xf32>, tensor<1x1x1xf32>) -> tensor<1x16x64xf32>
  return %1, %e : tensor<1x16x64xf32>, tensor<1x16x64xf32>
}
