/*
 * The CUDA backend against the CPU reference, bit for bit: fresh random sizes,
 * pitches and unaligned base pointers, adversarial patterns, photographs,
 * batches and equalization, host and device views and counts, the context's
 * stream, accumulation, short outputs, banding, host copies through pinned
 * buffers, the out-of-memory fallback
 * and a GPU fault. Exits 77 (skipped) when there is no usable GPU.
 * argv[1], if given, is the samples folder.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
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
#include "suite_util.h"
#include "test_util.h"
#include "views.h"

#define BINS 256 /* one bin per 8-bit value: every histogram in this suite */

/* An imghist call that must succeed; on failure the library's message is shown. */
/* An imghist call that must be refused with `want`, and say why. */
#define IH_REFUSED(ctx, call, want)                                                        \
    do {                                                                                   \
        const imghist_status st_ = (call);                                                 \
        if (st_ != (want)) {                                                               \
            fail_msg("%s: got %s (%s), want %s", #call, imghist_strerror(st_),             \
                     imghist_last_error(ctx), imghist_strerror(want));                     \
        }                                                                                  \
        assert_true(imghist_last_error(ctx)[0] != '\0');                                   \
    } while (0)

static imghist_ctx *gpu, *cpu;
/* The stream the GPU context started on; every test leaves the context on it. */
static imghist_stream own_stream;
static const char *samples;
static tu_rng rng;
/* IMGHIST_TEST_QUICK=1: fewer and smaller cases, for runs under compute-sanitizer. */
static int quick;

enum pattern { UNIFORM, CONSTANT, MULT32, MULT4_64, NORMALISH, RUNS, PHOTO, N_PATTERNS };
static const char *pattern_name[] = {"uniform", "constant", "multiples of 32", "64 values x4",
                                     "normal-ish", "runs", "photograph"};
static imghist_image *photo;

static uint8_t pattern_value(enum pattern p, size_t i, uint32_t x, uint32_t y)
{
    switch (p) {
    case UNIFORM: return (uint8_t)(tu_next(&rng) >> 56);
    case CONSTANT: return 127;
    case MULT32: return (uint8_t)(tu_below(&rng, 8) * 32);
    case MULT4_64: return (uint8_t)(tu_below(&rng, 64) * 4);
    case NORMALISH: { /* sum of 4 uniforms: a bell around 128 */
        uint64_t r = tu_next(&rng);
        return (uint8_t)(((r & 0xff) + ((r >> 8) & 0xff) + ((r >> 16) & 0xff) + ((r >> 24) & 0xff)) / 4);
    }
    case RUNS: return (uint8_t)((i / 64) * 2654435761u >> 24);
    case PHOTO: {
        const imghist_view *v = &photo->view;
        return ((const uint8_t *)v->data)[(size_t)(y % v->height) * v->pitch + (x % v->width)];
    }
    default: return 0;
    }
}

/* Fill the w x h pixels of a pitched buffer; the padding is left as it is. */
static void fill_image(uint8_t *p, size_t pitch, uint32_t w, uint32_t h, enum pattern pat)
{
    size_t i = 0;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++, i++) {
            p[(size_t)y * pitch + x] = pattern_value(pat, i, x, y);
        }
    }
}

static imghist_view u8_view(void *data, imghist_mem mem, uint32_t w, uint32_t h, size_t pitch)
{
    const imghist_view v = {.data = data, .dtype = IMGHIST_U8, .mem = mem,
                            .width = w, .height = h, .pitch = pitch};
    return v;
}

static imghist_counts counts_at(uint64_t *data, size_t len, imghist_mem mem)
{
    const imghist_counts c = {.data = data, .len = len, .mem = mem};
    return c;
}

/* Wait for the GPU context's work. It runs on the context's stream, which the
 * legacy default stream (and so a plain cudaMemcpy) need not wait for. */
static void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize(s));
}

/* The CPU backend's histogram of a host view: the reference. */
static void cpu_hist(const imghist_view *v, uint64_t out[BINS])
{
    const imghist_counts c = counts_at(out, BINS, IMGHIST_MEM_HOST);
    IH_OK(cpu, imghist_histogram(cpu, v, NULL, &c));
}

/* Case-insensitive substring test, for messages whose capitalisation is free. */
static int contains_ci(const char *s, const char *word)
{
    const size_t n = strlen(word);
    for (; *s != '\0'; s++) {
        size_t i = 0;
        while (i < n && s[i] != '\0' &&
               tolower((unsigned char)s[i]) == tolower((unsigned char)word[i])) {
            i++;
        }
        if (i == n) {
            return 1;
        }
    }
    return 0;
}

/* A pitched host image and its copy in device memory, padding filled with a
 * value that must never be counted or written (the image avoids it except for
 * CONSTANT/PHOTO patterns). */
typedef struct {
    uint8_t *host;   /* pitch * height */
    uint8_t *dbase;  /* device allocation */
    uint8_t *dev;    /* dbase + offset: the image's first byte */
    size_t pitch;
    uint32_t w, h;
    size_t bytes;    /* allocation size */
    imghist_view hv, dv; /* the two copies as views */
} img_t;

static img_t make_image(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = {0};
    im.w = w;
    im.h = h;
    im.pitch = pitch;
    im.bytes = offset + pitch * (h - 1) + w; /* no slack after the last pixel */
    im.host = malloc(pitch * h);
    assert_non_null(im.host);
    memset(im.host, 0xfd, pitch * h);
    fill_image(im.host, pitch, w, h, p);
    CUDA_OK(cudaMalloc((void **)&im.dbase, im.bytes));
    CUDA_OK(cudaMemset(im.dbase, 0xfd, im.bytes));
    im.dev = im.dbase + offset;
    CUDA_OK(cudaMemcpy2D(im.dev, pitch, im.host, pitch, w, h, cudaMemcpyHostToDevice));
    /* The copies are on the legacy default stream, which the context's stream
     * may not wait for: finish them before any imghist call reads the image. */
    CUDA_OK(cudaDeviceSynchronize());
    im.hv = u8_view(im.host, IMGHIST_MEM_HOST, w, h, pitch);
    im.dv = u8_view(im.dev, IMGHIST_MEM_DEVICE, w, h, pitch);
    return im;
}

static void free_image(img_t *im)
{
    free(im->host);
    CUDA_OK(cudaFree(im->dbase));
}

/* Device memory set to `byte`, finished before the next imghist call. */
static void poison_device(void *p, int byte, size_t n)
{
    CUDA_OK(cudaMemset(p, byte, n));
    CUDA_OK(cudaDeviceSynchronize());
}

static void check_hist_case(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = make_image(w, h, pitch, offset, p);
    uint64_t want[BINS], got[BINS], *d_hist;
    tu_naive_hist(im.host, pitch, w, h, want);

    /* Device-resident result, poisoned first, on the context's own stream. */
    CUDA_OK(cudaMalloc((void **)&d_hist, sizeof got));
    poison_device(d_hist, 0xa5, sizeof got);
    const imghist_counts dc = counts_at(d_hist, BINS, IMGHIST_MEM_DEVICE);
    IH_OK(gpu, imghist_histogram(gpu, &im.dv, NULL, &dc));
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
    if (memcmp(got, want, sizeof got) != 0) {
        for (int b = 0; b < BINS; b++) {
            if (got[b] != want[b]) {
                fprintf(stderr, "%ux%u pitch %zu offset %u %s: bin %d got %llu want %llu\n", w, h,
                        pitch, offset, pattern_name[p], b, (unsigned long long)got[b],
                        (unsigned long long)want[b]);
                break;
            }
        }
        fail();
    }
    /* Host-bound result on a stream of our own, made the context's for the call. */
    cudaStream_t s;
    CUDA_OK(cudaStreamCreate(&s));
    IH_OK(gpu, imghist_set_stream(gpu, s));
    memset(got, 0xa5, sizeof got);
    const imghist_counts hc = counts_at(got, BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram(gpu, &im.dv, NULL, &hc));
    CUDA_OK(cudaStreamSynchronize(s));
    IH_OK(gpu, imghist_set_stream(gpu, own_stream)); /* before s goes away */
    CUDA_OK(cudaStreamDestroy(s));
    assert_memory_equal(got, want, sizeof got);
    CUDA_OK(cudaFree(d_hist));
    free_image(&im);
}

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

static void check_equalize_case(uint32_t w, uint32_t h, size_t sp, unsigned soff, size_t dp,
                                unsigned doff, enum pattern p, int in_place)
{
    if (in_place) {
        dp = sp;
    }
    img_t src = make_image(w, h, sp, soff, p);
    uint8_t *want = malloc(dp * h), *got = malloc(dp * h);
    memset(want, 0xfd, dp * h);
    uint64_t want_hist[BINS], got_hist[BINS];
    const imghist_view want_v = u8_view(want, IMGHIST_MEM_HOST, w, h, dp);
    const imghist_counts want_c = counts_at(want_hist, BINS, IMGHIST_MEM_HOST);
    IH_OK(cpu, imghist_equalize(cpu, &src.hv, &want_v, IMGHIST_EQ_OPENCV, &want_c));

    uint8_t *dbase = NULL, *dst;
    size_t dbytes = doff + dp * (h - 1) + w;
    if (in_place) {
        dst = src.dev;
    } else {
        CUDA_OK(cudaMalloc((void **)&dbase, dbytes));
        poison_device(dbase, 0xfd, dbytes);
        dst = dbase + doff;
    }
    const imghist_view dst_v = u8_view(dst, IMGHIST_MEM_DEVICE, w, h, dp);
    memset(got_hist, 0x5a, sizeof got_hist);
    const imghist_counts got_c = counts_at(got_hist, BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_equalize(gpu, &src.dv, &dst_v, IMGHIST_EQ_OPENCV, &got_c));
    CUDA_OK(cudaDeviceSynchronize());
    assert_memory_equal(got_hist, want_hist, sizeof got_hist);
    if (in_place) {
        /* Padding of an in-place image keeps the source's bytes. */
        CUDA_OK(cudaMemcpy2D(got, sp, dst, sp, w, h, cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            assert_memory_equal(got + (size_t)y * sp, want + (size_t)y * dp, w);
        }
    } else {
        /* Whole rows including padding: padding must stay 0xfd. */
        CUDA_OK(cudaMemcpy(got, dbase + doff, dbytes - doff, cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            const size_t n = y + 1 < h ? dp : w;
            if (memcmp(got + (size_t)y * dp, want + (size_t)y * dp, n) != 0) {
                fprintf(stderr, "equalize %ux%u sp %zu+%u dp %zu+%u %s: row %u differs\n", w, h,
                        sp, soff, dp, doff, pattern_name[p], y);
                fail();
            }
        }
        CUDA_OK(cudaFree(dbase));
    }
    free(want);
    free(got);
    free_image(&src);
}

static void test_equalize_random(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 14 : 60); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 3000 : 200);
        const uint32_t h = 1 + tu_below(&rng, 150);
        const size_t sp = w + tu_below(&rng, 40);
        const size_t dp = (iter % 2) ? sp : w + tu_below(&rng, 40);
        const unsigned soff = tu_below(&rng, 16);
        /* Half the cases share the 16-byte phase (vector path), half not. */
        const unsigned doff = (iter % 3 == 0) ? tu_below(&rng, 16) : soff;
        check_equalize_case(w, h, sp, soff, dp, doff, (enum pattern)(iter % N_PATTERNS), 0);
    }
    for (int p = 0; p < N_PATTERNS; p++) {
        check_equalize_case(3001, quick ? 53 : 2003, 3008, 0, 3008, 0, (enum pattern)p, 0);
        check_equalize_case(2048, quick ? 40 : 1001, 2048, 0, 2048, 0, (enum pattern)p, 0);
        check_equalize_case(2048, quick ? 40 : 1001, 2560, 0, 2048, 0, (enum pattern)p, 0);
        check_equalize_case(777, 333, 800, 3, 0, 0, (enum pattern)p, 1);
    }
    check_equalize_case(1, 1, 1, 0, 1, 0, UNIFORM, 0);
    /* Packed rows (pitch == width) go as one row (ih_flat): odd widths, same
     * and other phases, in place; small (one block) and two-pass. */
    const uint32_t packed[] = {1, 15, 17, 33, 1080, 3000};
    for (unsigned i = 0; i < sizeof packed / sizeof packed[0]; i++) {
        const uint32_t w = packed[i], h = w > 100 ? (quick ? 9 : 61) : 37;
        check_equalize_case(w, h, w, i, w, i, (enum pattern)(i % N_PATTERNS), 0);
        check_equalize_case(w, h, w, 3, w, 8, UNIFORM, 0);
        check_equalize_case(w, h, w, 5, 0, 0, MULT32, 1);
    }
    check_equalize_case(1080, quick ? 300 : 1920, 1080, 0, 1080, 0, UNIFORM, 0);
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

/* Host views on the CUDA backend, on the photographs. */
static void test_host_api_photographs(void **state)
{
    (void)state;
    const char *names[] = {"moon.png", "camera.png", "coffee.png", "astronaut.png",
                           "hubble_deep_field.jpg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples, names[i]);
        imghist_image *img = NULL;
        IH_OK(cpu, imghist_load_file(cpu, path, &img));
        const imghist_view *v = &img->view;
        const size_t n = (size_t)v->width * v->height;
        uint64_t hc[BINS], hg[BINS];
        uint8_t *ec = malloc(n), *eg = malloc(n);
        const imghist_counts hc_c = counts_at(hc, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hg_c = counts_at(hg, BINS, IMGHIST_MEM_HOST);
        const imghist_view ec_v = u8_view(ec, IMGHIST_MEM_HOST, v->width, v->height, v->width);
        const imghist_view eg_v = u8_view(eg, IMGHIST_MEM_HOST, v->width, v->height, v->width);
        IH_OK(gpu, imghist_histogram(gpu, v, NULL, &hg_c));
        IH_OK(cpu, imghist_histogram(cpu, v, NULL, &hc_c));
        assert_memory_equal(hg, hc, sizeof hc);
        IH_OK(gpu, imghist_equalize(gpu, v, &eg_v, IMGHIST_EQ_OPENCV, &hg_c));
        IH_OK(cpu, imghist_equalize(cpu, v, &ec_v, IMGHIST_EQ_OPENCV, &hc_c));
        assert_memory_equal(eg, ec, n);
        assert_memory_equal(hg, hc, sizeof hc);
        free(ec);
        free(eg);
        imghist_image_free(img);
    }
}

/* Host images that do not fit the staging limit go through in bands, with
 * the same bits, and the note says so; with the limit back at 0 (automatic)
 * the image goes in one piece and the note is empty. */
static void test_host_api_in_bands(void **state)
{
    (void)state;
    const uint32_t w = 1237, h = 911;
    const size_t n = (size_t)w * h;
    uint8_t *img = malloc(n), *eg = malloc(n), *ec = malloc(n);
    for (size_t i = 0; i < n; i++) {
        img[i] = pattern_value((enum pattern)(i % 3 == 0 ? MULT32 : NORMALISH), i, 0, 0);
    }
    const imghist_view iv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view egv = u8_view(eg, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view ecv = u8_view(ec, IMGHIST_MEM_HOST, w, h, w);
    uint64_t hg[BINS], hc[BINS];
    const imghist_counts hgc = counts_at(hg, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hcc = counts_at(hc, BINS, IMGHIST_MEM_HOST);
    int64_t v = -1;
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 100000)); /* 80 rows per band */
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_STAGING_BYTES, &v));
    assert_int_equal(v, 100000);
    IH_OK(gpu, imghist_histogram(gpu, &iv, NULL, &hgc));
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    IH_OK(gpu, imghist_equalize(gpu, &iv, &egv, IMGHIST_EQ_OPENCV, &hgc));
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    IH_OK(cpu, imghist_equalize(cpu, &iv, &ecv, IMGHIST_EQ_OPENCV, &hcc));
    assert_memory_equal(hg, hc, sizeof hc);
    assert_memory_equal(eg, ec, n);
    /* And back to one piece. */
    IH_OK(gpu, imghist_histogram(gpu, &iv, NULL, &hgc));
    assert_string_equal(imghist_last_note(gpu), "");
    assert_memory_equal(hg, hc, sizeof hc);
    free(img);
    free(eg);
    free(ec);
}

/* Host memory for one case of test_host_transfers: malloc'd, or pinned by
 * CUDA (which the library copies from directly). */
static uint8_t *host_alloc(size_t n, int pinned)
{
    void *p = NULL;
    if (pinned) {
        CUDA_OK(cudaMallocHost(&p, n));
    } else {
        p = malloc(n);
    }
    assert_non_null(p);
    return (uint8_t *)p;
}

static void host_free(void *p, int pinned)
{
    if (pinned) {
        CUDA_OK(cudaFreeHost(p));
    } else {
        free(p);
    }
}

/*
 * Host images go to the GPU and back through the context's pinned slots
 * (2 MiB each, in turn) when they are large enough, and directly otherwise:
 * images of several slots with pitched rows at odd offsets, in bands that
 * are themselves several slots, a row wider than a slot, CUDA-pinned memory,
 * a small image, and a U16 view with a mask (the wide path's two uploads).
 * Counts and equalized pixels equal the CPU's; the destination's padding
 * keeps its poison.
 */
static void test_host_transfers(void **state)
{
    (void)state;
    static const struct {
        uint32_t w, h;
        size_t spad, dpad; /* pitch - width, source and destination */
        unsigned soff, doff;
        int64_t staging;   /* IMGHIST_P_STAGING_BYTES, 0: automatic */
        int pinned;
    } cases[] = {
        {3001, 2100, 12, 18, 3, 5, 0, 0},             /* 4 slots of 699 rows */
        {3001, 2100, 0, 0, 0, 0, 0, 0},               /* packed: one memcpy a slot */
        {3001, 2100, 12, 18, 3, 5, 3001 * 1000, 0},   /* 3 bands of 2 slots */
        {2200000, 3, 1, 7, 1, 2, 0, 0},               /* a row wider than a slot */
        {2048, 1500, 16, 16, 0, 0, 0, 1},             /* pinned already */
        {200, 100, 5, 3, 1, 1, 0, 0},                 /* below the slots' threshold */
        {640, 480, 0, 0, 0, 0, 0, 0},                 /* one slot */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const uint32_t w = cases[k].w, h = cases[k].h;
        const size_t sp = w + cases[k].spad, dp = w + cases[k].dpad;
        const size_t sbytes = cases[k].soff + sp * h, dbytes = cases[k].doff + dp * h;
        const int pinned = cases[k].pinned;
        uint8_t *sbase = host_alloc(sbytes, pinned), *dbase = host_alloc(dbytes, pinned);
        uint8_t *want = malloc(dp * h);
        assert_non_null(want);
        uint8_t *src = sbase + cases[k].soff, *dst = dbase + cases[k].doff;
        memset(sbase, 0xfd, sbytes);
        fill_image(src, sp, w, h, (enum pattern)(k % PHOTO));
        memset(dbase, 0xee, dbytes);
        memset(want, 0xee, dp * h);
        const imghist_view sv = u8_view(src, IMGHIST_MEM_HOST, w, h, sp);
        const imghist_view dv = u8_view(dst, IMGHIST_MEM_HOST, w, h, dp);
        const imghist_view wv = u8_view(want, IMGHIST_MEM_HOST, w, h, dp);
        uint64_t hg[BINS], hc[BINS], he[BINS];
        const imghist_counts hgc = counts_at(hg, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hcc = counts_at(hc, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hec = counts_at(he, BINS, IMGHIST_MEM_HOST);
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, cases[k].staging));
        IH_OK(gpu, imghist_histogram(gpu, &sv, NULL, &hgc));
        IH_OK(gpu, imghist_equalize(gpu, &sv, &dv, IMGHIST_EQ_OPENCV, &hec));
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
        IH_OK(cpu, imghist_equalize(cpu, &sv, &wv, IMGHIST_EQ_OPENCV, &hcc));
        if (memcmp(hg, hc, sizeof hc) != 0 || memcmp(he, hc, sizeof hc) != 0) {
            fail_msg("case %zu (%ux%u): counts differ from the CPU's", k, w, h);
        }
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(dst + y * dp, want + y * dp, dp) != 0) {
                fail_msg("case %zu (%ux%u): row %u differs from the CPU's (padding included)",
                         k, w, h, y);
            }
        }
        for (unsigned i = 0; i < cases[k].doff; i++) {
            assert_int_equal(dbase[i], 0xee);
        }
        free(want);
        host_free(sbase, pinned);
        host_free(dbase, pinned);
    }

    /* U16 with a mask: the wide path uploads both. */
    const uint32_t w = 1500, h = 1100;
    const size_t sp = 2 * w + 6, mp = w + 3;
    uint8_t *img = malloc(sp * h), *mask = malloc(mp * h);
    uint64_t *cg = malloc(65536 * sizeof(uint64_t)), *cc = malloc(65536 * sizeof(uint64_t));
    assert_true(img != NULL && mask != NULL && cg != NULL && cc != NULL);
    for (uint32_t y = 0; y < h; y++) {
        uint16_t *row = (uint16_t *)(img + y * sp);
        for (uint32_t x = 0; x < w; x++) {
            row[x] = (uint16_t)(tu_next(&rng) >> 48);
            mask[y * mp + x] = (uint8_t)((x * 7 + y * 3) % 5 != 0);
        }
    }
    const imghist_view v16 = {.data = img, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
                              .width = w, .height = h, .pitch = sp};
    const imghist_view mv = u8_view(mask, IMGHIST_MEM_HOST, w, h, mp);
    const imghist_counts cgc = counts_at(cg, 65536, IMGHIST_MEM_HOST);
    const imghist_counts ccc = counts_at(cc, 65536, IMGHIST_MEM_HOST);
    const imghist_view v16m = vw_masked(v16, &mv);
    IH_OK(gpu, imghist_histogram(gpu, &v16m, NULL, &cgc));
    IH_OK(cpu, imghist_histogram(cpu, &v16m, NULL, &ccc));
    assert_memory_equal(cg, cc, 65536 * sizeof(uint64_t));
    free(img);
    free(mask);
    free(cg);
    free(cc);
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

static void test_device_api_errors(void **state)
{
    (void)state;
    uint64_t h[BINS];
    const imghist_counts hc = counts_at(h, BINS, IMGHIST_MEM_HOST);
    const imghist_view bad = u8_view(NULL, IMGHIST_MEM_DEVICE, 10, 10, 10);
    IH_REFUSED(gpu, imghist_histogram(gpu, &bad, NULL, &hc), IMGHIST_E_INVALID_ARG);
    IH_REFUSED(gpu, imghist_histogram(gpu, NULL, NULL, &hc), IMGHIST_E_INVALID_ARG);
    IH_REFUSED(gpu, imghist_histogram_list(gpu, &bad, 0, NULL, &hc), IMGHIST_E_INVALID_ARG);
    /* (Device views on a CPU context: test_cpu_context_refuses_device.) */
}

/*
 * Host and device calls mixed on one CUDA context. The device call (on a
 * user stream made the context's) is still queued behind a 64 MB upload when
 * the host-view call comes; the host call must be ordered after it on the same
 * stream, or the two would share the context's GPU scratch (workspace, LUT)
 * at the same time: both results must equal the CPU's. Round r: a device
 * histogram (r % 2 == 0) or equalize (with its histogram), then a host
 * histogram (r % 4 < 2) or equalize.
 */
static void test_mixed_host_device(void **state)
{
    (void)state;
    const uint32_t w = quick ? 2047 : 8191, h = quick ? 2048 : 8192; /* 4 or 64 MB */
    const size_t pitch = (size_t)w + 65;
    const unsigned off = 3;
    const size_t bytes = off + pitch * (h - 1) + w;
    uint8_t *pinned, *dsrc_base, *ddst_base;
    uint64_t *d_counts;
    /* Pinned, so that the upload is asynchronous and keeps the stream busy. */
    CUDA_OK(cudaMallocHost((void **)&pinned, pitch * h));
    memset(pinned, 0xfd, pitch * h);
    CUDA_OK(cudaMalloc((void **)&dsrc_base, bytes));
    CUDA_OK(cudaMalloc((void **)&ddst_base, bytes));
    CUDA_OK(cudaMalloc((void **)&d_counts, BINS * sizeof(uint64_t)));
    poison_device(dsrc_base, 0xfd, bytes); /* padding that must never be counted */
    uint8_t *const dsrc = dsrc_base + off, *const ddst = ddst_base + off;
    uint8_t *want_eq = malloc(pitch * h), *got_eq = malloc(pitch * h);
    assert_non_null(want_eq);
    assert_non_null(got_eq);
    /* The host image of the host-view calls. */
    const uint32_t hw = 3001, hh = 1999;
    const size_t hp = 3008;
    uint8_t *himg = malloc(hp * hh), *hout = malloc(hp * hh), *hwant = malloc(hp * hh);
    assert_non_null(himg);
    assert_non_null(hout);
    assert_non_null(hwant);
    memset(himg, 0xfd, hp * hh);

    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    IH_OK(gpu, imghist_set_stream(gpu, s));
    const imghist_view ref_v = u8_view(pinned, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view want_eq_v = u8_view(want_eq, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view dsrc_v = u8_view(dsrc, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view ddst_v = u8_view(ddst, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view host_v = u8_view(himg, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_view hout_v = u8_view(hout, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_view hwant_v = u8_view(hwant, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_counts dc = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);

    for (int round = 0; round < 8; round++) {
        const int eq = round % 2, host_eq = round % 4 >= 2;
        fill_image(pinned, pitch, w, h, (enum pattern)(round % N_PATTERNS));
        fill_image(himg, hp, hw, hh, (enum pattern)((round + 3) % N_PATTERNS));
        uint64_t want_d[BINS], want_h[BINS], got_d[BINS], got_h[BINS];
        if (eq) {
            const imghist_counts c = counts_at(want_d, BINS, IMGHIST_MEM_HOST);
            IH_OK(cpu, imghist_equalize(cpu, &ref_v, &want_eq_v, IMGHIST_EQ_OPENCV, &c));
        } else {
            cpu_hist(&ref_v, want_d);
        }
        if (host_eq) {
            const imghist_counts c = counts_at(want_h, BINS, IMGHIST_MEM_HOST);
            IH_OK(cpu, imghist_equalize(cpu, &host_v, &hwant_v, IMGHIST_EQ_OPENCV, &c));
        } else {
            cpu_hist(&host_v, want_h);
        }
        memset(got_h, 0xa5, sizeof got_h);

        /* All queued on s, nothing waited for: poisons, the upload, the device call. */
        CUDA_OK(cudaMemsetAsync(d_counts, 0xa5, BINS * sizeof(uint64_t), s));
        CUDA_OK(cudaMemsetAsync(ddst_base, 0xfd, bytes, s));
        CUDA_OK(cudaMemcpy2DAsync(dsrc, pitch, pinned, pitch, w, h, cudaMemcpyHostToDevice, s));
        if (eq) {
            IH_OK(gpu, imghist_equalize(gpu, &dsrc_v, &ddst_v, IMGHIST_EQ_OPENCV, &dc));
        } else {
            IH_OK(gpu, imghist_histogram(gpu, &dsrc_v, NULL, &dc));
        }
        /* Only to report whether the overlap happened (not under the sanitizers,
         * which may count the not-ready answer as an API error). */
        cudaError_t busy = cudaSuccess;
        if (!quick) {
            busy = cudaStreamQuery(s);
            (void)cudaGetLastError();
        }
        const imghist_counts hc = counts_at(got_h, BINS, IMGHIST_MEM_HOST);
        if (host_eq) {
            IH_OK(gpu, imghist_equalize(gpu, &host_v, &hout_v, IMGHIST_EQ_OPENCV, &hc));
        } else {
            IH_OK(gpu, imghist_histogram(gpu, &host_v, NULL, &hc));
        }
        CUDA_OK(cudaStreamSynchronize(s));
        printf("round %d: device %s, then host %s; stream %s when the host call came\n", round,
               eq ? "equalize" : "histogram", host_eq ? "equalize" : "histogram",
               quick ? "not queried" : busy == cudaErrorNotReady ? "busy" : "idle");

        CUDA_OK(cudaMemcpy(got_d, d_counts, sizeof got_d, cudaMemcpyDeviceToHost));
        assert_memory_equal(got_h, want_h, sizeof want_h);
        assert_memory_equal(got_d, want_d, sizeof want_d);
        for (uint32_t y = 0; host_eq && y < hh; y++) {
            if (memcmp(hout + (size_t)y * hp, hwant + (size_t)y * hp, hw) != 0) {
                fail_msg("round %d: host equalized row %u differs", round, y);
            }
        }
        if (eq) {
            CUDA_OK(cudaMemcpy2D(got_eq, pitch, ddst, pitch, w, h, cudaMemcpyDeviceToHost));
            for (uint32_t y = 0; y < h; y++) {
                if (memcmp(got_eq + (size_t)y * pitch, want_eq + (size_t)y * pitch, w) != 0) {
                    fail_msg("round %d: equalized row %u differs", round, y);
                }
            }
        }
    }
    IH_OK(gpu, imghist_set_stream(gpu, own_stream));
    CUDA_OK(cudaStreamDestroy(s));
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(dsrc_base));
    CUDA_OK(cudaFree(ddst_base));
    CUDA_OK(cudaFree(d_counts));
    free(want_eq);
    free(got_eq);
    free(himg);
    free(hout);
    free(hwant);
}

/*
 * imghist_set_stream / imghist_get_stream. Then the switch: an upload (the
 * caller's own work) and an equalization queued on stream A, set_stream(B),
 * then on B the histograms of A's output and of A's upload. Only B is
 * synchronised: B's calls see A's data only if the library ordered B after A,
 * and A's results are complete only then too (both streams are non-blocking,
 * so the plain copies that read the results wait for neither).
 */
static void test_set_get_stream(void **state)
{
    (void)state;
    imghist_stream got = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &got));
    assert_ptr_equal(got, own_stream);
    assert_non_null(own_stream); /* a CUDA context starts on a stream of its own */

    cudaStream_t a, b;
    CUDA_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    const imghist_stream seq[] = {a, NULL, b, a, own_stream};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        IH_OK(gpu, imghist_set_stream(gpu, seq[i]));
        got = (imghist_stream)(uintptr_t)1;
        IH_OK(gpu, imghist_get_stream(gpu, &got));
        assert_ptr_equal(got, seq[i]);
    }

    const uint32_t w = quick ? 2047 : 8191, h = quick ? 2048 : 8192; /* 4 or 64 MB */
    const size_t pitch = (size_t)w + 1;
    const size_t bytes = pitch * h;
    uint8_t *pinned, *dsrc, *ddst;
    /* Counts: [0] A's equalize histogram, [1] B's of A's output, [2] B's of the upload. */
    uint64_t *d_counts;
    CUDA_OK(cudaMallocHost((void **)&pinned, bytes));
    CUDA_OK(cudaMalloc((void **)&dsrc, bytes));
    CUDA_OK(cudaMalloc((void **)&ddst, bytes));
    CUDA_OK(cudaMalloc((void **)&d_counts, 3 * BINS * sizeof(uint64_t)));
    uint8_t *want_eq = malloc(bytes), *got_eq = malloc(bytes);
    assert_non_null(want_eq);
    assert_non_null(got_eq);
    memset(pinned, 0, bytes);
    const imghist_view ref_v = u8_view(pinned, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view want_eq_v = u8_view(want_eq, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view src_v = u8_view(dsrc, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view dst_v = u8_view(ddst, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_counts c0 = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);
    const imghist_counts c1 = counts_at(d_counts + BINS, BINS, IMGHIST_MEM_DEVICE);
    const imghist_counts c2 = counts_at(d_counts + 2 * BINS, BINS, IMGHIST_MEM_DEVICE);

    const enum pattern pats[] = {NORMALISH, MULT4_64, PHOTO, RUNS};
    for (size_t round = 0; round < sizeof pats / sizeof pats[0]; round++) {
        fill_image(pinned, pitch, w, h, pats[round]);
        uint64_t want[3][BINS], gotc[3][BINS];
        const imghist_counts wc0 = counts_at(want[0], BINS, IMGHIST_MEM_HOST);
        IH_OK(cpu, imghist_equalize(cpu, &ref_v, &want_eq_v, IMGHIST_EQ_OPENCV, &wc0));
        cpu_hist(&want_eq_v, want[1]);
        memcpy(want[2], want[0], sizeof want[0]);

        IH_OK(gpu, imghist_set_stream(gpu, a));
        /* Stale data in every output: a call ordered wrongly reads or leaves it. */
        CUDA_OK(cudaMemsetAsync(d_counts, 0xa5, 3 * BINS * sizeof(uint64_t), a));
        CUDA_OK(cudaMemsetAsync(ddst, 0, bytes, a));
        CUDA_OK(cudaMemsetAsync(dsrc, 0, bytes, a));
        CUDA_OK(cudaMemcpyAsync(dsrc, pinned, bytes, cudaMemcpyHostToDevice, a));
        IH_OK(gpu, imghist_equalize(gpu, &src_v, &dst_v, IMGHIST_EQ_OPENCV, &c0));
        IH_OK(gpu, imghist_set_stream(gpu, b));
        IH_OK(gpu, imghist_histogram(gpu, &dst_v, NULL, &c1));
        IH_OK(gpu, imghist_histogram(gpu, &src_v, NULL, &c2));
        CUDA_OK(cudaStreamSynchronize(b)); /* B only */

        CUDA_OK(cudaMemcpy(gotc, d_counts, sizeof gotc, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(got_eq, ddst, bytes, cudaMemcpyDeviceToHost));
        if (memcmp(gotc[0], want[0], sizeof want[0]) != 0) {
            fail_msg("round %zu: the equalize histogram queued on A differs", round);
        }
        if (memcmp(gotc[1], want[1], sizeof want[1]) != 0) {
            fail_msg("round %zu: B's histogram of A's equalized output differs", round);
        }
        if (memcmp(gotc[2], want[2], sizeof want[2]) != 0) {
            fail_msg("round %zu: B's histogram of the upload queued on A differs", round);
        }
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(got_eq + (size_t)y * pitch, want_eq + (size_t)y * pitch, w) != 0) {
                fail_msg("round %zu: equalized row %u differs", round, y);
            }
        }
    }
    IH_OK(gpu, imghist_set_stream(gpu, own_stream));
    CUDA_OK(cudaStreamDestroy(a));
    CUDA_OK(cudaStreamDestroy(b));
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    CUDA_OK(cudaFree(d_counts));
    free(want_eq);
    free(got_eq);
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
 * Contexts on a chosen GPU (imghist_create's device), as the CLI's --gpus
 * makes them: every GPU there is, and two contexts sharing GPU 0, each on its
 * own stream, give the CPU's bits for host and device images; each call
 * leaves the calling thread's current device as it was; device -1 is the
 * calling thread's current GPU; an index past the last GPU is refused.
 */
static void test_create_on_devices(void **state)
{
    (void)state;
    int count = 0;
    IH_OK(NULL, imghist_device_count(&count));
    assert_true(count >= 1);
    const uint32_t w = 1531, h = 977;
    uint8_t *img = malloc((size_t)w * h);
    assert_non_null(img);
    for (size_t i = 0; i < (size_t)w * h; i++) img[i] = (uint8_t)tu_below(&rng, 256);
    const imghist_view hv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    uint64_t want[BINS], got[BINS];
    IH_OK(cpu, imghist_histogram(cpu, &hv, NULL, &(imghist_counts){want, BINS, IMGHIST_MEM_HOST}));
    /* Slots as --gpus 0,0,1,...: GPU 0 twice, then every other GPU. */
    const int n = count + 1;
    for (int k = 0; k < n; k++) {
        const int d = k == 0 ? 0 : k - 1;
        int before = -1, after = -1, dev = -1;
        CUDA_OK(cudaGetDevice(&before));
        imghist_ctx *ctx = NULL;
        IH_OK(ctx, imghist_create(IMGHIST_BACKEND_CUDA, d, &ctx));
        IH_OK(ctx, imghist_get_device(ctx, &dev));
        assert_int_equal(dev, d);
        memset(got, 0xff, sizeof got);
        IH_OK(ctx,
              imghist_histogram(ctx, &hv, NULL, &(imghist_counts){got, BINS, IMGHIST_MEM_HOST}));
        assert_memory_equal(got, want, sizeof want);
        /* A device image on that GPU, counted into device memory. */
        CUDA_OK(cudaSetDevice(d));
        void *dimg = NULL, *dhist = NULL;
        CUDA_OK(cudaMalloc(&dimg, (size_t)w * h));
        CUDA_OK(cudaMalloc(&dhist, sizeof got));
        CUDA_OK(cudaMemcpy(dimg, img, (size_t)w * h, cudaMemcpyHostToDevice));
        /* A copy from pageable memory may still be in flight when cudaMemcpy
         * returns, and the context's stream does not wait for the legacy one. */
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaSetDevice(before));
        const imghist_view dv = u8_view(dimg, IMGHIST_MEM_DEVICE, w, h, w);
        IH_OK(ctx, imghist_histogram(ctx, &dv, NULL,
                                     &(imghist_counts){dhist, BINS, IMGHIST_MEM_DEVICE}));
        imghist_stream st = NULL;
        IH_OK(ctx, imghist_get_stream(ctx, &st));
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaStreamSynchronize((cudaStream_t)st));
        CUDA_OK(cudaMemcpy(got, dhist, sizeof got, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(dimg));
        CUDA_OK(cudaFree(dhist));
        CUDA_OK(cudaSetDevice(before));
        assert_memory_equal(got, want, sizeof want);
        CUDA_OK(cudaGetDevice(&after));
        assert_int_equal(after, before);
        imghist_destroy(ctx);
        CUDA_OK(cudaGetDevice(&after));
        assert_int_equal(after, before);
    }
    for (int d = 0; d < count; d++) {
        int before = -1, dev = -2;
        CUDA_OK(cudaGetDevice(&before));
        CUDA_OK(cudaSetDevice(d));
        imghist_ctx *cur = NULL;
        IH_OK(cur, imghist_create(IMGHIST_BACKEND_CUDA, -1, &cur));
        IH_OK(cur, imghist_get_device(cur, &dev));
        assert_int_equal(dev, d);
        imghist_destroy(cur);
        CUDA_OK(cudaSetDevice(before));
    }
    imghist_ctx *bad = NULL;
    IH_REFUSED(bad, imghist_create(IMGHIST_BACKEND_CUDA, count, &bad), IMGHIST_E_INVALID_ARG);
    imghist_destroy(bad);
    bad = NULL;
    IH_REFUSED(bad, imghist_create(IMGHIST_BACKEND_CUDA, -2, &bad), IMGHIST_E_INVALID_ARG);
    imghist_destroy(bad);
    free(img);
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

/* Device memory on a context of the CPU backend: refused, whichever argument
 * holds it; and the CPU backend has no stream. Real device allocations, so
 * that only the memory kind can be the reason. */
/* CLAHE on the GPU against the CPU context, bit for bit: U8 in every
 * pattern and in sizes that are not multiples of the grid (pitched, at an
 * odd offset), U16, device views in place, host views on the CUDA context,
 * and a device batch. */
static void check_clahe(const void *host, size_t pitch, uint32_t w, uint32_t h, imghist_dtype t,
                        double clip, uint32_t tx, uint32_t ty)
{
    const size_t es = t == IMGHIST_U8 ? 1 : 2, row = (size_t)w * es;
    uint8_t *want = malloc(row * h), *got = malloc(row * h), *hgot = malloc(row * h);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(hgot);
    imghist_view hs = {.data = (void *)host, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w,
        .height = h, .pitch = pitch, .channels = 1};
    imghist_view hd = {.data = want, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(cpu, &hs, &hd, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("cpu clahe: %s", imghist_last_error(cpu));
    }
    /* Device, pitched source at an odd offset, packed destination. */
    uint8_t *dsrc, *ddst;
    CUDA_OK(cudaMalloc((void **)&dsrc, pitch * h + 2));
    CUDA_OK(cudaMalloc((void **)&ddst, row * h));
    poison_device(ddst, 0xab, row * h);
    uint8_t *dimg = dsrc + (es == 1 ? 1 : 2);
    CUDA_OK(cudaMemcpy(dimg, host, pitch * h, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    imghist_view ds = {.data = dimg, .dtype = t, .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h,
        .pitch = pitch, .channels = 1};
    imghist_view dd = {.data = ddst, .dtype = t, .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(gpu, &ds, &dd, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe: %s", imghist_last_error(gpu));
    }
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, ddst, row * h, cudaMemcpyDeviceToHost));
    if (memcmp(got, want, row * h) != 0) {
        fail_msg("CLAHE %ux%u %s clip %g tiles %ux%u: device result differs", w, h,
                 es == 1 ? "u8" : "u16", clip, tx, ty);
    }
    /* In place on the device. */
    if (imghist_clahe(gpu, &ds, &ds, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe in place: %s", imghist_last_error(gpu));
    }
    gpu_sync();
    CUDA_OK(cudaMemcpy2D(got, row, dimg, pitch, row, h, cudaMemcpyDeviceToHost));
    assert_memory_equal(got, want, row * h);
    /* A host view on the CUDA context. */
    imghist_view hg = {.data = hgot, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(gpu, &hs, &hg, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe of a host view: %s", imghist_last_error(gpu));
    }
    assert_memory_equal(hgot, want, row * h);
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    free(want);
    free(got);
    free(hgot);
}

static void test_clahe(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{640, 480}, {333, 517}, {1, 77}, {50, 1}, {1, 1},
                                        {3, 5}, {1920, 1080}, {4000, 3000}};
    static const struct { double clip; uint32_t tx, ty; } set[] = {
        {40.0, 8, 8}, {2.0, 8, 8}, {0.0, 4, 4}, {1.0, 3, 5}, {4.0, 16, 16}, {0.5, 7, 3}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t w = sizes[k][0], h = sizes[k][1];
        if (quick && (uint64_t)w * h > 3000000) {
            continue;
        }
        for (int p = 0; p < N_PATTERNS; p++) {
            if (p == PHOTO) {
                continue;
            }
            const size_t pitch = w + 3;
            uint8_t *img = malloc(pitch * h);
            assert_non_null(img);
            memset(img, 0xfd, pitch * h);
            fill_image(img, pitch, w, h, (enum pattern)p);
            const size_t si = (k + (size_t)p) % (sizeof set / sizeof set[0]);
            check_clahe(img, pitch, w, h, IMGHIST_U8, set[si].clip, set[si].tx, set[si].ty);
            free(img);
        }
        /* U16: random 16-bit values and 12-bit values in the high bits. */
        const size_t pitch16 = (size_t)w * 2 + 6;
        uint8_t *img16 = malloc(pitch16 * h);
        assert_non_null(img16);
        for (int variant = 0; variant < 2; variant++) {
            for (uint32_t y = 0; y < h; y++) {
                uint16_t *r = (uint16_t *)(img16 + (size_t)y * pitch16);
                for (uint32_t x = 0; x < w; x++) {
                    const uint32_t v = tu_next(&rng);
                    r[x] = (uint16_t)(variant == 0 ? v : (v & 0xfff) << 4);
                }
            }
            const size_t si = (k + 3 + (size_t)variant) % (sizeof set / sizeof set[0]);
            check_clahe(img16, pitch16, w, h, IMGHIST_U16, set[si].clip, set[si].tx,
                        set[si].ty);
        }
        free(img16);
    }
    /* A device batch of three sizes against image-by-image CPU results. */
    static const uint32_t bs[3][2] = {{64, 48}, {333, 17}, {640, 480}};
    imghist_view src[3], dst[3], hsrc[3], hdst[3];
    uint8_t *dev[3], *host[3], *want[3];
    for (int i = 0; i < 3; i++) {
        const size_t n = (size_t)bs[i][0] * bs[i][1];
        host[i] = malloc(n);
        want[i] = malloc(n);
        assert_non_null(host[i]);
        assert_non_null(want[i]);
        fill_image(host[i], bs[i][0], bs[i][0], bs[i][1], (enum pattern)(i % 3));
        CUDA_OK(cudaMalloc((void **)&dev[i], n));
        CUDA_OK(cudaMemcpy(dev[i], host[i], n, cudaMemcpyHostToDevice));
        src[i] = u8_view(dev[i], IMGHIST_MEM_DEVICE, bs[i][0], bs[i][1], bs[i][0]);
        dst[i] = src[i];
        hsrc[i] = u8_view(host[i], IMGHIST_MEM_HOST, bs[i][0], bs[i][1], bs[i][0]);
        hdst[i] = u8_view(want[i], IMGHIST_MEM_HOST, bs[i][0], bs[i][1], bs[i][0]);
    }
    CUDA_OK(cudaDeviceSynchronize());
    assert_int_equal(imghist_clahe_list(cpu, hsrc, hdst, 3, 3.0, 4, 4), IMGHIST_OK);
    assert_int_equal(imghist_clahe_list(gpu, src, dst, 3, 3.0, 4, 4), IMGHIST_OK);
    gpu_sync();
    for (int i = 0; i < 3; i++) {
        const size_t n = (size_t)bs[i][0] * bs[i][1];
        uint8_t *got = malloc(n);
        assert_non_null(got);
        CUDA_OK(cudaMemcpy(got, dev[i], n, cudaMemcpyDeviceToHost));
        assert_memory_equal(got, want[i], n);
        free(got);
        free(host[i]);
        free(want[i]);
        CUDA_OK(cudaFree(dev[i]));
    }
    /* A device view of several images (backwards, pitched, a gap between
     * images) into a tensor of another layout: CLAHE and a lookup table,
     * against the CPU image by image. */
    enum { TN = 5, TW = 203, TH = 61, TSP = 208, TDP = 224 };
    const size_t sst = (size_t)TSP * TH + 48, dst_st = (size_t)TDP * TH;
    uint8_t *th = malloc(TN * sst), *tw = malloc(TN * dst_st), *tg = malloc(TN * dst_st);
    uint8_t *tsd = NULL, *tdd = NULL, lut[256];
    assert_true(th && tw && tg);
    for (size_t i = 0; i < TN; i++) {
        fill_image(th + i * sst, TSP, TW, TH, (enum pattern)(i % 3));
    }
    for (int k = 0; k < 256; k++) lut[k] = (uint8_t)(k * 37 + 11);
    CUDA_OK(cudaMalloc((void **)&tsd, TN * sst));
    CUDA_OK(cudaMalloc((void **)&tdd, TN * dst_st));
    CUDA_OK(cudaMemcpy(tsd, th, TN * sst, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view ts = vw_tensor(u8_view(tsd + (TN - 1) * sst, IMGHIST_MEM_DEVICE, TW, TH,
                                              TSP), TN, -(ptrdiff_t)sst);
    const imghist_view td = vw_tensor(u8_view(tdd, IMGHIST_MEM_DEVICE, TW, TH, TDP), TN,
                                      (ptrdiff_t)dst_st);
    for (int op = 0; op < 2; op++) {
        memset(tw, 0, TN * dst_st);
        for (size_t i = 0; i < TN; i++) {
            const imghist_view hs = u8_view(th + (TN - 1 - i) * sst, IMGHIST_MEM_HOST, TW, TH,
                                            TSP);
            const imghist_view hd = u8_view(tw + i * dst_st, IMGHIST_MEM_HOST, TW, TH, TDP);
            IH_OK(cpu, op == 0 ? imghist_clahe(cpu, &hs, &hd, 2.0, 5, 3)
                               : imghist_apply_lut(cpu, &hs, &hd, lut));
        }
        CUDA_OK(cudaMemset(tdd, 0, TN * dst_st));
        CUDA_OK(cudaDeviceSynchronize());
        IH_OK(gpu, op == 0 ? imghist_clahe(gpu, &ts, &td, 2.0, 5, 3)
                           : imghist_apply_lut(gpu, &ts, &td, lut));
        gpu_sync();
        CUDA_OK(cudaMemcpy(tg, tdd, TN * dst_st, cudaMemcpyDeviceToHost));
        if (memcmp(tg, tw, TN * dst_st) != 0) {
            fail_msg("%s of a device view of %d images differs from the CPU's image by image",
                     op == 0 ? "CLAHE" : "a lookup table", TN);
        }
    }
    CUDA_OK(cudaFree(tsd));
    CUDA_OK(cudaFree(tdd));
    free(th);
    free(tw);
    free(tg);
}

/* Histogram matching on the GPU through the C API: the device image's
 * histogram, imghist_match_lut, imghist_apply_lut on the device; the same
 * bytes as the CPU context, the padding untouched. */
static void test_match_on_device(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{640, 480}, {333, 517}, {1, 1}, {4097, 3}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t w = sizes[k][0], h = sizes[k][1];
        img_t a = make_image(w, h, w + 5, 3, (enum pattern)(k % 3));
        img_t r = make_image(97, 61, 97, 0, NORMALISH);
        uint64_t ha[BINS], hr[BINS], hc[BINS];
        const imghist_counts ca = counts_at(ha, BINS, IMGHIST_MEM_HOST);
        const imghist_counts cr = counts_at(hr, BINS, IMGHIST_MEM_HOST);
        assert_int_equal(imghist_histogram(gpu, &a.dv, NULL, &ca), IMGHIST_OK);
        assert_int_equal(imghist_histogram(gpu, &r.dv, NULL, &cr), IMGHIST_OK);
        gpu_sync();
        cpu_hist(&a.hv, hc);
        assert_memory_equal(ha, hc, sizeof ha);
        uint8_t lut[256];
        assert_int_equal(imghist_match_lut(ha, hr, lut), IMGHIST_OK);
        /* Device, in place. */
        assert_int_equal(imghist_apply_lut(gpu, &a.dv, &a.dv, lut), IMGHIST_OK);
        assert_int_equal(imghist_apply_lut(cpu, &a.hv, &a.hv, lut), IMGHIST_OK);
        gpu_sync();
        uint8_t *back = malloc(a.pitch * h);
        assert_non_null(back);
        CUDA_OK(cudaMemcpy2D(back, a.pitch, a.dev, a.pitch, a.pitch - (a.pitch - w), h,
                             cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            assert_memory_equal(back + (size_t)y * a.pitch, a.host + (size_t)y * a.pitch, w);
        }
        /* The padding after each row was not written. */
        if (h > 1) {
            uint8_t pad[5];
            CUDA_OK(cudaMemcpy(pad, a.dev + w, 5, cudaMemcpyDeviceToHost));
            for (int i = 0; i < 5; i++) {
                assert_int_equal(pad[i], 0xfd);
            }
        }
        free(back);
        free_image(&a);
        free_image(&r);
    }
}

static void test_cpu_context_refuses_device(void **state)
{
    (void)state;
    img_t im = make_image(64, 32, 80, 0, UNIFORM);
    uint8_t *d_out;
    uint64_t *d_counts, h[2 * BINS];
    CUDA_OK(cudaMalloc((void **)&d_out, im.pitch * im.h));
    CUDA_OK(cudaMalloc((void **)&d_counts, 2 * BINS * sizeof(uint64_t)));
    uint8_t *out = malloc(im.pitch * im.h);
    const imghist_view d_out_v = u8_view(d_out, IMGHIST_MEM_DEVICE, im.w, im.h, im.pitch);
    const imghist_view out_v = u8_view(out, IMGHIST_MEM_HOST, im.w, im.h, im.pitch);
    const imghist_counts hc = counts_at(h, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hc2 = counts_at(h, 2 * BINS, IMGHIST_MEM_HOST);
    const imghist_counts dc = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);
    const imghist_view dv2[2] = {im.dv, im.dv};

    IH_REFUSED(cpu, imghist_histogram(cpu, &im.dv, NULL, &hc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram(cpu, &im.dv, NULL, &dc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram(cpu, &im.hv, NULL, &dc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram_list(cpu, dv2, 2, NULL, &hc2), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_equalize(cpu, &im.dv, &d_out_v, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_equalize(cpu, &im.hv, &out_v, IMGHIST_EQ_OPENCV, &dc),
               IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_set_stream(cpu, own_stream), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_set_stream(cpu, NULL), IMGHIST_E_UNSUPPORTED);
    /* The context still works on host memory. */
    IH_OK(cpu, imghist_histogram(cpu, &im.hv, NULL, &hc));
    CUDA_OK(cudaFree(d_out));
    CUDA_OK(cudaFree(d_counts));
    free(out);
    free_image(&im);
}

/* A small batch of device views against the naive histogram. */
static void check_small_batch(void)
{
    enum { N = 20 };
    img_t im[N];
    imghist_view dv[N];
    uint64_t want[N * BINS], got[N * BINS];
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&rng, i % 5 == 0 ? 2000 : 200);
        const uint32_t h = 1 + tu_below(&rng, 100);
        im[i] = make_image(w, h, w + tu_below(&rng, 9), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        dv[i] = im[i].dv;
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + BINS * i);
    }
    memset(got, 0xa5, sizeof got);
    const imghist_counts hc = counts_at(got, N * BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram_list(gpu, dv, N, NULL, &hc));
    gpu_sync();
    assert_memory_equal(got, want, sizeof want);
    for (int i = 0; i < N; i++) {
        free_image(&im[i]);
    }
}

/* The experimental tuning knobs change the launch, never the result: one
 * histogram block per SM gives the CPU's bits for single images (small and
 * large), batches and equalization. (The batch run lengths 1, 3 and 16 are
 * in test_batch_mixed_sizes.) */
static void test_experimental_params(void **state)
{
    (void)state;
    int64_t lo = -1, hi = -1, v = -1;
    IH_OK(gpu, imghist_param_bounds(IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &lo, &hi));
    assert_true(lo <= 0 && hi >= 1);
    IH_OK(gpu, imghist_param_bounds(IMGHIST_P_EXP_BATCH_RUN, &lo, &hi));
    assert_true(lo <= 0 && hi >= 16);

    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 1));
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &v));
    assert_int_equal(v, 1);
    for (int iter = 0; iter < (quick ? 5 : 20); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 5000 : 300);
        const uint32_t h = 1 + tu_below(&rng, 200);
        check_hist_case(w, h, w + tu_below(&rng, 40), tu_below(&rng, 16),
                        (enum pattern)(iter % N_PATTERNS));
    }
    check_hist_case(4099, quick ? 307 : 4001, 4099, 7, NORMALISH);
    check_equalize_case(3001, quick ? 53 : 1003, 3008, 1, 3008, 1, PHOTO, 0);
    check_equalize_case(777, 333, 800, 3, 0, 0, MULT32, 1);
    check_small_batch();
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 0));
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &v));
    assert_int_equal(v, 0);
}

/*
 * Run this program again with `flag`, echo what it prints and return its wait
 * status. A process of its own: a GPU fault poisons the CUDA context for good
 * and an exhausted GPU would starve the other tests, and a forked copy of this
 * process could not use CUDA at all.
 */
static int run_child(const char *flag)
{
    char self[4096], cmd[4300];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_null(strchr(self, '\''));
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", self, flag);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[600];
    while (fgets(line, sizeof line, p) != NULL) {
        printf("  child: %s", line);
    }
    return pclose(p);
}

/*
 * The child of test_gpu_oom_fallback. With the context created first, it
 * takes nearly all free GPU memory with plain cudaMalloc, then asks for a host
 * image whose single row is larger than what is left: the library must run it
 * on the CPU, say so in the note, and give the CPU's bits. Once the memory is
 * back the GPU runs it again. Prints what it saw; exit 0 when all of that held.
 */
static int oom_child(void)
{
    imghist_ctx *ctx = NULL, *ref = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK ||
        imghist_create(IMGHIST_BACKEND_CPU, -1, &ref) != IMGHIST_OK) {
        printf("create: %s\n", imghist_last_error(ctx));
        return 2;
    }
    const uint32_t w = 8u << 20, h = 4; /* 8 MiB rows */
    const size_t n = (size_t)w * h;
    uint8_t *img = malloc(n), *out = malloc(n), *want = malloc(n);
    if (img == NULL || out == NULL || want == NULL) {
        printf("out of host memory\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        img[i] = (uint8_t)(((i * 2654435761u) >> 24) ^ (i / 100003));
    }
    const imghist_view iv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view ov = u8_view(out, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view wv = u8_view(want, IMGHIST_MEM_HOST, w, h, w);
    uint64_t want_hist[BINS], hist[BINS];
    const imghist_counts wc = counts_at(want_hist, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hc = counts_at(hist, BINS, IMGHIST_MEM_HOST);
    if (imghist_equalize(ref, &iv, &wv, IMGHIST_EQ_OPENCV, &wc) != IMGHIST_OK) {
        printf("CPU equalize: %s\n", imghist_last_error(ref));
        return 2;
    }

    /* Take the memory in ever smaller pieces; each failure is a non-sticky
     * error, cleared so that it cannot be mistaken for one of the library's. */
    enum { MAX_CHUNKS = 8192 };
    static void *chunks[MAX_CHUNKS];
    size_t nchunks = 0;
    const size_t sizes[] = {(size_t)1 << 30, (size_t)64 << 20, (size_t)1 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        while (nchunks < MAX_CHUNKS && cudaMalloc(&chunks[nchunks], sizes[s]) == cudaSuccess) {
            nchunks++;
        }
        (void)cudaGetLastError();
    }
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    printf("took %zu pieces; %zu bytes of %zu left\n", nchunks, free_b, total_b);
    int ok = 1;
    if (free_b >= w) {
        printf("a row (%u bytes) still fits: the fallback cannot be tested\n", w);
        ok = 0;
    }

    memset(hist, 0xa5, sizeof hist);
    imghist_status st = imghist_histogram(ctx, &iv, NULL, &hc);
    printf("histogram: %s: note '%s' %s\n", imghist_strerror(st), imghist_last_note(ctx),
           imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && strstr(imghist_last_note(ctx), "ran on the CPU") != NULL &&
          memcmp(hist, want_hist, sizeof hist) == 0;
    memset(hist, 0xa5, sizeof hist);
    memset(out, 0x5a, n);
    st = imghist_equalize(ctx, &iv, &ov, IMGHIST_EQ_OPENCV, &hc);
    printf("equalize: %s: note '%s' %s\n", imghist_strerror(st), imghist_last_note(ctx),
           imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && strstr(imghist_last_note(ctx), "ran on the CPU") != NULL &&
          memcmp(hist, want_hist, sizeof hist) == 0 && memcmp(out, want, n) == 0;

    for (size_t i = 0; i < nchunks; i++) {
        cudaFree(chunks[i]);
    }
    memset(hist, 0xa5, sizeof hist);
    st = imghist_histogram(ctx, &iv, NULL, &hc);
    printf("memory back: histogram: %s: note '%s' %s\n", imghist_strerror(st),
           imghist_last_note(ctx), imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && imghist_last_note(ctx)[0] == '\0' &&
          memcmp(hist, want_hist, sizeof hist) == 0;

    imghist_destroy(ctx);
    imghist_destroy(ref);
    free(img);
    free(out);
    free(want);
    printf("%s\n", ok ? "fallback handled" : "FALLBACK NOT HANDLED");
    return ok ? 0 : 1;
}

static void test_gpu_oom_fallback(void **state)
{
    (void)state;
    if (quick) {
        skip(); /* the sanitizers need GPU memory of their own */
    }
    assert_int_equal(run_child("--oom-child"), 0);
}

/*
 * The child of test_gpu_fault. A device view at an address nothing is mapped
 * at makes the histogram kernel fault; from then on every call on the context
 * must return IMGHIST_E_FAULTED with a one-line message that says the GPU
 * faulted and names the CUDA error (cudaErrorIllegalAddress), write no
 * result, and not crash; the getters still answer. Prints what it saw; exit 0
 * when all of that held.
 */
static int expect_faulted(imghist_ctx *ctx, imghist_status st, const char *what)
{
    const char *msg = imghist_last_error(ctx);
    printf("%s: %s: %s\n", what, imghist_strerror(st), msg);
    return st == IMGHIST_E_FAULTED && msg[0] != '\0' && strchr(msg, '\n') == NULL &&
           contains_ci(msg, "fault") && strstr(msg, "cudaErrorIllegalAddress") != NULL;
}

static int fault_child(void)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK) {
        printf("create: %s\n", imghist_last_error(ctx));
        return 2;
    }
    enum { W = 1000, H = 700 };
    static uint8_t host[W * H], out[W * H];
    for (size_t i = 0; i < sizeof host; i++) {
        host[i] = (uint8_t)(i * 7 + i / W);
    }
    uint8_t *d_img = NULL, *d_out = NULL;
    uint64_t *d_hist = NULL;
    if (cudaMalloc((void **)&d_img, sizeof host) != cudaSuccess ||
        cudaMalloc((void **)&d_out, sizeof host) != cudaSuccess ||
        cudaMalloc((void **)&d_hist, BINS * sizeof(uint64_t)) != cudaSuccess ||
        cudaMemcpy(d_img, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        printf("set-up failed\n");
        return 2;
    }
    const imghist_view bad = u8_view((void *)(uintptr_t)4096, IMGHIST_MEM_DEVICE, 4096, 4096, 4096);
    const imghist_counts d_counts = counts_at(d_hist, BINS, IMGHIST_MEM_DEVICE);
    imghist_status st = imghist_histogram(ctx, &bad, NULL, &d_counts);
    printf("unmapped image: %s\n", imghist_strerror(st));
    const cudaError_t e = cudaDeviceSynchronize();
    printf("synchronize: %s\n", cudaGetErrorName(e));
    int ok = st == IMGHIST_OK && e != cudaSuccess;

    const imghist_view good = u8_view(d_img, IMGHIST_MEM_DEVICE, W, H, W);
    const imghist_view good_out = u8_view(d_out, IMGHIST_MEM_DEVICE, W, H, W);
    const imghist_view hv = u8_view(host, IMGHIST_MEM_HOST, W, H, W);
    const imghist_view hv_out = u8_view(out, IMGHIST_MEM_HOST, W, H, W);
    uint64_t hist[BINS];
    memset(hist, 0xa5, sizeof hist);
    const uint64_t poison = hist[0];
    const imghist_counts hc = counts_at(hist, BINS, IMGHIST_MEM_HOST);
    ok &= expect_faulted(ctx, imghist_histogram(ctx, &good, NULL, &hc), "device histogram");
    ok &= expect_faulted(ctx, imghist_equalize(ctx, &good, &good_out, IMGHIST_EQ_OPENCV, &hc),
                         "device equalize");
    ok &= expect_faulted(ctx, imghist_histogram_list(ctx, &good, 1, NULL, &hc), "batch");
    ok &= expect_faulted(ctx, imghist_histogram(ctx, &hv, NULL, &hc), "host histogram");
    memset(out, 0x5a, sizeof out);
    ok &= expect_faulted(ctx, imghist_equalize(ctx, &hv, &hv_out, IMGHIST_EQ_OPENCV, &hc),
                         "host equalize");
    ok &= expect_faulted(ctx, imghist_set_stream(ctx, NULL), "set_stream");
    for (int b = 0; b < BINS; b++) {
        ok &= hist[b] == poison; /* no result was delivered */
    }
    for (size_t i = 0; i < sizeof out; i++) {
        ok &= out[i] == 0x5a;
    }
    imghist_stream s = (imghist_stream)(uintptr_t)1;
    st = imghist_get_stream(ctx, &s);
    printf("get_stream: %s\n", imghist_strerror(st));
    ok &= st == IMGHIST_OK && s != (imghist_stream)(uintptr_t)1;
    imghist_destroy(ctx);
    printf("%s\n", ok ? "fault handled" : "FAULT NOT HANDLED");
    return ok ? 0 : 1;
}

static void test_gpu_fault(void **state)
{
    (void)state;
    if (quick) {
        skip(); /* under compute-sanitizer the deliberate fault would be a finding */
    }
    assert_int_equal(run_child("--fault-child"), 0);
}

/* After every test: the GPU context back on its own stream with its default
 * parameters, whatever a failed test left, so that no test runs in the
 * conditions another one set. */
static int reset_gpu(void **state)
{
    (void)state;
    int bad = imghist_set_stream(gpu, own_stream) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 0) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_RUN, 0) != IMGHIST_OK;
    bad |= cudaDeviceSynchronize() != cudaSuccess;
    if (bad) {
        fprintf(stderr, "reset_gpu: %s\n", imghist_last_error(gpu));
    }
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fault-child") == 0) {
        return fault_child();
    }
    if (argc > 1 && strcmp(argv[1], "--oom-child") == 0) {
        return oom_child();
    }
    samples = argc > 1 ? argv[1] : "samples";
    quick = su_quick();
    const int open_rc = su_open_gpu_suite("GPU suite", &gpu, &cpu);
    if (open_rc != 0) {
        return open_rc;
    }
    if (imghist_get_stream(gpu, &own_stream) != IMGHIST_OK) {
        fprintf(stderr, "imghist_get_stream: %s\n", imghist_last_error(gpu));
        return 1;
    }
    char photo_path[4200];
    snprintf(photo_path, sizeof photo_path, "%s/astronaut.png", samples);
    if (imghist_load_file(cpu, photo_path, &photo) != IMGHIST_OK) {
        fprintf(stderr, "%s\n", imghist_last_error(cpu));
        return 1;
    }
    tu_seed(&rng, tu_fresh_seed("test_gpu"));
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

#define GPU_TEST(f) cmocka_unit_test_teardown(f, reset_gpu)
    const struct CMUnitTest tests[] = {
        GPU_TEST(test_hist_edge_shapes),
        GPU_TEST(test_hist_random_shapes),
        GPU_TEST(test_hist_patterns_large),
        GPU_TEST(test_equalize_random),
        GPU_TEST(test_batch),
        GPU_TEST(test_batch_queued),
        GPU_TEST(test_batch_tensor),
        GPU_TEST(test_batch_mixed_sizes),
        GPU_TEST(test_batch_beyond_workspace),
        GPU_TEST(test_host_api_photographs),
        GPU_TEST(test_host_api_in_bands),
        GPU_TEST(test_host_transfers),
        GPU_TEST(test_over_4g_pixels),
        GPU_TEST(test_device_api_errors),
        GPU_TEST(test_mixed_host_device),
        GPU_TEST(test_set_get_stream),
        GPU_TEST(test_accumulate),
        GPU_TEST(test_create_on_devices),
        GPU_TEST(test_short_counts),
        GPU_TEST(test_cpu_context_refuses_device),
        GPU_TEST(test_experimental_params),
        GPU_TEST(test_gpu_oom_fallback),
        GPU_TEST(test_clahe),
        GPU_TEST(test_match_on_device),
        GPU_TEST(test_gpu_fault),
    };
#undef GPU_TEST
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    imghist_image_free(photo);
    imghist_destroy(cpu);
    imghist_destroy(gpu);
    return rc;
}
