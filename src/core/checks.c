/* Checks of what callers pass: views, counts, specs; and the loaders' limits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core.h"

size_t ih_dtype_size(imghist_dtype dtype)
{
    switch (dtype) {
    case IMGHIST_U8: return 1;
    case IMGHIST_U16: return 2;
    case IMGHIST_F32: return 4;
    }
    return 0;
}

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
    if (v->dtype != IMGHIST_U8) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "%s: only 8-bit samples are implemented in imghist %s", role,
                       IMGHIST_VERSION_STRING);
    }
    if (v->channels > 1) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "%s: interleaved channels are not implemented in imghist %s", role,
                       IMGHIST_VERSION_STRING);
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

/* The natural binning: one bin per value; 0 where 0.2 has none. */
static uint32_t natural_bins(imghist_dtype dtype)
{
    return dtype == IMGHIST_U8 ? IH_U8_BINS : 0;
}

imghist_status ih_resolve_spec(imghist_ctx *ctx, const imghist_histspec *spec,
                               imghist_dtype dtype, ih_hist_job *job)
{
    job->bins = natural_bins(dtype);
    job->accumulate = 0;
    if (spec == NULL) {
        return IMGHIST_OK;
    }
    if ((spec->flags & ~IMGHIST_ACCUMULATE) != 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown histogram flags 0x%x", spec->flags);
    }
    job->accumulate = (spec->flags & IMGHIST_ACCUMULATE) != 0;
    if (spec->bins == 0) {
        return IMGHIST_OK;
    }
    if (!(isfinite(spec->lo) && isfinite(spec->hi) && spec->lo < spec->hi)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "histogram range [%g, %g) is empty or not finite", spec->lo, spec->hi);
    }
    if (dtype == IMGHIST_U8 && spec->bins == IH_U8_BINS && spec->lo == 0.0 &&
        spec->hi == 256.0) {
        return IMGHIST_OK;
    }
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                   "%u bins over [%g, %g): only one bin per 8-bit value is implemented "
                   "in imghist %s",
                   spec->bins, spec->lo, spec->hi, IMGHIST_VERSION_STRING);
}

size_t imghist_bins(const imghist_histspec *spec, imghist_dtype dtype)
{
    ih_hist_job job;
    if (ih_resolve_spec(NULL, spec, dtype, &job) != IMGHIST_OK) {
        return 0;
    }
    return job.bins;
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

imghist_status ih_check_pixel_limit(imghist_ctx *ctx, const char *name, uint64_t w, uint64_t h)
{
    if (w == 0 || h == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: image has no pixels", name);
    }
    const uint64_t limit = (uint64_t)ctx->params.max_pixels;
    if (w > UINT32_MAX || h > UINT32_MAX || w * h > limit) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: %llux%llu is over the limit of %llu pixels",
                       name, (unsigned long long)w, (unsigned long long)h,
                       (unsigned long long)limit);
    }
    if (w * h > SIZE_MAX / 4) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: image too large for this machine", name);
    }
    return IMGHIST_OK;
}
