// Vendor baseline: CUB's DeviceReduce::Sum, timed like the
// Rust kernels (`reduce bench`): CUDA events around each call (the whole
// reduction, result left in device memory), warm-up, median of many runs,
// inputs rotated over buffers that together exceed the L2 cache.
//
// Build and run on the GPU machine (nvcc is there, Rust is not):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_bench cuda/vendor/cub_bench.cu && ./cub_bench
// Prints CSV: library,type,n,median_us,min_us,max_us,GB_per_s
#include <cub/device/device_reduce.cuh>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <type_traits>
#include <vector>

#define CHECK(x) do { cudaError_t check_err_ = (x); if (check_err_ != cudaSuccess) { \
    std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(check_err_)); std::exit(1); } } while (0)

template <typename T> __global__ void fill(T *p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t z = (seed ^ (i * 0x2545f4914f6cdd1dull)) + 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull; z = (z ^ (z >> 27)) * 0x94d049bb133111ebull; z ^= z >> 31;
        if constexpr (std::is_floating_point<T>::value) p[i] = T((int64_t)(z >> 40) - (1 << 23)) / T(1 << 23);
        else p[i] = T(z);
    }
}

template <typename T> void bench(const char *name, size_t n, int runs) {
    int dev; CHECK(cudaGetDevice(&dev));
    int l2; CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    size_t bytes = n * sizeof(T);
    size_t copies = std::max<size_t>(1, (4 * (size_t)l2 + bytes - 1) / bytes);
    std::vector<T *> in(copies);
    for (auto &p : in) { CHECK(cudaMalloc(&p, bytes)); fill<<<1024, 256>>>(p, n, 1); }
    T *out; CHECK(cudaMalloc(&out, sizeof(T)));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in[0], out, n));
    void *temp; CHECK(cudaMalloc(&temp, temp_bytes));
    for (int i = 0; i < 5; i++) CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in[i % copies], out, n));
    std::vector<cudaEvent_t> ev(2 * runs);
    for (auto &e : ev) CHECK(cudaEventCreate(&e));
    for (int i = 0; i < runs; i++) {
        CHECK(cudaEventRecord(ev[2 * i]));
        CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in[i % copies], out, n));
        CHECK(cudaEventRecord(ev[2 * i + 1]));
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms(runs);
    for (int i = 0; i < runs; i++) CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    std::sort(ms.begin(), ms.end());
    double med = runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2;
    std::printf("cub,%s,%zu,%.2f,%.2f,%.2f,%.1f\n", name, n, med * 1e3, ms[0] * 1e3, ms[runs - 1] * 1e3, bytes / (med * 1e-3) / 1e9);
    for (auto &e : ev) CHECK(cudaEventDestroy(e));
    for (auto p : in) CHECK(cudaFree(p));
    CHECK(cudaFree(out)); CHECK(cudaFree(temp));
}

int main() {
    std::printf("library,type,n,median_us,min_us,max_us,GB_per_s\n");
    for (size_t n : {size_t(1) << 16, size_t(1) << 22, size_t(1) << 25, size_t(1) << 28}) {
        bench<int>("i32", n, 100);
        bench<float>("f32", n, 100);
    }
    return 0;
}
