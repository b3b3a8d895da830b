/*
 * imghist_bench_views16: 16-bit equalization batches of device views of
 * shapes of their own (sizes, pitches and 2-byte phases drawn per image),
 * with and without masks (each view carrying its own), no histograms asked
 * for: one imghist_equalize_list call against a loop of imghist_equalize
 * calls on the same views, and against a copy of the batch's bytes times 1.5
 * (an estimate of reading the images twice and writing them once).
 *
 *   imghist_bench_views16 [--runs N]
 *
 * Times are medians of CUDA-event timings on the context's stream after
 * warm-up (call_timer, inputs not flushed from L2; ms). The batch's
 * pixels are checked equal to the loop's before timing (a mismatch prints
 * FAIL and makes the exit status 1). The route column is
 * imghist_exp_last_route after the batch call (3 is one launch of a block
 * an image).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "bench_kernels.cuh"
#include "imghist.h"
#include "imghist_experimental.h"

namespace {

uint64_t rng_state = 0x9e3779b97f4a7c15ull;
uint32_t below(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng_state >> 33) % n);
}

struct Case {
    uint32_t count, max_w, max_h;
    bool masked;
};

} // namespace

int main(int argc, char **argv)
{
    int runs = 15;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: imghist_bench_views16 [--runs N]\n");
            return 2;
        }
    }
    imghist_ctx *gpu = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &gpu) != IMGHIST_OK) {
        fprintf(stderr, "imghist_bench_views16: no CUDA context\n");
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    /* the context queues its work on the timer's stream, whose events time
     * it; inputs are not flushed from L2 (flush = false below) */
    call_timer timer;
    call_timer_init(timer, prop);
    timer.runs = runs;
    IH_CHECK(gpu, imghist_set_stream(gpu, timer.stream));
    const cudaStream_t stream = timer.stream;
    printf("imghist_bench_views16: %s, imghist %s, median of %d (ms)\n\n", prop.name,
           imghist_version_string(), runs);
    printf("| views | largest | mask | one call | route | a call per image | speed-up | "
           "copy x 1.5 | same pixels |\n|---|---|---|---|---|---|---|---|---|\n");
    const Case cases[] = {{256, 64, 64, false},  {256, 64, 64, true},   {64, 256, 256, false},
                          {64, 256, 256, true},  {30, 300, 218, false}, {8, 180, 180, false},
                          {8, 180, 180, true},   {1000, 32, 32, false}};
    int status = 0;
    for (const Case &c : cases) {
        std::vector<imghist_view> src(c.count), dst(c.count), msk(c.count);
        std::vector<size_t> off(c.count);
        size_t total = 0, pixels = 0;
        for (uint32_t i = 0; i < c.count; i++) {
            const uint32_t w = 1 + below(c.max_w), h = 1 + below(c.max_h);
            const size_t pitch = (w + below(5)) * 2;
            off[i] = total + 2 * below(8);
            total = off[i] + 2 * pitch * h + (size_t)w * h;
            total = (total + 15) / 16 * 16;
            pixels += (size_t)w * h;
            src[i] = {NULL, IMGHIST_U16, IMGHIST_MEM_DEVICE, w, h, pitch, 1, 0, 0, NULL};
            dst[i] = src[i];
            msk[i] = {NULL, IMGHIST_U8, IMGHIST_MEM_DEVICE, w, h, w, 1, 0, 0, NULL};
            src[i].mask = c.masked ? &msk[i] : NULL;
        }
        std::vector<uint8_t> host(total);
        for (size_t k = 0; k < total; k += 2) {
            const uint32_t v = below(65536);
            host[k] = (uint8_t)((v * v) >> 16); /* skewed */
            host[k + 1] = (uint8_t)((v * v) >> 24);
        }
        uint8_t *dev = NULL, *dev2 = NULL;
        CUDA_CHECK(cudaMalloc((void **)&dev, total));
        CUDA_CHECK(cudaMalloc((void **)&dev2, total));
        for (uint32_t i = 0; i < c.count; i++) {
            const size_t img = src[i].pitch * src[i].height;
            src[i].data = dev + off[i];
            dst[i].data = dev + off[i] + img;
            msk[i].data = dev + off[i] + 2 * img;
            /* masks: about 60 % of the pixels */
            for (size_t k = 0; k < (size_t)src[i].width * src[i].height; k++) {
                host[off[i] + 2 * img + k] = below(5) < 3 ? 1 : 0;
            }
        }
        CUDA_CHECK(cudaMemcpy(dev, host.data(), total, cudaMemcpyHostToDevice));
        const imghist_method cv = IMGHIST_EQ_OPENCV;
        auto batch = [&]() {
            IH_CHECK(gpu, imghist_equalize_list(gpu, src.data(), dst.data(), c.count, cv, NULL));
        };
        auto loop = [&]() {
            for (uint32_t i = 0; i < c.count; i++) {
                IH_CHECK(gpu, imghist_equalize(gpu, &src[i], &dst[i], cv, NULL));
            }
        };
        /* the check: the batch's pixels against the loop's */
        CUDA_CHECK(cudaMemset(dev2, 0, total));
        batch();
        const int route = (int)imghist_exp_last_route(gpu);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<uint8_t> a(total), b(total);
        CUDA_CHECK(cudaMemcpy(a.data(), dev, total, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(dev, host.data(), total, cudaMemcpyHostToDevice));
        loop();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(b.data(), dev, total, cudaMemcpyDeviceToHost));
        const bool same = memcmp(a.data(), b.data(), total) == 0;
        status |= same ? 0 : 1;
        const double t_batch = call_timer_ms(timer, batch, false);
        const double t_loop = call_timer_ms(timer, loop, false);
        const size_t bytes = pixels * 2;
        const double t_copy = call_timer_ms(timer, [&]() {
            CUDA_CHECK(cudaMemcpyAsync(dev2, dev, bytes, cudaMemcpyDeviceToDevice, stream));
        }, false) * 1.5;
        printf("| %u | %ux%u | %s | %.3f | %d | %.3f | %.1fx | %.3f | %s |\n", c.count, c.max_w,
               c.max_h, c.masked ? "60 %" : "-", t_batch, route, t_loop, t_loop / t_batch,
               t_copy, same ? "ok" : "FAIL");
        fflush(stdout);
        CUDA_CHECK(cudaFree(dev));
        CUDA_CHECK(cudaFree(dev2));
    }
    imghist_destroy(gpu);
    return status;
}
