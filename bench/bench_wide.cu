/*
 * imghist_bench_wide: the wide histograms (16-bit and float samples, many
 * bins) on 1 GiB of device data, against the read ceiling and CUB's
 * DeviceHistogram::HistogramEven, in one run (16-bit with a mask too);
 * tensors of 16-bit images into 65536 bins each, the library's choice
 * against the global atomics first; and interleaved RGB (8-bit and float,
 * 256 bins a channel) against CUB's MultiHistogramEven.
 *
 *   imghist_bench_wide [--runs N] [--quick] [--only LABEL-PREFIX]
 *
 * Per workload and pattern: the read ceiling (fastest of bench_kernels.cu's
 * streaming reads), CUB, and imghist_histogram on a device view with device
 * counts (CUDA events around the call on the context's stream), each the
 * median of N timed calls after warm-up; imghist's % of the ceiling and its
 * speed-up over CUB; and a bit-exact check of imghist's counts, against CUB
 * for integer data (CUB's integer binning is exact there) and against the
 * imghist CPU backend for floats. A mismatch prints FAIL and makes the exit
 * status 1.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <functional>
#include <vector>

#include <cub/cub.cuh>
#include <cuda/std/array>
#include <cuda_runtime.h>

#include "bench_check.h"
#include "bench_kernels.cuh"
#include "imghist.h"
#include "imghist_experimental.h"


namespace {

enum class Pat { Uniform, Constant, High12, Mult64x8, Odd64x8, Mult64x8Hot, Mult64x8Hot160, Mult64x8Hot128, Band16, Band16Hot, Band1000Hot, WideHot,
                 WideHot160, Low12, FUniform, FNormal, FConstant, FGrid255 };

const char *pat_name(Pat p)
{
    switch (p) {
    case Pat::Uniform: return "uniform";
    case Pat::Constant: return "constant";
    case Pat::High12: return "12-bit in high bits";
    case Pat::Mult64x8: return "8 values x64";
    case Pat::Odd64x8: return "8 values x64 + 1";
    case Pat::Mult64x8Hot: return "8 values x64, 1 in 256 at 40001";
    case Pat::Mult64x8Hot160: return "8 values x64, 1 in 160 at 40001";
    case Pat::Mult64x8Hot128: return "8 values x64, 1 in 128 at 40001";
    case Pat::Band16: return "16 values from 1000";
    case Pat::Band16Hot: return "16 values from 1000, 1 in 256 at 40000";
    case Pat::Band1000Hot: return "uniform [1000,2000), 1 in 256 at 40000";
    case Pat::WideHot: return "uniform [20000,44000), 1 in 256 at 60000";
    case Pat::WideHot160: return "uniform [20000,44000), 1 in 160 at 60000";
    case Pat::Low12: return "12-bit [0,4096)";
    case Pat::FUniform: return "uniform [0,1)";
    case Pat::FNormal: return "normal(0.5, 0.1)";
    case Pat::FGrid255: return "8-bit values / 255";
    default: return "constant 0.5";
    }
}

__device__ __forceinline__ uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

__global__ void fill_u16(uint16_t *d, size_t n, Pat p)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = mix(i + 0x9e3779b97f4a7c15ull);
        uint16_t v;
        switch (p) {
        case Pat::Uniform: v = (uint16_t)r; break;
        case Pat::Constant: v = 12345; break;
        case Pat::High12: v = (uint16_t)((r & 0xfff) << 4); break;
        case Pat::Mult64x8: v = (uint16_t)((r & 7) * 64); break;
        case Pat::Odd64x8: v = (uint16_t)((r & 7) * 64 + 1); break;
        case Pat::Mult64x8Hot: v = (r >> 40) % 256 == 0 ? 40001 : (uint16_t)((r & 7) * 64); break;
        case Pat::Mult64x8Hot160: v = (r >> 40) % 160 == 0 ? 40001 : (uint16_t)((r & 7) * 64); break;
        case Pat::Mult64x8Hot128: v = (r >> 40) % 128 == 0 ? 40001 : (uint16_t)((r & 7) * 64); break;
        case Pat::Band16: v = (uint16_t)(1000 + (r & 15)); break;
        case Pat::Band16Hot: v = ((r >> 8) & 255) == 0 ? 40000 : (uint16_t)(1000 + (r & 15)); break;
        case Pat::Band1000Hot:
            v = (r >> 40) % 256 == 0 ? 40000 : (uint16_t)(1000 + (r & 0xffff) % 1000);
            break;
        case Pat::WideHot:
        case Pat::WideHot160:
            v = (r >> 40) % (p == Pat::WideHot ? 256 : 160) == 0 ? 60000
                                                                 : (uint16_t)(20000 + (r & 0xffff) % 24000);
            break;
        default: v = (uint16_t)(r & 0xfff); break;
        }
        d[i] = v;
    }
}

__global__ void fill_f32(float *d, size_t n, Pat p)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t r = mix(i + 0x9e3779b97f4a7c15ull);
        const float u1 = ((uint32_t)r >> 8) * 0x1p-24f, u2 = ((uint32_t)(r >> 32) >> 8) * 0x1p-24f;
        float v;
        switch (p) {
        case Pat::FUniform: v = u1; break;
        case Pat::FNormal: v = 0.5f + 0.1f * sqrtf(-2.0f * logf(u1 + 0x1p-25f)) * cospif(2.0f * u2); break;
        case Pat::FGrid255: v = (float)(uint32_t)(u2 * 256.0f) / 255.0f; break;
        default: v = 0.5f; break;
        }
        d[i] = v;
    }
}

struct Bench {
    int runs = 20, warmup = 3;
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    int sms = 0, rw_grid = 0;
    void *d_in = nullptr;
    unsigned int *sink = nullptr;
    unsigned long long *d_counts = nullptr;
    int *d_cub = nullptr;
    void *cub_temp = nullptr;
    size_t cub_temp_bytes = 0;
    imghist_ctx *gpu = nullptr, *cpu = nullptr;
    int failures = 0;
    const char *only = nullptr; /* --only: workloads whose label starts with it */

    double time_ms(const std::function<void()> &f)
    {
        for (int i = 0; i < warmup; i++) f();
        std::vector<float> t;
        for (int i = 0; i < runs; i++) {
            CUDA_CHECK(cudaEventRecord(e0, stream));
            f();
            CUDA_CHECK(cudaEventRecord(e1, stream));
            CUDA_CHECK(cudaEventSynchronize(e1));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
            t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }

    double ceiling_ms(size_t bytes)
    {
        double best = 1e30;
        for (int v = 0; v < READ_VARIANTS; v++) {
            const double ms = time_ms([&] {
                CUDA_CHECK(launch_read((read_variant)v, d_in, bytes, sink, rw_grid, stream));
            });
            best = std::min(best, ms);
        }
        return best;
    }
};

/* CUB's even histogram of n samples into bins int counters over [lo, hi). */
template <typename T, typename L>
cudaError_t cub_even(Bench &b, const T *d, size_t n, int bins, L lo, L hi)
{
    size_t need = 0;
    cudaError_t e = cub::DeviceHistogram::HistogramEven(nullptr, need, d, b.d_cub, bins + 1, lo,
                                                        hi, (int64_t)n, b.stream);
    if (e != cudaSuccess) return e;
    if (need > b.cub_temp_bytes) {
        CUDA_CHECK(cudaFree(b.cub_temp));
        CUDA_CHECK(cudaMalloc(&b.cub_temp, need));
        b.cub_temp_bytes = need;
    }
    return cub::DeviceHistogram::HistogramEven(b.cub_temp, need, d, b.d_cub, bins + 1, lo, hi,
                                               (int64_t)n, b.stream);
}

/* imghist's counts from one call (ih_call) on poisoned device counts. */
std::vector<unsigned long long> first_counts(Bench &b, const std::function<void()> &ih_call,
                                             size_t len)
{
    CUDA_CHECK(cudaMemsetAsync(b.d_counts, 0xa5, len * 8, b.stream));
    ih_call();
    std::vector<unsigned long long> got(len);
    CUDA_CHECK(cudaMemcpyAsync(got.data(), b.d_counts, len * 8, cudaMemcpyDeviceToHost, b.stream));
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    return got;
}

/* The CPU backend's counts of device view v (its `bytes` copied down),
 * masked by the device view mask (its `mask_bytes` copied down) if any. */
void cpu_counts(Bench &b, const imghist_view &v, size_t bytes, const imghist_histspec &spec,
                std::vector<unsigned long long> &want, const imghist_view *mask = nullptr,
                size_t mask_bytes = 0)
{
    std::vector<uint8_t> host(bytes), mhost(mask_bytes);
    CUDA_CHECK(cudaMemcpy(host.data(), v.data, bytes, cudaMemcpyDeviceToHost));
    imghist_view hv = v, hm = {};
    hv.data = host.data();
    hv.mem = IMGHIST_MEM_HOST;
    hv.mask = NULL;
    if (mask != nullptr) {
        CUDA_CHECK(cudaMemcpy(mhost.data(), mask->data, mask_bytes, cudaMemcpyDeviceToHost));
        hm = *mask;
        hm.data = mhost.data();
        hm.mem = IMGHIST_MEM_HOST;
        hv.mask = &hm;
    }
    const imghist_counts hc = {(uint64_t *)want.data(), want.size(), IMGHIST_MEM_HOST};
    if (imghist_histogram(b.cpu, &hv, &spec, &hc) != IMGHIST_OK) {
        fprintf(stderr, "CPU: %s\n", imghist_last_error(b.cpu));
        exit(1);
    }
}

void run_case(Bench &b, imghist_dtype t, const imghist_histspec &spec, Pat p, int bps,
              const char *label, bool masked = false)
{
    if (b.only != nullptr && strncmp(label, b.only, strlen(b.only)) != 0) {
        return;
    }
    const size_t bytes = (size_t)1 << 30;
    const size_t size = t == IMGHIST_U16 ? 2 : 4;
    const size_t n = bytes / size;
    if (t == IMGHIST_U16) {
        fill_u16<<<b.sms * 8, 512, 0, b.stream>>>((uint16_t *)b.d_in, n, p);
    } else {
        fill_f32<<<b.sms * 8, 512, 0, b.stream>>>((float *)b.d_in, n, p);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    /* 1 GiB as 16384 rows of 64 KiB. */
    const uint32_t width = (uint32_t)(65536 / size), height = (uint32_t)(bytes / 65536);
    const imghist_view v = {b.d_in, t, IMGHIST_MEM_DEVICE, width, height, 65536, 1, 0, 0, NULL};
    /* masked: a packed mask, about half its bytes 0 (read by the ceiling
     * too: 1.5 GiB for 16-bit samples); CUB's time is the unmasked one's */
    uint8_t *d_mask = nullptr;
    if (masked) {
        CUDA_CHECK(cudaMalloc((void **)&d_mask, n + 16));
        fill_u16<<<b.sms * 8, 512, 0, b.stream>>>((uint16_t *)d_mask, (n + 1) / 2, Pat::Mult64x8);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(b.stream));
    }
    const imghist_view mv = {d_mask, IMGHIST_U8, IMGHIST_MEM_DEVICE, width, height, width, 1,
                             0, 0, NULL};
    imghist_view vm = v; /* v with the mask */
    vm.mask = &mv;
    const size_t len = imghist_counts_len(&spec, t, 1);
    const imghist_counts out = {(uint64_t *)b.d_counts, len, IMGHIST_MEM_DEVICE};
    if (imghist_set_param(b.gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, bps) != IMGHIST_OK) {
        fprintf(stderr, "set_param: %s\n", imghist_last_error(b.gpu));
        exit(1);
    }

    const double ceil_ms = b.ceiling_ms(bytes + (masked ? n : 0));
    const int bins = (int)imghist_bins(&spec, t);
    auto cub_call = [&] {
        if (t == IMGHIST_U16) {
            CUDA_CHECK(cub_even(b, (const uint16_t *)b.d_in, n, bins, (int)spec.lo,
                                spec.bins == 0 ? 65536 : (int)spec.hi));
        } else {
            CUDA_CHECK(cub_even(b, (const float *)b.d_in, n, bins, (float)spec.lo, (float)spec.hi));
        }
    };
    const double cub_ms = b.time_ms(cub_call);
    bool ok = true;
    auto ih_call = [&] {
        const imghist_status st = imghist_histogram(b.gpu, masked ? &vm : &v, &spec, &out);
        if (st != IMGHIST_OK) {
            fprintf(stderr, "imghist_histogram: %s\n", imghist_last_error(b.gpu));
            ok = false;
        }
    };
    /* Check first, on poisoned counts. */
    const std::vector<unsigned long long> got = first_counts(b, ih_call, len);
    std::vector<unsigned long long> want(len, 0);
    const char *ref = "CUB";
    if (masked) {
        ref = "CPU";
        cpu_counts(b, v, bytes, spec, want, &mv, n);
    } else if (t == IMGHIST_U16) {
        CUDA_CHECK(cudaMemsetAsync(b.d_cub, 0, (size_t)bins * 4, b.stream));
        cub_call();
        std::vector<int> c(bins);
        CUDA_CHECK(cudaMemcpyAsync(c.data(), b.d_cub, (size_t)bins * 4, cudaMemcpyDeviceToHost, b.stream));
        CUDA_CHECK(cudaStreamSynchronize(b.stream));
        for (int i = 0; i < bins; i++) want[i] = (unsigned)c[i];
    } else {
        ref = "CPU";
        cpu_counts(b, v, bytes, spec, want);
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < len; i++) {
        if (got[i] != want[i]) {
            if (bad++ == 0) first = i;
        }
    }
    const double ih_ms = b.time_ms(ih_call);
    if (d_mask != nullptr) {
        CUDA_CHECK(cudaFree(d_mask));
    }
    const bool correct = ok && bad == 0;
    if (!correct) b.failures++;
    printf("| %s | %s | %d | %.3f | %.3f | %.3f | %.1f %% | %.2fx | %s%s |\n", label, pat_name(p),
           bps, ceil_ms, cub_ms, ih_ms, 100.0 * ceil_ms / ih_ms, cub_ms / ih_ms,
           correct ? "ok vs " : "FAIL vs ", ref);
    if (bad) {
        printf("    %zu counters differ, first %zu: imghist %llu, %s %llu\n", bad, first,
               got[first], ref, want[first]);
    }
    fflush(stdout);
}

/* CUB's even histograms of n interleaved pixels of CH channels, each into
 * `bins` int counters over [lo, hi) (d_cub: CH * bins); with rows > 0, rows
 * of `pixels` pixels each, `pitch` bytes apart. */
template <int CH, typename T, typename L>
cudaError_t cub_multi(Bench &b, const T *d, size_t pixels, int bins, L lo, L hi, size_t rows = 0,
                      size_t pitch = 0)
{
    cuda::std::array<int *, CH> hist;
    cuda::std::array<int, CH> levels;
    cuda::std::array<L, CH> lower, upper;
    for (int c = 0; c < CH; c++) {
        hist[c] = b.d_cub + (size_t)c * bins;
        levels[c] = bins + 1;
        lower[c] = lo;
        upper[c] = hi;
    }
    size_t need = 0;
    cudaError_t e = rows > 0 ? cub::DeviceHistogram::MultiHistogramEven<CH, CH>(
                                   nullptr, need, d, hist, levels, lower, upper, (int64_t)pixels,
                                   (int64_t)rows, pitch, b.stream)
                             : cub::DeviceHistogram::MultiHistogramEven<CH, CH>(
                                   nullptr, need, d, hist, levels, lower, upper, (int64_t)pixels,
                                   b.stream);
    if (e != cudaSuccess) return e;
    if (need > b.cub_temp_bytes) {
        CUDA_CHECK(cudaFree(b.cub_temp));
        CUDA_CHECK(cudaMalloc(&b.cub_temp, need));
        b.cub_temp_bytes = need;
    }
    if (rows > 0) {
        return cub::DeviceHistogram::MultiHistogramEven<CH, CH>(
            b.cub_temp, need, d, hist, levels, lower, upper, (int64_t)pixels, (int64_t)rows, pitch,
            b.stream);
    }
    return cub::DeviceHistogram::MultiHistogramEven<CH, CH>(b.cub_temp, need, d, hist, levels,
                                                            lower, upper, (int64_t)pixels, b.stream);
}

/* 1 GiB of ch interleaved channels (RGB, RGBA, gray + alpha), each into 256
 * bins: U8 (p: Uniform, random bytes; Constant, the 16-bit word 12345
 * repeated) and F32 (FUniform, over [0, 1)), one packed image (crop: rows
 * of 64 KiB holding 64 KiB - 100 bytes of pixels from byte 3 of each, as a
 * crop of a larger image; masked: with a packed mask, about 3 in 8 of its
 * bytes 0, and the read ceiling of the image and mask together), against
 * CUB's MultiHistogramEven (which takes no mask) in the same run; checked
 * against the CPU backend. */
template <int CH>
void run_channels(Bench &b, imghist_dtype t, Pat p, const char *label, bool crop = false,
                  bool masked = false)
{
    if (b.only != nullptr && strncmp(label, b.only, strlen(b.only)) != 0) {
        return;
    }
    const size_t size = t == IMGHIST_U8 ? 1 : 4;
    /* pixels a row, rows packed (or 64 KiB apart) */
    const uint32_t width = (uint32_t)((65536 - (crop ? 100 : 0)) / (CH * size));
    const size_t row = (size_t)width * CH * size, pitch = crop ? 65536 : row;
    const uint32_t height = (uint32_t)((((size_t)1 << 30) - (crop ? 64 : 0)) / pitch);
    const size_t bytes = row * height, pixels = (size_t)width * height;
    const size_t span = pitch * (height - 1) + row; /* from the first pixel to the last */
    if (t == IMGHIST_U8) {
        fill_u16<<<b.sms * 8, 512, 0, b.stream>>>((uint16_t *)b.d_in, ((size_t)1 << 30) / 2, p);
    } else {
        fill_f32<<<b.sms * 8, 512, 0, b.stream>>>((float *)b.d_in, ((size_t)1 << 30) / 4, p);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    uint8_t *base = (uint8_t *)b.d_in + (crop ? 3 * size : 0);
    const imghist_view v = {base, t, IMGHIST_MEM_DEVICE, width, height, pitch, CH, 0, 0, NULL};
    uint8_t *d_mask = nullptr;
    if (masked) {
        CUDA_CHECK(cudaMalloc((void **)&d_mask, pixels + 16));
        fill_u16<<<b.sms * 8, 512, 0, b.stream>>>((uint16_t *)d_mask, (pixels + 1) / 2,
                                                  Pat::Mult64x8);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(b.stream));
    }
    const imghist_view mv = {d_mask, IMGHIST_U8, IMGHIST_MEM_DEVICE, width, height, width, 1,
                             0, 0, NULL};
    imghist_view vm = v; /* v with the mask */
    vm.mask = &mv;
    const imghist_histspec spec = {256, 0, t == IMGHIST_U8 ? 256.0 : 1.0, 0};
    const size_t len = imghist_counts_len(&spec, t, CH);
    const imghist_counts out = {(uint64_t *)b.d_counts, len, IMGHIST_MEM_DEVICE};
    if (imghist_set_param(b.gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 0) != IMGHIST_OK) {
        fprintf(stderr, "set_param: %s\n", imghist_last_error(b.gpu));
        exit(1);
    }
    if (bytes + pixels > ((size_t)3 << 29)) {
        fprintf(stderr, "%s: the read ceiling's bytes exceed the input buffer\n", label);
        exit(1);
    }
    const double ceil_ms = b.ceiling_ms(bytes + (masked ? pixels : 0));
    auto cub_call = [&] {
        const size_t n = crop ? width : pixels, rows = crop ? height : 0;
        if (t == IMGHIST_U8) {
            CUDA_CHECK(cub_multi<CH>(b, (const uint8_t *)base, n, 256, 0, 256, rows, pitch));
        } else {
            CUDA_CHECK(cub_multi<CH>(b, (const float *)base, n, 256, 0.0f, 1.0f, rows, pitch));
        }
    };
    const double cub_ms = b.time_ms(cub_call);
    bool ok = true;
    auto ih_call = [&] {
        if (imghist_histogram(b.gpu, masked ? &vm : &v, &spec, &out) != IMGHIST_OK) {
            fprintf(stderr, "imghist_histogram: %s\n", imghist_last_error(b.gpu));
            ok = false;
        }
    };
    const std::vector<unsigned long long> got = first_counts(b, ih_call, len);
    std::vector<unsigned long long> want(len, 0);
    cpu_counts(b, v, span, spec, want, masked ? &mv : nullptr, masked ? pixels : 0);
    size_t bad = 0;
    for (size_t i = 0; i < len; i++) bad += got[i] != want[i];
    const double ih_ms = b.time_ms(ih_call);
    if (d_mask != nullptr) {
        CUDA_CHECK(cudaFree(d_mask));
    }
    const bool correct = ok && bad == 0;
    if (!correct) b.failures++;
    printf("| %s | %s | 0 | %.3f | %.3f | %.3f | %.1f %% | %.2fx | %s |\n", label,
           p == Pat::Constant ? "word 12345 repeated" : pat_name(p), ceil_ms, cub_ms, ih_ms,
           100.0 * ceil_ms / ih_ms, cub_ms / ih_ms, correct ? "ok vs CPU" : "FAIL vs CPU");
    if (bad) {
        printf("    %zu counters differ\n", bad);
    }
    fflush(stdout);
}

/* A tensor of `count` 16-bit images of w x h (packed, back to back) into
 * their natural 65536 bins each (imghist_histogram of a view of them all,
 * device counts),
 * as the library chooses (IMGHIST_P_EXP_HIST16_GLOBAL 0) and with the
 * global atomics first for every size (INT32_MAX), against the read ceiling
 * of the batch's bytes; both checked against the CPU backend. */
void run_u16_batch(Bench &b, uint32_t count, uint32_t w, uint32_t h, Pat p)
{
    const char *label = "u16 batch, 65536 bins an image";
    if (b.only != nullptr && strncmp(label, b.only, strlen(b.only)) != 0) {
        return;
    }
    const size_t img = (size_t)w * h * 2, bytes = img * count, len = (size_t)65536 * count;
    fill_u16<<<b.sms * 8, 512, 0, b.stream>>>((uint16_t *)b.d_in, bytes / 2, p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    const imghist_view batch = {b.d_in, IMGHIST_U16, IMGHIST_MEM_DEVICE, w, h, (size_t)w * 2, 1,
                                count, (ptrdiff_t)img, NULL};
    const imghist_histspec spec = {0, 0, 0, 0};
    unsigned long long *d_out = nullptr;
    CUDA_CHECK(cudaMalloc((void **)&d_out, len * 8));
    const imghist_counts out = {(uint64_t *)d_out, len, IMGHIST_MEM_DEVICE};
    /* the CPU's counts of a host copy */
    std::vector<uint8_t> host(bytes);
    std::vector<unsigned long long> want(len), got(len);
    CUDA_CHECK(cudaMemcpy(host.data(), b.d_in, bytes, cudaMemcpyDeviceToHost));
    imghist_view hv = batch;
    hv.data = host.data();
    hv.mem = IMGHIST_MEM_HOST;
    const imghist_counts hc = {(uint64_t *)want.data(), len, IMGHIST_MEM_HOST};
    if (imghist_histogram(b.cpu, &hv, &spec, &hc) != IMGHIST_OK) {
        fprintf(stderr, "CPU: %s\n", imghist_last_error(b.cpu));
        exit(1);
    }
    const double ceil_ms = b.ceiling_ms(bytes);
    for (int knob : {0, INT32_MAX}) {
        if (imghist_set_param(b.gpu, IMGHIST_P_EXP_HIST16_GLOBAL, knob) != IMGHIST_OK) {
            fprintf(stderr, "set_param: %s\n", imghist_last_error(b.gpu));
            exit(1);
        }
        bool ok = true;
        auto ih_call = [&] {
            if (imghist_histogram(b.gpu, &batch, &spec, &out) != IMGHIST_OK) {
                fprintf(stderr, "imghist_histogram: %s\n", imghist_last_error(b.gpu));
                ok = false;
            }
        };
        CUDA_CHECK(cudaMemsetAsync(d_out, 0xa5, len * 8, b.stream));
        ih_call();
        CUDA_CHECK(cudaMemcpyAsync(got.data(), d_out, len * 8, cudaMemcpyDeviceToHost, b.stream));
        CUDA_CHECK(cudaStreamSynchronize(b.stream));
        size_t bad = 0;
        for (size_t i = 0; i < len; i++) bad += got[i] != want[i];
        const double ih_ms = b.time_ms(ih_call);
        const bool correct = ok && bad == 0;
        if (!correct) b.failures++;
        printf("| %s | %u x %ux%u, %s | %s | %.3f | - | %.3f | %.1f %% | - | %s |\n", label,
               count, w, h, pat_name(p), knob == 0 ? "library's choice" : "global atomics",
               ceil_ms, ih_ms, 100.0 * ceil_ms / ih_ms, correct ? "ok vs CPU" : "FAIL vs CPU");
        if (bad) printf("    %zu counters differ\n", bad);
        fflush(stdout);
    }
    imghist_set_param(b.gpu, IMGHIST_P_EXP_HIST16_GLOBAL, 0);
    CUDA_CHECK(cudaFree(d_out));
}

} // namespace

int main(int argc, char **argv)
{
    Bench b;
    bool quick = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) b.runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--quick") == 0) quick = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) b.only = argv[++i];
    }
    if (quick) b.runs = 5;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    b.sms = prop.multiProcessorCount;
    b.rw_grid = stream_grid(b.sms);
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&b.e0));
    CUDA_CHECK(cudaEventCreate(&b.e1));
    /* 1 GiB of input and half as much again, zeroed: the read ceiling of a
     * masked case reads the image's bytes and the mask's (up to 1.5 GiB)
     * from here (it read past the end before). */
    CUDA_CHECK(cudaMalloc(&b.d_in, (size_t)3 << 29));
    CUDA_CHECK(cudaMemset(b.d_in, 0, (size_t)3 << 29));
    CUDA_CHECK(cudaMalloc((void **)&b.sink, 64));
    CUDA_CHECK(cudaMalloc((void **)&b.d_counts, (65536 + 16) * 8));
    CUDA_CHECK(cudaMalloc((void **)&b.d_cub, (65536 + 16) * 4));
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &b.gpu) != IMGHIST_OK ||
        imghist_create(IMGHIST_BACKEND_CPU, -1, &b.cpu) != IMGHIST_OK) {
        fprintf(stderr, "imghist_create failed\n");
        return 1;
    }
    imghist_set_param(b.cpu, IMGHIST_P_CPU_THREADS, 16);
    if (imghist_set_stream(b.gpu, (imghist_stream)b.stream) != IMGHIST_OK) {
        fprintf(stderr, "set_stream: %s\n", imghist_last_error(b.gpu));
        return 1;
    }
    printf("imghist_bench_wide: %s, %d SMs, imghist %s, 1 GiB per case, median of %d runs (ms)\n\n",
           prop.name, b.sms, imghist_version_string(), b.runs);
    printf("| workload | pattern | blocks/SM knob | read ceiling | CUB | imghist | %% of ceiling | vs CUB | check |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    const imghist_histspec u16_65536 = {0, 0, 0, 0};
    const imghist_histspec u16_4096 = {4096, 0, 4096, 0};
    const imghist_histspec f32_10000 = {10000, 0, 1, 0};
    for (Pat p : {Pat::Uniform, Pat::Constant, Pat::High12, Pat::Low12, Pat::Mult64x8, Pat::Odd64x8,
                  Pat::Mult64x8Hot, Pat::Mult64x8Hot160, Pat::Mult64x8Hot128, Pat::Band16,
                  Pat::Band16Hot,
                  Pat::Band1000Hot, Pat::WideHot,
                  Pat::WideHot160}) {
        run_case(b, IMGHIST_U16, u16_65536, p, 0, "u16, 65536 bins");
    }
    /* 16-bit batches into 65536 bins an image: the library's choice, and
     * the global atomics (the third column) */
    const uint32_t shapes[][3] = {{512, 64, 64},    {128, 256, 256},  {256, 512, 512},
                                  {128, 724, 724},  {64, 1024, 1024}, {32, 1448, 1448}};
    for (const auto &sh : shapes) {
        for (Pat p : {Pat::Uniform, Pat::Low12}) {
            run_u16_batch(b, sh[0], sh[1], sh[2], p);
        }
    }
    /* with a mask an image (one channel, as packed as the image) */
    for (Pat p : {Pat::Uniform, Pat::High12}) {
        run_case(b, IMGHIST_U16, u16_65536, p, 0, "u16, 65536 bins, masked", true);
    }
    for (int bps : {0, 1, 3}) {
        for (Pat p : {Pat::Low12, Pat::Constant}) {
            run_case(b, IMGHIST_U16, u16_4096, p, bps, "u16, 4096 bins");
        }
    }
    for (int bps : {0, 1}) {
        for (Pat p : {Pat::FUniform, Pat::FNormal, Pat::FConstant}) {
            run_case(b, IMGHIST_F32, f32_10000, p, bps, "f32, 10000 bins [0,1)");
        }
    }
    /* Images converted from 8 bits (k / 255: bins about 16 or 39 apart) and
     * small bin counts (many copies of the counters). */
    run_case(b, IMGHIST_F32, f32_10000, Pat::FGrid255, 0, "f32, 10000 bins [0,1)");
    const imghist_histspec f32_4096 = {4096, 0, 1, 0}, f32_256 = {256, 0, 1, 0};
    for (Pat p : {Pat::FUniform, Pat::FGrid255}) {
        run_case(b, IMGHIST_F32, f32_4096, p, 0, "f32, 4096 bins [0,1)");
        run_case(b, IMGHIST_F32, f32_256, p, 0, "f32, 256 bins [0,1)");
    }
    for (Pat p : {Pat::Uniform, Pat::Constant}) {
        run_channels<3>(b, IMGHIST_U8, p, "u8 RGB, 256 bins a channel");
        run_channels<4>(b, IMGHIST_U8, p, "u8 RGBA, 256 bins a channel");
        run_channels<2>(b, IMGHIST_U8, p, "u8 2 channels, 256 bins a channel");
    }
    run_channels<3>(b, IMGHIST_U8, Pat::Uniform, "u8 RGB crop, 256 bins a channel", true);
    run_channels<4>(b, IMGHIST_U8, Pat::Uniform, "u8 RGBA crop, 256 bins a channel", true);
    run_channels<3>(b, IMGHIST_U8, Pat::Uniform, "u8 RGB masked, 256 bins a channel", false, true);
    run_channels<4>(b, IMGHIST_U8, Pat::Uniform, "u8 RGBA masked, 256 bins a channel", false,
                    true);
    run_channels<2>(b, IMGHIST_U8, Pat::Uniform, "u8 2 channels masked, 256 bins a channel",
                    false, true);
    run_channels<3>(b, IMGHIST_F32, Pat::FUniform, "f32 RGB, 256 bins [0,1) a channel");
    printf("\n%s\n", b.failures ? "FAILURES" : "all checks passed");
    imghist_destroy(b.gpu);
    imghist_destroy(b.cpu);
    return b.failures ? 1 : 0;
}
