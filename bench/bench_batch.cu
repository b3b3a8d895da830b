/*
 * imghist_bench_batch: batched 8-bit equalization and histograms of device
 * images of the shapes vision pipelines batch, against the memory ceilings
 * measured in the same run.
 *
 *   imghist_bench_batch [--runs N] [--tiny BYTES]   (IMGHIST_P_EXP_BATCH_TINY)
 *
 * Per shape (N images of W x H, uint8, back to back in one buffer): the read
 * ceiling (the fastest read_variant of bench_kernels.cu over the batch's
 * bytes) and a copy of them; imghist_equalize_list (one call, OpenCV's and
 * PIL's rule, device histograms), a loop of N imghist_equalize calls, and
 * imghist_histogram_list (device counts); the batch again with every image
 * sent the two-pass way (IMGHIST_P_EXP_EQ_BATCH_SMALL = 1). Equalization is compared with
 * "read twice + write once" = read + copy; the histogram with the read
 * ceiling. Then both batch calls again with the sources taken from two
 * buffers in turn (a pipeline's new tensors: other views every call, so the
 * descriptors are built and uploaded each time). Times are medians of CUDA-event timings of single calls after
 * warm-up, with L2 flushed before each. Every result is checked before it is
 * timed against the CPU backend (pixels and histograms; the loop's pixels
 * against the batch's): a mismatch prints FAIL and makes the exit status 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "bench_kernels.cuh"
#include "imghist.h"
#include "imghist_experimental.h"


namespace {

call_timer timer;
cudaStream_t stream;
int failures;
imghist_ctx *gpu, *cpu;

/* Photograph-like pixels: a gradient per image plus noise. */
__global__ void fill_kernel(uint8_t *p, size_t n, uint32_t w, uint32_t h)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t img = i / ((size_t)w * h), px = i % ((size_t)w * h);
        const uint32_t x = (uint32_t)(px % w), y = (uint32_t)(px / w);
        uint64_t r = (i + 1) * 0x9e3779b97f4a7c15ull;
        r ^= r >> 29;
        r *= 0xbf58476d1ce4e5b9ull;
        r ^= r >> 32;
        const uint32_t v = (uint32_t)(((uint64_t)x + y) * 180 / ((uint64_t)w + h)) +
                           (uint32_t)(img * 7 % 50) + (uint32_t)(r & 31);
        p[i] = (uint8_t)(v > 255 ? 255 : v);
    }
}

double time_ms(const std::function<void()> &f)
{
    return call_timer_ms(timer, f);
}

struct Shape {
    uint32_t n, w, h;
};

void check(bool ok, const char *what, const Shape &s)
{
    if (!ok) {
        printf("FAIL: %s, %u x %ux%u\n", what, s.n, s.w, s.h);
        failures++;
    }
}

void run_shape(const Shape &s, uint8_t *d_src, uint8_t *d_dst, uint8_t *d_loop,
               unsigned long long *d_hist)
{
    const size_t img = (size_t)s.w * s.h, bytes = img * s.n, len = (size_t)s.n * 256;
    fill_kernel<<<1024, 256, 0, stream>>>(d_src, bytes, s.w, s.h);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<imghist_view> src(s.n), dst(s.n), loop(s.n), hsrc(s.n), hdst(s.n);
    std::vector<uint8_t> h_src(bytes), h_want(bytes), h_got(bytes), h_loop(bytes);
    CUDA_CHECK(cudaMemcpy(h_src.data(), d_src, bytes, cudaMemcpyDeviceToHost));
    for (uint32_t i = 0; i < s.n; i++) {
        src[i] = {d_src + i * img, IMGHIST_U8, IMGHIST_MEM_DEVICE, s.w, s.h, s.w, 1, 0, 0, NULL};
        dst[i] = src[i];
        dst[i].data = d_dst + i * img;
        loop[i] = src[i];
        loop[i].data = d_loop + i * img;
        hsrc[i] = {h_src.data() + i * img, IMGHIST_U8, IMGHIST_MEM_HOST, s.w, s.h, s.w, 1,
                   0, 0, NULL};
        hdst[i] = hsrc[i];
        hdst[i].data = h_want.data() + i * img;
    }
    const imghist_counts dc = {(uint64_t *)d_hist, len, IMGHIST_MEM_DEVICE};
    std::vector<uint64_t> want_h(len), got_h(len);
    const imghist_counts wc = {want_h.data(), len, IMGHIST_MEM_HOST};

    /* Checks first: both rules, the loop, the histogram batch. */
    for (int method = 0; method < 2; method++) {
        const imghist_method m = method ? IMGHIST_EQ_PIL : IMGHIST_EQ_OPENCV;
        IH_CHECK(cpu, imghist_equalize_list(cpu, hsrc.data(), hdst.data(), s.n, m, &wc));
        CUDA_CHECK(cudaMemsetAsync(d_hist, 0xa5, len * 8, stream));
        CUDA_CHECK(cudaMemsetAsync(d_dst, 0xa5, bytes, stream));
        IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), dst.data(), s.n, m, &dc));
        CUDA_CHECK(cudaMemcpyAsync(h_got.data(), d_dst, bytes, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(got_h.data(), d_hist, len * 8, cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        check(h_got == h_want, method ? "batch pixels (PIL)" : "batch pixels (OpenCV)", s);
        check(got_h == want_h, method ? "batch histograms (PIL)" : "batch histograms (OpenCV)",
              s);
    }
    const imghist_method cv = IMGHIST_EQ_OPENCV;
    CUDA_CHECK(cudaMemsetAsync(d_loop, 0xa5, bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(d_dst, 0x5a, bytes, stream));
    IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), dst.data(), s.n, cv, &dc));
    for (uint32_t i = 0; i < s.n; i++) {
        IH_CHECK(gpu, imghist_equalize(gpu, &src[i], &loop[i], cv, NULL));
    }
    CUDA_CHECK(cudaMemcpyAsync(h_loop.data(), d_loop, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_got.data(), d_dst, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(h_loop == h_got, "loop of imghist_equalize vs the batch", s);
    CUDA_CHECK(cudaMemsetAsync(d_hist, 0xa5, len * 8, stream));
    IH_CHECK(gpu, imghist_histogram_list(gpu, src.data(), s.n, NULL, &dc));
    CUDA_CHECK(cudaMemcpyAsync(got_h.data(), d_hist, len * 8, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(got_h == want_h, "histogram batch", s); /* the CPU's, from its last batch */

    /* Timings. */
    double read = 1e30;
    for (int v = 0; v < READ_VARIANTS; v++) {
        read = std::min(read, time_ms([&] {
                            CUDA_CHECK(launch_read((read_variant)v, d_src, bytes, timer.sink,
                                                   timer.grid, stream));
                        }));
    }
    const double copy =
        time_ms([&] { CUDA_CHECK(launch_copy(d_dst, d_src, bytes, timer.grid, stream)); });
    double eq[2];
    for (int method = 0; method < 2; method++) {
        const imghist_method m = method ? IMGHIST_EQ_PIL : IMGHIST_EQ_OPENCV;
        eq[method] = time_ms([&] {
            IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), dst.data(), s.n, m, &dc));
        });
    }
    /* Every image the two-pass way (no one-block images), checked first. */
    IH_CHECK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_EQ_BATCH_SMALL, 1));
    CUDA_CHECK(cudaMemsetAsync(d_loop, 0xa5, bytes, stream));
    IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), loop.data(), s.n, cv, &dc));
    CUDA_CHECK(cudaMemcpyAsync(h_loop.data(), d_loop, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(h_loop == h_got, "two-pass batch vs the batch", s);
    const double two_pass = time_ms(
        [&] { IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), dst.data(), s.n, cv, &dc)); });
    IH_CHECK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_EQ_BATCH_SMALL, 0));
    const double looped = time_ms([&] {
        for (uint32_t i = 0; i < s.n; i++) {
            IH_CHECK(gpu, imghist_equalize(gpu, &src[i], &dst[i], cv, NULL));
        }
    });
    const double hist =
        time_ms([&] { IH_CHECK(gpu, imghist_histogram_list(gpu, src.data(), s.n, NULL, &dc)); });
    /* A pipeline's batches are new tensors: the same calls with the sources
     * taken from two buffers in turn (the second a copy of the first), so
     * that every call has other views than the one before (the descriptors
     * built and uploaded each time). Checked first. */
    CUDA_CHECK(cudaMemcpyAsync(d_loop, d_src, bytes, cudaMemcpyDeviceToDevice, stream));
    std::vector<imghist_view> other(src);
    for (uint32_t i = 0; i < s.n; i++) {
        other[i].data = d_loop + i * img;
    }
    const std::vector<imghist_view> *sets[2] = {&src, &other};
    CUDA_CHECK(cudaMemsetAsync(d_dst, 0xa5, bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(d_hist, 0xa5, len * 8, stream));
    IH_CHECK(gpu, imghist_equalize_list(gpu, other.data(), dst.data(), s.n, cv, &dc));
    CUDA_CHECK(cudaMemcpyAsync(h_loop.data(), d_dst, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(got_h.data(), d_hist, len * 8, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(h_loop == h_got && got_h == want_h, "equalize_batch from the second buffer", s);
    CUDA_CHECK(cudaMemsetAsync(d_hist, 0xa5, len * 8, stream));
    IH_CHECK(gpu, imghist_histogram_list(gpu, other.data(), s.n, NULL, &dc));
    CUDA_CHECK(cudaMemcpyAsync(got_h.data(), d_hist, len * 8, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(got_h == want_h, "histogram_batch from the second buffer", s);
    unsigned turn = 0;
    const double eq_new = time_ms([&] {
        const std::vector<imghist_view> &v = *sets[turn++ & 1];
        IH_CHECK(gpu, imghist_equalize_list(gpu, v.data(), dst.data(), s.n, cv, &dc));
    });
    const double hist_new = time_ms([&] {
        const std::vector<imghist_view> &v = *sets[turn++ & 1];
        IH_CHECK(gpu, imghist_histogram_list(gpu, v.data(), s.n, NULL, &dc));
    });
    /* The host's part: how long a call takes to return (queueing only), the
     * GPU kept busy meanwhile, same views and new views each call (median of
     * 21 histogram calls each). */
    double host_us[2];
    for (int fresh = 0; fresh < 2; fresh++) {
        std::vector<double> t;
        for (int k = 0; k < 21; k++) {
            CUDA_CHECK(launch_read(READ_LDG_X4, d_src, bytes, timer.sink, timer.grid, stream));
            const std::vector<imghist_view> &v = *sets[fresh ? turn++ & 1 : 0];
            const auto t0 = std::chrono::steady_clock::now();
            IH_CHECK(gpu, imghist_histogram_list(gpu, v.data(), s.n, NULL, &dc));
            t.push_back(std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - t0).count());
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::sort(t.begin(), t.end());
        host_us[fresh] = t[t.size() / 2];
    }
    const double ref = read + copy, gb = bytes / 1e6;
    printf("| %u x %ux%u | %.1f | %.4f | %.4f | %.4f | %.4f (%.0f GB/s, %.2fx) | "
           "%.4f (%.2fx) | %.4f (%.2fx) | %.4f (%.1fx the batch) | %.4f (%.0f GB/s, %.1f %%) | "
           "%.4f (%.2fx) | %.4f (%.1f %%) | %.1f / %.1f |\n",
           s.n, s.w, s.h, gb, read, copy, ref, eq[0], gb / eq[0], eq[0] / ref, eq[1],
           eq[1] / ref, two_pass, two_pass / ref, looped, looped / eq[0], hist, gb / hist,
           100.0 * read / hist, eq_new, eq_new / ref, hist_new, 100.0 * read / hist_new,
           host_us[0], host_us[1]);
    fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    long long tiny = 0; /* IMGHIST_P_EXP_BATCH_TINY */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            timer.runs = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--tiny") == 0 && i + 1 < argc) {
            tiny = atoll(argv[++i]);
        }
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    call_timer_init(timer, prop);
    stream = timer.stream;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &gpu) != IMGHIST_OK) {
        fprintf(stderr, "no CUDA context: %s\n", imghist_last_error(gpu));
        return 1;
    }
    IH_CHECK(gpu, imghist_set_stream(gpu, (imghist_stream)stream));
    IH_CHECK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, tiny));
    IH_CHECK(cpu, imghist_create(IMGHIST_BACKEND_CPU, -1, &cpu));
    IH_CHECK(cpu, imghist_set_param(cpu, IMGHIST_P_CPU_THREADS, 16));
    const time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M", gmtime(&now));
    printf("imghist_bench_batch, imghist %s, %s (%d SMs, L2 %d MiB), %s UTC, median of %d runs "
           "(ms), L2 flushed before each; IMGHIST_P_EXP_BATCH_TINY %lld\n\n",
           imghist_version_string(), prop.name, prop.multiProcessorCount,
           prop.l2CacheSize >> 20, date, timer.runs, tiny);
    /* The columns keep the names of the calls the lists replaced
     * (equalize_batch, histogram_batch), so that logs compare across versions. */
    printf("| batch | MB | read | copy | read + copy | equalize_batch OpenCV (GB/s, x(read+copy)) "
           "| equalize_batch PIL | equalize_batch, all two-pass | loop of imghist_equalize "
           "| histogram_batch (GB/s, %% of read) | equalize_batch, new views each call "
           "| histogram_batch, new views each call | host us a histogram call takes to "
           "return: same views / new views |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    const Shape shapes[] = {
        {256, 640, 480}, {1024, 224, 224}, {64, 1920, 1080}, {16, 4000, 3000}, {1, 4000, 3000},
        {4096, 64, 64}, {1024, 128, 128}, {2048, 160, 160}, /* beyond the issue's: small images */
        {50000, 32, 32}, {1024, 96, 96},                     /* CIFAR's and STL-10's sizes */
        /* Portrait: rows of 1080 and 3000 bytes, not a multiple of 16 (bench_python's
         * N x H x W shapes are these). */
        {64, 1080, 1920}, {16, 3000, 4000},
    };
    size_t most = 0, most_n = 0;
    for (const Shape &s : shapes) {
        most = std::max(most, (size_t)s.n * s.w * s.h);
        most_n = std::max(most_n, (size_t)s.n);
    }
    uint8_t *d_src, *d_dst, *d_loop;
    unsigned long long *d_hist;
    CUDA_CHECK(cudaMalloc(&d_src, most));
    CUDA_CHECK(cudaMalloc(&d_dst, most));
    CUDA_CHECK(cudaMalloc(&d_loop, most));
    CUDA_CHECK(cudaMalloc(&d_hist, most_n * 256 * 8));
    for (const Shape &s : shapes) {
        run_shape(s, d_src, d_dst, d_loop, d_hist);
    }
    printf("\n%s\n", failures ? "FAILURES" : "all checks passed");
    imghist_destroy(gpu);
    imghist_destroy(cpu);
    return failures ? 1 : 0;
}
