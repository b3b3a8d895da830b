/*
 * The CUDA backend's wide histograms of channels, masks, lists and tensors,
 * floats, and imghist_range, against the CPU backend bit for bit (a part of
 * test_histogram, cuda run only). IMGHIST_TEST_QUICK=1: smaller cases.
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

/* ---- batches (lists and views of several images) of every job ---- */

enum layout { L_PACKED, L_PITCHED, L_ODD_STRIDE, L_BACKWARDS, L_VIEWS_TENSOR, L_VIEWS_MIXED,
              L_VIEWS_SWAPPED, N_LAYOUTS };
static const char *layout_name[N_LAYOUTS] = {"packed tensor",    "pitched tensor",
                                             "stride not x16",   "backwards stride",
                                             "tensor as views",  "views of two shapes",
                                             "views of one shape, pairs swapped"};

/* n images of w x h x ch in one device buffer as `lay` places them, the
 * batch's counts on the GPU (device or host counts) against the CPU's single
 * calls, image by image; with IMGHIST_ACCUMULATE both start from the same
 * random counts. */
/* masked: 0 none, 1 a mask an image (rows of w + 0..5 bytes, each mask 3
 * bytes after the last), 2 one mask for all (stride 0), 3 a packed mask an
 * image, each on a 16-byte boundary (the flat masked walk). */
static void check_batch_masked(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t n,
                               enum layout lay, const imghist_histspec *spec, int dev_counts,
                               enum fill f, int masked)
{
    const uint32_t bins = (uint32_t)imghist_bins(spec, t);
    const size_t row = (size_t)w * ch * dsize(t);
    const size_t pitch = lay == L_PITCHED ? row + dsize(t) * (1 + tu_below(&rng, 9)) : row;
    size_t img = pitch * h;
    if (lay == L_ODD_STRIDE) {
        img += (img % 16 == 0) ? dsize(t) : 0; /* a phase that moves from image to image */
    } else {
        img = (img + 15) / 16 * 16 + 16 * tu_below(&rng, 2);
    }
    const size_t off = lay == L_ODD_STRIDE ? dsize(t) : 16 * tu_below(&rng, 3);
    const size_t bytes = off + img * n + 2 * pitch * h + 64;
    uint8_t *host = malloc(bytes), *dev = NULL;
    assert_non_null(host);
    memset(host, 0xfd, bytes);
    for (size_t i = 0; i < bytes / dsize(t); i++) {
        put_sample(t, host + i * dsize(t), spec, bins, f == FILL_CONSTANT);
    }
    CUDA_OK(cudaMalloc((void **)&dev, bytes));
    CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    /* Image i's host and device views. */
    imghist_view *hv = malloc(n * sizeof *hv), *dv = malloc(n * sizeof *dv);
    assert_true(hv != NULL && dv != NULL);
    for (size_t i = 0; i < n; i++) {
        /* L_VIEWS_SWAPPED: images 2k and 2k + 1 trade places (not a
         * progression from 3 images on: the batch kernels take the views'
         * pointers) */
        const size_t place = lay == L_BACKWARDS                      ? n - 1 - i
                             : lay == L_VIEWS_SWAPPED && (i ^ 1) < n ? i ^ 1
                                                                     : i;
        const size_t at = off + place * img;
        const imghist_view v = {.data = host + at, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w,
            .height = h, .pitch = pitch, .channels = ch};
        hv[i] = v;
        if (lay == L_VIEWS_MIXED && i % 3 == 1) { /* a smaller image at the same place */
            hv[i].width = w > 1 ? w - 1 : 1;
            hv[i].height = h > 1 ? h - 1 : 1;
        }
        dv[i] = hv[i];
        dv[i].data = dev + at;
        dv[i].mem = IMGHIST_MEM_DEVICE;
    }
    const size_t mpitch = masked == 3 ? w : w + tu_below(&rng, 6);
    const size_t mimg = masked == 1 ? mpitch * h + 3 : masked == 3 ? (mpitch * h + 15) / 16 * 16 : 0;
    const size_t mbytes = masked ? mimg * n + mpitch * h : 1;
    uint8_t *mhost = malloc(mbytes), *mdev = NULL;
    imghist_view *hm = malloc(n * sizeof *hm), *dm = malloc(n * sizeof *dm);
    assert_true(mhost != NULL && hm != NULL && dm != NULL);
    for (size_t i = 0; i < mbytes; i++) {
        mhost[i] = (uint8_t)(tu_below(&rng, 3) ? 1 + tu_below(&rng, 255) : 0);
    }
    CUDA_OK(cudaMalloc((void **)&mdev, mbytes));
    CUDA_OK(cudaMemcpy(mdev, mhost, mbytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i++) {
        const imghist_view m = {.data = mhost + i * mimg, .dtype = IMGHIST_U8,
            .mem = IMGHIST_MEM_HOST, .width = hv[i].width, .height = hv[i].height, .pitch = mpitch,
            .channels = 1};
        hm[i] = m;
        dm[i] = m;
        dm[i].data = mdev + i * mimg;
        dm[i].mem = IMGHIST_MEM_DEVICE;
    }
    const size_t len = imghist_counts_len(spec, t, ch);
    uint64_t *want = malloc(n * len * 8), *got = malloc((n * len + 1) * 8);
    assert_true(want != NULL && got != NULL);
    for (size_t i = 0; i < n * len; i++) {
        want[i] = (spec->flags & IMGHIST_ACCUMULATE) ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
    }
    memcpy(got, want, n * len * 8);
    got[n * len] = 0x5a5a5a5a5a5a5a5aull;
    for (size_t i = 0; i < n; i++) {
        const imghist_counts c = {want + i * len, len, IMGHIST_MEM_HOST};
        const imghist_view hvi = vw_masked(hv[i], masked ? &hm[i] : NULL);
        IH_OK(cpu, imghist_histogram(cpu, &hvi, spec, &c));
    }
    uint64_t *d = NULL;
    imghist_counts gc = {got, n * len, IMGHIST_MEM_HOST};
    if (dev_counts) {
        CUDA_OK(cudaMalloc((void **)&d, n * len * 8));
        CUDA_OK(cudaMemcpy(d, got, n * len * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        gc.data = d;
        gc.mem = IMGHIST_MEM_DEVICE;
    }
    const ptrdiff_t stride = lay == L_BACKWARDS ? -(ptrdiff_t)img : (ptrdiff_t)img;
    gpu_batch(lay <= L_BACKWARDS, masked, dv, dm, n, stride, (ptrdiff_t)mimg, spec, &gc);
    gpu_sync();
    if (dev_counts) {
        CUDA_OK(cudaMemcpy(got, d, n * len * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(d));
    }
    for (size_t i = 0; i < n * len; i++) {
        if (got[i] != want[i]) {
            fail_msg("batch (%s, mask %d, %s counts; %s %ux%u x%u ch, %zu images, bins %u [%g, "
                     "%g) flags %u): image %zu counter %zu of %zu: GPU %llu, CPU %llu",
                     layout_name[lay], masked, dev_counts ? "device" : "host",
                     t == IMGHIST_U8 ? "u8" : t == IMGHIST_U16 ? "u16" : "f32", w, h, ch, n,
                     spec->bins, spec->lo, spec->hi, spec->flags, i / len, i % len, len,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    assert_true(got[n * len] == 0x5a5a5a5a5a5a5a5aull);
    if (masked) {
        /* Host views and masks on the CUDA context (the core's image-by-image
         * path, each image staged with its mask) against the CPU backend's
         * batch. */
        imghist_histspec s2 = *spec;
        s2.flags &= ~(uint32_t)IMGHIST_ACCUMULATE;
        uint64_t *hw = malloc(n * len * 8), *hg = malloc(n * len * 8);
        assert_true(hw != NULL && hg != NULL);
        const imghist_counts cw = {hw, n * len, IMGHIST_MEM_HOST};
        const imghist_counts cg = {hg, n * len, IMGHIST_MEM_HOST};
        imghist_view *hl = malloc(n * sizeof *hl);
        assert_non_null(hl);
        vw_list_masked(hl, hv, hm, n);
        IH_OK(cpu, imghist_histogram_list(cpu, hl, n, &s2, &cw));
        IH_OK(gpu, imghist_histogram_list(gpu, hl, n, &s2, &cg));
        free(hl);
        for (size_t i = 0; i < n * len; i++) {
            if (hg[i] != hw[i]) {
                fail_msg("host masked batch (%s): image %zu counter %zu: GPU %llu, CPU %llu",
                         layout_name[lay], i / len, i % len, (unsigned long long)hg[i],
                         (unsigned long long)hw[i]);
            }
        }
        free(hw);
        free(hg);
    }
    free(want);
    free(got);
    free(hv);
    free(dv);
    free(host);
    free(hm);
    free(dm);
    free(mhost);
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFree(mdev));
}

static void check_batch(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t n,
                        enum layout lay, const imghist_histspec *spec, int dev_counts,
                        enum fill f)
{
    check_batch_masked(t, w, h, ch, n, lay, spec, dev_counts, f, 0);
}

/* 8-bit channels with one bin per value in rows that are not one flat run
 * (padded rows, unaligned starts: a crop), large enough for many blocks, one
 * image and a batch (the plain layout's row walk). */
static void test_channel_rows(void **state)
{
    (void)state;
    unsigned cases = 0;
    for (uint32_t ch = 2; ch <= 4; ch++) {
        for (int i = 0; i < (quick ? 2 : 6); i++) {
            imghist_histspec s = {0, 0, 0, i % 3 == 2 ? IMGHIST_ACCUMULATE : 0};
            const uint32_t w = 601 + tu_below(&rng, 700), h = 50 + tu_below(&rng, 300);
            const size_t pad = i == 0 ? 0 : tu_below(&rng, 40);
            const size_t off = i == 0 ? 1 + tu_below(&rng, 15) : tu_below(&rng, 16);
            img_t im = make_image(IMGHIST_U8, w, h, ch, pad, off, &s, 256,
                                  i == 1 ? FILL_CONSTANT : FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "8-bit channels in rows");
            compare(&im, NULL, &s, DEV_HOST, "8-bit channels in rows");
            /* with a mask (the plain layout's masked row walk): random, of
             * any pitch and start, and all zero */
            img_t m = make_image(IMGHIST_U8, w, h, 1, tu_below(&rng, 20), tu_below(&rng, 16),
                                 NULL, 0, i == 3 ? FILL_MASK_ZERO : FILL_MASK_RANDOM);
            compare(&im, &m, &s, DEV_DEV, "8-bit channels in rows, masked");
            compare(&im, &m, &s, DEV_HOST, "8-bit channels in rows, masked");
            free_image(&m);
            free_image(&im);
            cases += 4;
        }
        const imghist_histspec n = {0, 0, 0, 0};
        check_batch(IMGHIST_U8, 500 + tu_below(&rng, 300), 100 + tu_below(&rng, 100), ch,
                    2 + tu_below(&rng, 5), L_PITCHED, &n, (int)tu_below(&rng, 2), FILL_MIXED);
        check_batch(IMGHIST_U8, 20 + tu_below(&rng, 30), 10 + tu_below(&rng, 30), ch,
                    300 + tu_below(&rng, 300), L_PITCHED, &n, (int)tu_below(&rng, 2), FILL_MIXED);
        check_batch_masked(IMGHIST_U8, 300 + tu_below(&rng, 300), 50 + tu_below(&rng, 100), ch,
                           2 + tu_below(&rng, 5), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 1 + (int)tu_below(&rng, 3));
        cases += 3;
    }
    printf("channel rows: %u comparisons\n", cases);
}

/* One channel with a packed mask aligned with the image (the lean kernel's
 * masked walk): every type, lean binnings, one image of one block or many,
 * one row, odd widths (a partial last granule), masks of random bytes, all
 * zero and all set; batches of such images. */
static void test_masked_flat(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < 2; k++) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, k);
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            for (int shape = 0; shape < 4; shape++) {
                const uint32_t w = shape == 0 ? 1 + tu_below(&rng, 3000)
                                              : 37 + 2 * tu_below(&rng, 500);
                const uint32_t h = shape == 0 ? 1 : shape == 1 ? 3 + tu_below(&rng, 20)
                                                               : 100 + tu_below(&rng, 700);
                img_t im = make_image(t, w, h, 1, 0, 16 * tu_below(&rng, 3), &s, bins,
                                      shape == 3 ? FILL_CONSTANT : FILL_MIXED);
                const enum fill mf[3] = {FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE};
                for (int mi = 0; mi < 3; mi++) {
                    img_t m = make_image(IMGHIST_U8, w, h, 1, 0, 16 * tu_below(&rng, 3), NULL, 0,
                                         mf[mi]);
                    cases += compare_masked(&im, &m, &s, "flat masked");
                    free_image(&m);
                }
                free_image(&im);
            }
            check_batch_masked(t, 200 + tu_below(&rng, 300), 100 + tu_below(&rng, 100), 1,
                               2 + tu_below(&rng, 4), L_PACKED, &s, (int)tu_below(&rng, 2),
                               FILL_MIXED, 3);
            check_batch_masked(t, 16 + tu_below(&rng, 40), 8 + tu_below(&rng, 30), 1,
                               300 + tu_below(&rng, 300), L_PACKED, &s, (int)tu_below(&rng, 2),
                               FILL_MIXED, 3);
            cases += 2;
        }
    }
    printf("masked flat: %u comparisons\n", cases);
}

/*
 * 8-bit channels with a mask as packed as the pixels (the plain
 * layout's flat masked walk; for two and four channels only where the mask
 * is aligned with the granules, 16 / channels pixels each, else the row
 * walk): one row, a few rows, many blocks' worth;
 * widths whose rows end inside a granule; masks random, all zero and all
 * set, aligned or one byte off; device and host views and counts; batches
 * as a tensor and as views out of order.
 */
static void test_masked_channels_flat(void **state)
{
    (void)state;
    unsigned cases = 0;
    const imghist_histspec s = {0, 0, 0, 0};
    for (uint32_t ch = 2; ch <= 4; ch++) {
        for (int shape = 0; shape < 4; shape++) {
            const uint32_t w = shape == 0 ? 1 + tu_below(&rng, 3000)
                               : shape == 3 ? 1024 + 2 * tu_below(&rng, 300)
                                            : 37 + tu_below(&rng, 700);
            const uint32_t h = shape == 0 ? 1 : shape == 1 ? 3 + tu_below(&rng, 20)
                                                           : (quick ? 200 : 600) + tu_below(&rng, 300);
            img_t im = make_image(IMGHIST_U8, w, h, ch, 0, 16 * tu_below(&rng, 3), &s, 256,
                                  shape == 2 ? FILL_CONSTANT : FILL_MIXED);
            const enum fill mf[4] = {FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE,
                                     FILL_MASK_RANDOM};
            for (int mi = 0; mi < 4; mi++) {
                /* aligned with the granules' pixels, or (mi 3) one byte off */
                const size_t moff = mi == 3 ? 1 : (16 / ch) * tu_below(&rng, 4);
                img_t m = make_image(IMGHIST_U8, w, h, 1, 0, moff, NULL, 0, mf[mi]);
                cases += compare_masked(&im, &m, &s, "channels, packed mask");
                free_image(&m);
            }
            free_image(&im);
        }
        const imghist_histspec n = {0, 0, 0, 0};
        check_batch_masked(IMGHIST_U8, 200 + tu_below(&rng, 300), 50 + tu_below(&rng, 100), ch,
                           2 + tu_below(&rng, 5), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        check_batch_masked(IMGHIST_U8, 100 + tu_below(&rng, 300), 20 + tu_below(&rng, 100), ch,
                           3 + tu_below(&rng, 5), L_VIEWS_SWAPPED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        check_batch_masked(IMGHIST_U8, 8 + tu_below(&rng, 30), 4 + tu_below(&rng, 20), ch,
                           300 + tu_below(&rng, 300), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        cases += 3;
    }
    printf("masked channels, flat: %u comparisons\n", cases);
}

/* A flat image over 4 GiB with rows of an odd number of bytes, with and
 * without a mask: the lean kernels take it in launches of at most 4 GiB,
 * each starting on a 16-byte boundary (rows a multiple of 16). Row r holds
 * the value 13 r mod 256; the mask clears every third row. Skipped in quick
 * runs and where the GPU has less than 10 GB free. */
static void test_huge_flat(void **state)
{
    (void)state;
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (quick || free_b < ((size_t)10 << 30)) {
        printf("huge flat: skipped (%s)\n", quick ? "quick" : "less than 10 GB free");
        return;
    }
    const uint32_t w = 65537, h = 65600;
    const size_t bytes = (size_t)w * h;
    uint8_t *img = NULL, *mask = NULL;
    CUDA_OK(cudaMalloc((void **)&img, bytes));
    CUDA_OK(cudaMalloc((void **)&mask, bytes));
    for (uint32_t r = 0; r < h; r++) {
        CUDA_OK(cudaMemsetAsync(img + (size_t)r * w, (int)((13u * r) & 255u), w, 0));
        CUDA_OK(cudaMemsetAsync(mask + (size_t)r * w, r % 3 == 0 ? 0 : 1, w, 0));
    }
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view v = {.data = img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE, .width = w,
        .height = h, .pitch = w, .channels = 1};
    const imghist_view m = {.data = mask, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE,
        .width = w, .height = h, .pitch = w, .channels = 1};
    const imghist_histspec s = {32, 0, 256, 0}; /* lean, 32-bit counters */
    uint64_t got[32], want[32];
    for (int masked = 0; masked < 2; masked++) {
        memset(want, 0, sizeof want);
        for (uint32_t r = 0; r < h; r++) {
            if (!masked || r % 3 != 0) {
                want[((13u * r) & 255u) >> 3] += w;
            }
        }
        const imghist_counts c = {got, 32, IMGHIST_MEM_HOST};
        const imghist_view vm = vw_masked(v, masked ? &m : NULL);
        IH_OK(gpu, imghist_histogram(gpu, &vm, &s, &c));
        for (int b = 0; b < 32; b++) {
            if (got[b] != want[b]) {
                fail_msg("huge flat (%s): bin %d is %llu, want %llu", masked ? "masked" : "plain",
                         b, (unsigned long long)got[b], (unsigned long long)want[b]);
            }
        }
    }
    CUDA_OK(cudaFree(img));
    CUDA_OK(cudaFree(mask));
    printf("huge flat: 2 comparisons\n");
}

/* Every type x binning x channel count x flags x layout: tiny images (one
 * warp each), small ones (one block each, which stores its counts), larger
 * ones (several blocks an image, adding), S16 and global stores (2^20
 * bins), constant images. */
static void test_batches(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (int lay = 0; lay < N_LAYOUTS; lay++) {
                for (int size = 0; size < 2; size++) {
                    if (quick && tu_below(&rng, 6) != 0) continue;
                    const imghist_dtype t = types[ti];
                    imghist_histspec s = spec_for(t, k);
                    const int huge = s.bins == (1u << 20) || (t == IMGHIST_U16 && k == 0);
                    const uint32_t ch = huge || tu_below(&rng, 2) ? 1 : 3;
                    const uint32_t w = size ? 200 + tu_below(&rng, 300) : 1 + tu_below(&rng, 40);
                    const uint32_t h = size ? 100 + tu_below(&rng, 200) : 1 + tu_below(&rng, 30);
                    const size_t n = huge ? 3 : size ? 1 + tu_below(&rng, 6) : 1 + tu_below(&rng, 300);
                    const int fl = (int)tu_below(&rng, 4);
                    s.flags = (fl & 1 ? IMGHIST_OUTLIERS : 0) | (fl & 2 ? IMGHIST_ACCUMULATE : 0);
                    if (s.bins > 0 && tu_below(&rng, 3) == 0) {
                        s.flags |= IMGHIST_CLOSED;
                    }
                    check_batch(t, w, h, ch, n, (enum layout)lay, &s, (int)tu_below(&rng, 2),
                                tu_below(&rng, 8) == 0 ? FILL_CONSTANT : FILL_MIXED);
                    /* and masked: a mask an image, or one for all */
                    check_batch_masked(t, w, h, ch, n, (enum layout)lay, &s,
                                       (int)tu_below(&rng, 2), FILL_MIXED,
                                       1 + (int)tu_below(&rng, 2));
                    cases += 2;
                }
            }
        }
    }
    /* Many small RGB and float images: more than two waves of blocks. */
    const imghist_histspec rgb = {0, 0, 0, 0}, unit = {256, 0, 1, 0};
    check_batch(IMGHIST_U8, 32, 32, 3, 5000, L_PACKED, &rgb, 1, FILL_MIXED);
    check_batch(IMGHIST_F32, 24, 24, 1, 3000, L_PACKED, &unit, 0, FILL_MIXED);
    /* No image one warp each (-1), then images of up to 64 KB so. */
    const imghist_histspec odd16 = {1000, -3.7, 70000.2, IMGHIST_ACCUMULATE};
    const imghist_histspec u16_256 = {256, 0, 65536, IMGHIST_ACCUMULATE};
    for (int k = 0; k < 2; k++) {
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, k == 0 ? -1 : 65536));
        check_batch(IMGHIST_U8, 37, 29, 3, 300, L_PACKED, &rgb, 1, FILL_MIXED);
        check_batch(IMGHIST_F32, 120, 100, 1, 40, L_PACKED, &unit, 0, FILL_MIXED);
        check_batch(IMGHIST_U16, 64, 50, 2, 70, L_VIEWS_TENSOR, &odd16, 1, FILL_CONSTANT);
        check_batch(IMGHIST_U16, 64, 50, 1, 70, L_BACKWARDS, &u16_256, 0, FILL_MIXED);
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, 0));
    printf("batches: %u comparisons\n", cases + 10);
}

/* The F32 lean kernel's padded layout on flat runs of 1-4 channels: ranges
 * whose estimate takes the edge table only near an edge (open and closed,
 * a zero edge, 32 copies of 256 bins), one whose bound is too loose for it
 * ([1000, 1001): binning.h's way through lean_bin), one with no usable
 * estimate at all, and one wider than FLT_MAX (v - lo overflows: once bin 0
 * in lean_bin, which tiny images' batches take). Each a few chunks long with
 * a partial last granule, in batches (one block an image, and several), and
 * for two ranges an image of several chunks a block. */
static void test_float_layouts(void **state)
{
    (void)state;
    const imghist_histspec specs[] = {{10000, 0, 1, 0},
                                      {777, -2.5, 3.25, IMGHIST_CLOSED},
                                      {256, 0, 1, IMGHIST_CLOSED},
                                      {1000, -1e30, 1e30, IMGHIST_CLOSED},
                                      {1000, 1000, 1001, 0},
                                      {3000, 1e6, 1e6 + 1, 0},
                                      {100, -3e38, 3e38, 0}};
    unsigned cases = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        for (uint32_t ch = 1; ch <= 4; ch++) {
            const imghist_histspec s = specs[k];
            const uint32_t bins = (uint32_t)imghist_bins(&s, IMGHIST_F32);
            const uint32_t w = 2 * 2048 * 4 / ch + 1 + 2 * tu_below(&rng, 8), h = 3;
            img_t im = make_image(IMGHIST_F32, w, h, ch, 0, 0, &s, bins, FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "float layouts");
            free_image(&im);
            check_batch(IMGHIST_F32, 50 + k, 20, ch, 24, L_PACKED, &s, 0, FILL_MIXED);
            check_batch(IMGHIST_F32, 700, 300, ch, 3, L_PACKED, &s, 0, FILL_MIXED);
            cases += 3;
            if (k < 2 && (ch == 1 || ch == 3)) {
                /* Several chunks a block (2^23 samples or so: a few a block on
                 * 132 SMs), in both halves of the walk's two buffers. */
                img_t big = make_image(IMGHIST_F32, 4099, 2048 / ch, ch, 0, 0, &s, bins,
                                       FILL_MIXED);
                compare(&big, NULL, &s, DEV_DEV, "float layouts, large");
                free_image(&big);
                cases++;
            }
        }
    }
    printf("float layouts: %u comparisons\n", cases);
}

/* imghist_range against the CPU: every type, channels, masks, NaN/inf. */
static void test_range(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    for (int ti = 0; ti < 3; ti++) {
        for (int rep = 0; rep < (quick ? 3 : 12); rep++) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, 2);
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t ch = 1 + tu_below(&rng, 4);
            img_t im = make_image(t, 1 + tu_below(&rng, 300), 1 + tu_below(&rng, 50), ch,
                                  dsize(t) * tu_below(&rng, 5), rep % 5, &s, bins,
                                  rep == 0 ? FILL_CONSTANT : FILL_MIXED);
            img_t m = make_image(IMGHIST_U8, im.hv.width, im.hv.height, 1, 0, 0, NULL, 0,
                                 rep % 3 == 2 ? FILL_MASK_ZERO : FILL_MASK_RANDOM);
            for (int mi = 0; mi < 2; mi++) {
                for (int dev = 0; dev < 2; dev++) {
                    double lo = 0, hi = 0, clo = 0, chi = 0;
                    const imghist_view *mm = mi ? (dev ? &m.dv : &m.hv) : NULL;
                    const imghist_view gv = vw_masked(dev ? im.dv : im.hv, mm);
                    const imghist_view cv = vw_masked(im.hv, mi ? &m.hv : NULL);
                    const imghist_status g = imghist_range(gpu, &gv, &lo, &hi);
                    const imghist_status c = imghist_range(cpu, &cv, &clo, &chi);
                    assert_int_equal(g, c);
                    if (c == IMGHIST_OK) {
                        if (lo != clo || hi != chi) {
                            fail_msg("range: GPU [%.9g, %.9g], CPU [%.9g, %.9g]", lo, hi, clo, chi);
                        }
                    }
                }
            }
            free_image(&im);
            free_image(&m);
        }
    }
    /* Only NaN and inf: no finite sample. */
    float bad[6] = {NAN, INFINITY, -INFINITY, NAN, NAN, INFINITY};
    float *d;
    CUDA_OK(cudaMalloc((void **)&d, sizeof bad));
    CUDA_OK(cudaMemcpy(d, bad, sizeof bad, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view v = {.data = d, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_DEVICE, .width = 3,
        .height = 2, .pitch = 12, .channels = 1};
    double lo, hi;
    assert_int_equal(imghist_range(gpu, &v, &lo, &hi), IMGHIST_E_INVALID_ARG);
    CUDA_OK(cudaFree(d));
}

static int setup(void **state)
{
    (void)state;
    BS_GPU_PART_STATE("test_histogram_wide_batch");
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_channel_rows),
    BS_CUDA_TEST(test_masked_flat),
    BS_CUDA_TEST(test_masked_channels_flat),
    BS_CUDA_TEST(test_huge_flat),
    BS_CUDA_TEST(test_range),
    BS_CUDA_TEST(test_batches),
    BS_CUDA_TEST(test_float_layouts),
};

const bs_part histogram_wide_batch_part = BS_PART("histogram wide batches cuda", tests, setup, NULL);
