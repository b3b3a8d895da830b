/*
 * imghist_equalize_list on device views against the CPU backend's list, bit
 * for bit, for OpenCV's and PIL's rules: images that fit in a block's shared
 * memory and larger ones in one batch, 1x1 and constant images, odd widths,
 * pitched rows, unaligned pointers, destinations of another 16-byte phase, in
 * place, histograms to device and host counts, batches of 1 and of 1000+,
 * the same batch twice (the descriptor cache) and batches that alternate
 * without synchronising, batches laid out as tensors (no descriptors; the
 * block kernels and the tiny-image kernel), every image sent the two-pass
 * way; the PIL rule on
 * single device and host equalizations; host views on the CUDA backend;
 * 16-bit and masked batches (views and tensors, a mask an image or one for
 * all, an empty device mask) against the CPU. A part of test_equalize, cuda run
 * only.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "backend_suite.h"
#include "suite_util.h"
#include "test_util.h"
#include "views.h"

static imghist_ctx *gpu, *cpu;
static tu_rng rng;
static int quick;

/* A batch: host images (the CPU's input and output), their device copies,
 * one device allocation per image with slack for offsets. */
typedef struct batch {
    size_t n;
    imghist_view *hsrc, *hdst, *dsrc, *ddst;
    uint8_t **hbuf, **dbuf;   /* host: source then destination; device likewise */
    size_t *sbytes, *dbytes;  /* each allocation's source and destination parts */
} batch;

enum shape { MIXED, SMALL, LARGE, TINY };

static void fill(uint8_t *p, uint32_t w, int kind)
{
    for (uint32_t x = 0; x < w; x++) {
        switch (kind % 5) {
        case 0: p[x] = (uint8_t)(tu_next(&rng) >> 56); break;
        case 1: p[x] = 77; break;                                   /* constant */
        case 2: p[x] = (uint8_t)(tu_below(&rng, 8) * 32); break;    /* multiples of 32 */
        case 3: p[x] = (uint8_t)(60 + tu_below(&rng, 5)); break;     /* narrow */
        default: p[x] = (uint8_t)(x * 7 + tu_below(&rng, 3)); break;
        }
    }
}

static void size_for(enum shape s, size_t i, size_t n, uint32_t *w, uint32_t *h)
{
    switch (s) {
    case TINY: *w = 1 + tu_below(&rng, 3); *h = 1 + tu_below(&rng, 3); break;
    case SMALL: *w = 1 + tu_below(&rng, 230); *h = 1 + tu_below(&rng, 230); break;
    case LARGE: *w = 300 + tu_below(&rng, 900); *h = 200 + tu_below(&rng, 500); break;
    default:
        if (i % 9 == 4) {
            *w = 400 + tu_below(&rng, 1700); /* over any block's shared memory */
            *h = 100 + tu_below(&rng, 900);
        } else {
            *w = 1 + tu_below(&rng, 300);
            *h = 1 + tu_below(&rng, 200);
        }
    }
    if (i == 0) *w = *h = 1;
    if (i == n - 1 && n > 2) { *w = 4000; *h = quick ? 300 : 3000; } /* a 12 MP photograph */
}

static batch batch_make(size_t n, enum shape s)
{
    batch b;
    b.n = n;
    b.hsrc = calloc(n, sizeof(imghist_view));
    b.hdst = calloc(n, sizeof(imghist_view));
    b.dsrc = calloc(n, sizeof(imghist_view));
    b.ddst = calloc(n, sizeof(imghist_view));
    b.hbuf = calloc(n, sizeof(uint8_t *));
    b.dbuf = calloc(n, sizeof(uint8_t *));
    b.sbytes = calloc(n, sizeof(size_t));
    b.dbytes = calloc(n, sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        uint32_t w, h;
        size_for(s, i, n, &w, &h);
        const int in_place = i % 4 == 1;
        const size_t sp = w + (i % 3 == 0 ? 0 : tu_below(&rng, 48));
        const size_t dp = in_place ? sp : w + (i % 2 ? 0 : tu_below(&rng, 40));
        const unsigned soff = i % 5 == 0 ? 0 : tu_below(&rng, 16);
        /* Destinations mostly share the source's 16-byte phase (one store per
         * granule), some not (byte stores). */
        const unsigned doff = i % 7 == 3 ? tu_below(&rng, 16) : soff;
        b.sbytes[i] = soff + sp * h;
        b.dbytes[i] = in_place ? 0 : doff + dp * h;
        const size_t all = b.sbytes[i] + b.dbytes[i];
        b.hbuf[i] = malloc(all);
        memset(b.hbuf[i], 0xfd, all);
        for (uint32_t y = 0; y < h; y++) {
            fill(b.hbuf[i] + soff + (size_t)y * sp, w, (int)(i + y / 64));
        }
        CUDA_OK(cudaMalloc((void **)&b.dbuf[i], all));
        CUDA_OK(cudaMemcpy(b.dbuf[i], b.hbuf[i], all, cudaMemcpyHostToDevice));
        const imghist_view hs = {.data = b.hbuf[i] + soff, .dtype = IMGHIST_U8,
            .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = sp, .channels = 1};
        const imghist_view ds = {.data = b.dbuf[i] + soff, .dtype = IMGHIST_U8,
            .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h, .pitch = sp, .channels = 1};
        b.hsrc[i] = hs;
        b.dsrc[i] = ds;
        if (in_place) {
            b.hdst[i] = hs;
            b.ddst[i] = ds;
        } else {
            const imghist_view hd = {.data = b.hbuf[i] + b.sbytes[i] + doff, .dtype = IMGHIST_U8,
                .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = dp, .channels = 1};
            const imghist_view dd = {.data = b.dbuf[i] + b.sbytes[i] + doff, .dtype = IMGHIST_U8,
                .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h, .pitch = dp, .channels = 1};
            b.hdst[i] = hd;
            b.ddst[i] = dd;
        }
    }
    /* The uploads are on the legacy stream: done before any library call. */
    CUDA_OK(cudaDeviceSynchronize());
    return b;
}

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->hbuf[i]);
        CUDA_OK(cudaFree(b->dbuf[i]));
    }
    free(b->hsrc);
    free(b->hdst);
    free(b->dsrc);
    free(b->ddst);
    free(b->hbuf);
    free(b->dbuf);
    free(b->sbytes);
    free(b->dbytes);
}

static void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize(s));
}

/* Every byte of every allocation (sources, destinations, padding) the same
 * on the device as on the host after the two batches. */
static void expect_same(const batch *b, const char *what)
{
    for (size_t i = 0; i < b->n; i++) {
        const size_t all = b->sbytes[i] + b->dbytes[i];
        uint8_t *got = malloc(all);
        CUDA_OK(cudaMemcpy(got, b->dbuf[i], all, cudaMemcpyDeviceToHost));
        if (memcmp(got, b->hbuf[i], all) != 0) {
            size_t k = 0;
            while (got[k] == b->hbuf[i][k]) k++;
            fail_msg("%s: image %zu (%ux%u, pitch %zu -> %zu): byte %zu is %u, CPU %u", what, i,
                     b->hsrc[i].width, b->hsrc[i].height, b->hsrc[i].pitch, b->hdst[i].pitch, k,
                     got[k], b->hbuf[i][k]);
        }
        free(got);
    }
}

/* CPU batch on the host copy, GPU batch on the device copy; histograms to
 * device (odd rounds) or host counts. Both sides are equalized once more
 * when rounds > 1 (in-place images change, so each round is a new input). */
static void check_batch(size_t n, enum shape s, int method, int rounds)
{
    batch b = batch_make(n, s);
    const size_t len = n * 256;
    uint64_t *want = malloc(len * sizeof(uint64_t)), *got = malloc(len * sizeof(uint64_t));
    uint64_t *d_hist;
    CUDA_OK(cudaMalloc((void **)&d_hist, len * sizeof(uint64_t)));
    for (int r = 0; r < rounds; r++) {
        const imghist_counts wc = {want, len, IMGHIST_MEM_HOST};
        IH_OK(cpu, imghist_equalize_list(cpu, b.hsrc, b.hdst, n, (imghist_method)method, &wc));
        memset(got, 0xa5, len * sizeof(uint64_t));
        if (r % 2) {
            CUDA_OK(cudaMemset(d_hist, 0xa5, len * sizeof(uint64_t)));
            CUDA_OK(cudaDeviceSynchronize());
            const imghist_counts dc = {d_hist, len, IMGHIST_MEM_DEVICE};
            IH_OK(gpu, imghist_equalize_list(gpu, b.dsrc, b.ddst, n, (imghist_method)method, &dc));
            gpu_sync();
            CUDA_OK(cudaMemcpy(got, d_hist, len * sizeof(uint64_t), cudaMemcpyDeviceToHost));
        } else {
            const imghist_counts hc = {got, len, IMGHIST_MEM_HOST};
            IH_OK(gpu, imghist_equalize_list(gpu, b.dsrc, b.ddst, n, (imghist_method)method, &hc));
            gpu_sync();
        }
        for (size_t i = 0; i < n; i++) {
            if (memcmp(got + i * 256, want + i * 256, 256 * sizeof(uint64_t)) != 0) {
                fail_msg("round %d: histogram of image %zu (%ux%u) differs", r, i,
                         b.hsrc[i].width, b.hsrc[i].height);
            }
        }
        char what[64];
        snprintf(what, sizeof what, "%zu images, method %d, round %d", n, method, r);
        expect_same(&b, what);
    }
    CUDA_OK(cudaFree(d_hist));
    free(want);
    free(got);
    batch_free(&b);
}

static void test_mixed(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        check_batch(quick ? 20 : 60, MIXED, method, 3);
    }
}

static void test_all_small_and_all_large(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        check_batch(quick ? 30 : 200, SMALL, method, 2); /* one launch */
        check_batch(quick ? 4 : 12, LARGE, method, 2);   /* two */
    }
}

static void test_sizes_1_and_1000(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        check_batch(1, SMALL, method, 2);
        check_batch(1, LARGE, method, 2);
        check_batch(quick ? 300 : 1500, TINY, method, 2);
        check_batch(quick ? 200 : 1100, MIXED, method, 1);
    }
}

/* Every image the two-pass way (IMGHIST_P_EXP_EQ_BATCH_SMALL = 1): 1x1 and
 * tiny images through the count kernel's tickets. */
static void test_all_two_pass(void **state)
{
    (void)state;
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_EQ_BATCH_SMALL, 1));
    for (int method = 0; method < 2; method++) {
        check_batch(quick ? 300 : 1500, TINY, method, 2);
        check_batch(quick ? 40 : 120, MIXED, method, 2);
    }
}

/* No histograms; two batches in turn, nine times without synchronising in
 * between (the host buffer the descriptors are built in is reused while
 * earlier uploads are queued). */
static void test_alternating_no_hists(void **state)
{
    (void)state;
    batch a = batch_make(37, MIXED), c = batch_make(300, SMALL);
    for (int r = 0; r < 9; r++) {
        batch *b = r % 2 ? &c : &a;
        IH_OK(cpu, imghist_equalize_list(cpu, b->hsrc, b->hdst, b->n, IMGHIST_EQ_PIL, NULL));
        IH_OK(gpu, imghist_equalize_list(gpu, b->dsrc, b->ddst, b->n, IMGHIST_EQ_PIL, NULL));
    }
    gpu_sync();
    expect_same(&a, "alternating a");
    expect_same(&c, "alternating c");
    batch_free(&a);
    batch_free(&c);
}

/* A batch as a tensor holds it: n images of w x h in one allocation, at a
 * fixed stride (where it is a multiple of 16 bytes, the library sends no
 * descriptors), in order or reversed (a negative stride), into a second
 * tensor (its stride rounded up to 16 bytes) or in place. The CPU batch on
 * the host copy against the GPU batch on the device copy, as a list and as
 * a view of n images: every byte of the allocation and the histograms. */
typedef struct tensor_case {
    uint32_t n, w, h;
    uint32_t spad, dpad; /* row padding of source and destination */
    uint32_t soff, doff; /* first image's offset within 16 bytes */
    uint32_t gap;        /* bytes between source images beyond their rows */
    int in_place, reverse;
} tensor_case;

static void check_tensor(const tensor_case *t, int method)
{
    const size_t sp = t->w + t->spad, dp = t->in_place ? sp : t->w + t->dpad;
    const size_t sstride = sp * t->h + t->gap;
    const size_t dstride = t->in_place ? sstride : (dp * t->h + 15) & ~(size_t)15;
    const size_t sbytes = 16 + t->n * sstride, all = sbytes + (t->in_place ? 0 : 16 + t->n * dstride);
    uint8_t *h = malloc(all), *d = NULL, *got = malloc(all);
    assert_true(h && got);
    memset(h, 0xfd, all);
    for (size_t i = 0; i < t->n; i++) {
        for (uint32_t y = 0; y < t->h; y++) {
            fill(h + t->soff + i * sstride + y * sp, t->w, (int)(i + y / 32));
        }
    }
    uint8_t *orig = malloc(all);
    assert_non_null(orig);
    memcpy(orig, h, all);
    CUDA_OK(cudaMalloc((void **)&d, all));
    CUDA_OK(cudaMemcpy(d, h, all, cudaMemcpyHostToDevice));
    imghist_view *v = calloc(4 * t->n, sizeof *v); /* host src, host dst, device src, device dst */
    assert_non_null(v);
    for (size_t i = 0; i < t->n; i++) {
        const size_t k = t->reverse ? t->n - 1 - i : i;
        const size_t so = t->soff + k * sstride;
        const size_t to = t->in_place ? so : sbytes + t->doff + k * dstride;
        const imghist_view hs = {.data = h + so, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = t->w, .height = t->h, .pitch = sp, .channels = 1};
        const imghist_view hd = {.data = h + to, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = t->w, .height = t->h, .pitch = dp, .channels = 1};
        v[i] = hs;
        v[t->n + i] = hd;
        v[2 * t->n + i] = hs;
        v[2 * t->n + i].data = d + so;
        v[2 * t->n + i].mem = IMGHIST_MEM_DEVICE;
        v[3 * t->n + i] = hd;
        v[3 * t->n + i].data = d + to;
        v[3 * t->n + i].mem = IMGHIST_MEM_DEVICE;
    }
    const imghist_method m = (imghist_method)method;
    const size_t len = (size_t)t->n * 256;
    uint64_t *want = malloc(len * 8), *gh = malloc(len * 8);
    assert_true(want && gh);
    memset(gh, 0xa5, len * 8);
    const imghist_counts wc = {want, len, IMGHIST_MEM_HOST}, gc = {gh, len, IMGHIST_MEM_HOST};
    IH_OK(cpu, imghist_equalize_list(cpu, v, v + t->n, t->n, m, &wc));
    IH_OK(gpu, imghist_equalize_list(gpu, v + 2 * t->n, v + 3 * t->n, t->n, m, &gc));
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, d, all, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < t->n; i++) {
        if (memcmp(gh + i * 256, want + i * 256, 256 * 8) != 0) {
            fail_msg("tensor %ux%ux%u: histogram of image %zu differs", t->n, t->w, t->h, i);
        }
    }
    if (memcmp(got, h, all) != 0) {
        size_t k = 0;
        while (got[k] == h[k]) k++;
        fail_msg("tensor %ux%ux%u (method %d): byte %zu of %zu is %u, CPU %u", t->n, t->w,
                 t->h, method, k, all, got[k], h[k]);
    }
    /* The same batch as views of t->n images, from the same start. */
    CUDA_OK(cudaMemcpy(d, orig, all, cudaMemcpyHostToDevice));
    memset(gh, 0xa5, len * 8);
    const ptrdiff_t ss = t->reverse ? -(ptrdiff_t)sstride : (ptrdiff_t)sstride;
    const ptrdiff_t ds = t->reverse ? -(ptrdiff_t)dstride : (ptrdiff_t)dstride;
    const imghist_view st = vw_tensor(v[2 * t->n], t->n, ss);
    const imghist_view dt = vw_tensor(v[3 * t->n], t->n, ds);
    IH_OK(gpu, imghist_equalize(gpu, &st, &dt, m, &gc));
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, d, all, cudaMemcpyDeviceToHost));
    if (memcmp(got, h, all) != 0 || memcmp(gh, want, len * 8) != 0) {
        fail_msg("tensor %ux%ux%u (method %d): the view of its images differs", t->n, t->w,
                 t->h, method);
    }
    free(orig);
    CUDA_OK(cudaFree(d));
    free(v);
    free(h);
    free(got);
    free(want);
    free(gh);
}

static void test_tensor_batches(void **state)
{
    (void)state;
    const tensor_case cases[] = {
        {256, 64, 48, 0, 0, 0, 0, 0, 0, 0},    /* packed, small: one launch */
        {6, 640, 480, 0, 0, 0, 0, 0, 0, 0},    /* packed, large: two launches */
        {50, 333, 17, 0, 0, 0, 0, 0, 0, 0},    /* packed odd rows: stride 5661, descriptors */
        {50, 333, 17, 0, 0, 0, 0, 3, 0, 0},    /* stride 5664: one flat row each */
        {30, 200, 150, 7, 3, 5, 5, 6, 0, 1},   /* pitched, unaligned, reversed */
        {12, 1000, 700, 24, 0, 9, 0, 0, 1, 0}, /* in place, large */
        {40, 97, 61, 3, 11, 2, 13, 12, 0, 0},  /* destinations of another 16-byte phase */
        {3, 1, 1, 0, 0, 0, 0, 15, 0, 1},       /* 1x1 images 16 bytes apart */
    };
    /* The library's choice of kernel, the block kernels only, the tiny-image
     * kernel for every size (IMGHIST_P_EXP_BATCH_TINY). */
    static const int64_t tiny[] = {0, -1, INT32_MAX};
    for (size_t k = 0; k < 3; k++) {
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, tiny[k]));
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int method = 0; method < 2; method++) {
                check_tensor(&cases[c], method);
            }
        }
    }
    /* Every image the two-pass way through the block kernels' tensor path. */
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, -1));
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_EQ_BATCH_SMALL, 1));
    check_tensor(&cases[0], 0);
    check_tensor(&cases[4], 1);
}

/* PIL's rule through the single calls: device and host views, masked. */
static void test_single_calls_pil(void **state)
{
    (void)state;
    batch b = batch_make(quick ? 9 : 25, MIXED);
    uint8_t *hmask = NULL, *dmask = NULL;
    for (size_t i = 0; i < b.n; i++) {
        const imghist_view *hs = &b.hsrc[i];
        const size_t px = (size_t)hs->width * hs->height;
        hmask = realloc(hmask, px);
        for (size_t k = 0; k < px; k++) {
            hmask[k] = (uint8_t)(k % 5 != 0);
        }
        CUDA_OK(cudaMalloc((void **)&dmask, px));
        CUDA_OK(cudaMemcpy(dmask, hmask, px, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        const imghist_view hm = {.data = hmask, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = hs->width, .height = hs->height, .pitch = hs->width, .channels = 1};
        imghist_view dm = hm;
        dm.data = dmask;
        dm.mem = IMGHIST_MEM_DEVICE;
        const int masked = i % 3 == 2 && hs->data != b.hdst[i].data;
        const imghist_view hsm = vw_masked(*hs, masked ? &hm : NULL);
        const imghist_view dsm = vw_masked(b.dsrc[i], masked ? &dm : NULL);
        IH_OK(cpu, imghist_equalize(cpu, &hsm, &b.hdst[i], IMGHIST_EQ_PIL, NULL));
        IH_OK(gpu, imghist_equalize(gpu, &dsm, &b.ddst[i], IMGHIST_EQ_PIL, NULL));
        gpu_sync();
        CUDA_OK(cudaFree(dmask));
    }
    expect_same(&b, "single device calls, PIL");
    /* Host views on the CUDA backend: the batch goes image by image. */
    batch h = batch_make(quick ? 5 : 12, MIXED);
    uint64_t *want = malloc(h.n * 256 * 8), *got = malloc(h.n * 256 * 8);
    uint8_t **copy = malloc(h.n * sizeof *copy);
    imghist_view *csrc = malloc(h.n * sizeof *csrc), *cdst = malloc(h.n * sizeof *cdst);
    for (size_t i = 0; i < h.n; i++) { /* a second host copy for the GPU context */
        const size_t all = h.sbytes[i] + h.dbytes[i];
        copy[i] = malloc(all);
        memcpy(copy[i], h.hbuf[i], all);
        csrc[i] = h.hsrc[i];
        cdst[i] = h.hdst[i];
        csrc[i].data = copy[i] + ((uint8_t *)h.hsrc[i].data - h.hbuf[i]);
        cdst[i].data = copy[i] + ((uint8_t *)h.hdst[i].data - h.hbuf[i]);
    }
    const imghist_counts wc = {want, h.n * 256, IMGHIST_MEM_HOST};
    const imghist_counts gc = {got, h.n * 256, IMGHIST_MEM_HOST};
    IH_OK(cpu, imghist_equalize_list(cpu, h.hsrc, h.hdst, h.n, IMGHIST_EQ_PIL, &wc));
    IH_OK(gpu, imghist_equalize_list(gpu, csrc, cdst, h.n, IMGHIST_EQ_PIL, &gc));
    assert_memory_equal(got, want, h.n * 256 * 8);
    for (size_t i = 0; i < h.n; i++) {
        assert_memory_equal(copy[i], h.hbuf[i], h.sbytes[i] + h.dbytes[i]);
        free(copy[i]);
    }
    free(copy);
    free(csrc);
    free(cdst);
    free(want);
    free(got);
    free(hmask);
    batch_free(&h);
    batch_free(&b);
}

/* ---- 16-bit and masked batches ---- */

/* How check_wide_batch_of lays its images out. */
enum wide_layout {
    W_VIEWS,     /* sizes, pitches and 2-byte offsets of their own */
    W_TENSOR,    /* one shape in a packed tensor */
    W_ONE_SHAPE, /* one shape anywhere: gaps of 16-byte multiples, pairs of
                  * images swapped, masks at 0-3 bytes of their own */
};

/* check_wide_batch_of's pixels: 0 its patterns; 1 every sample 40000; 2
 * the same but the first sample 7; 3 as 2 with the first sample's mask byte
 * 0 (the one-block 16-bit kernel keeps the first sample out of its 16-bit
 * counts: a 256 x 256 image of one value fills 65536). */
static int one_value;

/* The largest width and height of check_wide_batch_of's W_VIEWS images. */
static uint32_t views_w = 700, views_h = 300;

/* Whether a block of the GPU may have 129 KiB of shared memory (sm_80,
 * sm_90): then the one-block 16-bit kernel is there. */
static int smem_128k;

/* The GPU context's last batch route (imghist_exp_last_route): 1 a few
 * launches for the whole batch, 2 a launch an image, 3 one launch of a block
 * an image; each call on several images sets it anew. */
static int64_t route(void)
{
    return (int64_t)imghist_exp_last_route(gpu);
}

/*
 * The route the views' call of check_wide_batch_of must have taken, where
 * the library promises one: views of one shape anywhere take a few
 * launches for the whole batch, the 16-bit masked ones of at most 2^20
 * samples too (the global-atomics kernel with their pointers; above
 * that only where the mask is as packed as the image, which these are not,
 * so either); views of other shapes go an image at a time.
 */
static void expect_route(enum wide_layout layout, size_t z, int masked, uint64_t samples, size_t n)
{
    const int64_t r = route();
    if (layout == W_ONE_SHAPE && !(z == 2 && masked && samples > (UINT64_C(1) << 20))) {
        if (r != 1) {
            fail_msg("views of one shape (%s%s, %llu samples, %zu images) went route %lld, not "
                     "one batch", z == 2 ? "16-bit" : "8-bit", masked ? ", masked" : "",
                     (unsigned long long)samples, n, (long long)r);
        }
    } else if (layout == W_VIEWS && n > 1 && r != 2) {
        fail_msg("views of other shapes went route %lld, not image by image", (long long)r);
    } else if (r < 1 || r > 3) {
        fail_msg("no route recorded (%lld)", (long long)r);
    }
}

/*
 * n images of type t (8- or 16-bit, laid out as `layout` says) with masks
 * or not: the CPU's batch on host views against the GPU's on device copies
 * (pixels and device histograms), through the views' call and, for a
 * tensor, the strided one (a mask an image, or one for all); then the GPU
 * context on the host views. Image `empty` (or none, -1) gets an all-zero
 * mask on the device only: its destination must be a copy of its source.
 */
static void check_wide_batch_of(imghist_dtype t, int masked, enum wide_layout layout, size_t n,
                                int empty, uint32_t tw, uint32_t th)
{
    const int tensor = layout == W_TENSOR, one_shape = layout == W_ONE_SHAPE;
    const char *const layout_name[] = {"views", "tensor", "one shape"};
    const size_t z = t == IMGHIST_U8 ? 1 : 2, L = t == IMGHIST_U8 ? 256 : 65536;
    imghist_view *hs = calloc(n, sizeof *hs), *hd = calloc(n, sizeof *hd);
    imghist_view *hm = calloc(n, sizeof *hm), *ds = calloc(n, sizeof *ds);
    imghist_view *dd = calloc(n, sizeof *dd), *dm = calloc(n, sizeof *dm);
    size_t *img_bytes = calloc(n, sizeof *img_bytes), *offs = calloc(n, sizeof *offs);
    imghist_view *ls = calloc(n, sizeof *ls); /* a list's sources, with their masks */
    assert_true(hs && hd && hm && ds && dd && dm && img_bytes && offs && ls);
    /* all images in one host and one device allocation: source i, then its
     * destination, then its mask */
    size_t total = 0;
    uint32_t *ws = calloc(n, 4), *hts = calloc(n, 4);
    size_t *pitch = calloc(n, sizeof *pitch), *mask_gap = calloc(n, sizeof *mask_gap);
    assert_true(ws && hts && pitch && mask_gap);
    /* one shape: one pitch and one phase for every source; large 16-bit
     * images with pitches of 16-byte multiples (destinations at their
     * sources' phase: the lookups' whole granules) */
    size_t pitch1 = (tw + tu_below(&rng, 9)) * z;
    pitch1 = (uint64_t)tw * th >= (1u << 16) ? (pitch1 + 15) / 16 * 16 : pitch1;
    const size_t phase = z * tu_below(&rng, 8);
    for (size_t i = 0; i < n; i++) {
        ws[i] = tensor || one_shape ? tw : 1 + tu_below(&rng, views_w);
        hts[i] = tensor || one_shape ? th : 1 + tu_below(&rng, views_h);
        pitch[i] = tensor ? tw * z : one_shape ? pitch1 : (ws[i] + tu_below(&rng, 9)) * z;
        offs[i] = total + (tensor ? 0 : one_shape ? phase + 16 * tu_below(&rng, 3)
                                                  : z * tu_below(&rng, 8));
        img_bytes[i] = pitch[i] * hts[i];
        mask_gap[i] = one_shape ? tu_below(&rng, 4) : 0;
        /* room for the largest gap: the pairs swapped below trade slots */
        total = offs[i] + 2 * img_bytes[i] + (one_shape ? 3 : 0) + (size_t)ws[i] * hts[i];
        total = tensor ? total : (total + 15) / 16 * 16;
    }
    if (one_shape) {
        /* pairs swapped: never a progression */
        for (size_t i = 0; i + 1 < n; i += 2) {
            const size_t o = offs[i];
            offs[i] = offs[i + 1];
            offs[i + 1] = o;
        }
    }
    uint8_t *host = malloc(total), *back = malloc(total), *dev = NULL;
    assert_true(host && back);
    memset(host, 0xfd, total);
    for (size_t i = 0; i < n; i++) {
        uint8_t *src = host + offs[i], *msk = src + 2 * img_bytes[i] + mask_gap[i];
        for (uint32_t y = 0; y < hts[i]; y++) {
            for (uint32_t x = 0; x < ws[i]; x++) {
                const uint32_t k = one_value ? 1 : (uint32_t)(i + y / 16) % 4;
                uint32_t v = k == 0   ? (uint32_t)(tu_next(&rng) >> 48)
                             : k == 1 ? 40000u
                             : k == 2 ? tu_below(&rng, 4096) << 4
                                      : tu_below(&rng, 8) * 8192u;
                v = one_value >= 2 && x == 0 && y == 0 ? 7 : v;
                if (z == 2) {
                    ((uint16_t *)(src + y * pitch[i]))[x] = (uint16_t)v;
                } else {
                    src[y * pitch[i] + x] = (uint8_t)(v >> 8);
                }
                msk[(size_t)y * ws[i] + x] = (uint8_t)(tu_below(&rng, 3) == 0 ? 0 : 1 + (x & 127));
            }
        }
        msk[0] = one_value == 3 ? 0 : 1; /* never empty on the host */
        const imghist_view v = {.data = src, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = ws[i],
            .height = hts[i], .pitch = pitch[i], .channels = 1};
        hs[i] = v;
        hd[i] = v;
        hd[i].data = src + img_bytes[i];
        const imghist_view m = {.data = msk, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = ws[i], .height = hts[i], .pitch = ws[i], .channels = 1};
        hm[i] = m;
    }
    CUDA_OK(cudaMalloc((void **)&dev, total));
    CUDA_OK(cudaMemcpy(dev, host, total, cudaMemcpyHostToDevice));
    if (empty >= 0) {
        CUDA_OK(cudaMemset(dev + ((uint8_t *)hm[empty].data - host), 0,
                           (size_t)ws[empty] * hts[empty]));
    }
    for (size_t i = 0; i < n; i++) {
        ds[i] = hs[i];
        dd[i] = hd[i];
        dm[i] = hm[i];
        ds[i].data = dev + ((uint8_t *)hs[i].data - host);
        dd[i].data = dev + ((uint8_t *)hd[i].data - host);
        dm[i].data = dev + ((uint8_t *)hm[i].data - host);
        ds[i].mem = dd[i].mem = dm[i].mem = IMGHIST_MEM_DEVICE;
    }
    uint64_t *want = malloc(n * L * 8), *got = malloc(n * L * 8), *d_hist = NULL;
    assert_true(want && got);
    CUDA_OK(cudaMalloc((void **)&d_hist, n * L * 8));
    CUDA_OK(cudaMemset(d_hist, 0xa5, n * L * 8));
    const imghist_counts wc = {want, n * L, IMGHIST_MEM_HOST};
    const imghist_counts dc = {d_hist, n * L, IMGHIST_MEM_DEVICE};
    const imghist_counts gc = {got, n * L, IMGHIST_MEM_HOST};
    /* the reference: the CPU on the host views (image `empty` with its
     * host mask, then made a copy below) */
    vw_list_masked(ls, hs, masked ? hm : NULL, n);
    IH_OK(cpu, imghist_equalize_list(cpu, ls, hd, n, IMGHIST_EQ_OPENCV, &wc));
    const ptrdiff_t step = tensor ? (ptrdiff_t)(offs[1 % n] - offs[0]) : 0;
    /* views of one shape, odd counts: the histograms into host memory */
    const int host_counts = one_shape && n % 2 == 1;
    /* form 0: the list with histograms; 2: the list without histograms
     * (16-bit images of at most 2^16 samples: a block an image); 1: a view
     * of n images (a tensor; last: it may give every image mask 0, on the
     * host too) */
    static const int forms[] = {0, 2, 1};
    for (int fi = 0; fi < 3; fi++) {
        const int form = forms[fi];
        if (form == 1 && !tensor) {
            continue;
        }
        CUDA_OK(cudaMemset(dd[0].data, 0x5c, 1)); /* a stale first byte would show */
        if (form == 2) {
            vw_list_masked(ls, ds, masked ? dm : NULL, n);
            IH_OK(gpu, imghist_equalize_list(gpu, ls, dd, n, IMGHIST_EQ_OPENCV, NULL));
            /* 16-bit images of up to 2^15 samples, or 24 and more of up to
             * 2^16, a block an image where a block holds 129 KiB (views of
             * any shapes too) */
            uint64_t most = 0;
            for (size_t i = 0; i < n; i++) {
                const uint64_t smp = (uint64_t)ws[i] * hts[i];
                most = smp > most ? smp : most;
            }
            const int blocks = z == 2 && smem_128k && most <= (UINT64_C(1) << 16) &&
                               (most <= (UINT64_C(1) << 15) || n >= 24);
            if (blocks && route() != 3) {
                fail_msg("16-bit %s batch of %zu images of up to %llu samples without "
                         "histograms went route %lld, not a block an image",
                         layout_name[layout], n, (unsigned long long)most, (long long)route());
            } else if (!blocks) {
                expect_route(layout, z, masked, most, n);
            }
        } else if (form == 1) {
            /* 0: image 0's mask for all, a mask view of count 1 (not where
             * image `empty` keeps its empty mask) */
            const ptrdiff_t ms = (ptrdiff_t)(empty >= 0 ? 1 : tu_below(&rng, 2)) * step;
            imghist_view mt;
            const imghist_view st =
                masked ? vw_tensor_masked(ds[0], n, step, dm[0], ms == 0 ? 1 : n, ms, &mt)
                       : vw_tensor(ds[0], n, step);
            const imghist_view dt = vw_tensor(dd[0], n, step);
            IH_OK(gpu, imghist_equalize(gpu, &st, &dt, IMGHIST_EQ_OPENCV, &dc));
            if (masked && ms == 0 && n > 1) {
                /* image 0's mask for every image: the CPU's answer again */
                for (size_t i = 0; i < n; i++) hm[i] = hm[0];
                vw_list_masked(ls, hs, hm, n);
                IH_OK(cpu, imghist_equalize_list(cpu, ls, hd, n, IMGHIST_EQ_OPENCV, &wc));
            }
        } else {
            vw_list_masked(ls, ds, masked ? dm : NULL, n);
            IH_OK(gpu, imghist_equalize_list(gpu, ls, dd, n, IMGHIST_EQ_OPENCV,
                                             host_counts ? &gc : &dc));
            expect_route(layout, z, masked, (uint64_t)tw * th, n);
        }
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(back, dev, total, cudaMemcpyDeviceToHost));
        if (!host_counts && form != 2) {
            CUDA_OK(cudaMemcpy(got, d_hist, n * L * 8, cudaMemcpyDeviceToHost));
        }
        for (size_t i = 0; i < n; i++) {
            const uint8_t *g = back + ((uint8_t *)hd[i].data - host);
            const int copy = masked && (int)i == empty;
            const uint8_t *w = (const uint8_t *)(copy ? hs[i].data : hd[i].data);
            for (uint32_t y = 0; y < hts[i]; y++) {
                if (memcmp(g + y * pitch[i], w + y * pitch[i], ws[i] * z) != 0) {
                    fail_msg("%s %s batch (%s, form %d): image %zu (%ux%u%s) row %u differs from "
                             "the CPU", z == 2 ? "16-bit" : "8-bit", masked ? "masked" : "plain",
                             layout_name[layout], form, i, ws[i], hts[i],
                             (int)i == empty ? ", empty mask" : "", y);
                }
            }
            if (!(masked && (int)i == empty)) {
                assert_memory_equal(got + i * L, want + i * L, L * 8);
            }
        }
    }
    /* the GPU context on the host views (staged image by image) */
    if (empty < 0) {
        memcpy(back, host, total);
        for (size_t i = 0; i < n; i++) {
            hs[i].data = back + ((uint8_t *)hs[i].data - host);
            hd[i].data = back + ((uint8_t *)hd[i].data - host);
            hm[i].data = back + ((uint8_t *)hm[i].data - host);
        }
        vw_list_masked(ls, hs, masked ? hm : NULL, n);
        IH_OK(gpu, imghist_equalize_list(gpu, ls, hd, n, IMGHIST_EQ_OPENCV, &gc));
        assert_int_equal(route(), 2); /* host views: a call an image */
        assert_memory_equal(back, host, total);
        assert_memory_equal(got, want, n * L * 8);
    }
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFree(d_hist));
    free(host);
    free(back);
    free(want);
    free(got);
    free(hs); free(hd); free(hm); free(ds); free(dd); free(dm); free(ls);
    free(img_bytes); free(offs); free(ws); free(hts); free(pitch); free(mask_gap);
}

static void check_wide_batch(imghist_dtype t, int masked, enum wide_layout layout, size_t n,
                             int empty)
{
    check_wide_batch_of(t, masked, layout, n, empty, 1 + tu_below(&rng, 500),
                        1 + tu_below(&rng, 200));
}

static void test_u16_and_masked_batches(void **state)
{
    (void)state;
    for (int lay = W_VIEWS; lay <= W_ONE_SHAPE; lay++) {
        check_wide_batch(IMGHIST_U16, 0, lay, 5, -1);
        check_wide_batch(IMGHIST_U16, 1, lay, 6, -1);
        check_wide_batch(IMGHIST_U8, 1, lay, 7, -1);
    }
    check_wide_batch(IMGHIST_U16, 1, W_VIEWS, 4, 2); /* an empty device mask: a copy */
    check_wide_batch(IMGHIST_U8, 1, W_VIEWS, 3, 0);
    check_wide_batch(IMGHIST_U16, 1, W_ONE_SHAPE, 5, 3);
    check_wide_batch(IMGHIST_U8, 1, W_ONE_SHAPE, 4, 0);
    check_wide_batch(IMGHIST_U16, 0, W_VIEWS, 1, -1);
    /* a tensor of 16-bit images on both sides of the global-atomics limit
     * (2^20 samples), and of one row */
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 3, -1, 1024, 1024);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 2, -1, 1100, 1000);
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 40, -1, 3000, 1);
    /* above the limit, many images: the S16 batch kernels, a few blocks an
     * image (their masked form goes a launch an image); the lookups of
     * images whose sources and destinations keep one 16-byte phase take
     * whole granules with the LUT in shared memory (rows of 2048 bytes, and
     * of 2002: granules across rows), the others a sample at a time */
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, quick ? 6 : 24, -1, 1030, 1031);
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, quick ? 3 : 9, -1, 1031, 1030);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, quick ? 4 : 20, -1, 1024, 1040);
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, quick ? 3 : 7, -1, 1001, 1104);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 2, -1, 1001, 272);
    /* the granule lookups from 2^16 samples: 256 x 256 takes them,
     * 255 x 257 (65535 samples) the gather */
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, quick ? 5 : 70, -1, 256, 256);
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 5, -1, 255, 257);
    check_wide_batch_of(IMGHIST_U16, 0, W_ONE_SHAPE, 7, -1, 256, 256);
    /* the same for views of one shape anywhere (one launch each
     * for histograms, LUTs and lookups, with the images' pointers) */
    check_wide_batch_of(IMGHIST_U16, 0, W_ONE_SHAPE, quick ? 5 : 17, -1, 1030, 1031);
    check_wide_batch_of(IMGHIST_U16, 1, W_ONE_SHAPE, quick ? 3 : 9, -1, 1001, 1104);
    check_wide_batch_of(IMGHIST_U16, 0, W_ONE_SHAPE, 70, -1, 64, 48); /* two chunks */
    check_wide_batch_of(IMGHIST_U8, 1, W_ONE_SHAPE, 9, -1, 1500, 700);
    /* 48 16-bit LUTs and more: a block an image, with an empty
     * mask (the identity), and images of one value (every fourth of 16
     * rows: OpenCV's one-value rule); 47 the two LUT kernels */
    check_wide_batch_of(IMGHIST_U16, 1, W_ONE_SHAPE, 50, 5, 300, 200);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 48, -1, 64, 16);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 47, -1, 64, 16);
    check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 60, -1, 1, 1);
    /* images of one value, of up to 2^16 samples (the one-block kernel) */
    for (one_value = 1; one_value <= 3; one_value++) {
        check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 24, -1, 256, 256);
        check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 25, -1, 256, 256);
        check_wide_batch_of(IMGHIST_U16, 1, W_ONE_SHAPE, 24, -1, 256, 256);
        check_wide_batch_of(IMGHIST_U16, 0, W_ONE_SHAPE, 3, -1, 255, 257); /* the launches */
        check_wide_batch_of(IMGHIST_U16, 1, W_TENSOR, 5, 1, 128, 128); /* an empty mask */
    }
    one_value = 0;
    /* views of shapes of their own (a block an image, without
     * histograms): all of at most 64 x 64 (any count), of up to 300 x 218
     * (30 images; 5: only where all are of at most 2^15 samples), and
     * an empty mask */
    views_w = 64;
    views_h = 64;
    check_wide_batch_of(IMGHIST_U16, 0, W_VIEWS, 9, -1, 0, 0);
    check_wide_batch_of(IMGHIST_U16, 1, W_VIEWS, 7, 2, 0, 0);
    views_w = 300;
    views_h = 218;
    check_wide_batch_of(IMGHIST_U16, 1, W_VIEWS, 30, -1, 0, 0);
    check_wide_batch_of(IMGHIST_U16, 1, W_VIEWS, 31, 4, 0, 0);
    check_wide_batch_of(IMGHIST_U16, 0, W_VIEWS, 5, -1, 0, 0);
    views_w = 700;
    views_h = 300;
    /* either side of the one-block kernel's limits: 2^15 + 1 samples, 23
     * and 24 images of 2^16, 2^16 + 1 */
    check_wide_batch_of(IMGHIST_U16, 1, W_ONE_SHAPE, 4, -1, 32769, 1);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 23, -1, 1024, 64);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 24, -1, 64, 1024);
    check_wide_batch_of(IMGHIST_U16, 0, W_TENSOR, 30, -1, 65537, 1);
}

/* imghist_exp_last_route: none on a new context and on a CPU one; each call
 * on several images sets it anew (reset at its start: a refused call leaves
 * none), calls on one image leave it as it was. */
static void test_route_read_back(void **state)
{
    (void)state;
    imghist_ctx *fresh = NULL;
    IH_OK(fresh, imghist_create(IMGHIST_BACKEND_CUDA, -1, &fresh));
    assert_int_equal(imghist_exp_last_route(fresh), IMGHIST_ROUTE_NONE);
    imghist_destroy(fresh);
    batch b = batch_make(8, SMALL);
    /* 8-bit device images: a few launches for the list */
    IH_OK(gpu, imghist_equalize_list(gpu, b.dsrc, b.ddst, b.n, IMGHIST_EQ_OPENCV, NULL));
    assert_int_equal(imghist_exp_last_route(gpu), IMGHIST_ROUTE_BATCH);
    uint64_t h[256];
    const imghist_counts hc = {h, 256, IMGHIST_MEM_HOST};
    IH_OK(gpu, imghist_histogram(gpu, &b.dsrc[0], NULL, &hc));
    gpu_sync();
    assert_int_equal(imghist_exp_last_route(gpu), IMGHIST_ROUTE_BATCH);
    assert_int_equal(imghist_equalize_list(gpu, b.dsrc, b.ddst, 0, IMGHIST_EQ_OPENCV, NULL),
                     IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_exp_last_route(gpu), IMGHIST_ROUTE_NONE);
    /* host views on the CUDA context: a call an image */
    IH_OK(gpu, imghist_equalize_list(gpu, b.hsrc, b.hdst, b.n, IMGHIST_EQ_OPENCV, NULL));
    assert_int_equal(imghist_exp_last_route(gpu), IMGHIST_ROUTE_EACH);
    IH_OK(cpu, imghist_equalize_list(cpu, b.hsrc, b.hdst, b.n, IMGHIST_EQ_OPENCV, NULL));
    assert_int_equal(imghist_exp_last_route(cpu), IMGHIST_ROUTE_NONE);
    gpu_sync();
    batch_free(&b);
}

static int reset(void **state)
{
    (void)state;
    int bad = imghist_set_param(gpu, IMGHIST_P_EXP_EQ_BATCH_SMALL, 0) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, 0) != IMGHIST_OK;
    bad |= cudaDeviceSynchronize() != cudaSuccess;
    return bad ? -1 : 0;
}

/* The group's setup: the harness's CUDA context, a CPU context of its own with
 * eight threads, the part's seed, whether the one-block 16-bit kernel exists. */
static int setup(void **state)
{
    (void)state;
    gpu = bs_ctx;
    quick = su_quick();
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, &cpu) != IMGHIST_OK ||
        imghist_set_param(cpu, IMGHIST_P_CPU_THREADS, 8) != IMGHIST_OK) {
        fprintf(stderr, "CPU context: %s\n", imghist_last_error(cpu));
        return -1;
    }
    tu_seed(&rng, tu_fresh_seed("test_equalize_batch_cuda"));
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    smem_128k = prop.sharedMemPerBlockOptin >= 65536 * 2 + 1024;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    imghist_destroy(cpu);
    cpu = NULL;
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST_TEARDOWN(test_mixed, reset),
    BS_CUDA_TEST_TEARDOWN(test_all_small_and_all_large, reset),
    BS_CUDA_TEST_TEARDOWN(test_sizes_1_and_1000, reset),
    BS_CUDA_TEST_TEARDOWN(test_all_two_pass, reset),
    BS_CUDA_TEST_TEARDOWN(test_alternating_no_hists, reset),
    BS_CUDA_TEST_TEARDOWN(test_tensor_batches, reset),
    BS_CUDA_TEST_TEARDOWN(test_single_calls_pil, reset),
    BS_CUDA_TEST_TEARDOWN(test_u16_and_masked_batches, reset),
    BS_CUDA_TEST_TEARDOWN(test_route_read_back, reset),
};

const bs_part equalize_batch_cuda_part = BS_PART("equalize lists cuda", tests, setup, teardown);
