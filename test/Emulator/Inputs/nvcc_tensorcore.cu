// Tensor-core and async-copy kernels that nvcc compiles to PTX for
// nvcc-tensorcore.test: WMMA GEMMs as the CUDA mma.h API emits them, and
// inline-PTX mma.sync fed by ldmatrix from shared memory staged by cp.async.
// run_nvcc_tensorcore.py compares each with NumPy.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// C[M,N] = alpha * A[M,K] * B[K,N] + beta * C: A row-major, B row-major or
// column-major (B^T stored [N,K]), one 16x16 tile of C per warp. The
// accumulator starts from C loaded column-major and is scaled element by
// element, which relies on the fragment holding each element once.
template <typename In, int TileK, typename ALayout, typename BLayout>
__device__ void wmmaGemm(const In *a, const In *b, float *c, int m, int n,
                         int k, float alpha, float beta) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tilesN = n / 16;
  int tm = warp / tilesN, tn = warp % tilesN;
  if (tm * 16 >= m)
    return;
  wmma::fragment<wmma::matrix_a, 16, 16, TileK, ALayout, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, TileK, ALayout, BLayout> fb;
  wmma::fragment<wmma::accumulator, 16, 16, TileK, float> acc, old;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += TileK) {
    wmma::load_matrix_sync(fa, a + tm * 16 * k + kk, k);
    if constexpr (std::is_same<BLayout, wmma::row_major>::value)
      wmma::load_matrix_sync(fb, b + kk * n + tn * 16, n);
    else
      wmma::load_matrix_sync(fb, b + tn * 16 * k + kk, k);
    if constexpr (std::is_same<ALayout, wmma::precision::tf32>::value) {
      for (int i = 0; i < fa.num_elements; ++i)
        fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
      for (int i = 0; i < fb.num_elements; ++i)
        fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    }
    wmma::mma_sync(acc, fa, fb, acc);
  }
  // C is stored column-major here: element (i, j) at c[j * m + i].
  wmma::load_matrix_sync(old, c + tn * 16 * m + tm * 16, m, wmma::mem_col_major);
  for (int i = 0; i < acc.num_elements; ++i)
    acc.x[i] = alpha * acc.x[i] + beta * old.x[i];
  wmma::store_matrix_sync(c + tn * 16 * m + tm * 16, acc, m,
                          wmma::mem_col_major);
}

extern "C" __global__ void wmma_f16_rowcol(const __half *a, const __half *b,
                                           float *c, int m, int n, int k,
                                           float alpha, float beta) {
  wmmaGemm<__half, 16, __half, wmma::col_major>(a, b, c, m, n, k, alpha, beta);
}

extern "C" __global__ void wmma_bf16_rowrow(const __nv_bfloat16 *a,
                                            const __nv_bfloat16 *b, float *c,
                                            int m, int n, int k, float alpha,
                                            float beta) {
  wmmaGemm<__nv_bfloat16, 16, __nv_bfloat16, wmma::row_major>(a, b, c, m, n, k,
                                                               alpha, beta);
}

extern "C" __global__ void wmma_tf32_rowcol(const float *a, const float *b,
                                            float *c, int m, int n, int k,
                                            float alpha, float beta) {
  wmmaGemm<float, 8, wmma::precision::tf32, wmma::col_major>(a, b, c, m, n, k,
                                                              alpha, beta);
}

// f16 accumulation, staged through shared memory: each warp copies its A and
// B tiles to shared memory and loads its fragments from there; the result is
// stored row-major to shared memory and copied out as f16.
extern "C" __global__ void wmma_f16_acc_shared(const __half *a, const __half *b,
                                               __half *c, int k) {
  __shared__ __align__(32) __half sa[4][16 * 16];
  __shared__ __align__(32) __half sb[4][16 * 16];
  __shared__ __align__(32) __half sc[4][16 * 16];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int tm = warp / 2, tn = warp % 2; // C is 32x32
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, __half> acc;
  wmma::fill_fragment(acc, __float2half(0.0f));
  for (int kk = 0; kk < k; kk += 16) {
    for (int i = lane; i < 256; i += 32) {
      sa[warp][i] = a[(tm * 16 + i / 16) * k + kk + i % 16];
      sb[warp][i] = b[(kk + i / 16) * 32 + tn * 16 + i % 16];
    }
    __syncwarp();
    wmma::load_matrix_sync(fa, sa[warp], 16);
    wmma::load_matrix_sync(fb, sb[warp], 16);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(sc[warp], acc, 16, wmma::mem_row_major);
  __syncwarp();
  for (int i = lane; i < 256; i += 32)
    c[(tm * 16 + i / 16) * 32 + tn * 16 + i % 16] = sc[warp][i];
}

__device__ unsigned sharedAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ void cpAsync16(void *dst, const void *src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   sharedAddress(dst)),
               "l"(src));
}

// C[32,32] = A[32,K] * B[K,32], bf16 in, f32 out, both row-major, one block
// of four warps each computing a 16x16 tile as two m16n8k16 mma.sync. The
// K loop is double-buffered: chunk i+1 is copied by cp.async while chunk i is
// multiplied, with one commit group per chunk and wait_group 1. A fragments
// come from ldmatrix.x4, B fragments from ldmatrix.x2.trans.
constexpr int kChunk = 32;
extern "C" __global__ void mma_bf16_ldmatrix(const __nv_bfloat16 *a,
                                             const __nv_bfloat16 *b, float *c,
                                             int k) {
  // Rows padded by 8 elements so that ldmatrix rows stay 16-byte aligned.
  __shared__ __align__(16) __nv_bfloat16 sa[2][32][kChunk + 8];
  __shared__ __align__(16) __nv_bfloat16 sb[2][kChunk][32 + 8];
  int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  int wm = warp / 2, wn = warp % 2;
  auto stage = [&](int buffer, int kk) {
    // 32x32 bf16 of A and of B: 128 16-byte pieces each, one per thread.
    int row = tid / 4, piece = tid % 4;
    cpAsync16(&sa[buffer][row][piece * 8], a + row * k + kk + piece * 8);
    cpAsync16(&sb[buffer][row][piece * 8], b + (kk + row) * 32 + piece * 8);
    asm volatile("cp.async.commit_group;\n" ::);
  };
  float d[2][4] = {};
  int chunks = k / kChunk;
  stage(0, 0);
  for (int i = 0; i < chunks; ++i) {
    if (i + 1 < chunks) {
      stage((i + 1) % 2, (i + 1) * kChunk);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_all;\n" ::);
    }
    __syncthreads();
    int buffer = i % 2;
    for (int ks = 0; ks < kChunk; ks += 16) {
      unsigned fa[4];
      const __nv_bfloat16 *rowA =
          &sa[buffer][wm * 16 + lane % 16][ks + (lane / 16) * 8];
      asm volatile(
          "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
          : "=r"(fa[0]), "=r"(fa[1]), "=r"(fa[2]), "=r"(fa[3])
          : "r"(sharedAddress(rowA)));
      for (int j = 0; j < 2; ++j) {
        unsigned fb[2];
        const __nv_bfloat16 *rowB =
            &sb[buffer][ks + lane % 16][wn * 16 + j * 8];
        asm volatile(
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
            : "=r"(fb[0]), "=r"(fb[1])
            : "r"(sharedAddress(rowB)));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                     "{%0, %1, %2, %3};\n"
                     : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]),
                       "+f"(d[j][3])
                     : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]),
                       "r"(fb[0]), "r"(fb[1]));
      }
    }
    __syncthreads();
  }
  int g = lane / 4, t = lane % 4;
  for (int j = 0; j < 2; ++j)
    for (int e = 0; e < 4; ++e) {
      int row = wm * 16 + g + 8 * (e / 2);
      int col = wn * 16 + j * 8 + t * 2 + e % 2;
      c[row * 32 + col] = d[j][e];
    }
}

// D[16,8] = A[16,32] * B[32,8] + C in 8-bit integers with s32 accumulation,
// fragments loaded from global memory in the m16n8k32 layout: A row-major,
// B column-major (stored [8][32]). One warp.
#define INT8_MMA(NAME, TYPE, ELEM)                                             \
  extern "C" __global__ void NAME(const ELEM *a, const ELEM *bt,               \
                                  const int *c, int *d) {                      \
    int lane = threadIdx.x, g = lane / 4, t = lane % 4;                        \
    auto word = [](const ELEM *p) { return *(const unsigned *)p; };            \
    unsigned a0 = word(a + g * 32 + t * 4), a1 = word(a + (g + 8) * 32 + t * 4), \
             a2 = word(a + g * 32 + 16 + t * 4),                               \
             a3 = word(a + (g + 8) * 32 + 16 + t * 4);                         \
    unsigned b0 = word(bt + g * 32 + t * 4), b1 = word(bt + g * 32 + 16 + t * 4); \
    int acc[4];                                                                \
    for (int e = 0; e < 4; ++e)                                                \
      acc[e] = c[(g + 8 * (e / 2)) * 8 + t * 2 + e % 2];                       \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." TYPE "." TYPE        \
                 ".s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "         \
                 "{%0, %1, %2, %3};\n"                                         \
                 : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])      \
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));      \
    for (int e = 0; e < 4; ++e)                                                \
      d[(g + 8 * (e / 2)) * 8 + t * 2 + e % 2] = acc[e];                       \
  }
INT8_MMA(mma_s8, "s8", signed char)
INT8_MMA(mma_u8, "u8", unsigned char)

// cp.async of 4, 8 and 16 bytes with a source size below the copy size: the
// rest of the destination is zero-filled. Thread i copies in[4i .. 4i+3]
// with src-size (i % 5) * 4 clamped to 16, then the block writes shared
// memory out.
extern "C" __global__ void cp_async_zfill(const float *in, float *out) {
  __shared__ __align__(16) float s[3][32 * 4];
  int i = threadIdx.x;
  unsigned src = (i % 5) * 4;
  const float *p = in + 4 * i;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                   sharedAddress(&s[0][4 * i])),
               "l"(p), "r"(src < 4 ? src : 4u));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(
                   sharedAddress(&s[1][4 * i])),
               "l"(p), "r"(src < 8 ? src : 8u));
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(
                   sharedAddress(&s[2][4 * i])),
               "l"(p), "r"(src));
  asm volatile("cp.async.commit_group;\n" ::);
  asm volatile("cp.async.wait_group 0;\n" ::);
  // The 4- and 8-byte copies leave the rest of each row unwritten.
  s[0][4 * i + 1] = s[0][4 * i + 2] = s[0][4 * i + 3] = -1.0f;
  s[1][4 * i + 2] = s[1][4 * i + 3] = -1.0f;
  __syncthreads();
  for (int j = 0; j < 3; ++j)
    for (int e = 0; e < 4; ++e)
      out[j * 128 + 4 * i + e] = s[j][4 * i + e];
}

// A bug: the destination of a cp.async is read before the wait that retires
// it. The emulator reports it (nvcc-tensorcore.test checks the message).
extern "C" __global__ void cp_async_no_wait(const float *in, float *out) {
  __shared__ __align__(16) float s[32];
  int i = threadIdx.x;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(
                   sharedAddress(&s[i])),
               "l"(in + i));
  asm volatile("cp.async.commit_group;\n" ::);
  out[i] = s[i];
  asm volatile("cp.async.wait_all;\n" ::);
}

// The other mma.sync shapes, one warp each: D[16,8] = A[16,K] * B[K,8] + C
// with A row-major, B given as B^T ([8][K] row-major), C and D row-major,
// every lane loading its elements where the PTX ISA's fragment figures
// place them (g = lane / 4, t = lane % 4).
__device__ unsigned bitsOf(float x) { return __float_as_uint(x); }
__device__ unsigned pairAt(const void *p) { return *(const unsigned *)p; }

extern "C" __global__ void mma_tf32_k8(const float *a, const float *bt,
                                       const float *c, float *d) {
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  float acc[4];
  for (int e = 0; e < 4; ++e)
    acc[e] = c[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(bitsOf(a[g * 8 + t])), "r"(bitsOf(a[(g + 8) * 8 + t])),
                 "r"(bitsOf(a[g * 8 + t + 4])),
                 "r"(bitsOf(a[(g + 8) * 8 + t + 4])),
                 "r"(bitsOf(bt[g * 8 + t])), "r"(bitsOf(bt[g * 8 + t + 4])));
  for (int e = 0; e < 4; ++e)
    d[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2] = acc[e];
}

extern "C" __global__ void mma_tf32_k4(const float *a, const float *bt,
                                       const float *c, float *d) {
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  float acc[4];
  for (int e = 0; e < 4; ++e)
    acc[e] = c[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2];
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
               : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
               : "r"(bitsOf(a[g * 4 + t])), "r"(bitsOf(a[(g + 8) * 4 + t])),
                 "r"(bitsOf(bt[g * 4 + t])));
  for (int e = 0; e < 4; ++e)
    d[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2] = acc[e];
}

// f16 inputs and an f16 accumulator: C and D are two registers of pairs.
extern "C" __global__ void mma_f16_k8(const __half *a, const __half *bt,
                                      const __half *c, __half *d) {
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  unsigned acc[2] = {pairAt(c + g * 8 + 2 * t), pairAt(c + (g + 8) * 8 + 2 * t)};
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 "
               "{%0, %1}, {%2, %3}, {%4}, {%0, %1};\n"
               : "+r"(acc[0]), "+r"(acc[1])
               : "r"(pairAt(a + g * 8 + 2 * t)),
                 "r"(pairAt(a + (g + 8) * 8 + 2 * t)),
                 "r"(pairAt(bt + g * 8 + 2 * t)));
  *(unsigned *)(d + g * 8 + 2 * t) = acc[0];
  *(unsigned *)(d + (g + 8) * 8 + 2 * t) = acc[1];
}

extern "C" __global__ void mma_s8_k16(const signed char *a,
                                      const signed char *bt, const int *c,
                                      int *d) {
  int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  int acc[4];
  for (int e = 0; e < 4; ++e)
    acc[e] = c[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2];
  asm volatile("mma.sync.aligned.m16n8k16.row.col.satfinite.s32.s8.s8.s32 "
               "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
               : "+r"(acc[0]), "+r"(acc[1]), "+r"(acc[2]), "+r"(acc[3])
               : "r"(pairAt(a + g * 16 + 4 * t)),
                 "r"(pairAt(a + (g + 8) * 16 + 4 * t)),
                 "r"(pairAt(bt + g * 16 + 4 * t)));
  for (int e = 0; e < 4; ++e)
    d[(g + 8 * (e / 2)) * 8 + 2 * t + e % 2] = acc[e];
}
