/*
 * Histogram comparison on the backend under test: every method against
 * values worked out by hand, OpenCV's rules for empty bins and empty
 * histograms, one-against-many and all pairs against imghist_compare, and
 * the refusals. The cuda run adds test_compare_cuda.c (the GPU against the
 * CPU). python/tests/test_compare.py holds the comparison with
 * cv2.compareHist itself.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"
#include "backend_suite.h"
#include "ref_hist.h"

static imghist_hists one_u64(const uint64_t *h, size_t bins)
{
    const imghist_hists r = {h, IMGHIST_HIST_U64, IMGHIST_MEM_HOST, bins, 1, 0};
    return r;
}

static double cmp_u64(const uint64_t *a, const uint64_t *b, size_t bins, imghist_compare_method m)
{
    const imghist_hists ha = one_u64(a, bins), hb = one_u64(b, bins);
    double r = -12345.0;
    assert_int_equal(imghist_compare(&ha, &hb, m, &r), IMGHIST_OK);
    return r;
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 4 * DBL_EPSILON * fabs(want) + 1e-300)) {
        fail_msg("got %.17g, want %.17g", got, want);
    }
}

/* Five bins: the two-lane part (4 bins) and one more. */
static const uint64_t H1[5] = {1, 2, 3, 4, 0}, H2[5] = {2, 2, 0, 4, 1};

static void test_compare_by_hand(void **state)
{
    (void)state;
    /* s1 10, s2 9, s12 22, s11 30, s22 25 over 5 bins. */
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_CORREL), 4.0 / sqrt((30.0 - 20.0) * (25.0 - 16.2)));
    /* (1-2)^2/1 + 0/2 + 3^2/3 + 0/4; h1's empty bin left out. */
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_CHISQR), 4.0);
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_INTERSECT), 7.0);
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_BHATTACHARYYA),
         sqrt(1.0 - (sqrt(2.0) + 2.0 + 4.0) / sqrt(90.0)));
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_CHISQR_ALT), 2 * (1.0 / 3 + 3.0 + 1.0));
    /* h2's empty bin counts as 1e-10, h1's is left out. */
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_KL_DIV), log(0.5) + 3 * log(3e10));
    /* Cumulative sums /10 and /9: 11/90 + 13/90 + 14/90 + 10/90. */
    near(cmp_u64(H1, H2, 5, IMGHIST_CMP_EMD), 8.0 / 15.0);
    assert_true(cmp_u64(H1, H1, 5, IMGHIST_CMP_CORREL) == 1.0);
    assert_true(cmp_u64(H1, H1, 5, IMGHIST_CMP_CHISQR) == 0.0);
    assert_true(cmp_u64(H1, H1, 5, IMGHIST_CMP_EMD) == 0.0);
}

static void test_compare_empty(void **state)
{
    (void)state;
    static const uint64_t zero[5] = {0};
    /* Correlation of flat histograms: OpenCV's 1; Bhattacharyya without
     * mass: its scale 1, distance 1; chi-square over no bins of h1: 0. */
    assert_true(cmp_u64(zero, zero, 5, IMGHIST_CMP_CORREL) == 1.0);
    assert_true(cmp_u64(zero, H2, 5, IMGHIST_CMP_CORREL) == 1.0);
    assert_true(cmp_u64(zero, H2, 5, IMGHIST_CMP_BHATTACHARYYA) == 1.0);
    assert_true(cmp_u64(zero, H2, 5, IMGHIST_CMP_CHISQR) == 0.0);
    assert_true(cmp_u64(zero, H2, 5, IMGHIST_CMP_INTERSECT) == 0.0);
    assert_true(cmp_u64(zero, H2, 5, IMGHIST_CMP_KL_DIV) == 0.0);
    near(cmp_u64(H2, zero, 5, IMGHIST_CMP_CHISQR_ALT), 2 * 9.0);
    assert_true(isnan(cmp_u64(zero, H2, 5, IMGHIST_CMP_EMD)));
    /* One bin: correlation's variance is 0. */
    assert_true(cmp_u64(H1 + 1, H2, 1, IMGHIST_CMP_CORREL) == 1.0);
}

/* Counts past 2^24 round to floats as cv2.calcHist stores them; F64 keeps them. */
static void test_compare_types(void **state)
{
    (void)state;
    const uint64_t c[4] = {(1u << 24) + 1, 3, 0, 7};
    const float f[4] = {(float)((1u << 24) + 1), 3, 0, 7};
    const double d[4] = {(double)((1u << 24) + 1), 3, 0, 7};
    const double e[4] = {5, 3, 1, 7};
    const imghist_hists hc = one_u64(c, 4);
    const imghist_hists hf = {f, IMGHIST_HIST_F32, IMGHIST_MEM_HOST, 4, 0, 0};
    const imghist_hists hd = {d, IMGHIST_HIST_F64, IMGHIST_MEM_HOST, 4, 0, 0};
    const imghist_hists he = {e, IMGHIST_HIST_F64, IMGHIST_MEM_HOST, 4, 0, 0};
    double rc, rf, rd;
    assert_int_equal(imghist_compare(&hc, &he, IMGHIST_CMP_INTERSECT, &rc), IMGHIST_OK);
    assert_int_equal(imghist_compare(&hf, &he, IMGHIST_CMP_INTERSECT, &rf), IMGHIST_OK);
    assert_int_equal(imghist_compare(&hd, &he, IMGHIST_CMP_INTERSECT, &rd), IMGHIST_OK);
    assert_true(rc == rf && rc == 5 + 3 + 0 + 7);
    /* Against itself, the count kept whole: chi-square 0 only in doubles. */
    assert_int_equal(imghist_compare(&hc, &hd, IMGHIST_CMP_CHISQR, &rc), IMGHIST_OK);
    assert_int_equal(imghist_compare(&hd, &hd, IMGHIST_CMP_CHISQR, &rd), IMGHIST_OK);
    assert_true(rc > 0.0 && rd == 0.0);
}

static void test_compare_names(void **state)
{
    (void)state;
    imghist_compare_method m;
    for (int i = 0; i < IMGHIST_CMP_COUNT; i++) {
        const char *name = imghist_compare_method_name((imghist_compare_method)i);
        assert_non_null(name);
        assert_int_equal(imghist_compare_method_from_name(name, &m), IMGHIST_OK);
        assert_int_equal(m, i);
    }
    assert_int_equal(imghist_compare_method_from_name("Hellinger", &m), IMGHIST_OK);
    assert_int_equal(m, IMGHIST_CMP_BHATTACHARYYA);
    assert_int_equal(imghist_compare_method_from_name("cosine", &m), IMGHIST_E_INVALID_ARG);
    assert_null(imghist_compare_method_name((imghist_compare_method)IMGHIST_CMP_COUNT));
}

/* A set of n random histograms of `bins` bins, some bins and one histogram empty. */
static uint64_t *random_set(size_t n, size_t bins, unsigned seed)
{
    uint64_t *h = malloc(n * bins * sizeof *h);
    assert_non_null(h);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (size_t i = 0; i < n * bins; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        h[i] = x % 5 == 0 ? 0 : x % 100000;
    }
    if (n > 2) {
        memset(h + 2 * bins, 0, bins * sizeof *h);
    }
    return h;
}

/* Equal bits; on the GPU KL divergence to 1e-12 (CUDA's log; test_compare_cuda.c
 * checks its bound). */
static int same(double got, double want, int m)
{
    if (memcmp(&got, &want, sizeof got) == 0) {
        return 1;
    }
    return bs_on_cuda() && m == IMGHIST_CMP_KL_DIV && fabs(got - want) <= 1e-12 * fabs(want);
}

/* Many and all on the backend under test, host memory, against imghist_compare. */
static void test_compare_batches(void **state)
{
    (void)state;
    static const size_t sizes[][2] = {{1, 5}, {7, 3}, {37, 256}, {130, 17}};
    for (int threads = 1; threads <= 4; threads += 3) {
        imghist_ctx *ctx = test_ctx(threads);
        for (size_t s = 0; s < BS_COUNT(sizes); s++) {
            const size_t n = sizes[s][0], bins = sizes[s][1];
            uint64_t *h = random_set(n, bins, (unsigned)s + 1);
            double *all = malloc(n * n * sizeof *all), *many = malloc(n * sizeof *many);
            assert_true(all && many);
            const imghist_hists set = {h, IMGHIST_HIST_U64, IMGHIST_MEM_HOST, bins, n, 0};
            for (int m = 0; m < IMGHIST_CMP_COUNT; m++) {
                EXPECT(ctx, imghist_compare_all(ctx, &set, m, all, IMGHIST_MEM_HOST), IMGHIST_OK);
                const size_t qi = n / 2;
                const imghist_hists q = one_u64(h + qi * bins, bins);
                EXPECT(ctx, imghist_compare_many(ctx, &q, &set, m, many, IMGHIST_MEM_HOST),
                       IMGHIST_OK);
                for (size_t i = 0; i < n; i++) {
                    const double want = cmp_u64(h + qi * bins, h + i * bins, bins, m);
                    assert_true(same(many[i], want, m));
                    for (size_t j = 0; j < n; j++) {
                        const double w = cmp_u64(h + i * bins, h + j * bins, bins, m);
                        if (!same(all[i * n + j], w, m)) {
                            fail_msg("method %d, %zu x %zu bins, pair (%zu, %zu): %.17g, want %.17g",
                                     m, n, bins, i, j, all[i * n + j], w);
                        }
                    }
                }
            }
            free(h);
            free(all);
            free(many);
        }
        imghist_destroy(ctx);
    }
}

/* A strided set (every other row of a packed array) gives the packed one's values. */
static void test_compare_stride(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(1);
    const size_t n = 6, bins = 9;
    uint64_t *h = random_set(2 * n, bins, 7);
    uint64_t *packed = malloc(n * bins * sizeof *packed);
    for (size_t i = 0; i < n; i++) {
        memcpy(packed + i * bins, h + 2 * i * bins, bins * sizeof *h);
    }
    const imghist_hists strided = {h, IMGHIST_HIST_U64, IMGHIST_MEM_HOST, bins, n,
                                   2 * bins * sizeof *h};
    const imghist_hists dense = {packed, IMGHIST_HIST_U64, IMGHIST_MEM_HOST, bins, n, 0};
    double a[36], b[36];
    EXPECT(ctx, imghist_compare_all(ctx, &strided, IMGHIST_CMP_CHISQR, a, IMGHIST_MEM_HOST),
           IMGHIST_OK);
    EXPECT(ctx, imghist_compare_all(ctx, &dense, IMGHIST_CMP_CHISQR, b, IMGHIST_MEM_HOST),
           IMGHIST_OK);
    assert_memory_equal(a, b, sizeof a);
    free(h);
    free(packed);
    imghist_destroy(ctx);
}

static void test_compare_refusals(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(1);
    double r[4];
    const imghist_hists a = one_u64(H1, 5), b = one_u64(H2, 4);
    assert_int_equal(imghist_compare(&a, &b, IMGHIST_CMP_CORREL, r), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_compare(&a, &a, (imghist_compare_method)7, r), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_compare(&a, &a, IMGHIST_CMP_CORREL, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_compare(NULL, &a, IMGHIST_CMP_CORREL, r), IMGHIST_E_INVALID_ARG);
    imghist_hists bad = a;
    bad.type = (imghist_hist_type)9;
    assert_int_equal(imghist_compare(&bad, &a, IMGHIST_CMP_CORREL, r), IMGHIST_E_INVALID_ARG);
    bad = a;
    bad.stride = 3;
    EXPECT(ctx, imghist_compare_all(ctx, &bad, IMGHIST_CMP_CORREL, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_compare_many(ctx, &a, &b, IMGHIST_CMP_CORREL, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_compare_all(ctx, &a, IMGHIST_CMP_COUNT, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_compare_all(NULL, &a, IMGHIST_CMP_CORREL, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    if (!bs_on_cuda()) {
        EXPECT(ctx, imghist_compare_all(ctx, &a, IMGHIST_CMP_CORREL, r, IMGHIST_MEM_DEVICE),
               IMGHIST_E_UNSUPPORTED);
        imghist_hists dev = a;
        dev.mem = IMGHIST_MEM_DEVICE;
        EXPECT(ctx, imghist_compare_many(ctx, &dev, &dev, IMGHIST_CMP_CORREL, r,
                                         IMGHIST_MEM_HOST),
               IMGHIST_E_UNSUPPORTED);
    }
    imghist_destroy(ctx);
}

static const bs_test tests[] = {
    BS_TEST(test_compare_by_hand),  BS_TEST(test_compare_empty),
    BS_TEST(test_compare_types),    BS_TEST(test_compare_names),
    BS_TEST(test_compare_batches),  BS_TEST(test_compare_stride),
    BS_TEST(test_compare_refusals),
};

const bs_part compare_part = BS_PART("compare", tests, NULL, NULL);

extern const bs_part compare_part;
extern const bs_part compare_cuda_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &compare_part,
#ifdef IH_CUDA_PARTS
        &compare_cuda_part,
#endif
    };
    return bs_main(argc, argv, "compare", parts, BS_COUNT(parts));
}
