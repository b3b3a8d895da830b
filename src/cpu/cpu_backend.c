/*
 * The CPU backend, the reference the CUDA backend is checked against: host
 * views only. With IMGHIST_P_CPU_THREADS > 1 an image is cut into bands of
 * rows, one per thread; each thread counts its band into counters of its own
 * and the counters are added, so the result does not depend on the thread
 * count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bands.h"
#include "cpu_clahe.h"
#include "cpu_equalize16.h"
#include "cpu_hist.h"
#include "parallel.h"

/* Below this many pixels per thread, starting a thread costs more than it saves. */
#define MIN_PIXELS_PER_THREAD (UINT64_C(1) << 18)
/* Most memory the threads' private counters may take together. */
#define MAX_PRIVATE_BYTES (UINT64_C(256) << 20)

typedef struct band_work band_work;
typedef void (*band_fn)(band_work *w);

/* F32 samples through a table (float_table): edges[i] is the smallest float
 * >= edge i, edges[bins] the smallest float above hi where hi is in the last
 * bin, and t = (v - lo_f) * inv_f lies within a quarter bin of v's place.
 * NULL edges: binning.h's way for every sample. */
typedef struct ftab {
    float *edges;
    float lo_f, inv_f;
} ftab;

/* What every band of one call shares. */
typedef struct band_call {
    const imghist_view *src, *src2, *mask, *dst;
    const ih_hist_job *job, *job2;
    const uint32_t *slot;  /* integer samples: value -> counter (UINT32_MAX: none) */
    ftab ft;               /* F32 samples: the edge table, or none */
    const void *lut;       /* equalization LUT (uint8_t or uint16_t) */
    size_t len;            /* private counters per band */
    band_fn fn;            /* what each band does */
} band_call;

struct band_work {
    const band_call *call;
    uint32_t row0, rows;
    uint64_t *counts;      /* call->len private counters (NULL when none) */
    double lo, hi;         /* range */
    int found;
};

static void run_band(void *arg, size_t band)
{
    band_work *w = (band_work *)arg + band;
    w->call->fn(w);
}

/* Threads worth starting for this image, given each needs `len` counters. */
static uint32_t threads_for(const imghist_ctx *ctx, const imghist_view *src, size_t len)
{
    const uint64_t pixels = (uint64_t)src->width * src->height;
    uint64_t n = (uint64_t)ctx->params.cpu_threads;
    const uint64_t useful = pixels / MIN_PIXELS_PER_THREAD;
    n = n < useful ? n : useful;
    n = n < src->height ? n : src->height;
    if (len > 0) {
        const uint64_t by_memory = MAX_PRIVATE_BYTES / (len * sizeof(uint64_t));
        n = n < by_memory ? n : by_memory;
        /* Adding up the threads' counters must not cost more than counting. */
        const uint64_t by_sum = pixels / len;
        n = n < by_sum ? n : by_sum;
    }
    return n > 0 ? (uint32_t)n : 1;
}

/*
 * Run fn over bands of the source's rows, the first on this thread. If a
 * thread cannot be started its band runs here too, so the call still
 * completes. With call->len > 0 every band gets zeroed private counters, and
 * `sum` (call->len host counters, or NULL) receives their total. Range calls
 * return their min/max through lo, hi and found when found is non-NULL.
 */
static imghist_status run_bands(imghist_ctx *ctx, const band_call *call, uint64_t *sum,
                                double *lo, double *hi, int *found)
{
    const uint32_t n = threads_for(ctx, call->src, call->len);
    band_work *work = calloc(n, sizeof *work);
    uint64_t *counts = call->len > 0 ? calloc((size_t)n * call->len, sizeof *counts) : NULL;
    if (work == NULL || (call->len > 0 && counts == NULL)) {
        free(work);
        free(counts);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for the counters of %u threads", n);
    }
    const uint32_t band = (call->src->height + n - 1) / n;
    uint32_t i = 0;
    IH_FOR_EACH_BAND(b, call->src->height, band) {
        work[i].call = call;
        work[i].row0 = b.row0;
        work[i].rows = b.rows;
        work[i].counts = counts != NULL ? counts + (size_t)i * call->len : NULL;
        i++;
    }
    ih_parallel_for(i, i, run_band, work);
    if (sum != NULL) {
        memcpy(sum, counts, call->len * sizeof *sum);
        for (uint32_t k = 1; k < i; k++) {
            const uint64_t *c = counts + (size_t)k * call->len;
            for (size_t v = 0; v < call->len; v++) {
                sum[v] += c[v];
            }
        }
    }
    if (found != NULL) {
        *found = 0;
        for (uint32_t k = 0; k < i; k++) {
            if (!work[k].found) {
                continue;
            }
            if (!*found || work[k].lo < *lo) *lo = work[k].lo;
            if (!*found || work[k].hi > *hi) *hi = work[k].hi;
            *found = 1;
        }
    }
    free(work);
    free(counts);
    return IMGHIST_OK;
}

/* ---- what a band does ---- */

static const void *row_of(const imghist_view *v, uint32_t y)
{
    return (const uint8_t *)v->data + (size_t)y * v->pitch;
}

/* The counter of sample value v (integers through the call's table). */
static inline uint32_t slot_of_float(const ih_hist_job *job, float v)
{
    const uint32_t b = ih_bin_of_double(&job->bin, (double)v);
    if (b < job->bin.bins) {
        return b;
    }
    return job->outliers ? b : UINT32_MAX; /* bins + 0/1/2: below/above/nan */
}

/* The F32 table for a job of `samples` samples: none where the estimate's
 * error can reach a quarter bin or has no bound (ih_float_bound), where
 * building it would cost more than a quarter of the samples, or without
 * memory (binning.h's way then: slower, the same counts). */
static ftab float_table(const ih_hist_job *job, uint64_t samples)
{
    ftab f = {NULL, 0.0f, 0.0f};
    const ih_binning *b = &job->bin;
    if (job->dtype != IMGHIST_F32 || samples < 4 * ((uint64_t)b->bins + 1) ||
        !(ih_float_bound(b) <= 0.25) || b->bins > (UINT32_C(1) << 22)) {
        return f;
    }
    f.lo_f = (float)b->lo; /* both ends within FLT_MAX: the bound says so */
    f.inv_f = (float)b->inv;
    if (!isfinite(f.inv_f) || !(f.inv_f > 0.0f)) {
        return f;
    }
    float *e = malloc(((size_t)b->bins + 1) * sizeof *e);
    if (e == NULL) {
        return f;
    }
    for (uint32_t i = 0; i <= b->bins; i++) {
        float x = ih_float_up(ih_edge(b, i)); /* v >= edge <=> v >= x */
        if (i == b->bins && b->closed && (double)x == b->hi) {
            x = nextafterf(x, INFINITY); /* hi itself is in the last bin */
        }
        e[i] = x;
    }
    f.edges = e;
    return f;
}

/* The counter of float sample v through the table: in range (edges[0] <= v
 * < edges[bins]; not NaN) t is within a quarter bin of v's place, so
 * trunc(t), clamped, is v's bin or one next to it, and two compares with
 * the table say which; the rest through slot_of_float. */
static inline uint32_t float_slot(const ih_hist_job *job, const ftab *f, float v)
{
    const uint32_t bins = job->bin.bins;
    if (v >= f->edges[0] && v < f->edges[bins]) {
        const float t = (v - f->lo_f) * f->inv_f;
        const uint32_t i = t < 1.0f ? 0u : t >= (float)bins ? bins - 1 : (uint32_t)t;
        return i - (uint32_t)(v < f->edges[i]) + (uint32_t)(v >= f->edges[i + 1]);
    }
    return slot_of_float(job, v);
}

/* One bin per value of an integer type, one channel, masked or not:
 * counted by the table-free loops (the outlier counters, when asked for,
 * stay at the zero they start at). */
static int table_free(const ih_hist_job *job)
{
    return job->natural_bins && job->dtype != IMGHIST_F32 && job->channels == 1;
}

/*
 * Integer samples of 1-4 interleaved channels through the call's table,
 * masked or not (every integer job but the table-free one), where the
 * counters are few beside the samples: 32-bit counters, two copies of each
 * channel's (even and odd pixels, so that equal neighbours do not wait on
 * each other's stores), and one more counter a copy (the dump) that takes
 * the samples in no bin and the pixels outside the mask, so that the loop
 * has no branch. The general loop below spends a type switch, a
 * multiplication and a test a sample, several times slower on 8-bit RGB,
 * 8-bit into 32 bins and masked images (bench/ measures both).
 */
/* Pixels between folds: no 32-bit counter can wrap. */
#define FAST_FOLD_PIXELS (UINT32_C(1) << 30)
/* Counters on the stack (8-bit jobs); more are allocated. */
#define FAST_STACK_WORDS (2 * IMGHIST_MAX_CHANNELS * (256 + 3 + 1))

/* Whether the fast loop takes the job over `pixels` pixels: integers (8-bit
 * ones with counters that 16 bits index), and zeroing and folding the copies
 * (about six word operations a counter) costs at most an eighth of the
 * counting. */
static int fast_job(const ih_hist_job *job, uint64_t pixels)
{
    return (job->dtype == IMGHIST_U16 || (job->dtype == IMGHIST_U8 && job->stride < 65535)) &&
           48 * ((uint64_t)job->stride + 1) <= pixels;
}

/* The copies' counters into the 64-bit counts, and zeroed. */
static void fast_fold(uint32_t *sub, uint32_t ch, size_t stride, uint64_t *out)
{
    const size_t span = stride + 1;
    for (uint32_t k = 0; k < ch; k++) {
        const uint32_t *a = sub + (size_t)k * span, *b = sub + (size_t)(ch + k) * span;
        for (size_t v = 0; v < stride; v++) {
            out[(size_t)k * stride + v] += (uint64_t)a[v] + b[v];
        }
    }
    memset(sub, 0, 2 * ch * span * sizeof *sub);
}

/* The counter of sample i of a row of SIZE-byte samples, or `dump` for
 * none and where out is all ones (a pixel outside the mask): 8-bit samples
 * through tab (dump baked in), 16-bit ones through the call's table (its
 * none, UINT32_MAX, and out give the dump through min). */
static inline uint32_t fast_index(uint32_t SIZE, const void *row, size_t i, const uint16_t *tab,
                                  const uint32_t *slot, uint32_t dump, uint32_t out)
{
    if (SIZE == 1) {
        const uint32_t t = tab[((const uint8_t *)row)[i]];
        return (t & ~out) | (dump & out);
    }
    const uint32_t t = slot[((const uint16_t *)row)[i]] | out;
    return t < dump ? t : dump;
}

/* Pixels [0, n) of a row: copy 0 (channel k's counters at c0 + k * span)
 * takes the even pixels, copy 1 (c1) the odd ones. A pixel outside the mask
 * sends every channel to the dump without a branch (masks are as random as
 * the data; a branch cost 4 x). CH and SIZE are constants where inlined. */
static inline void fast_row(uint32_t CH, uint32_t SIZE, const void *p, const uint8_t *m,
                            uint32_t n, const uint16_t *tab, const uint32_t *slot, uint32_t dump,
                            size_t span, uint32_t *c0, uint32_t *c1)
{
    uint32_t x = 0;
    if (m == NULL) { /* two loops: -O2 does not unswitch */
        for (; x + 2 <= n; x += 2) {
            const size_t i = (size_t)x * CH;
            for (uint32_t k = 0; k < CH; k++) {
                c0[k * span + fast_index(SIZE, p, i + k, tab, slot, dump, 0u)]++;
                c1[k * span + fast_index(SIZE, p, i + CH + k, tab, slot, dump, 0u)]++;
            }
        }
    } else {
        for (; x + 2 <= n; x += 2) {
            const size_t i = (size_t)x * CH;
            const uint32_t out0 = 0u - (uint32_t)(m[x] == 0);
            const uint32_t out1 = 0u - (uint32_t)(m[x + 1] == 0);
            for (uint32_t k = 0; k < CH; k++) {
                c0[k * span + fast_index(SIZE, p, i + k, tab, slot, dump, out0)]++;
                c1[k * span + fast_index(SIZE, p, i + CH + k, tab, slot, dump, out1)]++;
            }
        }
    }
    if (x < n && (m == NULL || m[x])) {
        for (uint32_t k = 0; k < CH; k++) {
            c0[k * span + fast_index(SIZE, p, (size_t)x * CH + k, tab, slot, dump, 0u)]++;
        }
    }
}

/* The band through fast_row; 0 (nothing counted) when its counters cannot
 * be allocated. */
static int band_fast(band_work *w)
{
    const band_call *c = w->call;
    const ih_hist_job *job = c->job;
    const uint32_t ch = job->channels, width = c->src->width;
    const size_t stride = job->stride, span = stride + 1, words = 2 * ch * span;
    uint32_t stack[FAST_STACK_WORDS];
    uint32_t *sub = words <= FAST_STACK_WORDS ? stack : malloc(words * sizeof *sub);
    if (sub == NULL) {
        return 0;
    }
    memset(sub, 0, words * sizeof *sub);
    uint32_t *c0 = sub, *c1 = sub + ch * span;
    const uint32_t dump = (uint32_t)stride;
    const int wide = job->dtype == IMGHIST_U16;
    uint16_t tab[256];
    for (uint32_t v = 0; !wide && v < 256; v++) {
        tab[v] = (uint16_t)(c->slot[v] < dump ? c->slot[v] : dump);
    }
    uint64_t since_fold = 0;
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const void *p = row_of(c->src, y);
        const uint8_t *m = c->mask != NULL ? row_of(c->mask, y) : NULL;
        switch (ch * 2 + (uint32_t)wide) {
        case 2: fast_row(1, 1, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 3: fast_row(1, 2, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 4: fast_row(2, 1, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 5: fast_row(2, 2, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 6: fast_row(3, 1, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 7: fast_row(3, 2, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        case 8: fast_row(4, 1, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        default: fast_row(4, 2, p, m, width, tab, c->slot, dump, span, c0, c1); break;
        }
        since_fold += width;
        if (since_fold >= FAST_FOLD_PIXELS) {
            fast_fold(sub, ch, stride, w->counts);
            since_fold = 0;
        }
    }
    fast_fold(sub, ch, stride, w->counts);
    if (sub != stack) {
        free(sub);
    }
    return 1;
}

/* F32 rows through the table: channel k's counters at k * stride; the
 * samples in no bin (slot_of_float's UINT32_MAX) are skipped, and a pixel
 * adds its mask's 0 or 1, without a branch on the mask (masks are as random
 * as the data; a dump counter for the pixels outside it made them queue on
 * one address). */
static void band_float(band_work *w)
{
    const band_call *c = w->call;
    const ih_hist_job *job = c->job;
    const uint32_t width = c->src->width, ch = job->channels;
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const float *row = row_of(c->src, y);
        if (c->mask == NULL) { /* the rows as one run of samples */
            for (size_t i = 0, k = 0; i < (size_t)width * ch; i++) {
                const uint32_t slot = float_slot(job, &c->ft, row[i]);
                if (slot != UINT32_MAX) {
                    w->counts[k * job->stride + slot]++;
                }
                k = k + 1 == ch ? 0 : k + 1;
            }
            continue;
        }
        const uint8_t *m = row_of(c->mask, y);
        for (uint32_t x = 0; x < width; x++) {
            const uint64_t keep = m[x] != 0;
            for (uint32_t k = 0; k < ch; k++) {
                const uint32_t slot = float_slot(job, &c->ft, row[(size_t)x * ch + k]);
                if (slot != UINT32_MAX) {
                    w->counts[k * job->stride + slot] += keep;
                }
            }
        }
    }
}

static void band_hist(band_work *w)
{
    const band_call *c = w->call;
    const imghist_view *s = c->src;
    const ih_hist_job *job = c->job;
    const uint32_t ch = job->channels, width = s->width;
    uint64_t *out = w->counts;
    if (table_free(job) && c->mask != NULL) {
        /* A mask: every pixel adds its mask's 0 or 1 to its value's counter,
         * with no branch on the mask and no one dump counter for the pixels
         * outside it to queue on. */
        for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
            const uint8_t *m = row_of(c->mask, y);
            if (job->dtype == IMGHIST_U8) {
                const uint8_t *row = row_of(s, y);
                for (uint32_t x = 0; x < width; x++) {
                    out[row[x]] += m[x] != 0;
                }
            } else {
                const uint16_t *row = row_of(s, y);
                for (uint32_t x = 0; x < width; x++) {
                    out[row[x]] += m[x] != 0;
                }
            }
        }
        return;
    }
    if (table_free(job)) {
        if (job->dtype == IMGHIST_U8) {
            ih_cpu_hist_u8(row_of(s, w->row0), s->pitch, width, w->rows, out);
            return;
        }
        for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
            const uint16_t *row = row_of(s, y);
            for (uint32_t x = 0; x < width; x++) {
                out[row[x]]++;
            }
        }
        return;
    }
    if (fast_job(job, (uint64_t)width * w->rows) && band_fast(w)) {
        return;
    }
    if (c->ft.edges != NULL) { /* floats with the table; without it, below */
        band_float(w);
        return;
    }
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const uint8_t *m = c->mask != NULL ? row_of(c->mask, y) : NULL;
        const void *row = row_of(s, y);
        for (uint32_t x = 0; x < width; x++) {
            if (m != NULL && m[x] == 0) {
                continue;
            }
            for (uint32_t k = 0; k < ch; k++) {
                const size_t i = (size_t)x * ch + k;
                uint32_t slot;
                switch (job->dtype) {
                case IMGHIST_U8: slot = c->slot[((const uint8_t *)row)[i]]; break;
                case IMGHIST_U16: slot = c->slot[((const uint16_t *)row)[i]]; break;
                default: slot = slot_of_float(job, ((const float *)row)[i]); break;
                }
                if (slot != UINT32_MAX) {
                    out[(size_t)k * job->stride + slot]++;
                }
            }
        }
    }
}

/* Sample i of a row as a double. */
static inline double sample_at(const void *row, imghist_dtype t, size_t i)
{
    switch (t) {
    case IMGHIST_U8: return ((const uint8_t *)row)[i];
    case IMGHIST_U16: return ((const uint16_t *)row)[i];
    default: return ((const float *)row)[i];
    }
}

static inline uint32_t bin_of_sample(const ih_hist_job *job, const void *row, size_t i)
{
    switch (job->dtype) {
    case IMGHIST_U8: return ih_bin_of_int(&job->bin, ((const uint8_t *)row)[i]);
    case IMGHIST_U16: return ih_bin_of_int(&job->bin, ((const uint16_t *)row)[i]);
    default: return ih_bin_of_double(&job->bin, ((const float *)row)[i]);
    }
}

static void band_joint(band_work *w)
{
    const band_call *c = w->call;
    const ih_hist_job *ja = c->job, *jb = c->job2;
    const uint32_t na = ja->bin.bins, nb = jb->bin.bins;
    const size_t cells = (size_t)na * nb;
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const uint8_t *m = c->mask != NULL ? row_of(c->mask, y) : NULL;
        const void *ra = row_of(c->src, y), *rb = row_of(c->src2, y);
        for (uint32_t x = 0; x < c->src->width; x++) {
            if (m != NULL && m[x] == 0) {
                continue;
            }
            const uint32_t i = bin_of_sample(ja, ra, x), j = bin_of_sample(jb, rb, x);
            if (i < na && j < nb) {
                w->counts[(size_t)i * nb + j]++;
            } else if (ja->outliers) {
                w->counts[cells]++;
            }
        }
    }
}

static void band_range(band_work *w)
{
    const band_call *c = w->call;
    const imghist_view *s = c->src;
    const size_t n = (size_t)s->width * (s->channels > 1 ? s->channels : 1);
    const uint32_t ch = s->channels > 1 ? s->channels : 1;
    double lo = 0.0, hi = 0.0;
    int found = 0;
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const uint8_t *m = c->mask != NULL ? row_of(c->mask, y) : NULL;
        const void *row = row_of(s, y);
        for (size_t i = 0; i < n; i++) {
            if (m != NULL && m[i / ch] == 0) {
                continue;
            }
            const double v = sample_at(row, s->dtype, i);
            if (!isfinite(v)) {
                continue;
            }
            if (!found || v < lo) lo = v;
            if (!found || v > hi) hi = v;
            found = 1;
        }
    }
    w->lo = lo;
    w->hi = hi;
    w->found = found;
}

static void band_apply(band_work *w)
{
    const band_call *c = w->call;
    const imghist_view *s = c->src, *d = c->dst;
    if (s->dtype == IMGHIST_U8) {
        ih_cpu_apply_lut_u8(row_of(s, w->row0), s->pitch,
                            (uint8_t *)d->data + (size_t)w->row0 * d->pitch, d->pitch, s->width,
                            w->rows, c->lut);
        return;
    }
    const uint16_t *lut = c->lut;
    for (uint32_t y = w->row0; y < w->row0 + w->rows; y++) {
        const uint16_t *sr = row_of(s, y);
        uint16_t *dr = (uint16_t *)((uint8_t *)d->data + (size_t)y * d->pitch);
        for (uint32_t x = 0; x < s->width; x++) {
            dr[x] = lut[sr[x]];
        }
    }
}

/* Integer samples: the counter of every value, UINT32_MAX for none. */
static uint32_t *slot_table(imghist_ctx *ctx, const ih_hist_job *job)
{
    if (job->dtype == IMGHIST_F32) {
        return NULL;
    }
    const uint32_t values = job->dtype == IMGHIST_U8 ? IH_U8_BINS : IH_U16_LEVELS;
    uint32_t *t = malloc(values * sizeof *t);
    if (t == NULL) {
        ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for a table of %u bins", values);
        return NULL;
    }
    for (uint32_t v = 0; v < values; v++) {
        const uint32_t b = ih_bin_of_int(&job->bin, v);
        t[v] = b < job->bin.bins || job->outliers ? b : UINT32_MAX;
    }
    return t;
}

static imghist_status cpu_histogram(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *mask, const ih_hist_job *job,
                                    const imghist_counts *out)
{
    band_call cx;
    memset(&cx, 0, sizeof cx);
    cx.fn = band_hist;
    cx.src = src;
    cx.mask = mask;
    cx.job = job;
    cx.len = job->len;
    uint32_t *slot = NULL;
    if (!table_free(job)) {
        slot = slot_table(ctx, job);
        if (slot == NULL && job->dtype != IMGHIST_F32) {
            return IMGHIST_E_NOMEM;
        }
    }
    cx.slot = slot;
    cx.ft = float_table(job, (uint64_t)src->width * src->height * job->channels);
    uint64_t *sum = job->accumulate ? malloc(job->len * sizeof *sum) : out->data;
    imghist_status st = IMGHIST_OK;
    if (sum == NULL) {
        st = ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu counters", job->len);
    }
    if (st == IMGHIST_OK) st = run_bands(ctx, &cx, sum, NULL, NULL, NULL);
    if (st == IMGHIST_OK && job->accumulate) {
        ih_store_counts(out->data, sum, job->len, 1);
    }
    if (sum != out->data) free(sum);
    free(slot);
    free(cx.ft.edges);
    return st;
}

static imghist_status cpu_range(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *mask, double *lo, double *hi, int *found)
{
    band_call cx;
    memset(&cx, 0, sizeof cx);
    cx.fn = band_range;
    cx.src = src;
    cx.mask = mask;
    return run_bands(ctx, &cx, NULL, lo, hi, found);
}

static imghist_status cpu_histogram2d(imghist_ctx *ctx, const imghist_view *a,
                                      const imghist_view *b, const imghist_view *mask,
                                      const ih_hist_job *ja, const ih_hist_job *jb,
                                      const imghist_counts *out)
{
    band_call cx;
    memset(&cx, 0, sizeof cx);
    cx.fn = band_joint;
    cx.src = a;
    cx.src2 = b;
    cx.mask = mask;
    cx.job = ja;
    cx.job2 = jb;
    cx.len = (size_t)ja->bin.bins * jb->bin.bins + (ja->outliers ? 1 : 0);
    uint64_t *sum = ja->accumulate ? malloc(cx.len * sizeof *sum) : out->data;
    if (sum == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu counters", cx.len);
    }
    imghist_status st = run_bands(ctx, &cx, sum, NULL, NULL, NULL);
    if (st == IMGHIST_OK && ja->accumulate) {
        ih_store_counts(out->data, sum, cx.len, 1);
    }
    if (sum != out->data) free(sum);
    return st;
}

/* The 8-bit LUT by the call's rule (ctx->eq_method). */
static imghist_status lut_u8(const imghist_ctx *ctx, const uint64_t hist[256], uint8_t lut[256])
{
    return ctx->eq_method == IMGHIST_EQ_PIL ? ih_equalize_lut_pil(hist, lut)
                                                         : ih_equalize_lut_u8(hist, lut);
}

static imghist_status cpu_equalize(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_view *mask, const imghist_view *dst,
                                   const imghist_counts *hist_out)
{
    if (hist_out == NULL && ih_sparse16_takes(src)) {
        sparse16 *sp = ih_scratch(ctx, sizeof *sp);
        if (sp == NULL) {
            return IMGHIST_E_NOMEM;
        }
        memset(sp->count, 0, sizeof sp->count);
        memset(sp->seen, 0, sizeof sp->seen);
        memset(sp->want, 0, sizeof sp->want);
        return ih_equalize16_sparse(sp, src, mask, dst)
                   ? IMGHIST_OK
                   : ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the mask has no non-zero sample");
    }
    const int wide = src->dtype == IMGHIST_U16;
    const size_t levels = wide ? IH_U16_LEVELS : IH_U8_BINS;
    ih_hist_job job;
    imghist_status st = ih_resolve_spec(ctx, NULL, src->dtype, 1, &job);
    /* the histogram, then the LUT, in the context's scratch */
    uint64_t *hist = ih_scratch(ctx, levels * (sizeof *hist + 2));
    if (hist == NULL) {
        return IMGHIST_E_NOMEM;
    }
    void *lut = hist + levels;
    imghist_counts counts = {hist, levels, IMGHIST_MEM_HOST};
    /* Timed here on a CPU context (a CUDA context that falls back here
     * counts the whole call as GPU time). */
    const int timed = ctx->backend == IMGHIST_BACKEND_CPU;
    const uint64_t t0 = ih_now_ns();
    if (st == IMGHIST_OK) st = cpu_histogram(ctx, src, mask, &job, &counts);
    const uint64_t t1 = ih_now_ns();
    if (timed) {
        ctx->stage_ns[IMGHIST_STAGE_COUNT] += t1 - t0;
    }
    if (st == IMGHIST_OK) {
        st = wide ? ih_equalize_lut_u16(hist, lut) : lut_u8(ctx, hist, lut);
        if (st != IMGHIST_OK) { /* only an empty histogram: every mask sample zero */
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the mask has no non-zero sample");
        }
    }
    if (st == IMGHIST_OK) {
        band_call cx;
        memset(&cx, 0, sizeof cx);
        cx.fn = band_apply;
        cx.src = src;
        cx.dst = dst;
        cx.lut = lut;
        st = run_bands(ctx, &cx, NULL, NULL, NULL, NULL);
    }
    if (st == IMGHIST_OK && hist_out != NULL) {
        memcpy(hist_out->data, hist, levels * sizeof *hist);
    }
    if (timed) {
        ih_stage_add(ctx, IMGHIST_STAGE_LUT, t1);
    }
    return st;
}

/* The threads a batch's images go over (1: this one only): as many as
 * IMGHIST_P_CPU_THREADS and the pixels allow; 0 when there are fewer images
 * than threads that could work, which the caller runs one image after the
 * other, each cut into bands. */
static uint64_t batch_threads(const imghist_ctx *ctx, const imghist_view *src, size_t count)
{
    uint64_t pixels = 0;
    for (size_t i = 0; i < count; i++) {
        pixels += (uint64_t)src[i].width * src[i].height;
    }
    uint64_t n = (uint64_t)ctx->params.cpu_threads;
    const uint64_t useful = pixels / MIN_PIXELS_PER_THREAD;
    n = n < useful ? n : useful;
    if (count < (uint64_t)ctx->params.cpu_threads && n > 1) {
        return 0;
    }
    return n > 0 ? n : 1;
}


/* A batch of 8- or 16-bit equalizations, with masks or not, whose images
 * the threads take in turn, each as cpu_equalize does one. */
typedef struct eq_each {
    const imghist_ctx *ctx;
    const imghist_view *src, *masks, *dst; /* masks: NULL, or one an image */
    const ih_hist_job *job;                /* the natural histogram (table_free) */
    uint64_t *hists;                       /* NULL, or job->len host counters an image */
    size_t count;
    size_t next;                           /* the next image nobody has taken (atomic) */
    int failed;                            /* a worker ran out of memory (atomic) */
} eq_each;

static void eq_each_worker(void *arg, size_t worker)
{
    (void)worker; /* workers take images from the shared counter */
    eq_each *b = arg;
    const size_t levels = b->job->len;
    const int wide = b->job->dtype == IMGHIST_U16;
    uint64_t *own = b->hists == NULL ? malloc(levels * sizeof *own) : NULL;
    void *lut = malloc(levels * (wide ? 2 : 1));
    /* small 16-bit images without histograms: ih_equalize16_sparse */
    sparse16 *sp = wide && b->hists == NULL ? calloc(1, sizeof *sp) : NULL;
    if ((b->hists == NULL && own == NULL) || lut == NULL ||
        (wide && b->hists == NULL && sp == NULL)) {
        __atomic_store_n(&b->failed, 1, __ATOMIC_RELAXED);
        free(own);
        free(lut);
        free(sp);
        return;
    }
    band_call cx;
    memset(&cx, 0, sizeof cx);
    cx.job = b->job;
    cx.len = levels;
    cx.lut = lut;
    for (;;) {
        const size_t i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->count || __atomic_load_n(&b->failed, __ATOMIC_RELAXED)) {
            break;
        }
        uint64_t *hist = b->hists != NULL ? b->hists + i * levels : own;
        cx.src = &b->src[i];
        cx.mask = b->masks != NULL ? &b->masks[i] : NULL;
        cx.dst = &b->dst[i];
        if (sp != NULL && ih_sparse16_takes(cx.src)) {
            /* never empty: the core refused empty masks before any image */
            (void)ih_equalize16_sparse(sp, cx.src, cx.mask, cx.dst);
            continue;
        }
        memset(hist, 0, levels * sizeof *hist);
        band_work w = {&cx, 0, cx.src->height, hist, 0.0, 0.0, 0};
        band_hist(&w);
        /* never empty: the core refused empty masks before any image */
        (void)(wide ? ih_equalize_lut_u16(hist, lut) : lut_u8(b->ctx, hist, lut));
        band_apply(&w);
    }
    free(own);
    free(lut);
    free(sp);
}

/*
 * Equalization of a list (cpu_equalize_batch: without masks): images
 * across IMGHIST_P_CPU_THREADS threads, each image on one thread; with
 * fewer images than threads (or too few pixels for them all), one image
 * after the other, each cut into bands by cpu_equalize.
 */
static imghist_status cpu_equalize_each(imghist_ctx *ctx, const imghist_view *src,
                                        const imghist_view *masks, const imghist_view *dst,
                                        size_t count, const imghist_counts *hists)
{
    ih_hist_job job;
    imghist_status st = ih_resolve_spec(ctx, NULL, src[0].dtype, 1, &job);
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint64_t n = batch_threads(ctx, src, count);
    if (n == 0) {
        for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
            imghist_counts one = {hists != NULL ? hists->data + i * job.len : NULL, job.len,
                                  IMGHIST_MEM_HOST};
            st = cpu_equalize(ctx, &src[i], masks != NULL ? &masks[i] : NULL, &dst[i],
                              hists != NULL ? &one : NULL);
        }
        return st;
    }
    /* one bin per value: band_hist counts it without a table */
    eq_each b = {ctx, src, masks, dst, &job, hists != NULL ? hists->data : NULL, count, 0, 0};
    ih_parallel_for(n, (unsigned)n, eq_each_worker, &b);
    if (b.failed) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for a %zu-level table", job.len);
    }
    return IMGHIST_OK;
}

static imghist_status cpu_equalize_batch(imghist_ctx *ctx, const imghist_view *src,
                                         const imghist_view *dst, size_t count,
                                         const imghist_counts *hists)
{
    return cpu_equalize_each(ctx, src, NULL, dst, count, hists);
}

/* A batch of histograms whose images the threads take in turn, a few at a
 * time when there are many (fewer claims of the shared counter). */
typedef struct hist_batch {
    const imghist_view *src;
    const imghist_view *masks; /* NULL, or one a view */
    const ih_hist_job *job;
    const uint32_t *slot;  /* integer samples: value -> counter (NULL: none needed) */
    ftab ft;               /* F32 samples: the edge table, or none */
    uint64_t *out;         /* job->len host counters per image */
    uint64_t *own;         /* with accumulate: job->len counters per thread */
    size_t count;
    size_t take;           /* images a claim takes */
    size_t next;           /* the next image nobody has taken (atomic) */
    uint32_t workers;      /* threads that took an `own` row (atomic) */
} hist_batch;

static void hist_batch_worker(void *arg, size_t worker)
{
    (void)worker; /* workers take images from the shared counter */
    hist_batch *b = arg;
    const ih_hist_job *job = b->job;
    const size_t len = job->len;
    uint64_t *own = NULL;
    if (job->accumulate) {
        own = b->own + (size_t)__atomic_fetch_add(&b->workers, 1, __ATOMIC_RELAXED) * len;
    }
    band_call cx;
    memset(&cx, 0, sizeof cx);
    cx.job = job;
    cx.slot = b->slot;
    cx.ft = b->ft;
    cx.len = len;
    for (;;) {
        const size_t first = __atomic_fetch_add(&b->next, b->take, __ATOMIC_RELAXED);
        if (first >= b->count) {
            return;
        }
        const size_t end = b->count - first < b->take ? b->count : first + b->take;
        for (size_t i = first; i < end; i++) {
            const imghist_view *s = &b->src[i];
            uint64_t *o = b->out + i * len;
            uint64_t *c = own != NULL ? own : o;
            cx.src = s;
            cx.mask = b->masks != NULL ? &b->masks[i] : NULL;
            band_work w = {&cx, 0, s->height, c, 0.0, 0.0, 0};
            if (job->natural && job->dtype == IMGHIST_U8 && job->channels == 1 && cx.mask == NULL) {
                ih_cpu_hist_u8(s->data, s->pitch, s->width, s->height, c); /* writes all 256 */
            } else {
                memset(c, 0, len * sizeof *c);
                band_hist(&w);
            }
            if (own != NULL) {
                for (size_t k = 0; k < len; k++) {
                    o[k] += own[k];
                }
            }
        }
    }
}

/* Images across the threads as cpu_equalize_each spreads them, any job. */
static imghist_status cpu_histogram_batch(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *masks, size_t count,
                                          const ih_hist_job *job, const imghist_counts *out)
{
    const uint64_t n = batch_threads(ctx, src, count);
    if (n == 0) {
        imghist_status st = IMGHIST_OK;
        for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
            const imghist_counts one = {out->data + i * job->len, job->len, IMGHIST_MEM_HOST};
            st = cpu_histogram(ctx, &src[i], masks != NULL ? &masks[i] : NULL, job, &one);
        }
        return st;
    }
    uint32_t *slot = NULL;
    if (!table_free(job)) {
        slot = slot_table(ctx, job);
        if (slot == NULL && job->dtype != IMGHIST_F32) {
            return IMGHIST_E_NOMEM;
        }
    }
    uint64_t *own = NULL;
    if (job->accumulate) {
        own = malloc((size_t)n * job->len * sizeof *own);
        if (own == NULL) {
            free(slot);
            return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for the counters of %u threads",
                           (unsigned)n);
        }
    }
    uint64_t samples = 0;
    for (size_t i = 0; i < count; i++) {
        samples += (uint64_t)src[i].width * src[i].height * job->channels;
    }
    const size_t per = count / (n * 64);
    hist_batch b = {src,       masks, job, slot, float_table(job, samples), out->data, own,
                    count, per > 16 ? 16 : per > 0 ? per : 1, 0, 0};
    ih_parallel_for(n, (unsigned)n, hist_batch_worker, &b);
    free(own);
    free(slot);
    free(b.ft.edges);
    return IMGHIST_OK;
}

static void cpu_close(imghist_ctx *ctx)
{
    (void)ctx;
}

/* The CPU's routes (host memory: one image or a list, never a tensor):
 * one image in bands; a list across the threads, image by image. */
static imghist_status cpu_histogram_any(imghist_ctx *ctx, const ih_batch *b,
                                        const ih_hist_job *job, const imghist_counts *out)
{
    return b->kind == IH_ONE ? cpu_histogram(ctx, b->src, b->masks, job, out)
                             : cpu_histogram_batch(ctx, b->src, b->masks, b->count, job, out);
}

static imghist_status cpu_equalize_any(imghist_ctx *ctx, const ih_batch *b,
                                       const imghist_counts *hists, size_t levels)
{
    if (b->kind == IH_ONE) {
        return cpu_equalize(ctx, b->src, b->masks, b->dst, hists);
    }
    return b->masks == NULL && levels == IH_U8_BINS
               ? cpu_equalize_batch(ctx, b->src, b->dst, b->count, hists)
               : cpu_equalize_each(ctx, b->src, b->masks, b->dst, b->count, hists);
}

static imghist_status cpu_apply_lut(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *dst, const uint8_t *lut)
{
    (void)ctx;
    ih_cpu_apply_lut_u8(src->data, src->pitch, dst->data, dst->pitch, src->width, src->height,
                        lut);
    return IMGHIST_OK;
}

const ih_backend_ops ih_cpu_backend = {
    .id = IMGHIST_BACKEND_CPU,
    .device_memory = 0,
    .open = NULL,
    .close = cpu_close,
    .set_stream = NULL,
    .get_stream = NULL,
    .histogram = cpu_histogram_any,
    .range = cpu_range,
    .histogram2d = cpu_histogram2d,
    .mutual_information = NULL,
    .equalize = cpu_equalize_any,
    .clahe = ih_cpu_clahe,
    .apply_lut = cpu_apply_lut,
};
