// CUDA kernels that nvcc compiles to PTX for nvcc-kernels.test: nvcc's code
// generation, not Ridgeline's, is what the emulator runs here.

// One warp per row: max and sum by butterfly shuffles.
extern "C" __global__ void row_softmax(const float *in, float *out, int cols) {
  int row = blockIdx.x, lane = threadIdx.x;
  const float *x = in + row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32)
    m = fmaxf(m, x[c]);
  for (int o = 16; o > 0; o >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32)
    s += __expf(x[c] - m);
  for (int o = 16; o > 0; o >>= 1)
    s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32)
    out[row * cols + c] = __expf(x[c] - m) / s;
}

// Shared-memory atomics per block, then global atomics.
extern "C" __global__ void histogram(const int *in, int n, unsigned *bins) {
  __shared__ unsigned local[16];
  if (threadIdx.x < 16)
    local[threadIdx.x] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    atomicAdd(&local[in[i] & 15], 1u);
  __syncthreads();
  if (threadIdx.x < 16)
    atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}

// Shuffle-down sums per warp, the warp sums through shared memory.
extern "C" __global__ void block_reduce(const float *in, float *out) {
  __shared__ float warpSums[32];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0)
    warpSums[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? warpSums[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1)
      v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0)
      out[blockIdx.x] = v;
  }
}

// Ballot and population count per warp.
extern "C" __global__ void ballot_count(const int *in, unsigned *out) {
  unsigned b = __ballot_sync(0xffffffff, in[threadIdx.x] > 0);
  if ((threadIdx.x & 31) == 0)
    out[threadIdx.x >> 5] = __popc(b);
}

// Half-precision arithmetic and conversions.
#include <cuda_fp16.h>
extern "C" __global__ void half_axpy(const __half *x, __half *y, float a,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __hadd(__hmul(__float2half(a), x[i]), y[i]);
}
