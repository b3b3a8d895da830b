/*
 * Histograms on the backend under test against the reference of ref_hist.h:
 * U8/U16/F32, channels, masks, any bins and ranges, outliers, the closed last
 * bin, lists and tensors of every job, float special values, imghist_range,
 * at 1 and several CPU threads. A part of test_histogram.
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

static void test_every_type_and_binning(void **state)
{
    (void)state;
    const int threads[] = {1, 3};
    for (size_t t = 0; t < 2; t++) {
        imghist_ctx *ctx = test_ctx(threads[t]);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const uint32_t flag_sets[] = {0, IMGHIST_OUTLIERS, IMGHIST_OUTLIERS | IMGHIST_CLOSED,
                                          IMGHIST_CLOSED};
            for (uint32_t f = 0; f < 4; f++) {
                if (cases[i].bins == 0 && cases[i].t == IMGHIST_F32) continue;
                const uint32_t ch = 1 + (uint32_t)((i + f) % 4);
                run_case(ctx, &cases[i], ch, (int)(f % 2), flag_sets[f], 37, 11);
            }
        }
        /* Large enough for several threads, one and three channels. */
        run_case(ctx, &cases[2], 1, 0, 0, 1031, 1030);
        run_case(ctx, &cases[9], 3, 1, IMGHIST_OUTLIERS, 700, 801);
        run_case(ctx, &cases[13], 1, 0, IMGHIST_OUTLIERS | IMGHIST_CLOSED, 1024, 1000);
        /* 8-bit channels with one bin per value (the two-copy loop): RGB with
         * a mask, RGBA, two channels with an all-zero mask, odd widths. */
        run_case(ctx, &cases[0], 3, 1, 0, 999, 517);
        run_case(ctx, &cases[0], 4, 0, IMGHIST_OUTLIERS, 513, 300);
        run_case(ctx, &cases[0], 2, 2, 0, 77, 40);
        /* Integer samples into fewer bins, with outlier counters, masked and
         * not, each band with enough pixels for the fast loop. */
        run_case(ctx, &cases[3], 1, 1, IMGHIST_OUTLIERS, 600, 501);
        run_case(ctx, &cases[12], 2, 0, IMGHIST_OUTLIERS | IMGHIST_CLOSED, 800, 900);
        run_case(ctx, &cases[8], 1, 1, 0, 1000, 700);
        /* Floats through the edge table (4 samples a bin and more), one and
         * three channels, masked and not: its estimate's error near the
         * bound ([1000, 1001)), and a range too wide for it. */
        run_case(ctx, &cases[15], 1, 0, 0, 999, 300);
        run_case(ctx, &cases[15], 3, 1, IMGHIST_CLOSED, 501, 200);
        run_case(ctx, &cases[19], 1, 0, IMGHIST_CLOSED, 1000, 400);
        run_case(ctx, &cases[20], 2, 0, IMGHIST_OUTLIERS, 300, 100);
        /* Edges rounded to floats and computed in floats (numpy.histogram's
         * of float32 data, NumPy 1 and 2), every spec a float can tell
         * apart, small and through the edge table. */
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const uint32_t fl[] = {IMGHIST_FLOAT_EDGES | IMGHIST_CLOSED,
                                   IMGHIST_FLOAT_EDGES | IMGHIST_OUTLIERS,
                                   IMGHIST_FLOAT_STEP_EDGES | IMGHIST_CLOSED,
                                   IMGHIST_FLOAT_STEP_EDGES | IMGHIST_OUTLIERS};
            for (uint32_t f = 0; f < 4; f++) {
                const imghist_histspec sp = {cases[i].bins, cases[i].lo, cases[i].hi, fl[f]};
                if (cases[i].bins == 0 || imghist_bins(&sp, cases[i].t) == 0) continue;
                run_case(ctx, &cases[i], 1 + f % 2, (int)(f % 2), fl[f], 37, 11);
                if (cases[i].t == IMGHIST_F32) {
                    run_case(ctx, &cases[i], 1 + 2 * (f % 2), 1 - (int)(f % 2), fl[f], 1000, 300);
                }
            }
        }
        imghist_destroy(ctx);
    }
}

/* Batches of every job on the CPU backend (the images across its threads):
 * each image against the reference, as views and as a strided batch, without
 * masks, with a mask an image and with one mask for all, then accumulated. */
static void test_batch_every_job(void **state)
{
    (void)state;
    const int threads[] = {1, 4};
    for (size_t t = 0; t < 2; t++) {
        imghist_ctx *ctx = test_ctx(threads[t]);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            const spec_case *sc = &cases[i];
            if (sc->bins == 0 && sc->t == IMGHIST_F32) continue;
            const uint32_t flags = (i % 2 ? IMGHIST_OUTLIERS : 0) | (i % 3 == 0 ? IMGHIST_CLOSED : 0);
            const imghist_histspec spec = {sc->bins, sc->lo, sc->hi, flags};
            const ref_spec rs = ref_spec_of(sc, flags);
            /* Enough pixels for two threads where the counters are few. */
            const int big = rs.bins > 65536;
            const size_t n = big ? 3 : 40;
            const uint32_t ch = 1 + (uint32_t)(i % 3), w = big ? 20 : 128, h = big ? 7 : 104;
            const size_t ss = dsize(sc->t), pitch = (size_t)w * ch * ss + ss * (i % 4);
            const size_t img = pitch * h + ss * (i % 5);
            uint8_t *buf = malloc(img * n);
            assert_non_null(buf);
            fill(buf, sc->t, img * n / ss, &rs);
            const size_t len = imghist_counts_len(&spec, sc->t, ch);
            uint64_t *want = malloc(n * len * sizeof *want);
            uint64_t *got = malloc((n * len + 1) * sizeof *got);
            imghist_view *v = malloc(n * sizeof *v), *mv = malloc(n * sizeof *mv);
            imghist_view *vl = malloc(n * sizeof *vl);
            /* Masks w bytes a row, each image's 3 bytes after the last's end. */
            const size_t mimg = (size_t)w * h + 3;
            uint8_t *mbuf = malloc(mimg * n);
            assert_true(want && got && v && mv && vl && mbuf);
            for (size_t k = 0; k < mimg * n; k++) {
                mbuf[k] = (uint8_t)(tu_below(&rng, 3) ? tu_below(&rng, 256) : 0);
            }
            for (size_t k = 0; k < n; k++) {
                const imghist_view vk = {.data = buf + k * img, .dtype = sc->t,
                    .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = pitch,
                    .channels = ch};
                v[k] = vk;
            }
            for (int masked = 0; masked < 3; masked++) { /* none, one an image, one for all */
                const size_t mstride = masked == 1 ? mimg : 0;
                for (size_t k = 0; k < n; k++) {
                    const imghist_view mk = {.data = mbuf + k * mstride, .dtype = IMGHIST_U8,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = w,
                        .channels = 1};
                    mv[k] = mk;
                    ref_hist(&v[k], masked ? mbuf + k * mstride : NULL, &rs, want + k * len);
                }
                for (int strided = 0; strided < 2; strided++) {
                    for (size_t k = 0; k <= n * len; k++) got[k] = 0x5a5a5a5a5a5aULL;
                    const imghist_counts out = {got, n * len, IMGHIST_MEM_HOST};
                    imghist_status st;
                    if (strided) {
                        /* A tensor; its mask one for all (count 1) or one an
                         * image (count n, mstride apart). */
                        imghist_view mt;
                        const imghist_view t =
                            masked ? vw_tensor_masked(v[0], n, (ptrdiff_t)img, mv[0],
                                                      masked == 1 ? n : 1, (ptrdiff_t)mstride, &mt)
                                   : vw_tensor(v[0], n, (ptrdiff_t)img);
                        st = imghist_histogram(ctx, &t, &spec, &out);
                    } else {
                        vw_list_masked(vl, v, masked ? mv : NULL, n);
                        st = imghist_histogram_list(ctx, vl, n, &spec, &out);
                    }
                    EXPECT(ctx, st, IMGHIST_OK);
                    assert_int_equal(got[n * len], 0x5a5a5a5a5a5aULL);
                    for (size_t k = 0; k < n * len; k++) {
                        if (got[k] != want[k]) {
                            fail_msg("batch (%s, mask %d, %d threads): type %d, %u bins over "
                                     "[%g, %g), %u channels, flags %u: image %zu counter %zu "
                                     "is %llu, the reference says %llu",
                                     strided ? "strided" : "views", masked, threads[t],
                                     (int)sc->t, rs.bins, rs.lo, rs.hi, ch, flags, k / len,
                                     k % len, (unsigned long long)got[k],
                                     (unsigned long long)want[k]);
                        }
                    }
                }
            }
            /* Unmasked again, for the accumulation below. */
            for (size_t k = 0; k < n; k++) {
                ref_hist(&v[k], NULL, &rs, want + k * len);
            }
            {
                const imghist_counts out = {got, n * len, IMGHIST_MEM_HOST};
                EXPECT(ctx, imghist_histogram_list(ctx, v, n, &spec, &out), IMGHIST_OK);
            }
            const imghist_histspec acc = {sc->bins, sc->lo, sc->hi, flags | IMGHIST_ACCUMULATE};
            const imghist_counts out = {got, n * len, IMGHIST_MEM_HOST};
            EXPECT(ctx, imghist_histogram_list(ctx, v, n, &acc, &out), IMGHIST_OK);
            for (size_t k = 0; k < n * len; k++) {
                assert_int_equal(got[k], 2 * want[k]);
            }
            free(want);
            free(got);
            free(v);
            free(mv);
            free(vl);
            free(mbuf);
            free(buf);
        }
        imghist_destroy(ctx);
    }
}

/* F32: NaN, -inf and +inf are counted as nan, below and above, never in a bin;
 * hi goes to the last bin only when closed. */
static void test_float_special_values(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(1);
    const float px[8] = {NAN, -INFINITY, INFINITY, 1.0f, 0.0f, 0.5f, -0.0f, 0.999999f};
    const imghist_view v = {.data = (void *)px, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST,
        .width = 8, .height = 1, .pitch = sizeof px, .channels = 1};
    uint64_t c[5];
    const imghist_counts out = {c, 5, IMGHIST_MEM_HOST};
    const imghist_histspec open = {2, 0.0, 1.0, IMGHIST_OUTLIERS};
    EXPECT(ctx, imghist_histogram(ctx, &v, &open, &out), IMGHIST_OK);
    const uint64_t want_open[5] = {2, 2, 1, 2, 1}; /* [0,.5), [.5,1), below, above, nan */
    assert_memory_equal(c, want_open, sizeof c);
    const imghist_histspec closed = {2, 0.0, 1.0, IMGHIST_OUTLIERS | IMGHIST_CLOSED};
    EXPECT(ctx, imghist_histogram(ctx, &v, &closed, &out), IMGHIST_OK);
    const uint64_t want_closed[5] = {2, 3, 1, 1, 1};
    assert_memory_equal(c, want_closed, sizeof c);

    double lo = 7, hi = 7;
    EXPECT(ctx, imghist_range(ctx, &v, &lo, &hi), IMGHIST_OK);
    assert_true(lo == 0.0 && hi == 1.0);
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    const imghist_view bv = {.data = (void *)bad, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST,
        .width = 3, .height = 1, .pitch = sizeof bad, .channels = 1};
    EXPECT(ctx, imghist_range(ctx, &bv, &lo, &hi), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "finite"));
    /* Masked range: only where the mask is set. */
    const uint8_t m[8] = {1, 1, 1, 0, 0, 1, 0, 0};
    const imghist_view mv = {.data = (void *)m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 8, .height = 1, .pitch = 8, .channels = 1};
    imghist_view vm = vw_masked(v, &mv);
    EXPECT(ctx, imghist_range(ctx, &vm, &lo, &hi), IMGHIST_OK);
    assert_true(lo == 0.5 && hi == 0.5);
    const uint8_t none[8] = {0};
    const imghist_view nv = {.data = (void *)none, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
        .width = 8, .height = 1, .pitch = 8, .channels = 1};
    vm = vw_masked(v, &nv);
    EXPECT(ctx, imghist_range(ctx, &vm, &lo, &hi), IMGHIST_E_INVALID_ARG);
    /* The range is of one image: a view of several, or a mask view of
     * several, is refused. */
    const imghist_view two = vw_tensor(v, 2, 0);
    EXPECT(ctx, imghist_range(ctx, &two, &lo, &hi), IMGHIST_E_INVALID_ARG);
    const imghist_view two_masks = vw_tensor(mv, 2, 0);
    vm = vw_masked(v, &two_masks);
    EXPECT(ctx, imghist_range(ctx, &vm, &lo, &hi), IMGHIST_E_INVALID_ARG);
    imghist_destroy(ctx);
}

static void test_range_types_and_channels(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(4);
    enum { W = 600, H = 900 };
    uint16_t *p = malloc(sizeof *p * W * H * 3);
    assert_non_null(p);
    for (size_t i = 0; i < (size_t)W * H * 3; i++) p[i] = (uint16_t)(1000 + tu_below(&rng, 5000));
    p[7] = 17;
    p[(size_t)W * H * 3 - 2] = 60001;
    const imghist_view v = {.data = p, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W * 6, .channels = 3};
    double lo, hi;
    EXPECT(ctx, imghist_range(ctx, &v, &lo, &hi), IMGHIST_OK);
    assert_true(lo == 17.0 && hi == 60001.0);
    free(p);
    imghist_destroy(ctx);
}

/* ---- joint histograms and mutual information ---- */

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_histogram_types"));
    return 0;
}

static const bs_test tests[] = {
    BS_TEST(test_every_type_and_binning),
    BS_TEST(test_batch_every_job),
    BS_TEST(test_float_special_values),
    BS_TEST(test_range_types_and_channels),
};

const bs_part histogram_types_part = BS_PART("histogram types", tests, setup, NULL);
