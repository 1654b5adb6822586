// sm_90a kernels that nvcc compiles to PTX for nvcc-hopper.test: mbarrier,
// TMA (cp.async.bulk.tensor) and wgmma, written with inline PTX as CUTLASS
// writes them, and f32 -> 8-bit float conversions through cuda_fp8.h.
// ridge-emu builds the tensor maps (--arg tmap:...).
#include <cstdint>
#include <cuda.h>
#include <cuda_fp8.h>

namespace {

__device__ uint32_t smem(const void *pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

__device__ void mbarrierInit(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar),
               "r"(count));
}

__device__ void mbarrierArrive(uint32_t bar) {
  asm volatile("{\n.reg .b64 state;\n"
               "mbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(bar)
               : "memory");
}

__device__ void mbarrierArriveExpectTx(uint32_t bar, uint32_t bytes) {
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar),
      "r"(bytes)
      : "memory");
}

// CUTLASS's ClusterBarrier::wait: try_wait.parity in a branch loop.
__device__ void mbarrierWait(uint32_t bar, uint32_t parity) {
  asm volatile("{\n.reg .pred done;\n"
               "WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra WAIT;\n}" ::"r"(bar),
               "r"(parity)
               : "memory");
}

__device__ void tmaLoad2d(uint32_t dst, const CUtensorMap *map, int x, int y,
                          uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::"
               "complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
               "l"(map), "r"(x), "r"(y), "r"(bar)
               : "memory");
}

__device__ void tmaStore2d(const CUtensorMap *map, int x, int y, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group "
               "[%0, {%1, %2}], [%3];" ::"l"(map),
               "r"(x), "r"(y), "r"(src)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// The block's one mbarrier for its TMA loads, initialized by thread 0 and
// visible to the async proxy before any thread goes on.
__device__ void initLoadBarrier(uint64_t *bar) {
  if (threadIdx.x == 0) {
    mbarrierInit(smem(bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
}

} // namespace

// (a) A producer warp passes 8 chunks of 32 floats to a consumer warp
// through a 2-slot ring, each slot with a "full" and an "empty" mbarrier, as
// a pipelined kernel does. The consumer doubles each element.
extern "C" __global__ void mbarrier_pipeline(const float *in, float *out) {
  __shared__ float ring[2][32];
  __shared__ uint64_t full[2], empty[2];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      mbarrierInit(smem(&full[s]), 32);
      mbarrierInit(smem(&empty[s]), 32);
    }
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  for (int chunk = 0; chunk < 8; ++chunk) {
    int slot = chunk % 2;
    uint32_t parity = (chunk / 2) % 2;
    if (warp == 0) {
      if (chunk >= 2)
        mbarrierWait(smem(&empty[slot]), parity ^ 1);
      ring[slot][lane] = in[chunk * 32 + lane];
      mbarrierArrive(smem(&full[slot]));
    } else {
      mbarrierWait(smem(&full[slot]), parity);
      out[chunk * 32 + lane] = 2.0f * ring[slot][lane];
      mbarrierArrive(smem(&empty[slot]));
    }
  }
}

// (b) One TMA box of 32 rows x 64 bf16 (128 bytes, the 128B swizzle span)
// at column x, row y: the raw shared-memory bytes go out to `raw` as TMA
// left them (swizzled, out-of-bounds elements zero), and a TMA store writes
// the box back into `out` at (outX, outY), clipped to the tensor.
extern "C" __global__ void tma_tile(const __grid_constant__ CUtensorMap in,
                                    const __grid_constant__ CUtensorMap out,
                                    uint16_t *raw, int x, int y, int outX,
                                    int outY) {
  __shared__ alignas(1024) uint16_t tile[32 * 64];
  __shared__ uint64_t bar;
  initLoadBarrier(&bar);
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(smem(&bar), sizeof(tile));
    tmaLoad2d(smem(tile), &in, x, y, smem(&bar));
  }
  mbarrierWait(smem(&bar), 0);
  for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x)
    raw[i] = tile[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.async.shared::cta;");
    tmaStore2d(&out, outX, outY, smem(tile));
  }
}

// (c) C[128x128] = A[128x64] * B[64x128] in bf16 with f32 accumulation: TMA
// loads A (row-major, K contiguous) and B with the 128B swizzle, and each of
// the two warpgroups issues 4 wgmma m64n128k16 for its 64 rows, both
// operands from shared-memory descriptors. B is K-major (B^T stored N x K,
// imm-trans-b 0) in wgmma_gemm and N-major (B stored K x N, imm-trans-b 1)
// in wgmma_gemm_kn.
__device__ uint64_t descriptor(uint32_t address, uint32_t lbo, uint32_t sbo) {
  // Start address, leading and stride byte offsets (all in 16-byte units)
  // and layout type 1, the 128B swizzle.
  return uint64_t((address & 0x3ffff) >> 4) | (uint64_t(lbo >> 4) << 16) |
         (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

template <int TransB>
__device__ void wgmmaStep(float (&d)[64], uint64_t descA, uint64_t descB,
                          uint32_t scaleD) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "
      "%30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "
      "%46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, "
      "%62, %63"
      "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]),
        "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
        "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]),
        "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]),
        "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
        "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(descA), "l"(descB), "r"(scaleD), "n"(TransB));
}

template <int TransB>
__device__ void gemm(const CUtensorMap *mapA, const CUtensorMap *mapB,
                     float *c) {
  __shared__ alignas(1024) uint16_t a[128 * 64];
  __shared__ alignas(1024) uint16_t b[128 * 64];
  __shared__ uint64_t bar;
  initLoadBarrier(&bar);
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(smem(&bar), sizeof(a) + sizeof(b));
    tmaLoad2d(smem(a), mapA, 0, 0, smem(&bar));
    if (TransB) {
      // 64 columns of B (128 bytes, the swizzle span) per box.
      tmaLoad2d(smem(b), mapB, 0, 0, smem(&bar));
      tmaLoad2d(smem(b + 64 * 64), mapB, 64, 0, smem(&bar));
    } else {
      tmaLoad2d(smem(b), mapB, 0, 0, smem(&bar));
    }
  }
  mbarrierWait(smem(&bar), 0);

  int group = threadIdx.x / 128;
  float d[64];
  for (int i = 0; i < 64; ++i)
    d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < 4; ++k) {
    // K-major: 8-row groups 1024 bytes apart (SBO), and each k-step of 16
    // bf16 is 32 bytes further along the swizzled 128-byte rows.
    uint64_t descA = descriptor(smem(a + group * 64 * 64) + k * 32, 16, 1024);
    // N-major: 8-k groups 1024 bytes apart (SBO), the next 64 columns 8192
    // bytes on (LBO), and a k-step is 16 rows of 128 bytes.
    uint64_t descB = TransB ? descriptor(smem(b) + k * 16 * 128, 8192, 1024)
                            : descriptor(smem(b) + k * 32, 16, 1024);
    wgmmaStep<TransB>(d, descA, descB, k > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  for (int i = 0; i < 64; ++i) {
    int row = group * 64 + warp * 16 + lane / 4 + 8 * ((i >> 1) & 1);
    int col = (i / 4) * 8 + (lane % 4) * 2 + (i % 2);
    c[row * 128 + col] = d[i];
  }
}

extern "C" __global__ void __launch_bounds__(256)
    wgmma_gemm(const __grid_constant__ CUtensorMap mapA,
               const __grid_constant__ CUtensorMap mapBt, float *c) {
  gemm<0>(&mapA, &mapBt, c);
}

extern "C" __global__ void __launch_bounds__(256)
    wgmma_gemm_kn(const __grid_constant__ CUtensorMap mapA,
                  const __grid_constant__ CUtensorMap mapB, float *c) {
  gemm<1>(&mapA, &mapB, c);
}

// (d) A warp-specialized, pipelined GEMM as CUTLASS's sm90 kernels run one:
// C[128x128] = A[128x256] * B[256x128], B given as B^T (K-major). Warpgroup
// 0 is the producer: one elected thread streams 64-wide k-tiles of A and B
// by TMA into a 2-stage ring, each stage with a "full" barrier (transaction
// bytes) and an "empty" one that both consumers arrive at. Warpgroups 1
// and 2 consume, 64 rows each, keeping one wgmma group in flight
// (wait_group 1) before releasing the stage the group before it read.
__device__ bool electOne() {
  uint32_t elected = 0;
  asm volatile("{\n.reg .b32 %%rx;\n.reg .pred %%px;\n"
               "elect.sync %%rx|%%px, %1;\n"
               "@%%px mov.s32 %0, 1;\n}"
               : "+r"(elected)
               : "r"(0xffffffffu));
  return elected != 0;
}

extern "C" __global__ void __launch_bounds__(384)
    wgmma_pipeline(const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, float *c) {
  constexpr int kStages = 2, kTiles = 4;
  constexpr uint32_t kTileBytes = 128 * 64 * 2;
  extern __shared__ __align__(1024) uint8_t buffer[];
  uint8_t *a = buffer, *b = buffer + kStages * kTileBytes;
  __shared__ uint64_t full[kStages], empty[kStages];
  int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrierInit(smem(&full[s]), 1);
      mbarrierInit(smem(&empty[s]), 2);
    }
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();

  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x / 32 == 0 && electOne()) {
      for (int kt = 0; kt < kTiles; ++kt) {
        int s = kt % kStages;
        if (kt >= kStages)
          mbarrierWait(smem(&empty[s]), (kt / kStages - 1) & 1);
        mbarrierArriveExpectTx(smem(&full[s]), 2 * kTileBytes);
        tmaLoad2d(smem(a + s * kTileBytes), &mapA, kt * 64, 0, smem(&full[s]));
        tmaLoad2d(smem(b + s * kTileBytes), &mapBt, kt * 64, 0, smem(&full[s]));
      }
    }
    return;
  }
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  int group = warpgroup - 1;
  float d[64];
  for (int i = 0; i < 64; ++i)
    d[i] = 0.f;
  for (int kt = 0; kt < kTiles; ++kt) {
    int s = kt % kStages;
    mbarrierWait(smem(&full[s]), (kt / kStages) & 1);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int k = 0; k < 4; ++k) {
      uint32_t aTile = smem(a + s * kTileBytes + group * 64 * 128);
      uint64_t descA = descriptor(aTile + k * 32, 16, 1024);
      uint64_t descB = descriptor(smem(b + s * kTileBytes) + k * 32, 16, 1024);
      wgmmaStep<0>(d, descA, descB, kt > 0 || k > 0);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    if (kt > 0 && threadIdx.x % 128 == 0)
      mbarrierArrive(smem(&empty[(kt - 1) % kStages]));
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  for (int i = 0; i < 64; ++i) {
    int row = group * 64 + warp * 16 + lane / 4 + 8 * ((i >> 1) & 1);
    int col = (i / 4) * 8 + (lane % 4) * 2 + (i % 2);
    c[row * 128 + col] = d[i];
  }
}

// (e) 8-bit float GEMMs: C = A * B^T with A (M x 128) and B^T (N x 128) in
// e4m3 (or e5m2 for B), both K-major as fp8 wgmma requires (it takes no
// transposes), f32 accumulation. A 128-byte swizzled row is 128 elements, so
// one TMA box row covers all of K and each k32 step moves the descriptors 32
// bytes along it, as the bf16 kernels' k16 steps do.

// The m64nNk32 D fragment is the bf16 one: register i of lane l holds row
// l/4 (+8 if bit 1 of i is set) and column (i/4)*8 + (l%4)*2 + i%2 of this
// warp's 16 rows.
template <int N>
__device__ void storeAccumulators(const float (&d)[N / 2], float *c,
                                  int group) {
  int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  for (int i = 0; i < N / 2; ++i) {
    int row = group * 64 + warp * 16 + lane / 4 + 8 * ((i >> 1) & 1);
    int col = (i / 4) * 8 + (lane % 4) * 2 + (i % 2);
    c[row * N + col] = d[i];
  }
}

// m64n128k32 with A and B from shared-memory descriptors: A is always e4m3,
// B e4m3 or e5m2 (the PTX type suffixes name A's type, then B's).
#define FP8_WGMMA_SS(BTYPE)                                                    \
  asm volatile(                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                             \
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3." BTYPE " {"           \
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, " \
      "%30, %31, "                                                             \
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, " \
      "%46, %47, "                                                             \
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, " \
      "%62, %63"                                                               \
      "}, %64, %65, p, 1, 1;\n}\n"                                             \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),            \
        "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),            \
        "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),       \
        "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),       \
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),       \
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),       \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),       \
        "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),       \
        "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),       \
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),       \
        "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),       \
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                     \
      : "l"(descA), "l"(descB), "r"(scaleD))

template <bool E5m2B>
__device__ void fp8WgmmaStep(float (&d)[64], uint64_t descA, uint64_t descB,
                             uint32_t scaleD) {
  if (E5m2B)
    FP8_WGMMA_SS("e5m2");
  else
    FP8_WGMMA_SS("e4m3");
}

// C[128x128] = A[128x128] * B[128x128]^T: each of the two warpgroups issues
// 4 m64n128k32 for its 64 rows.
template <bool E5m2B>
__device__ void fp8Gemm(const CUtensorMap *mapA, const CUtensorMap *mapBt,
                        float *c) {
  __shared__ alignas(1024) uint8_t a[128 * 128];
  __shared__ alignas(1024) uint8_t b[128 * 128];
  __shared__ uint64_t bar;
  initLoadBarrier(&bar);
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(smem(&bar), sizeof(a) + sizeof(b));
    tmaLoad2d(smem(a), mapA, 0, 0, smem(&bar));
    tmaLoad2d(smem(b), mapBt, 0, 0, smem(&bar));
  }
  mbarrierWait(smem(&bar), 0);

  int group = threadIdx.x / 128;
  float d[64];
  for (int i = 0; i < 64; ++i)
    d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < 4; ++k) {
    // 8-row groups 1024 bytes apart (SBO); k32 is 32 bytes of the row.
    uint64_t descA = descriptor(smem(a + group * 64 * 128) + k * 32, 16, 1024);
    uint64_t descB = descriptor(smem(b) + k * 32, 16, 1024);
    fp8WgmmaStep<E5m2B>(d, descA, descB, k > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  storeAccumulators<128>(d, c, group);
}

extern "C" __global__ void __launch_bounds__(256)
    wgmma_fp8_gemm(const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, float *c) {
  fp8Gemm<false>(&mapA, &mapBt, c);
}

extern "C" __global__ void __launch_bounds__(256)
    wgmma_fp8_e5m2_gemm(const __grid_constant__ CUtensorMap mapA,
                        const __grid_constant__ CUtensorMap mapBt, float *c) {
  fp8Gemm<true>(&mapA, &mapBt, c);
}

// C[128x64] = A[128x128] * B[64x128]^T in e4m3 with A from registers
// (m64n64k32): each thread loads its A fragment straight from global memory
// (A row-major, K contiguous), so the fragment layout is checked apart from
// any shared-memory layout. Register j of lane l holds 4 consecutive k of
// row l/4 (+8 for j odd) of its warp's 16, from k (l%4)*4 (+16 for j >= 2),
// as mma.sync m16n8k32 holds 8-bit A.
extern "C" __global__ void __launch_bounds__(256)
    wgmma_fp8_gemm_rs(const uint8_t *aGlobal,
                      const __grid_constant__ CUtensorMap mapBt, float *c) {
  __shared__ alignas(1024) uint8_t b[64 * 128];
  __shared__ uint64_t bar;
  initLoadBarrier(&bar);
  if (threadIdx.x == 0) {
    mbarrierArriveExpectTx(smem(&bar), sizeof(b));
    tmaLoad2d(smem(b), &mapBt, 0, 0, smem(&bar));
  }

  int group = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4;
  int lane = threadIdx.x % 32;
  uint32_t fragment[4][4];
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 4; ++j) {
      int row = group * 64 + warp * 16 + lane / 4 + 8 * (j % 2);
      int col = k * 32 + (lane % 4) * 4 + 16 * (j / 2);
      fragment[k][j] =
          *reinterpret_cast<const uint32_t *>(aGlobal + row * 128 + col);
    }
  mbarrierWait(smem(&bar), 0);

  float d[32];
  for (int i = 0; i < 32; ++i)
    d[i] = 0.f;
  // The fence also orders the fragment registers' writes before the
  // wgmma that reads them.
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  for (int k = 0; k < 4; ++k) {
    uint64_t descB = descriptor(smem(b) + k * 32, 16, 1024);
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "
        "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "
        "%28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]),
          "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]),
          "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]),
          "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
          "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
          "+f"(d[30]), "+f"(d[31])
        : "r"(fragment[k][0]), "r"(fragment[k][1]), "r"(fragment[k][2]),
          "r"(fragment[k][3]), "l"(descB), "r"(uint32_t(k > 0)));
  }
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  storeAccumulators<64>(d, c, group);
}

// (f) f32 pairs to 8-bit floats, one pair per thread, with cuda_fp8.h's
// __nv_cvt_float2_to_fp8x2, which for sm_89 and later is one
// cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 with x.y as a (the upper byte) and
// x.x as b (the lower byte).
extern "C" __global__ void cvt_fp8x2(const float2 *in, uint16_t *e4m3,
                                     uint16_t *e5m2, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float2 pair = in[i];
    e4m3[i] = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E4M3);
    e5m2[i] = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E5M2);
  }
}
