#define _POSIX_C_SOURCE 200809L
/* The CPU reference path: histogram, gray conversion, LUT, equalization, loading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>
#include <stb_image_write.h>
#include <zlib.h>

#include "cpu_hist.h"
#include "imghist.h"
#include "orient.h"
#include "cpu_suite.h"
#include "test_util.h"

/* 256 host counts at h. */
static imghist_counts host_counts(uint64_t *h)
{
    imghist_counts c = {.data = h, .len = 256, .mem = IMGHIST_MEM_HOST};
    return c;
}

/* A plain 8-bit histogram call over the view structs, to keep the checks
 * below readable. */
static imghist_status hist_u8(imghist_ctx *ctx, const uint8_t *p, size_t pitch, uint32_t w,
                              uint32_t h, uint64_t *out)
{
    const imghist_view v = u8_view(p, pitch, w, h);
    const imghist_counts c = host_counts(out);
    return imghist_histogram(ctx, p ? &v : NULL, NULL, out ? &c : NULL);
}

static imghist_status equalize_u8(imghist_ctx *ctx, const uint8_t *src, size_t sp, uint8_t *dst,
                                  size_t dp, uint32_t w, uint32_t h, uint64_t *hist)
{
    const imghist_view s = u8_view(src, sp, w, h), d = u8_view(dst, dp, w, h);
    const imghist_counts c = host_counts(hist);
    return imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, hist ? &c : NULL);
}

static uint64_t sum_hist(const uint64_t h[256])
{
    uint64_t s = 0;
    for (int i = 0; i < 256; i++) {
        s += h[i];
    }
    return s;
}

/* Histogram through the public API equals the naive count, and sums to w*h. */
static void check_hist(imghist_ctx *ctx, const uint8_t *p, size_t pitch, uint32_t w, uint32_t h)
{
    uint64_t got[256], want[256];
    memset(got, 0xab, sizeof got); /* poisoned */
    assert_int_equal(hist_u8(ctx, p, pitch, w, h, got), IMGHIST_OK);
    tu_naive_hist(p, pitch, w, h, want);
    assert_memory_equal(got, want, sizeof got);
    assert_int_equal(sum_hist(got), (uint64_t)w * h);
}

static void test_hist_constant(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t img[37 * 13];
    memset(img, 200, sizeof img);
    uint64_t h[256];
    assert_int_equal(hist_u8(ctx, img, 37, 37, 13, h), IMGHIST_OK);
    assert_int_equal(h[200], 37 * 13);
    assert_int_equal(sum_hist(h), 37 * 13);
    check_hist(ctx, img, 37, 37, 13);
    imghist_destroy(ctx);
}

static void test_hist_two_values_and_empty_ends(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t img[101];
    for (int i = 0; i < 101; i++) {
        img[i] = (i % 3 == 0) ? 10 : 20;
    }
    uint64_t h[256];
    assert_int_equal(hist_u8(ctx, img, 101, 101, 1, h), IMGHIST_OK);
    assert_int_equal(h[10], 34);
    assert_int_equal(h[20], 67);
    for (int b = 0; b < 256; b++) {
        if (b != 10 && b != 20) {
            assert_int_equal(h[b], 0);
        }
    }
    imghist_destroy(ctx);
}

static void test_hist_1x1_and_extremes(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    const uint8_t vals[] = {0, 255, 128};
    for (size_t i = 0; i < sizeof vals; i++) {
        uint64_t h[256];
        assert_int_equal(hist_u8(ctx, &vals[i], 1, 1, 1, h), IMGHIST_OK);
        assert_int_equal(h[vals[i]], 1);
        assert_int_equal(sum_hist(h), 1);
    }
    imghist_destroy(ctx);
}

/* Odd widths, pitches with padding that holds a value the image does not:
 * padding must never be counted. */
static void test_hist_odd_widths_and_pitch(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_hist_odd_widths_and_pitch"));
    for (uint32_t w = 1; w <= 67; w += 3) {
        for (uint32_t h = 1; h <= 9; h += 4) {
            const size_t pitch = w + tu_below(&r, 19);
            uint8_t *img = malloc(pitch * h + 1);
            memset(img, 255, pitch * h + 1);
            for (uint32_t y = 0; y < h; y++) {
                for (uint32_t x = 0; x < w; x++) {
                    img[y * pitch + x] = (uint8_t)tu_below(&r, 255); /* never 255 */
                }
            }
            check_hist(ctx, img, pitch, w, h);
            uint64_t got[256];
            hist_u8(ctx, img, pitch, w, h, got);
            assert_int_equal(got[255], 0);
            free(img);
        }
    }
    imghist_destroy(ctx);
}

static void test_hist_random_large(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_hist_random_large"));
    const uint32_t w = 1999, h = 1001;
    uint8_t *img = malloc((size_t)w * h);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        img[i] = (uint8_t)(tu_next(&r) >> 56);
    }
    check_hist(ctx, img, w, w, h);
    free(img);
    imghist_destroy(ctx);
}

/* More than 2^32 pixels without gigabytes: every row of this "image" is the
 * same 64 KiB buffer (pitch 0, which only the internal function allows), so
 * the 32-bit sub-histograms must be folded into 64-bit counts in time. */
static void test_hist_counts_past_2_32(void **state)
{
    (void)state;
    enum { W = 65536 };
    static uint8_t row[W];
    memset(row, 9, sizeof row);
    row[100] = 200;
    const uint32_t h = 65539; /* (2^16 - 1) * h > 2^32 of one value */
    uint64_t hist[256];
    ih_cpu_hist_u8(row, 0, W, h, hist);
    assert_int_equal(hist[200], h);
    assert_int_equal(hist[9], (uint64_t)(W - 1) * h);
    assert_true(hist[9] > UINT32_MAX);
    assert_int_equal(sum_hist(hist), (uint64_t)W * h);
}

static void test_hist_bad_args(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t px[4] = {0};
    uint64_t h[256];
    assert_int_equal(hist_u8(ctx, NULL, 1, 1, 1, h), IMGHIST_E_INVALID_ARG);
    assert_true(strlen(imghist_last_error(ctx)) > 0);
    assert_int_equal(hist_u8(ctx, px, 1, 0, 1, h), IMGHIST_E_INVALID_ARG);
    assert_int_equal(hist_u8(ctx, px, 1, 2, 1, h), IMGHIST_E_INVALID_ARG);
    assert_int_equal(hist_u8(ctx, px, 4, 4, 1, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(hist_u8(NULL, px, 4, 4, 1, h), IMGHIST_E_INVALID_ARG);
    assert_int_equal(hist_u8(ctx, px, 4, 4, 1, h), IMGHIST_OK);
    assert_string_equal(imghist_last_error(ctx), "");
    imghist_destroy(ctx);
    imghist_destroy(NULL);
}

/* ---- LUT ---- */

static void test_lut_constant_image(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    h[77] = 1000;
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    for (int b = 0; b < 256; b++) {
        /* the identity: OpenCV leaves a flat image as it is (sets it to 77),
         * and a mask that selects one value leaves every pixel as it is */
        assert_int_equal(lut[b], b);
    }
}

static void test_lut_two_values(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    h[10] = 3;
    h[20] = 1;
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    assert_int_equal(lut[10], 0);
    assert_int_equal(lut[20], 255);
}

/* scale = 255/6 = 42.5: one pixel past the first bin lands exactly on .5 and
 * must round to even (42), as cvRound does, not up (43). */
static void test_lut_rounds_half_to_even(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    for (int b = 0; b <= 6; b++) {
        h[b] = 1;
    }
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    assert_int_equal(lut[0], 0);
    assert_int_equal(lut[1], 42);  /* 42.5 -> 42 */
    assert_int_equal(lut[2], 85);
    assert_int_equal(lut[3], 128); /* 127.5 -> 128 */
    assert_int_equal(lut[4], 170);
    assert_int_equal(lut[5], 212); /* 212.5 -> 212 */
    assert_int_equal(lut[6], 255);
}

static void test_lut_monotonic_random(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_lut_monotonic_random"));
    for (int iter = 0; iter < 2000; iter++) {
        uint64_t h[256] = {0};
        const int used = 1 + (int)tu_below(&r, 256);
        for (int k = 0; k < used; k++) {
            h[tu_below(&r, 256)] += 1 + tu_below(&r, iter % 2 ? 1000000 : 10);
        }
        uint8_t lut[256];
        assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
        int first = 0, last = 255, distinct = 0;
        while (h[first] == 0) first++;
        while (h[last] == 0) last--;
        for (int b = 0; b < 256; b++) distinct += h[b] != 0;
        for (int b = 1; b < 256; b++) {
            assert_true(lut[b] >= lut[b - 1]);
        }
        if (distinct > 1) {
            assert_int_equal(lut[first], 0);
            assert_int_equal(lut[last], 255); /* the top value always reaches 255 */
        }
    }
}

static void test_lut_empty_is_error(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_equalize_lut(NULL, 256, IMGHIST_EQ_OPENCV, lut),
                     IMGHIST_E_INVALID_ARG);
}

/* Equalization through the public API, in place and pitched, padding untouched. */
static void test_equalize_pitched_and_in_place(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_equalize_pitched_and_in_place"));
    const uint32_t w = 31, h = 7;
    const size_t sp = 40, dp = 33;
    uint8_t src[40 * 7], dst[33 * 7];
    memset(dst, 0xee, sizeof dst);
    for (size_t i = 0; i < sizeof src; i++) {
        src[i] = (uint8_t)(100 + tu_below(&r, 20));
    }
    uint64_t hist[256];
    uint8_t lut[256];
    assert_int_equal(equalize_u8(ctx, src, sp, dst, dp, w, h, hist), IMGHIST_OK);
    uint64_t want[256];
    tu_naive_hist(src, sp, w, h, want);
    assert_memory_equal(hist, want, sizeof hist);
    assert_int_equal(imghist_equalize_lut(want, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < dp; x++) {
            const uint8_t d = dst[y * dp + x];
            if (x < w) {
                assert_int_equal(d, lut[src[y * sp + x]]);
            } else {
                assert_int_equal(d, 0xee);
            }
        }
    }
    /* In place gives the same pixels. */
    assert_int_equal(equalize_u8(ctx, src, sp, src, sp, w, h, NULL), IMGHIST_OK);
    for (uint32_t y = 0; y < h; y++) {
        assert_memory_equal(src + y * sp, dst + y * dp, w);
    }
    imghist_destroy(ctx);
}

/* ---- loading and gray conversion ---- */

static imghist_image *load_png(imghist_ctx *ctx, uint32_t w, uint32_t h, int ct, int depth,
                               const void *samples, const uint8_t *pal, int npal)
{
    size_t size = 0;
    uint8_t *png = tu_png_encode(w, h, ct, depth, samples, pal, npal, &size);
    assert_non_null(png);
    imghist_image *img = NULL;
    imghist_status st = imghist_load_memory(ctx, png, size, "test.png", &img);
    free(png);
    assert_int_equal(st, IMGHIST_OK);
    assert_int_equal(img->view.width, w);
    assert_int_equal(img->view.height, h);
    return img;
}

static void test_gray_rgb_weights(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_gray_rgb_weights"));
    const uint32_t w = 61, h = 17;
    uint8_t rgb[61 * 17 * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)tu_next(&r);
    }
    /* Corners that pin the weights: white, black, pure primaries. */
    const uint8_t fixed[5][3] = {{255, 255, 255}, {0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {0, 0, 255}};
    memcpy(rgb, fixed, sizeof fixed);
    imghist_image *img = load_png(ctx, w, h, PNG_COLOR_TYPE_RGB, 8, rgb, NULL, 0);
    assert_int_equal(pixels_of(img)[0], 255);
    assert_int_equal(pixels_of(img)[1], 0);
    assert_int_equal(pixels_of(img)[2], 76);
    assert_int_equal(pixels_of(img)[3], 150);
    assert_int_equal(pixels_of(img)[4], 29);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        assert_int_equal(pixels_of(img)[i],
                         cv_gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]));
    }
    imghist_image_free(img);

    /* RGBA: alpha ignored (a transparent pixel keeps its colour's gray). */
    uint8_t rgba[61 * 17 * 4];
    for (size_t i = 0; i < (size_t)w * h; i++) {
        memcpy(rgba + 4 * i, rgb + 3 * i, 3);
        rgba[4 * i + 3] = (uint8_t)(i * 7);
    }
    img = load_png(ctx, w, h, PNG_COLOR_TYPE_RGB_ALPHA, 8, rgba, NULL, 0);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        assert_int_equal(pixels_of(img)[i],
                         cv_gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]));
    }
    imghist_image_free(img);
    imghist_destroy(ctx);
}

static void test_gray_inputs_stay(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    const uint32_t w = 16, h = 16;
    uint8_t g[256], ga[512];
    uint16_t g16[256];
    for (int i = 0; i < 256; i++) {
        g[i] = (uint8_t)i;
        ga[2 * i] = (uint8_t)i;
        ga[2 * i + 1] = (uint8_t)(255 - i);
        g16[i] = (uint16_t)(i * 257 + (i & 1 ? 255 - i : 0)); /* low byte must not matter */
    }
    imghist_image *img = load_png(ctx, w, h, PNG_COLOR_TYPE_GRAY, 8, g, NULL, 0);
    assert_memory_equal(pixels_of(img), g, 256);
    imghist_image_free(img);
    img = load_png(ctx, w, h, PNG_COLOR_TYPE_GRAY_ALPHA, 8, ga, NULL, 0);
    assert_memory_equal(pixels_of(img), g, 256);
    imghist_image_free(img);
    img = load_png(ctx, w, h, PNG_COLOR_TYPE_GRAY, 16, g16, NULL, 0);
    for (int i = 0; i < 256; i++) {
        assert_int_equal(pixels_of(img)[i], g16[i] >> 8);
    }
    imghist_image_free(img);
    imghist_destroy(ctx);
}

static void test_gray_16bit_rgb_and_palette(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint16_t rgb16[4 * 3] = {65535, 0, 0, 0, 65535, 0, 0, 0, 65535, 0x1234, 0xabcd, 0x7f00};
    imghist_image *img = load_png(ctx, 4, 1, PNG_COLOR_TYPE_RGB, 16, rgb16, NULL, 0);
    assert_int_equal(pixels_of(img)[0], cv_gray(255, 0, 0));
    assert_int_equal(pixels_of(img)[1], cv_gray(0, 255, 0));
    assert_int_equal(pixels_of(img)[2], cv_gray(0, 0, 255));
    assert_int_equal(pixels_of(img)[3], cv_gray(0x12, 0xab, 0x7f));
    imghist_image_free(img);

    const uint8_t pal[3 * 3] = {10, 200, 30, 255, 255, 255, 1, 2, 3};
    const uint8_t idx[6] = {0, 1, 2, 2, 1, 0};
    img = load_png(ctx, 3, 2, PNG_COLOR_TYPE_PALETTE, 8, idx, pal, 3);
    for (int i = 0; i < 6; i++) {
        const uint8_t *c = pal + 3 * idx[i];
        assert_int_equal(pixels_of(img)[i], cv_gray(c[0], c[1], c[2]));
    }
    imghist_image_free(img);
    imghist_destroy(ctx);
}

/* BMP and TGA (imghist's own readers) of files stb_image_write made: the same gray
 * as PNG. */
static void test_other_formats(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t rgb[9 * 5 * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)(i * 37 + 11);
    }
    static struct membuf m;
    for (int fmt = 0; fmt < 2; fmt++) {
        m.len = 0;
        int ok = fmt == 0 ? stbi_write_bmp_to_func(to_mem, &m, 9, 5, 3, rgb)
                          : stbi_write_tga_to_func(to_mem, &m, 9, 5, 3, rgb);
        assert_true(ok);
        imghist_image *img = NULL;
        assert_int_equal(imghist_load_memory(ctx, m.data, m.len, fmt ? "x.tga" : "x.bmp", &img),
                         IMGHIST_OK);
        for (int i = 0; i < 45; i++) {
            assert_int_equal(pixels_of(img)[i],
                         cv_gray(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]));
        }
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

/* A Photoshop file of w x h (w <= 128) with `channels` 8-bit planes;
 * sample(c, x, y) gives the values. RLE rows are single literal packets. */
static size_t make_psd(uint8_t *out, uint32_t w, uint32_t h, uint32_t channels, int rle,
                       uint8_t (*sample)(uint32_t c, uint32_t x, uint32_t y))
{
    size_t n = 0;
    memcpy(out, "8BPS\0\1\0\0\0\0\0\0", 12);
    n = 12;
    const uint32_t fields[] = {channels, h >> 16, h & 0xffff, w >> 16, w & 0xffff, 8, 3};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        out[n++] = (uint8_t)(fields[i] >> 8);
        out[n++] = (uint8_t)fields[i];
    }
    memset(out + n, 0, 12); /* empty mode data, resources, layers */
    n += 12;
    out[n++] = 0;
    out[n++] = (uint8_t)(rle ? 1 : 0);
    if (rle) {
        for (uint32_t i = 0; i < channels * h; i++) {
            out[n++] = 0;
            out[n++] = (uint8_t)(w + 1);
        }
    }
    for (uint32_t c = 0; c < channels; c++) {
        for (uint32_t y = 0; y < h; y++) {
            if (rle) {
                out[n++] = (uint8_t)(w - 1);
            }
            for (uint32_t x = 0; x < w; x++) {
                out[n++] = sample(c, x, y);
            }
        }
    }
    return n;
}

static uint8_t psd_sample(uint32_t c, uint32_t x, uint32_t y)
{
    /* Dark colour under partial alpha: what stb_image's matte removal would
     * push out of the byte range (tests/crashers/stb_psd_*). */
    return c == 3 ? (uint8_t)(1 + (x * 7 + y * 13) % 254) : (uint8_t)((x * 29 + y * 7 + c * 50) % 120);
}

/* PSD: gray from the colour planes only, whatever the alpha and extra
 * channels hold, raw and RLE; three channels the same way. */
static void test_psd_alpha_ignored(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static uint8_t buf[1 << 16];
    const uint32_t w = 13, h = 6;
    for (uint32_t channels = 3; channels <= 5; channels++) {
        for (int rle = 0; rle < 2; rle++) {
            const size_t n = make_psd(buf, w, h, channels, rle, psd_sample);
            imghist_image *img = NULL;
            assert_int_equal(imghist_load_memory(ctx, buf, n, "x.psd", &img), IMGHIST_OK);
            assert_int_equal(img->view.width, w);
            assert_int_equal(img->view.height, h);
            for (uint32_t y = 0; y < h; y++) {
                for (uint32_t x = 0; x < w; x++) {
                    assert_int_equal(pixels_of(img)[y * img->view.pitch + x],
                                     cv_gray(psd_sample(0, x, y), psd_sample(1, x, y),
                                             psd_sample(2, x, y)));
                }
            }
            imghist_image_free(img);
            /* Cut inside the planes: an error, not a crash. */
            img = NULL;
            imghist_status st = imghist_load_memory(ctx, buf, n - 20, "cut.psd", &img);
            if (st == IMGHIST_OK) {
                imghist_image_free(img); /* stb_image pads a raw plane that ends early */
            } else {
                assert_int_equal(st, IMGHIST_E_DECODE);
                assert_null(img);
            }
        }
    }
    imghist_destroy(ctx);
}

/* EXIF orientations against OpenCV's steps done one by one: transpose for
 * 5..8, then flip around the vertical axis (2, 6), both axes (3, 7) or the
 * horizontal axis (4, 8). */
static void test_orientations(void **state)
{
    (void)state;
    enum { W = 5, H = 3 };
    uint8_t src[W * H];
    for (int i = 0; i < W * H; i++) {
        src[i] = (uint8_t)(i + 1);
    }
    for (int o = 1; o <= 8; o++) {
        uint8_t step[W * H], want[W * H];
        uint32_t w = W, h = H;
        if (o >= 5) {
            for (uint32_t y = 0; y < W; y++) {
                for (uint32_t x = 0; x < H; x++) {
                    step[y * H + x] = src[x * W + y];
                }
            }
            w = H;
            h = W;
        } else {
            memcpy(step, src, sizeof src);
        }
        const int fx = o == 2 || o == 3 || o == 6 || o == 7;
        const int fy = o == 3 || o == 4 || o == 7 || o == 8;
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t x = 0; x < w; x++) {
                want[y * w + x] = step[(fy ? h - 1 - y : y) * w + (fx ? w - 1 - x : x)];
            }
        }
        uint32_t gw = W, gh = H;
        uint8_t *got = ih_orient(src, &gw, &gh, o);
        assert_non_null(got);
        assert_int_equal(gw, w);
        assert_int_equal(gh, h);
        assert_memory_equal(got, want, sizeof want);
        free(got);
    }
    /* 6 is the common phone photo: a 90-degree turn clockwise. */
    uint32_t w = W, h = H;
    uint8_t *r = ih_orient(src, &w, &h, 6);
    assert_non_null(r);
    assert_int_equal(r[0], src[(H - 1) * W]); /* bottom-left goes to top-left */
    assert_int_equal(r[w - 1], src[0]);       /* top-left goes to top-right */
    free(r);
}

static void test_load_errors(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    imghist_image *img = (imghist_image *)1;
    assert_int_equal(imghist_load_memory(ctx, "", 0, "empty.png", &img), IMGHIST_E_DECODE);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "empty.png"));
    const char text[] = "this is not an image, just text\n";
    assert_int_equal(imghist_load_memory(ctx, text, sizeof text, "text.png", &img),
                     IMGHIST_E_DECODE);
    assert_non_null(strstr(imghist_last_error(ctx), "text.png"));
    /* The message stays one line whatever the name holds. */
    assert_int_equal(imghist_load_memory(ctx, text, sizeof text, "two\nlines\r.png", &img),
                     IMGHIST_E_DECODE);
    assert_non_null(strstr(imghist_last_error(ctx), "two?lines?.png"));

    /* A valid PNG cut short. */
    uint8_t px[64 * 64];
    for (int i = 0; i < 64 * 64; i++) px[i] = (uint8_t)(i * 13);
    size_t size = 0;
    uint8_t *png = tu_png_encode(64, 64, PNG_COLOR_TYPE_GRAY, 8, px, NULL, 0, &size);
    for (size_t cut = 1; cut < size; cut += (cut < 64 ? 1 : 97)) {
        imghist_status st = imghist_load_memory(ctx, png, cut, "cut.png", &img);
        assert_int_not_equal(st, IMGHIST_OK);
        assert_null(img);
    }
    /* Over the pixel limit: refused from the header, before decoding. */
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64 - 1), IMGHIST_OK);
    assert_int_equal(imghist_load_memory(ctx, png, size, "big.png", &img), IMGHIST_E_LIMIT);
    assert_non_null(strstr(imghist_last_error(ctx), "limit"));
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64), IMGHIST_OK);
    assert_int_equal(imghist_load_memory(ctx, png, size, "ok.png", &img), IMGHIST_OK);
    imghist_image_free(img);
    free(png);
    assert_int_equal(imghist_load_file(ctx, "/nonexistent/dir/x.png", &img), IMGHIST_E_IO);
    assert_non_null(strstr(imghist_last_error(ctx), "/nonexistent/dir/x.png"));
    assert_int_equal(imghist_load_file(ctx, "/", &img), IMGHIST_E_IO);
    assert_non_null(strstr(imghist_last_error(ctx), "directory"));
    imghist_destroy(ctx);
}

/* Netpbm files that end early or break the format are refused with a reason
 * (stb_image, which read them before src/io/decode_pnm.c, returned a
 * truncated raw file as an image of uninitialised pixels); every cut of a
 * valid file is refused. */
/* A BMP of 2x2 pixels: the 14-byte file header, an info header of hs bytes
 * (width, height, one plane, bits, compression; the rest 0) and 16 bytes of
 * pixels. */
static size_t make_bmp(uint8_t *out, uint32_t hs, uint16_t bits, uint32_t compression)
{
    const size_t n = 14 + hs + 16;
    memset(out, 0, n);
    out[0] = 'B';
    out[1] = 'M';
    out[2] = (uint8_t)n;
    out[10] = (uint8_t)(14 + hs); /* pixel data offset */
    out[14] = (uint8_t)hs;
    if (hs == 12) {
        out[18] = 2; /* OS/2 1.x: 16-bit width and height */
        out[20] = 2;
        out[22] = 1;
        out[24] = (uint8_t)bits;
        return n;
    }
    out[18] = 2;
    out[22] = 2;
    out[26] = 1;
    out[28] = (uint8_t)bits;
    out[29] = (uint8_t)(bits >> 8);
    out[30] = (uint8_t)compression;
    return n;
}

/* BMP headers refused with a reason. Compression codes 4 and 5 mean an
 * embedded JPEG and PNG in a Windows header only: in an OS/2 2.x header
 * (16 to 64 bytes, not 40, 52 or 56) 5 means nothing, and a depth of 0 with
 * it once reached the pixel loop and divided by zero (the crasher
 * tests/crashers/bmp_os2_code5_depth0_division_by_zero.bmp). */
static void test_bmp_header_refusals(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static const struct {
        uint32_t hs;
        uint16_t bits;
        uint32_t compression;
        const char *why;
    } bad[] = {
        {41, 0, 5, "bit depth is not valid"},
        {64, 0, 5, "bit depth is not valid"},
        {16, 0, 5, "bit depth is not valid"},
        {41, 8, 5, "compression type is not supported"},
        {64, 24, 5, "compression type is not supported"},
        {41, 0, 0, "bit depth is not valid"},
        {40, 3, 0, "bit depth is not valid"},
        {40, 8, 9, "compression type is not supported"},
        {40, 0, 5, "PNG"},  /* Windows: an embedded PNG, which is not there */
        {40, 0, 4, "JPEG"}, /* and an embedded JPEG */
        {12, 0, 0, "bit depth is not valid"},
    };
    uint8_t buf[14 + 64 + 16];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const size_t n = make_bmp(buf, bad[i].hs, bad[i].bits, bad[i].compression);
        imghist_image *img = (imghist_image *)1;
        const imghist_status st = imghist_load_memory(ctx, buf, n, "bad.bmp", &img);
        if (st != IMGHIST_E_DECODE || strstr(imghist_last_error(ctx), bad[i].why) == NULL ||
            strstr(imghist_last_error(ctx), "bad.bmp") == NULL) {
            fail_msg("case %zu: status %d, message '%s' (want '%s')", i, (int)st,
                     imghist_last_error(ctx), bad[i].why);
        }
        assert_null(img);
    }
    /* The same headers with a valid depth and no compression load. */
    static const uint32_t sizes[] = {12, 16, 40, 41, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const size_t n = make_bmp(buf, sizes[i], 8, 0);
        imghist_image *img = NULL;
        if (imghist_load_memory(ctx, buf, n, "good.bmp", &img) != IMGHIST_OK) {
            fail_msg("header of %u bytes: %s", sizes[i], imghist_last_error(ctx));
        }
        assert_int_equal(img->view.width, 2);
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

static void test_pnm_errors(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static const struct {
        const char *bytes, *why;
    } bad[] = {
        {"P6 1 1 1000\n\x01\x02\x03", "ends early"},  /* 17 bytes, 6 needed */
        {"P5 2 2 255\n\x01\x02\x03", "ends early"},
        {"P4 9 2\n\xff\x00\xff", "ends early"},       /* rows of 2 bytes */
        {"P2 3 1 255\n1 2", "ends early"},
        {"P1 3 1\n1 0", "ends early"},
        {"P1 3 1\n1 0 2", "other than 0 and 1"},
        {"P2 2 1 255\n1 -2", "other than a number"},
        {"P3 1 1 255\n1 2 x", "other than a number"},
        {"P5 0 1 255\n", "size is 0x1"},
        {"P5 1 1 0\n\x00", "maxval 0"},
        {"P5 1 1 65536\n\x00\x00", "maxval 65536"},
        {"P5 1 1 255", "malformed"},                      /* no byte after maxval */
        {"P5 1 1 255#\n\x07", "malformed"},
        {"P5 1 x 255\n\x07", "malformed"},
        {"P5 1234567890 1 255\n\x07", "malformed"},     /* ten digits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        imghist_image *img = (imghist_image *)1;
        const imghist_status st =
            imghist_load_memory(ctx, bad[i].bytes, strlen(bad[i].bytes), "bad.pnm", &img);
        if (st != IMGHIST_E_DECODE || strstr(imghist_last_error(ctx), bad[i].why) == NULL ||
            strstr(imghist_last_error(ctx), "bad.pnm") == NULL) {
            fail_msg("case %zu: status %d, message '%s' (want '%s')", i, (int)st,
                     imghist_last_error(ctx), bad[i].why);
        }
        assert_null(img);
    }
    /* A valid plain and a valid raw file, then every cut of them but the
     * plain file's trailing newline (its last number is complete without). */
    static const char plain[] = "P2\n# c\n3 2\n9\n0 3 9\n9 12 1\n";
    static const char raw[] = "P6 2 1 255\n\x01\x02\x03\x04\x05\x06";
    const struct {
        const char *bytes;
        size_t size, full;
    } ok[] = {{plain, sizeof plain - 1, sizeof plain - 2}, {raw, sizeof raw - 1, sizeof raw - 1}};
    for (size_t k = 0; k < 2; k++) {
        imghist_image *img = NULL;
        assert_int_equal(imghist_load_memory(ctx, ok[k].bytes, ok[k].size, "ok.pnm", &img),
                         IMGHIST_OK);
        imghist_image_free(img);
        for (size_t cut = 0; cut < ok[k].full; cut++) {
            img = (imghist_image *)1;
            assert_int_not_equal(imghist_load_memory(ctx, ok[k].bytes, cut, "cut.pnm", &img),
                                 IMGHIST_OK);
            assert_null(img);
        }
    }
    /* The plain file's samples: 9 is maxval, 12 is clamped to it, and
     * 8-bit plain samples scale to 255 (v * 255 / 9, rounded down). */
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_memory(ctx, plain, sizeof plain - 1, "ok.pgm", &img), IMGHIST_OK);
    static const uint8_t want[6] = {0, 85, 255, 255, 255, 28};
    assert_int_equal(img->view.width, 3);
    assert_int_equal(img->view.height, 2);
    for (int y = 0; y < 2; y++) {
        assert_memory_equal((const uint8_t *)img->view.data + (size_t)y * img->view.pitch,
                            want + 3 * y, 3);
    }
    imghist_image_free(img);
    imghist_destroy(ctx);
}

/* Written PNG reads back bit for bit; a failed write leaves nothing behind. */
/* libpng checks CRCs (stb_image would not): a flipped byte anywhere in a
 * chunk is an error, never a silently different image. */
static void test_png_crc_errors(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t px[32 * 32];
    for (int i = 0; i < 32 * 32; i++) px[i] = (uint8_t)(i * 7);
    size_t size = 0;
    uint8_t *png = tu_png_encode(32, 32, PNG_COLOR_TYPE_GRAY, 8, px, NULL, 0, &size);
    imghist_image *img = NULL;
    /* Every byte after the signature belongs to a chunk's length, type, data
     * or CRC; corrupting any must fail. */
    for (size_t at = 8; at < size; at++) {
        png[at] ^= 0x20;
        imghist_status st = imghist_load_memory(ctx, png, size, "crc.png", &img);
        png[at] ^= 0x20;
        if (st == IMGHIST_OK) {
            imghist_image_free(img);
            fail_msg("corrupting byte %zu of %zu went unnoticed", at, size);
        }
        assert_non_null(strstr(imghist_last_error(ctx), "crc.png"));
    }
    free(png);
    imghist_destroy(ctx);
}

/* A JPEG cut anywhere, down to a missing end-of-image marker, is an error,
 * unless IMGHIST_P_LOAD_TRUNCATED asks to read it. */
static void test_jpeg_truncated(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static struct membuf m;
    m.len = 0;
    uint8_t rgb[40 * 24 * 3];
    for (size_t i = 0; i < sizeof rgb; i++) rgb[i] = (uint8_t)(i * 29 + (i / 120) * 3);
    assert_true(stbi_write_jpg_to_func(to_mem, &m, 40, 24, 3, rgb, 90));
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_memory(ctx, m.data, m.len, "ok.jpg", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 40);
    imghist_image_free(img);
    for (size_t cut = 1; cut < m.len; cut++) {
        imghist_status st = imghist_load_memory(ctx, m.data, cut, "cut.jpg", &img);
        if (st == IMGHIST_OK) {
            imghist_image_free(img);
            fail_msg("JPEG cut to %zu of %zu bytes decoded", cut, m.len);
        }
        assert_non_null(strstr(imghist_last_error(ctx), "cut.jpg"));
    }
    /* IMGHIST_P_LOAD_TRUNCATED = 1: a cut inside the entropy-coded data is
     * read, flagged, the same twice; cuts in the headers are still errors;
     * a whole file is not flagged. */
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_TRUNCATED, 1), IMGHIST_OK);
    assert_int_equal(imghist_load_memory(ctx, m.data, m.len, "ok.jpg", &img), IMGHIST_OK);
    assert_int_equal(img->flags, 0u);
    imghist_image_free(img);
    size_t read = 0;
    for (size_t cut = 1; cut < m.len; cut++) {
        imghist_image *again = NULL;
        if (imghist_load_memory(ctx, m.data, cut, "cut.jpg", &img) != IMGHIST_OK) {
            assert_int_equal(read, 0); /* once the pixel data starts, every cut is read */
            continue;
        }
        read++;
        assert_int_equal(img->flags, IMGHIST_IMAGE_TRUNCATED);
        assert_int_equal(img->view.width, 40);
        assert_int_equal(img->view.height, 24);
        assert_int_equal(imghist_load_memory(ctx, m.data, cut, "cut.jpg", &again), IMGHIST_OK);
        assert_memory_equal(img->view.data, again->view.data, 40 * 24);
        imghist_image_free(again);
        imghist_image_free(img);
    }
    assert_true(read > m.len / 2);
    imghist_destroy(ctx);
}

static void test_write_png_roundtrip(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200], bad[4200];
    snprintf(path, sizeof path, "%s/out.png", dir);
    snprintf(bad, sizeof bad, "%s/missing/out.png", dir);
    uint8_t px[13 * 5 + 3];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)(i * 31);
    const imghist_view pv = u8_view(px, 13, 13, 5);
    assert_int_equal(imghist_write_png(ctx, path, &pv), IMGHIST_OK);
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_file(ctx, path, &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 13);
    assert_memory_equal(pixels_of(img), px, 13 * 5);
    imghist_image_free(img);
    assert_int_equal(imghist_write_png(ctx, bad, &pv), IMGHIST_E_IO);
    assert_non_null(strstr(imghist_last_error(ctx), bad));
    assert_false(tu_exists(bad));
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* ---- contexts ---- */

static void test_context_backends(void **state)
{
    (void)state;
    imghist_ctx *ctx = NULL;
    setenv("IMGHIST_BACKEND", "cpu", 1);
    assert_int_equal(imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    imghist_destroy(ctx);
    setenv("IMGHIST_BACKEND", "bogus", 1);
    assert_int_equal(imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "bogus"));
    imghist_destroy(ctx);
    unsetenv("IMGHIST_BACKEND");

    /* Whether or not this machine has a GPU, auto works and CUDA either works
     * or says plainly that there is no usable GPU. */
    assert_int_equal(imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx), IMGHIST_OK);
    const imghist_backend chosen = imghist_get_backend(ctx);
    assert_string_equal(imghist_last_error(ctx), "");
    imghist_destroy(ctx);
    imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx);
    if (chosen == IMGHIST_BACKEND_CPU) {
        assert_true(st == IMGHIST_E_NO_GPU || st == IMGHIST_E_UNSUPPORTED);
        assert_non_null(strstr(imghist_last_error(ctx), "no usable GPU"));
    } else {
        assert_int_equal(st, IMGHIST_OK);
    }
    imghist_destroy(ctx);

    assert_int_equal(imghist_version(), IMGHIST_VERSION_NUMBER);
    assert_string_equal(imghist_version_string(), IMGHIST_VERSION_STRING);
    assert_string_equal(imghist_strerror(IMGHIST_OK), "success");
    assert_string_equal(imghist_backend_name(IMGHIST_BACKEND_CUDA), "cuda");
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, NULL), IMGHIST_E_INVALID_ARG);
}

/* ---- IMGHIST_P_LOAD_GRAY = IMGHIST_GRAY_LUMA (OpenCV's IMREAD_GRAYSCALE) ----
 * Bit-exactness against OpenCV itself is tests/test_opencv_ref.py's; these
 * check the properties of the luma mode that can fail without OpenCV. */

/* test_cpu_luma.c's tests: IMGHIST_P_LOAD_GRAY and PNG levels. */
extern const struct CMUnitTest cpu_luma_tests[];
extern const size_t cpu_luma_test_count;

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_constant),
        cmocka_unit_test(test_hist_two_values_and_empty_ends),
        cmocka_unit_test(test_hist_1x1_and_extremes),
        cmocka_unit_test(test_hist_odd_widths_and_pitch),
        cmocka_unit_test(test_hist_random_large),
        cmocka_unit_test(test_hist_counts_past_2_32),
        cmocka_unit_test(test_hist_bad_args),
        cmocka_unit_test(test_lut_constant_image),
        cmocka_unit_test(test_lut_two_values),
        cmocka_unit_test(test_lut_rounds_half_to_even),
        cmocka_unit_test(test_lut_monotonic_random),
        cmocka_unit_test(test_lut_empty_is_error),
        cmocka_unit_test(test_equalize_pitched_and_in_place),
        cmocka_unit_test(test_gray_rgb_weights),
        cmocka_unit_test(test_gray_inputs_stay),
        cmocka_unit_test(test_gray_16bit_rgb_and_palette),
        cmocka_unit_test(test_other_formats),
        cmocka_unit_test(test_psd_alpha_ignored),
        cmocka_unit_test(test_orientations),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_pnm_errors),
        cmocka_unit_test(test_bmp_header_refusals),
        cmocka_unit_test(test_png_crc_errors),
        cmocka_unit_test(test_jpeg_truncated),
        cmocka_unit_test(test_write_png_roundtrip),
        cmocka_unit_test(test_context_backends),
    };
    const int core = cmocka_run_group_tests(tests, NULL, NULL);
    const int luma = _cmocka_run_group_tests("cpu_luma", cpu_luma_tests, cpu_luma_test_count, NULL,
                                             NULL);
    return core != 0 || luma != 0;
}
