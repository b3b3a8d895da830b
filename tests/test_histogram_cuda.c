/*
 * 8-bit histograms on the CUDA backend against the naive reference and the
 * CPU backend, bit for bit (a part of test_histogram, cuda run only): fresh
 * random sizes, pitches and unaligned base pointers, adversarial patterns,
 * lists and tensors (queued, of mixed sizes, beyond the workspace), more than
 * 2^32 pixels, accumulation into host and device counts, short outputs.
 * IMGHIST_TEST_QUICK=1: fewer and smaller cases (compute-sanitizer).
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "backend_suite.h"
#include "suite_util.h"
#include "test_util.h"
#include "views.h"
#include "gpu_suite.h"

static void test_hist_random_shapes(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 25 : 120); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 5000 : 300);
        const uint32_t h = 1 + tu_below(&rng, iter % 5 == 0 ? 3 : 200);
        const size_t pitch = w + (iter % 3 == 0 ? 0 : tu_below(&rng, 70));
        const unsigned offset = tu_below(&rng, 16);
        check_hist_case(w, h, pitch, offset, (enum pattern)(iter % N_PATTERNS));
    }
}

static void test_hist_edge_shapes(void **state)
{
    (void)state;
    /* 1x1, single rows and columns, widths around the 16-byte granule. */
    const uint32_t widths[] = {1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        for (unsigned off = 0; off < 16; off += 5) {
            check_hist_case(widths[i], 1, widths[i], off, UNIFORM);
            check_hist_case(widths[i], 7, widths[i], off, MULT32);
            check_hist_case(widths[i], 5, widths[i] + 16, off, CONSTANT);
            check_hist_case(1, widths[i], 1 + off, off, UNIFORM);
        }
    }
}

static void test_hist_patterns_large(void **state)
{
    (void)state;
    /* Many blocks, many chunks per block: every pattern at ~40 MB, aligned
     * and not. */
    for (int p = 0; p < N_PATTERNS; p++) {
        check_hist_case(4099, quick ? 307 : 10007, 4099, (unsigned)p % 16, (enum pattern)p);
        check_hist_case(4096, quick ? 64 : 2048, 4096 + 512, 0, (enum pattern)p);
        /* Aligned and packed, widths a multiple of 16: the flat walk, whole
         * chunks and a last partial one. */
        check_hist_case(4096, quick ? 64 : 2048, 4096, 0, (enum pattern)p);
        check_hist_case(48, quick ? 333 : 3333, 48, 0, (enum pattern)p);
    }
}

static void test_batch(void **state)
{
    (void)state;
    enum { N = 61 };
    img_t im[N];
    imghist_view dv[N];
    uint64_t *want = malloc(N * BINS * sizeof(uint64_t));
    uint64_t *got = malloc(N * BINS * sizeof(uint64_t));
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&rng, i % 7 == 0 ? 1500 : 150);
        const uint32_t h = 1 + tu_below(&rng, 120);
        im[i] = make_image(w, h, w + tu_below(&rng, 33), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        dv[i] = im[i].dv;
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + BINS * i);
    }
    for (int round = 0; round < 3; round++) {
        memset(got, 0xa5, N * BINS * sizeof(uint64_t));
        const size_t n = round == 2 ? 1 : N;
        if (round == 1) {
            uint64_t *d;
            CUDA_OK(cudaMalloc((void **)&d, N * BINS * sizeof(uint64_t)));
            poison_device(d, 0xa5, N * BINS * sizeof(uint64_t));
            const imghist_counts dc = counts_at(d, N * BINS, IMGHIST_MEM_DEVICE);
            IH_OK(gpu, imghist_histogram_list(gpu, dv, n, NULL, &dc));
            gpu_sync();
            CUDA_OK(cudaMemcpy(got, d, N * BINS * sizeof(uint64_t), cudaMemcpyDeviceToHost));
            CUDA_OK(cudaFree(d));
        } else {
            /* Round 2: one image, counts of exactly the length it needs. */
            const imghist_counts hc = counts_at(got, n * BINS, IMGHIST_MEM_HOST);
            IH_OK(gpu, imghist_histogram_list(gpu, dv, n, NULL, &hc));
            CUDA_OK(cudaDeviceSynchronize());
        }
        assert_memory_equal(got, want, n * BINS * sizeof(uint64_t));
    }
    for (int i = 0; i < N; i++) {
        free_image(&im[i]);
    }
    free(want);
    free(got);
}

/* Eleven batches queued back to back without waiting, so that the host
 * buffer the descriptors are built in is reused while earlier uploads are
 * still queued: each call's views are other than the one before (rotated,
 * shortened), except where a call repeats the last one's (the views cache);
 * each into its own device counts, checked at the end against the naive
 * histograms. */
static void test_batch_queued(void **state)
{
    (void)state;
    enum { N = 37, CALLS = 11 };
    img_t im[N];
    uint64_t *want = malloc(N * BINS * sizeof(uint64_t));
    uint64_t *got = malloc(N * BINS * sizeof(uint64_t));
    assert_true(want && got);
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&rng, i % 5 == 0 ? 900 : 90);
        const uint32_t h = 1 + tu_below(&rng, 60);
        im[i] = make_image(w, h, w + tu_below(&rng, 20), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + BINS * i);
    }
    imghist_view views[CALLS][N];
    size_t first[CALLS], n[CALLS];
    uint64_t *d;
    CUDA_OK(cudaMalloc((void **)&d, CALLS * N * BINS * sizeof(uint64_t)));
    poison_device(d, 0xa5, CALLS * N * BINS * sizeof(uint64_t));
    for (int k = 0; k < CALLS; k++) {
        /* Calls 4 and 5 are the same; so are 8 and 9. */
        const int kk = k == 5 || k == 9 ? k - 1 : k;
        first[k] = (size_t)(kk * 7) % N;
        n[k] = N - (size_t)(kk % 4);
        for (size_t j = 0; j < n[k]; j++) {
            views[k][j] = im[(first[k] + j) % N].dv;
        }
        const imghist_counts dc = counts_at(d + (size_t)k * N * BINS, n[k] * BINS,
                                            IMGHIST_MEM_DEVICE);
        IH_OK(gpu, imghist_histogram_list(gpu, views[k], n[k], NULL, &dc));
    }
    gpu_sync();
    for (int k = 0; k < CALLS; k++) {
        CUDA_OK(cudaMemcpy(got, d + (size_t)k * N * BINS, n[k] * BINS * sizeof(uint64_t),
                           cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < n[k]; j++) {
            if (memcmp(got + BINS * j, want + BINS * ((first[k] + j) % N),
                       BINS * sizeof(uint64_t)) != 0) {
                fail_msg("queued batch %d: image %zu differs", k, j);
            }
        }
    }
    CUDA_OK(cudaFree(d));
    for (int i = 0; i < N; i++) {
        free_image(&im[i]);
    }
    free(want);
    free(got);
}

/* Batches laid out as tensors: n images of w x h in one allocation at a
 * fixed stride (a multiple of 16 bytes: no descriptors), in order or
 * reversed, pitched or packed, unaligned, 1x1, images split over blocks, and
 * one stride that is not a multiple of 16 (descriptors); each through the
 * kernel the library picks, the block kernels and the tiny-image kernel;
 * device counts (then added to with IMGHIST_ACCUMULATE) and host counts, as
 * a list and as a view of n images, against the naive
 * histograms. */
static void test_batch_tensor(void **state)
{
    (void)state;
    static const struct {
        uint32_t n, w, h, pad, off, gap;
        int reverse;
    } cases[] = {
        {300, 64, 48, 0, 0, 0, 0},     {5, 1920, 1080, 0, 0, 0, 0}, {64, 333, 17, 0, 0, 3, 1},
        {64, 333, 17, 0, 0, 0, 0},     {40, 200, 150, 7, 5, 6, 1},  {7, 3001, 997, 3, 11, 4, 0},
        {17, 1, 1, 0, 3, 15, 0},       {1, 4000, 300, 0, 7, 0, 0},  {2000, 16, 16, 0, 0, 0, 1},
    };
    /* The library's choice of kernel, the block kernels only, the tiny-image
     * kernel for every size (IMGHIST_P_EXP_BATCH_TINY). */
    static const int64_t tiny[] = {0, -1, INT32_MAX};
    for (size_t c = 0; c < 3 * (sizeof cases / sizeof cases[0]); c++) {
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, tiny[c % 3]));
        const size_t cs = c / 3;
        const uint32_t n = cases[cs].n, w = cases[cs].w, h = cases[cs].h;
        const size_t pitch = w + cases[cs].pad, stride = pitch * h + cases[cs].gap;
        const size_t bytes = cases[cs].off + n * stride;
        uint8_t *host = malloc(bytes), *dev = NULL;
        imghist_view *dv = malloc(n * sizeof *dv);
        uint64_t *want = malloc((size_t)n * BINS * 8), *got = malloc((size_t)n * BINS * 8);
        assert_true(host && dv && want && got);
        for (size_t i = 0; i < bytes; i++) {
            host[i] = (uint8_t)(cs % 2 ? tu_below(&rng, 8) * 32 : tu_next(&rng) >> 56);
        }
        CUDA_OK(cudaMalloc((void **)&dev, bytes));
        CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
        for (uint32_t i = 0; i < n; i++) {
            const size_t k = cases[cs].reverse ? n - 1 - i : i;
            const size_t at = cases[cs].off + k * stride;
            dv[i] = u8_view(dev + at, IMGHIST_MEM_DEVICE, w, h, pitch);
            tu_naive_hist(host + at, pitch, w, h, want + (size_t)BINS * i);
        }
        uint64_t *d;
        const size_t len = (size_t)n * BINS;
        CUDA_OK(cudaMalloc((void **)&d, len * 8));
        poison_device(d, 0xa5, len * 8);
        const imghist_counts dc = counts_at(d, len, IMGHIST_MEM_DEVICE);
        IH_OK(gpu, imghist_histogram_list(gpu, dv, n, NULL, &dc));
        const imghist_histspec acc = {256, 0.0, 256.0, IMGHIST_ACCUMULATE};
        IH_OK(gpu, imghist_histogram_list(gpu, dv, n, &acc, &dc));
        gpu_sync();
        CUDA_OK(cudaMemcpy(got, d, len * 8, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < len; i++) {
            if (got[i] != 2 * want[i]) {
                fail_msg("tensor case %zu (tiny %lld): image %zu bin %zu: %llu, want 2 x %llu",
                         cs, (long long)tiny[c % 3], i / BINS, i % BINS,
                         (unsigned long long)got[i], (unsigned long long)want[i]);
            }
        }
        memset(got, 0xa5, len * 8);
        const imghist_counts hc = counts_at(got, len, IMGHIST_MEM_HOST);
        IH_OK(gpu, imghist_histogram_list(gpu, dv, n, NULL, &hc));
        gpu_sync();
        if (memcmp(got, want, len * 8) != 0) {
            fail_msg("tensor case %zu (tiny %lld): host counts differ", cs, (long long)tiny[c % 3]);
        }
        /* The same batch as a view of n images. */
        const ptrdiff_t step = cases[cs].reverse ? -(ptrdiff_t)stride : (ptrdiff_t)stride;
        memset(got, 0xa5, len * 8);
        const imghist_view t = vw_tensor(dv[0], n, step);
        IH_OK(gpu, imghist_histogram(gpu, &t, NULL, &hc));
        gpu_sync();
        if (memcmp(got, want, len * 8) != 0) {
            fail_msg("tensor case %zu (tiny %lld): strided counts differ", cs,
                     (long long)tiny[c % 3]);
        }
        CUDA_OK(cudaFree(d));
        CUDA_OK(cudaFree(dev));
        free(host);
        free(dv);
        free(want);
        free(got);
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, 0));
}

/* More images than the batch's workspace holds (IH_BATCH_WS_IMAGES, 32768):
 * the counts are cleared, then added into; and a second call of fewer images
 * through the workspace after it. Tiny images side by side in one buffer,
 * counts poisoned first. */
static void test_batch_beyond_workspace(void **state)
{
    (void)state;
    const size_t counts[] = {40000, 700};
    const uint32_t W = 5, H = 3;
    const size_t n_max = counts[0], stride = W * H;
    uint8_t *host = malloc(n_max * stride), *dev = NULL;
    imghist_view *dv = malloc(n_max * sizeof *dv);
    uint64_t *want = malloc(n_max * BINS * sizeof(uint64_t));
    uint64_t *got = malloc(n_max * BINS * sizeof(uint64_t));
    assert_true(host && dv && want && got);
    for (size_t i = 0; i < n_max * stride; i++) {
        host[i] = (uint8_t)(i % 7 == 0 ? 255 : tu_below(&rng, 256));
    }
    CUDA_OK(cudaMalloc((void **)&dev, n_max * stride));
    CUDA_OK(cudaMemcpy(dev, host, n_max * stride, cudaMemcpyHostToDevice));
    for (size_t i = 0; i < n_max; i++) {
        dv[i] = u8_view(dev + i * stride, IMGHIST_MEM_DEVICE, W, H, W);
        tu_naive_hist(host + i * stride, W, W, H, want + BINS * i);
    }
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        memset(got, 0xa5, counts[c] * BINS * sizeof(uint64_t));
        const imghist_counts hc = counts_at(got, counts[c] * BINS, IMGHIST_MEM_HOST);
        IH_OK(gpu, imghist_histogram_list(gpu, dv, counts[c], NULL, &hc));
        CUDA_OK(cudaDeviceSynchronize());
        for (size_t i = 0; i < counts[c]; i++) {
            if (memcmp(got + BINS * i, want + BINS * i, BINS * sizeof(uint64_t)) != 0) {
                fail_msg("batch of %zu: image %zu differs", counts[c], i);
            }
        }
    }
    CUDA_OK(cudaFree(dev));
    free(host);
    free(dv);
    free(want);
    free(got);
}

/* Many tiny images and one large one: blocks whose run of chunks crosses
 * hundreds of images, and images split over many blocks. */
static void test_batch_mixed_sizes(void **state)
{
    (void)state;
    const size_t n = quick ? 300 : 1500;
    img_t *im = malloc(n * sizeof *im);
    imghist_view *dv = malloc(n * sizeof *dv);
    uint64_t *want = malloc(n * BINS * sizeof(uint64_t)), *got = malloc(n * BINS * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        const int big = i == n / 2;
        const uint32_t w = big ? 3001 : 1 + tu_below(&rng, 40);
        const uint32_t h = big ? (quick ? 200 : 2000) : 1 + tu_below(&rng, 4);
        im[i] = make_image(w, h, w + tu_below(&rng, 5), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        dv[i] = im[i].dv;
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + BINS * i);
    }
    /* The library's run length (0), then runs of 1, 3 and 16 chunks (a
     * block's segments then cross from none to hundreds of image ends). */
    const int64_t runs[] = {0, 1, 3, 16};
    const imghist_counts hc = counts_at(got, n * BINS, IMGHIST_MEM_HOST);
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        int64_t v = -1;
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_RUN, runs[r]));
        IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_EXP_BATCH_RUN, &v));
        assert_int_equal(v, runs[r]);
        memset(got, 0xa5, n * BINS * sizeof(uint64_t));
        IH_OK(gpu, imghist_histogram_list(gpu, dv, n, NULL, &hc));
        CUDA_OK(cudaDeviceSynchronize());
        for (size_t i = 0; i < n; i++) {
            if (memcmp(got + BINS * i, want + BINS * i, BINS * sizeof(uint64_t)) != 0) {
                fail_msg("batch image %zu (%ux%u) differs (run %lld%s)", i, dv[i].width,
                         dv[i].height, (long long)runs[r], runs[r] == 0 ? ": automatic" : "");
            }
        }
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_RUN, 0));
    for (size_t i = 0; i < n; i++) {
        free_image(&im[i]);
    }
    free(im);
    free(dv);
    free(want);
    free(got);
}

/* More than 2^32 pixels in one image: 64-bit counts end to end. */
static void test_over_4g_pixels(void **state)
{
    (void)state;
    if (quick) {
        skip();
    }
    const uint32_t w = 65536, h = 65552; /* 2^32 + 2^20 pixels */
    const size_t n = (size_t)w * h;
    uint8_t *d;
    if (cudaMalloc((void **)&d, n) != cudaSuccess) {
        (void)cudaGetLastError();
        printf("not enough GPU memory for %zu bytes: skipped\n", n);
        skip();
    }
    CUDA_OK(cudaMemset(d, 7, n));
    CUDA_OK(cudaMemset(d + 12345, 250, 1000001));
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view dv = u8_view(d, IMGHIST_MEM_DEVICE, w, h, w);
    uint64_t got[BINS];
    const imghist_counts hc = counts_at(got, BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram(gpu, &dv, NULL, &hc));
    CUDA_OK(cudaDeviceSynchronize());
    assert_int_equal(got[7], (uint64_t)n - 1000001);
    assert_int_equal(got[250], 1000001);
    assert_true(got[7] > UINT32_MAX);
    CUDA_OK(cudaFree(d));
}

/* Counts to start from: bin b of image i is b * (2^32 + 1) + 1000 i + 12345,
 * so an add done in 32 bits, or a count overwritten, shows. */
static void fill_pre(uint64_t *pre, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        pre[k] = (uint64_t)(k % BINS) * 0x100000001ull + (uint64_t)(k / BINS) * 1000 + 12345;
    }
}

/* Where accumulated counts live in the cases of test_accumulate. */
enum counts_kind { C_HOST, C_PINNED, C_DEVICE };

typedef struct {
    enum counts_kind kind;
    uint64_t *buf; /* host, pinned host or device */
    size_t len;
} acc_counts;

static acc_counts acc_alloc(enum counts_kind kind, size_t len)
{
    acc_counts a = {kind, NULL, len};
    if (kind == C_HOST) {
        a.buf = malloc(len * sizeof(uint64_t));
        assert_non_null(a.buf);
    } else if (kind == C_PINNED) {
        CUDA_OK(cudaMallocHost((void **)&a.buf, len * sizeof(uint64_t)));
    } else {
        CUDA_OK(cudaMalloc((void **)&a.buf, len * sizeof(uint64_t)));
    }
    return a;
}

static void acc_free(acc_counts *a)
{
    if (a->kind == C_HOST) {
        free(a->buf);
    } else if (a->kind == C_PINNED) {
        CUDA_OK(cudaFreeHost(a->buf));
    } else {
        CUDA_OK(cudaFree(a->buf));
    }
}

static imghist_counts acc_view(const acc_counts *a)
{
    return counts_at(a->buf, a->len, a->kind == C_DEVICE ? IMGHIST_MEM_DEVICE : IMGHIST_MEM_HOST);
}

/* Load the starting counts; finished before the next imghist call. */
static void acc_set(acc_counts *a, const uint64_t *vals)
{
    if (a->kind == C_DEVICE) {
        CUDA_OK(cudaMemcpy(a->buf, vals, a->len * sizeof(uint64_t), cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
    } else {
        memcpy(a->buf, vals, a->len * sizeof(uint64_t));
    }
}

/* Wait for the context's work, then check the counts are pre + reps * hist. */
static void acc_check(const acc_counts *a, const uint64_t *pre, const uint64_t *hist, int reps,
                      const char *what)
{
    gpu_sync();
    uint64_t *got = malloc(a->len * sizeof(uint64_t));
    assert_non_null(got);
    if (a->kind == C_DEVICE) {
        CUDA_OK(cudaMemcpy(got, a->buf, a->len * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    } else {
        memcpy(got, a->buf, a->len * sizeof(uint64_t));
    }
    for (size_t k = 0; k < a->len; k++) {
        const uint64_t want = pre[k] + (uint64_t)reps * hist[k];
        if (got[k] != want) {
            fail_msg("%s: count %zu (image %zu, bin %zu) is %llu, want %llu", what, k, k / BINS,
                     k % BINS, (unsigned long long)got[k], (unsigned long long)want);
        }
    }
    free(got);
}

/*
 * IMGHIST_ACCUMULATE: counts pre-filled with known values end as pre-filled +
 * histogram, for every pair of view and counts memory, for batches, for a host
 * image that goes through in bands, and for two calls in a row without a
 * synchronisation between them (the second must read what the first wrote).
 */
static void test_accumulate(void **state)
{
    (void)state;
    enum { NB = 5 };
    const imghist_histspec natural = {.bins = 0, .flags = IMGHIST_ACCUMULATE};
    const imghist_histspec written = {.bins = BINS, .lo = 0, .hi = 256,
                                      .flags = IMGHIST_ACCUMULATE};
    img_t im = make_image(1237, 911, 1300, 5, NORMALISH);
    uint64_t hist[BINS], pre[NB * BINS], bhist[NB * BINS];
    tu_naive_hist(im.host, im.pitch, im.w, im.h, hist);
    fill_pre(pre, NB * BINS);

    /* One view: {view memory, counts kind, spec, calls in a row}. */
    const struct {
        imghist_mem view;
        enum counts_kind counts;
        const imghist_histspec *spec;
        int reps;
        const char *what;
    } cases[] = {
        {IMGHIST_MEM_DEVICE, C_DEVICE, &natural, 2, "device view, device counts"},
        {IMGHIST_MEM_DEVICE, C_PINNED, &written, 2, "device view, pinned host counts"},
        {IMGHIST_MEM_DEVICE, C_HOST, &natural, 1, "device view, pageable host counts"},
        {IMGHIST_MEM_HOST, C_HOST, &written, 2, "host view, host counts"},
        {IMGHIST_MEM_HOST, C_DEVICE, &natural, 2, "host view, device counts"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        acc_counts a = acc_alloc(cases[i].counts, BINS);
        acc_set(&a, pre);
        const imghist_counts c = acc_view(&a);
        const imghist_view *v = cases[i].view == IMGHIST_MEM_DEVICE ? &im.dv : &im.hv;
        for (int r = 0; r < cases[i].reps; r++) {
            IH_OK(gpu, imghist_histogram(gpu, v, cases[i].spec, &c));
        }
        acc_check(&a, pre, hist, cases[i].reps, cases[i].what);
        acc_free(&a);
    }

    /* A host image in bands: every band adds, none overwrites. */
    {
        acc_counts a = acc_alloc(C_HOST, BINS);
        acc_set(&a, pre);
        const imghist_counts c = acc_view(&a);
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 100000));
        IH_OK(gpu, imghist_histogram(gpu, &im.hv, &natural, &c));
        assert_non_null(strstr(imghist_last_note(gpu), "bands"));
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
        acc_check(&a, pre, hist, 1, "host view in bands, host counts");
        acc_free(&a);
    }

    /* The CPU backend accumulates the same way. */
    {
        uint64_t c_buf[BINS];
        memcpy(c_buf, pre, sizeof c_buf);
        const imghist_counts c = counts_at(c_buf, BINS, IMGHIST_MEM_HOST);
        IH_OK(cpu, imghist_histogram(cpu, &im.hv, &natural, &c));
        for (int b = 0; b < BINS; b++) {
            assert_int_equal(c_buf[b], pre[b] + hist[b]);
        }
    }

    /* Batches: device views into each kind of counts, host views into host counts. */
    img_t bim[NB];
    imghist_view bdv[NB], bhv[NB];
    for (int i = 0; i < NB; i++) {
        const uint32_t w = 1 + tu_below(&rng, i == 2 ? 2000 : 300);
        const uint32_t h = 1 + tu_below(&rng, 200);
        bim[i] = make_image(w, h, w + tu_below(&rng, 20), tu_below(&rng, 16),
                            (enum pattern)(i % N_PATTERNS));
        bdv[i] = bim[i].dv;
        bhv[i] = bim[i].hv;
        tu_naive_hist(bim[i].host, bim[i].pitch, w, h, bhist + BINS * i);
    }
    const struct {
        const imghist_view *views;
        enum counts_kind counts;
        int reps;
        const char *what;
    } bcases[] = {
        {bdv, C_DEVICE, 2, "batch: device views, device counts"},
        {bdv, C_PINNED, 1, "batch: device views, pinned host counts"},
        {bhv, C_HOST, 1, "batch: host views, host counts"},
    };
    for (size_t i = 0; i < sizeof bcases / sizeof bcases[0]; i++) {
        acc_counts a = acc_alloc(bcases[i].counts, NB * BINS);
        acc_set(&a, pre);
        const imghist_counts c = acc_view(&a);
        for (int r = 0; r < bcases[i].reps; r++) {
            IH_OK(gpu, imghist_histogram_list(gpu, bcases[i].views, NB, &natural, &c));
        }
        acc_check(&a, pre, bhist, bcases[i].reps, bcases[i].what);
        acc_free(&a);
    }

    /* Without the flag the same written-out spec overwrites. */
    {
        const imghist_histspec plain = {.bins = BINS, .lo = 0, .hi = 256, .flags = 0};
        acc_counts a = acc_alloc(C_DEVICE, BINS);
        acc_set(&a, pre);
        const imghist_counts c = acc_view(&a);
        IH_OK(gpu, imghist_histogram(gpu, &im.dv, &plain, &c));
        const uint64_t zero[BINS] = {0};
        acc_check(&a, zero, hist, 1, "no flag: overwritten");
        acc_free(&a);
    }
    for (int i = 0; i < NB; i++) {
        free_image(&bim[i]);
    }
    free_image(&im);
}

/*
 * Counts one short of what the call needs are refused with IMGHIST_E_BUFSIZE
 * before anything is written: host and device views into host and device
 * counts, batches (count * 256 needed), equalize's histogram, the CPU backend;
 * the exact length works.
 */
static void test_short_counts(void **state)
{
    (void)state;
    enum { NB = 3 };
    img_t im = make_image(100, 50, 120, 1, UNIFORM);
    uint64_t *d, h[NB * BINS], poison;
    CUDA_OK(cudaMalloc((void **)&d, sizeof h));
    poison_device(d, 0xa5, sizeof h);
    memset(h, 0xa5, sizeof h);
    memcpy(&poison, h, sizeof poison);
    uint8_t *out = malloc(im.pitch * im.h);
    memset(out, 0x5a, im.pitch * im.h);
    const imghist_view out_v = u8_view(out, IMGHIST_MEM_HOST, im.w, im.h, im.pitch);
    const imghist_view dv3[NB] = {im.dv, im.dv, im.dv}, hv3[NB] = {im.hv, im.hv, im.hv};

    for (int dev_counts = 0; dev_counts < 2; dev_counts++) {
        uint64_t *buf = dev_counts ? d : h;
        const imghist_mem m = dev_counts ? IMGHIST_MEM_DEVICE : IMGHIST_MEM_HOST;
        const imghist_counts c255 = counts_at(buf, BINS - 1, m);
        const imghist_counts batch_short = counts_at(buf, NB * BINS - 1, m);
        const imghist_counts batch_one = counts_at(buf, BINS, m);
        IH_REFUSED(gpu, imghist_histogram(gpu, &im.hv, NULL, &c255), IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_histogram(gpu, &im.dv, NULL, &c255), IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_histogram_list(gpu, dv3, NB, NULL, &batch_short),
                   IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_histogram_list(gpu, dv3, NB, NULL, &batch_one),
                   IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_histogram_list(gpu, hv3, NB, NULL, &batch_short),
                   IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_equalize(gpu, &im.hv, &out_v, IMGHIST_EQ_OPENCV, &c255),
                   IMGHIST_E_BUFSIZE);
        IH_REFUSED(gpu, imghist_equalize(gpu, &im.dv, &im.dv, IMGHIST_EQ_OPENCV, &c255),
                   IMGHIST_E_BUFSIZE);
    }
    {
        const imghist_counts c255 = counts_at(h, BINS - 1, IMGHIST_MEM_HOST);
        const imghist_counts batch_short = counts_at(h, NB * BINS - 1, IMGHIST_MEM_HOST);
        IH_REFUSED(cpu, imghist_histogram(cpu, &im.hv, NULL, &c255), IMGHIST_E_BUFSIZE);
        IH_REFUSED(cpu, imghist_histogram_list(cpu, hv3, NB, NULL, &batch_short),
                   IMGHIST_E_BUFSIZE);
        IH_REFUSED(cpu, imghist_equalize(cpu, &im.hv, &out_v, IMGHIST_EQ_OPENCV, &c255),
                   IMGHIST_E_BUFSIZE);
    }
    /* Nothing was written: not the counts, not the images. */
    CUDA_OK(cudaDeviceSynchronize());
    uint64_t back[NB * BINS];
    CUDA_OK(cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < NB * BINS; k++) {
        assert_int_equal(h[k], poison);
        assert_int_equal(back[k], poison);
    }
    for (size_t k = 0; k < im.pitch * im.h; k++) {
        assert_int_equal(out[k], 0x5a);
    }
    uint8_t *img_back = malloc(im.pitch * im.h);
    CUDA_OK(cudaMemcpy2D(img_back, im.pitch, im.dev, im.pitch, im.w, im.h, cudaMemcpyDeviceToHost));
    for (uint32_t y = 0; y < im.h; y++) {
        assert_memory_equal(img_back + (size_t)y * im.pitch, im.host + (size_t)y * im.pitch, im.w);
    }
    free(img_back);

    /* The exact lengths are enough. */
    uint64_t want[BINS];
    tu_naive_hist(im.host, im.pitch, im.w, im.h, want);
    const imghist_counts c256 = counts_at(d, BINS, IMGHIST_MEM_DEVICE);
    const imghist_counts batch_exact = counts_at(h, NB * BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram(gpu, &im.dv, NULL, &c256));
    IH_OK(gpu, imghist_histogram_list(gpu, dv3, NB, NULL, &batch_exact));
    gpu_sync();
    CUDA_OK(cudaMemcpy(back, d, BINS * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    assert_memory_equal(back, want, sizeof want);
    for (int i = 0; i < NB; i++) {
        assert_memory_equal(h + BINS * i, want, sizeof want);
    }
    CUDA_OK(cudaFree(d));
    free(out);
    free_image(&im);
}

static int setup(void **state)
{
    (void)state;
    return gpu_suite_setup("test_histogram_cuda");
}

static const bs_test tests[] = {
    GPU_TEST(test_hist_edge_shapes),
    GPU_TEST(test_hist_random_shapes),
    GPU_TEST(test_hist_patterns_large),
    GPU_TEST(test_batch),
    GPU_TEST(test_batch_queued),
    GPU_TEST(test_batch_tensor),
    GPU_TEST(test_batch_mixed_sizes),
    GPU_TEST(test_batch_beyond_workspace),
    GPU_TEST(test_over_4g_pixels),
    GPU_TEST(test_accumulate),
    GPU_TEST(test_short_counts),
};

const bs_part histogram_cuda_part = BS_PART("histogram cuda", tests, setup, gpu_suite_teardown);
