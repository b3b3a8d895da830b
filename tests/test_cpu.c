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
#include "test_util.h"

static imghist_ctx *cpu_ctx(void)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    return ctx;
}

/* A U8 host view of w x h samples at p. The library only reads an input view,
 * so const is cast away for the struct's sake. */
static imghist_view u8_view(const uint8_t *p, size_t pitch, uint32_t w, uint32_t h)
{
    imghist_view v = {.data = (void *)(uintptr_t)p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                      .width = w, .height = h, .pitch = pitch};
    return v;
}

/* 256 host counts at h. */
static imghist_counts host_counts(uint64_t *h)
{
    imghist_counts c = {.data = h, .len = 256, .mem = IMGHIST_MEM_HOST};
    return c;
}

/* 0.1's call shape over 0.2's structs, to keep the checks below readable. */
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

static const uint8_t *pixels_of(const imghist_image *img)
{
    return (const uint8_t *)img->view.data;
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
        assert_int_equal(lut[b], 77); /* OpenCV leaves a flat image as it is */
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

static uint8_t cv_gray(int r, int g, int b)
{
    return (uint8_t)((9798 * r + 19235 * g + 3735 * b + 16384) >> 15);
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

struct membuf {
    uint8_t data[1 << 16];
    size_t len;
};

static void to_mem(void *ctx, void *data, int size)
{
    struct membuf *m = ctx;
    memcpy(m->data + m->len, data, (size_t)size);
    m->len += (size_t)size;
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

static const char *samples_dir(void)
{
    const char *d = getenv("IMGHIST_SAMPLES");
    if (d == NULL || *d == '\0') {
        fail_msg("IMGHIST_SAMPLES is not set (meson test sets it to the samples folder)");
    }
    return d;
}

static imghist_image *load_sample(imghist_ctx *ctx, const char *name, imghist_gray_mode mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", samples_dir(), name);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, mode), IMGHIST_OK);
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_file(ctx, path, &img), IMGHIST_OK);
    return img;
}

static imghist_image *load_bytes(imghist_ctx *ctx, const uint8_t *data, size_t size,
                                 imghist_gray_mode mode)
{
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, mode), IMGHIST_OK);
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_memory(ctx, data, size, "test", &img), IMGHIST_OK);
    return img;
}

static size_t count_differences(const imghist_image *a, const imghist_image *b)
{
    assert_int_equal(a->view.width, b->view.width);
    assert_int_equal(a->view.height, b->view.height);
    size_t n = 0;
    for (size_t i = 0; i < (size_t)a->view.width * a->view.height; i++) {
        n += pixels_of(a)[i] != pixels_of(b)[i];
    }
    return n;
}

/* A gray file has nothing to convert: both modes give the stored samples. */
static void test_luma_gray_png_same_as_default(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static const char *const gray_samples[] = {"camera.png", "moon.png"};
    for (size_t s = 0; s < 2; s++) {
        imghist_image *def = load_sample(ctx, gray_samples[s], IMGHIST_GRAY_BGR2GRAY);
        imghist_image *luma = load_sample(ctx, gray_samples[s], IMGHIST_GRAY_LUMA);
        assert_int_equal(count_differences(def, luma), 0);
        imghist_image_free(def);
        imghist_image_free(luma);
    }
    /* 16-bit gray with and without alpha: the high byte in both modes. */
    uint16_t g16[64 * 2];
    for (int i = 0; i < 128; i++) {
        g16[i] = (uint16_t)(i * 517 + 3);
    }
    for (int ct = 0; ct < 2; ct++) {
        const int color_type = ct ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY;
        const uint32_t w = ct ? 8 : 16;
        size_t size = 0;
        uint8_t *png = tu_png_encode(w, 8, color_type, 16, g16, NULL, 0, &size);
        assert_non_null(png);
        imghist_image *luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
        for (uint32_t i = 0; i < w * 8; i++) {
            assert_int_equal(pixels_of(luma)[i], g16[ct ? 2 * i : i] >> 8);
        }
        imghist_image_free(luma);
        free(png);
    }
    imghist_destroy(ctx);
}

/* The photograph's luma is libjpeg-turbo's own gray decode (the Y plane),
 * done here with libjpeg directly, and not cvtColor's gray of the decoded
 * colour. */
static void test_luma_jpeg_is_libjpeg_gray(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/hubble_deep_field.jpg", samples_dir());
    size_t size = 0;
    uint8_t *file = tu_read_file(path, &size);
    assert_non_null(file);

    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, file, (unsigned long)size);
    assert_int_equal(jpeg_read_header(&cinfo, TRUE), JPEG_HEADER_OK);
    assert_int_equal(cinfo.num_components, 3);
    cinfo.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&cinfo);
    const uint32_t w = cinfo.output_width, h = cinfo.output_height;
    assert_int_equal(cinfo.output_components, 1);
    uint8_t *want = malloc((size_t)w * h);
    assert_non_null(want);
    while (cinfo.output_scanline < h) {
        JSAMPROW row = want + (size_t)cinfo.output_scanline * w;
        assert_int_equal(jpeg_read_scanlines(&cinfo, &row, 1), 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);

    imghist_ctx *ctx = cpu_ctx();
    imghist_image *luma = load_bytes(ctx, file, size, IMGHIST_GRAY_LUMA);
    assert_int_equal(luma->view.width, w); /* its EXIF orientation is 1 */
    assert_int_equal(luma->view.height, h);
    assert_memory_equal(pixels_of(luma), want, (size_t)w * h);
    imghist_image *def = load_bytes(ctx, file, size, IMGHIST_GRAY_BGR2GRAY);
    const size_t differ = count_differences(def, luma);
    /* The Y plane against gray from upsampled, converted colour: 4197 of the
     * 872000 pixels differ, by at most 5, at this writing. */
    assert_true(differ > (size_t)w * h / 1000);
    imghist_image_free(def);
    imghist_image_free(luma);
    imghist_destroy(ctx);
    free(want);
    free(file);
}

/* libpng's rgb_to_gray as OpenCV sets it up: 0.299 and 0.587 become 9797
 * and 19234 (/ 32768), blue 3737; 8-bit sums are truncated and a pixel whose
 * channels are equal is kept; 16-bit sums are rounded, then the high byte. */
static uint8_t png_luma8(int r, int g, int b)
{
    if (r == g && r == b) {
        return (uint8_t)r;
    }
    return (uint8_t)((9797 * r + 19234 * g + 3737 * b) >> 15);
}

static void test_luma_png_rgb_weights(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_luma_png_rgb_weights"));
    enum { W = 64, H = 32 };
    static uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)tu_next(&r);
    }
    for (size_t i = 0; i < W * H; i += 5) { /* gray pixels among the colour */
        rgb[3 * i + 1] = rgb[3 * i + 2] = rgb[3 * i];
    }
    size_t size = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, rgb, NULL, 0, &size);
    assert_non_null(png);
    imghist_image *luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    size_t off_bgr2gray = 0;
    for (size_t i = 0; i < W * H; i++) {
        const uint8_t *p = rgb + 3 * i;
        assert_int_equal(pixels_of(luma)[i], png_luma8(p[0], p[1], p[2]));
        off_bgr2gray += pixels_of(luma)[i] != cv_gray(p[0], p[1], p[2]);
    }
    assert_true(off_bgr2gray > 0); /* truncation against cvtColor's rounding */
    imghist_image_free(luma);
    free(png);

    static uint16_t rgb16[W * 3];
    for (size_t i = 0; i < W * 3; i++) {
        rgb16[i] = (uint16_t)tu_next(&r);
    }
    png = tu_png_encode(W, 1, PNG_COLOR_TYPE_RGB, 16, rgb16, NULL, 0, &size);
    assert_non_null(png);
    luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    for (size_t i = 0; i < W; i++) {
        const uint16_t *p = rgb16 + 3 * i;
        const uint32_t g16 = (9797u * p[0] + 19234u * p[1] + 3737u * p[2] + 16384u) >> 15;
        assert_int_equal(pixels_of(luma)[i], g16 >> 8);
    }
    imghist_image_free(luma);
    free(png);
    imghist_destroy(ctx);
}

/* A copy of png with one more chunk right after IHDR (at byte 33). */
static uint8_t *png_with_chunk(const uint8_t *png, size_t size, const char *type,
                               const uint8_t *body, uint32_t len, int bad_crc, size_t *out_size)
{
    const size_t at = 8 + 25;
    uint8_t *out = malloc(size + 12 + len);
    assert_non_null(out);
    memcpy(out, png, at);
    uint8_t *c = out + at;
    c[0] = (uint8_t)(len >> 24);
    c[1] = (uint8_t)(len >> 16);
    c[2] = (uint8_t)(len >> 8);
    c[3] = (uint8_t)len;
    memcpy(c + 4, type, 4);
    memcpy(c + 8, body, len);
    uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), c + 4, len + 4) ^ (bad_crc ? 1u : 0u);
    c[8 + len] = (uint8_t)(crc >> 24);
    c[9 + len] = (uint8_t)(crc >> 16);
    c[10 + len] = (uint8_t)(crc >> 8);
    c[11 + len] = (uint8_t)crc;
    memcpy(c + 12 + len, png + at, size - at);
    *out_size = size + 12 + len;
    return out;
}

/* A file gamma makes libpng convert in linear light, in the luma mode only
 * (the other decodes colour as stored, as imread(IMREAD_COLOR) does). Gray
 * pixels, black and white stay. */
static void test_luma_png_gamma(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    enum { W = 32, H = 16 };
    static uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < W * H; i++) {
        rgb[3 * i] = (uint8_t)(i * 7);
        rgb[3 * i + 1] = (uint8_t)(i % 3 == 0 ? i * 7 : i * 13 + 5);
        rgb[3 * i + 2] = (uint8_t)(i % 3 == 0 ? i * 7 : 255 - i);
    }
    size_t size = 0, gsize = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, rgb, NULL, 0, &size);
    assert_non_null(png);
    const uint8_t gama[4] = {0, 0, 0xb1, 0x8f}; /* 45455: 1 / 2.2 */
    uint8_t *gpng = png_with_chunk(png, size, "gAMA", gama, 4, 0, &gsize);
    imghist_image *plain = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    imghist_image *linear = load_bytes(ctx, gpng, gsize, IMGHIST_GRAY_LUMA);
    imghist_image *def_plain = load_bytes(ctx, png, size, IMGHIST_GRAY_BGR2GRAY);
    imghist_image *def_gamma = load_bytes(ctx, gpng, gsize, IMGHIST_GRAY_BGR2GRAY);
    assert_int_equal(count_differences(def_plain, def_gamma), 0);
    size_t changed = 0;
    for (size_t i = 0; i < W * H; i++) {
        if (i % 3 == 0) {
            assert_int_equal(pixels_of(linear)[i], rgb[3 * i]);
        }
        changed += pixels_of(linear)[i] != pixels_of(plain)[i];
    }
    assert_true(changed > W * H / 3);
    imghist_image_free(plain);
    imghist_image_free(linear);
    imghist_image_free(def_plain);
    imghist_image_free(def_gamma);
    free(gpng);
    free(png);
    imghist_destroy(ctx);
}

/* An eXIf chunk's orientation is applied in the luma mode, as OpenCV 4.6
 * applies it; the BGR2GRAY mode keeps 0.2's results and ignores it. A chunk
 * with a bad CRC or a wrong byte order is one libpng would drop. */
static void test_luma_png_exif_orientation(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    enum { W = 5, H = 3 };
    uint8_t g[W * H];
    for (int i = 0; i < W * H; i++) {
        g[i] = (uint8_t)(i * 10);
    }
    size_t size = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_GRAY, 8, g, NULL, 0, &size);
    assert_non_null(png);
    /* TIFF, big-endian: IFD 0 at 8, one entry, Orientation SHORT 6. */
    uint8_t tiff[26] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6};
    for (int variant = 0; variant < 3; variant++) {
        if (variant == 2) {
            tiff[1] = 'I'; /* "MI": libpng's "incorrect byte-order specifier" */
        }
        size_t esize = 0;
        uint8_t *epng = png_with_chunk(png, size, "eXIf", tiff, sizeof tiff, variant == 1, &esize);
        imghist_image *luma = load_bytes(ctx, epng, esize, IMGHIST_GRAY_LUMA);
        imghist_image *def = load_bytes(ctx, epng, esize, IMGHIST_GRAY_BGR2GRAY);
        assert_int_equal(def->view.width, W);
        assert_memory_equal(pixels_of(def), g, sizeof g);
        if (variant == 0) {
            uint32_t w = W, h = H;
            uint8_t *want = ih_orient(g, &w, &h, 6);
            assert_non_null(want);
            assert_int_equal(luma->view.width, H);
            assert_int_equal(luma->view.height, W);
            assert_memory_equal(pixels_of(luma), want, sizeof g);
            free(want);
        } else {
            assert_int_equal(luma->view.width, W);
            assert_memory_equal(pixels_of(luma), g, sizeof g);
        }
        imghist_image_free(luma);
        imghist_image_free(def);
        free(epng);
    }
    free(png);
    imghist_destroy(ctx);
}

/* The stb_image formats: OpenCV's 14-bit weights in the luma mode (BMP),
 * and a 16-bit PNM's high byte (stb_image 2.27 would give the low one). */
static void test_luma_bmp_and_pnm16(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_luma_bmp_and_pnm16"));
    enum { W = 23, H = 11 };
    uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)tu_next(&r);
    }
    /* The two sets of weights part on about 1 random pixel in 400; on
     * (1, 123, 0) they do: 72 here, 73 for cvtColor. */
    rgb[0] = 1;
    rgb[1] = 123;
    rgb[2] = 0;
    static struct membuf m;
    m.len = 0;
    assert_true(stbi_write_bmp_to_func(to_mem, &m, W, H, 3, rgb));
    imghist_image *luma = load_bytes(ctx, m.data, m.len, IMGHIST_GRAY_LUMA);
    size_t off_bgr2gray = 0;
    for (size_t i = 0; i < W * H; i++) {
        const uint8_t *p = rgb + 3 * i;
        const uint8_t want = (uint8_t)((4899 * p[0] + 9617 * p[1] + 1868 * p[2] + 8192) >> 14);
        assert_int_equal(pixels_of(luma)[i], want);
        off_bgr2gray += want != cv_gray(p[0], p[1], p[2]);
    }
    assert_true(off_bgr2gray > 0);
    imghist_image_free(luma);

    /* P5, 4 x 2, maxval 65535, big-endian samples; and P6 1 x 1. */
    static const uint8_t pgm[] = "P5\n4 2\n65535\n"
                                 "\x12\x34\xab\xcd\x00\xff\xff\x00\x80\x01\x7f\xfe\x01\x02\xfe\xdc";
    luma = load_bytes(ctx, pgm, sizeof pgm - 1, IMGHIST_GRAY_LUMA);
    static const uint8_t high[8] = {0x12, 0xab, 0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe};
    assert_memory_equal(pixels_of(luma), high, 8);
    imghist_image_free(luma);
    static const uint8_t ppm[] = "P6 1 1 1000\n\x03\x20\x01\x00\x00\x10";
    luma = load_bytes(ctx, ppm, sizeof ppm - 1, IMGHIST_GRAY_LUMA);
    assert_int_equal(pixels_of(luma)[0], (4899 * 3 + 9617 * 1 + 1868 * 0 + 8192) >> 14);
    imghist_image_free(luma);
    imghist_destroy(ctx);
}

/* ---- PNG output levels (IMGHIST_P_PNG_LEVEL) ---- */

/* Every level writes the same pixels (decoded here with libpng, not with the
 * loader under test), on an equalized photograph and on a pitched view. The
 * default is 1 (zlib's Z_RLE and the Sub filter, OpenCV's imwrite settings),
 * and its file must stay within 10 % of level 6's (0.2's setting) on the
 * photograph, as it did when the default was chosen. */
static void test_png_levels_roundtrip(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    int64_t level = -1;
    assert_int_equal(imghist_get_param(ctx, IMGHIST_P_PNG_LEVEL, &level), IMGHIST_OK);
    assert_int_equal(level, 1);
    imghist_image *photo = load_sample(ctx, "coffee.png", IMGHIST_GRAY_BGR2GRAY);
    assert_int_equal(imghist_equalize(ctx, &photo->view, &photo->view, IMGHIST_EQ_OPENCV, NULL),
                     IMGHIST_OK);
    const uint32_t w = photo->view.width, h = photo->view.height;
    /* The photograph's left 301 columns through a view with a pitch. */
    const imghist_view pitched = u8_view(pixels_of(photo), w, 301, h);
    size_t sizes[10] = {0};
    for (int lv = 0; lv <= 9; lv++) {
        assert_int_equal(imghist_set_param(ctx, IMGHIST_P_PNG_LEVEL, lv), IMGHIST_OK);
        for (int v = 0; v < 2; v++) {
            const imghist_view *view = v ? &pitched : &photo->view;
            void *png = NULL;
            size_t size = 0;
            assert_int_equal(imghist_encode_png(ctx, view, &png, &size), IMGHIST_OK);
            png_image im;
            memset(&im, 0, sizeof im);
            im.version = PNG_IMAGE_VERSION;
            assert_true(png_image_begin_read_from_memory(&im, png, size));
            assert_int_equal(im.width, view->width);
            assert_int_equal(im.height, h);
            im.format = PNG_FORMAT_GRAY;
            uint8_t *back = malloc(PNG_IMAGE_SIZE(im));
            assert_non_null(back);
            assert_true(png_image_finish_read(&im, NULL, back, 0, NULL));
            for (uint32_t y = 0; y < h; y++) {
                assert_memory_equal(back + (size_t)y * view->width,
                                    pixels_of(photo) + (size_t)y * w, view->width);
            }
            free(back);
            if (v == 0) {
                sizes[lv] = size;
            }
            imghist_free(png);
        }
    }
    assert_true(sizes[0] > (size_t)w * h);             /* stored */
    assert_true(sizes[1] * 10 <= sizes[6] * 11);        /* within 10 % of 0.2's */
    assert_true(sizes[1] < sizes[0]);
    imghist_image_free(photo);
    imghist_destroy(ctx);
}

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
        cmocka_unit_test(test_luma_gray_png_same_as_default),
        cmocka_unit_test(test_luma_jpeg_is_libjpeg_gray),
        cmocka_unit_test(test_luma_png_rgb_weights),
        cmocka_unit_test(test_luma_png_gamma),
        cmocka_unit_test(test_luma_png_exif_orientation),
        cmocka_unit_test(test_luma_bmp_and_pnm16),
        cmocka_unit_test(test_png_levels_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
