// The CUB baseline of `reduce modes` (docs/src/guide/determinism.md): cub::DeviceReduce::Sum
// on f32 and f64 at n elements (default 2^28), timed as the Rust side is:
// CUDA events around the call only, 5 warm-up calls, the median of RUNS calls
// (default 100, at least 50), inputs rotated through copies that together
// exceed the L2 four times, random data in [-1, 1). Two variants:
//
//   plain       the two-phase call, temporary storage allocated once
//               (CUB's default determinism: run_to_run);
//   gpu_to_gpu  the environment overload with
//               cuda::execution::require(cuda::execution::determinism::gpu_to_gpu)
//               (CCCL >= 3.1, its RFA kernel); with an older CCCL it prints what
//               it offers instead (run_to_run through the environment if it has it).
//
// Build and run on the GPU machine (CUDA 13.0):
//   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr cli/baselines/cub_determinism.cu -o cub_determinism
//   ./cub_determinism [N] [RUNS]
// Prints one JSON object per line.

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(CCCL_MAJOR_VERSION) && (CCCL_MAJOR_VERSION > 3 || (CCCL_MAJOR_VERSION == 3 && CCCL_MINOR_VERSION >= 1))
#  define HAVE_GPU_TO_GPU 1
#else
#  define HAVE_GPU_TO_GPU 0
#endif
#if defined(__has_include)
#  if __has_include(<cuda/__execution/determinism.h>) && __has_include(<cuda/__execution/require.h>)
#    include <cuda/__execution/determinism.h>
#    include <cuda/__execution/require.h>
#    define HAVE_ENV 1
#  endif
#endif
#ifndef HAVE_ENV
#  define HAVE_ENV 0
#endif

#include "cub_common.cuh"

template <typename T>
static void bench(const char* type, size_t n, int runs, size_t l2) {
  size_t bytes = n * sizeof(T);
  int copies = (int)std::max<size_t>(1, std::min<size_t>(64, (4 * l2 + bytes - 1) / bytes));
  std::vector<T*> in(copies);
  for (int c = 0; c < copies; ++c) {
    CHECK(cudaMalloc(&in[c], bytes));
    fill<<<1024, 256>>>(in[c], n, 1 + c);
  }
  T* out;
  CHECK(cudaMalloc(&out, sizeof(T)));
  CHECK(cudaDeviceSynchronize());
  auto report = [&](const char* variant, double us) {
    T result;
    CHECK(cudaMemcpy(&result, out, sizeof(T), cudaMemcpyDeviceToHost));
    std::printf("{\"library\": \"cub\", \"cccl\": \"%d.%d.%d\", \"variant\": \"%s\", \"type\": \"%s\", \"n\": %zu, "
                "\"median_us\": %.2f, \"gbps\": %.1f, \"result\": %.17g}\n",
                CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, variant, type, n, us, bytes / us / 1e3,
                (double)result);
    std::fflush(stdout);
  };

  // plain: the two-phase call (run_to_run)
  size_t temp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in[0], out, (int)n));
  void* temp;
  CHECK(cudaMalloc(&temp, temp_bytes));
  double us = median_us(runs, copies, [&](int c) { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in[c], out, (int)n)); });
  report("plain", us);

#if HAVE_GPU_TO_GPU
  auto env = cuda::execution::require(cuda::execution::determinism::gpu_to_gpu);
  us = median_us(runs, copies, [&](int c) { CHECK(cub::DeviceReduce::Sum(in[c], out, (int)n, env)); });
  report("gpu_to_gpu", us);
#elif HAVE_ENV
  std::printf("{\"library\": \"cub\", \"cccl\": \"%d.%d.%d\", \"variant\": \"gpu_to_gpu\", \"type\": \"%s\", "
              "\"error\": \"this CCCL has no gpu_to_gpu (3.1+); timing run_to_run through the environment\"}\n",
              CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, type);
  auto env = cuda::execution::require(cuda::execution::determinism::run_to_run);
  us = median_us(runs, copies, [&](int c) { CHECK(cub::DeviceReduce::Sum(in[c], out, (int)n, env)); });
  report("run_to_run_env", us);
#else
  std::printf("{\"library\": \"cub\", \"cccl\": \"%d.%d.%d\", \"variant\": \"gpu_to_gpu\", \"type\": \"%s\", "
              "\"error\": \"this CCCL has no determinism environment; only the plain call\"}\n",
              CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, type);
#endif
  CHECK(cudaFree(temp));
  CHECK(cudaFree(out));
  for (auto p : in) CHECK(cudaFree(p));
}

int main(int argc, char** argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t)1 << 28;
  int runs = std::max(50, argc > 2 ? std::atoi(argv[2]) : 100);
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  bench<float>("f32", n, runs, (size_t)l2);
  bench<double>("f64", n, runs, (size_t)l2);
  return 0;
}
