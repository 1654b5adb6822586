// RUN: ridge-opt %s -split-input-file -ridge-convert-graph-to-linalg -ridge-fuse-kernel-bodies -ridge-select-kernel-config -verify-diagnostics | FileCheck %s

// Each kernel's tiling and GPU mapping is decided once, from ridge.target
// (the default target here: sm_90a planned for the H100, 132 SMs) and its
// fused body, and recorded on the kernel; ridge-tile-kernel-bodies builds the
// loop nest by it (tile-kernel-bodies.mlir).

// A LayerNorm row kernel of 4 rows: the row stays whole (tile 0), the rows
// are tiled by one; one warp per block (4 rows on 132 SMs), 16-byte lane
// accesses for f32 data. Nothing is tiled yet.
// CHECK-LABEL: func.func private @layer_norm
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 1 : i64}
// CHECK-NOT: scf.forall
// CHECK: return
func.func private @layer_norm(%x: tensor<4x256xf32>, %s: tensor<256xf32>) -> tensor<4x256xf32> attributes {ridge.kernel = "reduction"} {
  %0:3 = ridge.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  return %0#0 : tensor<4x256xf32>
}

// -----

// A LayerNorm that returns its rows and a bf16 copy of them (what
// ridge-narrow-kernel-boundaries stores for a projection that rounds them,
// beside the f32 rows a residual reads): the sink is the copy's rounding,
// an elementwise op of the normalized rows, which has their rows: the row
// stays whole (tile 0), not one element a tile that sums its row again.
// CHECK-LABEL: func.func private @layer_norm_and_copy
// CHECK-SAME: tile_sizes = array<i64: 1, 0>
func.func private @layer_norm_and_copy(%x: tensor<4x256xf32>, %s: tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x256xbf16>) attributes {ridge.kernel = "reduction"} {
  %0:3 = ridge.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f32} : (tensor<4x256xf32>, tensor<256xf32>) -> (tensor<4x256xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %1 = ridge.cast %0#0 : tensor<4x256xf32> -> tensor<4x256xbf16>
  return %0#0, %1 : tensor<4x256xf32>, tensor<4x256xbf16>
}

// -----

// Many rows: blocks grow to 8 warps once every SM has one (2048 / 132).
// CHECK-LABEL: func.func private @softmax_many_rows
// CHECK-SAME: tile_sizes = array<i64: 1, 0>
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
// A single op is its own loop nest: no tile sizes.
// CHECK-LABEL: func.func private @half_pointwise
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 8 : i64}
func.func private @half_pointwise(%x: tensor<64x128xf16>) -> tensor<64x128xf16> attributes {ridge.kernel = "pointwise"} {
  %0 = ridge.tanh %x : tensor<64x128xf16>
  return %0 : tensor<64x128xf16>
}

// -----

// A lone row reduction and its init (the zero fill) are tiled by rows, the
// reduced dim whole: 4096 rows on 132 SMs give 8 warps a block.
// CHECK-LABEL: func.func private @lone_reduction
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @lone_reduction(%x: tensor<4096x256xf32>) -> tensor<4096x1xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<4096x256xf32> -> tensor<4096x1xf32>
  return %0 : tensor<4096x1xf32>
}

// -----

// RMSNorm over the last of three dims: the decision is made after producer
// fusion, where the mean of squares is visible as a reduction the output
// reads, so both leading dims are rows (a decision on the unfused body saw
// only the elementwise ops around it).
// CHECK-LABEL: func.func private @rms_norm
// CHECK-SAME: tile_sizes = array<i64: 1, 1, 0>
func.func private @rms_norm(%x: tensor<2x3x128xf32>, %s: tensor<128xf32>) -> tensor<2x3x128xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.rms_norm %x, %s {axis = 2 : i64} : (tensor<2x3x128xf32>, tensor<128xf32>) -> tensor<2x3x128xf32>
  return %0 : tensor<2x3x128xf32>
}

// -----

// A reduction reaches the sink through a division and a reshape (a mean
// over the last dim without keepdims, expanded back): its dim is still the
// row, kept whole, so that the mean runs once per row, not per element.
// CHECK-LABEL: func.func private @mean_through_reshape
// CHECK-SAME: tile_sizes = array<i64: 1, 0>
func.func private @mean_through_reshape(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.reduce mean %x {axes = array<i64: 1>, keepdims = false} : tensor<8x128xf32> -> tensor<8xf32>
  %1 = ridge.reshape %0 : tensor<8xf32> -> tensor<8x1xf32>
  %2 = ridge.sub %x, %1 : (tensor<8x128xf32>, tensor<8x1xf32>) -> tensor<8x128xf32>
  return %2 : tensor<8x128xf32>
}

// -----

// Matmul + bias + GELU of 24 rows (more than the bandwidth path's 16): the
// sink is the epilogue, tiled by one in both dims (one dot product per
// output element); 1536 tiles on 132 SMs: 8 warps.
// CHECK-LABEL: func.func private @matmul_epilogue
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, tile_sizes = array<i64: 1, 1>, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @matmul_epilogue(%x: tensor<24x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<24x64xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<24x32xf32>, tensor<32x64xf32>) -> tensor<24x64xf32>
  %1 = ridge.add %0, %b : (tensor<24x64xf32>, tensor<64xf32>) -> tensor<24x64xf32>
  %2 = ridge.gelu %1 : tensor<24x64xf32>
  return %2 : tensor<24x64xf32>
}

// -----

// The same with 16 rows: skinny, it takes the bandwidth path over its
// [32, 64] weight (stored n-contiguous: each lane 4 columns, a warp 64 of
// them and a share of k), unsplit: the latency-and-bandwidth model prices
// 2 shares at 6 latencies (16 rows, 3 in flight a step at m = 16) plus the
// second launch's 4, against 11 unsplit: under a fifth saved.
// CHECK-LABEL: func.func private @matmul_epilogue_skinny
// CHECK-SAME: ridge.kernel_config = {block_size = 128 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 4 : i64}
func.func private @matmul_epilogue_skinny(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %1 = ridge.add %0, %b : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %2 = ridge.gelu %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
}

// -----

// The same skinny product stored in bf16 (a half-precision export), 8
// rows: the bandwidth path too, not tensor-core tiles that pad its rows;
// each lane owns 8 columns (16 bytes of bf16).
// CHECK-LABEL: func.func private @matmul_epilogue_skinny_bf16
// CHECK-SAME: ridge.kernel_config = {block_size = 128 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 4 : i64}
func.func private @matmul_epilogue_skinny_bf16(%x: tensor<8x32xbf16>, %w: tensor<32x64xbf16>, %b: tensor<64xbf16>) -> tensor<8x64xbf16> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<8x32xbf16>, tensor<32x64xbf16>) -> tensor<8x64xbf16>
  %1 = ridge.add %0, %b : (tensor<8x64xbf16>, tensor<64xbf16>) -> tensor<8x64xbf16>
  return %1 : tensor<8x64xbf16>
}

// -----

// 16 rows in bf16 do 16 FLOPs per weight byte: above the fp32 SIMT ridge
// point of an A100 or a B200 (under 10), so the bandwidth path, whose FMAs
// run on SIMT, is not a bandwidth path there (kMaxBandwidthPathIntensity);
// tensor-core tiles multiply it. (In f32, above, 16 rows do 8 FLOPs a
// byte.)
// CHECK-LABEL: func.func private @matmul_skinny_bf16_16_rows
// CHECK-SAME: mma_tile
// CHECK-NOT: gemv
func.func private @matmul_skinny_bf16_16_rows(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x64xbf16> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16x32xbf16>, tensor<32x64xbf16>) -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

// Tall and skinny (n = 8 below m = 16,384: a router's expert logits over
// a batch of tokens): the bandwidth path over A's rows; 4 rows a warp
// (each B element loaded once serves 4 rows: 32 sums a lane) while the
// warps (4,096) still fill the H100's 132 SMs 16 deep.
// CHECK-LABEL: func.func private @matmul_tall_skinny
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_rows_per_warp = 4 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @matmul_tall_skinny(%x: tensor<16384x256xf32>, %w: tensor<256x8xf32>) -> tensor<16384x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16384x256xf32>, tensor<256x8xf32>) -> tensor<16384x8xf32>
  return %0 : tensor<16384x8xf32>
}

// -----

// n = 16 (a Gemm with transB: B [16, 256] read along k): 2 rows a warp
// (32 sums a lane). At m = 4,096, 1 (2,048 warps of 2 rows would not fill
// 132 SMs 16 deep).
// CHECK-LABEL: func.func private @gemm_tall_skinny_16
// CHECK-SAME: gemv = true, gemv_rows_per_warp = 2 : i64
func.func private @gemm_tall_skinny_16(%x: tensor<16384x256xf32>, %w: tensor<16x256xf32>) -> tensor<16384x16xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.gemm %x, %w {trans_b = true} : (tensor<16384x256xf32>, tensor<16x256xf32>) -> tensor<16384x16xf32>
  return %0 : tensor<16384x16xf32>
}

// -----

// CHECK-LABEL: func.func private @gemm_tall_skinny_16_fewer_rows
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @gemm_tall_skinny_16_fewer_rows(%x: tensor<4096x256xf32>, %w: tensor<16x256xf32>) -> tensor<4096x16xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.gemm %x, %w {trans_b = true} : (tensor<4096x256xf32>, tensor<16x256xf32>) -> tensor<4096x16xf32>
  return %0 : tensor<4096x16xf32>
}

// -----

// Few rows over a long k (64 tokens of 16,384 features by 8 experts): 64
// warps would walk 32 steps of a latency each with 128 KiB in flight on
// the whole GPU; 10 shares of k (4 steps each, the most that keep 4) take
// the time down to the shares' steps plus the second launch that adds
// their partial sums.
// CHECK-LABEL: func.func private @matmul_tall_skinny_split_k
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_split_k = 10 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @matmul_tall_skinny_split_k(%x: tensor<64x16384xf32>, %w: tensor<16384x8xf32>) -> tensor<64x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<64x16384xf32>, tensor<16384x8xf32>) -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

// A read column by column (a Gemm with transA): not k-contiguous rows, so
// not the bandwidth path; f32 with n = 8 stays on the row rule.
// CHECK-LABEL: func.func private @gemm_tall_skinny_trans_a
// CHECK-NOT: gemv
// CHECK-SAME: tile_sizes
func.func private @gemm_tall_skinny_trans_a(%x: tensor<256x16384xf32>, %w: tensor<256x8xf32>) -> tensor<16384x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.gemm %x, %w {trans_a = true} : (tensor<256x16384xf32>, tensor<256x8xf32>) -> tensor<16384x8xf32>
  return %0 : tensor<16384x8xf32>
}

// -----

// With 17 rows it is no longer skinny: tensor-core tiles.
// CHECK-LABEL: func.func private @matmul_17_rows_bf16
// CHECK-SAME: mma_instruction = "wgmma"
func.func private @matmul_17_rows_bf16(%x: tensor<17x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<17x64xbf16> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<17x32xbf16>, tensor<32x64xbf16>) -> tensor<17x64xbf16>
  return %0 : tensor<17x64xbf16>
}

// -----

// Attention heads split from a fused QKV (slice, reshape, transpose): after
// reshape propagation the sink is the 4-d batched matmul, whose reduction
// stays whole; the tile sizes have its rank, not the graph op's.
// CHECK-LABEL: func.func private @heads
// CHECK-SAME: tile_sizes = array<i64: 1, 1, 1, 1, 0>
func.func private @heads(%qkv: tensor<1x32x96xf32>, %k: tensor<1x4x8x8xf32>) -> tensor<1x4x32x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.slice %qkv starts [0, 0, 0] sizes [1, 32, 32] steps [1, 1, 1] : tensor<1x32x96xf32> -> tensor<1x32x32xf32>
  %1 = ridge.reshape %0 : tensor<1x32x32xf32> -> tensor<1x32x4x8xf32>
  %2 = ridge.transpose %1, [0, 2, 1, 3] : tensor<1x32x4x8xf32> -> tensor<1x4x32x8xf32>
  %3 = ridge.matmul %2, %k : (tensor<1x4x32x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x32x8xf32>
  return %3 : tensor<1x4x32x8xf32>
}

// -----

// A transposed convolution reads its input at differences and quotients of
// loop indices, which no tile's slice follows from: no tile sizes, one loop
// nest per op.
// CHECK-LABEL: func.func private @transposed_conv
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}
func.func private @transposed_conv(%x: tensor<1x1x3xf32>, %w: tensor<1x2x3xf32>) -> tensor<1x2x7xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.conv_transpose %x, %w {strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>, output_padding = array<i64: 0>} : (tensor<1x1x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x7xf32>
  %1 = ridge.relu %0 : tensor<1x2x7xf32>
  return %1 : tensor<1x2x7xf32>
}

// -----

// A config set by hand is kept; one without tile sizes gets the decided ones
// and keeps the rest; functions that are no kernels get none.
// CHECK-LABEL: func.func private @by_hand
// CHECK-SAME: ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 2, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}
// CHECK-LABEL: func.func private @by_hand_without_tiles
// CHECK-SAME: ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: ridge.kernel_config
func.func private @by_hand(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, tile_sizes = array<i64: 2, 0>, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
func.func private @by_hand_without_tiles(%x: tensor<8x128xf32>) -> tensor<8x128xf32> attributes {ridge.kernel = "reduction", ridge.kernel_config = {block_size = 64 : i64, vector_width = 1 : i64, warps_per_block = 2 : i64}} {
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

// A reduction over an empty axis (ReduceSum of a 2x0x4 tensor over axis 1,
// the node suite's *_empty_set tests) gets no tile sizes: upstream
// tile-and-fuse cannot slice the empty dimension (it crashed), and untiled
// the kernel's loops leave the result its init, the zero fill.
// CHECK-LABEL: func.func private @empty_axis_sum
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, vector_width = 4 : i64, warps_per_block = 1 : i64}
func.func private @empty_axis_sum(%x: tensor<2x0x4xf32>) -> tensor<2x1x4xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.reduce sum %x {axes = array<i64: 1>} : tensor<2x0x4xf32> -> tensor<2x1x4xf32>
  return %0 : tensor<2x1x4xf32>
}

// -----

// Tensor cores: a contraction whose operands are multiplied in bf16 (here
// cast by the graph; ridge-select-precision rounds f32 ones the same way in
// the body), with its bias + tanh epilogue, is one tensor-core kernel, not
// tiled by the row rule. The tile is the largest of 128x128, 64x64, 32x32
// that still gives each SM a block (docs/kernel-config.md): 1024x1024 makes
// 256 blocks of 64x64 on the target's sm_count, 64 of 128x128 too few.
// CHECK-LABEL: func.func private @mma_bias_tanh
// The operands are cast in the kernel (the casts fused as its prologue), so
// they are staged through registers: 2 stages.
// CHECK-SAME: ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}
// CHECK-NOT: tile_sizes
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_80", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @mma_bias_tanh(%x: tensor<1024x256xf32>, %w: tensor<256x1024xf32>, %b: tensor<1024xf32>) -> tensor<1024x1024xf32> attributes {ridge.kernel = "contraction"} {
    %xb = ridge.cast %x : tensor<1024x256xf32> -> tensor<1024x256xbf16>
    %wb = ridge.cast %w : tensor<256x1024xf32> -> tensor<256x1024xbf16>
    %p = ridge.matmul %xb, %wb : (tensor<1024x256xbf16>, tensor<256x1024xbf16>) -> tensor<1024x1024xbf16>
    %pf = ridge.cast %p : tensor<1024x1024xbf16> -> tensor<1024x1024xf32>
    %s = ridge.add %pf, %b : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
    %t = ridge.tanh %s : tensor<1024x1024xf32>
    return %t : tensor<1024x1024xf32>
  }
}

// -----

// A 4096x4096 product has 1024 blocks of 128x128: the big tile, 8 warps.
// On sm_90a the instruction is wgmma: the 8 warps are 2 warpgroups of 64
// rows each; f16 operands in memory, whole row-major tensors, are loaded by
// TMA in k tiles of 64 (128-byte rows): a producer warp more (288 threads),
// as many stages as k tiles (here 1) but at least 2 and at most 4.
// CHECK-LABEL: func.func private @mma_big
// CHECK-SAME: block_size = 288 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 128, 128, 64>, mma_tma = true, mma_warps = array<i64: 8, 1>
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_90a", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @mma_big(%x: tensor<4096x64xf16>, %w: tensor<64x4096xf16>) -> tensor<4096x4096xf16> attributes {ridge.kernel = "contraction"} {
    %p = ridge.matmul %x, %w : (tensor<4096x64xf16>, tensor<64x4096xf16>) -> tensor<4096x4096xf16>
    return %p : tensor<4096x4096xf16>
  }
}

// -----

// TMA stages: 4 for a long k loop (4 k tiles of 64), 128 KiB of dynamic
// shared memory. The same product on sm_80 (no TMA) fills 3 cp.async stages
// of static shared memory, k tiles of 32.
// CHECK-LABEL: func.func private @mma_tma_deep
// CHECK-SAME: block_size = 288 : i64, mma_instruction = "wgmma", mma_stages = 4 : i64, mma_tile = array<i64: 128, 128, 64>, mma_tma = true
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_90a", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @mma_tma_deep(%x: tensor<4096x256xbf16>, %w: tensor<256x4096xbf16>) -> tensor<4096x4096xbf16> attributes {ridge.kernel = "contraction"} {
    %p = ridge.matmul %x, %w : (tensor<4096x256xbf16>, tensor<256x4096xbf16>) -> tensor<4096x4096xbf16>
    return %p : tensor<4096x4096xbf16>
  }
}

// -----

// Two products of one input (a gated MLP's gate and up projections): TMA
// copies every operand of both (MmaTmaPipeline walks their k tiles through
// the same stages), so the kernel takes it as one product would.
// CHECK-LABEL: func.func private @mma_tma_two_products
// CHECK-SAME: mma_instruction = "wgmma", mma_stages = 4 : i64, mma_tile = array<i64: 64, 64, 64>, mma_tma = true
func.func private @mma_tma_two_products(%x: tensor<128x256xbf16>, %w1: tensor<256x512xbf16>, %w2: tensor<256x512xbf16>) -> tensor<128x512xbf16> attributes {ridge.kernel = "contraction"} {
  %g = ridge.matmul %x, %w1 : (tensor<128x256xbf16>, tensor<256x512xbf16>) -> tensor<128x512xbf16>
  %u = ridge.matmul %x, %w2 : (tensor<128x256xbf16>, tensor<256x512xbf16>) -> tensor<128x512xbf16>
  %m = ridge.mul %g, %u : (tensor<128x512xbf16>, tensor<128x512xbf16>) -> tensor<128x512xbf16>
  return %m : tensor<128x512xbf16>
}

// -----

// An attention output projection reading the heads' outputs [H, L, d]
// with k = (h, d): TMA copies A through a 3-D tensor map (d, rows, head),
// each k tile of 64 one head's d (MmaTmaLayout::outerK).
// CHECK-LABEL: func.func private @mma_tma_heads
// CHECK-SAME: mma_instruction = "wgmma", mma_stages = 4 : i64, mma_tile = array<i64: 64, 64, 64>, mma_tma = true
func.func private @mma_tma_heads(%o: tensor<4x128x64xbf16>, %w: tensor<256x256xbf16>) -> tensor<128x256xbf16> attributes {ridge.kernel = "contraction"} {
  %t = ridge.transpose %o, [1, 0, 2] : tensor<4x128x64xbf16> -> tensor<128x4x64xbf16>
  %r = ridge.reshape %t : tensor<128x4x64xbf16> -> tensor<128x256xbf16>
  %p = ridge.matmul %r, %w : (tensor<128x256xbf16>, tensor<256x256xbf16>) -> tensor<128x256xbf16>
  return %p : tensor<128x256xbf16>
}

// -----

// A sequence-first projection ([L, 1, E], BERT's and ViT's attention input
// read as [1, L, E]): the row loop of extent 1 that the map reads out of
// order changes no stride, and TMA copies the activation as [L, E].
// CHECK-LABEL: func.func private @mma_tma_sequence_first
// CHECK-SAME: mma_instruction = "wgmma", mma_stages = 4 : i64, mma_tile = array<i64: 64, 64, 64>, mma_tma = true
func.func private @mma_tma_sequence_first(%x: tensor<1x128x256xbf16>, %w: tensor<256x768xbf16>) -> tensor<128x1x768xbf16> attributes {ridge.kernel = "contraction"} {
  %t = ridge.transpose %x, [1, 0, 2] : tensor<1x128x256xbf16> -> tensor<128x1x256xbf16>
  %p = ridge.matmul %t, %w : (tensor<128x1x256xbf16>, tensor<256x768xbf16>) -> tensor<128x1x768xbf16>
  return %p : tensor<128x1x768xbf16>
}

// -----

// CHECK-LABEL: func.func private @mma_cp_async_sm80
// CHECK-SAME: block_size = 256 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 128, 128, 32>, mma_warps = array<i64: 2, 4>
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_80", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @mma_cp_async_sm80(%x: tensor<4096x256xbf16>, %w: tensor<256x4096xbf16>) -> tensor<4096x4096xbf16> attributes {ridge.kernel = "contraction"} {
    %p = ridge.matmul %x, %w : (tensor<4096x256xbf16>, tensor<256x4096xbf16>) -> tensor<4096x4096xbf16>
    return %p : tensor<4096x4096xbf16>
  }
}

// -----

// A softmax over 2 rows of 8192 (a vocabulary): 2 rows leave 130 of the 132
// SMs idle, and a warp would walk 8192 elements alone; 8 warps share each
// row (at least 1024 elements a warp), one row a block.
// CHECK-LABEL: func.func private @softmax_long_rows
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, row_warps = 8 : i64, tile_sizes = array<i64: 1, 0>, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @softmax_long_rows(%x: tensor<2x8192xf32>) -> tensor<2x8192xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.softmax %x {axis = 1 : i64} : tensor<2x8192xf32>
  return %0 : tensor<2x8192xf32>
}

// -----

// 2 rows of 2048: 2 warps a row.
// CHECK-LABEL: func.func private @norm_rows_of_2048
// CHECK-SAME: row_warps = 2 : i64
// CHECK-SAME: warps_per_block = 2 : i64
func.func private @norm_rows_of_2048(%x: tensor<2x2048xf32>, %s: tensor<2048xf32>) -> tensor<2x2048xf32> attributes {ridge.kernel = "reduction"} {
  %0 = ridge.rms_norm %x, %s {axis = 1 : i64} : (tensor<2x2048xf32>, tensor<2048xf32>) -> tensor<2x2048xf32>
  return %0 : tensor<2x2048xf32>
}

// -----

// tf32 (f32 operands the body rounds to tf32): mma.sync m16n8k8 even on
// sm_90a when B is an activation (wgmma reads tf32 B from shared memory as
// stored, dropping the bits the body rounds), k tiles of 16 (64-byte rows
// of f32), cp.async copying the stored f32 (the fragment loads round it):
// 3 stages of 128x128x16 fill the 48 KiB.
// CHECK-LABEL: func.func private @mma_tf32
// CHECK-SAME: block_size = 256 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 128, 128, 16>, mma_warps = array<i64: 2, 4>
// CHECK-NOT: mma_tma
func.func private @mma_tf32(%x: tensor<4096x256xf32>, %w: tensor<256x4096xf32>) -> tensor<4096x4096xf32> attributes {ridge.kernel = "contraction"} {
  %p = ridge.matmul %x, %w {ridge.precision = "tf32"} : (tensor<4096x256xf32>, tensor<256x4096xf32>) -> tensor<4096x4096xf32>
  return %p : tensor<4096x4096xf32>
}

// -----

// A tf32 weight (a constant) is stored rounded to tf32 and K-major by the
// lowering, so sm_90a multiplies it with wgmma (m64nNk8, A from registers,
// B from shared memory): one warpgroup per 64 rows (4096 x 256 in 64 x 64
// tiles: 256 blocks). TMA copies both operands' f32 as stored, in k tiles
// of 32 (128-byte rows), a stage per k tile here (2): a producer warp more.
// CHECK-LABEL: func.func private @mma_tf32_weight
// CHECK-SAME: block_size = 160 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>, mma_tma = true, mma_warps = array<i64: 4, 1>
func.func private @mma_tf32_weight(%x: tensor<4096x64xf32>) -> tensor<4096x256xf32> attributes {ridge.kernel = "contraction"} {
  %w = ridge.constant dense<0.1> : tensor<64x256xf32>
  %p = ridge.matmul %x, %w {ridge.precision = "tf32"} : (tensor<4096x64xf32>, tensor<64x256xf32>) -> tensor<4096x256xf32>
  return %p : tensor<4096x256xf32>
}

// -----

// TMA copies tf32's operands as the 4-byte f32 they are stored as: rows of
// k = 36 are 144 bytes, whole 16-byte units (the tail of the second k tile
// of 32 is the copies' zero fill).
// CHECK-LABEL: func.func private @mma_tf32_k36
// CHECK-SAME: mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>, mma_tma = true
func.func private @mma_tf32_k36(%x: tensor<4096x36xf32>) -> tensor<4096x256xf32> attributes {ridge.kernel = "contraction"} {
  %w = ridge.constant dense<0.1> : tensor<36x256xf32>
  %p = ridge.matmul %x, %w {ridge.precision = "tf32"} : (tensor<4096x36xf32>, tensor<36x256xf32>) -> tensor<4096x256xf32>
  return %p : tensor<4096x256xf32>
}

// -----

// On the CPU target, and for f32 operands the body multiplies in f32, the
// contraction stays on the SIMT row rule: tiled by one output element.
// CHECK-LABEL: func.func private @simt_f32
// CHECK-SAME: tile_sizes = array<i64: 1, 1>
// CHECK-NOT: mma_tile
func.func private @simt_f32(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<64x64xf32> attributes {ridge.kernel = "contraction"} {
  %p = ridge.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = ridge.add %p, %b : (tensor<64x64xf32>, tensor<64xf32>) -> tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}

// -----

// Tiles of one element with a loop inside (a global average pool: its sum
// over the window fused into the tile of the mean) run 4 elements a thread
// jammed (vector_width 4) when there are at least 4 x 32 of them; 2 x 16
// channels would fill part of one warp, each lane's loop 4 elements long,
// so they keep one element a thread.
// CHECK-LABEL: func.func private @small_global_pool
// CHECK-SAME: tile_sizes = array<i64: 1, 1, 1, 1>, vector_width = 1 : i64
// CHECK-LABEL: func.func private @global_pool
// CHECK-SAME: tile_sizes = array<i64: 1, 1, 1, 1>, vector_width = 4 : i64
func.func private @small_global_pool(%x: tensor<2x8x8x16xf32>) -> tensor<2x1x1x16xf32> attributes {ridge.kernel = "movement"} {
  %0 = ridge.pool %x {kind = "avg", kernel_shape = array<i64: 8, 8>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, channels_last} : tensor<2x8x8x16xf32> -> tensor<2x1x1x16xf32>
  return %0 : tensor<2x1x1x16xf32>
}
func.func private @global_pool(%x: tensor<2x8x8x64xf32>) -> tensor<2x1x1x64xf32> attributes {ridge.kernel = "movement"} {
  %0 = ridge.pool %x {kind = "avg", kernel_shape = array<i64: 8, 8>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, channels_last} : tensor<2x8x8x64xf32> -> tensor<2x1x1x64xf32>
  return %0 : tensor<2x1x1x64xf32>
}

// -----

// A convolution whose operands ridge-select-precision rounds to bf16 is an
// implicit GEMM on tensor cores: m = 64 output channels, n = 28 x 28 = 784
// pixels, k = 32 x 3 x 3 = 288. Its input is the padded window the body
// gathers (the Pad fused as a prologue), read element by element: staged
// through registers, 2 stages; 13 x 1 blocks of 64x64 are too few for the
// SMs, so the smallest tile, 32x32 (25 x 2 blocks).
// CHECK-LABEL: func.func private @conv_implicit_gemm
// CHECK-SAME: ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_80", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @conv_implicit_gemm(%x: tensor<1x32x28x28xf32>, %w: tensor<64x32x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x28x28xf32> attributes {ridge.kernel = "contraction"} {
    %0 = ridge.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, ridge.precision = "bf16"} : (tensor<1x32x28x28xf32>, tensor<64x32x3x3xf32>, tensor<64xf32>) -> tensor<1x64x28x28xf32>
    %1 = ridge.relu %0 : tensor<1x64x28x28xf32>
    return %1 : tensor<1x64x28x28xf32>
  }
}

// -----

// A classifier (M = 1: a Gemm with transB, a Linear layer's [N, K] weight)
// is memory-bound by its shape and stays fp32: the bandwidth path, one warp
// per output column (gemv), not the row rule's thread per output.
// CHECK-LABEL: func.func private @classifier
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}
// CHECK-NOT: tile_sizes
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_80", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @classifier(%x: tensor<1x512xf32>, %w: tensor<1000x512xf32>, %b: tensor<1000xf32>) -> tensor<1x1000xf32> attributes {ridge.kernel = "contraction"} {
    %0 = ridge.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
    return %0 : tensor<1x1000xf32>
  }
}

// -----

// An attention in its online form runs one query row per thread: 512 rows
// are 16 warps, and 16 one-warp blocks give 16 of the 132 SMs work where
// the default 256 threads would make 2 blocks. 65,536 rows (16 heads of
// 4,096) fill every SM before a block grows to 8 warps.
// CHECK-LABEL: func.func private @attention_rows
// CHECK-SAME: ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}
func.func private @attention_rows(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// Rounded to bf16 (ridge-select-precision) with Q, K, V kernel arguments:
// the tensor-core kernel, 4 warps of 16 query rows (on sm_90a one
// warpgroup: wgmma), two stages of 64 keys (2 x 64 x (64 + 64) x 2 bytes
// = 32 KiB, and 8 KiB for wgmma's query tile); the attention's description
// moves to the function, where ridge-lower-flash-attention reads it.
// CHECK-LABEL: func.func private @attention_tensor_cores
// CHECK-SAME: ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}
// CHECK-SAME: ridge.online_attention = {causal = true, k = array<i64: 1, 0, 32768, 8192, 64, 1>, q = array<i64: 0, 0, 32768, 8192, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>, v = array<i64: 2, 0, 32768, 8192, 64, 1>}
func.func private @attention_tensor_cores(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// Q, K and V sliced from one bf16 argument that a kernel boundary stores
// narrow (ridge-narrow-kernel-boundaries: the projection only the
// attention reads, which rounds it anyway): the views see through the
// widening casts, so the kernel reads the bf16 argument itself. On sm_90a
// K and V, stored as multiplied and viewed with 16-byte strides, are
// copied by TMA (attention_tma): a producer warp beside the warpgroup (160
// threads).
// CHECK-LABEL: func.func private @attention_narrow_qkv
// CHECK-SAME: ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}
// CHECK-SAME: ridge.online_attention = {causal = true, k = array<i64: 0, 256, 0, 64, 768, 1>, q = array<i64: 0, 0, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>, v = array<i64: 0, 512, 0, 64, 768, 1>}
func.func private @attention_narrow_qkv(%qkv: tensor<1x128x768xbf16>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %w0 = ridge.cast %qkv {ridge.boundary_cast} : tensor<1x128x768xbf16> -> tensor<1x128x768xf32>
  %s0 = ridge.slice %w0 starts [0, 0, 0] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
  %w1 = ridge.cast %qkv {ridge.boundary_cast} : tensor<1x128x768xbf16> -> tensor<1x128x768xf32>
  %s1 = ridge.slice %w1 starts [0, 0, 256] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
  %w2 = ridge.cast %qkv {ridge.boundary_cast} : tensor<1x128x768xbf16> -> tensor<1x128x768xf32>
  %s2 = ridge.slice %w2 starts [0, 0, 512] sizes [1, 128, 256] steps [1, 1, 1] : tensor<1x128x768xf32> -> tensor<1x128x256xf32>
  %r0 = ridge.reshape %s0 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
  %r1 = ridge.reshape %s1 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
  %r2 = ridge.reshape %s2 : tensor<1x128x256xf32> -> tensor<1x128x4x64xf32>
  %q = ridge.transpose %r0, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
  %k = ridge.transpose %r1, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
  %v = ridge.transpose %r2, [0, 2, 1, 3] : tensor<1x128x4x64xf32> -> tensor<1x4x128x64xf32>
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, is_causal = true, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// A head dimension of 48: mma.sync (its rows are not whole 64-byte slabs,
// which the wgmma form would also need).
// CHECK-LABEL: func.func private @attention_head_dim_48
// CHECK-SAME: ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "mma_sync", vector_width = 1 : i64, warps_per_block = 4 : i64}
func.func private @attention_head_dim_48(%q: tensor<1x4x128x48xf32>, %k: tensor<1x4x128x48xf32>, %v: tensor<1x4x128x48xf32>) -> tensor<1x4x128x48xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, ridge.precision = "bf16"} : tensor<1x4x128x48xf32>, tensor<1x4x128x48xf32>, tensor<1x4x128x48xf32> -> tensor<1x4x128x48xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x48xf32>
}

// Head dimension 128 on wgmma: two stages (64 KiB) and the query tile
// (16 KiB) are over the 48 KiB of static shared memory; one stage and the
// query tile are exactly 48 KiB.
// CHECK-LABEL: func.func private @attention_head_dim_128
// CHECK-SAME: ridge.kernel_config = {attention_stages = 1 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}
func.func private @attention_head_dim_128(%q: tensor<1x4x128x128xf32>, %k: tensor<1x4x128x128xf32>, %v: tensor<1x4x128x128xf32>) -> tensor<1x4x128x128xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, ridge.precision = "bf16"} : tensor<1x4x128x128xf32>, tensor<1x4x128x128xf32>, tensor<1x4x128x128xf32> -> tensor<1x4x128x128xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x128xf32>
}

// A bf16 model at head dimension 128: TMA's stages live in dynamic shared
// memory, so the kernel keeps two (16 KiB of query tile and 2 x 32 KiB of
// K and V, over the 48 KiB of static shared memory that hold one stage of
// the f32 model's above).
// CHECK-LABEL: func.func private @attention_bf16_head_dim_128
// CHECK-SAME: ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}
func.func private @attention_bf16_head_dim_128(%q: tensor<1x4x128x128xbf16>, %k: tensor<1x4x128x128xbf16>, %v: tensor<1x4x128x128xbf16>) -> tensor<1x4x128x128xbf16> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x4x128x128xbf16>, tensor<1x4x128x128xbf16>, tensor<1x4x128x128xbf16> -> tensor<1x4x128x128xbf16>, tensor<1x4x128x128xbf16>
  return %0#0 : tensor<1x4x128x128xbf16>
}

// Rotary embeddings of Q and K in the kernel (the fusion plan's prologue):
// the description names the views of what they rotate and of their
// [B, S, D/2] caches, constant along the heads (stride 0), and the
// tensor-core kernel computes it.
// CHECK-LABEL: func.func private @attention_rotary
// CHECK-SAME: attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma"
// CHECK-SAME: k = array<i64: 1, 0, 32768, 8192, 64, 1>, k_cos = array<i64: 3, 0, 4096, 0, 32, 1>, k_sin = array<i64: 4, 0, 4096, 0, 32, 1>, q = array<i64: 0, 0, 32768, 8192, 64, 1>, q_cos = array<i64: 3, 0, 4096, 0, 32, 1>, q_sin = array<i64: 4, 0, 4096, 0, 32, 1>
// CHECK-NOT: unsupported
func.func private @attention_rotary(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>, %cos: tensor<1x128x32xf32>, %sin: tensor<1x128x32xf32>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %qr = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  %kr = ridge.rotary_embedding %k, %cos, %sin {rotary_embedding_dim = 64 : i64} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  %0:2 = ridge.attention %qr, %kr, %v {scale = 0.125 : f32, is_causal = true, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// An interleaved rotary embedding (pairs 2k, 2k + 1) is not what the tile
// loads rotate: the online loop, rounded.
// CHECK-LABEL: func.func private @attention_rotary_interleaved
// CHECK-SAME: ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}
// CHECK: ridge.online_attention = {{.*}}unsupported = ["q"]
func.func private @attention_rotary_interleaved(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>, %cos: tensor<1x128x32xf32>, %sin: tensor<1x128x32xf32>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %qr = ridge.rotary_embedding %q, %cos, %sin {rotary_embedding_dim = 64 : i64, interleaved = true} : tensor<1x4x128x64xf32>, tensor<1x128x32xf32>, tensor<1x128x32xf32>
  %0:2 = ridge.attention %qr, %k, %v {scale = 0.125 : f32, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// A softcap is not in the tensor-core kernel: the online loop, rounded.
// CHECK-LABEL: func.func private @attention_softcap
// CHECK-SAME: ridge.kernel_config = {block_size = 32 : i64, vector_width = 1 : i64, warps_per_block = 1 : i64}
// CHECK: ridge.online_attention = {{.*}}unsupported = ["softcap"]
func.func private @attention_softcap(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32, softcap = 50.0 : f32, ridge.precision = "bf16"} : tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32> -> tensor<1x4x128x64xf32>, tensor<1x4x128x128xf32>
  return %0#0 : tensor<1x4x128x64xf32>
}

// CHECK-LABEL: func.func private @attention_many_rows
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, vector_width = 1 : i64, warps_per_block = 8 : i64}
func.func private @attention_many_rows(%q: tensor<1x16x4096x64xf32>, %k: tensor<1x16x4096x64xf32>, %v: tensor<1x16x4096x64xf32>) -> tensor<1x16x4096x64xf32> attributes {ridge.kernel = "attention"} {
  %0:2 = ridge.attention %q, %k, %v {scale = 0.125 : f32} : tensor<1x16x4096x64xf32>, tensor<1x16x4096x64xf32>, tensor<1x16x4096x64xf32> -> tensor<1x16x4096x64xf32>, tensor<1x16x4096x4096xf32>
  return %0#0 : tensor<1x16x4096x64xf32>
}

// -----

// resnet18's last convolutions: m = 512 output channels, n = 7 x 7 = 49
// pixels, k = 512 x 3 x 3 = 4608 (144 k tiles). 8 output tiles of 64x64
// leave 124 of the 132 SMs idle and walk 144 k steps each; split-K over 16
// blocks per tile (128 blocks, one wave) walks 9, plus the second launch
// that adds the partial sums (priced as 4): 13 k steps on the critical path.
// CHECK-LABEL: func.func private @conv_split_k
// CHECK-SAME: mma_instruction = "wgmma", mma_split_k = 16 : i64, mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_90a", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @conv_split_k(%x: tensor<1x512x7x7xf32>, %w: tensor<512x512x3x3xf32>, %b: tensor<512xf32>) -> tensor<1x512x7x7xf32> attributes {ridge.kernel = "contraction"} {
    %0 = ridge.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64, ridge.precision = "bf16"} : (tensor<1x512x7x7xf32>, tensor<512x512x3x3xf32>, tensor<512xf32>) -> tensor<1x512x7x7xf32>
    %1 = ridge.relu %0 : tensor<1x512x7x7xf32>
    return %1 : tensor<1x512x7x7xf32>
  }
}

// -----

// A 512 x 512 x 768 product has 64 blocks of 64x64 for 132 SMs, and two
// splits of its 12 k tiles (of 64: TMA's) would shorten its k loop from 12
// steps to 6 + 4, but would write and read 2 x 2 x 512 x 512 partial sums,
// more than its operands' (512 + 512) x 768 elements: no split.
// CHECK-LABEL: func.func private @square_no_split
// CHECK-SAME: mma_tile = array<i64: 64, 64, 64>, mma_tma = true
// CHECK-NOT: mma_split_k
module attributes {ridge.target = {bandwidth = 3.35e+12 : f64, chip = "sm_90a", gpu = "H100-SXM", l2_bytes = 52428800 : i64, peak_flops = {bf16 = 9.89e+14 : f64, fp16 = 9.89e+14 : f64, fp32 = 6.7e+13 : f64, fp8 = 1.979e+15 : f64, tf32 = 4.94e+14 : f64}, precision = "bf16", registers_per_sm = 65536 : i64, sm_count = 132 : i64, smem_per_sm = 232448 : i64}} {
  func.func private @square_no_split(%x: tensor<512x768xf16>, %w: tensor<768x512xf16>) -> tensor<512x512xf16> attributes {ridge.kernel = "contraction"} {
    %p = ridge.matmul %x, %w : (tensor<512x768xf16>, tensor<768x512xf16>) -> tensor<512x512xf16>
    return %p : tensor<512x512xf16>
  }
}

// -----

// A decode attention whose kernel holds its KV-cache appends (the fusion
// plan's present_key/present_value = Concat(past, new), returned): the
// decode kernel, told where the past rows end (k_split), where the new
// ones are (k_tail: the head split's view of %k) and which arguments the
// concatenations and the result become after bufferization (5, 6, 7:
// after the 5 inputs, in the order returned).
// Its 2 query heads of each key head share a block, which loads each key
// once for both (attention_decode_heads).
// CHECK-LABEL: func.func private @attention_kv_append
// CHECK-SAME: attention_decode = true, attention_decode_heads = 2 : i64, attention_decode_keys = 8 : i64
// CHECK-SAME: ridge.online_attention = {causal = true, k = array<i64: 3, 0, 2560, 1280, 32, 1>, k_present = 5 : i64, k_split = 40 : i64, k_tail = array<i64: 1, 0, 128, 32, 64, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 40 : i64, result = 7 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 4, 0, 2560, 1280, 32, 1>, v_present = 6 : i64, v_split = 40 : i64, v_tail = array<i64: 2, 0, 128, 32, 64, 1>}
func.func private @attention_kv_append(%q: tensor<1x4x2x32xf32>, %k: tensor<1x2x2x32xf32>, %v: tensor<1x2x2x32xf32>, %pk: tensor<1x2x40x32xf32>, %pv: tensor<1x2x40x32xf32>) -> (tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32>, tensor<1x4x2x32xf32>) attributes {ridge.kernel = "attention"} {
  %kt = ridge.transpose %k, [0, 2, 1, 3] : tensor<1x2x2x32xf32> -> tensor<1x2x2x32xf32>
  %ck = ridge.concat %pk, %kt {axis = 2 : i64} : (tensor<1x2x40x32xf32>, tensor<1x2x2x32xf32>) -> tensor<1x2x42x32xf32>
  %vt = ridge.transpose %v, [0, 2, 1, 3] : tensor<1x2x2x32xf32> -> tensor<1x2x2x32xf32>
  %cv = ridge.concat %pv, %vt {axis = 2 : i64} : (tensor<1x2x40x32xf32>, tensor<1x2x2x32xf32>) -> tensor<1x2x42x32xf32>
  %o:2 = ridge.attention %q, %ck, %cv {scale = 0.17677669 : f32, is_causal = true, query_offset = 40 : i64} : tensor<1x4x2x32xf32>, tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32> -> tensor<1x4x2x32xf32>, tensor<1x4x2x42xf32>
  return %ck, %cv, %o#0 : tensor<1x2x42x32xf32>, tensor<1x2x42x32xf32>, tensor<1x4x2x32xf32>
}

// -----

// Both sides skinny (16 rows, 8 columns): A, the larger operand, streams
// by the tall-skinny form; the column form over B's 8 columns would give
// 30 of a warp's 32 lanes no column.
// CHECK-LABEL: func.func private @matmul_both_skinny
// CHECK-SAME: ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}
func.func private @matmul_both_skinny(%x: tensor<16x4096xf32>, %w: tensor<4096x8xf32>) -> tensor<16x8xf32> attributes {ridge.kernel = "contraction"} {
  %0 = ridge.matmul %x, %w : (tensor<16x4096xf32>, tensor<4096x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
