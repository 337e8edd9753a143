// The CUB baseline of `reduce shapes`' segments and rows: cub::DeviceSegmentedReduce::Sum
// on f32, timed as the Rust side is: CUDA events around the call only, 5 warm-up calls,
// the median of RUNS calls, random data in [-1, 1) (2^28 elements, 1 GiB: beyond the L2).
//
//   offsets     begin and end offsets (int64, d_offsets and d_offsets + 1), for every
//               lengths file given (NAME.i64: little-endian int64 lengths, as
//               shapes_vendor.py writes them with SEGMENT_LENGTHS_DIR) and the rows
//               (axis 1) of the five 1 GiB matrices;
//   fixed-size  the overload taking one segment size (CCCL 3.1+; built with
//               -DFIXED_SIZE), for the rows and for a lengths file whose segments are
//               all one length.
//
// Each result is checked against the CPU's double sums (`ok`: within 1e-6 a segment
// element, plus 1e-4). GB/s count the bytes moved: the input, the offsets (8 bytes a
// segment, none for the fixed-size form) and the results.
//
// Build and run on the GPU machine (CUDA 13.0):
//   nvcc -O3 -std=c++17 -arch=sm_90 -DFIXED_SIZE cli/baselines/cub_segmented_reduce.cu -o cub_segmented \
//     || nvcc -O3 -std=c++17 -arch=sm_90 cli/baselines/cub_segmented_reduce.cu -o cub_segmented
//   ./cub_segmented RUNS [DIR/NAME.i64 ...]
// Prints one JSON object per line: library, case, median_us, gbps, ok (or error).

#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cub_common.cuh"

static const size_t N = (size_t)1 << 28;

struct Input {
  float* device;
  std::vector<float> host;
};

// Time `call` (which writes `out`), then check `out` against the double sums of the
// segments `offsets`; print the line.
template <typename F>
static void measure(const char* library, const std::string& c, const Input& in, const std::vector<int64_t>& offsets,
                    float* out, size_t moved, int runs, F&& call) {
  size_t count = offsets.size() - 1;
  CHECK(cudaMemset(out, 0xff, count * sizeof(float)));  // poison: NaN
  call();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> got(count);
  CHECK(cudaMemcpy(got.data(), out, count * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t s = 0; s < count && ok; ++s) {
    double want = 0;
    for (int64_t i = offsets[s]; i < offsets[s + 1]; ++i) want += in.host[i];
    double len = (double)(offsets[s + 1] - offsets[s]);
    ok = std::fabs((double)got[s] - want) <= 1e-6 * len + 1e-4;
  }
  double us = median_us(runs, 1, [&](int) { call(); });
  std::printf("{\"library\": \"%s\", \"case\": \"%s\", \"median_us\": %.2f, \"gbps\": %.1f, \"ok\": %s}\n", library,
              c.c_str(), us, moved / us / 1e3, ok ? "true" : "false");
  std::fflush(stdout);
}

// One case: the offsets form, and the fixed-size form where every segment has one length.
static void run_case(const std::string& c, const Input& in, const std::vector<int64_t>& offsets, int runs) {
  size_t count = offsets.size() - 1;
  size_t elements = (size_t)offsets.back();
  int64_t* d_offsets;
  float* out;
  CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int64_t)));
  CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  CHECK(cudaMalloc(&out, std::max<size_t>(1, count) * sizeof(float)));
  size_t temp_bytes = 0;
  CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, in.device, out, (int64_t)count, d_offsets,
                                        d_offsets + 1));
  void* temp;
  CHECK(cudaMalloc(&temp, std::max<size_t>(1, temp_bytes)));
  measure("cub.DeviceSegmentedReduce", c, in, offsets, out, 4 * elements + 8 * (count + 1) + 4 * count, runs, [&] {
    CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in.device, out, (int64_t)count, d_offsets,
                                          d_offsets + 1));
  });
  CHECK(cudaFree(temp));
  int64_t size = count ? offsets[1] - offsets[0] : 0;
  bool uniform = count > 0 && size <= INT32_MAX;
  for (size_t s = 0; s < count && uniform; ++s) uniform = offsets[s + 1] - offsets[s] == size;
  if (uniform) {
#ifdef FIXED_SIZE
    temp_bytes = 0;
    CHECK(cub::DeviceSegmentedReduce::Sum(nullptr, temp_bytes, in.device, out, (int64_t)count, (int)size));
    CHECK(cudaMalloc(&temp, std::max<size_t>(1, temp_bytes)));
    measure("cub.DeviceSegmentedReduce fixed-size", c, in, offsets, out, 4 * elements + 4 * count, runs, [&] {
      CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in.device, out, (int64_t)count, (int)size));
    });
    CHECK(cudaFree(temp));
#else
    std::printf("{\"library\": \"cub.DeviceSegmentedReduce fixed-size\", \"case\": \"%s\", "
                "\"error\": \"this CCCL (%d.%d.%d) has no fixed-size overload\"}\n",
                c.c_str(), CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
#endif
  }
  CHECK(cudaFree(out));
  CHECK(cudaFree(d_offsets));
}

int main(int argc, char** argv) {
  int runs = std::max(5, argc > 1 ? std::atoi(argv[1]) : 50);
  Input in;
  CHECK(cudaMalloc(&in.device, N * sizeof(float)));
  fill<<<1024, 256>>>(in.device, N, 1);
  in.host.resize(N);
  CHECK(cudaMemcpy(in.host.data(), in.device, N * sizeof(float), cudaMemcpyDeviceToHost));
  for (int a = 2; a < argc; ++a) {
    std::string path = argv[a];
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      std::printf("{\"library\": \"cub.DeviceSegmentedReduce\", \"error\": \"cannot open %s\"}\n", path.c_str());
      continue;
    }
    std::vector<int64_t> offsets{0};
    int64_t len;
    while (std::fread(&len, sizeof len, 1, f) == 1) offsets.push_back(offsets.back() + len);
    std::fclose(f);
    if ((size_t)offsets.back() > N) {
      std::printf("{\"library\": \"cub.DeviceSegmentedReduce\", \"error\": \"%s: more than 2^28 elements\"}\n",
                  path.c_str());
      continue;
    }
    size_t slash = path.find_last_of('/');
    std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    name = name.substr(0, name.rfind(".i64"));
    run_case("segments " + name + " (" + std::to_string(offsets.size() - 1) + " segments)", in, offsets, runs);
  }
  const size_t shapes[5][2] = {{16384, 16384}, {1 << 20, 256}, {256, 1 << 20}, {1 << 24, 16}, {4096, 65536}};
  for (auto& rc : shapes) {
    std::vector<int64_t> offsets(rc[0] + 1);
    for (size_t r = 0; r <= rc[0]; ++r) offsets[r] = (int64_t)(r * rc[1]);
    run_case(std::to_string(rc[0]) + "x" + std::to_string(rc[1]) + " axis 1", in, offsets, runs);
  }
  CHECK(cudaFree(in.device));
  return 0;
}
