/*
 * Histogram statistics (imghist_entropy, imghist_percentile, imghist_otsu)
 * and lookup tables (imghist_apply_lut) through the public API: values
 * worked out by hand, and the refusals. test_stats_ref.py checks them against NumPy and OpenCV on images.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"

static void test_entropy(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    double bits = -1;
    h[7] = 1000;
    assert_int_equal(imghist_entropy(h, 256, &bits), IMGHIST_OK);
    assert_true(bits == 0.0 && !signbit(bits)); /* one value: 0, not -0 (nor a rounding error) */
    h[200] = 1000;
    assert_int_equal(imghist_entropy(h, 256, &bits), IMGHIST_OK);
    assert_true(fabs(bits - 1.0) < 1e-12);
    for (int b = 0; b < 256; b++) {
        h[b] = 3;
    }
    assert_int_equal(imghist_entropy(h, 256, &bits), IMGHIST_OK);
    assert_true(fabs(bits - 8.0) < 1e-12);
    /* 1:3 -> -(0.25 log2 0.25 + 0.75 log2 0.75) */
    const uint64_t q[2] = {1, 3};
    assert_int_equal(imghist_entropy(q, 2, &bits), IMGHIST_OK);
    assert_true(fabs(bits - (0.5 + 0.75 * log2(4.0 / 3.0))) < 1e-12);
}

static void test_percentile(void **state)
{
    (void)state;
    /* Samples 0, 1, ..., 9 in bins of the same index: the k-th smallest with
     * k = max(1, ceil(10 p / 100)). */
    uint64_t h[16] = {0};
    for (int b = 0; b < 10; b++) {
        h[b] = 1;
    }
    const struct {
        double p;
        size_t want;
    } cases[] = {{0, 0}, {1, 0}, {10, 0}, {10.0001, 1}, {50, 4}, {55, 5}, {99, 9}, {100, 9}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t b = 99;
        assert_int_equal(imghist_percentile(h, 16, cases[i].p, &b), IMGHIST_OK);
        assert_int_equal(b, cases[i].want);
    }
    /* Empty bins are never answers; a heavy bin holds many ranks. */
    const uint64_t g[6] = {0, 5, 0, 0, 1, 0};
    size_t b = 99;
    assert_int_equal(imghist_percentile(g, 6, 0, &b), IMGHIST_OK);
    assert_int_equal(b, 1);
    assert_int_equal(imghist_percentile(g, 6, 83, &b), IMGHIST_OK); /* ceil(4.98) = 5 */
    assert_int_equal(b, 1);
    assert_int_equal(imghist_percentile(g, 6, 84, &b), IMGHIST_OK); /* ceil(5.04) = 6 */
    assert_int_equal(b, 4);
    assert_int_equal(imghist_percentile(g, 6, 100, &b), IMGHIST_OK);
    assert_int_equal(b, 4);
}

static void test_otsu(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    size_t t = 99;
    h[173] = 500; /* constant: OpenCV's 0 */
    assert_int_equal(imghist_otsu(h, 256, &t), IMGHIST_OK);
    assert_int_equal(t, 0);
    /* Two values: the threshold is the lower one (the first maximum). */
    h[12] = 300;
    assert_int_equal(imghist_otsu(h, 256, &t), IMGHIST_OK);
    assert_int_equal(t, 12);
    /* Two separated clusters: the split lies between them. */
    memset(h, 0, sizeof h);
    for (int b = 40; b < 60; b++) {
        h[b] = 10;
    }
    for (int b = 180; b < 200; b++) {
        h[b] = 10;
    }
    assert_int_equal(imghist_otsu(h, 256, &t), IMGHIST_OK);
    assert_true(t >= 59 && t < 180);
}

static void test_refusals(void **state)
{
    (void)state;
    const uint64_t zero[4] = {0, 0, 0, 0}, one[4] = {0, 2, 0, 0};
    double d;
    size_t b;
    assert_int_equal(imghist_entropy(zero, 4, &d), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_entropy(NULL, 4, &d), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_entropy(one, 0, &d), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_entropy(one, 4, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_percentile(zero, 4, 50, &b), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_percentile(one, 4, -1, &b), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_percentile(one, 4, 100.5, &b), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_percentile(one, 4, NAN, &b), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_percentile(one, 4, 50, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_otsu(zero, 4, &b), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_otsu(one, 4, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_otsu(NULL, 4, &b), IMGHIST_E_INVALID_ARG);
}

/* imghist_match_lut on histograms worked out by hand. */
/* imghist_apply_lut on host views: pitched rows, in place, and refusals;
 * padding bytes untouched. */
static void test_apply_lut(void **state)
{
    (void)state;
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    enum { W = 37, H = 11, P = 45 };
    uint8_t src[P * H], dst[P * H], lut[256];
    for (int i = 0; i < P * H; i++) {
        src[i] = (uint8_t)(i * 7 + 3);
    }
    for (int v = 0; v < 256; v++) {
        lut[v] = (uint8_t)(255 - v / 2);
    }
    memset(dst, 0xee, sizeof dst);
    const imghist_view s = {.data = src, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = P, .channels = 1};
    const imghist_view d = {.data = dst, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = P, .channels = 1};
    assert_int_equal(imghist_apply_lut(ctx, &s, &d, lut), IMGHIST_OK);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < P; x++) {
            const uint8_t want = x < W ? lut[src[y * P + x]] : 0xee;
            assert_int_equal(dst[y * P + x], want);
        }
    }
    assert_int_equal(imghist_apply_lut(ctx, &s, &s, lut), IMGHIST_OK); /* in place */
    for (int y = 0; y < H; y++) {
        assert_memory_equal(src + y * P, dst + y * P, W);
    }
    assert_int_equal(imghist_apply_lut(ctx, &s, &d, NULL), IMGHIST_E_INVALID_ARG);
    const imghist_view wide = {.data = src, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
        .width = 4, .height = 4, .pitch = 16, .channels = 1};
    assert_int_equal(imghist_apply_lut(ctx, &wide, &wide, lut), IMGHIST_E_UNSUPPORTED);
    const imghist_view other = {.data = dst, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = W - 1, .height = H, .pitch = P, .channels = 1};
    assert_int_equal(imghist_apply_lut(ctx, &s, &other, lut), IMGHIST_E_INVALID_ARG);
    imghist_destroy(ctx);
}

static void test_match_lut(void **state)
{
    (void)state;
    uint64_t src[256] = {0}, ref[256] = {0};
    uint8_t lut[256];
    /* The same histogram: every present level maps to itself. */
    src[3] = 5;
    src[90] = 1;
    src[250] = 7;
    assert_int_equal(imghist_match_lut(src, src, lut), IMGHIST_OK);
    assert_int_equal(lut[3], 3);
    assert_int_equal(lut[90], 90);
    assert_int_equal(lut[250], 250);
    /* A constant reference: everything maps to its level. */
    ref[200] = 9;
    assert_int_equal(imghist_match_lut(src, ref, lut), IMGHIST_OK);
    for (int v = 0; v < 256; v++) {
        assert_int_equal(lut[v], 200);
    }
    /* Interpolation: ref {0: 1, 100: 3} has quantiles 0.25, 1; a source
     * quantile of 0.5 is 100 / 0.75 * 0.25 = 33.3 -> 33; levels below the
     * source's first (quantile 0, left of 0.25) -> 0; the last -> 100. */
    memset(src, 0, sizeof src);
    memset(ref, 0, sizeof ref);
    ref[0] = 1;
    ref[100] = 3;
    src[10] = 1;
    src[20] = 1;
    assert_int_equal(imghist_match_lut(src, ref, lut), IMGHIST_OK);
    assert_int_equal(lut[5], 0);
    assert_int_equal(lut[10], 33);
    assert_int_equal(lut[20], 100);
    assert_int_equal(lut[255], 100);
    /* Halves go to even: ref {L: 1, L+1: 1} (quantiles 0.5, 1) and a source
     * quantile of 0.75 give L + 0.5. */
    for (int level = 0; level < 4; level++) {
        memset(src, 0, sizeof src);
        memset(ref, 0, sizeof ref);
        ref[level] = 1;
        ref[level + 1] = 1;
        src[0] = 3;
        src[1] = 1;
        assert_int_equal(imghist_match_lut(src, ref, lut), IMGHIST_OK);
        assert_int_equal(lut[0], level % 2 == 0 ? level : level + 1);
    }
    /* Refusals. */
    const uint64_t zero[256] = {0};
    assert_int_equal(imghist_match_lut(zero, ref, lut), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_match_lut(ref, zero, lut), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_match_lut(NULL, ref, lut), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_match_lut(ref, ref, NULL), IMGHIST_E_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entropy),
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_otsu),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_match_lut),
        cmocka_unit_test(test_apply_lut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
