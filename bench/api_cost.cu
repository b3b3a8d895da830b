/*
 * Host cost of the CUDA runtime queries that the library makes on every
 * call: the pointer query of each host copy (cuda_transfer.cu), and the
 * attribute, dynamic shared memory and occupancy queries in front of each
 * wide-histogram launch (hist_wide.cu). Median of 15 rounds of 20000 calls,
 * in microseconds per call. One-off measurement, built outside meson:
 *
 *   nvcc -O2 -arch=sm_90 -o api_cost bench/api_cost.cu
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

__global__ void k_dyn(int *p)
{
    extern __shared__ int s[];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (p != nullptr) {
        p[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
    }
}

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                       \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

template <class F> double us_per_call(F f)
{
    constexpr int N = 20000, ROUNDS = 15;
    std::vector<double> t;
    for (int r = 0; r < ROUNDS; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < N; i++) {
            f();
        }
        const auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / N);
    }
    std::sort(t.begin(), t.end());
    return t[ROUNDS / 2];
}

int main()
{
    int dev = 0;
    CK(cudaSetDevice(dev));
    CK(cudaFree(nullptr));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    std::vector<unsigned char> pageable(1 << 20, 1);
    unsigned char *pinned = nullptr;
    CK(cudaHostAlloc((void **)&pinned, 1 << 20, cudaHostAllocDefault));
    int *d = nullptr;
    CK(cudaMalloc((void **)&d, 1 << 20));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    printf("api_cost: %s, microseconds per call (median of 15 x 20000)\n", prop.name);
    cudaPointerAttributes a;
    printf("cudaPointerGetAttributes, pageable   %.3f\n",
           us_per_call([&] { CK(cudaPointerGetAttributes(&a, pageable.data() + 4096)); }));
    printf("cudaPointerGetAttributes, pinned     %.3f\n",
           us_per_call([&] { CK(cudaPointerGetAttributes(&a, pinned + 4096)); }));
    printf("cudaPointerGetAttributes, device     %.3f\n",
           us_per_call([&] { CK(cudaPointerGetAttributes(&a, d + 1024)); }));
    int v = 0;
    printf("cudaGetDevice                        %.3f\n", us_per_call([&] { CK(cudaGetDevice(&v)); }));
    printf("cudaDeviceGetAttribute (optin smem)  %.3f\n", us_per_call([&] {
               CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
           }));
    printf("cudaFuncSetAttribute (dyn smem)      %.3f\n", us_per_call([&] {
               CK(cudaFuncSetAttribute(k_dyn, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 << 10));
           }));
    printf("cudaOccupancyMaxActiveBlocksPerSM    %.3f\n", us_per_call([&] {
               CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v, k_dyn, 512, 96 << 10));
           }));
    /* For scale: what a launch itself costs the host. */
    printf("kernel launch (queued)               %.3f\n", us_per_call([&] {
               k_dyn<<<1, 32, 128, s>>>(nullptr);
               CK(cudaGetLastError());
           }));
    CK(cudaStreamSynchronize(s));
    return 0;
}
