// RUN: ridge-opt %s -split-input-file -ridge-lower-flash-attention -canonicalize -cse -verify-diagnostics | FileCheck %s

// An attention kernel configured for tensor cores (ridge-select-kernel-config
// read its ridge.online_attention) becomes one gpu.launch; the online loop it
// had is gone.

// GPT-2's layer: Q, K, V are the head-split views of one [1, 128, 768]
// buffer (offsets 0, 256, 512; heads 64 apart, rows 768), causal. A block
// per 64 query rows of a head: a 2 x 4 x 1 grid of 128 threads; two stages
// of 64 x 64 bf16 keys and values in shared memory.
// CHECK-LABEL: func.func private @gpt2_causal
// CHECK-NOT: linalg.fill
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : memref<1x128x768xf32> into memref<98304xf32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[K:.*]] : memref<8192xbf16, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<8192xbf16, #gpu.address_space<workgroup>>)
// The query tile, 16-byte loads rounded to bf16, through the key stage into
// A fragments (ldmatrix, not transposed), once.
// CHECK: vector.load %[[FLAT]]{{.*}} {alignment = 16 : i64} : memref<98304xf32>, vector<4xf32>
// CHECK: arith.truncf {{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK: vector.store {{.*}}, %[[K]]{{.*}} {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK-COUNT-4: nvgpu.ldmatrix %[[K]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: gpu.barrier
// Key tile 0 into the first stages; the loop runs to the block's causal
// limit, carrying 2 maxima, 2 sums and 32 O accumulators.
// CHECK: vector.store {{.*}}, %[[V]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} = %c0 to %{{.*}} step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32
// The next tile's loads in flight.
// CHECK: scf.if {{.*}} -> (vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// S = Q K^T: 4 k steps x 8 fragments.
// CHECK: nvgpu.ldmatrix %[[K]]{{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK-COUNT-31: nvvm.mma.sync
// Keys past the end, and past a row's causal limit, give -inf, tested only
// in the tiles that hold some (a block-uniform branch).
// CHECK: %[[PAST:.*]] = arith.cmpi sgt, %{{.*}}, %c128
// CHECK: %[[DIAGONAL:.*]] = arith.cmpi sgt
// CHECK: %[[EDGE:.*]] = arith.ori %[[PAST]], %[[DIAGONAL]]
// CHECK: scf.if %[[EDGE]] -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: arith.cmpi sge, {{.*}}, %c128
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// The row maximum over the quad, the rescale and the probabilities (the
// multi-function unit's exp2).
// CHECK: gpu.shuffle  xor
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O += P V: the probabilities rounded and packed as A fragments, V read
// with the transposing ldmatrix.
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: nvgpu.ldmatrix %[[V]]{{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-COUNT-32: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// The prefetched tile into the other stage.
// CHECK: scf.if
// CHECK: vector.store {{.*}}, %[[K]]
// CHECK: vector.store {{.*}}, %[[V]]
// CHECK: gpu.barrier
// CHECK: scf.yield
// O / l, 8-byte stores of rows inside the sequence.
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: vector.store {{.*}}, %arg1[{{.*}}] {alignment = 8 : i64} : memref<1x4x128x64xf32>, vector<2xf32>
// CHECK: gpu.terminator
func.func private @gpt2_causal(%qkv: memref<1x128x768xf32>, %out: memref<1x4x128x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 0, 64, 768, 1>, k = array<i64: 0, 256, 0, 64, 768, 1>, v = array<i64: 0, 512, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x128x64xf32>)
  return
}

// -----

// BERT's layer: an additive padding mask [N, 1, Skv] broadcast over the
// query rows (stride 0), read per score at clamped indices; head dimension
// 128 with one stage (two would pass 48 KiB); 8 query heads sharing 2 key
// heads (grouped-query attention: key head = head / 4); 100 query rows, a
// partial tile.
// CHECK-LABEL: func.func private @masked_gqa
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c8, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup({{.*}} : memref<8192xf16, #gpu.address_space<workgroup>>, {{.*}} : memref<8192xf16, #gpu.address_space<workgroup>>)
// CHECK: arith.divui {{.*}}, %c4 : index
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<800xf32>
// CHECK: math.fma
// CHECK: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: vector.store
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK: arith.cmpi slt, {{.*}}, %c100
func.func private @masked_gqa(%q: memref<1x8x100x128xf32>, %k: memref<1x2x100x128xf32>, %v: memref<1x2x100x128xf32>, %mask: memref<8x1x100xf32>, %out: memref<1x8x100x128xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 1 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 102400, 12800, 128, 1>, k = array<i64: 1, 0, 25600, 12800, 128, 1>, v = array<i64: 2, 0, 25600, 12800, 128, 1>, mask = array<i64: 3, 0, 0, 100, 0, 1>, query_offset = 0 : i64, round_to = f16, scale = 0.088388 : f64, shape = array<i64: 1, 8, 2, 100, 100, 128, 128>}} {
  return
}

// -----

// A float16 export: Q, K, V and O are f16 buffers (round_to = f16, their
// own type). Q is staged through registers as read (one 16-byte load of 8
// elements a chunk, no conversion); K and V, two stages, are copied by
// cp.async straight into their stages (16 bytes a copy, rows past the 100
// keys zero-filled: a source size of 0 from a clamped row): tile 0 before
// the loop; each iteration waits for its tile, syncs once, then issues the
// next tile into the other stage, which every warp finished at that
// barrier; no register staging, no second barrier. O is rounded to f16 and
// stored as 4-byte pairs.
// CHECK-LABEL: func.func private @half_async_copies
// CHECK: gpu.launch {{.*}} workgroup(%[[K:.*]] : memref<8192xf16, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<8192xf16, #gpu.address_space<workgroup>>)
// CHECK: vector.load {{.*}} {alignment = 16 : i64} : memref<51200xf16>, vector<8xf16>
// CHECK-NOT: arith.truncf
// CHECK: vector.store {{.*}}, %[[K]]
// CHECK: arith.minsi {{.*}}, %c99
// CHECK: arith.select {{.*}}, %c8, %c0
// CHECK: nvgpu.device_async_copy {{.*}}, %[[K]][{{.*}}], 8, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_copy {{.*}}, %[[V]][
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: nvgpu.device_async_copy {{.*}}, %[[K]][
// CHECK: nvgpu.device_async_copy {{.*}}, %[[V]][
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield
// CHECK: arith.truncf {{.*}} : vector<2xf32> to vector<2xf16>
// CHECK: vector.store {{.*}}, %arg3[{{.*}}] {alignment = 4 : i64} : memref<1x8x100x64xf16>, vector<2xf16>
func.func private @half_async_copies(%q: memref<1x8x100x64xf16>, %k: memref<1x8x100x64xf16>, %v: memref<1x8x100x64xf16>, %out: memref<1x8x100x64xf16>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 51200, 6400, 64, 1>, k = array<i64: 1, 0, 51200, 6400, 64, 1>, v = array<i64: 2, 0, 51200, 6400, 64, 1>, query_offset = 0 : i64, round_to = f16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 8, 8, 100, 100, 64, 64>}} {
  return
}

// -----

// What the kernel does not compute is an error, not a silent fallback: the
// policy gives such an attention no attention_tile.
// expected-error @below {{kernel configured for the tensor-core attention is not one it computes: the tensor-core kernel lacks: softcap}}
func.func private @softcap(%q: memref<1x1x64x64xf32>, %out: memref<1x1x64x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>, unsupported = ["softcap"]}} {
  return
}

// -----

// Q, K, V and the result stored in bf16 at the kernel's boundaries
// (ridge-narrow-kernel-boundaries: only the attention reads the projection,
// and only a bf16 contraction reads O): the views read the bf16 argument,
// its tiles copied by cp.async as stored, and the online loop's rounding of
// its f32 result into the bf16 result buffer is the kernel's own store.
// CHECK-LABEL: func.func private @narrow_boundaries
// CHECK-NOT: linalg.generic
// CHECK: gpu.launch
// CHECK: nvgpu.device_async_copy
// CHECK: arith.truncf {{.*}} to vector<2xbf16>
// CHECK: vector.store {{.*}}, %arg1{{.*}} : memref<1x4x128x64xbf16>, vector<2xbf16>
// CHECK-NOT: linalg.generic
func.func private @narrow_boundaries(%qkv: memref<1x128x768xbf16>, %out: memref<1x4x128x64xbf16>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 0, 64, 768, 1>, k = array<i64: 0, 256, 0, 64, 768, 1>, v = array<i64: 0, 512, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  %o = memref.alloc() : memref<1x4x128x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x4x128x64xf32>) outs(%out : memref<1x4x128x64xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// Anything else writing the result is not what the kernel stores.
func.func private @result_epilogue(%q: memref<1x1x64x64xf32>, %out: memref<1x1x64x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  %o = memref.alloc() : memref<1x1x64x64xf32>
  // expected-error @below {{ridge-lower-flash-attention stores the attention's result itself: an op writing the result other than its rounding to the result's type would be lost}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : memref<1x1x64x64xf32>) outs(%out : memref<1x1x64x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// expected-error @below {{ridge-lower-flash-attention runs on buffers (after bufferization), on a kernel whose last argument is its f32, f16 or bf16 result memref<1x1x64x64xf32>}}
func.func private @on_tensors(%q: tensor<1x1x64x64xf32>) -> tensor<1x1x64x64xf32> attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  return %q : tensor<1x1x64x64xf32>
}

// -----

// The same layer on sm_90a (mma_instruction "wgmma"): the 4 warps are one
// warpgroup, and each product is one wgmma per k16 step. S = Q K^T reads
// both operands from shared memory: the query tile has its own (a third
// workgroup buffer, staged once in the 64-byte-swizzled slabs wgmma reads,
// as K and V are) and is never held in registers. ptxas reused the
// registers of a register-held Q after the first key tile (on an H200
// every later tile's scores came out wrong); FlashAttention-3 reads Q from
// shared memory too. O += P V takes P from registers (inline PTX: MLIR's
// nvvm.wgmma.mma_async takes A only as a descriptor), its accumulators
// pinned on both sides of the fence and the wait.
// CHECK-LABEL: func.func private @gpt2_causal_wgmma
// CHECK: gpu.launch {{.*}} workgroup(%[[K:.*]] : memref<8192xbf16, #gpu.address_space<workgroup>>, %[[V:.*]] : memref<8192xbf16, #gpu.address_space<workgroup>>, %[[Q:.*]] : memref<4096xbf16, #gpu.address_space<workgroup>>)
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: vector.store {{.*}}, %[[Q]]
// The first key and value tiles, then the async-proxy fence that makes
// them and the query tile visible to wgmma, then the barrier.
// CHECK: vector.store {{.*}}, %[[K]]
// CHECK: vector.store {{.*}}, %[[V]]
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// S = Q K^T: 4 k steps of m64n64k16 from two descriptors, both K-major;
// the first starts the accumulators at zero.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// O += P V: 4 k steps of m64n64k16, V MN-major (imm-trans-b 1).
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}p, 1, 1, 1;
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: gpu.barrier
// CHECK: scf.yield
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvgpu.ldmatrix
// CHECK: gpu.terminator
func.func private @gpt2_causal_wgmma(%qkv: memref<1x128x768xf32>, %out: memref<1x4x128x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 0, 64, 768, 1>, k = array<i64: 0, 256, 0, 64, 768, 1>, v = array<i64: 0, 512, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%out : memref<1x4x128x64xf32>)
  return
}

// -----

// The same layer with its projection stored in bf16 (attention_tma: K and
// V stored as multiplied, sm_90a): FlashAttention-3's warp specialization.
// The host encodes K's, V's and (stored as multiplied too) Q's tensor maps:
// [64 cols, 128 rows, 4 heads] of the bf16 QKV buffer from byte 512 (K),
// 1024 (V) and 0 (Q), rows 1536 bytes apart and heads 128, boxes of one
// 64-byte slab (32 elements) by the 64 rows of a tile, the 64-byte swizzle
// wgmma's descriptors read. All shared memory is dynamic (the query tile,
// two stages of K and V, a full and an empty mbarrier per stage and a pair
// for the query tile, a pipeline of one stage; 1 KiB of alignment slack:
// 42032 bytes), and a fifth warp is the producer.
// CHECK-LABEL: func.func private @ridgeTensorMapEncodeTiled
// CHECK-LABEL: func.func private @gpt2_causal_tma
// CHECK: %[[BASE:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK: arith.addi %[[BASE]], %c512_i64
// CHECK: call @ridgeTensorMapEncodeTiled({{.*}}, %c9_i32, %c3_i32, %c64_i64, %c128_i64, %c4_i64, %c1_i64, %c1_i64, %c1536_i64, %c128_i64, %c0_i64, %c0_i64, %c32_i32, %c64_i32, %c1_i32, %c1_i32, %c1_i32, %c2_i32)
// CHECK: arith.addi %[[BASE]], %c1024_i64
// CHECK: call @ridgeTensorMapEncodeTiled({{.*}}, %c9_i32, %c3_i32, %c64_i64, %c128_i64, %c4_i64,
// CHECK: %[[QPTR:.*]] = llvm.inttoptr %[[BASE]] : i64 to !llvm.ptr
// CHECK: call @ridgeTensorMapEncodeTiled(%{{.*}}, %[[QPTR]], %c9_i32, %c3_i32, %c64_i64, %c128_i64, %c4_i64,
// CHECK: gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c160, {{.*}} = %c1, {{.*}} = %c1) dynamic_shared_memory_size %c42032_i32 {
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<4096xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<8192xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<8192xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4xi64, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<2xi64, #gpu.address_space<workgroup>>
// CHECK: %[[KMAP:.*]] = builtin.unrealized_conversion_cast {{.*}} : !llvm.array<16 x i64> to !llvm.ptr
// CHECK: %[[VMAP:.*]] = builtin.unrealized_conversion_cast {{.*}} : !llvm.array<16 x i64> to !llvm.ptr
// CHECK: %[[QMAP:.*]] = builtin.unrealized_conversion_cast {{.*}} : !llvm.array<16 x i64> to !llvm.ptr
// No thread loads the query tile. The barriers (full: one arrival and the
// bytes; empty: the 128 consumer threads; the query tile's) are published
// by the block's one barrier.
// CHECK-NOT: vector.store
// CHECK-COUNT-3: nvvm.mbarrier.init {{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK: nvvm.mbarrier.init {{.*}}, %c128_i32 : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// The producer (a lane of the fifth warp): the query tile's 8 KiB on its
// barrier, then for each of the block's key tiles the release of its stage
// (from the third tile on), the stage's 16 KiB announced, two boxes of K
// and two of V.
// CHECK: scf.if
// CHECK: scf.if
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[QBAR:.*]], %c8192_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[QMAP]], %[[QBAR]], box[%c0_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[QMAP]], %[[QBAR]], box[%c32_i32,
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULL:.*]], %c16384_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[KMAP]], %[[FULL]], box[%c0_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[KMAP]], %[[FULL]], box[%c32_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[VMAP]], %[[FULL]], box[%c0_i32,
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[VMAP]], %[[FULL]], box[%c32_i32,
// The consumers: they wait for the query tile once, then each key tile
// waits for its stage's full barrier, and after both products every thread
// releases it; no block barrier, no thread copies Q, K or V.
// CHECK: } else {
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %c0_i32
// CHECK-NEXT: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK-NOT: gpu.barrier
// CHECK-COUNT-4: llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NOT: gpu.barrier
// CHECK: nvvm.mbarrier.arrive
// CHECK-NEXT: scf.yield
// CHECK: vector.store {{.*}} : memref<1x4x128x64xbf16>, vector<2xbf16>
// CHECK: gpu.terminator
// CHECK-NOT: gpu.barrier
// CHECK-NOT: nvgpu.device_async_copy
func.func private @gpt2_causal_tma(%qkv: memref<1x128x768xbf16>, %out: memref<1x4x128x64xbf16>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 0, 64, 768, 1>, k = array<i64: 0, 256, 0, 64, 768, 1>, v = array<i64: 0, 512, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  return
}

// -----

// TMA copies K and V as stored: an f32 key, which the kernel rounds to bf16
// as it stages it, is not one a tensor copy moves.
// expected-error @below {{kernel configured for the tensor-core attention is not one it computes: its key is not stored in the multiply type (TMA copies it as stored)}}
func.func private @tma_f32_keys(%qkv: memref<1x128x768xf32>, %out: memref<1x4x128x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 0, 64, 768, 1>, k = array<i64: 0, 256, 0, 64, 768, 1>, v = array<i64: 0, 512, 0, 64, 768, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  return
}

// -----

// A key view TMA cannot describe: rows 100 elements (200 bytes) apart.
// expected-error @below {{its key view is not one a tensor map describes (a 16-byte aligned start, unit stride along the head dimension, outer strides of whole 16-byte units)}}
func.func private @tma_odd_rows(%q: memref<1x1x64x64xbf16>, %k: memref<1x1x64x100xbf16>, %out: memref<1x1x64x64xbf16>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 1, 0, 6400, 6400, 100, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  return
}

// -----

// TMA is sm_90a's: a config asking for it with mma.sync is malformed.
// expected-error @below {{'ridge.kernel_config' needs 'attention_tma' as a bool, true only with 'mma_instruction' "wgmma" (TMA is sm_90a's)}}
func.func private @tma_mma_sync(%q: memref<1x1x64x64xbf16>, %out: memref<1x1x64x64xbf16>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, attention_tma = true, block_size = 160 : i64, mma_instruction = "mma_sync", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  return
}

// -----

// wgmma reads K and V rows as whole 64-byte slabs: a head dimension of 48
// is refused (the policy gives it mma.sync).
// expected-error @below {{kernel configured for the tensor-core attention is not one it computes: head dimension 48 is not a multiple of 32 (whole 64-byte slabs)}}
func.func private @wgmma_head_dim_48(%q: memref<1x1x64x48xf32>, %out: memref<1x1x64x48xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 3072, 3072, 48, 1>, k = array<i64: 0, 0, 3072, 3072, 48, 1>, v = array<i64: 0, 0, 3072, 3072, 48, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 48, 48>}} {
  return
}

// -----

// With wgmma the query tile takes shared memory of its own: two stages of
// head dimension 128 (64 KiB) and the query tile (16 KiB) do not fit the
// 48 KiB of static shared memory (the policy takes one stage: 48 KiB).
// expected-error @below {{kernel configured for the tensor-core attention is not one it computes: its 2 stage(s) need 81920 bytes of shared memory, over the 49152 of static shared memory}}
func.func private @wgmma_two_stages_of_128(%q: memref<1x1x64x128xf32>, %out: memref<1x1x64x128xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 8192, 8192, 128, 1>, k = array<i64: 0, 0, 8192, 8192, 128, 1>, v = array<i64: 0, 0, 8192, 8192, 128, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 128, 128>}} {
  return
}

// -----

// One warpgroup is 64 query rows.
// expected-error @below {{'ridge.kernel_config' needs 'mma_instruction' as "mma_sync" or "wgmma" (one warpgroup: 64 query rows)}}
func.func private @wgmma_32_rows(%q: memref<1x1x64x64xf32>, %out: memref<1x1x64x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 32, 64>, block_size = 64 : i64, mma_instruction = "wgmma", vector_width = 1 : i64, warps_per_block = 2 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  return
}

// -----

// expected-error @below {{head dimension 72 is not a multiple of 16 from 16 to 128}}
func.func private @odd_head_dim(%q: memref<1x1x64x72xf32>, %out: memref<1x1x64x72xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4608, 4608, 72, 1>, k = array<i64: 0, 0, 4608, 4608, 72, 1>, v = array<i64: 0, 0, 4608, 4608, 72, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 72, 72>}} {
  return
}

// -----

// Split keys (attention_splits, flash-decoding): the tensor-core launch has
// a block per (query tile, split); each split walks its 4 of the 16 key
// tiles and writes its rows' O, maximum and sum to a partial buffer of
// [4 splits, 64 rows, 64 + 2, padded to 68: whole 16 bytes], then arrives
// at the tile's counter (one, kept zero); the last of the 4 to arrive
// combines the tile's rows, a thread a row, into the result: one launch.
// CHECK-LABEL: func.func private @split_keys
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<17408xf32>
// CHECK: %[[COUNTERS:.*]] = memref.alloc() {ridge.kept_zero} : memref<1xi32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c1, {{.*}} = %c1)
// CHECK: scf.for {{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK: nvvm.mma.sync
// CHECK: vector.store {{.*}}, %[[PARTIAL]]{{.*}} : memref<17408xf32>, vector<2xf32>
// CHECK: memref.store {{.*}}, %[[PARTIAL]]
// CHECK: gpu.barrier
// CHECK: memref.atomic_rmw addi %c1_i32, %[[COUNTERS]]
// CHECK: arith.cmpi eq, {{.*}}, %c3_i32
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} to %c64 step %c128
// CHECK: scf.for {{.*}} = %c0 to %c4
// CHECK: arith.maximumf
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: memref.store {{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[PARTIAL]]
// CHECK: memref.dealloc %[[COUNTERS]]
func.func private @split_keys(%q: memref<1x1x64x64xf32>, %k: memref<1x1x1024x64xf32>, %v: memref<1x1x1024x64xf32>, %out: memref<1x1x64x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_splits = 4 : i64, attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 1, 0, 65536, 65536, 64, 1>, v = array<i64: 2, 0, 65536, 65536, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 1024, 64, 64>}} {
  return
}

// -----

// The f32 decode kernel (attention_decode): one query row of 2 heads over
// 1024 keys in 4 splits: a block of 4 warps per (split, head); warp w takes
// the runs of 8 keys (attention_decode_keys) at 8 (4 i + w), each lane 2
// consecutive ones of the 64 dimensions, read as one 8-byte vector (the
// query row's too); all of a run's K and V rows are loaded (8 x (1 + 1))
// before the first shuffle uses one; each dot product is a 5-step shuffle
// reduction (40, interleaved); keys past the split's end read the last key
// and score -inf; one rescale per run; the warps' states meet in shared
// memory (a lane's e-th element at lane + 32 e: conflict-free), the
// splits' in the partial buffer [4, 2 rows, 64 + 2 padded to 68], stored
// as one vector of a lane's 2 elements. Each block then arrives at its
// row's counter (2, kept zero), and the last of the 4 splits' blocks
// combines the row (thread 0 of its block: one query head a block): one
// launch.
// CHECK-LABEL: func.func private @decode
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<544xf32>
// CHECK: %[[COUNTERS:.*]] = memref.alloc() {ridge.kept_zero} : memref<2xi32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c4, {{.*}} = %c2, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[WARPS:.*]] : memref<272xf32, #gpu.address_space<workgroup>>, %[[VERDICT:.*]] : memref<1xi32, #gpu.address_space<workgroup>>)
// CHECK: vector.load {{.*}} {alignment = 8 : i64} : memref<128xf32>, vector<2xf32>
// CHECK: scf.for %[[FIRST:.*]] = {{.*}} to %[[END:.*]] step %c32 iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK: %[[LAST:.*]] = arith.subi %[[END]], %c1
// CHECK-COUNT-16: vector.load {{.*}} {alignment = 8 : i64} : memref<131072xf32>, vector<2xf32>
// CHECK-NOT: vector.load
// CHECK-NOT: memref.load
// CHECK: gpu.shuffle  xor
// CHECK-COUNT-39: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: arith.select {{.*}}, %cst{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f"
// CHECK: memref.store {{.*}}, %[[WARPS]]
// CHECK: gpu.barrier
// CHECK: vector.store {{.*}}, %[[PARTIAL]][{{.*}}] {alignment = 8 : i64} : memref<544xf32>, vector<2xf32>
// CHECK: memref.store {{.*}}, %[[PARTIAL]]
// CHECK: gpu.barrier
// CHECK: llvm.fence syncscope("device") release
// CHECK: memref.atomic_rmw addi %c1_i32, %[[COUNTERS]]
// CHECK: arith.cmpi eq, {{.*}}, %c3_i32
// CHECK: llvm.fence syncscope("device") acquire
// CHECK: memref.store {{.*}}, %[[VERDICT]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[VERDICT]]
// CHECK: scf.for {{.*}} = %c0 to %c4
// CHECK: arith.maximumf
// CHECK: memref.store {{.*}}, %arg3
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: memref.dealloc %[[PARTIAL]]
// CHECK: memref.dealloc %[[COUNTERS]]
func.func private @decode(%q: memref<1x2x1x64xf32>, %k: memref<1x2x1024x64xf32>, %v: memref<1x2x1024x64xf32>, %out: memref<1x2x1x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_keys = 8 : i64, attention_splits = 4 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 128, 64, 64, 1>, k = array<i64: 1, 0, 65536, 65536, 64, 1>, v = array<i64: 2, 0, 65536, 65536, 64, 1>, query_offset = 0 : i64, scale = 1.250000e-01 : f64, shape = array<i64: 1, 2, 2, 1, 1024, 64, 64>}} {
  return
}

// -----

// A decode step whose kernel holds its KV-cache appends (GQA: 4 query heads
// over 2 key heads, 2 query rows, 40 past keys and 2 new ones): each key
// element is one load, from the past rows' buffer below k_split and from
// the new rows' view above it (the buffer and the index selected by the
// row); the block of each key head's first query head and last query row
// stores every key and value it reads into the concatenations (arguments
// 5 and 6), keys of the run past the split's end not at all, after all 16
// loads of the run and before the first score; the result goes to
// argument 7.
// CHECK-LABEL: func.func private @decode_kv_append
// CHECK-DAG: %[[PK:.*]] = memref.collapse_shape %arg5
// CHECK-DAG: %[[PV:.*]] = memref.collapse_shape %arg6
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c8, {{.*}} = %c1)
// CHECK: scf.for
// CHECK: arith.select {{.*}} : memref<?xf32>
// CHECK-COUNT-16: memref.load
// CHECK-NOT: memref.load
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %[[PK]]
// CHECK: memref.store {{.*}}, %[[PV]]
// CHECK: math.fma
// CHECK: memref.store {{.*}}, %arg7
func.func private @decode_kv_append(%q: memref<1x4x2x32xf32>, %k: memref<1x2x2x32xf32>, %v: memref<1x2x2x32xf32>, %pk: memref<1x2x40x32xf32>, %pv: memref<1x2x40x32xf32>, %ck: memref<1x2x42x32xf32>, %cv: memref<1x2x42x32xf32>, %out: memref<1x4x2x32xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_keys = 8 : i64, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, k = array<i64: 3, 0, 2560, 1280, 32, 1>, k_present = 5 : i64, k_split = 40 : i64, k_tail = array<i64: 1, 0, 128, 32, 64, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 40 : i64, result = 7 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 4, 0, 2560, 1280, 32, 1>, v_present = 6 : i64, v_split = 40 : i64, v_tail = array<i64: 2, 0, 128, 32, 64, 1>}} {
  return
}

// -----

// GQA: the block of attention_decode_heads = 2 query heads of one key head
// loads each key of its run once (8 x (1 + 1) loads) and scores it for
// both heads (2 x 8 dot products, 80 shuffles); each head keeps its own
// maximum, sum and O (3 x 2 carried values), its own rows in shared memory
// (4 warps x 2 heads x 36) and its own result row. The grid's y is 2 head
// pairs x 2 query rows.
// CHECK-LABEL: func.func private @decode_gqa_heads
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c4, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128, {{.*}} = %c1, {{.*}} = %c1) workgroup(%[[WARPS:.*]] : memref<288xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32)
// CHECK-COUNT-16: memref.load
// CHECK-NOT: memref.load
// CHECK-COUNT-80: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
// CHECK: gpu.barrier
// CHECK-COUNT-2: memref.store {{.*}}, %arg3
func.func private @decode_gqa_heads(%q: memref<1x4x2x32xf32>, %k: memref<1x2x42x32xf32>, %v: memref<1x2x42x32xf32>, %out: memref<1x4x2x32xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_heads = 2 : i64, attention_decode_keys = 8 : i64, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, k = array<i64: 1, 0, 2688, 1344, 32, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 40 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 2, 0, 2688, 1344, 32, 1>}} {
  return
}

// -----

// Heads a block that do not divide a key head's 2 query heads.
// expected-error @below {{'attention_decode_heads' 4 does not divide the 2 query heads of a key head}}
func.func private @decode_gqa_heads_not_dividing(%q: memref<1x4x2x32xf32>, %k: memref<1x2x42x32xf32>, %v: memref<1x2x42x32xf32>, %out: memref<1x4x2x32xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_heads = 4 : i64, attention_decode_keys = 8 : i64, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, k = array<i64: 1, 0, 2688, 1344, 32, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 40 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 2, 0, 2688, 1344, 32, 1>}} {
  return
}

// -----

// The same under a causal mask whose last query row sees 41 of the 42
// keys: no block reads every key, so none could write the
// concatenations.
// expected-error @below {{kernel configured for the decode attention is not one it computes: its last query row sees 41 of 42 keys, so no block reads every key of the KV-cache concatenation it writes}}
func.func private @decode_kv_append_short_offset(%q: memref<1x4x2x32xf32>, %k: memref<1x2x2x32xf32>, %v: memref<1x2x2x32xf32>, %pk: memref<1x2x40x32xf32>, %pv: memref<1x2x40x32xf32>, %ck: memref<1x2x42x32xf32>, %cv: memref<1x2x42x32xf32>, %out: memref<1x4x2x32xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_keys = 8 : i64, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, k = array<i64: 3, 0, 2560, 1280, 32, 1>, k_present = 5 : i64, k_split = 40 : i64, k_tail = array<i64: 1, 0, 128, 32, 64, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 39 : i64, result = 7 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 4, 0, 2560, 1280, 32, 1>, v_present = 6 : i64, v_split = 40 : i64, v_tail = array<i64: 2, 0, 128, 32, 64, 1>}} {
  return
}

// -----

// A concatenation argument of another shape than the keys'.
// expected-error @below {{a KV-cache append's concatenation (argument 5) is not a contiguous buffer of the keys' shape and type}}
func.func private @decode_kv_append_bad_present(%q: memref<1x4x2x32xf32>, %k: memref<1x2x2x32xf32>, %v: memref<1x2x2x32xf32>, %pk: memref<1x2x40x32xf32>, %pv: memref<1x2x40x32xf32>, %ck: memref<1x2x41x32xf32>, %cv: memref<1x2x42x32xf32>, %out: memref<1x4x2x32xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_keys = 8 : i64, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, k = array<i64: 3, 0, 2560, 1280, 32, 1>, k_present = 5 : i64, k_split = 40 : i64, k_tail = array<i64: 1, 0, 128, 32, 64, 1>, q = array<i64: 0, 0, 256, 64, 32, 1>, query_offset = 40 : i64, result = 7 : i64, scale = 0.1767766922712326 : f64, shape = array<i64: 1, 4, 2, 2, 42, 32, 32>, v = array<i64: 4, 0, 2560, 1280, 32, 1>, v_present = 6 : i64, v_split = 40 : i64, v_tail = array<i64: 2, 0, 128, 32, 64, 1>}} {
  return
}

// -----

// A run of more keys than a lane's registers are set aside for.
// expected-error @below {{'ridge.kernel_config' needs 'attention_decode_keys' as an integer in [1, 8]}}
func.func private @decode_long_run(%q: memref<1x2x1x64xf32>, %k: memref<1x2x1024x64xf32>, %v: memref<1x2x1024x64xf32>, %out: memref<1x2x1x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_decode_keys = 16 : i64, attention_splits = 4 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 128, 64, 64, 1>, k = array<i64: 1, 0, 65536, 65536, 64, 1>, v = array<i64: 2, 0, 65536, 65536, 64, 1>, query_offset = 0 : i64, scale = 1.250000e-01 : f64, shape = array<i64: 1, 2, 2, 1, 1024, 64, 64>}} {
  return
}

// -----

// expected-error @below {{kernel configured for the decode attention is not one it computes: 20 query rows, more than 15}}
func.func private @decode_many_rows(%q: memref<1x1x20x64xf32>, %out: memref<1x1x20x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_decode = true, attention_splits = 1 : i64, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 1280, 64, 64, 1>, k = array<i64: 0, 0, 1280, 64, 64, 1>, v = array<i64: 0, 0, 1280, 64, 64, 1>, query_offset = 0 : i64, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 20, 20, 64, 64>}} {
  return
}

// -----

// The kernel also returns the amax of its result (an fp8 consumer's scale,
// ridge-move-scale-reductions-to-producers: its last argument, which the
// kernel's reduction of the result writes): a one-thread launch zeroes it;
// each row guard of the final stores yields the lane's maximum magnitude of
// what it stored (8 elements a row half, 2 per store), and after both
// halves the warp reduces it with shuffles and its first lane folds it in
// with one atomic max of the bits.
// CHECK-LABEL: func.func private @result_amax
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK:   memref.store %{{.*}}, %arg2[] : memref<f32>
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1) threads({{.*}}) in ({{.*}} = %c128,
// CHECK:   nvvm.mma.sync
// CHECK:   %[[HALF0:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:     vector.store {{.*}}, %arg1[{{.*}}] {alignment = 8 : i64} : memref<1x1x64x64xf32>, vector<2xf32>
// CHECK-COUNT-2: math.absf
// CHECK:   scf.if %{{.*}} -> (f32) {
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK:   scf.if
// CHECK:     memref.extract_aligned_pointer_as_index %arg2
// CHECK:     llvm.atomicrmw umax %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK:   gpu.terminator
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#all = affine_map<(d0, d1, d2, d3) -> ()>
func.func private @result_amax(%q: memref<1x1x64x64xf32>, %out: memref<1x1x64x64xf32>, %amax: memref<f32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%amax : memref<f32>)
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%out : memref<1x1x64x64xf32>) outs(%amax : memref<f32>) {
  ^bb0(%v: f32, %m: f32):
    %a = math.absf %v : f32
    %b = arith.maximumf %m, %a : f32
    linalg.yield %b : f32
  }
  return
}

// -----

// The split-key and decode kernels do not fold an amax in (the producer
// side never moves one into them); given one, the pass says so.
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#all = affine_map<(d0, d1, d2, d3) -> ()>
// expected-error @below {{the amax of an attention's result is folded in by the one-pass tensor-core kernel only, not by the decode or split-key kernels}}
func.func private @split_keys_amax(%q: memref<1x1x64x64xf32>, %k: memref<1x1x1024x64xf32>, %v: memref<1x1x1024x64xf32>, %out: memref<1x1x64x64xf32>, %amax: memref<f32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_splits = 4 : i64, attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, k = array<i64: 1, 0, 65536, 65536, 64, 1>, v = array<i64: 2, 0, 65536, 65536, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 1024, 64, 64>}} {
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%out : memref<1x1x64x64xf32>) outs(%amax : memref<f32>) {
  ^bb0(%x: f32, %m: f32):
    %a = math.absf %x : f32
    %b = arith.maximumf %m, %a : f32
    linalg.yield %b : f32
  }
  return
}

// -----

// Q rotated as it is loaded (a rotary prologue: q_cos, q_sin name the
// [1, 128, 32] caches, stride 0 along the heads): each thread's 8-element
// chunk of a row, its partner chunk 32 columns away, and the caches' 8
// entries of the pair index; cos x - sin x' below column 32, sin x' + cos x
// above, as one fma of the partner and the sine (its sign bit flipped
// below column 32) added to cos x, then the rounding to bf16. K has no rotation.
// CHECK-LABEL: func.func private @rotary_query
// CHECK: %[[QF:.*]] = memref.collapse_shape %arg0
// CHECK: %[[COS:.*]] = memref.collapse_shape %arg1 {{.*}} into memref<4096xf32>
// CHECK: %[[SIN:.*]] = memref.collapse_shape %arg2 {{.*}} into memref<4096xf32>
// CHECK: gpu.launch
// CHECK: vector.load %[[QF]]
// CHECK: %[[LOWER:.*]] = arith.cmpi slt, %{{.*}}, %c32 : index
// CHECK: vector.load %[[QF]]
// CHECK: vector.load %[[COS]]
// CHECK: %[[CX:.*]] = arith.mulf {{.*}} : vector<8xf32>
// CHECK: %[[MASK:.*]] = arith.select %[[LOWER]], %c-2147483648_i32, %c0_i32 : i32
// CHECK: %[[MASKS:.*]] = vector.broadcast %[[MASK]] : i32 to vector<8xi32>
// CHECK: vector.load %[[SIN]]
// CHECK: %[[S:.*]] = vector.shuffle
// CHECK: %[[SB:.*]] = arith.bitcast %[[S]] : vector<8xf32> to vector<8xi32>
// CHECK: %[[FLIPPED:.*]] = arith.xori %[[SB]], %[[MASKS]] : vector<8xi32>
// CHECK: %[[SS:.*]] = arith.bitcast %[[FLIPPED]] : vector<8xi32> to vector<8xf32>
// CHECK: %[[R:.*]] = math.fma %[[SS]], %{{.*}}, %[[CX]] : vector<8xf32>
// CHECK: arith.truncf %[[R]] : vector<8xf32> to vector<8xbf16>
// CHECK: scf.for
// CHECK-NOT: %[[COS]]
// CHECK: gpu.terminator
func.func private @rotary_query(%q: memref<1x4x128x64xf32>, %cos: memref<1x128x32xf32>, %sin: memref<1x128x32xf32>, %k: memref<1x4x128x64xf32>, %v: memref<1x4x128x64xf32>, %out: memref<1x4x128x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, mma_instruction = "mma_sync", vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = true, q = array<i64: 0, 0, 32768, 8192, 64, 1>, q_cos = array<i64: 1, 0, 4096, 0, 32, 1>, q_sin = array<i64: 2, 0, 4096, 0, 32, 1>, k = array<i64: 3, 0, 32768, 8192, 64, 1>, v = array<i64: 4, 0, 32768, 8192, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 4, 4, 128, 128, 64, 64>}} {
  return
}

// -----

// Caches named for one side only are not a description.
// expected-error @below {{kernel configured for the tensor-core attention is not one it computes: 'q_sin' is not {argument, offset, 4 strides}}}
func.func private @rotary_half_described(%q: memref<1x1x64x64xf32>, %cos: memref<1x64x32xf32>, %out: memref<1x1x64x64xf32>) attributes {ridge.kernel = "attention", ridge.kernel_config = {attention_stages = 2 : i64, attention_tile = array<i64: 64, 64>, block_size = 128 : i64, vector_width = 1 : i64, warps_per_block = 4 : i64}, ridge.online_attention = {causal = false, q = array<i64: 0, 0, 4096, 4096, 64, 1>, q_cos = array<i64: 1, 0, 2048, 0, 32, 1>, k = array<i64: 0, 0, 4096, 4096, 64, 1>, v = array<i64: 0, 0, 4096, 4096, 64, 1>, query_offset = 0 : i64, round_to = bf16, scale = 1.250000e-01 : f64, shape = array<i64: 1, 1, 1, 64, 64, 64, 64>}} {
  return
}
