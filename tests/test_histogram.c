/*
 * imghist_histogram and imghist_histogram_list through the public header, on
 * the backend the program is run for: bins of a spec, refusals with their
 * statuses and one-line messages (on the CPU, where device memory must be
 * refused), short outputs, accumulation, lists and tensors against single
 * calls, strided and masked tensors, at several CPU thread counts.
 * test_histogram_types.c has every type and binning against a reference;
 * the cuda run adds the device suites (test_histogram_cuda.c,
 * test_histogram_wide*.c).
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
    const imghist_histspec bad_flag = {10, 0.0, 1.0, 32u};
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

static void test_histogram_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
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
    const imghist_histspec bad_flag = {10, 0.0, 1.0, 32u};
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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
    imghist_ctx *ctx = bs_new_ctx();
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

/* Status and message of a list call over `v` with view `at` replaced by
 * `bad`: refused (want_msg: a piece the message must hold) or counted as
 * the tensor's counts `want`. */
static void long_list_case(imghist_ctx *ctx, imghist_view *v, size_t n, size_t at,
                           imghist_view bad, const char *want_msg, const uint64_t *want,
                           uint64_t *got)
{
    const imghist_view keep = v[at];
    v[at] = bad;
    poison(got, n * 256);
    const imghist_counts c = host_counts(got, n * 256);
    const imghist_status st = imghist_histogram_list(ctx, v, n, NULL, &c);
    v[at] = keep;
    if (want_msg != NULL) {
        if (st != IMGHIST_E_INVALID_ARG || strstr(imghist_last_error(ctx), want_msg) == NULL) {
            fail_msg("view %zu: status %d, message \"%s\", want \"%s\"", at, (int)st,
                     imghist_last_error(ctx), want_msg);
        }
        return;
    }
    if (st != IMGHIST_OK || memcmp(got, want, n * 256 * sizeof *got) != 0) {
        fail_msg("view %zu changed but valid: status %d (%s) or other counts", at, (int)st,
                 imghist_last_error(ctx));
    }
}

/* A list long enough that its checks' pass runs on several threads, laid
 * out as a tensor's images but for one view: at each task's edges and the
 * ends, a view that breaks a rule is refused with its number, and one that
 * is valid but lies or looks otherwise is counted as such. */
static void test_list_long(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 4), IMGHIST_OK);
    enum { N = 40000, W = 16 };
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_list_long"));
    uint8_t *px = malloc((size_t)N * W), *other = malloc(2 * W);
    imghist_view *v = malloc(N * sizeof *v);
    uint64_t *want = malloc((size_t)N * 256 * sizeof *want);
    uint64_t *got = malloc((size_t)N * 256 * sizeof *got);
    assert_true(px && other && v && want && got);
    fill_random(&r, px, (size_t)N * W);
    for (size_t i = 0; i < N; i++) {
        v[i] = u8_view(px + i * W, W, 1, W);
    }
    const imghist_view tensor = vw_tensor(v[0], N, W);
    const imghist_counts wc = host_counts(want, (size_t)N * 256);
    EXPECT(ctx, imghist_histogram(ctx, &tensor, NULL, &wc), IMGHIST_OK);
    long_list_case(ctx, v, N, 0, v[0], NULL, want, got);
    const imghist_view mask = u8_view(px, W, 1, W);
    const size_t at[] = {1, 2, 16383, 16384, 16385, 32768, 32769, N - 2, N - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        const size_t i = at[k];
        char msg[64];
        imghist_view b = v[i];
        b.count = 2;
        snprintf(msg, sizeof msg, "list view %zu holds 2", i);
        long_list_case(ctx, v, N, i, b, msg, want, got);
        b = vw_masked(v[i], &mask);
        snprintf(msg, sizeof msg, "list view %zu has a mask", i);
        long_list_case(ctx, v, N, i, b, msg, want, got);
        b = v[i];
        b.data = NULL;
        snprintf(msg, sizeof msg, "batch image %zu", i);
        long_list_case(ctx, v, N, i, b, msg, want, got);
        b.data = v[i].data;
        b.dtype = IMGHIST_U16;
        b.width = W / 2;
        snprintf(msg, sizeof msg, "(image %zu)", i);
        long_list_case(ctx, v, N, i, b, msg, want, got);
        /* Valid: the same bytes elsewhere, as one row of a pitched view,
         * or with count 1 where view 0 has 0. */
        memcpy(other + 1, v[i].data, W);
        b = u8_view(other + 1, W, 1, W);
        long_list_case(ctx, v, N, i, b, NULL, want, got);
        b = u8_view(v[i].data, W, 1, 2 * W);
        long_list_case(ctx, v, N, i, b, NULL, want, got);
        b = v[i];
        b.count = 1;
        long_list_case(ctx, v, N, i, b, NULL, want, got);
        /* Bytes a list's view does not hold: its padding, its image stride. */
        memset(&b, 0xab, sizeof b);
        b.data = v[i].data;
        b.dtype = IMGHIST_U8;
        b.mem = IMGHIST_MEM_HOST;
        b.width = W;
        b.height = 1;
        b.pitch = W;
        b.channels = 0;
        b.count = 0;
        b.mask = NULL;
        long_list_case(ctx, v, N, i, b, NULL, want, got);
        b.channels = 2;
        b.width = W / 2;
        snprintf(msg, sizeof msg, "(image %zu)", i);
        long_list_case(ctx, v, N, i, b, msg, want, got);
    }
    free(px);
    free(other);
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
    imghist_ctx *ctx = bs_new_ctx();
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

/* A tensor of images with a mask of count 1 (one for all) or of count n (one
 * an image, at its own image_stride, forwards or backwards): the histograms
 * and equalizations of the images one by one, each with its mask. */
static void test_tensor_masks_one_or_each(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
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

static const bs_test tests[] = {
    BS_TEST(test_bins),
    BS_CPU_TEST(test_histogram_invalid),
    BS_TEST(test_histogram_bufsize),
    BS_TEST(test_histogram_specs),
    BS_TEST(test_accumulate),
    BS_CPU_TEST(test_batch_invalid),
    BS_TEST(test_batch_masked_invalid),
    BS_TEST(test_batch_equals_single),
    BS_TEST(test_batch_many_images),
    BS_CPU_TEST(test_list_long),
    BS_TEST(test_histogram_strided),
    BS_TEST(test_tensor_masks_one_or_each),
};

const bs_part histogram_part = BS_PART("histogram", tests, NULL, NULL);

extern const bs_part histogram_part;
extern const bs_part histogram_types_part;
extern const bs_part histogram_cuda_part;
extern const bs_part histogram_wide_part;
extern const bs_part histogram_wide_batch_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &histogram_part,
        &histogram_types_part,
#ifdef IH_CUDA_PARTS
        &histogram_cuda_part,
        &histogram_wide_part,
        &histogram_wide_batch_part,
#endif
    };
    return bs_main(argc, argv, "histogram", parts, BS_COUNT(parts));
}
