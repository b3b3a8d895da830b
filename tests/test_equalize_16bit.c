/*
 * 16-bit and masked 8-bit equalization on the backend under test against a
 * table written from the header's rule. A part of test_equalize.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"
#include "backend_suite.h"
#include "ref_hist.h"
#include "test_util.h"
#include "views.h"

/* OpenCV's formula for L levels, from the header's words. */
static void ref_lut(const uint64_t *hist, uint32_t levels, uint32_t *lut)
{
    uint64_t total = 0;
    uint32_t first = 0;
    for (uint32_t i = 0; i < levels; i++) total += hist[i];
    while (hist[first] == 0) first++;
    if (hist[first] == total) {
        for (uint32_t i = 0; i < levels; i++) lut[i] = i;
        return;
    }
    const float scale = (float)(levels - 1) / (float)(total - hist[first]);
    uint64_t c = 0;
    for (uint32_t i = 0; i < levels; i++) {
        if (i > first) c += hist[i];
        const float v = i <= first ? 0.0f : rintf((float)c * scale);
        lut[i] = (uint32_t)(v > (float)(levels - 1) ? (float)(levels - 1) : v);
    }
}

static void check_equalize16(imghist_ctx *ctx, const uint16_t *src, uint32_t w, uint32_t h,
                             const uint8_t *mask)
{
    uint64_t *hist = calloc(65536, sizeof *hist), *got_hist = malloc(65536 * sizeof *got_hist);
    uint32_t *lut = malloc(65536 * sizeof *lut);
    uint16_t *dst = malloc((size_t)w * h * 2), *lut16 = malloc(65536 * 2);
    assert_true(hist && got_hist && lut && dst && lut16);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        if (mask == NULL || mask[i]) hist[src[i]]++;
    }
    ref_lut(hist, 65536, lut);
    EXPECT(NULL, imghist_equalize_lut(hist, 65536, IMGHIST_EQ_OPENCV, lut16), IMGHIST_OK);
    for (uint32_t i = 0; i < 65536; i++) assert_int_equal(lut16[i], lut[i]);
    const imghist_view s = {.data = (void *)src, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
        .width = w, .height = h, .pitch = (size_t)w * 2, .channels = 1};
    const imghist_view d = {.data = dst, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST, .width = w,
        .height = h, .pitch = (size_t)w * 2, .channels = 1};
    const imghist_view m = {.data = (void *)mask, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = w, .height = h, .pitch = w, .channels = 1};
    const imghist_counts hc = {got_hist, 65536, IMGHIST_MEM_HOST};
    const imghist_view sm = vw_masked(s, mask ? &m : NULL);
    EXPECT(ctx, imghist_equalize(ctx, &sm, &d, IMGHIST_EQ_OPENCV, &hc), IMGHIST_OK);
    assert_memory_equal(got_hist, hist, 65536 * sizeof *hist);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        if (dst[i] != lut[src[i]]) {
            fail_msg("pixel %zu: %u -> %u, the reference says %u", i, src[i], dst[i],
                     lut[src[i]]);
        }
    }
    free(hist);
    free(got_hist);
    free(lut);
    free(dst);
    free(lut16);
}

static void test_equalize_16bit(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(3);
    enum { W = 777, H = 555 };
    uint16_t *p = malloc(sizeof *p * W * H);
    uint8_t *m = malloc(W * H);
    assert_true(p && m);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        p[i] = (uint16_t)(tu_below(&rng, 4096) << 4); /* 12-bit data in the high bits */
        m[i] = (uint8_t)(i % 7 == 0);
    }
    check_equalize16(ctx, p, W, H, NULL);
    check_equalize16(ctx, p, W, H, m);
    for (size_t i = 0; i < (size_t)W * H; i++) p[i] = (uint16_t)(tu_next(&rng));
    check_equalize16(ctx, p, W, H, NULL);
    for (size_t i = 0; i < (size_t)W * H; i++) p[i] = 40000;
    check_equalize16(ctx, p, W, H, NULL); /* constant: stays as it is */
    for (size_t i = 0; i < (size_t)W * H; i++) p[i] = i % 2 ? 9 : 60000;
    check_equalize16(ctx, p, W, H, NULL); /* two values: 0 and 65535 */
    /* Empty mask: refused, destination untouched. */
    memset(m, 0, W * H);
    uint16_t *d = malloc(sizeof *d * W * H);
    memset(d, 0xab, sizeof *d * W * H);
    const imghist_view s = {.data = p, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W * 2, .channels = 1};
    const imghist_view dv = {.data = d, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W * 2, .channels = 1};
    const imghist_view mv = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view sm = vw_masked(s, &mv);
    EXPECT(ctx, imghist_equalize(ctx, &sm, &dv, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "mask"));
    assert_int_equal(d[12345], 0xabab);
    free(d);
    free(p);
    free(m);
    imghist_destroy(ctx);
}

/* Masked 8-bit equalization: the LUT from the masked pixels, applied to all. */
static void test_equalize_masked_u8(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 640, H = 480 };
    uint8_t *p = malloc(W * H), *m = malloc(W * H), *d = malloc(W * H);
    assert_true(p && m && d);
    uint64_t hist[256] = {0};
    for (size_t i = 0; i < (size_t)W * H; i++) {
        p[i] = (uint8_t)tu_below(&rng, 256);
        m[i] = (uint8_t)((i / W) < H / 2 && p[i] < 128); /* a region of dark pixels */
        if (m[i]) hist[p[i]]++;
    }
    uint32_t lut[256];
    ref_lut(hist, 256, lut);
    const imghist_view s = {.data = p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view dv = {.data = d, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view mv = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view sm = vw_masked(s, &mv);
    EXPECT(ctx, imghist_equalize(ctx, &sm, &dv, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        assert_int_equal(d[i], lut[p[i]]);
    }
    assert_int_equal(d[W * H - 1], p[W * H - 1] >= 127 ? 255 : d[W * H - 1]);
    free(p);
    free(m);
    free(d);
    imghist_destroy(ctx);
}

/* A mask that selects pixels of one value: the table is the identity, and
 * the whole image, outside the mask too, comes back as it is (8 and 16
 * bits), as a constant image does; the LUT call gives the identity too. */
static void test_equalize_one_value_selected(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 301, H = 97 };
    uint16_t *p16 = malloc(sizeof *p16 * W * H), *d16 = malloc(sizeof *d16 * W * H);
    uint8_t *p8 = malloc(W * H), *d8 = malloc(W * H), *m = malloc(W * H);
    assert_true(p16 && d16 && p8 && d8 && m);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        m[i] = (uint8_t)(i % 5 == 0);
        p16[i] = m[i] ? 1234 : (uint16_t)tu_next(&rng);
        p8[i] = m[i] ? 77 : (uint8_t)tu_below(&rng, 256);
    }
    const imghist_view mv = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    for (int bits = 8; bits <= 16; bits += 8) {
        const imghist_dtype t = bits == 8 ? IMGHIST_U8 : IMGHIST_U16;
        const size_t size = bits / 8;
        void *src = bits == 8 ? (void *)p8 : (void *)p16, *dst = bits == 8 ? (void *)d8 : (void *)d16;
        const imghist_view s = {.data = src, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = W,
            .height = H, .pitch = W * size, .channels = 1};
        const imghist_view d = {.data = dst, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = W,
            .height = H, .pitch = W * size, .channels = 1};
        const imghist_view sm = vw_masked(s, &mv);
        memset(dst, 0xab, W * H * size);
        EXPECT(ctx, imghist_equalize(ctx, &sm, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
        if (memcmp(dst, src, W * H * size) != 0) {
            fail_msg("%d-bit: a mask selecting one value changed the image", bits);
        }
    }
    uint64_t *hist = calloc(65536, sizeof *hist);
    uint16_t *lut16 = malloc(65536 * sizeof *lut16);
    uint8_t lut8[256];
    assert_true(hist && lut16);
    hist[77] = 5;
    EXPECT(NULL, imghist_equalize_lut(hist, 256, IMGHIST_EQ_OPENCV, lut8), IMGHIST_OK);
    hist[77] = 0;
    hist[1234] = 5;
    EXPECT(NULL, imghist_equalize_lut(hist, 65536, IMGHIST_EQ_OPENCV, lut16), IMGHIST_OK);
    for (uint32_t v = 0; v < 65536; v++) {
        if ((v < 256 && lut8[v] != v) || lut16[v] != v) {
            fail_msg("one value counted: entry %u is not the identity", v);
        }
    }
    free(hist);
    free(lut16);
    free(p16);
    free(d16);
    free(p8);
    free(d8);
    free(m);
    imghist_destroy(ctx);
}

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_equalize_16bit"));
    return 0;
}

static const bs_test tests[] = {
    BS_TEST(test_equalize_16bit),
    BS_TEST(test_equalize_masked_u8),
    BS_TEST(test_equalize_one_value_selected),
};

const bs_part equalize_16bit_part = BS_PART("equalize 16-bit", tests, setup, NULL);
