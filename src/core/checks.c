/* Checks of what callers pass: views, counts, specs; and the loaders' limits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

imghist_status ih_check_view(imghist_ctx *ctx, const imghist_view *v, const char *role)
{
    if (v == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s view is NULL", role);
    }
    if (v->data == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s data pointer is NULL", role);
    }
    const size_t size = ih_dtype_size(v->dtype);
    if (size == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s has an unknown sample type %d", role,
                       (int)v->dtype);
    }
    if (v->mem != IMGHIST_MEM_HOST && v->mem != IMGHIST_MEM_DEVICE) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s has an unknown memory kind %d", role,
                       (int)v->mem);
    }
    if (v->width == 0 || v->height == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s is empty (%ux%u)", role, v->width,
                       v->height);
    }
    const uint64_t channels = v->channels == 0 ? 1 : v->channels;
    const uint64_t row_bytes = (uint64_t)v->width * channels * size; /* < 2^32 * 2^32 * 4 */
    if (channels > 1024 || row_bytes > SIZE_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s rows are too long", role);
    }
    if (v->pitch < row_bytes) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "%s pitch %zu is smaller than a row (%llu bytes)", role, v->pitch,
                       (unsigned long long)row_bytes);
    }
    if (size > 1 && v->pitch % size != 0) { /* no division for 8-bit views */
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "%s pitch %zu is not a multiple of the sample size %zu", role, v->pitch,
                       size);
    }
    size_t rows_span; /* a multiplication, not a division: batches check thousands */
    if (__builtin_mul_overflow((size_t)(v->height - 1), v->pitch, &rows_span) ||
        rows_span > SIZE_MAX - (size_t)row_bytes) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s size overflows the address space", role);
    }
    return IMGHIST_OK;
}

imghist_status ih_check_view_u8(imghist_ctx *ctx, const imghist_view *v, const char *role)
{
    imghist_status st = ih_check_view(ctx, v, role);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (v->dtype != IMGHIST_U8 || v->channels > 1) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "%s: only 8-bit samples of one channel",
                       role);
    }
    return IMGHIST_OK;
}

imghist_status ih_check_source(imghist_ctx *ctx, const imghist_view *v, const char *role)
{
    imghist_status st = ih_check_view(ctx, v, role);
    if (st == IMGHIST_OK && v->channels > IMGHIST_MAX_CHANNELS) {
        st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "%s has %u channels: at most %d are counted",
                     role, v->channels, IMGHIST_MAX_CHANNELS);
    }
    return st;
}

imghist_status ih_check_mask(imghist_ctx *ctx, const imghist_view *mask, const imghist_view *src)
{
    if (mask == NULL) {
        return IMGHIST_OK;
    }
    imghist_status st = ih_check_view(ctx, mask, "mask");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (mask->dtype != IMGHIST_U8 || mask->channels > 1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "mask must be 8-bit with one channel");
    }
    if (mask->width != src->width || mask->height != src->height) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "mask is %ux%u, the image %ux%u",
                       mask->width, mask->height, src->width, src->height);
    }
    if (mask->mem != src->mem) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "mask and image must both be in host or both in device memory");
    }
    return IMGHIST_OK;
}

imghist_status ih_check_counts(imghist_ctx *ctx, const imghist_counts *c, size_t need,
                               const char *role)
{
    if (c == NULL || c->data == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s pointer is NULL", role);
    }
    if (c->mem != IMGHIST_MEM_HOST && c->mem != IMGHIST_MEM_DEVICE) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s have an unknown memory kind %d", role,
                       (int)c->mem);
    }
    if (c->len < need) {
        return ih_fail(ctx, IMGHIST_E_BUFSIZE, "%s hold %zu counters, the call needs %zu", role,
                       c->len, need);
    }
    return IMGHIST_OK;
}

/* Largest value of an integer type (0 for float). */
static uint32_t type_max(imghist_dtype dtype)
{
    return dtype == IMGHIST_U8 ? 255u : dtype == IMGHIST_U16 ? 65535u : 0u;
}

/* Integer samples whose bins are runs of 2^k values starting at an integer:
 * then bin = (v - lo) >> k is the edges' own answer (every edge is exact). */
static void integer_fast_path(ih_hist_job *job)
{
    ih_binning *b = &job->bin;
    b->shift_ok = 0;
    const uint32_t maxv = type_max(job->dtype);
    if (maxv == 0 || b->lo != floor(b->lo) || b->hi != floor(b->hi) ||
        fabs(b->lo) > 0x1p40 || fabs(b->hi) > 0x1p40) {
        return;
    }
    if (b->closed && b->hi <= (double)maxv) {
        return; /* hi itself is a sample that goes in the last bin */
    }
    const double span = b->hi - b->lo; /* exact: integers below 2^41 */
    for (uint32_t k = 0; k < 40; k++) {
        const double run = ldexp(1.0, (int)k);
        if (span == (double)b->bins * run) {
            b->shift_ok = 1;
            b->shift = k;
            b->ilo = (int64_t)b->lo;
            b->ihi = (int64_t)b->hi;
            return;
        }
        if ((double)b->bins * run > span) {
            return;
        }
    }
}

imghist_status ih_resolve_spec(imghist_ctx *ctx, const imghist_histspec *spec,
                               imghist_dtype dtype, uint32_t channels, ih_hist_job *job)
{
    memset(job, 0, sizeof *job);
    job->dtype = dtype;
    job->channels = channels == 0 ? 1 : channels;
    if (ih_dtype_size(dtype) == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown sample type %d", (int)dtype);
    }
    if (job->channels > IMGHIST_MAX_CHANNELS) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "%u channels: at most %d are counted",
                       job->channels, IMGHIST_MAX_CHANNELS);
    }
    const uint32_t flags = spec != NULL ? spec->flags : 0;
    if ((flags & ~(IMGHIST_ACCUMULATE | IMGHIST_OUTLIERS | IMGHIST_CLOSED |
                   IMGHIST_FLOAT_EDGES | IMGHIST_FLOAT_STEP_EDGES)) != 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown histogram flags 0x%x", flags);
    }
    job->accumulate = (flags & IMGHIST_ACCUMULATE) != 0;
    job->outliers = (flags & IMGHIST_OUTLIERS) != 0;
    ih_binning *b = &job->bin;
    b->closed = (flags & IMGHIST_CLOSED) != 0;
    if (spec == NULL || spec->bins == 0) {
        const uint32_t maxv = type_max(dtype);
        if (maxv == 0) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "float samples have no natural binning: give bins and a range "
                           "(imghist_range finds the data's)");
        }
        b->bins = maxv + 1;
        b->lo = 0.0;
        b->hi = (double)maxv + 1.0;
    } else {
        if (!(isfinite(spec->lo) && isfinite(spec->hi) && spec->lo < spec->hi)) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "histogram range [%g, %g) is empty or not finite", spec->lo,
                           spec->hi);
        }
        if (spec->bins > IMGHIST_MAX_BINS) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%u bins: at most %u", spec->bins,
                           IMGHIST_MAX_BINS);
        }
        b->bins = spec->bins;
        b->lo = spec->lo;
        b->hi = spec->hi;
    }
    b->w = (b->hi - b->lo) / b->bins;
    b->inv = b->bins / (b->hi - b->lo);
    /* Edges at least four units in the last place apart: every edge is above
     * the one before it, and the first estimate is off by at most one bin. */
    const double m = fmax(fabs(b->lo), fabs(b->hi));
    if (!(b->w >= 4.0 * (nextafter(m, INFINITY) - m)) || !isfinite(b->w) || !isfinite(b->inv)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "%u bins over [%g, %g) are narrower than a double can tell apart",
                       b->bins, b->lo, b->hi);
    }
    b->e0 = b->lo;
    const uint32_t fe = flags & (IMGHIST_FLOAT_EDGES | IMGHIST_FLOAT_STEP_EDGES);
    if (fe == (IMGHIST_FLOAT_EDGES | IMGHIST_FLOAT_STEP_EDGES)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "IMGHIST_FLOAT_EDGES and IMGHIST_FLOAT_STEP_EDGES together");
    }
    if (fe != 0 && spec != NULL && spec->bins != 0) {
        /* The same four units, of a float: rounded edges stay increasing and
         * the kernels' estimates within their bounds. */
        const float mf = (float)m;
        if (!(mf <= FLT_MAX && b->w >= 4.0 * ((double)nextafterf(mf, INFINITY) - (double)mf))) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "%u bins over [%g, %g) are narrower than a float can tell apart",
                           b->bins, b->lo, b->hi);
        }
        b->float_edges = fe == IMGHIST_FLOAT_EDGES ? IH_EDGES_ROUNDED : IH_EDGES_FLOAT_STEP;
        b->lo = ih_round_float(b->lo);
        b->hi = ih_round_float(b->hi);
        if (b->float_edges == IH_EDGES_FLOAT_STEP) {
            volatile float span = (float)b->hi - (float)b->lo; /* each step rounded */
            b->step_f = span / (float)b->bins;
            if (!isfinite(b->step_f)) {
                return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                               "the range [%g, %g] is wider than a float holds", b->lo, b->hi);
            }
        }
    }
    integer_fast_path(job);
    const uint32_t maxv = type_max(dtype);
    job->natural_bins = maxv != 0 && b->shift_ok && b->shift == 0 && b->ilo == 0 &&
                        b->ihi == (int64_t)maxv + 1;
    job->natural = job->natural_bins && !job->outliers;
    job->stride = (size_t)b->bins + (job->outliers ? 3 : 0);
    job->len = job->stride * job->channels;
    return IMGHIST_OK;
}

size_t imghist_bins(const imghist_histspec *spec, imghist_dtype dtype)
{
    ih_hist_job job;
    if (ih_resolve_spec(NULL, spec, dtype, 1, &job) != IMGHIST_OK) {
        return 0;
    }
    return job.bin.bins;
}

size_t imghist_counts_len(const imghist_histspec *spec, imghist_dtype dtype, uint32_t channels)
{
    ih_hist_job job;
    if (ih_resolve_spec(NULL, spec, dtype, channels, &job) != IMGHIST_OK) {
        return 0;
    }
    return job.len;
}

void ih_store_counts(uint64_t *out, const uint64_t *add, size_t n, int accumulate)
{
    if (!accumulate) {
        memcpy(out, add, n * sizeof *out);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        out[i] += add[i];
    }
}
