// The practical memory READ ceiling of this GPU: the shortest GPU time in
// which a kernel that does nothing but read a buffer once (16-byte loads, K
// loads in flight per thread, the words folded into one register, one word
// written per block so that no load can be dropped) gets through it. A full
// reduction reads every input byte once, so no reduction of that buffer can
// beat this time; `reduce` operations are reported as a share of it.
//
// For each size (in BYTES) it sweeps block in {256, 512, 1024}, grid = m x SMs
// for m in {1, 2, 4, 8, 16} plus the largest resident grid (occupancy x SMs),
// and K in {1, 2, 4, 8}, and reports the best configuration. Each
// configuration: 3 warm-up launches, then RUNS launches, each between two CUDA
// events, queued in batches of at most 32 behind a kernel that spins on a host
// flag (as latency_probe.cu; `reduce ops --timing queued` times the same way),
// so they run back to back and the host's submission time is not counted; the
// median. Inputs: random non-zero words made by a kernel, in copies that
// together exceed 4 x the L2 (at most 256 copies, at most half the free
// memory); each launch reads the next copy, so none finds its input in L2.
//
// Build and run on the GPU machine (CUDA 13.0):
//   nvcc -O3 -arch=sm_90 -o read_ceiling cli/baselines/read_ceiling.cu
//   ./read_ceiling [BYTES ...] [--runs R] [--all]
// BYTES: integers or powers such as 2^30, space- or comma-separated (default
// 2^24 2^27 2^30, i.e. 2^22, 2^25, 2^28 four-byte elements); R default 30.
//
// Prints one JSON object per line on stdout, per size:
//   {"what":"read_ceiling","device":..,"sms":..,"l2_bytes":..,"driver":..,
//    "runtime":..,"bytes":..,"best_us":..,"gbps":..,"block":..,"grid":..,
//    "loads":..,"runs":..,"configs":..,"failed":..,"copies":..,"timing":"queued"}
// gbps = bytes / best_us / 1e3 (1e9 bytes/s); configs = configurations timed.
// With --all also one "what":"read_ceiling_config" line per configuration; a
// configuration that fails always gets one, with "error". Progress on stderr.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::printf("{\"what\":\"read_ceiling\",\"error\":\"%s: %s\",\"line\":%d}\n", #x, cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)
// in a function returning cudaError_t: hand the failure to the caller, which reports it and goes on
#define TRY(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) return e_; } while (0)

__global__ void fill(unsigned *p, size_t n, unsigned long long salt) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long z = salt + i * 0x9e3779b97f4a7c15ull;  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    unsigned w = (unsigned)(z ^ (z >> 31));
    p[i] = w ? w : 0x9e3779b9u;
  }
}

__global__ void hold(volatile unsigned *flag) { while (*flag == 0) {} }

__device__ __forceinline__ unsigned fold(uint4 v) { return (v.x + v.y) ^ (v.z + v.w); }

// Reads in[0..n) once: K 16-byte loads in flight per thread per iteration,
// then the rest of the vectors one at a time, then the last n % 4 words.
template <int K>
__global__ void __launch_bounds__(1024) read_kernel(const unsigned *__restrict__ in, size_t n, unsigned *out) {
  const uint4 *v = reinterpret_cast<const uint4 *>(in);
  const size_t nv = n / 4, stride = (size_t)gridDim.x * blockDim.x, tid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  unsigned acc = 0;
  size_t i = tid;
  for (; i + (K - 1) * stride < nv; i += K * stride) {
    uint4 r[K];
#pragma unroll
    for (int k = 0; k < K; ++k) r[k] = __ldg(v + i + k * stride);
#pragma unroll
    for (int k = 0; k < K; ++k) acc ^= fold(r[k]);
  }
  for (; i < nv; i += stride) acc ^= fold(__ldg(v + i));
  for (size_t j = 4 * nv + tid; j < n; j += stride) acc += __ldg(in + j);
  for (int o = 16; o; o >>= 1) acc ^= __shfl_xor_sync(~0u, acc, o);
  __shared__ unsigned s;
  if (threadIdx.x == 0) s = 0;
  __syncthreads();
  if ((threadIdx.x & 31) == 0) atomicXor(&s, acc);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = s;  // the one word per block
}

using Kernel = void (*)(const unsigned *, size_t, unsigned *);
static Kernel kernel_for(int k) {
  switch (k) {
    case 1: return read_kernel<1>;
    case 2: return read_kernel<2>;
    case 4: return read_kernel<4>;
    default: return read_kernel<8>;
  }
}

struct Config { int block, grid, loads; };

static unsigned *hflag, *dflag;
static cudaStream_t st;
static std::vector<cudaEvent_t> ev;
static unsigned long long turn;  // every launch reads the next copy: none finds its input in L2

// Median GPU microseconds of `runs` launches of c, after 3 warm-up launches.
static cudaError_t time_config(const Config &c, const unsigned *in, size_t n, size_t pitch, int copies, unsigned *out,
                               int runs, double *us) {
  Kernel kern = kernel_for(c.loads);
  auto src = [&] { return in + (turn++ % copies) * pitch; };
  for (int r = 0; r < 3; ++r) kern<<<c.grid, c.block, 0, st>>>(src(), n, out);
  TRY(cudaGetLastError());
  TRY(cudaStreamSynchronize(st));
  for (int b0 = 0; b0 < runs; b0 += 32) {
    int b1 = std::min(runs, b0 + 32);
    *(volatile unsigned *)hflag = 0;
    hold<<<1, 1, 0, st>>>(dflag);
    cudaError_t e = cudaGetLastError();
    for (int r = b0; r < b1 && e == cudaSuccess; ++r) {
      e = cudaEventRecord(ev[2 * r], st);
      if (e == cudaSuccess) {
        kern<<<c.grid, c.block, 0, st>>>(src(), n, out);
        e = cudaGetLastError();
      }
      if (e == cudaSuccess) e = cudaEventRecord(ev[2 * r + 1], st);
    }
    *(volatile unsigned *)hflag = 1;  // release hold() on every path, errors included
    TRY(e);
    TRY(cudaStreamSynchronize(st));
  }
  std::vector<float> ms(runs);
  for (int r = 0; r < runs; ++r) TRY(cudaEventElapsedTime(&ms[r], ev[2 * r], ev[2 * r + 1]));
  std::sort(ms.begin(), ms.end());
  *us = 1e3 * ms[runs / 2];
  return cudaSuccess;
}

// "2^30" or a plain decimal integer
static bool parse_size(const std::string &s, size_t *out) {
  size_t caret = s.find('^');
  std::string a = s.substr(0, caret), b = caret == std::string::npos ? "1" : s.substr(caret + 1);
  if (a.empty() || b.empty() || (a + b).find_first_not_of("0123456789") != std::string::npos) return false;
  unsigned long long base = std::strtoull(a.c_str(), nullptr, 10), e = std::strtoull(b.c_str(), nullptr, 10), r = 1;
  if (e > 64) return false;
  for (unsigned long long k = 0; k < e; ++k) {
    if (base > 1 && r > ULLONG_MAX / base) return false;
    r *= base;
  }
  *out = r;
  return true;
}

int main(int argc, char **argv) {
  int runs = 30;
  bool all = false;
  std::vector<size_t> sizes;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    if (arg == "--all") { all = true; continue; }
    if (arg == "--runs" || arg.rfind("--runs=", 0) == 0) {
      runs = std::atoi(arg == "--runs" ? (a + 1 < argc ? argv[++a] : "0") : arg.c_str() + 7);
      continue;
    }
    for (size_t p = 0, q; p <= arg.size(); p = q + 1) {
      q = std::min(arg.find(',', p), arg.size());
      size_t bytes;
      if (q == p) continue;
      if (!parse_size(arg.substr(p, q - p), &bytes)) {
        std::fprintf(stderr, "usage: read_ceiling [BYTES ...] [--runs R] [--all]   (BYTES like 2^30 or 1073741824)\n");
        return 2;
      }
      sizes.push_back(bytes);
    }
  }
  if (runs < 1) { std::fprintf(stderr, "error: --runs needs a positive integer\n"); return 2; }
  if (sizes.empty()) sizes = {size_t(1) << 24, size_t(1) << 27, size_t(1) << 30};

  int dev, l2, driver, runtime;
  cudaDeviceProp prop;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaGetDeviceProperties(&prop, dev));
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  const int sms = prop.multiProcessorCount;
  char head[512];
  std::snprintf(head, sizeof head, "\"device\":\"%s\",\"sms\":%d,\"l2_bytes\":%d,\"driver\":%d,\"runtime\":%d",
                prop.name, sms, l2, driver, runtime);
  CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CHECK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&dflag, hflag, 0));
  ev.resize(2 * runs);
  for (auto &e : ev) CHECK(cudaEventCreate(&e));
  unsigned *out;  // one word per block; no grid here exceeds max(16, resident blocks per SM) x SMs
  CHECK(cudaMalloc(&out, sizeof(unsigned) * std::max(16, prop.maxBlocksPerMultiProcessor) * sms));

  std::vector<Config> configs;
  for (int k : {1, 2, 4, 8})
    for (int block : {256, 512, 1024}) {
      std::vector<int> grids;
      for (int m : {1, 2, 4, 8, 16}) grids.push_back(m * sms);
      int per_sm = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_for(k), block, 0) != cudaSuccess) {
        std::fprintf(stderr, "occupancy of K=%d block=%d: %s\n", k, block, cudaGetErrorString(cudaGetLastError()));
      } else if (per_sm > 0 && std::find(grids.begin(), grids.end(), per_sm * sms) == grids.end()) {
        grids.push_back(per_sm * sms);
      }
      for (int g : grids) configs.push_back({block, g, k});
    }

  for (size_t asked : sizes) {
    const size_t n = asked / 4, bytes = n * 4, pitch = (n + 63) / 64 * 64;  // copies 256-byte aligned
    if (n == 0) {
      std::printf("{\"what\":\"read_ceiling\",%s,\"bytes\":%zu,\"error\":\"fewer than 4 bytes\"}\n", head, asked);
      continue;
    }
    if (bytes != asked) std::fprintf(stderr, "%zu bytes: reading %zu (whole 4-byte words)\n", asked, bytes);
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t want = std::min<size_t>(256, 4 * (size_t)l2 / bytes + 1), fit = free_b / 2 / (pitch * 4);
    const int copies = (int)std::max<size_t>(1, std::min(want, fit));
    if ((size_t)copies < want) std::fprintf(stderr, "%zu bytes: %d copies fit, %zu wanted\n", bytes, copies, want);
    unsigned *in = nullptr;
    cudaError_t e = cudaMalloc(&in, copies * pitch * 4);
    if (e != cudaSuccess) {
      cudaGetLastError();
      std::printf("{\"what\":\"read_ceiling\",%s,\"bytes\":%zu,\"error\":\"cudaMalloc %zu bytes: %s\"}\n", head, bytes,
                  copies * pitch * 4, cudaGetErrorString(e));
      std::fflush(stdout);
      continue;
    }
    fill<<<8 * sms, 256, 0, st>>>(in, copies * pitch, 0x243f6a8885a308d3ull ^ bytes);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(st));
    std::fprintf(stderr, "%zu bytes: %d copies, %zu configurations, %d runs each\n", bytes, copies, configs.size(), runs);

    Config best{};
    double best_us = 0;
    int ok = 0, failed = 0;
    for (const Config &c : configs) {
      double us = 0;
      e = time_config(c, in, n, pitch, copies, out, runs, &us);
      if (e != cudaSuccess) {
        ++failed;
        cudaGetLastError();
        std::printf("{\"what\":\"read_ceiling_config\",%s,\"bytes\":%zu,\"block\":%d,\"grid\":%d,\"loads\":%d,\"error\":\"%s\"}\n",
                    head, bytes, c.block, c.grid, c.loads, cudaGetErrorString(e));
        std::fflush(stdout);
        CHECK(cudaDeviceSynchronize());  // a sticky error (the context is lost) ends the program here
        continue;
      }
      ++ok;
      if (all)
        std::printf("{\"what\":\"read_ceiling_config\",%s,\"bytes\":%zu,\"block\":%d,\"grid\":%d,\"loads\":%d,"
                    "\"median_us\":%.2f,\"gbps\":%.1f,\"runs\":%d,\"copies\":%d}\n",
                    head, bytes, c.block, c.grid, c.loads, us, bytes / us / 1e3, runs, copies);
      if (ok == 1 || us < best_us) { best_us = us; best = c; }
    }
    if (ok == 0)
      std::printf("{\"what\":\"read_ceiling\",%s,\"bytes\":%zu,\"error\":\"no configuration ran\",\"failed\":%d}\n", head,
                  bytes, failed);
    else
      std::printf("{\"what\":\"read_ceiling\",%s,\"bytes\":%zu,\"best_us\":%.2f,\"gbps\":%.1f,\"block\":%d,\"grid\":%d,"
                  "\"loads\":%d,\"runs\":%d,\"configs\":%d,\"failed\":%d,\"copies\":%d,\"timing\":\"queued\"}\n",
                  head, bytes, best_us, bytes / best_us / 1e3, best.block, best.grid, best.loads, runs, ok, failed, copies);
    std::fflush(stdout);
    CHECK(cudaFree(in));
  }
  return 0;
}
