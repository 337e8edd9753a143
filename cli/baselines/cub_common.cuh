// What the CUB baselines share (cub_determinism.cu, cub_segmented_reduce.cu): the error
// check, the random input, and the timing of `reduce` itself: CUDA events around the call
// only, 5 warm-up calls, the median of RUNS, the input rotated over `copies` copies.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                    \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::printf("{\"error\": \"%s: %s\", \"line\": %d}\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

// Random values in [-1, 1) (SplitMix64 of each index and `seed`).
template <typename T>
__global__ void fill(T* p, size_t n, unsigned long long seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long z = seed + i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    p[i] = (T)((double)((long long)(z >> 40) - (1ll << 23)) / (double)(1 << 23));
  }
}

// The median of `runs` event-timed calls `call(c)`, c cycling over `copies`, in µs.
template <typename F>
static double median_us(int runs, int copies, F&& call) {
  for (int i = 0; i < 5; ++i) call(i % copies);
  CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(2 * runs);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  for (int i = 0; i < runs; ++i) {
    CHECK(cudaEventRecord(ev[2 * i]));
    call(i % copies);
    CHECK(cudaEventRecord(ev[2 * i + 1]));
  }
  CHECK(cudaDeviceSynchronize());
  std::vector<float> ms(runs);
  for (int i = 0; i < runs; ++i) CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
  for (auto& e : ev) CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return 1e3 * ms[runs / 2];
}
