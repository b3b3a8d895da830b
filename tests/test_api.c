/*
 * The 0.2 public API against its header, through the shared library only:
 * every entry point refuses bad arguments with the documented status and a
 * one-line message, parameters keep their bounds, the CPU backend gives the
 * same answers whatever its thread count, batches equal single calls, and
 * the loaders honour the input-byte limit.
 *
 * Contexts are on the CPU backend (this suite runs where there is no GPU);
 * device memory on them must be refused, never dereferenced.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "test_util.h"
#include "views.h"

/* ---- helpers ---- */

static imghist_ctx *cpu_ctx(void)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_non_null(ctx);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    return ctx;
}

/* A U8 host view; the library only reads an input, so const goes for the
 * struct's sake. */
static imghist_view u8_view(const uint8_t *p, uint32_t w, uint32_t h, size_t pitch)
{
    imghist_view v = {.data = (void *)(uintptr_t)p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                      .width = w, .height = h, .pitch = pitch};
    return v;
}

static imghist_counts host_counts(uint64_t *d, size_t len)
{
    imghist_counts c = {.data = d, .len = len, .mem = IMGHIST_MEM_HOST};
    return c;
}

/* imghist_last_error after a failure: non-empty, one line, printable. */
static void check_message(const imghist_ctx *ctx, const char *call, const char *file, int line)
{
    const char *m = imghist_last_error(ctx);
    if (m == NULL) {
        fail_msg("%s:%d: %s: imghist_last_error is NULL", file, line, call);
    }
    if (m[0] == '\0') {
        fail_msg("%s:%d: %s failed with an empty imghist_last_error", file, line, call);
    }
    for (const unsigned char *p = (const unsigned char *)m; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fail_msg("%s:%d: %s: control character 0x%02x in imghist_last_error \"%s\"", file,
                     line, call, *p, m);
        }
    }
}

static void expect_status(imghist_ctx *ctx, imghist_status got, imghist_status want,
                          const char *call, const char *file, int line)
{
    if (got != want) {
        fail_msg("%s:%d: %s returned %d (%s), expected %d (%s); last error \"%s\"", file, line,
                 call, (int)got, imghist_strerror(got), (int)want, imghist_strerror(want),
                 ctx ? imghist_last_error(ctx) : "");
    }
    if (ctx != NULL && want != IMGHIST_OK) {
        check_message(ctx, call, file, line);
    }
}

/* A successful call on ctx, so that the message a failure leaves can only
 * come from that failure (not from an earlier one still standing). */
static void clear_error(imghist_ctx *ctx, const char *file, int line)
{
    if (ctx == NULL) {
        return;
    }
    int64_t v = 0;
    if (imghist_get_param(ctx, IMGHIST_P_CPU_THREADS, &v) != IMGHIST_OK ||
        imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, v) != IMGHIST_OK) {
        fail_msg("%s:%d: could not clear the last error: \"%s\"", file, line,
                 imghist_last_error(ctx));
    }
    if (imghist_last_error(ctx)[0] != '\0') {
        fail_msg("%s:%d: a successful call left imghist_last_error \"%s\"", file, line,
                 imghist_last_error(ctx));
    }
}

/* EXPECT(ctx, call, status): the call returns status; when it is a failure
 * and ctx is not NULL, ctx's message is one non-empty printable line, set by
 * this call (the comma operator runs clear_error before the call). */
#define EXPECT(ctx, call, want)                                                 \
    (clear_error((ctx), __FILE__, __LINE__),                                    \
     expect_status((ctx), (call), (want), #call, __FILE__, __LINE__))

static void fill_random(tu_rng *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(tu_next(r) >> 56);
    }
}

/* The reference equalization: naive histogram, the public (pure) LUT. */
static void reference_equalize(const uint8_t *src, size_t sp, uint32_t w, uint32_t h,
                               uint8_t *dst, size_t dp, uint64_t hist[256])
{
    uint8_t lut[256];
    tu_naive_hist(src, sp, w, h, hist);
    assert_int_equal(imghist_equalize_lut(hist, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            dst[(size_t)y * dp + x] = lut[src[(size_t)y * sp + x]];
        }
    }
}

static const char *samples_dir(void)
{
    const char *d = getenv("IMGHIST_SAMPLES");
    if (d == NULL || *d == '\0') {
        fail_msg("IMGHIST_SAMPLES is not set (meson test sets it to the samples folder)");
    }
    return d;
}

#define POISON UINT64_C(0xdeadbeefcafef00d)

static void poison(uint64_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = POISON;
    }
}

static void assert_poisoned(const uint64_t *p, size_t from, size_t to, const char *what)
{
    for (size_t i = from; i < to; i++) {
        if (p[i] != POISON) {
            fail_msg("%s: counts[%zu] was written (0x%llx)", what, i, (unsigned long long)p[i]);
        }
    }
}

/* ---- version, statuses, backend names ---- */

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(imghist_version(), IMGHIST_VERSION_NUMBER);
    assert_string_equal(imghist_version_string(), IMGHIST_VERSION_STRING);
    assert_int_equal(IMGHIST_VERSION_MAJOR, 1);
    assert_int_equal(IMGHIST_VERSION_MINOR, 0);
}

static void test_strerror(void **state)
{
    (void)state;
    const char *names[IMGHIST_STATUS_COUNT];
    for (int s = 0; s < IMGHIST_STATUS_COUNT; s++) {
        names[s] = imghist_strerror((imghist_status)s);
        assert_non_null(names[s]);
        if (names[s][0] == '\0') {
            fail_msg("imghist_strerror(%d) is empty", s);
        }
        if (strcmp(names[s], "unknown status") == 0) {
            fail_msg("imghist_strerror(%d), a real status, is \"unknown status\"", s);
        }
        for (int t = 0; t < s; t++) {
            if (strcmp(names[s], names[t]) == 0) {
                fail_msg("statuses %d and %d share the name \"%s\"", t, s, names[s]);
            }
        }
    }
    /* IMGHIST_STATUS_COUNT must follow the last status; past it, and below
     * 0, there is no status. */
    assert_int_equal(IMGHIST_E_FAULTED + 1, IMGHIST_STATUS_COUNT);
    assert_string_equal(imghist_strerror((imghist_status)IMGHIST_STATUS_COUNT), "unknown status");
    assert_string_equal(imghist_strerror((imghist_status)-1), "unknown status");
    assert_string_equal(imghist_strerror((imghist_status)1000), "unknown status");
}

static void test_backend_names(void **state)
{
    (void)state;
    assert_string_equal(imghist_backend_name(IMGHIST_BACKEND_AUTO), "auto");
    assert_string_equal(imghist_backend_name(IMGHIST_BACKEND_CPU), "cpu");
    assert_string_equal(imghist_backend_name(IMGHIST_BACKEND_CUDA), "cuda");
    const imghist_backend all[] = {IMGHIST_BACKEND_AUTO, IMGHIST_BACKEND_CPU, IMGHIST_BACKEND_CUDA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        imghist_backend b = (imghist_backend)-1;
        EXPECT(NULL, imghist_backend_from_name(imghist_backend_name(all[i]), &b), IMGHIST_OK);
        assert_int_equal(b, all[i]);
    }
    /* Case-insensitive, whole names only. */
    const struct {
        const char *name;
        imghist_backend want;
    } ok[] = {{"CPU", IMGHIST_BACKEND_CPU},   {"Cuda", IMGHIST_BACKEND_CUDA},
              {"CUDA", IMGHIST_BACKEND_CUDA}, {"Auto", IMGHIST_BACKEND_AUTO},
              {"cPu", IMGHIST_BACKEND_CPU}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        imghist_backend b = (imghist_backend)-1;
        if (imghist_backend_from_name(ok[i].name, &b) != IMGHIST_OK || b != ok[i].want) {
            fail_msg("imghist_backend_from_name(\"%s\") did not give %s", ok[i].name,
                     imghist_backend_name(ok[i].want));
        }
    }
    const char *bad[] = {"nonsense", "", "cp", "cpux", " cpu", "cpu ", "gpu", "opencl"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        imghist_backend b = IMGHIST_BACKEND_CPU;
        if (imghist_backend_from_name(bad[i], &b) != IMGHIST_E_INVALID_ARG) {
            fail_msg("imghist_backend_from_name(\"%s\") is not IMGHIST_E_INVALID_ARG", bad[i]);
        }
    }
    imghist_backend b;
    EXPECT(NULL, imghist_backend_from_name(NULL, &b), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_backend_from_name("cpu", NULL), IMGHIST_E_INVALID_ARG);
}

/* ---- contexts ---- */

/* imghist_create's device and the device queries, where there may be no GPU. */
static void test_create_on_device(void **state)
{
    (void)state;
    int count = -1;
    EXPECT(NULL, imghist_device_count(NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_device_count(&count), IMGHIST_OK);
    assert_true(count >= 0);
    if (!IMGHIST_WITH_CUDA) {
        assert_int_equal(count, 0);
    }
    imghist_ctx *ctx = NULL;
    int dev = 7;
    /* The CPU backend takes any index and runs on no GPU. */
    EXPECT(NULL, imghist_create(IMGHIST_BACKEND_CPU, 3, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    EXPECT(NULL, imghist_get_device(ctx, &dev), IMGHIST_OK);
    assert_int_equal(dev, -1);
    EXPECT(NULL, imghist_get_device(ctx, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_get_device(NULL, &dev), IMGHIST_E_INVALID_ARG);
    imghist_destroy(ctx);
    /* An index below -1 (the current GPU) is refused with a context that
     * says why. */
    ctx = NULL;
    imghist_status st = imghist_create(IMGHIST_BACKEND_AUTO, -2, &ctx);
    assert_non_null(ctx);
    expect_status(ctx, st, IMGHIST_E_INVALID_ARG, "imghist_create(AUTO, -2)", __FILE__,
                  __LINE__);
    imghist_destroy(ctx);
    EXPECT(NULL, imghist_create(IMGHIST_BACKEND_CPU, 0, NULL), IMGHIST_E_INVALID_ARG);
    /* One past the last GPU: INVALID_ARG where there are GPUs; where there
     * are none, AUTO runs on the CPU and CUDA says there is no GPU. */
    unsetenv("IMGHIST_BACKEND");
    ctx = NULL;
    st = imghist_create(IMGHIST_BACKEND_AUTO, count, &ctx);
    assert_non_null(ctx);
    if (count > 0) {
        expect_status(ctx, st, IMGHIST_E_INVALID_ARG, "imghist_create(AUTO, count)",
                      __FILE__, __LINE__);
    } else {
        assert_int_equal(st, IMGHIST_OK);
        assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    }
    imghist_destroy(ctx);
    ctx = NULL;
    st = imghist_create(IMGHIST_BACKEND_CUDA, count, &ctx);
    assert_non_null(ctx);
    expect_status(ctx, st,
                  count > 0 ? IMGHIST_E_INVALID_ARG
                            : (IMGHIST_WITH_CUDA ? IMGHIST_E_NO_GPU : IMGHIST_E_UNSUPPORTED),
                  "imghist_create(CUDA, count)", __FILE__, __LINE__);
    imghist_destroy(ctx);
}

static void test_create_and_getters(void **state)
{
    (void)state;
    EXPECT(NULL, imghist_create(IMGHIST_BACKEND_CPU, -1, NULL), IMGHIST_E_INVALID_ARG);

    /* A backend outside the enum is a bad enum. */
    imghist_ctx *ctx = NULL;
    EXPECT(NULL, imghist_create((imghist_backend)9, -1, &ctx), IMGHIST_E_INVALID_ARG);
    if (ctx != NULL) {
        check_message(ctx, "imghist_create((imghist_backend)9)", __FILE__, __LINE__);
        imghist_destroy(ctx);
    }

    /* Asking for CUDA where it cannot run still hands back a context that
     * explains why: UNSUPPORTED in a build without CUDA, NO_GPU otherwise. */
    ctx = NULL;
    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx);
    if (st != IMGHIST_OK) {
        assert_non_null(ctx);
        /* Not EXPECT: that would clear the message under test first. */
        expect_status(ctx, st, IMGHIST_WITH_CUDA ? IMGHIST_E_NO_GPU : IMGHIST_E_UNSUPPORTED,
                      "imghist_create(IMGHIST_BACKEND_CUDA)", __FILE__, __LINE__);
    } else {
        assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CUDA);
    }
    imghist_destroy(ctx);

    /* AUTO never gives AUTO back, and never fails for want of a GPU. */
    unsetenv("IMGHIST_BACKEND");
    ctx = NULL;
    EXPECT(NULL, imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx), IMGHIST_OK);
    assert_int_not_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_AUTO);
    assert_string_equal(imghist_last_error(ctx), "");
    imghist_destroy(ctx);
    /* The variable goes through the one parser of names: any case. */
    setenv("IMGHIST_BACKEND", "CPU", 1);
    ctx = NULL;
    EXPECT(NULL, imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    imghist_destroy(ctx);
    unsetenv("IMGHIST_BACKEND");

    /* Fresh context: no error, no note; the getters never give NULL, not
     * even for a NULL context. */
    ctx = cpu_ctx();
    assert_string_equal(imghist_last_error(ctx), "");
    assert_string_equal(imghist_last_note(ctx), "");
    assert_non_null(imghist_last_error(NULL));
    assert_non_null(imghist_last_note(NULL));
    (void)imghist_get_backend(NULL); /* must not crash */
    imghist_destroy(ctx);
    imghist_destroy(NULL);
}

static void test_streams_on_cpu(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    EXPECT(ctx, imghist_set_stream(ctx, NULL), IMGHIST_E_UNSUPPORTED);
    imghist_stream s = (imghist_stream)(uintptr_t)0x1234;
    /* Getters take a const context: a status, and the message left alone. */
    EXPECT(ctx, imghist_set_stream(ctx, NULL), IMGHIST_E_UNSUPPORTED);
    assert_int_equal(imghist_get_stream(ctx, &s), IMGHIST_E_UNSUPPORTED);
    assert_non_null(strstr(imghist_last_error(ctx), "stream"));
    EXPECT(NULL, imghist_set_stream(NULL, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_get_stream(NULL, &s), IMGHIST_E_INVALID_ARG);
    imghist_destroy(ctx);
}

/* ---- parameters ---- */

static const imghist_param all_params[] = {
    IMGHIST_P_MAX_PIXELS,    IMGHIST_P_MAX_INPUT_BYTES,        IMGHIST_P_CPU_THREADS,
    IMGHIST_P_STAGING_BYTES, IMGHIST_P_LOAD_GRAY, IMGHIST_P_PNG_LEVEL,
    IMGHIST_P_LOAD_TRUNCATED, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, IMGHIST_P_EXP_BATCH_RUN, IMGHIST_P_EXP_EQ_BATCH_SMALL,
    IMGHIST_P_EXP_BATCH_TINY, IMGHIST_P_EXP_HIST16_GLOBAL,
};
#define N_PARAMS (sizeof all_params / sizeof all_params[0])

static void test_param_defaults(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    int64_t v = -1;
    EXPECT(ctx, imghist_get_param(ctx, IMGHIST_P_MAX_PIXELS, &v), IMGHIST_OK);
    assert_int_equal(v, INT64_C(1) << 30);
    EXPECT(ctx, imghist_get_param(ctx, IMGHIST_P_LOAD_TRUNCATED, &v), IMGHIST_OK);
    assert_int_equal(v, 0); /* JPEGs that end early are refused by default */
    EXPECT(ctx, imghist_get_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, &v), IMGHIST_OK);
    assert_int_equal(v, INT64_C(2147483647));
    EXPECT(ctx, imghist_get_param(ctx, IMGHIST_P_CPU_THREADS, &v), IMGHIST_OK);
    assert_int_equal(v, 1);
    EXPECT(ctx, imghist_get_param(ctx, IMGHIST_P_STAGING_BYTES, &v), IMGHIST_OK);
    assert_int_equal(v, 0);
    assert_int_equal(imghist_exp_last_route(ctx), IMGHIST_ROUTE_NONE); /* no batch yet */
    assert_int_equal(imghist_exp_last_route(NULL), IMGHIST_ROUTE_NONE);
    /* "default and most": the input-byte limit cannot be raised past 2^31 - 1. */
    int64_t lo = 0, hi = 0;
    EXPECT(NULL, imghist_param_bounds(IMGHIST_P_MAX_INPUT_BYTES, &lo, &hi), IMGHIST_OK);
    assert_int_equal(hi, INT64_C(2147483647));
    /* Every default lies within its bounds. */
    for (size_t i = 0; i < N_PARAMS; i++) {
        EXPECT(NULL, imghist_param_bounds(all_params[i], &lo, &hi), IMGHIST_OK);
        EXPECT(ctx, imghist_get_param(ctx, all_params[i], &v), IMGHIST_OK);
        if (v < lo || v > hi) {
            fail_msg("param %d: default %lld outside [%lld, %lld]", (int)all_params[i],
                     (long long)v, (long long)lo, (long long)hi);
        }
    }
    imghist_destroy(ctx);
}

static void test_param_bounds_enforced(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    for (size_t i = 0; i < N_PARAMS; i++) {
        const imghist_param p = all_params[i];
        int64_t lo = INT64_MAX, hi = INT64_MIN, v = 0;
        EXPECT(NULL, imghist_param_bounds(p, &lo, &hi), IMGHIST_OK);
        if (lo > hi) {
            fail_msg("param %d: bounds [%lld, %lld] are empty", (int)p, (long long)lo,
                     (long long)hi);
        }
        EXPECT(ctx, imghist_set_param(ctx, p, lo), IMGHIST_OK);
        EXPECT(ctx, imghist_get_param(ctx, p, &v), IMGHIST_OK);
        assert_int_equal(v, lo);
        EXPECT(ctx, imghist_set_param(ctx, p, hi), IMGHIST_OK);
        EXPECT(ctx, imghist_get_param(ctx, p, &v), IMGHIST_OK);
        assert_int_equal(v, hi);
        /* Out of bounds: refused, and the value stays what it was. */
        if (hi < INT64_MAX) {
            EXPECT(ctx, imghist_set_param(ctx, p, hi + 1), IMGHIST_E_INVALID_ARG);
            EXPECT(ctx, imghist_get_param(ctx, p, &v), IMGHIST_OK);
            assert_int_equal(v, hi);
        }
        EXPECT(ctx, imghist_set_param(ctx, p, lo), IMGHIST_OK);
        if (lo > INT64_MIN) {
            EXPECT(ctx, imghist_set_param(ctx, p, lo - 1), IMGHIST_E_INVALID_ARG);
            EXPECT(ctx, imghist_get_param(ctx, p, &v), IMGHIST_OK);
            assert_int_equal(v, lo);
        }
        EXPECT(ctx, imghist_set_param(ctx, p, INT64_MIN), lo == INT64_MIN ? IMGHIST_OK
                                                                        : IMGHIST_E_INVALID_ARG);
        EXPECT(ctx, imghist_set_param(ctx, p, INT64_MAX), hi == INT64_MAX ? IMGHIST_OK
                                                                        : IMGHIST_E_INVALID_ARG);
    }
    imghist_destroy(ctx);
}

static void test_param_unknown_and_null(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    int64_t v = 5, lo, hi;
    /* 9 and 1005 are numbers of parameters that are gone (the equalization
     * method, the batch route): unknown now, not reused. */
    const int unknown[] = {0, 77, 11, 999, 1050, -1, 9, 1005};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const imghist_param p = (imghist_param)unknown[i];
        EXPECT(ctx, imghist_set_param(ctx, p, 1), IMGHIST_E_UNSUPPORTED);
        assert_int_equal(imghist_get_param(ctx, p, &v), IMGHIST_E_UNSUPPORTED);
        EXPECT(NULL, imghist_param_bounds(p, &lo, &hi), IMGHIST_E_UNSUPPORTED);
    }
    EXPECT(NULL, imghist_set_param(NULL, IMGHIST_P_MAX_PIXELS, 10), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_get_param(NULL, IMGHIST_P_MAX_PIXELS, &v), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_get_param(ctx, IMGHIST_P_MAX_PIXELS, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_param_bounds(IMGHIST_P_MAX_PIXELS, NULL, &hi), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_param_bounds(IMGHIST_P_MAX_PIXELS, &lo, NULL), IMGHIST_E_INVALID_ARG);

    /* Parameters belong to their context. */
    imghist_ctx *other = cpu_ctx();
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 12345), IMGHIST_OK);
    EXPECT(other, imghist_get_param(other, IMGHIST_P_MAX_PIXELS, &v), IMGHIST_OK);
    assert_int_equal(v, INT64_C(1) << 30);
    imghist_destroy(other);
    imghist_destroy(ctx);
}

/* ---- imghist_bins ---- */

static void test_bins(void **state)
{
    (void)state;
    const imghist_histspec natural = {256, 0.0, 256.0, 0};
    const imghist_histspec zero = {0};
    const imghist_histspec hundred = {100, 0.0, 256.0, 0};
    const imghist_histspec shifted = {256, 1.0, 257.0, 0};
    assert_int_equal(imghist_bins(NULL, IMGHIST_U8), 256);
    assert_int_equal(imghist_bins(&natural, IMGHIST_U8), 256);
    assert_int_equal(imghist_bins(&zero, IMGHIST_U8), 256);
    assert_int_equal(imghist_bins(&hundred, IMGHIST_U8), 100);
    assert_int_equal(imghist_bins(&shifted, IMGHIST_U8), 256);
    assert_int_equal(imghist_bins(NULL, IMGHIST_U16), 65536);
    assert_int_equal(imghist_bins(NULL, IMGHIST_F32), 0); /* no natural binning */
    assert_int_equal(imghist_bins(&hundred, IMGHIST_F32), 100);
    const imghist_histspec huge = {IMGHIST_MAX_BINS + 1u, 0.0, 1.0, 0};
    const imghist_histspec most = {IMGHIST_MAX_BINS, 0.0, 1.0, 0};
    const imghist_histspec empty = {10, 1.0, 1.0, 0};
    const imghist_histspec nan_range = {10, 0.0, NAN, 0};
    const imghist_histspec bad_flag = {10, 0.0, 1.0, 8u};
    assert_int_equal(imghist_bins(&huge, IMGHIST_F32), 0);
    assert_int_equal(imghist_bins(&most, IMGHIST_F32), IMGHIST_MAX_BINS);
    assert_int_equal(imghist_bins(&empty, IMGHIST_F32), 0);
    assert_int_equal(imghist_bins(&nan_range, IMGHIST_F32), 0);
    assert_int_equal(imghist_bins(&bad_flag, IMGHIST_F32), 0);
    /* Counters: channels times bins, plus three per channel with outliers. */
    const imghist_histspec out3 = {100, 0.0, 256.0, IMGHIST_OUTLIERS};
    assert_int_equal(imghist_counts_len(NULL, IMGHIST_U8, 0), 256);
    assert_int_equal(imghist_counts_len(NULL, IMGHIST_U8, 3), 768);
    assert_int_equal(imghist_counts_len(&out3, IMGHIST_U16, 4), 412);
    assert_int_equal(imghist_counts_len(&out3, IMGHIST_U16, 5), 0);
    assert_int_equal(imghist_counts_len(NULL, IMGHIST_F32, 1), 0);
    assert_int_equal(imghist_bins(NULL, (imghist_dtype)7), 0);
    assert_int_equal(imghist_bins(NULL, (imghist_dtype)0), 0);
}

/* ---- imghist_histogram: refusals ---- */

enum { W = 16, H = 4, PITCH = 20 };

static void test_histogram_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static uint8_t px[PITCH * H * 4]; /* room for 4-byte samples */
    uint64_t h[300];
    const imghist_view ok = u8_view(px, W, H, PITCH);
    const imghist_counts out = host_counts(h, 256);
    imghist_view v;
    imghist_counts c;

    EXPECT(ctx, imghist_histogram(ctx, &ok, NULL, &out), IMGHIST_OK);
    assert_string_equal(imghist_last_error(ctx), "");

    EXPECT(NULL, imghist_histogram(NULL, &ok, NULL, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogram(ctx, NULL, NULL, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogram(ctx, &ok, NULL, NULL), IMGHIST_E_INVALID_ARG);
    v = ok, v.data = NULL;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    c = out, c.data = NULL;
    EXPECT(ctx, imghist_histogram(ctx, &ok, NULL, &c), IMGHIST_E_INVALID_ARG);
    v = ok, v.width = 0;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.height = 0;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.pitch = W - 1;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.dtype = (imghist_dtype)0;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    c = out, c.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_histogram(ctx, &ok, NULL, &c), IMGHIST_E_INVALID_ARG);

    /* Types, channels, masks and bins: the counters the call needs. */
    v = ok, v.dtype = IMGHIST_U16, v.width = W / 2;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_BUFSIZE);
    v = ok, v.dtype = IMGHIST_U16, v.width = W / 2, v.pitch = PITCH + 1;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.dtype = IMGHIST_F32, v.width = W / 4;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.channels = 2, v.width = W / 2;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_BUFSIZE);
    v = ok, v.channels = 5, v.width = 1;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_UNSUPPORTED);
    imghist_view m = vw_masked(ok, &ok);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_OK);
    v = ok, v.width = W - 1;
    m = vw_masked(ok, &v);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.channels = 2, v.width = W / 2;
    m = vw_masked(v, &ok);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.dtype = IMGHIST_U16, v.width = W / 2, v.height = H;
    m = vw_masked(ok, &v);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_E_INVALID_ARG);
    v = ok, v.mem = IMGHIST_MEM_DEVICE;
    m = vw_masked(ok, &v);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_E_INVALID_ARG);
    /* A view of one image refuses a mask view of several; the mask's own
     * mask is not read. */
    v = vw_tensor(ok, 2, 0);
    m = vw_masked(ok, &v);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_E_INVALID_ARG);
    const imghist_view bad_mask = {.data = NULL};
    v = vw_masked(ok, &bad_mask);
    m = vw_masked(ok, &v);
    EXPECT(ctx, imghist_histogram(ctx, &m, NULL, &out), IMGHIST_OK);
    const imghist_histspec hundred = {100, 0.0, 256.0, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &hundred, &out), IMGHIST_OK);
    const imghist_histspec shifted = {256, 1.0, 257.0, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &shifted, &out), IMGHIST_OK);
    const imghist_histspec with_outliers = {256, 1.0, 257.0, IMGHIST_OUTLIERS};
    c = out, c.len = 259;
    EXPECT(ctx, imghist_histogram(ctx, &ok, &with_outliers, &c), IMGHIST_OK);
    c = out, c.len = 258;
    EXPECT(ctx, imghist_histogram(ctx, &ok, &with_outliers, &c), IMGHIST_E_BUFSIZE);
    const imghist_histspec reversed = {10, 5.0, 1.0, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &reversed, &out), IMGHIST_E_INVALID_ARG);
    const imghist_histspec inf_range = {10, 0.0, INFINITY, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &inf_range, &out), IMGHIST_E_INVALID_ARG);
    const imghist_histspec bad_flag = {10, 0.0, 1.0, 8u};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &bad_flag, &out), IMGHIST_E_INVALID_ARG);
    const imghist_histspec too_many = {IMGHIST_MAX_BINS + 1u, 0.0, 1.0, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &too_many, &out), IMGHIST_E_INVALID_ARG);
    const imghist_histspec too_narrow = {1000, 1.0, 1.0 + 0x1p-50, 0};
    EXPECT(ctx, imghist_histogram(ctx, &ok, &too_narrow, &out), IMGHIST_E_INVALID_ARG);

    /* Device memory on a CPU context: refused, never touched. */
    v = ok, v.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_E_UNSUPPORTED);
    c = out, c.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_histogram(ctx, &ok, NULL, &c), IMGHIST_E_UNSUPPORTED);

    /* channels 1 is the same as 0. */
    v = ok, v.channels = 1;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &out), IMGHIST_OK);
    assert_string_equal(imghist_last_error(ctx), "");
    imghist_destroy(ctx);
}

/* A buffer one short is refused whole: nothing written, inside or past len. */
static void test_histogram_bufsize(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t px[W * H];
    memset(px, 3, sizeof px);
    const imghist_view v = u8_view(px, W, H, W);
    uint64_t h[300];
    poison(h, 300);
    imghist_counts c = host_counts(h, 255);
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 255, 300, "refused histogram, past len");
    assert_poisoned(h, 0, 255, "refused histogram, within len");
    c.len = 0;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 0, 300, "refused histogram (len 0)");
    /* Longer than needed: 256 written, the rest left alone. */
    c.len = 257;
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &c), IMGHIST_OK);
    assert_int_equal(h[3], W * H);
    assert_int_equal(h[0], 0);
    assert_poisoned(h, 256, 300, "histogram with len 257");
    imghist_destroy(ctx);
}

/* The natural U8 binning written out, and the zeroed spec, equal NULL. */
static void test_histogram_specs(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_histogram_specs"));
    static uint8_t px[301 * 77];
    fill_random(&r, px, sizeof px);
    const imghist_view v = u8_view(px, 300, 77, 301);
    uint64_t want[256], got[256];
    tu_naive_hist(px, 301, 300, 77, want);
    const imghist_histspec natural = {256, 0.0, 256.0, 0};
    const imghist_histspec zero = {0};
    const imghist_histspec *specs[] = {NULL, &natural, &zero};
    for (size_t i = 0; i < 3; i++) {
        poison(got, 256);
        const imghist_counts c = host_counts(got, 256);
        EXPECT(ctx, imghist_histogram(ctx, &v, specs[i], &c), IMGHIST_OK);
        assert_memory_equal(got, want, sizeof want);
    }
    imghist_destroy(ctx);
}

/* IMGHIST_ACCUMULATE adds; without it the counts are overwritten. */
static void test_accumulate(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_accumulate"));
    enum { N = 3 };
    static uint8_t px[N][123 * 45];
    imghist_view views[N];
    uint64_t want[N][256];
    for (int i = 0; i < N; i++) {
        fill_random(&r, px[i], sizeof px[i]);
        views[i] = u8_view(px[i], 120 - 10 * (uint32_t)i, 45 - (uint32_t)i, 123);
        tu_naive_hist(px[i], 123, views[i].width, views[i].height, want[i]);
    }
    const imghist_histspec acc = {256, 0.0, 256.0, IMGHIST_ACCUMULATE};
    const imghist_histspec acc_default = {0, 0.0, 0.0, IMGHIST_ACCUMULATE};
    const imghist_histspec *specs[] = {&acc, &acc_default};
    for (size_t s = 0; s < 2; s++) {
        /* Single. */
        uint64_t got[256];
        for (int b = 0; b < 256; b++) {
            got[b] = (uint64_t)b * 1000003u + 7;
        }
        const imghist_counts c = host_counts(got, 256);
        EXPECT(ctx, imghist_histogram(ctx, &views[0], specs[s], &c), IMGHIST_OK);
        for (int b = 0; b < 256; b++) {
            assert_int_equal(got[b], (uint64_t)b * 1000003u + 7 + want[0][b]);
        }
        /* Twice: twice the histogram on top. */
        EXPECT(ctx, imghist_histogram(ctx, &views[0], specs[s], &c), IMGHIST_OK);
        for (int b = 0; b < 256; b++) {
            assert_int_equal(got[b], (uint64_t)b * 1000003u + 7 + 2 * want[0][b]);
        }
        /* Batch. */
        uint64_t all[N * 256];
        for (size_t k = 0; k < N * 256; k++) {
            all[k] = k * 31u + 1;
        }
        const imghist_counts ca = host_counts(all, N * 256);
        EXPECT(ctx, imghist_histogram_list(ctx, views, N, specs[s], &ca), IMGHIST_OK);
        for (int i = 0; i < N; i++) {
            for (int b = 0; b < 256; b++) {
                const size_t k = (size_t)i * 256 + (size_t)b;
                assert_int_equal(all[k], k * 31u + 1 + want[i][b]);
            }
        }
    }
    /* Without the flag: overwritten. */
    uint64_t got[256], all[N * 256];
    poison(got, 256);
    poison(all, N * 256);
    const imghist_counts c = host_counts(got, 256), ca = host_counts(all, N * 256);
    EXPECT(ctx, imghist_histogram(ctx, &views[1], NULL, &c), IMGHIST_OK);
    assert_memory_equal(got, want[1], sizeof got);
    EXPECT(ctx, imghist_histogram_list(ctx, views, N, NULL, &ca), IMGHIST_OK);
    assert_memory_equal(all, want, sizeof all);
    imghist_destroy(ctx);
}

/* ---- batches ---- */

static void test_batch_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static uint8_t px[3][PITCH * H * 4];
    imghist_view v[3];
    for (int i = 0; i < 3; i++) {
        v[i] = u8_view(px[i], W, H, PITCH);
    }
    static uint64_t h[3 * 256 + 40];
    const imghist_counts out = host_counts(h, 3 * 256);
    imghist_counts c;
    imghist_view bad[3];

    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &out), IMGHIST_OK);
    /* The CPU backend records no batch route. */
    assert_int_equal(imghist_exp_last_route(ctx), IMGHIST_ROUTE_NONE);
    EXPECT(ctx, imghist_histogram_list(ctx, v, 0, NULL, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogram_list(ctx, NULL, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_histogram_list(NULL, v, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    c = out, c.data = NULL;
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_E_INVALID_ARG);

    /* Short by one count: refused whole. */
    poison(h, 3 * 256 + 40);
    c = out, c.len = 3 * 256 - 1;
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 0, 3 * 256 + 40, "refused batch");
    c = out, c.len = 256; /* enough for one image, not three */
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 0, 3 * 256 + 40, "refused batch (len 256)");
    /* Longer than needed: the tail is left alone. */
    c = out, c.len = 3 * 256 + 40;
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_OK);
    assert_poisoned(h, 3 * 256, 3 * 256 + 40, "batch with a longer buffer");

    /* One bad view spoils the batch, wherever it is. */
    for (int at = 0; at < 3; at++) {
        memcpy(bad, v, sizeof bad);
        bad[at].width = 0;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].pitch = W - 1;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].data = NULL;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].dtype = (imghist_dtype)7;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].mem = (imghist_mem)5;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].dtype = IMGHIST_U16;
        bad[at].width = W / 2;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        memcpy(bad, v, sizeof bad);
        bad[at].channels = 2;
        bad[at].width = W / 2;
        EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
        /* Host and device mixed: INVALID_ARG or UNSUPPORTED (this is a
         * CPU context, where any device view is unsupported). */
        memcpy(bad, v, sizeof bad);
        bad[at].mem = IMGHIST_MEM_DEVICE;
        clear_error(ctx, __FILE__, __LINE__);
        const imghist_status st = imghist_histogram_list(ctx, bad, 3, NULL, &out);
        if (st != IMGHIST_E_INVALID_ARG && st != IMGHIST_E_UNSUPPORTED) {
            fail_msg("batch mixing host and device (device at %d): %d (%s)", at, (int)st,
                     imghist_strerror(st));
        }
        check_message(ctx, "imghist_histogram_list(mixed host and device)", __FILE__, __LINE__);
    }
    /* All on the device: UNSUPPORTED on the CPU. */
    memcpy(bad, v, sizeof bad);
    for (int i = 0; i < 3; i++) {
        bad[i].mem = IMGHIST_MEM_DEVICE;
    }
    EXPECT(ctx, imghist_histogram_list(ctx, bad, 3, NULL, &out), IMGHIST_E_UNSUPPORTED);
    c = out, c.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_E_UNSUPPORTED);
    c = out, c.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, NULL, &c), IMGHIST_E_INVALID_ARG);
    const imghist_histspec hundred = {100, 0.0, 256.0, 0};
    /* Other bins: image by image, each at i * 100. */
    EXPECT(ctx, imghist_histogram_list(ctx, v, 3, &hundred, &out), IMGHIST_OK);
    for (int i = 0; i < 3; i++) {
        uint64_t one[100], *got = out.data + i * 100;
        const imghist_counts oc = host_counts(one, 100);
        EXPECT(ctx, imghist_histogram(ctx, &v[i], &hundred, &oc), IMGHIST_OK);
        assert_memory_equal(got, one, sizeof one);
    }
    imghist_destroy(ctx);
}

/* Masked lists and tensors: what they refuse, and the message naming the
 * mask. */
static void test_batch_masked_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static uint8_t px[3][PITCH * H];
    static uint8_t mk[3][W * H];
    imghist_view v[3], m[3], vm[3];
    for (int i = 0; i < 3; i++) {
        memset(mk[i], i == 1 ? 0 : 1, sizeof mk[i]);
        v[i] = u8_view(px[i], W, H, PITCH);
        m[i] = u8_view(mk[i], W, H, W);
    }
    static uint64_t h[3 * 256];
    const imghist_counts out = host_counts(h, 3 * 256);
    vw_list_masked(vm, v, m, 3);
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_OK);
    /* image 1's mask is all zero: nothing counted there, the rest whole */
    uint64_t sum[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        for (int b = 0; b < 256; b++) sum[i] += h[i * 256 + b];
    }
    assert_true(sum[0] == (uint64_t)W * H && sum[1] == 0 && sum[2] == (uint64_t)W * H);
    /* A list's views carry masks all or none. */
    vm[1].mask = NULL;
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "all or none"));
    /* A list takes one image a view, and one mask a view. */
    vw_list_masked(vm, v, NULL, 3);
    vm[2] = vw_tensor(v[2], 2, 0);
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "list view 2 holds 2 images"));
    const imghist_view two_masks = vw_tensor(m[0], 2, 0);
    vw_list_masked(vm, v, m, 3);
    vm[0].mask = &two_masks;
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "list view 0 has a mask of 2 images"));
    imghist_view bad[3] = {m[0], m[1], m[2]};
    bad[2].width = W - 1;
    vw_list_masked(vm, v, bad, 3);
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch mask 2: mask is"));
    bad[2] = m[2];
    bad[1].dtype = IMGHIST_U16;
    vw_list_masked(vm, v, bad, 3);
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch mask 1"));
    bad[1] = m[1];
    bad[0].data = NULL;
    vw_list_masked(vm, v, bad, 3);
    EXPECT(ctx, imghist_histogram_list(ctx, vm, 3, NULL, &out), IMGHIST_E_INVALID_ARG);
    /* tensor: a mask of count 0 or 1 serves every image, a mask of the
     * images' count one each; any other count is refused, and so are a bad
     * mask and masks that leave the address space */
    imghist_view mt;
    const size_t one_for_all[] = {0, 1};
    for (size_t k = 0; k < 2; k++) {
        const imghist_view t = vw_tensor_masked(v[0], 3, PITCH * H, m[0], one_for_all[k], 0, &mt);
        EXPECT(ctx, imghist_histogram(ctx, &t, NULL, &out), IMGHIST_OK);
        for (int i = 0; i < 3; i++) {
            uint64_t s = 0;
            for (int b = 0; b < 256; b++) s += h[i * 256 + b];
            assert_true(s == (uint64_t)W * H);
        }
    }
    imghist_view t = vw_tensor_masked(v[0], 3, PITCH * H, m[0], 2, 0, &mt);
    EXPECT(ctx, imghist_histogram(ctx, &t, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "holds 2 masks for 3 images"));
    t = vw_tensor_masked(v[0], 3, PITCH * H, m[0], 4, 0, &mt);
    EXPECT(ctx, imghist_histogram(ctx, &t, NULL, &out), IMGHIST_E_INVALID_ARG);
    t = vw_tensor_masked(v[0], 3, PITCH * H, bad[0], 1, 0, &mt);
    EXPECT(ctx, imghist_histogram(ctx, &t, NULL, &out), IMGHIST_E_INVALID_ARG);
    t = vw_tensor_masked(v[0], 3, PITCH * H, m[0], 3, PTRDIFF_MIN, &mt);
    EXPECT(ctx, imghist_histogram(ctx, &t, NULL, &out), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "the masks"));
    imghist_destroy(ctx);
}

/* Images of different sizes and pitches: the batch equals one call each. */
static void test_batch_equals_single(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_batch_equals_single"));
    enum { N = 7 };
    const uint32_t ws[N] = {1, 640, 3, 1000, 17, 256, 999};
    const uint32_t hs[N] = {1, 480, 1000, 1, 17, 3, 311};
    uint8_t *px[N];
    imghist_view v[N];
    for (int i = 0; i < N; i++) {
        const size_t pitch = ws[i] + (size_t)tu_below(&r, 9);
        px[i] = malloc(pitch * hs[i]);
        assert_non_null(px[i]);
        fill_random(&r, px[i], pitch * hs[i]);
        v[i] = u8_view(px[i], ws[i], hs[i], pitch);
    }
    for (int threads = 1; threads <= 3; threads += 2) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
        static uint64_t batch[N * 256 + 1];
        poison(batch, N * 256 + 1);
        const imghist_counts cb = host_counts(batch, N * 256 + 1);
        EXPECT(ctx, imghist_histogram_list(ctx, v, N, NULL, &cb), IMGHIST_OK);
        assert_poisoned(batch, N * 256, N * 256 + 1, "batch tail");
        for (int i = 0; i < N; i++) {
            uint64_t one[256], naive[256];
            const imghist_counts c = host_counts(one, 256);
            EXPECT(ctx, imghist_histogram(ctx, &v[i], NULL, &c), IMGHIST_OK);
            tu_naive_hist(px[i], v[i].pitch, ws[i], hs[i], naive);
            assert_memory_equal(one, naive, sizeof one);
            assert_memory_equal(batch + (size_t)i * 256, one, sizeof one);
        }
        /* A batch of one is a single call. */
        uint64_t one[256];
        const imghist_counts c1 = host_counts(one, 256);
        EXPECT(ctx, imghist_histogram_list(ctx, &v[5], 1, NULL, &c1), IMGHIST_OK);
        assert_memory_equal(one, batch + 5 * 256, sizeof one);
    }
    for (int i = 0; i < N; i++) {
        free(px[i]);
    }
    imghist_destroy(ctx);
}

/* Thousands of small images on four threads (the CPU backend's batch claims
 * a few images at a time): each against the naive histogram, then added to
 * with IMGHIST_ACCUMULATE. */
static void test_batch_many_images(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 4), IMGHIST_OK);
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_batch_many_images"));
    enum { N = 3000 };
    imghist_view *v = malloc(N * sizeof *v);
    uint8_t **px = malloc(N * sizeof *px);
    uint64_t *want = malloc((size_t)N * 256 * sizeof *want);
    uint64_t *got = malloc(((size_t)N * 256 + 1) * sizeof *got);
    assert_true(v && px && want && got);
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&r, 64), h = 1 + tu_below(&r, 64);
        const size_t pitch = w + (size_t)tu_below(&r, 5), off = tu_below(&r, 16);
        px[i] = malloc(off + pitch * h);
        assert_non_null(px[i]);
        fill_random(&r, px[i], off + pitch * h);
        v[i] = u8_view(px[i] + off, w, h, pitch);
        tu_naive_hist(px[i] + off, pitch, w, h, want + (size_t)i * 256);
    }
    poison(got, (size_t)N * 256 + 1);
    const imghist_counts c = host_counts(got, (size_t)N * 256 + 1);
    EXPECT(ctx, imghist_histogram_list(ctx, v, N, NULL, &c), IMGHIST_OK);
    assert_memory_equal(got, want, (size_t)N * 256 * sizeof *got);
    assert_poisoned(got, (size_t)N * 256, (size_t)N * 256 + 1, "batch tail");
    const imghist_histspec acc = {256, 0.0, 256.0, IMGHIST_ACCUMULATE};
    EXPECT(ctx, imghist_histogram_list(ctx, v, N, &acc, &c), IMGHIST_OK);
    for (size_t k = 0; k < (size_t)N * 256; k++) {
        if (got[k] != 2 * want[k]) {
            fail_msg("image %zu bin %zu: %llu after accumulating, want %llu", k / 256, k % 256,
                     (unsigned long long)got[k], (unsigned long long)(2 * want[k]));
        }
    }
    for (int i = 0; i < N; i++) {
        free(px[i]);
    }
    free(px);
    free(v);
    free(want);
    free(got);
    imghist_destroy(ctx);
}

/* A view of several images (a tensor): the counts of the images it describes
 * (forwards, backwards, stride 0, pitched rows, accumulating), and its
 * refusals. */
static void test_histogram_strided(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 2), IMGHIST_OK);
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_histogram_strided"));
    enum { N = 40, W = 37, H = 11, PITCH = 41 };
    const ptrdiff_t img = (ptrdiff_t)PITCH * H + 5;
    uint8_t *buf = malloc((size_t)img * N + 16);
    uint64_t *want = malloc(N * 256 * sizeof *want), *got = malloc((N * 256 + 1) * sizeof *got);
    assert_true(buf && want && got);
    fill_random(&r, buf, (size_t)img * N + 16);
    const ptrdiff_t strides[] = {img, -img, 0};
    for (size_t k = 0; k < 3; k++) {
        uint8_t *first = strides[k] < 0 ? buf + 3 + (N - 1) * img : buf + 3;
        for (int i = 0; i < N; i++) {
            tu_naive_hist(first + i * strides[k], PITCH, W, H, want + (size_t)i * 256);
        }
        const imghist_view v = vw_tensor(u8_view(first, W, H, PITCH), N, strides[k]);
        poison(got, N * 256 + 1);
        const imghist_counts c = host_counts(got, N * 256 + 1);
        EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &c), IMGHIST_OK);
        assert_memory_equal(got, want, N * 256 * sizeof *got);
        assert_poisoned(got, N * 256, N * 256 + 1, "strided tail");
        const imghist_histspec acc = {256, 0.0, 256.0, IMGHIST_ACCUMULATE};
        EXPECT(ctx, imghist_histogram(ctx, &v, &acc, &c), IMGHIST_OK);
        for (size_t j = 0; j < N * 256; j++) {
            assert_int_equal(got[j], 2 * want[j]);
        }
    }
    /* count 0 and 1 are one image, whatever the stride. */
    const imghist_view v = vw_tensor(u8_view(buf, W, H, PITCH), N, img);
    const imghist_counts c = host_counts(got, N * 256);
    tu_naive_hist(buf, PITCH, W, H, want);
    for (size_t one = 0; one < 2; one++) {
        poison(got, 257);
        const imghist_view v1 = vw_tensor(v, one, PTRDIFF_MIN);
        EXPECT(ctx, imghist_histogram(ctx, &v1, NULL, &c), IMGHIST_OK);
        assert_memory_equal(got, want, 256 * sizeof *got);
        assert_poisoned(got, 256, 257, "one-image tensor tail");
    }
    /* Refusals: no view, counts too short, a stride that leaves the address
     * space, a bad first view. */
    EXPECT(ctx, imghist_histogram(ctx, NULL, NULL, &c), IMGHIST_E_INVALID_ARG);
    const imghist_counts short_c = host_counts(got, N * 256 - 1);
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &short_c), IMGHIST_E_BUFSIZE);
    const imghist_view far = vw_tensor(v, N, PTRDIFF_MAX / 2);
    EXPECT(ctx, imghist_histogram(ctx, &far, NULL, &c), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "address space"));
    /* Backwards onto address 0 (never read: refused first). */
    imghist_view low = vw_tensor(v, 2, -4096);
    low.data = (void *)(uintptr_t)4096;
    EXPECT(ctx, imghist_histogram(ctx, &low, NULL, &c), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "address space"));
    imghist_view bad = v;
    bad.pitch = W - 1;
    EXPECT(ctx, imghist_histogram(ctx, &bad, NULL, &c), IMGHIST_E_INVALID_ARG);
    free(buf);
    free(want);
    free(got);
    imghist_destroy(ctx);
}

/* One sample of image i of a tensor of bytes: image i at base + i * stride. */
static uint8_t *tensor_image(uint8_t *base, ptrdiff_t stride, size_t i)
{
    return base + (ptrdiff_t)i * stride;
}

/* A tensor of images with a mask of count 1 (one for all) or of count n (one
 * an image, at its own image_stride, forwards or backwards): the histograms
 * and equalizations of the images one by one, each with its mask. */
static void test_tensor_masks_one_or_each(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_tensor_masks_one_or_each"));
    enum { N = 5, TW = 29, TH = 13, TP = 31, MP = 33 };
    const ptrdiff_t img = (ptrdiff_t)TP * TH + 7, mimg = (ptrdiff_t)MP * TH + 11;
    static uint8_t src[N * (TP * TH + 7)], msk[N * (MP * TH + 11)];
    static uint8_t dst[N * (TP * TH + 7)], one[TP * TH];
    fill_random(&r, src, sizeof src);
    for (size_t i = 0; i < sizeof msk; i++) {
        msk[i] = tu_below(&r, 3) == 0 ? 0 : (uint8_t)(1 + tu_below(&r, 255));
    }
    const imghist_histspec outliers = {100, 10.0, 250.0, IMGHIST_OUTLIERS};
    const imghist_histspec *specs[] = {NULL, &outliers};
    const ptrdiff_t mask_strides[] = {mimg, -mimg};
    for (int threads = 1; threads <= 3; threads += 2) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
        for (size_t each = 0; each < 2; each++) {
            for (size_t k = 0; k < 2; k++) {
                const ptrdiff_t ms = mask_strides[k];
                uint8_t *mfirst = ms < 0 ? msk + (N - 1) * mimg : msk;
                imghist_view mt;
                const imghist_view t =
                    vw_tensor_masked(u8_view(src, TW, TH, TP), N, img,
                                     u8_view(mfirst, TW, TH, MP), each ? N : 1, ms, &mt);
                for (size_t sp = 0; sp < 2; sp++) {
                    const size_t len = imghist_counts_len(specs[sp], IMGHIST_U8, 1);
                    uint64_t got[N * 259], want[259];
                    poison(got, N * 259);
                    const imghist_counts c = host_counts(got, N * 259);
                    EXPECT(ctx, imghist_histogram(ctx, &t, specs[sp], &c), IMGHIST_OK);
                    assert_poisoned(got, N * len, N * 259, "masked tensor tail");
                    for (size_t i = 0; i < N; i++) {
                        const imghist_view m =
                            u8_view(tensor_image(mfirst, ms, each ? i : 0), TW, TH, MP);
                        const imghist_view v =
                            vw_masked(u8_view(tensor_image(src, img, i), TW, TH, TP), &m);
                        const imghist_counts wc = host_counts(want, len);
                        EXPECT(ctx, imghist_histogram(ctx, &v, specs[sp], &wc), IMGHIST_OK);
                        if (memcmp(got + i * len, want, len * sizeof *want) != 0) {
                            fail_msg("masked tensor (%s masks, stride %td, spec %zu, %d threads): "
                                     "image %zu differs from its own call",
                                     each ? "n" : "1", ms, sp, threads, i);
                        }
                    }
                }
                /* Equalize: each image's table from its masked histogram,
                 * applied to every pixel, both methods. */
                for (int method = IMGHIST_EQ_OPENCV; method <= IMGHIST_EQ_PIL; method++) {
                    memset(dst, 0x3c, sizeof dst);
                    uint64_t hists[N * 256], hw[256];
                    const imghist_counts hc = host_counts(hists, N * 256);
                    const imghist_view d = vw_tensor(u8_view(dst, TW, TH, TP), N, img);
                    EXPECT(ctx, imghist_equalize(ctx, &t, &d, (imghist_method)method, &hc),
                           IMGHIST_OK);
                    for (size_t i = 0; i < N; i++) {
                        const imghist_view m =
                            u8_view(tensor_image(mfirst, ms, each ? i : 0), TW, TH, MP);
                        const imghist_view v =
                            vw_masked(u8_view(tensor_image(src, img, i), TW, TH, TP), &m);
                        memset(one, 0x3c, sizeof one);
                        const imghist_view o = u8_view(one, TW, TH, TP);
                        const imghist_counts wc = host_counts(hw, 256);
                        EXPECT(ctx, imghist_equalize(ctx, &v, &o, (imghist_method)method, &wc),
                               IMGHIST_OK);
                        assert_memory_equal(hists + i * 256, hw, sizeof hw);
                        assert_memory_equal(tensor_image(dst, img, i), one, sizeof one);
                    }
                }
            }
        }
    }
    imghist_destroy(ctx);
}

/* The first `bytes` of each of h rows of a (pitch ap) and b (pitch bp) agree. */
static void assert_rows_equal(const uint8_t *a, size_t ap, const uint8_t *b, size_t bp,
                              size_t bytes, uint32_t h)
{
    for (uint32_t y = 0; y < h; y++) {
        assert_memory_equal(a + (size_t)y * ap, b + (size_t)y * bp, bytes);
    }
}

/* CLAHE, lookup tables and their lists on a tensor: the images one by one,
 * 8- and 16-bit, into a tensor of another layout and in place. */
static void test_tensor_clahe_and_lut(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_tensor_clahe_and_lut"));
    enum { N = 4, TW = 37, TH = 23, SP = 80, DP = 82 };
    const ptrdiff_t simg = (ptrdiff_t)SP * TH + 6, dimg = -((ptrdiff_t)DP * TH + 2);
    static uint8_t src[N * (SP * TH + 6)], dst[N * (DP * TH + 2)], one[DP * TH];
    static uint8_t inplace[sizeof src];
    uint8_t *dfirst = dst + (N - 1) * -dimg;
    const imghist_dtype types[] = {IMGHIST_U8, IMGHIST_U16};
    for (int threads = 1; threads <= 2; threads++) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
        for (size_t ty = 0; ty < 2; ty++) {
            fill_random(&r, src, sizeof src);
            const uint32_t w = types[ty] == IMGHIST_U16 ? TW : TW * 2;
            imghist_view s = u8_view(src, w, TH, SP), d = u8_view(dfirst, w, TH, DP);
            s.dtype = d.dtype = types[ty];
            const imghist_view st = vw_tensor(s, N, simg), dt = vw_tensor(d, N, dimg);
            memset(dst, 0x77, sizeof dst);
            EXPECT(ctx, imghist_clahe(ctx, &st, &dt, 2.5, 3, 2), IMGHIST_OK);
            imghist_view ls[N], ld[N];
            for (size_t i = 0; i < N; i++) {
                ls[i] = s, ls[i].data = tensor_image(src, simg, i);
                ld[i] = d, ld[i].data = one;
                memset(one, 0x77, sizeof one);
                EXPECT(ctx, imghist_clahe(ctx, &ls[i], &ld[i], 2.5, 3, 2), IMGHIST_OK);
                assert_memory_equal(tensor_image(dfirst, dimg, i), one, sizeof one);
            }
            /* The list form: the same images. */
            for (size_t i = 0; i < N; i++) {
                ld[i].data = tensor_image(dfirst, dimg, i);
            }
            static uint8_t keep[sizeof dst];
            memcpy(keep, dst, sizeof dst);
            memset(dst, 0x11, sizeof dst);
            EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, N, 2.5, 3, 2), IMGHIST_OK);
            for (size_t i = 0; i < N; i++) {
                assert_rows_equal(tensor_image(dfirst, dimg, i), DP,
                                  tensor_image(keep + (dfirst - dst), dimg, i), DP, TW * 2, TH);
            }
            /* In place (rows of TW * 2 bytes either type). */
            memcpy(inplace, src, sizeof src);
            imghist_view ip = st;
            ip.data = inplace;
            EXPECT(ctx, imghist_clahe(ctx, &ip, &ip, 2.5, 3, 2), IMGHIST_OK);
            for (size_t i = 0; i < N; i++) {
                assert_rows_equal(tensor_image(inplace, simg, i), SP,
                                  tensor_image(keep + (dfirst - dst), dimg, i), DP, TW * 2, TH);
            }
        }
        /* A table on a tensor of 8-bit images, and in place. */
        fill_random(&r, src, sizeof src);
        uint8_t lut[256];
        fill_random(&r, lut, sizeof lut);
        const imghist_view st = vw_tensor(u8_view(src, TW, TH, SP), N, simg);
        const imghist_view dt = vw_tensor(u8_view(dfirst, TW, TH, DP), N, dimg);
        memset(dst, 0x77, sizeof dst);
        EXPECT(ctx, imghist_apply_lut(ctx, &st, &dt, lut), IMGHIST_OK);
        for (size_t i = 0; i < N; i++) {
            const imghist_view s1 = u8_view(tensor_image(src, simg, i), TW, TH, SP);
            const imghist_view d1 = u8_view(one, TW, TH, DP);
            memset(one, 0x77, sizeof one);
            EXPECT(ctx, imghist_apply_lut(ctx, &s1, &d1, lut), IMGHIST_OK);
            assert_memory_equal(tensor_image(dfirst, dimg, i), one, (size_t)DP * (TH - 1) + TW);
        }
        memcpy(inplace, src, sizeof src);
        imghist_view ip = st;
        ip.data = inplace;
        EXPECT(ctx, imghist_apply_lut(ctx, &ip, &ip, lut), IMGHIST_OK);
        for (size_t i = 0; i < N; i++) {
            assert_rows_equal(tensor_image(inplace, simg, i), SP, tensor_image(dfirst, dimg, i),
                              DP, TW, TH);
        }
        /* Refusals: a destination of another count, a list view of several
         * images. */
        const imghist_view d2 = vw_tensor(dt, N - 1, dimg);
        EXPECT(ctx, imghist_apply_lut(ctx, &st, &d2, lut), IMGHIST_E_INVALID_ARG);
        assert_non_null(strstr(imghist_last_error(ctx), "destination holds 3 images"));
        EXPECT(ctx, imghist_clahe(ctx, &st, &d2, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        const imghist_view one_dst = u8_view(one, TW, TH, DP);
        EXPECT(ctx, imghist_clahe(ctx, &st, &one_dst, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        imghist_view ls[2] = {u8_view(src, TW, TH, SP), st};
        imghist_view ld[2] = {u8_view(one, TW, TH, DP), u8_view(dfirst, TW, TH, DP)};
        EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, 2, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        assert_non_null(strstr(imghist_last_error(ctx), "list view 1 holds several images"));
    }
    imghist_destroy(ctx);
}

/* ---- imghist_equalize ---- */

static void test_equalize_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static uint8_t src[PITCH * H * 4], dst[PITCH * H * 4 + 64];
    for (size_t i = 0; i < sizeof src; i++) {
        src[i] = (uint8_t)(i * 7);
    }
    uint64_t h[300];
    const imghist_view s = u8_view(src, W, H, PITCH), d = u8_view(dst, W, H, PITCH);
    const imghist_counts out = host_counts(h, 256);
    imghist_view a, b;
    imghist_counts c;

    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &out), IMGHIST_OK);
    EXPECT(NULL, imghist_equalize(NULL, &s, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, NULL, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, &s, NULL, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    c = out, c.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_INVALID_ARG);

    /* Sizes. */
    a = s, a.width = 0, b = d, b.width = 0;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.height = 0, b = d, b.height = 0;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.pitch = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.pitch = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.width = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.height = H + 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.height = H - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);

    /* Enums and what is not yet there. */
    a = s, a.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    c = out, c.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_INVALID_ARG);
    a = s, a.dtype = IMGHIST_U16, a.width = W / 2, b = d, b.dtype = IMGHIST_U16, b.width = W / 2;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    /* types differ; a 16-bit histogram needs 65536 counters */
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, &out), IMGHIST_E_BUFSIZE);
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_PIL, NULL), IMGHIST_E_UNSUPPORTED);
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_PIL, NULL), IMGHIST_OK);
    /* The method is one imghist_method names. */
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, (imghist_method)2, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "unknown equalization method 2"));
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, (imghist_method)-1, NULL), IMGHIST_E_INVALID_ARG);
    /* The destination holds as many images as the source. */
    b = vw_tensor(d, 2, 0);
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "destination holds 2 images"));
    a = vw_tensor(s, 2, 0);
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.dtype = IMGHIST_F32, a.width = W / 4, b = d, b.dtype = IMGHIST_F32, b.width = W / 4;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);
    a = s, a.channels = 2, a.width = W / 2, b = d, b.channels = 2, b.width = W / 2;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);

    /* Device memory on a CPU context. */
    a = s, a.mem = IMGHIST_MEM_DEVICE, b = d, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);
    c = out, c.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_UNSUPPORTED);
    /* Not in the same memory: wrong whatever the backend. */
    b = d, b.mem = IMGHIST_MEM_DEVICE;
    clear_error(ctx, __FILE__, __LINE__);
    imghist_status st = imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL);
    if (st != IMGHIST_E_INVALID_ARG && st != IMGHIST_E_UNSUPPORTED) {
        fail_msg("equalize host to device: %d (%s)", (int)st, imghist_strerror(st));
    }
    check_message(ctx, "imghist_equalize(host src, device dst)", __FILE__, __LINE__);

    /* A refusal writes nothing: neither dst nor the counts. */
    memset(dst, 0x5a, sizeof dst);
    poison(h, 300);
    c = out, c.len = 255;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 0, 300, "refused equalize");
    for (size_t i = 0; i < sizeof dst; i++) {
        if (dst[i] != 0x5a) {
            fail_msg("equalize refused for a short histogram wrote dst[%zu]", i);
        }
    }
    /* A longer histogram buffer: 256 written, the rest left alone. */
    c = out, c.len = 300;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
    assert_poisoned(h, 256, 300, "equalize with a 300-count buffer");
    imghist_destroy(ctx);
}

/* dst may be src itself at the same pitch; any other overlap is refused
 * before a byte is written. */
static void test_equalize_overlap(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_equalize_overlap"));
    enum { OW = 33, OH = 9, OP = 40 };
    static uint8_t buf[OP * (OH + 2)], keep[sizeof buf], want[OP * OH];
    fill_random(&r, buf, sizeof buf);
    memcpy(keep, buf, sizeof buf);
    const imghist_view s = u8_view(buf, OW, OH, OP);
    struct {
        size_t offset, pitch;
        const char *what;
    } cases[] = {
        {1, OP, "one byte on"},
        {OP, OP, "one row down"},
        {OP * 2 - 1, OP, "two rows less one byte down"},
        {0, OP + 1, "same start, other pitch"},
        {0, OW, "same start, packed pitch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const imghist_view d = u8_view(buf + cases[i].offset, OW, OH, cases[i].pitch);
        clear_error(ctx, __FILE__, __LINE__);
        const imghist_status st = imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, NULL);
        if (st != IMGHIST_E_INVALID_ARG) {
            fail_msg("overlap \"%s\": %d (%s), expected IMGHIST_E_INVALID_ARG", cases[i].what,
                     (int)st, imghist_strerror(st));
        }
        check_message(ctx, cases[i].what, __FILE__, __LINE__);
        assert_memory_equal(buf, keep, sizeof buf);
    }
    /* Neighbours that share no byte are fine. A view's last byte is the last
     * row's last pixel, (h - 1) * pitch + width - 1: dst may start right
     * after it, inside what would be the last row's padding. */
    const size_t end = (size_t)(OH - 1) * OP + OW;
    static uint8_t big[OP * OH + OW * OH];
    memcpy(big, buf, end);
    const imghist_view sb = u8_view(big, OW, OH, OP);
    const imghist_view db = u8_view(big + end, OW, OH, OW);
    EXPECT(ctx, imghist_equalize(ctx, &sb, &db, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    /* And dst before src. */
    const imghist_view sa = u8_view(big + (size_t)OW * OH, OW, OH, OP);
    const imghist_view da = u8_view(big, OW, OH, OW);
    EXPECT(ctx, imghist_equalize(ctx, &sa, &da, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);

    /* In place at the same pitch: the out-of-place result, padding kept. */
    uint64_t hist[256], got[256];
    reference_equalize(buf, OP, OW, OH, want, OP, hist);
    const imghist_counts c = host_counts(got, 256);
    EXPECT(ctx, imghist_equalize(ctx, &s, &s, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
    assert_memory_equal(got, hist, sizeof got);
    for (uint32_t y = 0; y < OH; y++) {
        assert_memory_equal(buf + (size_t)y * OP, want + (size_t)y * OP, OW);
        assert_memory_equal(buf + (size_t)y * OP + OW, keep + (size_t)y * OP + OW, OP - OW);
    }
    assert_memory_equal(buf + OP * OH, keep + OP * OH, sizeof buf - OP * OH);
    imghist_destroy(ctx);
}

/* ---- the CPU backend's threads ---- */

/* Histogram and equalization of one view at 1, 2, 3 and 8 threads: each the
 * naive reference, dst's padding untouched. */
static void check_threads(imghist_ctx *ctx, const uint8_t *src, uint32_t w, uint32_t h,
                          size_t sp, const char *what)
{
    const size_t dp = w + 5;
    uint8_t *want = malloc(dp * h), *dst = malloc(dp * h), *inplace = malloc(sp * h);
    assert_true(want && dst && inplace);
    uint64_t ref[256];
    reference_equalize(src, sp, w, h, want, dp, ref);
    const imghist_view s = u8_view(src, w, h, sp), d = u8_view(dst, w, h, dp);
    const imghist_view ip = u8_view(inplace, w, h, sp);
    const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads[t]), IMGHIST_OK);
        uint64_t got[256];
        poison(got, 256);
        const imghist_counts c = host_counts(got, 256);
        EXPECT(ctx, imghist_histogram(ctx, &s, NULL, &c), IMGHIST_OK);
        if (memcmp(got, ref, sizeof got) != 0) {
            fail_msg("%s (%ux%u): histogram at %d threads differs from the reference", what, w,
                     h, threads[t]);
        }
        memset(dst, 0xc3, dp * h);
        poison(got, 256);
        EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
        assert_memory_equal(got, ref, sizeof got);
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(dst + (size_t)y * dp, want + (size_t)y * dp, w) != 0) {
                fail_msg("%s (%ux%u): equalized row %u at %d threads differs", what, w, h, y,
                         threads[t]);
            }
            for (size_t x = w; x < dp; x++) {
                assert_int_equal(dst[(size_t)y * dp + x], 0xc3);
            }
        }
        memcpy(inplace, src, sp * h);
        EXPECT(ctx, imghist_equalize(ctx, &ip, &ip, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(inplace + (size_t)y * sp, want + (size_t)y * dp, w) != 0) {
                fail_msg("%s (%ux%u): in-place row %u at %d threads differs", what, w, h, y,
                         threads[t]);
            }
        }
    }
    free(want);
    free(dst);
    free(inplace);
}

static void test_threads_random_and_odd_shapes(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_threads_random_and_odd_shapes"));
    const uint32_t w = 3001, h = 2003;
    const size_t sp = 3008;
    uint8_t *img = malloc(sp * h);
    assert_non_null(img);
    fill_random(&r, img, sp * h);
    check_threads(ctx, img, w, h, sp, "random");
    /* Skewed values: a few dominate, so per-thread partial counts matter. */
    for (size_t i = 0; i < sp * h; i++) {
        img[i] = (uint8_t)(tu_below(&r, 10) == 0 ? tu_next(&r) >> 56 : 42 + tu_below(&r, 3));
    }
    check_threads(ctx, img, w, h, sp, "skewed");
    const uint32_t shapes[][2] = {{1, 1},   {1, 1000}, {1000, 1}, {5, 2},  {333, 3},
                                  {7, 7},   {4099, 5}, {2, 9},    {1, 2},  {65537, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t sw = shapes[i][0], sh = shapes[i][1];
        const size_t pitch = sw + 3;
        uint8_t *p = malloc(pitch * sh);
        assert_non_null(p);
        fill_random(&r, p, pitch * sh);
        check_threads(ctx, p, sw, sh, pitch, "odd shape");
        free(p);
    }
    free(img);
    imghist_destroy(ctx);
}

static void test_threads_photographs(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    const char *names[] = {"hubble_deep_field.jpg", "astronaut.png", "moon.png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples_dir(), names[i]);
        imghist_image *img = NULL;
        EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
        check_threads(ctx, img->view.data, img->view.width, img->view.height, img->view.pitch,
                      names[i]);
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

/* ---- LUT ---- */

static void test_equalize_lut_invalid(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    /* empty */
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_E_INVALID_ARG);
    h[9] = 1;
    EXPECT(NULL, imghist_equalize_lut(NULL, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    assert_int_equal(lut[9], 9);
    /* Levels 256 or 65536, a method imghist_method names; PIL's rule has no
     * 16-bit form. The table is written only on success. */
    static uint64_t h16[65536];
    static uint16_t lut16[65536];
    h16[9] = 1;
    const uint32_t bad_levels[] = {0, 255, 257, 4096, 65535, 65537};
    for (size_t i = 0; i < sizeof bad_levels / sizeof bad_levels[0]; i++) {
        EXPECT(NULL, imghist_equalize_lut(h16, bad_levels[i], IMGHIST_EQ_OPENCV, lut16),
               IMGHIST_E_INVALID_ARG);
        EXPECT(NULL, imghist_equalize_lut(h16, bad_levels[i], IMGHIST_EQ_PIL, lut16),
               IMGHIST_E_INVALID_ARG);
    }
    EXPECT(NULL, imghist_equalize_lut(h, 256, (imghist_method)2, lut), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, (imghist_method)-1, lut16),
           IMGHIST_E_INVALID_ARG);
    memset(lut16, 0xa5, sizeof lut16);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_PIL, lut16), IMGHIST_E_UNSUPPORTED);
    assert_int_equal(lut16[9], 0xa5a5);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_OPENCV, lut16), IMGHIST_OK);
    assert_int_equal(lut16[9], 9);
    assert_int_equal(lut16[65535], 9);
    memset(lut, 0, sizeof lut);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    assert_int_equal(lut[9], 9); /* one value: PIL's identity */
    assert_int_equal(lut[200], 200);
    memset(h, 0, sizeof h);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_E_INVALID_ARG);
    h16[9] = 0;
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_OPENCV, lut16),
           IMGHIST_E_INVALID_ARG);
}

/* ---- PNG out ---- */

/* Encode, decode back through imghist (libpng checks the zlib stream and the
 * CRCs), and compare the pixels. */
static void check_png_roundtrip(imghist_ctx *ctx, const imghist_view *v, const void *png,
                                size_t size)
{
    imghist_image *img = NULL;
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "roundtrip.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, v->width);
    assert_int_equal(img->view.height, v->height);
    for (uint32_t y = 0; y < v->height; y++) {
        if (memcmp((const uint8_t *)img->view.data + (size_t)y * v->width,
                   (const uint8_t *)v->data + (size_t)y * v->pitch, v->width) != 0) {
            fail_msg("PNG round trip: row %u differs", y);
        }
    }
    imghist_image_free(img);
}

/* The two level-1 writers: libdeflate in one piece below 16 MB of pixels,
 * zlib in bands over the context's threads from there. Both give the same
 * bytes for any thread count and the same pixels back. */
static void test_encode_png_writers(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_encode_png_writers"));
    enum { BW = 8195, BH = 4097, BP = 8200 }; /* 33.6 MB: bands; odd width, padded rows */
    uint8_t *px = malloc((size_t)BP * BH);
    assert_non_null(px);
    /* Smooth with noise, as photographs are, so that runs and literals mix;
     * horizontal stripes make Up win some rows and Sub others. */
    for (uint32_t y = 0; y < BH; y++) {
        for (uint32_t x = 0; x < BP; x++) {
            const uint32_t base = (y / 64) % 2 ? x / 7 + y / 5 : y * 3 + x / 40;
            px[(size_t)y * BP + x] = (uint8_t)(base + (tu_next(&r) >> 62));
        }
    }
    const imghist_view sizes[2] = {u8_view(px, BW, 1500, BP), u8_view(px, BW, BH, BP)};
    for (int k = 0; k < 2; k++) {
        void *one = NULL, *three = NULL;
        size_t n1 = 0, n3 = 0;
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 1), IMGHIST_OK);
        EXPECT(ctx, imghist_encode_png(ctx, &sizes[k], &one, &n1), IMGHIST_OK);
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 3), IMGHIST_OK);
        EXPECT(ctx, imghist_encode_png(ctx, &sizes[k], &three, &n3), IMGHIST_OK);
        assert_int_equal(n1, n3);
        assert_memory_equal(one, three, n1);
        check_png_roundtrip(ctx, &sizes[k], three, n3);
        /* Compressed: the data are about 2 bits of noise per pixel. */
        assert_true(n1 < (size_t)sizes[k].width * sizes[k].height / 2);
        imghist_free(one);
        imghist_free(three);
    }
    free(px);
    imghist_destroy(ctx);
}

static void test_encode_png(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_encode_png"));
    enum { EW = 37, EH = 11, EP = 40 };
    uint8_t px[EP * EH];
    fill_random(&r, px, sizeof px);
    const imghist_view v = u8_view(px, EW, EH, EP);
    void *png = NULL;
    size_t size = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &v, &png, &size), IMGHIST_OK);
    assert_non_null(png);
    assert_true(size > 8);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    imghist_image *img = NULL;
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "encoded.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, EW);
    assert_int_equal(img->view.height, EH);
    assert_int_equal(img->view.pitch, EW);
    for (uint32_t y = 0; y < EH; y++) {
        assert_memory_equal((const uint8_t *)img->view.data + (size_t)y * EW, px + (size_t)y * EP,
                            EW);
    }
    imghist_image_free(img);
    imghist_free(png);
    imghist_free(NULL);

    /* 1 x 1, and every value in one row. */
    uint8_t all[256];
    for (int i = 0; i < 256; i++) {
        all[i] = (uint8_t)(255 - i);
    }
    const uint32_t shapes[][2] = {{1, 1}, {256, 1}, {1, 256}};
    for (size_t k = 0; k < 3; k++) {
        const imghist_view sv = u8_view(all, shapes[k][0], shapes[k][1], shapes[k][0]);
        EXPECT(ctx, imghist_encode_png(ctx, &sv, &png, &size), IMGHIST_OK);
        EXPECT(ctx, imghist_load_memory(ctx, png, size, NULL, &img), IMGHIST_OK);
        assert_int_equal(img->view.width, shapes[k][0]);
        assert_int_equal(img->view.height, shapes[k][1]);
        assert_memory_equal(img->view.data, all, (size_t)shapes[k][0] * shapes[k][1]);
        imghist_image_free(img);
        imghist_free(png);
    }

    /* Refusals. */
    imghist_view b;
    EXPECT(NULL, imghist_encode_png(NULL, &v, &png, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, NULL, &png, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, &v, NULL, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, &v, &png, NULL), IMGHIST_E_INVALID_ARG);
    b = v, b.data = NULL;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.width = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.height = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.pitch = EW - 1;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    /* 16-bit samples and 2-4 channels are PNGs too; float is not, nor
     * are 5 channels. */
    b = v, b.dtype = IMGHIST_U16, b.width = EW / 2;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_OK);
    imghist_free(png);
    b = v, b.channels = 2, b.width = EW / 2;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_OK);
    imghist_free(png);
    png = NULL;
    b = v, b.dtype = IMGHIST_F32, b.width = EW / 4;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_UNSUPPORTED);
    b = v, b.channels = 5, b.width = 1;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_UNSUPPORTED);
    imghist_destroy(ctx);
}

static void test_write_png_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/out.png", dir);
    uint8_t px[W * H] = {0};
    const imghist_view v = u8_view(px, W, H, W);
    imghist_view b;
    EXPECT(NULL, imghist_write_png(NULL, path, &v), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_write_png(ctx, NULL, &v), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_write_png(ctx, path, NULL), IMGHIST_E_INVALID_ARG);
    b = v, b.data = NULL;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.width = 0;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.pitch = W - 1;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = IMGHIST_F32, b.width = W / 4;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_UNSUPPORTED);
    b = v, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_UNSUPPORTED);
    /* None of the refusals left a file. */
    assert_false(tu_exists(path));
    EXPECT(ctx, imghist_write_png(ctx, path, &v), IMGHIST_OK);
    assert_true(tu_exists(path));
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* ---- loading ---- */

static void test_load_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    imghist_image *img = NULL;
    const char junk[] = "not an image";
    EXPECT(NULL, imghist_load_memory(NULL, junk, sizeof junk, "x", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_memory(ctx, NULL, 10, "x", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_memory(ctx, junk, sizeof junk, "x", NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_load_file(NULL, "/dev/null", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_file(ctx, NULL, &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_file(ctx, "/dev/null", NULL), IMGHIST_E_INVALID_ARG);
    /* A NULL name labels the message "<memory>". */
    img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_load_memory(ctx, junk, sizeof junk, NULL, &img), IMGHIST_E_DECODE);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "<memory>"));
    imghist_image_free(NULL);
    imghist_destroy(ctx);
}

/* A loaded image is a packed U8 host view. */
static void test_loaded_view_shape(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    const char *names[] = {"coffee.png", "hubble_deep_field.jpg"};
    for (size_t i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples_dir(), names[i]);
        imghist_image *img = NULL;
        EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
        assert_non_null(img->view.data);
        assert_int_equal(img->view.dtype, IMGHIST_U8);
        assert_int_equal(img->view.mem, IMGHIST_MEM_HOST);
        assert_int_equal(img->view.pitch, img->view.width);
        assert_true(img->view.channels <= 1);
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

/* A PNG of a few kilobytes (noise does not compress), made outside the
 * library. */
static uint8_t *test_png(size_t *size)
{
    uint8_t px[64 * 64];
    tu_rng r;
    tu_seed(&r, 12345);
    fill_random(&r, px, sizeof px);
    uint8_t *png = tu_png_encode(64, 64, PNG_COLOR_TYPE_GRAY, 8, px, NULL, 0, size);
    assert_non_null(png);
    assert_true(*size > 1000);
    return png;
}

static void test_input_byte_limit(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    size_t size = 0;
    uint8_t *png = test_png(&size);
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/in.png", dir);
    assert_int_equal(tu_write_file(path, png, size), 0);
    char limit[32];

    imghist_image *img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, 100), IMGHIST_OK);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_E_LIMIT);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "100"));
    img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "100"));

    /* One byte short: refused, and the message gives the limit (a number
     * that appears nowhere else). */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, (int64_t)size - 1), IMGHIST_OK);
    snprintf(limit, sizeof limit, "%zu", size - 1);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_E_LIMIT);
    if (strstr(imghist_last_error(ctx), limit) == NULL) {
        fail_msg("load_memory over the byte limit %s: \"%s\" does not give it", limit,
                 imghist_last_error(ctx));
    }
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    if (strstr(imghist_last_error(ctx), limit) == NULL) {
        fail_msg("load_file over the byte limit %s: \"%s\" does not give it", limit,
                 imghist_last_error(ctx));
    }

    /* Exactly the size: loads, both ways. */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, (int64_t)size), IMGHIST_OK);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    imghist_image_free(img);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    imghist_image_free(img);

    /* The pixel limit through load_file too, from the header. */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64 - 1), IMGHIST_OK);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    assert_null(img);
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64), IMGHIST_OK);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
    imghist_image_free(img);

    free(png);
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* "-" is a file name like any other: the library never reads stdin. */
static void test_dash_is_a_file(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    size_t size = 0;
    uint8_t *png = test_png(&size);
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char cwd[4200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    imghist_image *img = NULL;
    /* No file "-" here: an I/O error, not a read of stdin. */
    EXPECT(ctx, imghist_load_file(ctx, "-", &img), IMGHIST_E_IO);
    assert_null(img);
    assert_int_equal(tu_write_file("-", png, size), 0);
    EXPECT(ctx, imghist_load_file(ctx, "-", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    assert_int_equal(img->view.height, 64);
    imghist_image_free(img);
    assert_int_equal(chdir(cwd), 0);
    free(png);
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* A successful call clears the last error; notes stay empty on the CPU. */
static void test_error_cleared_and_no_note(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    uint8_t px[W * H] = {0};
    uint64_t h[256];
    const imghist_view v = u8_view(px, W, H, W);
    const imghist_counts c = host_counts(h, 256);
    imghist_view b = v;
    b.width = 0;
    EXPECT(ctx, imghist_histogram(ctx, &b, NULL, &c), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_histogram(ctx, &v, NULL, &c), IMGHIST_OK);
    assert_string_equal(imghist_last_error(ctx), "");
    assert_string_equal(imghist_last_note(ctx), "");
    imghist_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_backend_names),
        cmocka_unit_test(test_create_and_getters),
        cmocka_unit_test(test_create_on_device),
        cmocka_unit_test(test_streams_on_cpu),
        cmocka_unit_test(test_param_defaults),
        cmocka_unit_test(test_param_bounds_enforced),
        cmocka_unit_test(test_param_unknown_and_null),
        cmocka_unit_test(test_bins),
        cmocka_unit_test(test_histogram_invalid),
        cmocka_unit_test(test_histogram_bufsize),
        cmocka_unit_test(test_histogram_specs),
        cmocka_unit_test(test_accumulate),
        cmocka_unit_test(test_batch_invalid),
        cmocka_unit_test(test_batch_masked_invalid),
        cmocka_unit_test(test_batch_equals_single),
        cmocka_unit_test(test_batch_many_images),
        cmocka_unit_test(test_histogram_strided),
        cmocka_unit_test(test_tensor_masks_one_or_each),
        cmocka_unit_test(test_tensor_clahe_and_lut),
        cmocka_unit_test(test_equalize_invalid),
        cmocka_unit_test(test_equalize_overlap),
        cmocka_unit_test(test_threads_random_and_odd_shapes),
        cmocka_unit_test(test_threads_photographs),
        cmocka_unit_test(test_equalize_lut_invalid),
        cmocka_unit_test(test_encode_png),
        cmocka_unit_test(test_encode_png_writers),
        cmocka_unit_test(test_write_png_invalid),
        cmocka_unit_test(test_load_invalid),
        cmocka_unit_test(test_loaded_view_shape),
        cmocka_unit_test(test_input_byte_limit),
        cmocka_unit_test(test_dash_is_a_file),
        cmocka_unit_test(test_error_cleared_and_no_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
