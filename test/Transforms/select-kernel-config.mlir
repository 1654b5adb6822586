// RUN: ridge-opt %s -split-input-file -ridge-convert-graph-to-linalg -ridge-fuse-kernel-bodies -ridge-select-kernel-config -verify-diagnostics | FileCheck %s

// Each kernel's GPU mapping is decided once, from ridge.target (the default
// target here: sm_90a planned for the H100, 132 SMs) and its loop nest, and
// recorded on the kernel and on the loop nest that carries it to the mapping
// passes.

// A LayerNorm row kernel of 4 rows: one warp per block (4 rows on 132 SMs),
// 16-byte lane accesses for f32 data.
// CHECK-LABEL: func.func private @layer_norm
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}
// CHECK: scf.forall
// CHECK: } {ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}}
func.func private @layer_norm(%x: tensor<4x256xf32>, %s: tensor<256xf32>) -> tensor<4x256xf32> attributes {ridge.kernel = "reduction"} {
  %0:3 = ridge.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %0#0 : tensor<4x256xf32>
}

// -----

// Many rows: blocks grow to 8 warps once every SM has one (2048 / 132).
// CHECK-LABEL: func.func private @softmax_many_rows
// CHECK-SAME: warps_per_block = 8 : i64
func.func private @softmax_many_rows(%x: tensor<2048x96xf32>) -> tensor<2048x96xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<2048x96xf32>
  return %0 : tensor<2048x96xf32>
}

// -----

// The target's SM count decides: on a 2-SM GPU, 8 rows give 4 warps a block.
// CHECK-LABEL: func.func private @small_gpu
// CHECK-SAME: warps_per_block = 4 : i64
module attributes {ridge.target = {bandwidth = 1.0e+11 : f64, chip = "sm_80", gpu = "Tiny", l2_bytes = 1048576 : i64, peak_flops = {bf16 = 1.0e+13 : f64, fp16 = 1.0e+13 : f64, fp32 = 1.0e+12 : f64, fp8 = 0.0 : f64, tf32 = 5.0e+12 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 2 : i64, smem_per_sm = 102400 : i64}} {
  func.func private @small_gpu(%x: tensor<8x256xf32>) -> tensor<8x256xf32> attributes {ridge.kernel = "reduction"} {
    %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x256xf32>
    return %0 : tensor<8x256xf32>
  }
}

// -----

// f16 data: 4 elements are 8 bytes, no 16-byte access; one element a lane.
// A single op is its own loop nest and carries the config itself.
// CHECK-LABEL: func.func private @half_pointwise
// CHECK-SAME: vector_width = 1 : i64
// CHECK: linalg.generic
// CHECK: ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 8 : i64}
func.func private @half_pointwise(%x: tensor<64x128xf16>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.tanh %x : tensor<64x128xf16>
  return %0 : tensor<64x128xf16>
}

// -----

// A lone row reduction is one op, not tiled: its rows are the op's parallel
// iterations (4096 on 132 SMs: 8 warps a block).
// CHECK-LABEL: func.func private @lone_reduction
// CHECK-SAME: warps_per_block = 8 : i64
func.func private @lone_reduction(%x: tensor<4096x256xf32>) -> tensor<4096x1xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<4096x256xf32> -> tensor<4096x1xf32>
  return %0 : tensor<4096x1xf32>
}

// -----

// A config set by hand is kept (its tile sizes also fixed the tiling: two
// rows per iteration); functions that are no kernels get none.
// CHECK-LABEL: func.func private @by_hand
// CHECK-SAME: ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 2, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}
// CHECK: scf.forall (%{{.*}}) = (0) to (8) step (2)
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: ridge.kernel_config
func.func private @by_hand(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 2, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
func.func @not_a_kernel(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// expected-error @+1 {{'ridge.kernel_config' has vector_width 2; expected 1 or 4}}
func.func private @bad_vector_width(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, vector_width = 2 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// expected-error @+2 {{'ridge.kernel_config' has 3 tile sizes for a kernel whose result op has 2 loops}}
func.func private @bad_tile_count(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 1, 0, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
