/*
 * The CUDA backend's wide histograms against the CPU backend, bit for bit,
 * on device and host views and counts (a part of test_histogram, cuda run
 * only): every type x binning x channel count x mask x flags, pitched and
 * unaligned views, tiny shapes, values on and one ulp around the edges,
 * constant images whose counters wrap the 16-bit shared counters, the layouts
 * split across launches, 16-bit batches, host images in bands, the stream's
 * order. IMGHIST_TEST_QUICK=1: a random eighth of the grid (compute-sanitizer).
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
#include "wide_suite.h"

static const char *spec_name[N_SPECS] = {"natural", "shift", "odd", "tiny", "1 bin", "2^20 bins"};

static void test_grid(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    const uint32_t chans[3] = {1, 3, 4};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (int ci = 0; ci < 3; ci++) {
                const imghist_dtype t = types[ti];
                imghist_histspec base = spec_for(t, k);
                const uint32_t bins = (uint32_t)imghist_bins(&base, t);
                assert_true(bins > 0);
                const uint32_t w = 37 + tu_below(&rng, 60), h = 3 + tu_below(&rng, 40);
                const size_t pad = tu_below(&rng, 3) * 16 + dsize(t) * tu_below(&rng, 4);
                img_t im = make_image(t, w, h, chans[ci], pad, 16 * tu_below(&rng, 3) + dsize(t),
                                      &base, bins, FILL_MIXED);
                img_t mr = make_image(IMGHIST_U8, w, h, 1, tu_below(&rng, 9), tu_below(&rng, 16),
                                      NULL, 0, FILL_MASK_RANDOM);
                img_t mz = make_image(IMGHIST_U8, w, h, 1, 0, 3, NULL, 0, FILL_MASK_ZERO);
                for (int mi = 0; mi < 3; mi++) {
                    for (int fl = 0; fl < 4; fl++) {
                        for (int wh = 0; wh < 4; wh++) {
                            /* every mode for no mask, random modes otherwise */
                            if (quick && tu_below(&rng, 8) != 0) continue;
                            if (mi > 0 && wh != (int)tu_below(&rng, 4) && wh > 1) continue;
                            imghist_histspec s = base;
                            s.flags = (fl & 1 ? IMGHIST_OUTLIERS : 0) |
                                      (fl & 2 ? IMGHIST_ACCUMULATE : 0);
                            if (bins > 0 && base.bins > 0 && tu_below(&rng, 3) == 0) {
                                s.flags |= IMGHIST_CLOSED;
                            }
                            char what[96];
                            snprintf(what, sizeof what, "grid: %s", spec_name[k]);
                            compare(&im, mi == 0 ? NULL : mi == 1 ? &mr : &mz, &s,
                                    (enum where)wh, what);
                            cases++;
                        }
                    }
                }
                free_image(&im);
                free_image(&mr);
                free_image(&mz);
            }
        }
    }
    printf("grid: %u comparisons\n", cases);
}

/* Packed, 16-byte aligned views without a mask (the lean kernel's flat
 * runs, one channel or 2-4 interleaved, and the row kernels for the other
 * kinds), large enough for whole chunks, with odd row lengths and a partial
 * last granule. */
static void test_flat(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (uint32_t ch = 1; ch <= 4; ch++) {
                if (ch > 1 && quick && tu_below(&rng, 3) != 0) continue;
                const imghist_dtype t = types[ti];
                imghist_histspec s = spec_for(t, k);
                const uint32_t bins = (uint32_t)imghist_bins(&s, t);
                const uint32_t w = (quick ? 301 : 1001) + 2 * tu_below(&rng, 40);
                const uint32_t h = k % 3 == 0 ? 1 : 17 + tu_below(&rng, quick ? 40 : 300);
                for (int f = 0; f < 2; f++) {
                    img_t im = make_image(t, w, h, ch, 0, 16 * tu_below(&rng, 2), &s, bins,
                                          f == 0 ? FILL_MIXED : FILL_CONSTANT);
                    for (int fl = 0; fl < 2; fl++) {
                        imghist_histspec c = s;
                        c.flags =
                            fl ? IMGHIST_OUTLIERS : (tu_below(&rng, 2) ? IMGHIST_ACCUMULATE : 0);
                        compare(&im, NULL, &c, DEV_DEV, ch > 1 ? "flat channels" : "flat");
                        cases++;
                    }
                    free_image(&im);
                }
            }
        }
    }
    printf("flat: %u comparisons\n", cases);
}

/* Odd base addresses (U16/F32 rows not on a sample boundary: the byte path),
 * odd widths and pitches, every 16-byte phase. */
static void test_unaligned(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    for (int ti = 0; ti < 3; ti++) {
        for (size_t off = 0; off < 16; off += quick ? 5 : 1) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, 2);
            s.flags = IMGHIST_OUTLIERS;
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t ch = 1 + tu_below(&rng, 4);
            img_t im = make_image(t, 1 + tu_below(&rng, 200), 1 + tu_below(&rng, 30), ch,
                                  dsize(t) * tu_below(&rng, 9), off, &s, bins, FILL_MIXED);
            img_t m = make_image(IMGHIST_U8, im.hv.width, im.hv.height, 1, tu_below(&rng, 5), off,
                                 NULL, 0, FILL_MASK_RANDOM);
            compare(&im, NULL, &s, DEV_DEV, "unaligned");
            compare(&im, &m, &s, DEV_HOST, "unaligned, masked");
            compare(&im, NULL, &s, HOST_HOST, "unaligned host");
            free_image(&im);
            free_image(&m);
        }
    }
}

/* 1x1 images, one row, one column. */
static void test_tiny_shapes(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    const uint32_t shapes[4][2] = {{1, 1}, {1, 77}, {999, 1}, {2, 2}};
    for (int ti = 0; ti < 3; ti++) {
        for (int sh = 0; sh < 4; sh++) {
            imghist_histspec s = spec_for(types[ti], 2);
            s.flags = IMGHIST_OUTLIERS | IMGHIST_CLOSED;
            const uint32_t bins = (uint32_t)imghist_bins(&s, types[ti]);
            img_t im = make_image(types[ti], shapes[sh][0], shapes[sh][1], 1 + sh, sh * 4, sh,
                                  &s, bins, FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "tiny");
            compare(&im, NULL, &s, HOST_HOST, "tiny");
            free_image(&im);
        }
    }
}

/* Every float edge of a spec, and the floats next to it, in one image: with
 * outlier counters (the general kernel) and without (a packed device image:
 * the lean kernel, whose F32 bins come from the edge nearest the estimate).
 * [1000, 1001) puts the estimate's error near its bound (lo * inv = 10^6),
 * [10^6, 10^6 + 1) past it (no usable estimate). */
static void test_edges_exact(void **state)
{
    (void)state;
    const imghist_histspec specs[] = {{10000, 0, 1, 0},      {777, -2.5, 3.25, IMGHIST_CLOSED},
                                      {3, 0.1, 0.7, 0},      {1000, -1e30, 1e30, IMGHIST_CLOSED},
                                      {5, 1, 1 + 1e-5, 0},   {4096, 0, 4096, IMGHIST_CLOSED},
                                      {1000, -3.7, 70000.2, 0}, {1000, 1000, 1001, 0},
                                      {10000, 1e6, 1e6 + 1, IMGHIST_CLOSED}};
    for (size_t k = 0; k < 2 * (sizeof specs / sizeof specs[0]); k++) {
        for (int ti = 0; ti < 2; ti++) {
            const imghist_dtype t = ti == 0 ? IMGHIST_F32 : IMGHIST_U16;
            imghist_histspec s = specs[k / 2];
            if (k % 2 == 0) {
                s.flags |= IMGHIST_OUTLIERS;
            }
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t w = (bins + 1) * 5;
            img_t im = make_image(t, w, 1, 1, 0, 0, &s, bins, FILL_MIXED);
            uint8_t *row = im.host;
            for (uint32_t i = 0; i <= bins; i++) {
                const double e = edge(&s, bins, i);
                for (int d = 0; d < 5; d++) {
                    if (t == IMGHIST_F32) {
                        float f = (float)e;
                        if (d == 1) f = nextafterf(f, INFINITY);
                        if (d == 2) f = nextafterf(f, -INFINITY);
                        if (d == 3) f = nextafterf(nextafterf(f, INFINITY), INFINITY);
                        if (d == 4) f = nextafterf(nextafterf(f, -INFINITY), -INFINITY);
                        if (d == 4 && e == 0) f = -0.0f; /* the table's -0 against v - e */
                        memcpy(row + ((size_t)i * 5 + d) * 4, &f, 4);
                    } else {
                        double v = d == 0 ? floor(e) : d == 1 ? ceil(e) : d == 2 ? floor(e) - 1
                                 : d == 3 ? ceil(e) + 1 : e;
                        v = v < 0 ? 0 : v > 65535 ? 65535 : floor(v);
                        const uint16_t u = (uint16_t)v;
                        memcpy(row + ((size_t)i * 5 + d) * 2, &u, 2);
                    }
                }
            }
            CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize());
            compare(&im, NULL, &s, DEV_DEV, "edges");
            compare(&im, NULL, &s, HOST_HOST, "edges");
            free_image(&im);
        }
    }
}

/* Constant images and two-value images large enough that a block's 16-bit
 * shared counters wrap many times (65536 bins and more), plus uniform data
 * through every store. */
static void test_large_wraps(void **state)
{
    (void)state;
    const uint32_t w = quick ? 1024 : 4096, h = quick ? 512 : 2048;
    const uint16_t values[][2] = {{12345, 12345}, {4000, 4000}, {4000, 4001}, {0, 65535},
                                  {64, 128}};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        img_t im = make_image(IMGHIST_U16, w, h, 1, 0, 0, NULL, 0, FILL_CONSTANT);
        uint16_t *p = (uint16_t *)im.host;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            p[i] = values[k][(i / 7) & 1];
        }
        CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        const imghist_histspec specs[] = {{0, 0, 0, 0}, {0, 0, 0, IMGHIST_OUTLIERS},
                                          {4096, 0, 65536, 0}, {1u << 20, 0, 65536, 0}};
        for (size_t j = 0; j < sizeof specs / sizeof specs[0]; j++) {
            compare(&im, NULL, &specs[j], DEV_DEV, "large constant");
        }
        free_image(&im);
    }
    /* Uniform 16-bit and float data, and 4 channels of 65536 bins (global store). */
    imghist_histspec s = {0, 0, 0, 0};
    img_t im = make_image(IMGHIST_U16, w, h / 4, 4, 32, 0, &s, 65536, FILL_MIXED);
    compare(&im, NULL, &s, DEV_DEV, "large 4 channels");
    s.flags = IMGHIST_OUTLIERS;
    compare(&im, NULL, &s, HOST_HOST, "large 4 channels");
    free_image(&im);
    imghist_histspec f = {10000, 0, 1, IMGHIST_OUTLIERS};
    im = make_image(IMGHIST_F32, w, h, 1, 0, 0, &f, 10000, FILL_MIXED);
    compare(&im, NULL, &f, DEV_DEV, "large float");
    f.bins = 1u << 24;
    compare(&im, NULL, &f, DEV_DEV, "large float, 2^24 bins");
    free_image(&im);
}

/* Sample i of a 16-bit image of pattern pat (i counted from the image's
 * start, where its chunks start): 0-9 and 12-15 test_split_layouts' (patterns
 * 0-5: the sampled granules' parity), 10 a constant, 11 two values in runs
 * of 7 (test_s16_batches). */
static uint16_t s16_sample(int pat, size_t i)
{
    const uint32_t par = pat < 3 ? 0 : 1;
    const int sampled = (i * 2) % 65536 < 16384;
    if (pat == 10) return 12345;
    if (pat == 11) return (uint16_t)(4000 + ((i / 7) & 1));
    if (pat == 12) { /* a band, 1 sample in 256 far off, everywhere */
        return (uint16_t)(tu_below(&rng, 256) == 0 ? 40000 + tu_below(&rng, 25000)
                                                   : 1000 + tu_below(&rng, 16));
    }
    if (pat == 13) { /* 8 values x64, 1 in 200 odd anywhere */
        return (uint16_t)(tu_below(&rng, 200) == 0 ? 2 * tu_below(&rng, 32768) + 1
                                                   : 64 * tu_below(&rng, 8));
    }
    if (pat == 15) { /* a wide band, 1 in 256 elsewhere: too wide for a split layout */
        return (uint16_t)(tu_below(&rng, 256) == 0 ? 60000 : 20000 + tu_below(&rng, 24000));
    }
    if (pat == 14) { /* a wide band, 1 in 40 elsewhere: too many for a split layout */
        return (uint16_t)(tu_below(&rng, 40) == 0 ? tu_below(&rng, 65536)
                                                  : 20000 + tu_below(&rng, 24000));
    }
    if (pat == 2 || pat == 5) return (uint16_t)(64 * (uint32_t)(tu_next(&rng) & 7) + par);
    if (pat == 8) return (uint16_t)(1000 + (uint32_t)(tu_next(&rng) & 15));
    if (pat == 9) return (uint16_t)(tu_next(&rng) & 0xfff);
    if (pat >= 6) {
        return (uint16_t)(sampled ? 20000 + tu_below(&rng, 2000)
                          : pat == 6 && i % 97 == 0 ? tu_below(&rng, 65536)
                                                    : 50001);
    }
    if (sampled) return (uint16_t)(2 * tu_below(&rng, 32768) + par);
    if (pat % 3 == 0) {
        return (uint16_t)(i % 97 == 0 ? 2 * tu_below(&rng, 32768) + (par ^ 1) : 12344 + (par ^ 1));
    }
    return (uint16_t)(40000 + (par ^ 1));
}

/*
 * The natural 16-bit histogram's split layouts (hist_wide.cu): a block takes
 * one when the granules it samples (the first 16 KiB of each 64 KiB chunk it
 * counts) hold values of one parity only (patterns 0-5), or values within
 * 32768 of their mean (6-9). Here those do, and the rest of every chunk holds
 * values outside that set, so that such blocks count those too: through the
 * per-sample path (a value every 97 samples breaks the warp's one-value
 * vote; in 6 that value is uniform over all 65536, so that the window's
 * edges are crossed) and through the vote (one value throughout), each more
 * than 65536 times a block in the full run of the 4097-wide image on a
 * 132-SM GPU (one block per SM), so that their 16-bit halves wrap. The
 * widths are odd: the run ends in a partial granule. Also data of one set
 * only: 8 values, multiples of 64, and those plus 1; 16 values from 1000;
 * 12-bit data. And data whose sampled granules hold values outside P
 * (up to 64 of 1024 such granules take a split layout where the
 * shared layout's adds would queue on few words): a band of 16 values with
 * 1 sample in 256 elsewhere (hot pixels: the window), 8 values x64 with 1
 * in 200 odd anywhere (the parity), and for the shared layout a wide band
 * with 1 in 40 elsewhere (too many) and with 1 in 256 elsewhere (not
 * crowded).
 */
static void split_layouts_of(uint32_t w, uint32_t h)
{
    const imghist_histspec specs[] = {{0, 0, 0, 0}, {0, 0, 0, IMGHIST_ACCUMULATE}};
    static const char *const names[16] = {
        "parity 0, other parity sample by sample", "parity 0, other parity one value",
        "8 values x64",                            "parity 1, other parity sample by sample",
        "parity 1, other parity one value",        "8 values x64 + 1",
        "window, others sample by sample",         "window, others one value",
        "16 values from 1000",                     "12-bit data",
        NULL,                                      NULL,
        "band, 1 in 256 elsewhere",                "8 values x64, 1 in 200 odd",
        "wide band, 1 in 40 elsewhere",            "wide band, 1 in 256 elsewhere"};
    for (int pat = 0; pat < 16; pat++) {
        if (pat == 10 || pat == 11) continue; /* test_s16_batches' */
        img_t im = make_image(IMGHIST_U16, w, h, 1, 0, 0, NULL, 0, FILL_CONSTANT);
        uint16_t *p = (uint16_t *)im.host;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            p[i] = s16_sample(pat, i);
        }
        CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        char what[96];
        snprintf(what, sizeof what, "split layout, pattern %d (%s)", pat, names[pat]);
        for (size_t j = 0; j < sizeof specs / sizeof specs[0]; j++) {
            compare(&im, NULL, &specs[j], DEV_DEV, what);
        }
        free_image(&im);
    }
}

static void test_split_layouts(void **state)
{
    (void)state;
    /* and one row fewer: the last, partial chunk of 4096 granules (767 or
     * 511 granules) then ends in a warp with fewer than 32 lanes in the
     * loop, which the split walk's votes must not wait for */
    const uint32_t h = quick ? 2048 : 8192;
    split_layouts_of(4097, h);
    split_layouts_of(4097, h - 1);
}

/*
 * Batches of 16-bit images of over 2^20 samples into 65536 counters
 * each: the S16 batch kernels, a few blocks an image (fewer
 * as the batch grows: with 26 images a block counts about 200000 samples,
 * so that its 16-bit halves wrap on the constant and two-value images).
 * Image i takes pattern i mod 12 (s16_sample: the split layouts and their
 * other values, sample by sample and by the vote). A tensor (strided), the
 * same as views, and as views out of order (the batch kernels on the
 * views' pointers); masks in step with the samples or not (the flat masked
 * walk, or the general one a launch an image);
 * outlier counters; a shift binning that is not one bin per value; device
 * and host counts; against the CPU image by image. With more images than
 * SMs of fewer than 65536 samples, a block an image stores its counters
 * instead of adding them to zeroed ones.
 */
static void s16_batches(size_t n, uint32_t w, uint32_t h)
{
    const size_t row = (size_t)w * 2;
    const size_t img = (row * h + 15) / 16 * 16 + 16;
    /* masks as packed as the images, w * h bytes apart (out of step with
     * the samples' 8-byte groups: the general walk, a launch an image) or
     * on 16-byte boundaries (the flat masked walk, one launch) */
    const size_t mask_at[3] = {0, (size_t)w * h, ((size_t)w * h + 15) / 16 * 16};
    const size_t mbytes = mask_at[2] * n;
    uint8_t *host = malloc(img * n), *mhost = malloc(mbytes), *dev = NULL, *mdev = NULL;
    assert_true(host != NULL && mhost != NULL);
    for (size_t k = 0; k < n; k++) {
        uint16_t *p = (uint16_t *)(host + k * img);
        for (size_t i = 0; i < img / 2; i++) {
            p[i] = s16_sample((int)(k % 12), i);
        }
    }
    for (size_t i = 0; i < mbytes; i++) {
        mhost[i] = (uint8_t)(tu_below(&rng, 3) == 0 ? 0 : 1 + tu_below(&rng, 255));
    }
    CUDA_OK(cudaMalloc((void **)&dev, img * n));
    CUDA_OK(cudaMalloc((void **)&mdev, mbytes));
    CUDA_OK(cudaMemcpy(dev, host, img * n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(mdev, mhost, mbytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    imghist_view *hv = malloc(n * sizeof *hv), *dv = malloc(n * sizeof *dv);
    imghist_view *hm = malloc(n * sizeof *hm), *dm = malloc(n * sizeof *dm);
    uint64_t *want = malloc(n * 65539 * 8), *got = malloc(n * 65539 * 8), *d = NULL;
    assert_true(hv && dv && hm && dm && want && got);
    CUDA_OK(cudaMalloc((void **)&d, n * 65539 * 8));
    const imghist_histspec specs[4] = {{0, 0, 0, 0},
                                       {0, 0, 0, IMGHIST_ACCUMULATE},
                                       {0, 0, 0, IMGHIST_OUTLIERS},
                                       {65536, 0, 131072, 0}};
    unsigned cases = 0;
    for (int sp = 0; sp < 4; sp++) {
        const imghist_histspec *spec = &specs[sp];
        const size_t len = imghist_counts_len(spec, IMGHIST_U16, 1);
        for (int masked = 0; masked < 3; masked++) {
            for (int form = 0; form < 3; form++) {
                if (quick && (sp + masked + form) % 2 != 0) continue;
                const size_t ms = mask_at[masked];
                /* form 2: views 0 and 1 swapped (not a progression) */
                for (size_t k = 0; k < n; k++) {
                    const size_t at = form == 2 && k < 2 ? 1 - k : k;
                    const imghist_view v = {.data = host + at * img, .dtype = IMGHIST_U16,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = row,
                        .channels = 1};
                    const imghist_view m = {.data = mhost + at * ms, .dtype = IMGHIST_U8,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = w,
                        .channels = 1};
                    hv[k] = v;
                    hm[k] = m;
                    dv[k] = v;
                    dm[k] = m;
                    dv[k].data = dev + at * img;
                    dm[k].data = mdev + at * ms;
                    dv[k].mem = dm[k].mem = IMGHIST_MEM_DEVICE;
                }
                for (size_t i = 0; i < n * len; i++) {
                    want[i] = sp == 1 ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
                }
                memcpy(got, want, n * len * 8);
                for (size_t k = 0; k < n; k++) {
                    const imghist_counts c = {want + k * len, len, IMGHIST_MEM_HOST};
                    const imghist_view hk = vw_masked(hv[k], masked ? &hm[k] : NULL);
                    IH_OK(cpu, imghist_histogram(cpu, &hk, spec, &c));
                }
                printf("S16 batch: spec %d, mask %d, form %d\n", sp, masked, form);
                fflush(stdout); /* a case that hangs shows */
                const int dev_counts = (form + sp) % 2;
                imghist_counts gc = {got, n * len, IMGHIST_MEM_HOST};
                if (dev_counts) {
                    CUDA_OK(cudaMemcpy(d, got, n * len * 8, cudaMemcpyHostToDevice));
                    CUDA_OK(cudaDeviceSynchronize());
                    gc.data = d;
                    gc.mem = IMGHIST_MEM_DEVICE;
                }
                gpu_batch(form == 0, masked, dv, dm, n, (ptrdiff_t)img, (ptrdiff_t)ms, spec, &gc);
                gpu_sync();
                if (dev_counts) {
                    CUDA_OK(cudaMemcpy(got, d, n * len * 8, cudaMemcpyDeviceToHost));
                }
                for (size_t i = 0; i < n * len; i++) {
                    if (got[i] != want[i]) {
                        fail_msg("S16 batch (spec %d, mask %d, form %d, %s counts, %zu images "
                                 "of %ux%u): image %zu (pattern %zu) counter %zu: GPU %llu, "
                                 "CPU %llu",
                                 sp, masked, form, dev_counts ? "device" : "host", n, w, h,
                                 i / len, (form == 2 && i / len < 2 ? 1 - i / len : i / len) % 12,
                                 i % len, (unsigned long long)got[i],
                                 (unsigned long long)want[i]);
                    }
                }
                cases++;
            }
        }
    }
    free(hv);
    free(dv);
    free(hm);
    free(dm);
    free(want);
    free(got);
    free(host);
    free(mhost);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFree(mdev));
    printf("S16 batches: %u comparisons of %zu images of %ux%u\n", cases, n, w, h);
}

static void test_s16_batches(void **state)
{
    (void)state;
    /* odd sizes: each flat run ends in a partial granule */
    s16_batches(quick ? 12 : 26, 1031, 1030);
    /* More images than SMs, of fewer than 65536 samples: a block an image,
     * which stores all its counters (the constant image puts 65535
     * in one 16-bit half) */
    s16_batches(300, 255, 257);
    s16_batches(quick ? 150 : 400, 181, 181);
}

/* Host images through staging in bands (IMGHIST_P_STAGING_BYTES), masks too. */
static void test_host_bands(void **state)
{
    (void)state;
    imghist_histspec s = {1000, -3.7, 70000.2, IMGHIST_OUTLIERS | IMGHIST_ACCUMULATE};
    img_t im = make_image(IMGHIST_U16, 301, 97, 3, 6, 0, &s, 1000, FILL_MIXED);
    img_t m = make_image(IMGHIST_U8, 301, 97, 1, 5, 0, NULL, 0, FILL_MASK_RANDOM);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 10000));
    compare(&im, &m, &s, HOST_HOST, "bands");
    compare(&im, NULL, &s, HOST_DEV, "bands");
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    double lo, hi, clo, chi;
    const imghist_view imm = vw_masked(im.hv, &m.hv);
    IH_OK(gpu, imghist_range(gpu, &imm, &lo, &hi));
    IH_OK(cpu, imghist_range(cpu, &imm, &clo, &chi));
    assert_true(lo == clo && hi == chi);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    free_image(&im);
    free_image(&m);
    /* 8-bit channels, one bin per value, rows of 3 x 301 bytes (not a
     * multiple of 16): staged packed, one flat run (the plain layout), in
     * bands and whole, and beside a mask. */
    /* one channel with a mask, staged in bands of odd row bytes (the lean
     * masked walk on each band) */
    {
        imghist_histspec n = {32, 0, 256, 0};
        img_t c = make_image(IMGHIST_U8, 301, 200, 1, 5, 3, &n, 32, FILL_MIXED);
        img_t cm = make_image(IMGHIST_U8, 301, 200, 1, 2, 1, NULL, 0, FILL_MASK_RANDOM);
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 10000));
        compare(&c, &cm, &n, HOST_HOST, "one channel staged in bands, masked");
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
        compare(&c, &cm, &n, HOST_DEV, "one channel staged, masked");
        free_image(&c);
        free_image(&cm);
    }
    for (uint32_t ch = 2; ch <= 4; ch++) {
        imghist_histspec n = {0, 0, 0, 0};
        img_t c = make_image(IMGHIST_U8, 301, 97 + 200 * (ch & 1), ch, 7, 0, &n, 256, FILL_MIXED);
        img_t cm = make_image(IMGHIST_U8, 301, c.hv.height, 1, 0, 0, NULL, 0, FILL_MASK_RANDOM);
        for (int bands = 0; bands < 2; bands++) {
            IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, bands ? 10000 : 0));
            compare(&c, NULL, &n, HOST_HOST, "8-bit channels staged");
            compare(&c, NULL, &n, HOST_DEV, "8-bit channels staged");
            compare(&c, &cm, &n, HOST_HOST, "8-bit channels staged, masked");
        }
        free_image(&c);
        free_image(&cm);
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
}

/* Device counts: the call only queues work on the context's stream. */
static void test_stream_order(void **state)
{
    (void)state;
    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    imghist_stream old;
    IH_OK(gpu, imghist_get_stream(gpu, &old));
    IH_OK(gpu, imghist_set_stream(gpu, (imghist_stream)st));
    imghist_histspec s = {4096, 0, 4096, 0};
    img_t im = make_image(IMGHIST_U16, 1000, 300, 1, 0, 0, &s, 4096, FILL_MIXED);
    compare(&im, NULL, &s, DEV_DEV, "own stream");
    IH_OK(gpu, imghist_set_stream(gpu, old));
    CUDA_OK(cudaStreamDestroy(st));
    free_image(&im);
}

static int setup(void **state)
{
    (void)state;
    BS_GPU_PART_STATE("test_histogram_wide");
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_grid),
    BS_CUDA_TEST(test_flat),
    BS_CUDA_TEST(test_unaligned),
    BS_CUDA_TEST(test_tiny_shapes),
    BS_CUDA_TEST(test_edges_exact),
    BS_CUDA_TEST(test_large_wraps),
    BS_CUDA_TEST(test_split_layouts),
    BS_CUDA_TEST(test_s16_batches),
    BS_CUDA_TEST(test_host_bands),
    BS_CUDA_TEST(test_stream_order),
};

const bs_part histogram_wide_part = BS_PART("histogram wide cuda", tests, setup, NULL);
