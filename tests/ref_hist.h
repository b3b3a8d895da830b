/*
 * A reference histogram written from the header's words alone (include after
 * <cmocka.h> and "imghist.h"): U8/U16/F32, channels, masks, any bins and
 * ranges, outliers, the closed last bin; random samples that hit every edge;
 * a run of one case against the library. It finds a sample's bin by binary
 * search over the edge list e(i) = lo + i * w (one rounded product, one
 * rounded sum), e(bins) = hi; the library estimates and corrects, so the two
 * are independent. Each file including it has its own generator, seeded by
 * its part's setup.
 */
#ifndef IMGHIST_REF_HIST_H
#define IMGHIST_REF_HIST_H

#include <stdint.h>

#include "backend_suite.h"
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

/* A context on the backend under test with `threads` CPU threads. */
static inline imghist_ctx *test_ctx(int threads)
{
    return bs_new_ctx_threads(threads);
}

typedef struct ref_spec {
    uint32_t bins;
    double lo, hi;
    int closed, outliers;
    int float_edges; /* 1: every edge (lo, hi too) rounded to the nearest float;
                        2: edges in single precision (IMGHIST_FLOAT_STEP_EDGES) */
} ref_spec;

static inline double *ref_edges(const ref_spec *s)
{
    double *e = malloc((s->bins + 1) * sizeof *e);
    assert_non_null(e);
    const double w = (s->hi - s->lo) / s->bins;
    for (uint32_t i = 0; i < s->bins; i++) {
        volatile double step = (double)i * w; /* no fused multiply-add */
        e[i] = s->lo + step;
    }
    e[s->bins] = s->hi;
    for (uint32_t i = 0; s->float_edges == 1 && i <= s->bins; i++) {
        volatile float f = (float)e[i];
        e[i] = f;
    }
    if (s->float_edges == 2) {
        volatile float lo = (float)s->lo, hi = (float)s->hi;
        volatile float span = hi - lo;
        volatile float step = span / (float)s->bins;
        for (uint32_t i = 0; i < s->bins; i++) {
            volatile float p = (float)i * step;
            volatile float f = p + lo;
            e[i] = f;
        }
        e[s->bins] = hi;
    }
    return e;
}

/* Bin of v, or bins + 0 (below), 1 (above), 2 (nan). */
static inline uint32_t ref_bin(const ref_spec *s, const double *e, double v)
{
    if (isnan(v)) return s->bins + 2;
    if (v < e[0]) return s->bins;
    if (v > e[s->bins] || (v == e[s->bins] && !s->closed)) return s->bins + 1;
    if (v == e[s->bins]) return s->bins - 1;
    uint32_t a = 0, b = s->bins; /* e[a] <= v < e[b] */
    while (b - a > 1) {
        const uint32_t m = a + (b - a) / 2;
        if (v >= e[m]) a = m; else b = m;
    }
    return a;
}

static inline double sample(const void *row, imghist_dtype t, size_t i)
{
    switch (t) {
    case IMGHIST_U8: return ((const uint8_t *)row)[i];
    case IMGHIST_U16: return ((const uint16_t *)row)[i];
    default: return ((const float *)row)[i];
    }
}

static inline size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

static inline void ref_hist(const imghist_view *v, const uint8_t *mask, const ref_spec *s,
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
static inline void fill(void *buf, imghist_dtype t, size_t n, const ref_spec *s)
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
static inline ref_spec ref_spec_of(const spec_case *sc, uint32_t flags)
{
    ref_spec rs;
    rs.bins = sc->bins ? sc->bins : (sc->t == IMGHIST_U8 ? 256 : 65536);
    rs.lo = sc->bins ? sc->lo : 0;
    rs.hi = sc->bins ? sc->hi : rs.bins;
    rs.closed = (flags & IMGHIST_CLOSED) != 0;
    rs.outliers = (flags & IMGHIST_OUTLIERS) != 0;
    rs.float_edges = sc->bins == 0                        ? 0
                     : (flags & IMGHIST_FLOAT_EDGES) != 0      ? 1
                     : (flags & IMGHIST_FLOAT_STEP_EDGES) != 0 ? 2
                                                               : 0;
    return rs;
}

static inline void run_case(imghist_ctx *ctx, const spec_case *sc, uint32_t ch, int masked, uint32_t flags,
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

#endif
