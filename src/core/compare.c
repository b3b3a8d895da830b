/*
 * Histogram comparison (imghist.h, "Comparing histograms"): OpenCV 4.6's
 * compareHist formulas in its order of operations (core/compare.h), the 1-D
 * earth mover's distance, and the calls that compare one histogram with many
 * or every pair of a set, on the CPU here or on a device backend.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "compare.h"
#include "ops.h"
#include "parallel.h"

size_t ih_cmp_value_size(imghist_hist_type t)
{
    switch (t) {
    case IMGHIST_HIST_U64: return sizeof(uint64_t);
    case IMGHIST_HIST_F32: return sizeof(float);
    case IMGHIST_HIST_F64: return sizeof(double);
    }
    return 0;
}

void ih_cmp_load(const imghist_hists *h, size_t i, double *dst)
{
    const size_t size = ih_cmp_value_size(h->type);
    const size_t stride = h->stride != 0 ? h->stride : h->bins * size;
    const unsigned char *p = (const unsigned char *)h->data + i * stride;
    switch (h->type) {
    case IMGHIST_HIST_U64:
        /* cv2.calcHist keeps counts as floats: the same rounding. */
        for (size_t b = 0; b < h->bins; b++) {
            dst[b] = (double)(float)((const uint64_t *)p)[b];
        }
        break;
    case IMGHIST_HIST_F32:
        for (size_t b = 0; b < h->bins; b++) {
            dst[b] = (double)((const float *)p)[b];
        }
        break;
    case IMGHIST_HIST_F64:
        memcpy(dst, p, h->bins * sizeof(double));
        break;
    }
}

bool ih_cmp_float_steps(const imghist_hists *a, const imghist_hists *b)
{
    return a->type != IMGHIST_HIST_F64 && b->type != IMGHIST_HIST_F64;
}

bool ih_cmp_symmetric(imghist_compare_method m)
{
    return m == IMGHIST_CMP_CORREL || m == IMGHIST_CMP_INTERSECT ||
           m == IMGHIST_CMP_BHATTACHARYYA || m == IMGHIST_CMP_EMD;
}

/* The bins the two-lane part covers: a multiple of 4 (four floats a vector). */
static size_t vector_part(size_t bins)
{
    return bins - bins % 4;
}

void ih_cmp_row_of(imghist_compare_method m, const double *a, size_t bins, ih_cmp_row *r)
{
    r->s1 = 0.0;
    r->s11 = 0.0;
    const size_t nv = vector_part(bins);
    if (m == IMGHIST_CMP_CORREL || m == IMGHIST_CMP_BHATTACHARYYA) {
        double s1[2] = {0.0, 0.0}, s11[2] = {0.0, 0.0};
        for (size_t j = 0; j < nv; j += 2) {
            for (size_t l = 0; l < 2; l++) {
                s11[l] = a[j + l] * a[j + l] + s11[l];
                s1[l] = s1[l] + a[j + l];
            }
        }
        r->s1 += s1[0] + s1[1];
        r->s11 += s11[0] + s11[1];
        for (size_t j = nv; j < bins; j++) {
            r->s1 += a[j];
            r->s11 += a[j] * a[j];
        }
    } else if (m == IMGHIST_CMP_EMD) {
        for (size_t j = 0; j < bins; j++) {
            r->s1 += a[j];
        }
    }
}

/* std::min and SSE's minps on their operands' order; they differ only on NaN. */
static double min_scalar(double a, double b)
{
    return b < a ? b : a;
}

static double min_vector(double a, double b)
{
    return a < b ? a : b;
}

static double correl(const double *a, const ih_cmp_row *ra, const double *b,
                     const ih_cmp_row *rb, size_t bins)
{
    const size_t nv = vector_part(bins);
    double l[2] = {0.0, 0.0};
    for (size_t j = 0; j < nv; j += 2) {
        l[0] = a[j] * b[j] + l[0];
        l[1] = a[j + 1] * b[j + 1] + l[1];
    }
    double s12 = 0.0;
    s12 += l[0] + l[1];
    for (size_t j = nv; j < bins; j++) {
        s12 += a[j] * b[j];
    }
    const double s1 = ra->s1, s2 = rb->s1;
    const double scale = 1. / (double)bins;
    const double num = s12 - s1 * s2 * scale;
    const double denom2 = (ra->s11 - s1 * s1 * scale) * (rb->s11 - s2 * s2 * scale);
    return fabs(denom2) > DBL_EPSILON ? num / sqrt(denom2) : 1.;
}

static double chisqr(const double *a, const double *b, size_t bins, bool alt, bool float_steps)
{
    double r = 0.0;
    for (size_t j = 0; j < bins; j++) {
        /* OpenCV subtracts and adds the floats before it widens them. */
        double d = a[j] - b[j];
        double den = alt ? a[j] + b[j] : a[j];
        if (float_steps) {
            d = (double)(float)d;
            den = (double)(float)den;
        }
        if (fabs(den) > DBL_EPSILON) {
            r += d * d / den;
        }
    }
    return alt ? r * 2 : r;
}

static double intersect(const double *a, const double *b, size_t bins)
{
    const size_t nv = vector_part(bins);
    double l[2] = {0.0, 0.0};
    for (size_t j = 0; j < nv; j += 4) {
        l[0] = l[0] + (min_vector(a[j], b[j]) + min_vector(a[j + 2], b[j + 2]));
        l[1] = l[1] + (min_vector(a[j + 1], b[j + 1]) + min_vector(a[j + 3], b[j + 3]));
    }
    double r = 0.0;
    r += l[0] + l[1];
    for (size_t j = nv; j < bins; j++) {
        r += min_scalar(a[j], b[j]);
    }
    return r;
}

static double bhattacharyya(const double *a, const ih_cmp_row *ra, const double *b,
                            const ih_cmp_row *rb, size_t bins)
{
    const size_t nv = vector_part(bins);
    double l[2] = {0.0, 0.0};
    for (size_t j = 0; j < nv; j += 2) {
        l[0] = l[0] + sqrt(a[j] * b[j]);
        l[1] = l[1] + sqrt(a[j + 1] * b[j + 1]);
    }
    double r = 0.0;
    r += l[0] + l[1];
    for (size_t j = nv; j < bins; j++) {
        r += sqrt(a[j] * b[j]);
    }
    double s = ra->s1 * rb->s1;
    s = fabs(s) > FLT_EPSILON ? 1. / sqrt(s) : 1.;
    const double d = 1. - r * s;
    return sqrt(d < 0. ? 0. : d);
}

static double kl_div(const double *a, const double *b, size_t bins)
{
    double r = 0.0;
    for (size_t j = 0; j < bins; j++) {
        const double p = a[j];
        double q = b[j];
        if (fabs(p) <= DBL_EPSILON) {
            continue;
        }
        if (fabs(q) <= DBL_EPSILON) {
            q = 1e-10;
        }
        r += p * log(p / q);
    }
    return r;
}

/* Unit ground distance between neighbouring bins: the area between the two
 * normalised cumulative sums. The last bin's sums are both 1. */
static double emd(const double *a, const ih_cmp_row *ra, const double *b, const ih_cmp_row *rb,
                  size_t bins)
{
    const double wa = ra->s1, wb = rb->s1;
    if (!(wa > 0.0) || !(wb > 0.0)) {
        return NAN;
    }
    double ca = 0.0, cb = 0.0, d = 0.0;
    for (size_t j = 0; j + 1 < bins; j++) {
        ca += a[j];
        cb += b[j];
        d += fabs(ca / wa - cb / wb);
    }
    return d;
}

double ih_cmp_pair(imghist_compare_method m, const double *a, const ih_cmp_row *ra,
                   const double *b, const ih_cmp_row *rb, size_t bins, bool float_steps)
{
    switch (m) {
    case IMGHIST_CMP_CORREL: return correl(a, ra, b, rb, bins);
    case IMGHIST_CMP_CHISQR: return chisqr(a, b, bins, false, float_steps);
    case IMGHIST_CMP_INTERSECT: return intersect(a, b, bins);
    case IMGHIST_CMP_BHATTACHARYYA: return bhattacharyya(a, ra, b, rb, bins);
    case IMGHIST_CMP_CHISQR_ALT: return chisqr(a, b, bins, true, float_steps);
    case IMGHIST_CMP_KL_DIV: return kl_div(a, b, bins);
    case IMGHIST_CMP_EMD: return emd(a, ra, b, rb, bins);
    }
    return NAN;
}

/* ---- Names ---- */

static const struct {
    const char *name;
    imghist_compare_method method;
} method_names[] = {
    {"correlation", IMGHIST_CMP_CORREL},     {"chisqr", IMGHIST_CMP_CHISQR},
    {"intersect", IMGHIST_CMP_INTERSECT},    {"bhattacharyya", IMGHIST_CMP_BHATTACHARYYA},
    {"chisqr_alt", IMGHIST_CMP_CHISQR_ALT},  {"kl_div", IMGHIST_CMP_KL_DIV},
    {"emd", IMGHIST_CMP_EMD},                {"correl", IMGHIST_CMP_CORREL},
    {"chi-square", IMGHIST_CMP_CHISQR},      {"intersection", IMGHIST_CMP_INTERSECT},
    {"hellinger", IMGHIST_CMP_HELLINGER},    {"kl", IMGHIST_CMP_KL_DIV},
    {"chisqr-alt", IMGHIST_CMP_CHISQR_ALT},  {"kl-div", IMGHIST_CMP_KL_DIV},
};

const char *imghist_compare_method_name(imghist_compare_method method)
{
    for (size_t i = 0; i < IMGHIST_CMP_COUNT; i++) {
        if (method_names[i].method == method) {
            return method_names[i].name;
        }
    }
    return NULL;
}

imghist_status imghist_compare_method_from_name(const char *name, imghist_compare_method *out)
{
    if (name == NULL || out == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    for (size_t i = 0; i < sizeof method_names / sizeof method_names[0]; i++) {
        if (strcasecmp(name, method_names[i].name) == 0) {
            *out = method_names[i].method;
            return IMGHIST_OK;
        }
    }
    return IMGHIST_E_INVALID_ARG;
}

/* ---- Checks ---- */

static bool method_ok(imghist_compare_method m)
{
    return (unsigned)m < IMGHIST_CMP_COUNT;
}

/* Why h cannot be read as histograms, or NULL. */
static const char *hists_problem(const imghist_hists *h)
{
    if (h == NULL || h->data == NULL) {
        return "NULL histograms";
    }
    const size_t size = ih_cmp_value_size(h->type);
    if (size == 0) {
        return "an unknown histogram value type";
    }
    if (h->mem != IMGHIST_MEM_HOST && h->mem != IMGHIST_MEM_DEVICE) {
        return "an unknown memory kind";
    }
    if (h->bins == 0 || h->bins > SIZE_MAX / size / 2) {
        return "a bin count of 0 or past the address space";
    }
    if ((uintptr_t)h->data % size != 0) {
        return "data not aligned to the value size";
    }
    const size_t count = h->count != 0 ? h->count : 1;
    const size_t stride = h->stride != 0 ? h->stride : h->bins * size;
    if (stride % size != 0 || stride < h->bins * size) {
        return "a stride shorter than a histogram or not a multiple of the value size";
    }
    if (count > 1 && (count - 1) > (SIZE_MAX - h->bins * size) / stride) {
        return "histograms past the address space";
    }
    return NULL;
}

static size_t count_of(const imghist_hists *h)
{
    return h->count != 0 ? h->count : 1;
}

imghist_status imghist_compare(const imghist_hists *h1, const imghist_hists *h2,
                               imghist_compare_method method, double *result)
{
    if (result == NULL || !method_ok(method) || hists_problem(h1) != NULL ||
        hists_problem(h2) != NULL || h1->bins != h2->bins || count_of(h1) != 1 ||
        count_of(h2) != 1 || h1->mem != IMGHIST_MEM_HOST || h2->mem != IMGHIST_MEM_HOST) {
        return IMGHIST_E_INVALID_ARG;
    }
    const size_t bins = h1->bins;
    double *v = malloc(2 * bins * sizeof *v);
    if (v == NULL) {
        return IMGHIST_E_NOMEM;
    }
    ih_cmp_load(h1, 0, v);
    ih_cmp_load(h2, 0, v + bins);
    ih_cmp_row r1, r2;
    ih_cmp_row_of(method, v, bins, &r1);
    ih_cmp_row_of(method, v + bins, bins, &r2);
    *result = ih_cmp_pair(method, v, &r1, v + bins, &r2, bins, ih_cmp_float_steps(h1, h2));
    free(v);
    return IMGHIST_OK;
}

/* The checks compare_many and compare_all share. */
static imghist_status check_call(imghist_ctx *ctx, const imghist_hists *set,
                                 imghist_compare_method method, const double *out,
                                 imghist_mem out_mem)
{
    if (!method_ok(method)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown comparison method %d", (int)method);
    }
    const char *why = hists_problem(set);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "histogram set: %s", why);
    }
    if (out == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "output pointer is NULL");
    }
    if (out_mem != IMGHIST_MEM_HOST && out_mem != IMGHIST_MEM_DEVICE) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "output has an unknown memory kind %d",
                       (int)out_mem);
    }
    imghist_status st = ih_check_memory(ctx, set->mem, "histograms");
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, out_mem, "results");
    return st;
}

/* ---- The CPU's batches: rows of the output a task each ---- */

#define ROWS_PER_TASK 16u

typedef struct cmp_job {
    imghist_compare_method method;
    const imghist_hists *set;
    const double *query; /* many: the query's values */
    ih_cmp_row query_row;
    const double *values; /* all: every histogram's values */
    const ih_cmp_row *rows;
    size_t n, bins;
    bool float_steps, symmetric;
    double *out;
    int failed; /* a task had no memory */
} cmp_job;

static void many_task(void *arg, size_t task)
{
    cmp_job *j = arg;
    double *v = malloc(j->bins * sizeof *v);
    if (v == NULL) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    const size_t end = (task + 1) * ROWS_PER_TASK < j->n ? (task + 1) * ROWS_PER_TASK : j->n;
    for (size_t i = task * ROWS_PER_TASK; i < end; i++) {
        ih_cmp_row r;
        ih_cmp_load(j->set, i, v);
        ih_cmp_row_of(j->method, v, j->bins, &r);
        j->out[i] = ih_cmp_pair(j->method, j->query, &j->query_row, v, &r, j->bins,
                                j->float_steps);
    }
    free(v);
}

/* Row i; with a symmetric method its cells from the diagonal on, mirrored. */
static void all_task(void *arg, size_t i)
{
    cmp_job *j = arg;
    const double *a = j->values + i * j->bins;
    for (size_t k = j->symmetric ? i : 0; k < j->n; k++) {
        const double d = ih_cmp_pair(j->method, a, &j->rows[i], j->values + k * j->bins,
                                     &j->rows[k], j->bins, j->float_steps);
        j->out[i * j->n + k] = d;
        if (j->symmetric) {
            j->out[k * j->n + i] = d;
        }
    }
}

static unsigned threads_of(const imghist_ctx *ctx)
{
    return ctx->params.cpu_threads > 0 ? (unsigned)ctx->params.cpu_threads : 1u;
}

imghist_status imghist_compare_many(imghist_ctx *ctx, const imghist_hists *query,
                                    const imghist_hists *set, imghist_compare_method method,
                                    double *out, imghist_mem out_mem)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_call(ctx, set, method, out, out_mem);
    if (st != IMGHIST_OK) {
        return st;
    }
    const char *why = hists_problem(query);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "query histogram: %s", why);
    }
    if (count_of(query) != 1 || query->bins != set->bins || query->mem != set->mem) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "the query must be one histogram of the set's bins and memory");
    }
    if (set->mem == IMGHIST_MEM_DEVICE || out_mem == IMGHIST_MEM_DEVICE) {
        if (ctx->ops->compare == NULL) {
            return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "no device comparison on this backend");
        }
        return ctx->ops->compare(ctx, query, set, method, out, out_mem);
    }
    cmp_job j = {.method = method, .set = set, .n = count_of(set), .bins = set->bins,
                 .float_steps = ih_cmp_float_steps(query, set), .out = out};
    double *q = malloc(j.bins * sizeof *q);
    if (q == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu bins", j.bins);
    }
    ih_cmp_load(query, 0, q);
    ih_cmp_row_of(method, q, j.bins, &j.query_row);
    j.query = q;
    const size_t tasks = (j.n + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    const size_t per_thread = (size_t)1 << 14; /* values a thread is worth starting for */
    const size_t want = j.n * j.bins / per_thread + 1;
    const unsigned threads = threads_of(ctx) < want ? threads_of(ctx) : (unsigned)want;
    ih_parallel_for(tasks, threads, many_task, &j);
    free(q);
    return j.failed ? ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu bins", j.bins)
                    : IMGHIST_OK;
}

imghist_status imghist_compare_all(imghist_ctx *ctx, const imghist_hists *set,
                                   imghist_compare_method method, double *out,
                                   imghist_mem out_mem)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_call(ctx, set, method, out, out_mem);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t n = count_of(set), bins = set->bins;
    if (n > SIZE_MAX / sizeof(double) / n) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu x %zu results: past the address space",
                       n, n);
    }
    if (ctx->ops->compare != NULL) {
        return ctx->ops->compare(ctx, NULL, set, method, out, out_mem);
    }
    if (n > SIZE_MAX / sizeof(double) / bins) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%zu histograms of %zu bins: too many", n, bins);
    }
    double *values = malloc(n * bins * sizeof *values);
    ih_cmp_row *rows = malloc(n * sizeof *rows);
    if (values == NULL || rows == NULL) {
        free(values);
        free(rows);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu histograms of %zu bins", n,
                       bins);
    }
    for (size_t i = 0; i < n; i++) {
        ih_cmp_load(set, i, values + i * bins);
        ih_cmp_row_of(method, values + i * bins, bins, &rows[i]);
    }
    cmp_job j = {.method = method, .set = set, .values = values, .rows = rows, .n = n,
                 .bins = bins, .float_steps = ih_cmp_float_steps(set, set),
                 .symmetric = ih_cmp_symmetric(method), .out = out};
    ih_parallel_for(n, threads_of(ctx), all_task, &j);
    free(values);
    free(rows);
    return IMGHIST_OK;
}
