/*
 * The library and its contexts through the public header: version, statuses,
 * backend names, create and the getters, parameters and their bounds, the
 * last error and note. The library-wide checks run in the cpu run; device
 * selection, streams and tuning parameters of the CUDA backend are in
 * test_context_cuda.c. Contexts for the CPU-only checks are on the CPU,
 * where device memory must be refused, never dereferenced.
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

#include "imghist.h"
#include "imghist_experimental.h"
#include "api_checks.h"
#include "backend_suite.h"
#include "test_util.h"
#include "views.h"

static imghist_ctx *cpu_ctx(void)
{
    return bs_new_cpu_ctx();
}

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
    assert_int_equal(IMGHIST_E_CANCELED + 1, IMGHIST_STATUS_COUNT);
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
    IMGHIST_P_LOAD_TRUNCATED, IMGHIST_P_DECODE, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, IMGHIST_P_EXP_BATCH_RUN, IMGHIST_P_EXP_EQ_BATCH_SMALL,
    IMGHIST_P_EXP_BATCH_TINY, IMGHIST_P_EXP_HIST16_GLOBAL, IMGHIST_P_EXP_AUTO_DECODE_BYTES,
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
    const int unknown[] = {0, 77, 12, 999, 1050, -1, 9, 1005};
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

/* A successful call clears the last error; notes stay empty on the CPU. */
static void test_error_cleared_and_no_note(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
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

static const bs_test tests[] = {
    BS_CPU_TEST(test_version),
    BS_CPU_TEST(test_strerror),
    BS_CPU_TEST(test_backend_names),
    BS_CPU_TEST(test_create_and_getters),
    BS_CPU_TEST(test_create_on_device),
    BS_CPU_TEST(test_streams_on_cpu),
    BS_CPU_TEST(test_param_defaults),
    BS_CPU_TEST(test_param_bounds_enforced),
    BS_CPU_TEST(test_param_unknown_and_null),
    BS_TEST(test_error_cleared_and_no_note),
};

const bs_part context_part = BS_PART("context", tests, NULL, NULL);

extern const bs_part context_part;
extern const bs_part context_cuda_part;
int context_cuda_child(const char *flag);

int main(int argc, char **argv)
{
#ifdef IH_CUDA_PARTS
    /* test_context_cuda.c runs this program again as a child for what may
     * take the GPU's memory or fault it. */
    if (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        const int rc = context_cuda_child(argv[1]);
        if (rc >= 0) {
            return rc;
        }
    }
#endif
    static const bs_part *const parts[] = {
        &context_part,
#ifdef IH_CUDA_PARTS
        &context_cuda_part,
#endif
    };
    return bs_main(argc, argv, "context", parts, BS_COUNT(parts));
}
