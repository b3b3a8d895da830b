/*
 * imghist_bench_joint: joint histograms, 16-bit equalization and mutual
 * information on device views, against the memory-bandwidth ceiling measured
 * in the same run.
 *
 *   imghist_bench_joint [--runs N]
 *
 * Rows: the read ceiling of two 1 GiB inputs (the fastest read_variant of
 * bench_kernels.cu, both buffers); imghist_histogram2d U8 x U8 256 x 256 on
 * uniform, constant and correlated (b = a + noise in [-3, 3]) data; 16-bit
 * equalization of 1 GiB against a read of 1 GiB plus a 1 GiB copy (two reads
 * and a write); the mutual information of a 256 x 256 joint histogram.
 * Every imghist call is checked once before it is timed (joint histograms
 * against a plain global-atomic kernel, equalization against the CPU
 * backend); a mismatch prints FAIL and makes the exit status 1. Times are
 * medians of CUDA-event timings of single calls after warm-up, the inputs
 * evicted from L2 before each call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "bench_kernels.cuh"
#include "imghist.h"


namespace {

constexpr size_t GiB = (size_t)1 << 30;
int runs = 20;
call_timer timer;
cudaStream_t stream;
unsigned int *d_sink;
int grid_rw;
int failures;
imghist_ctx *ctx;

__device__ __forceinline__ uint32_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* kind 0: uniform bytes; 1: constant 127; 2: ref + noise in [-3, 3], clamped;
 * 3: uniform 16-bit samples (n counts bytes). */
__global__ void fill_kernel(uint8_t *p, size_t n, int kind, uint64_t seed, const uint8_t *ref)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t h = mix(i * 0x9e3779b97f4a7c15ull + seed);
        if (kind == 0 || kind == 3) {
            p[i] = (uint8_t)h;
        } else if (kind == 1) {
            p[i] = 127;
        } else {
            const int v = (int)ref[i] + (int)(h % 7) - 3;
            p[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

/* The check's reference: one pair per thread, global 64-bit atomics. */
__global__ void joint_ref_kernel(const uint8_t *a, const uint8_t *b, size_t n,
                                 unsigned long long *cells)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        atomicAdd(cells + ((uint32_t)a[i] << 8 | b[i]), 1ull);
    }
}

/* Median ms of single calls of f, L2 flushed before each. */
double time_ms(const std::function<void()> &f, bool flush = true)
{
    return call_timer_ms(timer, f, flush);
}

/* The read ceiling of `bytes` at each buffer: the fastest variant. */
double read_ms(const std::vector<const void *> &bufs, size_t bytes)
{
    double best = 1e30;
    for (int v = 0; v < READ_VARIANTS; v++) {
        const double ms = time_ms([&] {
            for (const void *p : bufs) {
                CUDA_CHECK(launch_read((read_variant)v, p, bytes, d_sink, grid_rw, stream));
            }
        });
        best = std::min(best, ms);
    }
    return best;
}

void row(const char *name, double ms, double ref_ms, const char *ref_name)
{
    printf("  %-44s %9.3f ms   %6.1f %% of %s (%.3f ms)\n", name, ms, 100.0 * ref_ms / ms,
           ref_name, ref_ms);
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        }
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    timer.runs = runs;
    call_timer_init(timer, prop);
    stream = timer.stream;
    d_sink = timer.sink;
    grid_rw = timer.grid;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "no CUDA context: %s\n", imghist_last_error(ctx));
        return 1;
    }
    IH_CHECK(ctx, imghist_set_stream(ctx, (imghist_stream)stream));
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M", gmtime(&now));
    printf("imghist_bench_joint, imghist %s, %s (%d SMs, L2 %d MiB), %s UTC, %d runs\n",
           imghist_version_string(), prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, date, runs);

    uint8_t *d_a, *d_b, *d_c;
    CUDA_CHECK(cudaMalloc(&d_a, GiB));
    CUDA_CHECK(cudaMalloc(&d_b, GiB));
    CUDA_CHECK(cudaMalloc(&d_c, GiB));
    unsigned long long *d_joint, *d_ref;
    CUDA_CHECK(cudaMalloc(&d_joint, 65536 * 8));
    CUDA_CHECK(cudaMalloc(&d_ref, 65536 * 8));
    std::vector<unsigned long long> h_joint(65536), h_ref(65536);

    /* ---- joint histograms: 2 x 1 GiB of U8, 32768 x 32768 ---- */
    const uint32_t W = 32768, H = 32768;
    const double read2 = read_ms({d_a, d_b}, GiB);
    printf("\nread ceiling, 2 x 1 GiB: %.3f ms (%.0f GB/s)\n", read2, 2.0 * GiB / read2 / 1e6);
    printf("joint histogram U8 x U8, 256 x 256, device views and counts, 2 x 1 GiB:\n");
    const char *names[3] = {"uniform", "constant", "correlated (b = a + [-3,3])"};
    double worst = 0;
    for (int k = 0; k < 3; k++) {
        fill_kernel<<<4096, 256, 0, stream>>>(d_a, GiB, k == 1 ? 1 : 0, 1, nullptr);
        fill_kernel<<<4096, 256, 0, stream>>>(d_b, GiB, k == 1 ? 1 : k == 2 ? 2 : 0, 2, d_a);
        CUDA_CHECK(cudaGetLastError());
        imghist_view a = {d_a, IMGHIST_U8, IMGHIST_MEM_DEVICE, W, H, W, 1, 0, 0, NULL};
        imghist_view b = {d_b, IMGHIST_U8, IMGHIST_MEM_DEVICE, W, H, W, 1, 0, 0, NULL};
        imghist_counts out = {(uint64_t *)d_joint, 65536, IMGHIST_MEM_DEVICE};
        /* check */
        CUDA_CHECK(cudaMemsetAsync(d_ref, 0, 65536 * 8, stream));
        joint_ref_kernel<<<4096, 256, 0, stream>>>(d_a, d_b, GiB, d_ref);
        CUDA_CHECK(cudaMemsetAsync(d_joint, 0xA5, 65536 * 8, stream));
        IH_CHECK(ctx, imghist_histogram2d(ctx, &a, &b, NULL, NULL, &out));
        CUDA_CHECK(cudaMemcpyAsync(h_joint.data(), d_joint, 65536 * 8, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(h_ref.data(), d_ref, 65536 * 8, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const bool ok = h_joint == h_ref;
        failures += !ok;
        const double ms = time_ms([&] { IH_CHECK(ctx, imghist_histogram2d(ctx, &a, &b, NULL, NULL, &out)); });
        char label[96];
        snprintf(label, sizeof label, "%s%s", names[k], ok ? "" : " FAIL");
        row(label, ms, read2, "read");
        worst = std::max(worst, ms / read2);
    }
    printf("  target: joint time <= read time / 0.6 (>= 60 %%): worst %.1f %% -> %s\n",
           100.0 / worst, 1.0 / worst >= 0.6 ? "met" : "NOT met");

    /* ---- mutual information of the last joint histogram ---- */
    double *d_res;
    CUDA_CHECK(cudaMalloc(&d_res, 16));
    {
        imghist_counts j = {(uint64_t *)d_joint, 65536, IMGHIST_MEM_DEVICE};
        IH_CHECK(ctx, imghist_mutual_information(ctx, &j, 256, 256, d_res, IMGHIST_MEM_DEVICE));
        double dev[2], host[2];
        CUDA_CHECK(cudaMemcpyAsync(dev, d_res, 16, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        imghist_counts hj = {(uint64_t *)h_joint.data(), 65536, IMGHIST_MEM_HOST};
        IH_CHECK(ctx, imghist_mutual_information(ctx, &hj, 256, 256, host, IMGHIST_MEM_HOST));
        const bool ok = fabs(dev[0] - host[0]) <= 1e-12 * 16 && fabs(dev[1] - host[1]) <= 1e-12 * fabs(host[1]);
        failures += !ok;
        const double ms = time_ms([&] {
            IH_CHECK(ctx, imghist_mutual_information(ctx, &j, 256, 256, d_res, IMGHIST_MEM_DEVICE));
        }, false);
        printf("\nmutual information, 256 x 256 joint (device -> device): %.2f us per call%s "
               "(MI %.6f bits, NMI %.6f)\n", ms * 1e3, ok ? "" : " FAIL", dev[0], dev[1]);
    }

    /* ---- 16-bit equalization of 1 GiB (16384 x 32768 samples) ---- */
    {
        const uint32_t w = 16384, h = 32768;
        fill_kernel<<<4096, 256, 0, stream>>>(d_a, GiB, 3, 3, nullptr);
        CUDA_CHECK(cudaGetLastError());
        imghist_view src = {d_a, IMGHIST_U16, IMGHIST_MEM_DEVICE, w, h, (size_t)w * 2, 1,
                            0, 0, NULL};
        imghist_view dst = {d_c, IMGHIST_U16, IMGHIST_MEM_DEVICE, w, h, (size_t)w * 2, 1,
                            0, 0, NULL};
        IH_CHECK(ctx, imghist_equalize(ctx, &src, &dst, IMGHIST_EQ_OPENCV, NULL));
        /* check against the CPU backend */
        std::vector<uint8_t> hs(GiB), hg(GiB), hw(GiB);
        CUDA_CHECK(cudaMemcpyAsync(hs.data(), d_a, GiB, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(hg.data(), d_c, GiB, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        imghist_ctx *cpu = nullptr;
        if (imghist_create(IMGHIST_BACKEND_CPU, -1, &cpu) != IMGHIST_OK) return 1;
        imghist_set_param(cpu, IMGHIST_P_CPU_THREADS, 16);
        imghist_view hsv = src, hwv = dst;
        hsv.data = hs.data();
        hsv.mem = IMGHIST_MEM_HOST;
        hwv.data = hw.data();
        hwv.mem = IMGHIST_MEM_HOST;
        if (imghist_equalize(cpu, &hsv, &hwv, IMGHIST_EQ_OPENCV, NULL) != IMGHIST_OK) return 1;
        imghist_destroy(cpu);
        const bool ok = hg == hw;
        failures += !ok;
        const double eq = time_ms(
            [&] { IH_CHECK(ctx, imghist_equalize(ctx, &src, &dst, IMGHIST_EQ_OPENCV, NULL)); });
        const double rd = read_ms({d_a}, GiB);
        const double cp = time_ms([&] { CUDA_CHECK(launch_copy(d_b, d_a, GiB, grid_rw, stream)); });
        printf("\n16-bit equalization, 1 GiB, device views%s:\n", ok ? "" : " FAIL");
        printf("  read 1 GiB %.3f ms + copy 1 GiB %.3f ms = %.3f ms (2 reads + 1 write)\n", rd, cp,
               rd + cp);
        printf("  imghist_equalize %.3f ms = %.3f x (2 reads + 1 write); target <= 1.3: %s\n", eq,
               eq / (rd + cp), eq / (rd + cp) <= 1.3 ? "met" : "NOT met");
    }
    printf("\n%s\n", failures ? "FAIL: some results differ" : "all checks passed");
    imghist_destroy(ctx);
    return failures ? 1 : 0;
}
