// Where a small reduction's time goes on this GPU: GPU time between CUDA
// events queued behind a hold kernel (nvbench's blocking kernel), median of
// RUNS, for an empty kernel, one-block reductions of 2^10 floats writing
// device or mapped host memory, the single-pass ticket pattern, and CUB;
// also 2^23 floats (32 MiB: a 2^22 dot product's two inputs).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o probe cli/baselines/latency_probe.cu && ./probe
//
// (Its H200 figures: docs/src/performance/tuning.md.)
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cub/cub.cuh>

#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1); } } while (0)

__global__ void hold(volatile unsigned *flag) { while (*flag == 0) {} }
__global__ void empty() {}

__device__ float block_sum(float s) {
  __shared__ float w[32];
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
  if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = s;
  __syncthreads();
  s = threadIdx.x < blockDim.x / 32 ? w[threadIdx.x] : 0.f;
  if (threadIdx.x < 32)
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
  return s;
}

// MODE 0: result to device memory; 1: to mapped host memory, fence.sys, flag
template <int MODE>
__global__ void oneblock(const float4 *in, int nv, float *out, unsigned *done) {
  float s = 0;
  for (int i = threadIdx.x; i < nv; i += blockDim.x) { float4 v = in[i]; s += (v.x + v.y) + (v.z + v.w); }
  s = block_sum(s);
  if (threadIdx.x == 0) {
    *out = s;
    if (MODE == 1) { __threadfence_system(); *(volatile unsigned *)done = 1; }
  }
}

// the single-pass pattern: partial per block, fence, ticket, last block sums
template <int MODE>
__global__ void ticket(const float4 *in, int nv, float *partials, unsigned *tk, float *out, unsigned *done) {
  __shared__ bool last;
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nv; i += gridDim.x * blockDim.x) { float4 v = in[i]; s += (v.x + v.y) + (v.z + v.w); }
  s = block_sum(s);
  if (threadIdx.x == 0) { partials[blockIdx.x] = s; __threadfence(); last = atomicInc(tk, gridDim.x - 1) == gridDim.x - 1; }
  __syncthreads();
  if (!last) return;
  __threadfence();
  s = 0;
  for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) s += ((volatile float *)partials)[b];
  s = block_sum(s);
  if (threadIdx.x == 0) {
    *out = s;
    if (MODE == 1) { __threadfence_system(); *(volatile unsigned *)done = 1; }
  }
}

static unsigned *hflag, *dflag;

template <class F> double queued(cudaStream_t st, int runs, F launch) {
  std::vector<cudaEvent_t> ev(2 * runs);
  for (auto &e : ev) CK(cudaEventCreate(&e));
  for (int i = 0; i < 20; i++) launch(i);  // warm-up
  CK(cudaStreamSynchronize(st));
  *(volatile unsigned *)hflag = 0;
  hold<<<1, 1, 0, st>>>(dflag);
  for (int i = 0; i < runs; i++) { CK(cudaEventRecord(ev[2 * i], st)); launch(i); CK(cudaEventRecord(ev[2 * i + 1], st)); }
  *(volatile unsigned *)hflag = 1;
  CK(cudaStreamSynchronize(st));
  std::vector<float> t(runs);
  for (int i = 0; i < runs; i++) CK(cudaEventElapsedTime(&t[i], ev[2 * i], ev[2 * i + 1]));
  for (auto &e : ev) CK(cudaEventDestroy(e));
  std::sort(t.begin(), t.end());
  return t[runs / 2] * 1e3;
}

int main() {
  const int RUNS = 200, COPIES = 8;
  cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CK(cudaHostAlloc(&hflag, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dflag, hflag, 0));
  float *hout; float *dmapped; CK(cudaHostAlloc(&hout, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&dmapped, hout, 0));
  unsigned *ddone = (unsigned *)(dmapped + 8);
  size_t big = size_t(1) << 22;
  float *in; CK(cudaMalloc(&in, COPIES * big * 4));
  {
    std::vector<float> h(COPIES * big); unsigned x = 1;
    for (auto &v : h) { x = x * 1664525u + 1013904223u; v = (x >> 8) * (1.f / 16777216.f) - 0.5f; }
    CK(cudaMemcpy(in, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  }
  float *dout, *partials; unsigned *tk; CK(cudaMalloc(&dout, 64)); CK(cudaMalloc(&partials, 4096 * 4)); CK(cudaMalloc(&tk, 4)); CK(cudaMemset(tk, 0, 4));
  auto src = [&](int i, size_t) { return (const float4 *)(in + (i % COPIES) * big); };
  printf("queued GPU time between events, median of %d, microseconds\n", RUNS);
  printf("%-48s %8.2f\n", "events only", queued(st, RUNS, [&](int) {}));
  printf("%-48s %8.2f\n", "empty kernel <<<1,32>>>", queued(st, RUNS, [&](int) { empty<<<1, 32, 0, st>>>(); }));
  printf("%-48s %8.2f\n", "empty kernel <<<1056,256>>>", queued(st, RUNS, [&](int) { empty<<<1056, 256, 0, st>>>(); }));
  printf("%-48s %8.2f\n", "2^10 one block, device out", queued(st, RUNS, [&](int i) { oneblock<0><<<1, 256, 0, st>>>(src(i, 1024), 256, dout, nullptr); }));
  printf("%-48s %8.2f\n", "2^10 one block, mapped out + fence.sys + flag", queued(st, RUNS, [&](int i) { oneblock<1><<<1, 256, 0, st>>>(src(i, 1024), 256, dmapped, ddone); }));
  printf("%-48s %8.2f\n", "2^10 ticket grid 1, device out", queued(st, RUNS, [&](int i) { ticket<0><<<1, 256, 0, st>>>(src(i, 1024), 256, partials, tk, dout, nullptr); }));
  printf("%-48s %8.2f\n", "2^10 ticket grid 1, mapped out", queued(st, RUNS, [&](int i) { ticket<1><<<1, 256, 0, st>>>(src(i, 1024), 256, partials, tk, dmapped, ddone); }));
  printf("%-48s %8.2f\n", "2^10 ticket grid 4 (64 threads), mapped out", queued(st, RUNS, [&](int i) { ticket<1><<<4, 64, 0, st>>>(src(i, 1024), 256, partials, tk, dmapped, ddone); }));
  for (int grid : {264, 528, 1056, 2112}) {
    char name[64]; snprintf(name, 64, "2^22 ticket grid %d x256, device out", grid);
    printf("%-48s %8.2f\n", name, queued(st, RUNS, [&](int i) { ticket<0><<<grid, 256, 0, st>>>(src(i, big), big / 4, partials, tk, dout, nullptr); }));
    snprintf(name, 64, "2^22 ticket grid %d x256, mapped out", grid);
    printf("%-48s %8.2f\n", name, queued(st, RUNS, [&](int i) { ticket<1><<<grid, 256, 0, st>>>(src(i, big), big / 4, partials, tk, dmapped, ddone); }));
  }
  // 32 MiB, the bytes of a dot product of two 2^22-float vectors: four
  // disjoint windows of the 128 MiB buffer, so no run finds its input in L2
  auto wide = [&](int i) { return (const float4 *)(in + (i % 4) * 2 * big); };
  for (int grid : {528, 1056, 2112}) {
    char name[64]; snprintf(name, 64, "2^23 ticket grid %d x256, device out", grid);
    printf("%-48s %8.2f\n", name, queued(st, RUNS, [&](int i) { ticket<0><<<grid, 256, 0, st>>>(wide(i), big / 2, partials, tk, dout, nullptr); }));
  }
  {
    size_t temp = 0; CK(cub::DeviceReduce::Sum(nullptr, temp, in, dout, (int)(2 * big), st));
    void *t; CK(cudaMalloc(&t, temp));
    printf("%-48s %8.2f\n", "CUB DeviceReduce::Sum n=2^23 (32 MiB)", queued(st, RUNS, [&](int i) { cub::DeviceReduce::Sum(t, temp, (const float *)wide(i), dout, (int)(2 * big), st); }));
    CK(cudaFree(t));
  }
  for (size_t n : {size_t(1024), big}) {
    size_t temp = 0; CK(cub::DeviceReduce::Sum(nullptr, temp, in, dout, (int)n, st));
    void *t; CK(cudaMalloc(&t, temp));
    char name[64]; snprintf(name, 64, "CUB DeviceReduce::Sum n=%zu", n);
    printf("%-48s %8.2f\n", name, queued(st, RUNS, [&](int i) { cub::DeviceReduce::Sum(t, temp, in + (i % COPIES) * big, dout, (int)n, st); }));
    CK(cudaFree(t));
  }
  CK(cudaGetLastError());
  float check; CK(cudaMemcpy(&check, dout, 4, cudaMemcpyDeviceToHost));
  printf("last CUB result %g (finite: %d)\n", check, check == check);
  return 0;
}
