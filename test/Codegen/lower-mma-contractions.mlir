// RUN: ridge-opt %s -split-input-file -ridge-lower-mma-contractions -canonicalize -cse -verify-diagnostics | FileCheck %s

// A kernel configured for tensor cores (ridge-select-kernel-config) becomes
// one gpu.launch: operand tiles staged in swizzled shared memory two stages
// deep, ldmatrix fragments, mma.sync with f32 accumulators carried by the k
// loop, and the epilogue applied to the accumulators before the one store.

// A 64x96 x 96x128 product with bias and tanh, f32 operands rounded to bf16
// by the body (ridge-select-precision), 32x64 block tiles: a 2x2 grid of
// 128 threads; A staged m x k (non-transposing ldmatrix), B k x n
// (transposing ldmatrix); 96 = 3 k steps of 32; 1 x 4 mma tiles per warp,
// 16 accumulators.
// CHECK-LABEL: func.func private @bias_tanh
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[A:.*]] : memref<2048xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4096xbf16, #gpu.address_space<workgroup>>, %[[STAGING:.*]] : memref<2560xf32, #gpu.address_space<workgroup>>)
// CHECK: vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<64x96xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}}, %[[A]]{{.*}} {alignment = 16 : i64} : memref<2048xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: gpu.barrier
// CHECK: %[[ACC:.*]]:16 = scf.for {{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: scf.if {{.*}} -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[B]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-COUNT-7: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.store {{.*}}, %[[A]]
// CHECK: gpu.barrier
// CHECK: scf.yield
// The epilogue stages the accumulators through shared memory of its own
// (the stages cannot hold 4 warps' 16 rows of 32 columns, padded to 40
// words so that neither the pairs' stores nor the runs' loads conflict):
// the bias is loaded once per lane, 16 bytes (the lane's columns are the
// same in every row it stores); each lane stores its fragments' pairs into
// its warp's rows and, after a warp barrier, reads back runs of 4
// consecutive columns of one row, applies the epilogue and stores each run
// with one 16-byte store.
// CHECK: vector.load %arg2[{{.*}}] {alignment = 16 : i64} : memref<128xf32>, vector<4xf32>
// CHECK-COUNT-8: vector.store {{.*}}, %[[STAGING]][{{.*}}] {alignment = 8 : i64} : memref<2560xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NOT: gpu.shuffle
// CHECK: nvvm.bar.warp.sync
// CHECK: vector.load %[[STAGING]][{{.*}}] {alignment = 16 : i64} : memref<2560xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-COUNT-4: math.tanh
// CHECK: vector.store {{.*}}, %arg3[{{.*}}] {alignment = 16 : i64} : memref<64x128xf32>, vector<4xf32>
// CHECK: gpu.terminator

#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func private @bias_tanh(%x: memref<64x96xf32>, %w: memref<96x128xf32>, %bias: memref<128xf32>, %out: memref<64x128xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%out : memref<64x128xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x96xf32>, memref<96x128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %rt = arith.truncf %r : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %rt : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%out, %bias : memref<64x128xf32>, memref<128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %t = arith.addf %v, %bv : f32
    %h = math.tanh %t : f32
    linalg.yield %h : f32
  }
  return
}

// -----

// An attention's output projection reads the heads' outputs [1, heads,
// rows, d] with k = (heads, d): two k loops, not collapsible (the rows lie
// between them), but the innermost one (d = 16) is the operand's last
// dimension and whole chunks of it, so each chunk of 8 k (two 16-byte f32
// loads of one head's d) is read at the indices its flat k decodes to, not
// element by element (readsInnermostKLast).
// CHECK-LABEL: func.func private @head_merge_projection
// CHECK: gpu.launch
// CHECK: vector.load %arg0[%c0, {{.*}}, {{.*}}, {{.*}}] {alignment = 16 : i64} : memref<1x4x32x16xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg0
// CHECK: nvvm.mma.sync
// CHECK: gpu.terminator
#hm_fill = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#hm_a = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
#hm_b = affine_map<(d0, d1, d2, d3, d4) -> (d3, d4, d2)>
#hm_c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func private @head_merge_projection(%o: memref<1x4x32x16xf32>, %w: memref<4x16x64xbf16>, %out: memref<1x32x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#hm_fill], iterator_types = ["parallel", "parallel", "parallel"]} outs(%out : memref<1x32x64xf32>) {
  ^bb0(%x: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#hm_a, #hm_b, #hm_c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%o, %w : memref<1x4x32x16xf32>, memref<4x16x64xbf16>) outs(%out : memref<1x32x64xf32>) {
  ^bb0(%l: f32, %r: bf16, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A patch embedding's GEMM (ridge-assign-channels-last's patchify
// convolution, its patch transpose fused) reads the image as [n, c, oh, kh,
// ow, kw] with rows (n, oh, ow) and k = (c, kh, kw): several row loops and
// several k loops, each read once, the innermost k (kw = 16, a patch row's
// contiguous pixels) last. A is gathered, but in chunks (isChunkedGather):
// each chunk of 8 k is two 16-byte f32 loads at the indices its flat row
// and flat k decode to, not 8 element loads. B, the weight permuted to
// [c, kh, kw, n], has its rows after its k loops: a chunk of 8 n is one
// 16-byte load at the indices its flat k decodes to (readsRowsAfterK),
// not 8 element loads (a warp's 2-byte loads cost 8 sectors a chunk row).
// CHECK-LABEL: func.func private @patch_embedding
// CHECK: gpu.launch
// CHECK: vector.load %arg0[%c0, {{.*}}, {{.*}}, {{.*}}, {{.*}}, {{.*}}] {alignment = 16 : i64} : memref<1x3x4x16x4x16xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg0
// CHECK: vector.load %arg1[{{.*}}, {{.*}}, {{.*}}, {{.*}}] {alignment = 16 : i64} : memref<3x16x16x64xbf16>, vector<8xbf16>
// CHECK-NOT: memref.load %arg1
// CHECK: nvvm.mma.sync
// CHECK: gpu.terminator
#pe_fill = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pe_a = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d1, d5, d2, d6)>
#pe_b = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#pe_c = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func private @patch_embedding(%x: memref<1x3x4x16x4x16xf32>, %w: memref<3x16x16x64xbf16>, %out: memref<1x4x4x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#pe_fill], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%out : memref<1x4x4x64xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#pe_a, #pe_b, #pe_c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x3x4x16x4x16xf32>, memref<3x16x16x64xbf16>) outs(%out : memref<1x4x4x64xf32>) {
  ^bb0(%l: f32, %r: bf16, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A sequence-first projection ([L, 1, E] out of a [1, L, E] activation,
// vit_tiny's QKV): m spans two loops, L = 64 and a batch of one, and A
// reads them in the other order. The unit loop reads index 0 wherever it
// stands, so A is still a row-major m x k matrix, staged with 16-byte
// loads, not element by element.
// CHECK-LABEL: func.func private @sequence_first_projection
// CHECK: gpu.launch
// CHECK: vector.load %arg0[%c0, {{.*}}, {{.*}}] {alignment = 16 : i64} : memref<1x64x32xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg0
// CHECK: nvvm.mma.sync
// CHECK: gpu.terminator
#sf_fill = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sf_a = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
#sf_b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#sf_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func private @sequence_first_projection(%x: memref<1x64x32xf32>, %w: memref<32x32xbf16>, %out: memref<64x1x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#sf_fill], iterator_types = ["parallel", "parallel", "parallel"]} outs(%out : memref<64x1x32xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#sf_a, #sf_b, #sf_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x64x32xf32>, memref<32x32xbf16>) outs(%out : memref<64x1x32xf32>) {
  ^bb0(%l: f32, %r: bf16, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// f16 operands stored as f16 (copied as they are, no rounding), a batch of 3 with
// the weight broadcast along it, B stored n x k (a transposed Gemm's B: the
// mma's own "col" layout, read by the non-transposing ldmatrix), and no
// epilogue: the accumulators are the kernel's result. Only A reads the
// batch loop, so it is part of m: one GEMM of m = 3 x 32 = 96 (3 block
// rows), not 3 GEMMs of 32.
// With 3 stages the operands, stored in the multiply type, fill shared
// memory by cp.async (16 bytes a copy, zero-filled past the operand): tiles
// 0 and 1 in flight before the loop, one commit group each; each iteration
// waits for its tile (at most 1 younger group pending), syncs, issues the
// tile 2 ahead, commits, and multiplies.
// CHECK-LABEL: func.func private @batched_f16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c3, {{.*}} = %c1) {{.*}} workgroup(%[[A:.*]] : memref<3072xf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<3072xf16, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %arg0[{{.*}}], %[[A]][{{.*}}], 8, %{{.*}} {bypassL1} : memref<3x32x64xf16> to memref<3072xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg1[{{.*}}], %[[B]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK: nvgpu.device_async_copy %arg0
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} = %c0 to %c2 step %c1 iter_args
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix %[[B]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: vector.store {{.*}}, %arg2[{{.*}}] {alignment = 16 : i64} : memref<3x32x48xf32>, vector<4xf32>
#a3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b3 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#c3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @batched_f16(%x: memref<3x32x64xf16>, %w: memref<48x64xf16>, %out: memref<3x32x48xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<3x32x48xf32>)
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : memref<3x32x64xf16>, memref<48x64xf16>) outs(%out : memref<3x32x48xf32>) {
  ^bb0(%l: f16, %r: f16, %acc: f32):
    %le = arith.extf %l : f16 to f32
    %re = arith.extf %r : f16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The config asks for tensor cores, but the body multiplies in f32: the
// mechanism reports the mismatch instead of building something else.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{kernel configured for tensor cores is not a tensor-core contraction on buffers: operands are not multiplied in bf16, f16, tf32 or e4m3}}
func.func private @fp32_body(%x: memref<32x32xf32>, %w: memref<32x32xf32>, %out: memref<32x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<32x32xf32>, memref<32x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %p = arith.mulf %l, %r : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// tf32: f32 operands the body rounds to tf32 are staged as the f32 they are
// stored as, by cp.async (3 stages, 4 f32 a 16-byte chunk, k tiles of 16),
// and rounded by the fragment loads (cvt.rna.tf32.f32, what the CPU's
// ridge-expand-tf32-rounding computes). A (m x k) is read with the
// non-transposing ldmatrix of 32-bit elements, one register a matrix; B
// (k x n: 32-bit elements cannot be transposed by ldmatrix) a word a lane
// from a tile swizzled by chunk pairs; mma.sync m16n8k8 with tf32
// multiplicands, 2 k steps a tile.
// CHECK-LABEL: func.func private @tf32_cp_async
// CHECK: gpu.launch {{.*}} workgroup(%[[A:.*]] : memref<1536xf32, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<3072xf32, #gpu.address_space<workgroup>>)
// CHECK: nvgpu.device_async_copy %arg0{{.*}}, %[[A]]{{.*}}, 4, %{{.*}} {bypassL1} : memref<64x64xf32> to memref<1536xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %arg1{{.*}}, %[[B]]{{.*}}, 4, %{{.*}} {bypassL1} : memref<64x128xf32> to memref<3072xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: nvgpu.ldmatrix %[[A]]{{.*}} {numTiles = 4 : i32, transpose = false} : memref<1536xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: memref.load %[[B]]
// CHECK: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: arith.truncf
// CHECK: gpu.terminator
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_cp_async(%x: memref<64x64xf32>, %w: memref<64x128xf32>, %out: memref<64x128xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 32, 64, 16>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// tf32 with wgmma: A is staged as the f32 it is stored as and multiplied
// from registers (wgmma's register-A form, inline PTX: MLIR's op takes A
// only as a descriptor), each warp's 16 rows loaded with ldmatrix and
// rounded by cvt.rna.tf32.f32 as mma.sync's fragments are; B, a constant of
// tf32 values stored K-major ([n, k]: the lowering rounds and transposes a
// tf32 weight at compile time), is read by wgmma from shared memory as it
// is stored (its descriptors advance 32 bytes a k8 step). Accumulators and
// A are pinned before the fence and after the wait.
// CHECK-LABEL: func.func private @tf32_wgmma
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK-SAME: p, 1, 1;
// CHECK: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.mma.sync
memref.global "private" constant @tf32_weight : memref<64x64xf32> = dense<0.5>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_wgmma(%x: memref<64x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "wgmma", mma_stages = 3 : i64, mma_tile = array<i64: 64, 64, 16>, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %w = memref.get_global @tf32_weight : memref<64x64xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// tf32 with wgmma (a hand-written config) of an activation B: wgmma would
// read B's f32 as stored, dropping the 13 low bits where the body rounds
// them to nearest; mma.sync rounds its fragments in registers.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_wgmma_activation(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "wgmma", mma_stages = 3 : i64, mma_tile = array<i64: 64, 64, 16>, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  // expected-error @+1 {{'mma_instruction' "wgmma" cannot multiply these operands: tf32 B is not a compile-time constant of tf32 values (wgmma would drop its low bits where the body rounds them); they need "mma_sync"}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A constant B [k, n] (MN-major): wgmma has no transposed form of tf32.
memref.global "private" constant @tf32_weight_kn : memref<64x64xf32> = dense<0.5>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_wgmma_mn_major(%x: memref<64x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "wgmma", mma_stages = 3 : i64, mma_tile = array<i64: 64, 64, 16>, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %w = memref.get_global @tf32_weight_kn : memref<64x64xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  // expected-error @+1 {{'mma_instruction' "wgmma" cannot multiply these operands: tf32 B is not a K-major tensor read with 16-byte loads (wgmma reads tf32 only K-major); they need "mma_sync"}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The config's 48 KiB check counts 2 bytes an element (48 KiB here); 3
// stages of a 128x128x32 tile of tf32's f32 take 96 KiB, which the
// lowering refuses.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_too_much_shared(%x: memref<128x128xf32>, %w: memref<128x128xf32>, %out: memref<128x128xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 128, 128, 32>, mma_warps = array<i64: 2, 4>, vector_width = 1 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<128x128xf32>)
  // expected-error @+1 {{3 stages of a 128x128x32 tile of 'f32' take 98304 bytes of shared memory, more than 48 KiB}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<128x128xf32>, memref<128x128xf32>) outs(%out : memref<128x128xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// sm_90a's wgmma: one warpgroup per 64 rows (here 1, 128 threads) computes
// a 64x64 tile with wgmma.m64n64k16 from shared-memory descriptors (64-byte
// swizzle: layout 2 in bits 62-63, SBO 512 bytes); A is K-major, B (k x n)
// MN-major, read transposed (layoutB row). Each operand's descriptor is
// built once a stage; the second k16 step's adds to it (A: 32 bytes along
// its rows, 2 in the >> 4 address field; B: 16 rows of 64 bytes, 64).
// Writes by the generic proxy (st.shared) are fenced for the async proxy
// before the barrier; the stage is read completely (wait_group 0) before
// the next one overwrites it.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func private @wgmma_bf16
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[A:.*]] : memref<4096xbf16, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<4096xbf16, #gpu.address_space<workgroup>>)
// CHECK: vector.store {{.*}}, %[[B]]
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// CHECK: memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[D:.*]] = nvvm.wgmma.mma_async %[[DA:.*]], %[[DB:.*]], %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// CHECK-NEXT: %[[DA1:.*]] = arith.addi %[[DA]], %c2_i64 : i64
// CHECK-NEXT: %[[DB1:.*]] = arith.addi %[[DB]], %c64_i64 : i64
// CHECK-NEXT: nvvm.wgmma.mma_async %[[DA1]], %[[DB1]], %[[D]]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}}, %arg2[{{.*}}] {alignment = 16 : i64} : memref<64x64xf32>, vector<4xf32>
func.func private @wgmma_bf16(%x: memref<64x64xbf16>, %w: memref<64x64xbf16>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xbf16>, memref<64x64xbf16>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %acc: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A convolution as an implicit GEMM: 3x3, pad 1, 16 -> 32 channels over a
// 6x6 image, ReLU epilogue. The loops (n, g, oc, oh, ow, ic, kh, kw) are the
// GEMM m = oc (with g, extent 1), n = oh * ow = 36, k = ic * kh * kw = 144.
// The input (B) is the body's padded window (the fused Pad: clamped indices, a
// select to zero), cloned per element at the element's loop indices and
// staged k x n. A row of 6 output pixels is no multiple of 4: each element
// is stored on its own, guarded.
#fill = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func private @conv3x3
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// The weight: its k dimensions (ic, kh, kw) are contiguous, read as one
// through a collapsed view with 16-byte loads, rounded on the way.
// CHECK: %[[W:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1], [2, 3, 4]] : memref<1x32x16x3x3xf32> into memref<1x32x144xf32>
// CHECK: vector.load %[[W]][%c0, {{.*}}, {{.*}}] {alignment = 16 : i64} : memref<1x32x144xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// The input window: the clamp and the padding select of the body, per element.
// CHECK: arith.maxsi
// CHECK: memref.load %arg0[%c0, {{.*}}, {{.*}}, {{.*}}] : memref<1x16x6x6xf32>
// CHECK: arith.select
// CHECK: scf.for {{.*}} = %c0 to %c5 step %c1
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync
// CHECK: gpu.shuffle  xor
// CHECK: arith.maximumf
// CHECK: memref.store {{.*}}, %arg2[{{.*}}] : memref<1x1x32x6x6xf32>
// CHECK-NOT: vector.store {{.*}}, %arg2
// CHECK: gpu.terminator
func.func private @conv3x3(%input: memref<1x16x6x6xf32>, %weight: memref<1x32x16x3x3xf32>, %out: memref<1x1x32x6x6xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %acc = memref.alloc() : memref<1x1x32x6x6xf32>
  linalg.generic {indexing_maps = [#fill], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%acc : memref<1x1x32x6x6xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.generic {indexing_maps = [#w, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%weight : memref<1x32x16x3x3xf32>) outs(%acc : memref<1x1x32x6x6xf32>) {
  ^bb0(%wv: f32, %a: f32):
    %oh = linalg.index 3 : index
    %ow = linalg.index 4 : index
    %ic = linalg.index 5 : index
    %kh = linalg.index 6 : index
    %kw = linalg.index 7 : index
    %h0 = arith.addi %oh, %kh : index
    %w0 = arith.addi %ow, %kw : index
    %h = arith.subi %h0, %c1 : index
    %w = arith.subi %w0, %c1 : index
    %hlo = arith.cmpi sge, %h, %c0 : index
    %hhi = arith.cmpi slt, %h, %c6 : index
    %wlo = arith.cmpi sge, %w, %c0 : index
    %whi = arith.cmpi slt, %w, %c6 : index
    %hin = arith.andi %hlo, %hhi : i1
    %win = arith.andi %wlo, %whi : i1
    %in = arith.andi %hin, %win : i1
    %hc = arith.minsi %h, %c5 : index
    %hs = arith.maxsi %hc, %c0 : index
    %wc = arith.minsi %w, %c5 : index
    %ws = arith.maxsi %wc, %c0 : index
    %x = memref.load %input[%c0, %ic, %hs, %ws] : memref<1x16x6x6xf32>
    %xv = arith.select %in, %x, %zero : f32
    %xt = arith.truncf %xv : f32 to bf16
    %xe = arith.extf %xt : bf16 to f32
    %wt = arith.truncf %wv : f32 to bf16
    %we = arith.extf %wt : bf16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#fill, #fill], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%acc : memref<1x1x32x6x6xf32>) outs(%out : memref<1x1x32x6x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<1x1x32x6x6xf32>
  return
}

// -----

// A gathered operand cannot be copied by cp.async: the config's 3 stages
// are refused with the reason.
#w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 * 2 + d4)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func private @strided_async(%x: memref<1x16x64xbf16>, %w: memref<32x16x2xbf16>, %out: memref<1x32x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 3 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x32x32xf32>)
  // expected-error @+1 {{'mma_stages' 3 fills shared memory with cp.async, which copies 16-byte chunks: an operand read element by element (a convolution's window, or rows that are not whole chunks) needs 2 (register-staged) stages}}
  linalg.generic {indexing_maps = [#w, #x, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%w, %x : memref<32x16x2xbf16>, memref<1x16x64xbf16>) outs(%out : memref<1x32x32xf32>) {
  ^bb0(%wv: bf16, %xv: bf16, %a: f32):
    %we = arith.extf %wv : bf16 to f32
    %xe = arith.extf %xv : bf16 to f32
    %p = arith.mulf %we, %xe : f32
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An epilogue that stores the result transposed (a patch embedding's NCHW
// -> N(HW)C): each element is stored at the epilogue's own indices, the
// permuted (m, n); quads along n are no longer contiguous, so the stores
// are scalar. The bias is indexed through the epilogue's loops too.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @transposed_epilogue
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync
// CHECK: gpu.shuffle  xor
// CHECK: scf.if
// CHECK-NEXT: memref.load %arg2[%[[M:.*]]] : memref<64xf32>
// CHECK: memref.store {{.*}}, %arg3[%{{.*}}, %[[M]]] : memref<48x64xf32>
// CHECK-NOT: vector.store {{.*}}, %arg3
func.func private @transposed_epilogue(%x: memref<64x32xbf16>, %w: memref<32x48xbf16>, %bias: memref<64xf32>, %out: memref<48x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<64x48xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<64x48xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x32xbf16>, memref<32x48xbf16>) outs(%acc : memref<64x48xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#t, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<64x48xf32>, memref<64xf32>) outs(%out : memref<48x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %r = arith.addf %v, %bv : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<64x48xf32>
  return
}

// -----

// Two products over one output tile, summed by the epilogue (a residual
// block's 3x3 convolution and its 1x1 downsampling shortcut, here as two
// GEMMs of different k). Bufferized, they share one zero fill: the first
// accumulates into a copy of it. The kernel runs one k loop per product,
// each into its own accumulators, with a barrier between them, and applies
// the epilogue to both; the copy and the fill are gone.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @two_products
// CHECK-NOT: memref.copy
// CHECK: gpu.launch
// CHECK: %[[FIRST:.*]]:8 = scf.for {{.*}} = %c0 to %c2 step %c1
// CHECK: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK: %[[SECOND:.*]]:8 = scf.for {{.*}} = %c0 to %c4 step %c1
// CHECK: nvvm.mma.sync
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.store {{.*}}, %arg4
// CHECK-NOT: linalg.
func.func private @two_products(%x1: memref<32x64xbf16>, %w1: memref<64x32xbf16>, %x2: memref<32x128xbf16>, %w2: memref<128x32xbf16>, %out: memref<32x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
  %acc1 = memref.alloc() : memref<32x32xf32>
  memref.copy %acc, %acc1 : memref<32x32xf32> to memref<32x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1, %w1 : memref<32x64xbf16>, memref<64x32xbf16>) outs(%acc1 : memref<32x32xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2, %w2 : memref<32x128xbf16>, memref<128x32xbf16>) outs(%acc : memref<32x32xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc1, %acc : memref<32x32xf32>, memref<32x32xf32>) outs(%out : memref<32x32xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %sum = arith.addf %u, %v : f32
    %r = arith.maximumf %sum, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc1 : memref<32x32xf32>
  memref.dealloc %acc : memref<32x32xf32>
  return
}

// -----

// An operand the kernel computes itself (a head split or transpose fused
// into the kernel: a generic of no reduction whose body reads the input at
// its loop indices) is gathered from that body, per element, at the
// element's indices: the temporary buffer, its producer and its private
// copy are gone.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @computed_operand
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.load %arg0[%{{.*}}, %{{.*}}] : memref<32x64xf32>
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: vector.from_elements {{.*}} : vector<8xbf16>
// CHECK: nvvm.mma.sync
// CHECK-NOT: linalg.generic
func.func private @computed_operand(%src: memref<32x64xf32>, %w: memref<32x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<64x32xf32>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%t : memref<64x32xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = memref.load %src[%j, %i] : memref<32x64xf32>
    linalg.yield %v : f32
  }
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%t, %w : memref<64x32xf32>, memref<32x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %lt = arith.truncf %l : f32 to bf16
    %rt = arith.truncf %r : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %rt : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %u = arith.addf %s, %p : f32
    linalg.yield %u : f32
  }
  memref.dealloc %t : memref<64x32xf32>
  return
}

// -----

// An epilogue of two results (an output projection's residual sum, and the
// sum squared for the next RMSNorm): both are computed from the same
// accumulator quad and stored side by side, each with its own 16-byte
// vector store into its own result.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @two_results
// CHECK: gpu.launch
// CHECK: nvvm.mma.sync
// CHECK: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.load %arg2
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: vector.store %{{.*}}, %arg3[%[[M:.*]], %[[N:.*]]] {alignment = 16 : i64} : memref<32x64xf32>, vector<4xf32>
// CHECK-NEXT: vector.from_elements
// CHECK-NEXT: vector.store %{{.*}}, %arg4[%[[M]], %[[N]]] {alignment = 16 : i64} : memref<32x64xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
func.func private @two_results(%x: memref<32x32xbf16>, %w: memref<32x64xbf16>, %res: memref<32x64xf32>, %sum: memref<32x64xf32>, %square: memref<32x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<32x32xbf16>, memref<32x64xbf16>) outs(%acc : memref<32x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%res, %acc : memref<32x64xf32>, memref<32x64xf32>) outs(%sum, %square : memref<32x64xf32>, memref<32x64xf32>) {
  ^bb0(%rv: f32, %v: f32, %o1: f32, %o2: f32):
    %s = arith.addf %rv, %v : f32
    %q = arith.mulf %s, %s : f32
    linalg.yield %s, %q : f32, f32
  }
  memref.dealloc %acc : memref<32x64xf32>
  return
}

// -----

// A result the epilogue reads (accumulates into) is not an elementwise
// result of the product.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// expected-error @+1 {{kernel configured for tensor cores is not a tensor-core contraction on buffers: epilogue reads one of its results}}
func.func private @second_result_read(%x: memref<32x32xbf16>, %w: memref<32x64xbf16>, %sum: memref<32x64xf32>, %total: memref<32x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<32x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<32x32xbf16>, memref<32x64xbf16>) outs(%acc : memref<32x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<32x64xf32>) outs(%sum, %total : memref<32x64xf32>, memref<32x64xf32>) {
  ^bb0(%v: f32, %o1: f32, %o2: f32):
    %t = arith.addf %o2, %v : f32
    linalg.yield %v, %t : f32, f32
  }
  memref.dealloc %acc : memref<32x64xf32>
  return
}

// -----

// The bandwidth path (gemv): a 2 x 256 by [96, 256] f32 product with a
// bias. One warp per output column, 8 warps a block (12 blocks for 96
// columns); each lane reads 16 bytes of the weight row and of both
// activation rows 128 elements apart, fma, then a 5-step shuffle reduction
// per row; lane 0 of a warp inside the columns adds the bias and stores.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @gemv
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c12, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for {{.*}} to %c256 step %c128 iter_args({{.*}}) -> (f32, f32)
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<96x256xf32>, vector<4xf32>
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<2x256xf32>, vector<4xf32>
// CHECK: math.fma
// CHECK-COUNT-10: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.load %arg2
// CHECK: memref.store {{.*}}, %arg3[%c0, {{.*}}] : memref<2x96xf32>
// CHECK: memref.store {{.*}}, %arg3[%c1, {{.*}}] : memref<2x96xf32>
func.func private @gemv(%x: memref<2x256xf32>, %w: memref<96x256xf32>, %bias: memref<96xf32>, %out: memref<2x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<2x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<2x96xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<2x256xf32>, memref<96x256xf32>) outs(%acc : memref<2x96xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<2x96xf32>, memref<96xf32>) outs(%out : memref<2x96xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %r = arith.addf %v, %bv : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<2x96xf32>
  return
}

// -----

// A sequence-first attention output projection (BERT's: [L, 1, E] out of
// the heads' [H, L, d] outputs): B, the weight read as [1, E, H, d] with k
// = (h, d), has a row loop of extent 1 before its one row loop, which
// reads index 0 wherever it stands: its k loops still collapse into one
// contiguous k (isCollapsibleK), and both operands are copied 16 bytes at a
// time by cp.async, four stages deep, not B element by element through
// registers (two stages).
// CHECK-LABEL: func.func private @heads_sequence_first
// CHECK: %[[W:.*]] = memref.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : memref<1x256x4x64xbf16> into memref<1x256x256xbf16>
// CHECK: nvgpu.device_async_copy %arg0[
// CHECK: nvgpu.device_async_copy %[[W]][%c0,
// CHECK-NOT: memref.load %arg1
#a = affine_map<(d0, d1, d2, d3, d4) -> (d3, d0, d4)>
#b = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2, d3, d4)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
func.func private @heads_sequence_first(%o: memref<4x128x64xbf16>, %w: memref<1x256x4x64xbf16>, %out: memref<128x1x256xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 4 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<128x1x256xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%o, %w : memref<4x128x64xbf16>, memref<1x256x4x64xbf16>) outs(%out : memref<128x1x256xf32>) {
  ^bb0(%l: bf16, %r: bf16, %acc: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A classifier head on the class token (vit_tiny's Gather of token 0 fused
// into its Gemm): the activation row is the body's load of the token's
// element at the k index. Its pieces are whole chunks of consecutive
// elements (isChunkedGather), so each lane reads 16 bytes of the token at
// once, as it reads the weight, not 4 elements 16 bytes apart across the
// warp.
#gw = affine_map<(d0, d1, d2) -> (d1, d2)>
#gc = affine_map<(d0, d1, d2) -> (d0, d1)>
#gid = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @gemv_class_token
// CHECK: scf.for {{.*}} to %c256 step %c128 iter_args({{.*}}) -> (f32)
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<96x256xf32>, vector<4xf32>
// CHECK: vector.load %arg0[%c0, %c0, {{.*}}] {alignment = 16 : i64} : memref<1x197x256xf32>, vector<4xf32>
// CHECK-NOT: memref.load %arg0
// CHECK: math.fma
func.func private @gemv_class_token(%x: memref<1x197x256xf32>, %w: memref<96x256xf32>, %out: memref<1x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x96xf32>)
  linalg.generic {indexing_maps = [#gw, #gc], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w : memref<96x256xf32>) outs(%acc : memref<1x96xf32>) {
  ^bb0(%r: f32, %s: f32):
    %k = linalg.index 2 : index
    %l = memref.load %x[%c0, %c0, %k] : memref<1x197x256xf32>
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#gid, #gid], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<1x96xf32>) outs(%out : memref<1x96xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  }
  memref.dealloc %acc : memref<1x96xf32>
  return
}

// -----

// The column path: a weight stored n-contiguous ([256, 96], a MatMul's
// [K, N]) times one activation row, with a bias. Each lane owns 4
// consecutive columns (16-byte loads of a weight row), a warp 128 of them:
// one column group; gemv_split_k = 4 shares of k, 64 rows each, one warp
// each (4 a block); each warp loads 8 weight rows (m = 1) and their
// activations before its first fma (8 x 4 fmas); the shares' partial sums
// ([4, 1, 96]) are stored 16 bytes a row. The 4 shares are the block's 4
// warps: after a barrier (no counter, no second launch) the block's threads
// take the group's outputs in turn, add the shares in order, add the bias
// and store.
#a2 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col2 = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @gemv_columns
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<384xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for {{.*}} step %c8 iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-8: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<256x96xf32>, vector<4xf32>
// CHECK-NOT: math.fma
// CHECK: memref.load %arg0
// CHECK-COUNT-32: math.fma
// CHECK: scf.if
// CHECK: vector.store {{.*}}, %[[PARTIAL]][{{.*}}] {alignment = 16 : i64} : memref<384xf32>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-NOT: memref.atomic_rmw
// CHECK: scf.for {{.*}} to %c128 step %c128
// CHECK-COUNT-4: memref.load %[[PARTIAL]]
// CHECK: memref.load %arg2
// CHECK: memref.store {{.*}}, %arg3[{{.*}}] : memref<1x96xf32>
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[PARTIAL]]
func.func private @gemv_columns(%x: memref<1x256xf32>, %w: memref<256x96xf32>, %bias: memref<96xf32>, %out: memref<1x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, gemv = true, gemv_split_k = 4 : i64, vector_width = 4 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x96xf32>)
  linalg.generic {indexing_maps = [#a2, #b2, #c2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x256xf32>, memref<256x96xf32>) outs(%acc : memref<1x96xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id2, #col2, #id2], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<1x96xf32>, memref<96xf32>) outs(%out : memref<1x96xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %r = arith.addf %v, %bv : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<1x96xf32>
  return
}

// -----

// The column path in f16 (a half-precision export's decode projection,
// [256, 192] n-contiguous): each lane owns 8 columns (16 bytes of f16), a
// warp 256 of them; each element is widened to f32 (its products are exact
// there) and accumulated by fma; 2 shares' f32 partial sums are stored 16
// bytes (4 columns) at a time, and after a barrier the block rounds their
// sum with the bias to f16 as the epilogue does.
#a3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b3 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1) -> (d0, d1)>
#col3 = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @gemv_columns_f16
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<384xf32>
// CHECK: scf.for {{.*}} step %c8 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-8: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<256x192xf16>, vector<8xf16>
// CHECK-NOT: math.fma
// CHECK: memref.load %arg0
// CHECK-NEXT: arith.extf {{.*}} : f16 to f32
// CHECK-COUNT-64: math.fma
// CHECK: scf.if
// CHECK-COUNT-2: vector.store {{.*}}, %[[PARTIAL]][{{.*}}] {alignment = 16 : i64} : memref<384xf32>, vector<4xf32>
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.load %[[PARTIAL]]
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: memref.store {{.*}}, %arg3[{{.*}}] : memref<1x192xf16>
func.func private @gemv_columns_f16(%x: memref<1x256xf16>, %w: memref<256x192xf16>, %bias: memref<192xf16>, %out: memref<1x192xf16>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, gemv = true, gemv_split_k = 2 : i64, vector_width = 4 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x192xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x192xf32>)
  linalg.generic {indexing_maps = [#a3, #b3, #c3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x256xf16>, memref<256x192xf16>) outs(%acc : memref<1x192xf32>) {
  ^bb0(%l: f16, %r: f16, %s: f32):
    %le = arith.extf %l : f16 to f32
    %re = arith.extf %r : f16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id3, #col3, #id3], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<1x192xf32>, memref<192xf16>) outs(%out : memref<1x192xf16>) {
  ^bb0(%v: f32, %bv: f16, %o: f16):
    %h = arith.truncf %v : f32 to f16
    %r = arith.addf %h, %bv : f16
    linalg.yield %r : f16
  }
  memref.dealloc %acc : memref<1x192xf32>
  return
}

// -----

// The row path in bf16 ([96, 256] k-contiguous): a lane reads 8 elements
// of k (16 bytes) of the weight row and of the activation row, a warp 256;
// each pair widened to f32 and accumulated by fma.
#a4 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b4 = affine_map<(d0, d1, d2) -> (d1, d2)>
#c4 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id4 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @gemv_bf16
// CHECK: scf.for {{.*}} to %c256 step %c256 iter_args({{.*}}) -> (f32)
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<96x256xbf16>, vector<8xbf16>
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<1x256xbf16>, vector<8xbf16>
// CHECK-COUNT-8: math.fma
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: memref.store {{.*}}, %arg2[%c0, {{.*}}] : memref<1x96xbf16>
func.func private @gemv_bf16(%x: memref<1x256xbf16>, %w: memref<96x256xbf16>, %out: memref<1x96xbf16>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<1x96xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<1x96xf32>)
  linalg.generic {indexing_maps = [#a4, #b4, #c4], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x256xbf16>, memref<96x256xbf16>) outs(%acc : memref<1x96xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<1x96xf32>) outs(%out : memref<1x96xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %h = arith.truncf %v : f32 to bf16
    linalg.yield %h : bf16
  }
  memref.dealloc %acc : memref<1x96xf32>
  return
}

// -----

// A share count out of range.
// expected-error @+1 {{'ridge.kernel_config' needs 'gemv_split_k' as an integer in [1, 256]}}
func.func private @gemv_too_many_shares(%x: memref<1x256xf32>, %out: memref<1x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, gemv = true, gemv_split_k = 1000 : i64, vector_width = 4 : i64, warps_per_block = 4 : i64}} {
  return
}

// -----

// The tall-skinny path (n = 8 below m = 100: GemvForm::TallSkinny), with a
// bias: 2 rows of A a warp (gemv_rows_per_warp), 16 a block of 8 warps, 7
// blocks. A lane takes 16 bytes of k of each row, a warp 128 elements;
// k = 256 is 2 such pieces, both loaded for both rows (4 loads) before the
// first fma, so the loop runs once. B ([256, 8], rows of two 16-byte
// pieces) is read along n: 8 loads per piece of k, each followed by its 8
// fmas (4 columns, both rows: each value serves both). Every lane reduces
// all 16 sums (80 shuffles), then lane c stores column c of each row: one
// scf.if a row.
#a5 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b5 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c5 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id5 = affine_map<(d0, d1) -> (d0, d1)>
#col5 = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @gemv_tall_skinny
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c7, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for {{.*}} to %c256 step %c256 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-4: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<100x256xf32>, vector<4xf32>
// CHECK-NOT: math.fma
// CHECK: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<256x8xf32>, vector<4xf32>
// CHECK-COUNT-8: math.fma
// CHECK-NEXT: vector.load %arg1
// CHECK-COUNT-120: math.fma
// CHECK-NOT: math.fma
// CHECK-COUNT-80: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.load %arg2
// CHECK: memref.store {{.*}}, %arg3[{{.*}}] : memref<100x8xf32>
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %arg3[{{.*}}] : memref<100x8xf32>
// CHECK-NOT: memref.store
func.func private @gemv_tall_skinny(%x: memref<100x256xf32>, %w: memref<256x8xf32>, %bias: memref<8xf32>, %out: memref<100x8xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_rows_per_warp = 2 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<100x8xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<100x8xf32>)
  linalg.generic {indexing_maps = [#a5, #b5, #c5], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<100x256xf32>, memref<256x8xf32>) outs(%acc : memref<100x8xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id5, #col5, #id5], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<100x8xf32>, memref<8xf32>) outs(%out : memref<100x8xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %r = arith.addf %v, %bv : f32
    linalg.yield %r : f32
  }
  memref.dealloc %acc : memref<100x8xf32>
  return
}

// -----

// Tall and skinny in f16 with 6 columns: B's rows ([128, 6], 12 bytes) are
// not whole 16-byte pieces, so B is read element by element (48 loads a
// piece of 8 k); A by 16-byte pieces of 8 f16, each widened to f32.
#a6 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b6 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c6 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id6 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @gemv_tall_skinny_f16
// CHECK: scf.for {{.*}} to %c128 step %c256 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32)
// CHECK: vector.load %arg0[{{.*}}] {alignment = 16 : i64} : memref<64x128xf16>, vector<8xf16>
// CHECK: memref.load %arg1[{{.*}}] : memref<128x6xf16>
// CHECK-NEXT: arith.extf
// CHECK-NEXT: math.fma
// CHECK-COUNT-47: memref.load %arg1[{{.*}}] : memref<128x6xf16>
// CHECK-NOT: memref.load %arg1
// CHECK-COUNT-30: gpu.shuffle  xor
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: memref.store {{.*}}, %arg2[{{.*}}] : memref<64x6xf16>
func.func private @gemv_tall_skinny_f16(%x: memref<64x128xf16>, %w: memref<128x6xf16>, %out: memref<64x6xf16>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<64x6xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<64x6xf32>)
  linalg.generic {indexing_maps = [#a6, #b6, #c6], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x128xf16>, memref<128x6xf16>) outs(%acc : memref<64x6xf32>) {
  ^bb0(%l: f16, %r: f16, %s: f32):
    %le = arith.extf %l : f16 to f32
    %re = arith.extf %r : f16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id6, #id6], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<64x6xf32>) outs(%out : memref<64x6xf16>) {
  ^bb0(%v: f32, %o: f16):
    %h = arith.truncf %v : f32 to f16
    linalg.yield %h : f16
  }
  memref.dealloc %acc : memref<64x6xf32>
  return
}

// -----

// Tall and skinny split into 3 shares of k (gemv_split_k): k = 1,000 in
// shares of 336 (whole pieces of 4), blockIdx.y the share; each lane
// stores its column's partial sum of each row ([3, 1, 20, 4]), and the
// block arrives at its row block's counter (one per blockIdx.x and batch
// index: 3, kept zero); the last of the 3 shares' blocks to arrive takes
// its 8 warps' rows x 4 columns, a thread an output, adds the shares in
// order and applies the epilogue.
#a8 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b8 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c8 = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func private @gemv_tall_skinny_split_k
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<240xf32>
// CHECK: %[[COUNTERS:.*]] = memref.alloc() {ridge.kept_zero} : memref<3xi32>
// CHECK: gpu.memset %[[COUNTERS]]
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}} = %c3, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c256, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[VERDICT:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: arith.muli {{.*}}, %c336 : index
// CHECK: scf.for
// CHECK-COUNT-4: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %[[PARTIAL]][{{.*}}] : memref<240xf32>
// CHECK: gpu.barrier
// CHECK: memref.atomic_rmw addi %c1_i32, %[[COUNTERS]]
// CHECK: arith.cmpi eq, {{.*}}, %c2_i32
// CHECK: memref.store {{.*}}, %[[VERDICT]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} to %c32 step %c256
// CHECK-COUNT-3: memref.load %[[PARTIAL]]
// CHECK: memref.store {{.*}}, %arg2[{{.*}}] : memref<20x4xf32>
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[PARTIAL]]
// CHECK: memref.dealloc %[[COUNTERS]]
func.func private @gemv_tall_skinny_split_k(%x: memref<20x1000xf32>, %w: memref<1000x4xf32>, %out: memref<20x4xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_split_k = 3 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<20x4xf32>)
  linalg.generic {indexing_maps = [#a8, #b8, #c8], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<20x1000xf32>, memref<1000x4xf32>) outs(%out : memref<20x4xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Rows a warp out of range.
// expected-error @+1 {{'ridge.kernel_config' needs 'gemv_rows_per_warp' as an integer in [1, 4]}}
func.func private @gemv_too_many_rows(%x: memref<100x256xf32>, %out: memref<100x8xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_rows_per_warp = 8 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  return
}

// -----

// Rows a warp without the bandwidth path.
// expected-error @+1 {{'ridge.kernel_config' has 'gemv_rows_per_warp' without 'gemv'}}
func.func private @gemv_rows_without_gemv(%x: memref<100x256xf32>, %out: memref<100x8xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv_rows_per_warp = 2 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  return
}

// -----

// The bandwidth path asked of a product that is not skinny (64 x 64 x 64).
#a7 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b7 = affine_map<(d0, d1, d2) -> (d2, d1)>
#c7 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @gemv_not_skinny(%x: memref<64x64xf32>, %w: memref<64x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  // expected-error @+1 {{kernel configured for the bandwidth path ('gemv') is not a skinny contraction of f32, f16 or bf16 operands it reads}}
  linalg.generic {indexing_maps = [#a7, #b7, #c7], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Rows a warp asked of a decode-step GEMV (m = 1 over a [96, 256] weight):
// only the tall-skinny form computes several rows of A a warp.
#a9 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b9 = affine_map<(d0, d1, d2) -> (d1, d2)>
#c9 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @gemv_rows_on_weight_form(%x: memref<1x256xf32>, %w: memref<96x256xf32>, %out: memref<1x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_rows_per_warp = 2 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x96xf32>)
  // expected-error @+1 {{'gemv_rows_per_warp' applies to the tall-skinny bandwidth path}}
  linalg.generic {indexing_maps = [#a9, #b9, #c9], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x256xf32>, memref<96x256xf32>) outs(%out : memref<1x96xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Shares of k asked of the same GEMV: its warps own whole columns (k split
// over lanes), there is nothing to share out.
#a10 = affine_map<(d0, d1, d2) -> (d0, d2)>
#b10 = affine_map<(d0, d1, d2) -> (d1, d2)>
#c10 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @gemv_shares_on_k_contiguous(%x: memref<1x256xf32>, %w: memref<96x256xf32>, %out: memref<1x96xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, gemv_split_k = 4 : i64, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x96xf32>)
  // expected-error @+1 {{'gemv_split_k' applies to the column and tall-skinny bandwidth paths}}
  linalg.generic {indexing_maps = [#a10, #b10, #c10], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<1x256xf32>, memref<96x256xf32>) outs(%out : memref<1x96xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Split-K (mma_split_k = 4): 320 = 10 k tiles, 3 per split (the last split
// takes 1), so each block's k range is computed from its split (blockIdx.z)
// and the cp.async prologue is guarded by it. Each split stores its
// accumulators as partial sums, thread-fastest (coalesced), then arrives at
// its output tile's counter (thread 0: a release fence, an atomic add); the
// last of the 4 to arrive sets the counter back to zero, and its block adds
// the 4 splits in order (split 0, then 1 to 3) and applies the epilogue: one
// launch. The counters (one per tile) are zeroed by a memset that
// ridge-plan-device-memory may drop, being marked ridge.kept_zero. Each
// partial sum is stored and read under its accumulator's row < m and column
// < n: a tile's padding moves no bytes.
// CHECK-LABEL: func.func private @split_k
// CHECK: %[[PARTIALS:.*]] = memref.alloc() : memref<8192xf32>
// CHECK: %[[COUNTERS:.*]] = memref.alloc() {ridge.kept_zero} : memref<2xi32>
// CHECK: gpu.memset %[[COUNTERS]], %c0_i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}} = %c4) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}}, {{.*}}, %[[VERDICT:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: arith.maxui {{.*}}, %c10 : index
// CHECK: %[[COUNT:.*]] = arith.minui {{.*}}, %c3 : index
// CHECK: scf.if
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} = %c0 to %[[COUNT]] step %c1
// CHECK: nvvm.mma.sync
// CHECK-COUNT-8: memref.store {{.*}}, %[[PARTIALS]]
// CHECK-NOT: math.tanh
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK-NEXT: %[[ARRIVED:.*]] = memref.atomic_rmw addi %c1_i32, %[[COUNTERS]][%[[TILE:.*]]]
// CHECK-NEXT: %[[LAST:.*]] = arith.cmpi eq, %[[ARRIVED]], %c3_i32
// CHECK-NEXT: scf.if %[[LAST]] {
// CHECK-NEXT: memref.store %c0_i32, %[[COUNTERS]][%[[TILE]]]
// CHECK-NEXT: llvm.fence syncscope("device") acquire
// CHECK: memref.store {{.*}}, %[[VERDICT]][%c0]
// CHECK: gpu.barrier
// CHECK: memref.load %[[VERDICT]][%c0]
// CHECK: scf.if
// CHECK: memref.load %[[PARTIALS]]
// CHECK: scf.for {{.*}} = %c1 to %c4 step %c1 iter_args
// CHECK: scf.if {{.*}} -> (f32) {
// CHECK: memref.load %[[PARTIALS]]
// CHECK: } else {
// CHECK: arith.addf
// CHECK: gpu.shuffle  xor
// CHECK: math.tanh
// CHECK: vector.store {{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[PARTIALS]]
// CHECK: memref.dealloc %[[COUNTERS]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func private @split_k(%x: memref<32x320xbf16>, %w: memref<320x64xbf16>, %bias: memref<64xf32>, %out: memref<32x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_split_k = 4 : i64, mma_stages = 3 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<32x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<32x320xbf16>, memref<320x64xbf16>) outs(%out : memref<32x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %acc: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%out, %bias : memref<32x64xf32>, memref<64xf32>) outs(%out : memref<32x64xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %t = arith.addf %v, %bv : f32
    %h = math.tanh %t : f32
    linalg.yield %h : f32
  }
  return
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{'ridge.kernel_config' needs 'mma_split_k' as an integer in [1, 16]}}
func.func private @split_k_zero(%x: memref<32x32xbf16>, %w: memref<32x32xbf16>, %out: memref<32x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_split_k = 0 : i64, mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  return
}

// -----

// TMA (mma_tma, sm_90a): the host encodes each operand's tensor map (A: 192
// rows of 128 k, the batch-like d0 folded into m since B does not read it,
// boxes of 64 k by the tile's 64 rows; B: k x n, MN-major, boxes of one
// 64-element slab by 64 k rows; the 128-byte swizzle) into a stack slot and
// passes the 128 bytes by value. The kernel takes 74,800 bytes of dynamic
// shared memory (3 stages of A and B, 6 mbarriers, 1 KiB for alignment),
// 4 consumer warps and a producer warp. Thread 0 initializes the full
// barriers (1 arrival) and the empty ones (128, every consumer thread);
// the producer's lane 0 waits for a stage's release from the second round
// on, expects 24 KiB on its full barrier and issues 1 + 2 tensor copies;
// the consumers wait on the full barrier, issue 4 wgmmas (128-byte-swizzle
// descriptors), keep one group in flight, release the previous stage, and
// apply the epilogue.
// CHECK-LABEL: func.func private @ridgeTensorMapEncodeTiled(!llvm.ptr, !llvm.ptr, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i32, i32, i32, i32, i32, i32)
// CHECK-LABEL: func.func private @tma
// CHECK: %[[SLOT_A:.*]] = llvm.alloca %c1_i64 x !llvm.array<16 x i64> {alignment = 64 : i64}
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: call @ridgeTensorMapEncodeTiled(%[[SLOT_A]], {{.*}}, %c9_i32, %c2_i32, %c128_i64, %c192_i64, %c1_i64, %c1_i64, %c1_i64, %c256_i64, %c0_i64, %c0_i64, %c0_i64, %c64_i32, %c64_i32, %c1_i32, %c1_i32, %c1_i32, %c3_i32)
// CHECK: %[[MAP_A:.*]] = llvm.load %[[SLOT_A]] {alignment = 64 : i64} : !llvm.ptr -> !llvm.array<16 x i64>
// CHECK: call @ridgeTensorMapEncodeTiled({{.*}}, %c9_i32, %c2_i32, %c128_i64, %c128_i64, %c1_i64, %c1_i64, %c1_i64, %c256_i64, %c0_i64, %c0_i64, %c0_i64, %c64_i32, %c64_i32, %c1_i32, %c1_i32, %c1_i32, %c3_i32)
// CHECK: %[[MAP_B:.*]] = llvm.load
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c3, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c160, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c74800_i32
// CHECK: gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<12288xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[STAGES_B:.*]] = memref.view {{.*}} to memref<24576xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[PTR_A:.*]] = builtin.unrealized_conversion_cast %[[MAP_A]] : !llvm.array<16 x i64> to !llvm.ptr
// CHECK: %[[PTR_B:.*]] = builtin.unrealized_conversion_cast %[[MAP_B]] : !llvm.array<16 x i64> to !llvm.ptr
// CHECK: memref.view {{.*}} to memref<6xi64, #gpu.address_space<workgroup>>
// CHECK-COUNT-3: nvvm.mbarrier.init {{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c24576_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[PTR_A]], %[[FULL]], box[
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[PTR_B]], %[[FULL]], box[
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (!llvm.struct<(f32,
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The epilogue stages through B's stages (48 KiB hold the 4 warps' 16 rows
// of 128 columns, padded to 136 words; A's 24 KiB do not), once the 128
// consumer threads have passed a named barrier.
// CHECK: nvvm.barrier id = %c1_i32 number_of_threads = %c128_i32
// CHECK: vector.load %arg2
// CHECK: vector.store {{.*}}, %[[STAGES_B]][{{.*}}] {alignment = 8 : i64} : memref<24576xbf16, #gpu.address_space<workgroup>>, vector<4xbf16>
// CHECK: nvvm.bar.warp.sync
// CHECK: vector.load %[[STAGES_B]][{{.*}}] {alignment = 16 : i64} : memref<24576xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: vector.store {{.*}}, %arg3
#a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d2)>
func.func private @tma(%x: memref<2x96x128xbf16>, %w: memref<128x128xbf16>, %bias: memref<128xf32>, %out: memref<2x96x128xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 160 : i64, mma_instruction = "wgmma", mma_stages = 3 : i64, mma_tile = array<i64: 64, 128, 64>, mma_tma = true, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<2x96x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : memref<2x96x128xbf16>, memref<128x128xbf16>) outs(%out : memref<2x96x128xf32>) {
  ^bb0(%l: bf16, %r: bf16, %acc: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%out, %bias : memref<2x96x128xf32>, memref<128xf32>) outs(%out : memref<2x96x128xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %t = arith.addf %v, %bv : f32
    linalg.yield %t : f32
  }
  return
}

// -----

// Two products fed by TMA (a gated MLP's gate and up projections of one
// input): one tensor map for the input both read, one for each weight; the
// producer walks the first product's k tiles, then the second's, through
// the same stages, each a step of the barriers' one sequence, and the
// consumers multiply each product's tiles into its own accumulators (the
// first product's last stage released by the second's first step), then
// the epilogue combines the two.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func private @tma_two_products
// CHECK-COUNT-3: call @ridgeTensorMapEncodeTiled
// CHECK-NOT: call @ridgeTensorMapEncodeTiled
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 {
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL1:.*]], %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[FULL1]], box[
// CHECK: scf.for %[[K2:.*]] = %c0 to %c2 step %c1 {
// CHECK: arith.addi %[[K2]], %c2
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL2:.*]], %c16384_i32
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[FULL2]], box[
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (!llvm.struct<(f32,
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (!llvm.struct<(f32,
// CHECK: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: arith.mulf
// CHECK: vector.store {{.*}}, %arg3
func.func private @tma_two_products(%x: memref<64x128xbf16>, %w1: memref<128x64xbf16>, %w2: memref<128x64xbf16>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 160 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 64>, mma_tma = true, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %gate = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%gate : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w1 : memref<64x128xbf16>, memref<128x64xbf16>) outs(%gate : memref<64x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  %up = memref.alloc() : memref<64x64xf32>
  linalg.fill ins(%zero : f32) outs(%up : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w2 : memref<64x128xbf16>, memref<128x64xbf16>) outs(%up : memref<64x64xf32>) {
  ^bb0(%l: bf16, %r: bf16, %s: f32):
    %le = arith.extf %l : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gate, %up : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%g: f32, %u: f32, %o: f32):
    %m = arith.mulf %g, %u : f32
    linalg.yield %m : f32
  }
  memref.dealloc %gate : memref<64x64xf32>
  memref.dealloc %up : memref<64x64xf32>
  return
}

// -----

// mma_tma is sm_90a's: not with mma.sync.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{'ridge.kernel_config' needs 'mma_tma' as a bool, true only with 'mma_instruction' "wgmma" (TMA is sm_90a's)}}
func.func private @tma_mma_sync(%x: memref<32x32xbf16>, %w: memref<32x32xbf16>, %out: memref<32x32xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 32, 32>, mma_tma = true, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  return
}

// -----

// TMA copies bytes: an f32 operand rounded to bf16 on the way cannot be
// loaded by it.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tma_f32_operand(%x: memref<64x64xf32>, %w: memref<64x64xbf16>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 160 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 64>, mma_tma = true, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  // expected-error @+1 {{'mma_tma' needs TMA to copy operand A, but the operand is stored as another type than it is multiplied in}}
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xbf16>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: bf16, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %r : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// tf32 fed by TMA: the tensor maps copy the stored f32 (CUtensorMapDataType
// 7, float32) in k tiles of 32 (128-byte rows, the 128-byte swizzle, which
// the A fragments' ldmatrix addresses read as well: chunk c of row r at
// c ^ (r % 8)); A is rounded in registers, B (a constant of tf32 values) is
// read by wgmma as stored. A and the accumulators are pinned around each
// group, so none stays in flight across k tiles (wait_group 0).
// CHECK-LABEL: func.func private @tf32_tma
// CHECK: call @ridgeTensorMapEncodeTiled({{.*}}, %c7_i32, %c2_i32, %c64_i64, %c64_i64, %c1_i64, %c1_i64, %c1_i64, %c256_i64, %c0_i64, %c0_i64, %c0_i64, %c32_i32, %c64_i32, %c1_i32, %c1_i32, %c1_i32, %c3_i32)
// CHECK: call @ridgeTensorMapEncodeTiled({{.*}}, %c7_i32,
// CHECK: memref.view {{.*}} to memref<4096xf32, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.wgmma.wait.group.sync.aligned 1
memref.global "private" constant @tf32_tma_weight : memref<64x64xf32> = dense<0.25>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @tf32_tma(%x: memref<64x64xf32>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 160 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 32>, mma_tma = true, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %w = memref.get_global @tf32_tma_weight : memref<64x64xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf32>, memref<64x64xf32>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to tf32
    %rt = arith.truncf %r : f32 to tf32
    %le = arith.extf %lt : tf32 to f32
    %re = arith.extf %rt : tf32 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// fp8 (docs/precision.md): the activation's scale reduction (max |x| into a
// 0-d buffer) becomes two launches before the GEMM's: one thread zeroes the
// buffer, then 8 blocks of 128 threads (16 elements each) fold the maximum
// in, one atomic max of the bits per warp. The GEMM stages A by computing
// the quantizing producer's element (the scale once, from one load of the
// amax; each element scaled and clamped, rounded to e4m3 in pairs by cvt;
// through registers, so 2 stages) and loads the e4m3 weight (n x k) 16 bytes
// at a time; both K-major, 64-byte rows (k tiles of 64), multiplied by
// wgmma m64n64k32 e4m3, 2 per k tile, the first with scale-d 0: the threads
// add each k tile's sum to their f32 accumulators (Hopper's fp8
// accumulation keeps fewer bits than f32). The epilogue reads the scale
// again to undo it.
// CHECK-LABEL: func.func private @fp8_weight
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   memref.store %{{.*}}, %[[AMAX:.*]][] : memref<f32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c8, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-COUNT-16: math.absf
// CHECK:   gpu.shuffle  xor
// CHECK:   memref.extract_aligned_pointer_as_index %[[AMAX]]
// CHECK:   llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[A:.*]] : memref<8192xf8E4M3FN, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<8192xf8E4M3FN, #gpu.address_space<workgroup>>)
// CHECK:   memref.load %[[AMAX]][] : memref<f32>
// CHECK-COUNT-8: nvvm.convert.f32x2.to.f8x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK:   vector.bitcast %{{.*}} : vector<8xi16> to vector<16xf8E4M3FN>
// CHECK:   vector.load %arg1{{.*}} {alignment = 16 : i64} : memref<64x128xf8E4M3FN>, vector<16xf8E4M3FN>
// CHECK:   vector.store {{.*}}, %[[A]]{{.*}} : memref<8192xf8E4M3FN, #gpu.address_space<workgroup>>, vector<16xf8E4M3FN>
// CHECK:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK:   nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 32>, D[<f32>, <one>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK:   nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-COUNT-32: arith.addf
// CHECK:   memref.load %[[AMAX]][] : memref<f32>
// CHECK:   gpu.terminator
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @fp8_weight(%x: memref<128x128xf32>, %w: memref<64x128xf8E4M3FN>, %out: memref<128x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "wgmma", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 64>, mma_warps = array<i64: 4, 1>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %amax = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%x : memref<128x128xf32>) outs(%amax : memref<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  }
  %q = memref.alloc() : memref<128x128xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %amax : memref<128x128xf32>, memref<f32>) outs(%q : memref<128x128xf8E4M3FN>) {
  ^bb0(%in: f32, %m: f32, %o: f8E4M3FN):
    %bits = arith.bitcast %m : f32 to i32
    %c23 = arith.constant 23 : i32
    %e = arith.shrui %bits, %c23 : i32
    %c262 = arith.constant 262 : i32
    %s = arith.subi %c262, %e : i32
    %sb = arith.shli %s, %c23 : i32
    %scale = arith.bitcast %sb : i32 to f32
    %y = arith.mulf %in, %scale : f32
    %lo = arith.constant -448.0 : f32
    %hi = arith.constant 448.0 : f32
    %c1 = arith.maximumf %y, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  %acc = memref.alloc() : memref<128x64xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<128x64xf32>)
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %w : memref<128x128xf8E4M3FN>, memref<64x128xf8E4M3FN>) outs(%acc : memref<128x64xf32>) {
  ^bb0(%l: f8E4M3FN, %r: f8E4M3FN, %s: f32):
    %le = arith.extf %l : f8E4M3FN to f32
    %re = arith.extf %r : f8E4M3FN to f32
    %p = arith.mulf %le, %re : f32
    %sum = arith.addf %s, %p : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%acc, %amax : memref<128x64xf32>, memref<f32>) outs(%out : memref<128x64xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %r = arith.mulf %v, %m : f32
    linalg.yield %r : f32
  }
  memref.dealloc %q : memref<128x128xf8E4M3FN>
  memref.dealloc %acc : memref<128x64xf32>
  memref.dealloc %amax : memref<f32>
  return
}

// -----

// e4m3 is multiplied by wgmma only (sm_90a).
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#bt = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @fp8_mma_sync(%x: memref<64x64xf8E4M3FN>, %w: memref<64x64xf8E4M3FN>, %out: memref<64x64xf32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 64, 64, 64>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<64x64xf32>)
  // expected-error @+1 {{e4m3 operands need 'mma_instruction' "wgmma" (sm_90a) and both operands K-major (wgmma reads e4m3 only K-major)}}
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x64xf8E4M3FN>, memref<64x64xf8E4M3FN>) outs(%out : memref<64x64xf32>) {
  ^bb0(%l: f8E4M3FN, %r: f8E4M3FN, %s: f32):
    %le = arith.extf %l : f8E4M3FN to f32
    %re = arith.extf %r : f8E4M3FN to f32
    %p = arith.mulf %le, %re : f32
    %sum = arith.addf %s, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// The amax of a result (an fp8 consumer's scale that
// ridge-move-scale-reductions-to-producers moved here): a one-thread launch
// zeroes it before the GEMM's; each bounds guard of the epilogue yields the
// thread's max |x| of the quad it stored (unchanged outside the result),
// and after the last store each warp reduces it with shuffles and its first
// lane folds the bits in with one atomic max. No launch reads the result
// again.
// CHECK-LABEL: func.func private @result_amax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   memref.store %{{.*}}, %arg3[] : memref<f32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   nvvm.mma.sync
// CHECK:   %[[GUARDED:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:     math.tanh
// CHECK:     vector.store {{.*}}, %arg2[{{.*}}] {alignment = 16 : i64} : memref<64x128xf32>, vector<4xf32>
// CHECK-COUNT-4: math.absf
// CHECK:     scf.yield
// CHECK:   } else {
// CHECK:     scf.yield
// CHECK-COUNT-3: scf.if %{{.*}} -> (f32)
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:   scf.if
// CHECK:     memref.extract_aligned_pointer_as_index %arg3
// CHECK:     llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK:   gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK-NOT: linalg.
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func private @result_amax(%x: memref<64x96xf32>, %w: memref<96x128xf32>, %out: memref<64x128xf32>, %amax: memref<f32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  linalg.fill ins(%zero : f32) outs(%out : memref<64x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x96xf32>, memref<96x128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%l: f32, %r: f32, %acc: f32):
    %lt = arith.truncf %l : f32 to bf16
    %rt = arith.truncf %r : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %rt : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%out : memref<64x128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %h = math.tanh %v : f32
    linalg.yield %h : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%out : memref<64x128xf32>) outs(%amax : memref<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  }
  return
}

// -----

// On the bandwidth path, lane 0 stores a whole column: it folds the
// column's magnitudes into the amax with one atomic of its own.
// CHECK-LABEL: func.func private @gemv_result_amax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   memref.store %{{.*}}, %arg3[] : memref<f32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c12, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   scf.if
// CHECK:     memref.store {{.*}}, %arg2[%c0, {{.*}}] : memref<2x96xf32>
// CHECK:     math.absf
// CHECK:     memref.store {{.*}}, %arg2[%c1, {{.*}}] : memref<2x96xf32>
// CHECK:     math.absf
// CHECK:     llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK-NOT: linalg.
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func private @gemv_result_amax(%x: memref<2x256xf32>, %w: memref<96x256xf32>, %out: memref<2x96xf32>, %amax: memref<f32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 256 : i64, gemv = true, vector_width = 4 : i64, warps_per_block = 8 : i64}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  linalg.fill ins(%zero : f32) outs(%out : memref<2x96xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<2x256xf32>, memref<96x256xf32>) outs(%out : memref<2x96xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %p = arith.mulf %l, %r : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%out : memref<2x96xf32>) outs(%amax : memref<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  }
  return
}

// -----

// The amax must be of what the kernel stores: an accumulator that the
// epilogue goes on to change is not a result.
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
// expected-error @+1 {{kernel configured for tensor cores is not a tensor-core contraction on buffers: kernel has ops after the amax of its results}}
func.func private @amax_of_accumulator(%x: memref<64x96xf32>, %w: memref<96x128xf32>, %out: memref<64x128xf32>, %amax: memref<f32>) attributes {ridge.kernel = "contraction", ridge.kernel_config = {block_size = 128 : i64, mma_instruction = "mma_sync", mma_stages = 2 : i64, mma_tile = array<i64: 32, 64, 32>, mma_warps = array<i64: 2, 2>, vector_width = 1 : i64, warps_per_block = 4 : i64}} {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<64x128xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  linalg.fill ins(%zero : f32) outs(%acc : memref<64x128xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x96xf32>, memref<96x128xf32>) outs(%acc : memref<64x128xf32>) {
  ^bb0(%l: f32, %r: f32, %s: f32):
    %lt = arith.truncf %l : f32 to bf16
    %rt = arith.truncf %r : f32 to bf16
    %le = arith.extf %lt : bf16 to f32
    %re = arith.extf %rt : bf16 to f32
    %p = arith.mulf %le, %re : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction", "reduction"]} ins(%acc : memref<64x128xf32>) outs(%amax : memref<f32>) {
  ^bb0(%in: f32, %m: f32):
    %abs = math.absf %in : f32
    %max = arith.maximumf %m, %abs : f32
    linalg.yield %max : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<64x128xf32>) outs(%out : memref<64x128xf32>) {
  ^bb0(%v: f32, %o: f32):
    %h = math.tanh %v : f32
    linalg.yield %h : f32
  }
  memref.dealloc %acc : memref<64x128xf32>
  return
}
