/*
 * The host time of one library call on a 1x1 device image, beside the floor
 * under it: an empty kernel launch on the same stream. The Python binding's
 * own host time (bench_python_host.py) less these rows is what the binding
 * adds. Median of 15 rounds of 20,000 calls, each round synchronised at its
 * end (the launch queue never fills), in microseconds per call.
 *
 *   imghist_bench_host_cost
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "imghist.h"

__global__ void k_empty() {}

__global__ void k_args(const unsigned char *p, unsigned long long *h, unsigned n)
{
    if (p != nullptr && threadIdx.x < n) {
        h[threadIdx.x] = p[0];
    }
}

template <class F> static double us_per_call(cudaStream_t s, F f)
{
    constexpr int N = 20000, ROUNDS = 15;
    std::vector<double> t;
    for (int r = 0; r < ROUNDS + 1; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < N; i++) {
            f();
        }
        auto t1 = std::chrono::steady_clock::now();
        CUDA_CHECK(cudaStreamSynchronize(s));
        if (r > 0) { // the first round warms up
            t.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / N);
        }
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "no CUDA GPU\n");
        return 77;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned char *img;
    unsigned long long *hist;
    CUDA_CHECK(cudaMalloc(&img, 256));
    CUDA_CHECK(cudaMalloc(&hist, 256 * sizeof *hist));
    CUDA_CHECK(cudaMemset(img, 7, 256));
    imghist_ctx *ctx = nullptr;
    if (imghist_create(IMGHIST_BACKEND_CUDA, 0, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "imghist_create: %s\n", ctx ? imghist_last_error(ctx) : "no memory");
        return 1;
    }
    IH_CHECK(ctx, imghist_set_stream(ctx, (imghist_stream)s));
    imghist_view v = {};
    v.data = img;
    v.dtype = IMGHIST_U8;
    v.mem = IMGHIST_MEM_DEVICE;
    v.width = 1;
    v.height = 1;
    v.pitch = 1;
    imghist_view d = v;
    d.data = img + 128;
    const imghist_counts c = {(uint64_t *)hist, 256, IMGHIST_MEM_DEVICE};

    printf("# host time per call, 1x1 uint8 device image, %s, median of 15 x 20000 calls\n",
           prop.name);
    printf("| call | us |\n|---|---|\n");
    printf("| empty kernel <<<1, 32>>> | %.2f |\n",
           us_per_call(s, [&] { k_empty<<<1, 32, 0, s>>>(); }));
    printf("| kernel <<<1, 256>>> with three arguments | %.2f |\n",
           us_per_call(s, [&] { k_args<<<1, 256, 0, s>>>(img, hist, 256u); }));
    printf("| imghist_histogram | %.2f |\n",
           us_per_call(s, [&] { IH_CHECK(ctx, imghist_histogram(ctx, &v, nullptr, &c)); }));
    printf("| imghist_equalize | %.2f |\n",
           us_per_call(s, [&] {
               IH_CHECK(ctx, imghist_equalize(ctx, &v, &d, IMGHIST_EQ_OPENCV, nullptr));
           }));
    printf("| imghist_set_stream (same stream) | %.2f |\n",
           us_per_call(s, [&] { IH_CHECK(ctx, imghist_set_stream(ctx, (imghist_stream)s)); }));
    imghist_destroy(ctx);
    CUDA_CHECK(cudaFree(img));
    CUDA_CHECK(cudaFree(hist));
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
