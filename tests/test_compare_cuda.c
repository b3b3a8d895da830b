/*
 * The CUDA backend's histogram comparisons against a CPU context, a part of
 * test_compare, cuda run only: every method, U64, F32 and F64 sets, host and
 * device histograms and results, one query against many and all pairs, set
 * sizes across the 64-histogram tiles and bin counts across the 4-bin lanes
 * and 16-bin chunks. Equal bits but for KL_DIV, within bins * 2^-52 of the
 * sum of its terms' magnitudes (CUDA's log against the C library's).
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
#include <cuda_runtime_api.h>

#include "imghist.h"
#include "backend_suite.h"

static uint64_t state = 88172645463325252ull;

static uint64_t next(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static size_t value_size(imghist_hist_type t)
{
    return t == IMGHIST_HIST_F32 ? 4 : 8;
}

/* n histograms of `bins` values of type t, a fifth of the bins empty, one
 * histogram empty when n > 3. */
static void *random_set(imghist_hist_type t, size_t n, size_t bins)
{
    unsigned char *p = malloc(n * bins * value_size(t));
    assert_non_null(p);
    for (size_t i = 0; i < n * bins; i++) {
        const uint64_t x = next();
        const int empty = x % 5 == 0 || (n > 3 && i / bins == 3);
        const uint64_t c = empty ? 0 : (x >> 8) % 50000;
        if (t == IMGHIST_HIST_U64) {
            ((uint64_t *)p)[i] = c;
        } else if (t == IMGHIST_HIST_F32) {
            ((float *)p)[i] = (float)c / 997.0f;
        } else {
            ((double *)p)[i] = (double)c / 997.0;
        }
    }
    return p;
}

/* The context's stream done: its device results are there to copy. */
static void sync(imghist_ctx *ctx)
{
    imghist_stream s = NULL;
    assert_int_equal(imghist_get_stream(ctx, &s), IMGHIST_OK);
    assert_int_equal(cudaStreamSynchronize((cudaStream_t)s), cudaSuccess);
}

static double value_at(const void *p, imghist_hist_type t, size_t k)
{
    if (t == IMGHIST_HIST_U64) return (double)(float)((const uint64_t *)p)[k];
    if (t == IMGHIST_HIST_F32) return ((const float *)p)[k];
    return ((const double *)p)[k];
}

/* KL's bound for pair (a, b): bins * 2^-52 * sum |p log(p / q)|. */
static double kl_bound(const void *set, imghist_hist_type t, size_t bins, size_t a, size_t b)
{
    double m = 0;
    for (size_t k = 0; k < bins; k++) {
        const double p = value_at(set, t, a * bins + k);
        double q = value_at(set, t, b * bins + k);
        if (fabs(p) <= DBL_EPSILON) continue;
        if (fabs(q) <= DBL_EPSILON) q = 1e-10;
        m += fabs(p * log(p / q));
    }
    return (double)bins * DBL_EPSILON * m;
}

static void agree(const double *gpu, const double *cpu, size_t count, int m, const void *set,
                  imghist_hist_type t, size_t n, size_t bins, const char *what)
{
    for (size_t e = 0; e < count; e++) {
        if (memcmp(&gpu[e], &cpu[e], sizeof(double)) == 0) continue;
        const size_t a = count == n ? n / 2 : e / n, b = count == n ? e : e % n;
        if (m == IMGHIST_CMP_KL_DIV && fabs(gpu[e] - cpu[e]) <= kl_bound(set, t, bins, a, b)) {
            continue;
        }
        fail_msg("%s: method %d, type %d, %zu x %zu bins, result %zu: GPU %.17g, CPU %.17g",
                 what, m, (int)t, n, bins, e, gpu[e], cpu[e]);
    }
}

static void test_compare_gpu_against_cpu(void **st)
{
    (void)st;
    static const size_t sizes[][2] = {{1, 5}, {3, 4}, {70, 3}, {130, 256}, {65, 1001}, {200, 30}};
    static const imghist_hist_type types[] = {IMGHIST_HIST_U64, IMGHIST_HIST_F32,
                                              IMGHIST_HIST_F64};
    imghist_ctx *gpu = bs_ctx, *cpu = bs_cpu;
    for (size_t s = 0; s < BS_COUNT(sizes); s++) {
        for (size_t ty = 0; ty < BS_COUNT(types); ty++) {
            const imghist_hist_type t = types[ty];
            const size_t n = sizes[s][0], bins = sizes[s][1], bytes = n * bins * value_size(t);
            void *h = random_set(t, n, bins);
            void *dh = NULL;
            double *dout = NULL;
            assert_int_equal(cudaMalloc(&dh, bytes), cudaSuccess);
            assert_int_equal(cudaMalloc((void **)&dout, n * n * sizeof(double)), cudaSuccess);
            assert_int_equal(cudaMemcpy(dh, h, bytes, cudaMemcpyHostToDevice), cudaSuccess);
            double *want = malloc(n * n * sizeof *want), *got = malloc(n * n * sizeof *got);
            assert_true(want && got);
            const imghist_hists host = {h, t, IMGHIST_MEM_HOST, bins, n, 0};
            const imghist_hists dev = {dh, t, IMGHIST_MEM_DEVICE, bins, n, 0};
            const size_t qi = n / 2;
            imghist_hists qh = host, qd = dev;
            qh.data = (const unsigned char *)h + qi * bins * value_size(t);
            qd.data = (const unsigned char *)dh + qi * bins * value_size(t);
            qh.count = qd.count = 1;
            for (int m = 0; m < IMGHIST_CMP_COUNT; m++) {
                assert_int_equal(imghist_compare_all(cpu, &host, m, want, IMGHIST_MEM_HOST),
                                 IMGHIST_OK);
                assert_int_equal(imghist_compare_all(gpu, &host, m, got, IMGHIST_MEM_HOST),
                                 IMGHIST_OK);
                agree(got, want, n * n, m, h, t, n, bins, "all, host");
                memset(got, 0, n * n * sizeof *got);
                assert_int_equal(imghist_compare_all(gpu, &dev, m, dout, IMGHIST_MEM_DEVICE),
                                 IMGHIST_OK);
                sync(gpu);
                assert_int_equal(cudaMemcpy(got, dout, n * n * sizeof *got,
                                            cudaMemcpyDeviceToHost),
                                 cudaSuccess);
                agree(got, want, n * n, m, h, t, n, bins, "all, device");
                assert_int_equal(imghist_compare_many(cpu, &qh, &host, m, want,
                                                      IMGHIST_MEM_HOST),
                                 IMGHIST_OK);
                assert_int_equal(imghist_compare_many(gpu, &qd, &dev, m, got, IMGHIST_MEM_HOST),
                                 IMGHIST_OK);
                agree(got, want, n, m, h, t, n, bins, "many, device to host");
                assert_int_equal(imghist_compare_many(gpu, &qd, &dev, m, dout,
                                                      IMGHIST_MEM_DEVICE),
                                 IMGHIST_OK);
                sync(gpu);
                assert_int_equal(cudaMemcpy(got, dout, n * sizeof *got, cudaMemcpyDeviceToHost),
                                 cudaSuccess);
                agree(got, want, n, m, h, t, n, bins, "many, device");
            }
            free(want);
            free(got);
            free(h);
            cudaFree(dh);
            cudaFree(dout);
        }
    }
}

/* A strided device set gives the packed host set's values. */
static void test_compare_gpu_stride(void **st)
{
    (void)st;
    const size_t n = 9, bins = 7;
    uint64_t *h = random_set(IMGHIST_HIST_U64, 2 * n, bins);
    uint64_t *packed = malloc(n * bins * sizeof *packed);
    for (size_t i = 0; i < n; i++) {
        memcpy(packed + i * bins, h + 2 * i * bins, bins * sizeof *h);
    }
    void *dh = NULL;
    assert_int_equal(cudaMalloc(&dh, 2 * n * bins * 8), cudaSuccess);
    assert_int_equal(cudaMemcpy(dh, h, 2 * n * bins * 8, cudaMemcpyHostToDevice), cudaSuccess);
    const imghist_hists dev = {dh, IMGHIST_HIST_U64, IMGHIST_MEM_DEVICE, bins, n, 2 * bins * 8};
    const imghist_hists host = {packed, IMGHIST_HIST_U64, IMGHIST_MEM_HOST, bins, n, 0};
    double a[81], b[81];
    assert_int_equal(imghist_compare_all(bs_ctx, &dev, IMGHIST_CMP_CHISQR_ALT, a,
                                         IMGHIST_MEM_HOST),
                     IMGHIST_OK);
    assert_int_equal(imghist_compare_all(bs_cpu, &host, IMGHIST_CMP_CHISQR_ALT, b,
                                         IMGHIST_MEM_HOST),
                     IMGHIST_OK);
    assert_memory_equal(a, b, sizeof a);
    free(h);
    free(packed);
    cudaFree(dh);
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_compare_gpu_against_cpu),
    BS_CUDA_TEST(test_compare_gpu_stride),
};

const bs_part compare_cuda_part = BS_PART("compare_cuda", tests, NULL, NULL);
