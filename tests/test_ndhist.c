/*
 * imghist_histogramdd, imghist_cvt_color and imghist_backproject on host
 * memory against a brute-force count written here, OpenCV's colours of a
 * few pixels, and the refusals. The Python tests compare with cv2 and
 * NumPy on photographs and on every colour; the cuda run adds
 * test_ndhist_cuda.c, the GPU against the CPU.
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

static tu_rng rng;

/* Bin of v over explicit edges e[0..n] (last edge excluded unless closed). */
static uint32_t edge_bin(const double *e, uint32_t n, int closed, double v)
{
    if (!(v >= e[0]) || v > e[n] || (v == e[n] && !closed)) {
        return n;
    }
    uint32_t i = 0;
    while (i + 1 < n && v >= e[i + 1]) {
        i++;
    }
    return i;
}

static void test_counts_against_brute_force(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    enum { W = 37, H = 23, C = 4, N = 3 };
    uint8_t *img = malloc((size_t)N * W * H * C), *m = malloc((size_t)W * H);
    assert_true(img && m);
    for (size_t i = 0; i < (size_t)N * W * H * C; i++) img[i] = (uint8_t)tu_below(&rng, 256);
    for (size_t i = 0; i < (size_t)W * H; i++) m[i] = (uint8_t)tu_below(&rng, 3) != 0;
    /* Axis 0: channel 2, 8 uniform bins over [0, 256) (edges 32 i);
     * axis 1: channel 0, explicit edges, last one a sample value, closed;
     * axis 2: channel 3, 3 bins over [16, 208) (edges 16 + 64 i). */
    static const double e1[] = {0, 10, 11, 100, 250};
    imghist_ndaxes ax = {.dims = 3, .channel = {2, 0, 3}};
    ax.spec[0] = (imghist_histspec){8, 0, 256, IMGHIST_OUTLIERS};
    ax.spec[1] = (imghist_histspec){4, 0, 0, IMGHIST_CLOSED};
    ax.edges[1] = e1;
    ax.spec[2] = (imghist_histspec){3, 16, 208, 0};
    assert_int_equal(imghist_ndcounts_len(&ax, IMGHIST_U8), 8 * 4 * 3 + 1);
    const size_t len = 8 * 4 * 3 + 1;
    uint64_t *got = malloc(N * len * sizeof *got), *want = calloc(N * len, sizeof *want);
    for (int n = 0; n < N; n++) {
        for (size_t p = 0; p < (size_t)W * H; p++) {
            if (!m[p]) continue;
            const uint8_t *px = img + ((size_t)n * W * H + p) * C;
            const uint32_t b0 = px[2] / 32;
            const uint32_t b1 = edge_bin(e1, 4, 1, px[0]);
            const uint32_t b2 = px[3] >= 16 && px[3] < 208 ? (px[3] - 16u) / 64u : 3;
            if (b1 < 4 && b2 < 3) want[n * len + b0 * 12 + b1 * 3 + b2]++;
            else want[n * len + len - 1]++;
        }
    }
    const imghist_view one = {.data = img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = W, .height = H, .pitch = W * C, .channels = C};
    const imghist_view vm = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = W, .height = H, .pitch = W, .channels = 1};
    imghist_view batch = vw_tensor(one, N, (ptrdiff_t)W * H * C);
    batch.mask = &vm;
    const imghist_counts out = {got, N * len, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &ax, &out), IMGHIST_OK);
    assert_memory_equal(got, want, N * len * sizeof *got);
    /* ACCUMULATE adds */
    ax.spec[0].flags |= IMGHIST_ACCUMULATE;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &ax, &out), IMGHIST_OK);
    for (size_t i = 0; i < N * len; i++) assert_int_equal(got[i], 2 * want[i]);
    ax.spec[0].flags &= ~IMGHIST_ACCUMULATE;
    /* short counts, a bad channel, flags on a later axis, too many cells */
    const imghist_counts shortc = {got, N * len - 1, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &ax, &shortc), IMGHIST_E_BUFSIZE);
    imghist_ndaxes bad = ax;
    bad.channel[1] = 4;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    bad.spec[2].flags = IMGHIST_OUTLIERS;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    bad.spec[0].bins = 1u << 22;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    bad.dims = 0;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    static const double flat[] = {0, 10, 10, 100, 250};
    bad.edges[1] = flat;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    bad.spec[2].flags = IMGHIST_OPENCV_BINS | IMGHIST_CLOSED;
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    bad = ax;
    bad.space = IMGHIST_SPACE_BGR2HSV;
    bad.channel[2] = 3; /* the converted pixel has 3 channels */
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, &bad, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_histogramdd(NULL, &batch, &ax, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogramdd(ctx, &batch, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_ndcounts_len(&bad, IMGHIST_U8), 0);
    free(img);
    free(m);
    free(got);
    free(want);
    imghist_destroy(ctx);
}

static void test_float_opencv_rule_and_nan(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    /* 26 bins over [0, 180): OpenCV's floor rule and the edges differ at 90. */
    float px[] = {89.99999f, 90.0f, 0.0f, 179.99998f, 180.0f, -0.0f, NAN, INFINITY, 6.9230769f};
    const uint32_t n = sizeof px / sizeof px[0];
    const imghist_view v = {.data = px, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST,
        .width = n, .height = 1, .pitch = sizeof px, .channels = 1};
    uint64_t got[27], want[27] = {0};
    imghist_ndaxes ax = {.dims = 1};
    ax.spec[0] = (imghist_histspec){26, 0, 180, IMGHIST_OPENCV_BINS | IMGHIST_OUTLIERS};
    const double t = 26.0 / 180.0, u = -t * 0.0;
    for (uint32_t i = 0; i < n; i++) {
        const double d = px[i];
        if (d >= 0 && d < 180) {
            volatile double prod = d * t;
            double f = floor(prod + u);
            want[f < 0 ? 0 : f > 25 ? 25 : (uint32_t)f]++;
        } else {
            want[26]++;
        }
    }
    const imghist_counts out = {got, 27, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogramdd(ctx, &v, &ax, &out), IMGHIST_OK);
    assert_memory_equal(got, want, sizeof got);
    assert_int_equal(got[26], 3); /* 180, NaN, +inf */
    imghist_destroy(ctx);
}

static void test_cvt_color_known_pixels(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    /* BGR: blue, red, white, black, and one more; cv2 4.6's answers. */
    uint8_t bgr[5 * 3] = {255, 0, 0, 0, 0, 255, 255, 255, 255, 0, 0, 0, 10, 200, 30};
    static const uint8_t hsv[] = {120, 255, 255, 0, 255, 255, 0, 0, 255, 0, 0, 0, 57, 242, 200};
    static const uint8_t full[] = {171, 255, 255, 0, 255, 255, 0, 0, 255, 0, 0, 0, 81, 242, 200};
    static const uint8_t lab[] = {82, 207, 20, 136, 208, 195, 255, 128, 128, 0, 128, 128,
                                  180, 58, 196};
    uint8_t out[15];
    const imghist_view s = {.data = bgr, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 5, .height = 1, .pitch = 15, .channels = 3};
    const imghist_view d = {.data = out, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 5, .height = 1, .pitch = 15, .channels = 3};
    EXPECT(ctx, imghist_cvt_color(ctx, &s, &d, IMGHIST_SPACE_BGR2HSV), IMGHIST_OK);
    assert_memory_equal(out, hsv, 15);
    EXPECT(ctx, imghist_cvt_color(ctx, &s, &d, IMGHIST_SPACE_BGR2HSV_FULL), IMGHIST_OK);
    assert_memory_equal(out, full, 15);
    EXPECT(ctx, imghist_cvt_color(ctx, &s, &d, IMGHIST_SPACE_BGR2LAB), IMGHIST_OK);
    assert_memory_equal(out, lab, 15);
    EXPECT(ctx, imghist_cvt_color(ctx, &s, &d, IMGHIST_SPACE_NONE), IMGHIST_E_INVALID_ARG);
    imghist_view d1 = d;
    d1.channels = 1;
    EXPECT(ctx, imghist_cvt_color(ctx, &s, &d1, IMGHIST_SPACE_BGR2HSV), IMGHIST_E_INVALID_ARG);
    /* the H-S histogram of the converted pixels */
    imghist_ndaxes ax = {.dims = 2, .channel = {0, 1}, .space = IMGHIST_SPACE_BGR2HSV};
    ax.spec[0] = (imghist_histspec){30, 0, 180, IMGHIST_OPENCV_BINS};
    ax.spec[1] = (imghist_histspec){32, 0, 256, IMGHIST_OPENCV_BINS};
    uint64_t *h = calloc(30 * 32, sizeof *h), want[30 * 32] = {0};
    for (int i = 0; i < 5; i++) want[(hsv[i * 3] / 6) * 32 + hsv[i * 3 + 1] / 8]++;
    const imghist_counts c = {h, 30 * 32, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogramdd(ctx, &s, &ax, &c), IMGHIST_OK);
    assert_memory_equal(h, want, sizeof want);
    free(h);
    imghist_destroy(ctx);
}

static void test_backproject(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    uint8_t img[] = {0, 63, 64, 128, 200, 255};
    const float hist[4] = {1.5f, 2.5f, 300.0f, -4.0f};
    uint8_t out[6];
    const imghist_view s = {.data = img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 6, .height = 1, .pitch = 6, .channels = 1};
    const imghist_view d = {.data = out, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 6, .height = 1, .pitch = 6, .channels = 1};
    imghist_ndaxes ax = {.dims = 1};
    ax.spec[0] = (imghist_histspec){4, 0, 255, IMGHIST_OPENCV_BINS};
    EXPECT(ctx, imghist_backproject(ctx, &s, &ax, hist, 1.0, &d), IMGHIST_OK);
    /* 1.5 and 2.5 round to even; 300 saturates; -4 is 0; 255 is outside [0, 255) */
    static const uint8_t want[] = {2, 2, 2, 255, 0, 0};
    assert_memory_equal(out, want, 6);
    ax.spec[0].flags |= IMGHIST_OUTLIERS;
    EXPECT(ctx, imghist_backproject(ctx, &s, &ax, hist, 1.0, &d), IMGHIST_E_INVALID_ARG);
    ax.spec[0].flags = 0;
    EXPECT(ctx, imghist_backproject(ctx, &s, &ax, NULL, 1.0, &d), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_backproject(ctx, &s, &ax, hist, NAN, &d), IMGHIST_E_INVALID_ARG);
    imghist_destroy(ctx);
}

/* Bands of rows on several threads: the counts and the back-projection of
 * one thread, with accumulation and outliers. */
static void test_threads_same_bits(void **state)
{
    (void)state;
    enum { W = 600, H = 400, C = 3, N = 2 };
    uint8_t *img = malloc((size_t)N * W * H * C);
    assert_non_null(img);
    for (size_t i = 0; i < (size_t)N * W * H * C; i++) img[i] = (uint8_t)tu_below(&rng, 256);
    const imghist_view one = {.data = img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = W, .height = H, .pitch = W * C, .channels = C};
    const imghist_view v = vw_tensor(one, N, (ptrdiff_t)W * H * C);
    imghist_ndaxes ax = {.dims = 2, .channel = {0, 1}, .space = IMGHIST_SPACE_BGR2LAB};
    ax.spec[0] = (imghist_histspec){30, 10, 180, IMGHIST_OUTLIERS | IMGHIST_ACCUMULATE};
    ax.spec[1] = (imghist_histspec){32, 0, 256, 0};
    const size_t len = imghist_ndcounts_len(&ax, IMGHIST_U8);
    uint64_t *a = malloc(N * len * 8), *b = malloc(N * len * 8);
    float *model = malloc(len * sizeof *model);
    uint8_t *pa = malloc((size_t)N * W * H), *pb = malloc((size_t)N * W * H);
    assert_true(a && b && model && pa && pb);
    for (size_t i = 0; i < N * len; i++) a[i] = b[i] = tu_below(&rng, 100);
    for (size_t i = 0; i < len; i++) model[i] = (float)tu_below(&rng, 300) * 0.75f;
    const imghist_view oa = vw_tensor((imghist_view){.data = pa, .dtype = IMGHIST_U8,
        .mem = IMGHIST_MEM_HOST, .width = W, .height = H, .pitch = W, .channels = 1}, N,
        (ptrdiff_t)W * H);
    imghist_view ob = oa;
    ob.data = pb;
    imghist_ctx *one_thread = bs_new_ctx_threads(1), *many = bs_new_ctx_threads(8);
    const imghist_counts ca = {a, N * len, IMGHIST_MEM_HOST}, cb = {b, N * len, IMGHIST_MEM_HOST};
    EXPECT(one_thread, imghist_histogramdd(one_thread, &v, &ax, &ca), IMGHIST_OK);
    EXPECT(many, imghist_histogramdd(many, &v, &ax, &cb), IMGHIST_OK);
    assert_memory_equal(a, b, N * len * 8);
    ax.spec[0].flags = 0;
    EXPECT(one_thread, imghist_backproject(one_thread, &v, &ax, model, 0.5, &oa), IMGHIST_OK);
    EXPECT(many, imghist_backproject(many, &v, &ax, model, 0.5, &ob), IMGHIST_OK);
    assert_memory_equal(pa, pb, (size_t)N * W * H);
    imghist_destroy(one_thread);
    imghist_destroy(many);
    free(img);
    free(a);
    free(b);
    free(model);
    free(pa);
    free(pb);
}

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_ndhist"));
    return 0;
}

static const bs_test tests[] = {
    BS_TEST(test_counts_against_brute_force),
    BS_TEST(test_float_opencv_rule_and_nan),
    BS_TEST(test_cvt_color_known_pixels),
    BS_TEST(test_backproject),
    BS_TEST(test_threads_same_bits),
};

const bs_part ndhist_part = BS_PART("ndhist", tests, setup, NULL);

extern const bs_part ndhist_part;
extern const bs_part ndhist_cuda_part;
extern const bs_part backproject_cuda_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &ndhist_part,
#ifdef IH_CUDA_PARTS
        &ndhist_cuda_part,
        &backproject_cuda_part,
#endif
    };
    return bs_main(argc, argv, "ndhist", parts, BS_COUNT(parts));
}
