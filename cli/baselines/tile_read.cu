// Whether the staged segments' way of reading caps the memory below the read ceiling:
// 1 GiB of f32 (one buffer, 20 times an H100's L2) read by warps that copy 4 KiB a round into
// their own shared stage (cp.async), wait, then sum it from the stage, as segments_staged
// does, but with no segments:
//   tiles T: each warp takes tiles of T bytes from a counter and reads its tile round after round
//   strided: warp w reads rounds w, w + W, ... (W warps in all): neighbours read neighbouring 4 KiB at once
//   plain: a grid-stride loop of 16-byte loads, eight a lane in flight (the read ceiling's kernel)
// Blocks of 256, four an SM; CUDA events around each launch, median of 30 after 5 warm-ups.
// nvcc -O3 -arch=sm_90 -std=c++17 -o tile_read cli/baselines/tile_read.cu && ./tile_read
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_pipeline.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("error %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

__device__ unsigned int counter;
constexpr int STAGE4 = 4096 / 16; // float4 a stage

__global__ void fill(float4* a, size_t n4) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float f = (float)((i * 2654435761u) % 1000) * 1e-3f + 0.5f;
        a[i] = make_float4(f, f + 1, f + 2, f + 3);
    }
}

__device__ __forceinline__ float round_of(float4* stage, const float4* src, int lane) {
    for (int j = lane; j < STAGE4; j += 32) __pipeline_memcpy_async(&stage[j], &src[j], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
    float s = 0.f;
    for (int j = lane; j < STAGE4; j += 32) { float4 v = stage[j]; s += v.x + v.y + v.z + v.w; }
    __syncwarp();
    return s;
}

__global__ void tiles(const float4* __restrict__ a, size_t tile4, unsigned ntiles, float* out) {
    extern __shared__ float4 smem[];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float4* stage = smem + warp * STAGE4;
    float acc = 0.f;
    for (;;) {
        unsigned t = 0;
        if (lane == 0) t = atomicAdd(&counter, 1u);
        t = __shfl_sync(~0u, t, 0);
        if (t >= ntiles) break;
        const float4* base = a + (size_t)t * tile4;
        for (size_t r = 0; r < tile4; r += STAGE4) acc += round_of(stage, base + r, lane);
    }
    if (acc == 12345.f) out[0] = acc;
}

__global__ void strided(const float4* __restrict__ a, size_t rounds, float* out) {
    extern __shared__ float4 smem[];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float4* stage = smem + warp * STAGE4;
    size_t w = blockIdx.x * (blockDim.x / 32) + warp, W = gridDim.x * (blockDim.x / 32);
    float acc = 0.f;
    for (size_t r = w; r < rounds; r += W) acc += round_of(stage, a + r * STAGE4, lane);
    if (acc == 12345.f) out[0] = acc;
}

__global__ void plain(const float4* __restrict__ a, size_t n4, float* out) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
    float acc = 0.f;
    for (; i + 7 * stride < n4; i += 8 * stride) {
        float4 v[8];
#pragma unroll
        for (int k = 0; k < 8; k++) v[k] = a[i + k * stride];
#pragma unroll
        for (int k = 0; k < 8; k++) acc += v[k].x + v[k].y + v[k].z + v[k].w;
    }
    for (; i < n4; i += stride) { float4 v = a[i]; acc += v.x + v.y + v.z + v.w; }
    if (acc == 12345.f) out[0] = acc;
}

int main() {
    const size_t bytes = 1ull << 30, n4 = bytes / 16;
    float4* a; float* out;
    CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&out, 16));
    fill<<<1024, 256>>>(a, n4); CK(cudaDeviceSynchronize());
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
    const int block = 256, smem = 8 * 4096;
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto time = [&](const char* name, auto launch, bool reset) -> int {
        std::vector<float> t;
        for (int r = 0; r < 35; r++) {
            if (reset) { unsigned z = 0; CK(cudaMemcpyToSymbol(counter, &z, 4)); }
            cudaEventRecord(e0); launch(); cudaEventRecord(e1); CK(cudaEventSynchronize(e1));
            float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 5) t.push_back(ms * 1000);
        }
        CK(cudaGetLastError());
        std::sort(t.begin(), t.end());
        float med = t[t.size() / 2];
        printf("{\"what\": \"tile_read\", \"device\": \"%s\", \"pattern\": \"%s\", \"median_us\": %.2f, \"gbps\": %.1f}\n", p.name, name, med, bytes / med / 1e3);
        return 0;
    };
    for (int bps : {4, 8}) {
        int grid = bps * sms;
        if (bps == 8) { // eight blocks of 256 an SM: 64 warps, 256 KiB of stages do not fit; plain only
            time("plain, 8 blocks an SM", [&] { plain<<<grid, block>>>(a, n4, out); }, false);
            continue;
        }
        CK(cudaFuncSetAttribute(tiles, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        CK(cudaFuncSetAttribute(strided, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
        time("plain, 4 blocks an SM", [&] { plain<<<grid, block>>>(a, n4, out); }, false);
        time("strided 4 KiB rounds", [&] { strided<<<grid, block, smem>>>(a, n4 / STAGE4, out); }, false);
        for (size_t tile : {16384ul, 65536ul, 262144ul}) {
            char name[64]; snprintf(name, 64, "tiles of %zu KiB, 4 KiB rounds", tile >> 10);
            time(name, [&] { tiles<<<grid, block, smem>>>(a, tile / 16, (unsigned)(bytes / tile), out); }, true);
        }
    }
    return 0;
}
