// Element-balanced segmented f32 sums on the segments of `reduce shapes`, an experiment
// beside the library's segments kernels (it did not help: docs/src/performance/what-did-not-help.md):
// block tiles walked in order against the tile's segment ends (segments_merge_block.cuh), warps
// taking tiles of chunks copied ahead by cp.async (segments_merge_warp.cuh), and the same
// traffic as a plain stream (the input and offsets read, as many results written). Each result
// checked against the CPU's double sums, and a second launch's bits against the first's.
//   SEGMENT_LENGTHS_DIR=/tmp/l python3 cli/baselines/shapes_vendor.py 5 segments
//   nvcc -O3 -std=c++17 -arch=sm_90 -I cli/baselines cli/baselines/segments_merge.cu -o /tmp/segments_merge
//   /tmp/segments_merge 30 /tmp/l/uniform32.i64 /tmp/l/uniform512.i64 /tmp/l/zipf2.i64 ...
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cub_common.cuh"
#include "segments_merge_block.cuh"
#include "segments_merge_warp.cuh"

static const size_t N = (size_t)1 << 28;

struct Case {
  std::string name;
  std::vector<int64_t> offsets;
  std::vector<double> want;
  long long* d_offsets;
  float* out;
  unsigned* tickets;
  size_t count, elements, moved;
};

template <int BLOCK, int ITEMS, int LOAD, int MODE>
static void run(const char* label, const float* x, Case& c, int runs) {
  constexpr long long TILE = BLOCK * ITEMS;
  long long n = (long long)c.elements;
  long long tiles = std::max(1LL, (n + TILE - 1) / TILE);
  long long* tile_seg;
  float* pieces;
  CHECK(cudaMalloc(&tile_seg, (tiles + 1) * sizeof(long long)));
  CHECK(cudaMalloc(&pieces, 2 * tiles * sizeof(float)));
  tile_index<<<(unsigned)((tiles + 256) / 256), 256>>>(c.d_offsets, (long long)c.count, TILE, tiles, tile_seg);
  CHECK(cudaGetLastError());
  size_t smem = LOAD ? TILE * 4 : 0;
  auto launch = [&] {
    seg_merge<BLOCK, ITEMS, LOAD, MODE><<<(unsigned)tiles, BLOCK, smem>>>(
        x, n, c.d_offsets, (long long)c.count, tile_seg, c.out, pieces, c.tickets);
  };
  bool ok = true, same = true;
  std::vector<float> got(c.count), again(c.count);
  if (MODE == 0) {
    CHECK(cudaMemset(c.out, 0xff, c.count * sizeof(float)));
    launch();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got.data(), c.out, c.count * sizeof(float), cudaMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t s = 0; s < c.count; ++s) {
      double len = (double)(c.offsets[s + 1] - c.offsets[s]);
      if (!(std::fabs((double)got[s] - c.want[s]) <= 1e-6 * len + 1e-4)) {
        if (!bad) first = s;
        ++bad;
      }
    }
    if (bad) {
      ok = false;
      std::fprintf(stderr, "%s %s: %zu wrong, first %zu: got %g want %g (len %lld)\n", label, c.name.c_str(), bad,
                   first, got[first], c.want[first], (long long)(c.offsets[first + 1] - c.offsets[first]));
    }
  }
  double us = median_us(runs, 1, [&](int) { launch(); });
  CHECK(cudaGetLastError());
  if (MODE == 0) {
    CHECK(cudaMemset(c.out, 0xff, c.count * sizeof(float)));
    launch();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(again.data(), c.out, c.count * sizeof(float), cudaMemcpyDeviceToHost));
    same = std::memcmp(got.data(), again.data(), c.count * sizeof(float)) == 0;
  }
  std::printf("{\"library\": \"%s\", \"case\": \"%s\", \"median_us\": %.2f, \"gbps\": %.1f, \"ok\": %s, "
              "\"same_bits\": %s}\n",
              label, c.name.c_str(), us, c.moved / us / 1e3, ok ? "true" : "false", same ? "true" : "false");
  std::fflush(stdout);
  CHECK(cudaFree(tile_seg));
  CHECK(cudaFree(pieces));
}

template <int WARPS, int VPL, int NBUF, int ECAP, int TC>
static void run_warp(const char* label, const float* x, Case& c, int runs) {
  constexpr long long CH = 32 * 4 * VPL;
  long long n = (long long)c.elements;
  long long chunks = std::max(1LL, (n + CH - 1) / CH), tiles = (chunks + TC - 1) / TC;
  long long* chunk_seg;
  float* pieces;
  CHECK(cudaMalloc(&chunk_seg, (chunks + 1) * sizeof(long long)));
  CHECK(cudaMalloc(&pieces, 2 * tiles * sizeof(float)));
  tile_index<<<(unsigned)((chunks + 256) / 256), 256>>>(c.d_offsets, (long long)c.count, CH, chunks, chunk_seg);
  CHECK(cudaGetLastError());
  auto kernel = seg_warp<WARPS, VPL, NBUF, ECAP, TC>;
  size_t smem = WARPS * sizeof(WarpStage<VPL, NBUF, ECAP>);
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int per_sm = 0, sms = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, WARPS * 32, smem));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  unsigned grid = (unsigned)std::max(1LL, std::min((long long)per_sm * sms, (tiles + WARPS - 1) / WARPS));
  auto launch = [&] {
    kernel<<<grid, WARPS * 32, smem>>>(x, n, c.d_offsets, (long long)c.count, chunk_seg, c.out, pieces, c.tickets);
  };
  bool ok = true, same = true;
  std::vector<float> got(c.count), again(c.count);
  CHECK(cudaMemset(c.out, 0xff, c.count * sizeof(float)));
  launch();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got.data(), c.out, c.count * sizeof(float), cudaMemcpyDeviceToHost));
  size_t bad = 0, first = 0;
  for (size_t s = 0; s < c.count; ++s) {
    double len = (double)(c.offsets[s + 1] - c.offsets[s]);
    if (!(std::fabs((double)got[s] - c.want[s]) <= 1e-6 * len + 1e-4)) {
      if (!bad) first = s;
      ++bad;
    }
  }
  if (bad) {
    ok = false;
    std::fprintf(stderr, "%s %s: %zu wrong, first %zu: got %g want %g (len %lld)\n", label, c.name.c_str(), bad, first,
                 got[first], c.want[first], (long long)(c.offsets[first + 1] - c.offsets[first]));
  }
  double us = median_us(runs, 1, [&](int) { launch(); });
  CHECK(cudaGetLastError());
  CHECK(cudaMemset(c.out, 0xff, c.count * sizeof(float)));
  launch();
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(again.data(), c.out, c.count * sizeof(float), cudaMemcpyDeviceToHost));
  same = std::memcmp(got.data(), again.data(), c.count * sizeof(float)) == 0;
  std::printf("{\"library\": \"%s\", \"case\": \"%s\", \"median_us\": %.2f, \"gbps\": %.1f, \"ok\": %s, "
              "\"same_bits\": %s, \"grid\": %u, \"per_sm\": %d}\n",
              label, c.name.c_str(), us, c.moved / us / 1e3, ok ? "true" : "false", same ? "true" : "false", grid, per_sm);
  std::fflush(stdout);
  CHECK(cudaFree(chunk_seg));
  CHECK(cudaFree(pieces));
}

int main(int argc, char** argv) {
  int runs = std::max(5, argc > 1 ? std::atoi(argv[1]) : 30);
  float* x;
  CHECK(cudaMalloc(&x, N * sizeof(float)));
  fill<<<1024, 256>>>(x, N, 1);
  std::vector<float> host(N);
  CHECK(cudaMemcpy(host.data(), x, N * sizeof(float), cudaMemcpyDeviceToHost));
  for (int a = 2; a < argc; ++a) {
    std::string path = argv[a];
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) continue;
    Case c;
    c.offsets.push_back(0);
    int64_t len;
    while (std::fread(&len, sizeof len, 1, f) == 1) c.offsets.push_back(c.offsets.back() + len);
    std::fclose(f);
    c.count = c.offsets.size() - 1;
    c.elements = (size_t)c.offsets.back();
    c.moved = 4 * c.elements + 8 * (c.count + 1) + 4 * c.count;
    size_t slash = path.find_last_of('/');
    std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
    c.name = "segments " + name.substr(0, name.rfind(".i64")) + " (" + std::to_string(c.count) + " segments)";
    c.want.resize(c.count);
    for (size_t s = 0; s < c.count; ++s) {
      double w = 0;
      for (int64_t i = c.offsets[s]; i < c.offsets[s + 1]; ++i) w += host[i];
      c.want[s] = w;
    }
    CHECK(cudaMalloc(&c.d_offsets, c.offsets.size() * sizeof(long long)));
    CHECK(cudaMemcpy(c.d_offsets, c.offsets.data(), c.offsets.size() * sizeof(long long), cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&c.out, c.count * sizeof(float)));
    CHECK(cudaMalloc(&c.tickets, c.count * sizeof(unsigned)));
    CHECK(cudaMemset(c.tickets, 0, c.count * sizeof(unsigned)));
    run<256, 16, 1, 1>("traffic b256 i16", x, c, runs);
    run<128, 32, 1, 0>("merge b128 i32 staged", x, c, runs);
    run_warp<4, 4, 2, 256, 32>("warp w4 v4 nb2 e256 t32", x, c, runs);
    run_warp<4, 4, 3, 256, 32>("warp w4 v4 nb3 e256 t32", x, c, runs);
    run_warp<4, 2, 3, 128, 64>("warp w4 v2 nb3 e128 t64", x, c, runs);
    run_warp<4, 8, 2, 256, 16>("warp w4 v8 nb2 e256 t16", x, c, runs);
    run_warp<8, 4, 2, 256, 32>("warp w8 v4 nb2 e256 t32", x, c, runs);
    run_warp<4, 4, 2, 256, 8>("warp w4 v4 nb2 e256 t8", x, c, runs);
    CHECK(cudaFree(c.d_offsets));
    CHECK(cudaFree(c.out));
    CHECK(cudaFree(c.tickets));
  }
  CHECK(cudaFree(x));
  return 0;
}
