/*
 * 0.3's histograms on the CPU backend against a naive reference written from
 * the header's words alone: U8/U16/F32, channels, masks, any bins and ranges,
 * outliers, the closed last bin, imghist_range, joint histograms, mutual
 * information, 16-bit and masked equalization, at 1 and several threads.
 *
 * The reference finds a sample's bin by binary search over the edge list
 * e(i) = lo + i * w (one rounded product, one rounded sum), e(bins) = hi;
 * the library estimates and corrects, so the two are independent.
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
#include "test_util.h"
#include "views.h"

#define EXPECT(ctx, call, want)                                                                \
    do {                                                                                       \
        const imghist_status got_ = (call);                                                    \
        if (got_ != (want)) {                                                                  \
            fail_msg("%s returned %d, expected %d; last error \"%s\"", #call, (int)got_,       \
                     (int)(want), (ctx) != NULL ? imghist_last_error(ctx) : "");               \
        }                                                                                      \
    } while (0)

static tu_rng rng;

static imghist_ctx *cpu_ctx(int threads)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
    return ctx;
}

/* ---- the reference ---- */

typedef struct ref_spec {
    uint32_t bins;
    double lo, hi;
    int closed, outliers;
} ref_spec;

static double *ref_edges(const ref_spec *s)
{
    double *e = malloc((s->bins + 1) * sizeof *e);
    assert_non_null(e);
    const double w = (s->hi - s->lo) / s->bins;
    for (uint32_t i = 0; i < s->bins; i++) {
        volatile double step = (double)i * w; /* no fused multiply-add */
        e[i] = s->lo + step;
    }
    e[s->bins] = s->hi;
    return e;
}

/* Bin of v, or bins + 0 (below), 1 (above), 2 (nan). */
static uint32_t ref_bin(const ref_spec *s, const double *e, double v)
{
    if (isnan(v)) return s->bins + 2;
    if (v < s->lo) return s->bins;
    if (v > s->hi || (v == s->hi && !s->closed)) return s->bins + 1;
    if (v == s->hi) return s->bins - 1;
    uint32_t a = 0, b = s->bins; /* e[a] <= v < e[b] */
    while (b - a > 1) {
        const uint32_t m = a + (b - a) / 2;
        if (v >= e[m]) a = m; else b = m;
    }
    return a;
}

static double sample(const void *row, imghist_dtype t, size_t i)
{
    switch (t) {
    case IMGHIST_U8: return ((const uint8_t *)row)[i];
    case IMGHIST_U16: return ((const uint16_t *)row)[i];
    default: return ((const float *)row)[i];
    }
}

static size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

static void ref_hist(const imghist_view *v, const uint8_t *mask, const ref_spec *s,
                     uint64_t *out)
{
    const uint32_t ch = v->channels ? v->channels : 1;
    const size_t stride = s->bins + (s->outliers ? 3 : 0);
    memset(out, 0, ch * stride * sizeof *out);
    double *e = ref_edges(s);
    for (uint32_t y = 0; y < v->height; y++) {
        const uint8_t *row = (const uint8_t *)v->data + (size_t)y * v->pitch;
        for (uint32_t x = 0; x < v->width; x++) {
            if (mask != NULL && mask[(size_t)y * v->width + x] == 0) continue;
            for (uint32_t c = 0; c < ch; c++) {
                const uint32_t b = ref_bin(s, e, sample(row, v->dtype, (size_t)x * ch + c));
                if (b < s->bins || s->outliers) out[c * stride + b]++;
            }
        }
    }
    free(e);
}

/* ---- data ---- */

/* Random samples with edge cases mixed in: values on edges, one ulp around
 * them, lo and hi, NaN and infinities (F32), the type's extremes. */
static void fill(void *buf, imghist_dtype t, size_t n, const ref_spec *s)
{
    double *e = ref_edges(s);
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = tu_below(&rng, 16);
        double v;
        if (k < 9) {
            /* anywhere a little around the range */
            const double span = s->hi - s->lo;
            v = s->lo - 0.1 * span + 1.2 * span * (tu_next(&rng) >> 11) * 0x1p-53;
        } else if (k < 13) {
            v = e[tu_below(&rng, s->bins + 1)];
            if (t == IMGHIST_F32 && k == 11) v = nextafterf((float)v, INFINITY);
            if (t == IMGHIST_F32 && k == 12) v = nextafterf((float)v, -INFINITY);
        } else if (k == 13) {
            v = t == IMGHIST_F32 ? NAN : 0;
        } else if (k == 14) {
            v = t == IMGHIST_F32 ? (tu_below(&rng, 2) ? INFINITY : -INFINITY) : 65535;
        } else {
            v = tu_below(&rng, 2) ? s->lo : s->hi;
        }
        switch (t) {
        case IMGHIST_U8: ((uint8_t *)buf)[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); break;
        case IMGHIST_U16:
            ((uint16_t *)buf)[i] = (uint16_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
            break;
        default: /* beyond FLT_MAX (ranges near it): the infinity it rounds to */
            ((float *)buf)[i] = v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
            break;
        }
    }
    free(e);
}

typedef struct spec_case {
    imghist_dtype t;
    uint32_t bins;
    double lo, hi;
} spec_case;

static const spec_case cases[] = {
    {IMGHIST_U8, 0, 0, 0},          {IMGHIST_U8, 256, 0, 256},     {IMGHIST_U8, 100, 0, 256},
    {IMGHIST_U8, 16, 64, 128},      {IMGHIST_U8, 7, -3.5, 300.25}, {IMGHIST_U8, 1, 10, 11},
    {IMGHIST_U8, 3, 1, 255},        {IMGHIST_U16, 0, 0, 0},        {IMGHIST_U16, 4096, 0, 65536},
    {IMGHIST_U16, 4096, 0, 4096},   {IMGHIST_U16, 1000, 0, 65535}, {IMGHIST_U16, 1 << 20, 0, 65536},
    {IMGHIST_U16, 333, 100.5, 60000.75},
    {IMGHIST_F32, 10000, 0, 1},     {IMGHIST_F32, 10, 0, 1},       {IMGHIST_F32, 256, -1e3, 1e3},
    {IMGHIST_F32, 3, 0.1, 0.7},     {IMGHIST_F32, 1 << 20, -2, 2}, {IMGHIST_F32, 1, -1, 1},
    {IMGHIST_F32, 1000, 1000, 1001}, {IMGHIST_F32, 100, -3e38, 3e38},
};

/* The reference's spec of a case with flags (bins 0: one per level). */
static ref_spec ref_spec_of(const spec_case *sc, uint32_t flags)
{
    ref_spec rs;
    rs.bins = sc->bins ? sc->bins : (sc->t == IMGHIST_U8 ? 256 : 65536);
    rs.lo = sc->bins ? sc->lo : 0;
    rs.hi = sc->bins ? sc->hi : rs.bins;
    rs.closed = (flags & IMGHIST_CLOSED) != 0;
    rs.outliers = (flags & IMGHIST_OUTLIERS) != 0;
    return rs;
}

static void run_case(imghist_ctx *ctx, const spec_case *sc, uint32_t ch, int masked, uint32_t flags,
                     uint32_t w, uint32_t h)
{
    const imghist_histspec spec = {sc->bins, sc->lo, sc->hi, flags};
    const ref_spec rs = ref_spec_of(sc, flags);
    const size_t ss = dsize(sc->t);
    const size_t pitch = (size_t)w * ch * ss + 3 * ss; /* padded rows */
    uint8_t *buf = malloc(pitch * h + 1);
    uint8_t *mask = masked ? malloc((size_t)w * h) : NULL;
    assert_non_null(buf);
    for (uint32_t y = 0; y < h; y++) {
        fill(buf + (size_t)y * pitch, sc->t, (size_t)w * ch, &rs);
        memset(buf + (size_t)y * pitch + (size_t)w * ch * ss, 0x7f, 3 * ss); /* never counted */
    }
    for (size_t i = 0; mask != NULL && i < (size_t)w * h; i++) {
        mask[i] = masked == 2 ? 0 : (uint8_t)(tu_below(&rng, 3) ? tu_below(&rng, 256) : 0);
    }
    const imghist_view v = {.data = buf, .dtype = sc->t, .mem = IMGHIST_MEM_HOST, .width = w,
        .height = h, .pitch = pitch, .channels = ch};
    const imghist_view mv = {.data = mask, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = w,
        .height = h, .pitch = w, .channels = 1};
    const size_t len = imghist_counts_len(&spec, sc->t, ch);
    assert_int_equal(len, ch * (rs.bins + (rs.outliers ? 3 : 0)));
    uint64_t *want = malloc(len * sizeof *want), *got = malloc((len + 1) * sizeof *got);
    assert_true(want && got);
    ref_hist(&v, mask, &rs, want);
    for (size_t i = 0; i <= len; i++) got[i] = 0x5a5a5a5a5a5aULL;
    const imghist_counts out = {got, len, IMGHIST_MEM_HOST};
    const imghist_view vm = vw_masked(v, mask ? &mv : NULL);
    EXPECT(ctx, imghist_histogram(ctx, &vm, &spec, &out), IMGHIST_OK);
    assert_int_equal(got[len], 0x5a5a5a5a5a5aULL); /* nothing past len */
    for (size_t i = 0; i < len; i++) {
        if (got[i] != want[i]) {
            fail_msg("type %d, %u bins over [%g, %g), %u channels, mask %d, flags %u, %ux%u: "
                     "counter %zu is %llu, the reference says %llu",
                     (int)sc->t, rs.bins, rs.lo, rs.hi, ch, masked, flags, w, h, i,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    /* Accumulate adds on top. */
    const imghist_histspec acc = {sc->bins, sc->lo, sc->hi, flags | IMGHIST_ACCUMULATE};
    EXPECT(ctx, imghist_histogram(ctx, &vm, &acc, &out), IMGHIST_OK);
    for (size_t i = 0; i < len; i++) {
        assert_int_equal(got[i], 2 * want[i]);
    }
    free(want);
    free(got);
    free(buf);
    free(mask);
}

static void test_every_type_and_binning(void **state)
{
    (void)state;
    const int threads[] = {1, 3};
    for (size_t t = 0; t < 2; t++) {
        imghist_ctx *ctx = cpu_ctx(threads[t]);
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
        imghist_ctx *ctx = cpu_ctx(threads[t]);
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
    imghist_ctx *ctx = cpu_ctx(1);
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
    imghist_ctx *ctx = cpu_ctx(4);
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

static void test_joint_against_reference(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 4; threads += 3) {
        imghist_ctx *ctx = cpu_ctx(threads);
        enum { W = 613, H = 517 };
        uint8_t *a = malloc(W * H);
        float *b = malloc(sizeof *b * W * H);
        uint8_t *m = malloc(W * H);
        assert_true(a && b && m);
        for (size_t i = 0; i < (size_t)W * H; i++) {
            a[i] = (uint8_t)tu_below(&rng, 256);
            b[i] = tu_below(&rng, 50) == 0 ? NAN : (float)(a[i] / 255.0 + (tu_below(&rng, 100) - 50) * 1e-3);
            m[i] = (uint8_t)tu_below(&rng, 2);
        }
        const imghist_view va = {.data = a, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W, .channels = 1};
        const imghist_view vb = {.data = b, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W * 4, .channels = 1};
        const imghist_view vm = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W, .channels = 1};
        const imghist_histspec sa = {64, 0, 256, IMGHIST_OUTLIERS};
        const imghist_histspec sb = {50, 0.0, 1.0, 0};
        const ref_spec ra = {64, 0, 256, 0, 1}, rb = {50, 0.0, 1.0, 0, 0};
        double *ea = ref_edges(&ra), *eb = ref_edges(&rb);
        for (int masked = 0; masked < 2; masked++) {
            uint64_t *want = calloc(64 * 50 + 1, sizeof *want), *got = malloc(sizeof *got * (64 * 50 + 1));
            for (size_t i = 0; i < (size_t)W * H; i++) {
                if (masked && !m[i]) continue;
                const uint32_t i1 = ref_bin(&ra, ea, a[i]), i2 = ref_bin(&rb, eb, b[i]);
                if (i1 < 64 && i2 < 50) want[i1 * 50 + i2]++; else want[64 * 50]++;
            }
            const imghist_counts out = {got, 64 * 50 + 1, IMGHIST_MEM_HOST};
            const imghist_view vam = vw_masked(va, masked ? &vm : NULL);
            EXPECT(ctx, imghist_histogram2d(ctx, &vam, &vb, &sa, &sb, &out), IMGHIST_OK);
            assert_memory_equal(got, want, sizeof *got * (64 * 50 + 1));
            /* b's mask is not read: a's selects the pixels. */
            const imghist_view vbm = vw_masked(vb, masked ? NULL : &vm);
            EXPECT(ctx, imghist_histogram2d(ctx, &vam, &vbm, &sa, &sb, &out), IMGHIST_OK);
            assert_memory_equal(got, want, sizeof *got * (64 * 50 + 1));
            free(want);
            free(got);
        }
        free(ea);
        free(eb);
        /* Refusals: sizes, channels, short buffers, flags on the second spec. */
        uint64_t c[64 * 50 + 1];
        const imghist_counts out = {c, 64 * 50, IMGHIST_MEM_HOST};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, &sa, &sb, &out), IMGHIST_E_BUFSIZE);
        imghist_view small = vb;
        small.width = W - 1;
        const imghist_counts out2 = {c, 64 * 50 + 1, IMGHIST_MEM_HOST};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &small, &sa, &sb, &out2),
               IMGHIST_E_INVALID_ARG);
        const imghist_histspec sb_acc = {50, 0.0, 1.0, IMGHIST_ACCUMULATE};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, &sa, &sb_acc, &out2),
               IMGHIST_E_INVALID_ARG);
        const imghist_view two = vw_tensor(va, 2, 0);
        EXPECT(ctx, imghist_histogram2d(ctx, &two, &vb, &sa, &sb, &out2), IMGHIST_E_INVALID_ARG);
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &two, &sa, &sb, &out2), IMGHIST_E_INVALID_ARG);
        const imghist_histspec big = {5000, 0, 1, 0};
        EXPECT(ctx, imghist_histogram2d(ctx, &vb, &vb, &big, &big, &out2),
               IMGHIST_E_INVALID_ARG);
        free(a);
        free(b);
        free(m);
        imghist_destroy(ctx);
    }
}

static double entropy_of(const uint64_t *h, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += h[i];
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i]) {
            const double p = (double)h[i] / total;
            e -= p * log2(p);
        }
    }
    return e;
}

static void test_mutual_information(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx(2);
    enum { W = 1000, H = 700 };
    uint8_t *a = malloc(W * H), *b = malloc(W * H);
    uint64_t *joint = malloc(sizeof *joint * 65536);
    assert_true(a && b && joint);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        a[i] = (uint8_t)(tu_below(&rng, 200) + (i % W) / 20); /* not uniform */
        b[i] = (uint8_t)tu_below(&rng, 256);
    }
    const imghist_view va = {.data = a, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view vb = {.data = b, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_counts jc = {joint, 65536, IMGHIST_MEM_HOST};
    double r[2];

    /* With itself: MI = H(A), NMI = 2. */
    EXPECT(ctx, imghist_histogram2d(ctx, &va, &va, NULL, NULL, &jc), IMGHIST_OK);
    EXPECT(ctx, imghist_mutual_information(ctx, &jc, 256, 256, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    uint64_t ha[256];
    const imghist_counts hc = {ha, 256, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogram(ctx, &va, NULL, &hc), IMGHIST_OK);
    const double h = entropy_of(ha, 256);
    assert_true(h > 7.0);
    assert_true(fabs(r[0] - h) < 1e-9 * h);
    assert_true(fabs(r[1] - 2.0) < 1e-12);

    /* Independent noise: MI close to 0 (the bias of the plug-in estimator is
     * about (255 * 255) / (2 N ln 2) = 0.067 bits here), NMI close to 1. */
    EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, NULL, NULL, &jc), IMGHIST_OK);
    EXPECT(ctx, imghist_mutual_information(ctx, &jc, 256, 256, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(r[0] >= 0.0 && r[0] < 0.1);
    assert_true(r[1] > 1.0 && r[1] < 1.01);

    /* A 2x2 table by hand: n = [[2, 0], [0, 2]] -> MI 1 bit, NMI 2;
     * [[1, 1], [1, 1]] -> MI 0, NMI (1 + 1) / 2 = 1. */
    const uint64_t diag[4] = {2, 0, 0, 2}, flat[4] = {1, 1, 1, 1};
    const imghist_counts dc = {(uint64_t *)diag, 4, IMGHIST_MEM_HOST};
    const imghist_counts fc = {(uint64_t *)flat, 4, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_mutual_information(ctx, &dc, 2, 2, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(fabs(r[0] - 1.0) < 1e-15 && fabs(r[1] - 2.0) < 1e-15);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 2, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(fabs(r[0]) < 1e-15 && fabs(r[1] - 1.0) < 1e-15);

    const uint64_t zero[4] = {0};
    const imghist_counts zc = {(uint64_t *)zero, 4, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_mutual_information(ctx, &zc, 2, 2, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 3, r, IMGHIST_MEM_HOST),
           IMGHIST_E_BUFSIZE);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 0, 3, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 2, r, IMGHIST_MEM_DEVICE),
           IMGHIST_E_UNSUPPORTED);
    free(a);
    free(b);
    free(joint);
    imghist_destroy(ctx);
}

/* ---- equalization ---- */

/* OpenCV's formula for L levels, from the header's words. */
static void ref_lut(const uint64_t *hist, uint32_t levels, uint32_t *lut)
{
    uint64_t total = 0;
    uint32_t first = 0;
    for (uint32_t i = 0; i < levels; i++) total += hist[i];
    while (hist[first] == 0) first++;
    if (hist[first] == total) {
        for (uint32_t i = 0; i < levels; i++) lut[i] = first;
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
    imghist_ctx *ctx = cpu_ctx(3);
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
    check_equalize16(ctx, p, W, H, NULL); /* constant: maps onto itself */
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
    imghist_ctx *ctx = cpu_ctx(2);
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

int main(void)
{
    tu_seed(&rng, tu_fresh_seed("test_hist_types"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_type_and_binning),
        cmocka_unit_test(test_batch_every_job),
        cmocka_unit_test(test_float_special_values),
        cmocka_unit_test(test_range_types_and_channels),
        cmocka_unit_test(test_joint_against_reference),
        cmocka_unit_test(test_mutual_information),
        cmocka_unit_test(test_equalize_16bit),
        cmocka_unit_test(test_equalize_masked_u8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
