/*
 * The public calls of imghist.h's "N-dimensional histograms and
 * back-projection" section: argument checks, the axes resolved into an
 * ih_nd_job, and the choice of backend (host memory: the CPU loops; device
 * memory: the CUDA kernels).
 */
#include <math.h>
#include <string.h>

#include "colorspace.h"
#include "ndhist.h"
#include "ops.h"

static size_t images_in(const imghist_view *v)
{
    return v->count > 1 ? v->count : 1;
}

imghist_status ih_resolve_nd(imghist_ctx *ctx, const imghist_ndaxes *axes, imghist_dtype dtype,
                             uint32_t channels, ih_nd_job *job)
{
    memset(job, 0, sizeof *job);
    if (axes == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "axes pointer is NULL");
    }
    if (axes->dims < 1 || axes->dims > IMGHIST_MAX_DIMS) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%u dimensions: from 1 to %d", axes->dims,
                       IMGHIST_MAX_DIMS);
    }
    if (!ih_space_valid(axes->space)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown colour space %d", (int)axes->space);
    }
    job->dims = axes->dims;
    job->space = axes->space;
    job->dtype = dtype;
    job->channels = channels == 0 ? 1 : channels;
    job->sample_channels = job->channels;
    imghist_dtype axis_type = dtype;
    if (axes->space != IMGHIST_SPACE_NONE) {
        if (dtype != IMGHIST_U8 || job->channels < 3) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "colour conversion takes 8-bit images of 3 or 4 channels, not %u "
                           "channel(s) of %u-byte samples",
                           job->channels, (unsigned)ih_dtype_size(dtype));
        }
        job->sample_channels = 3;
        axis_type = IMGHIST_U8;
    }
    uint64_t cells = 1;
    for (uint32_t d = 0; d < job->dims; d++) {
        ih_nd_axis *a = &job->ax[d];
        const imghist_histspec *s = &axes->spec[d];
        if (d > 0 && (s->flags & (IMGHIST_ACCUMULATE | IMGHIST_OUTLIERS)) != 0) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "IMGHIST_ACCUMULATE and IMGHIST_OUTLIERS belong in the first axis");
        }
        a->channel = axes->channel[d];
        if (a->channel >= job->sample_channels) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "axis %u reads channel %u of %u", d,
                           a->channel, job->sample_channels);
        }
        if (axes->edges[d] != NULL) {
            const double *e = axes->edges[d];
            if ((s->flags & ~(IMGHIST_ACCUMULATE | IMGHIST_OUTLIERS | IMGHIST_CLOSED)) != 0) {
                return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                               "axis %u: explicit edges take no flags but IMGHIST_CLOSED", d);
            }
            if (s->bins < 1 || s->bins > IMGHIST_MAX_BINS) {
                return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "axis %u: %u bins: from 1 to %u", d,
                               s->bins, IMGHIST_MAX_BINS);
            }
            for (uint32_t i = 0; i <= s->bins; i++) {
                if (!isfinite(e[i]) || (i > 0 && !(e[i] > e[i - 1]))) {
                    return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                                   "axis %u: edge %u (%g) is not finite or not above the one "
                                   "before",
                                   d, i, e[i]);
                }
            }
            a->edges = e;
            a->bins = s->bins;
            a->closed = (s->flags & IMGHIST_CLOSED) != 0;
        } else {
            imghist_histspec plain = *s;
            plain.flags &= ~IMGHIST_OPENCV_BINS;
            ih_hist_job hj;
            const imghist_status st = ih_resolve_spec(ctx, &plain, axis_type, 1, &hj);
            if (st != IMGHIST_OK) {
                return st;
            }
            a->bin = hj.bin;
            a->bins = hj.bin.bins;
            a->closed = hj.bin.closed;
            if ((s->flags & IMGHIST_OPENCV_BINS) != 0) {
                if (s->flags & (IMGHIST_CLOSED | IMGHIST_FLOAT_EDGES | IMGHIST_FLOAT_STEP_EDGES)) {
                    return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                                   "axis %u: IMGHIST_OPENCV_BINS has open bins and no edges", d);
                }
                a->opencv = 1;
                a->lo = hj.bin.lo;
                a->hi = hj.bin.hi;
                a->t = (double)a->bins / (a->hi - a->lo);
                a->u = -a->t * a->lo;
            }
        }
        cells *= a->bins;
        if (cells > IMGHIST_MAX_BINS) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "more than %u cells", IMGHIST_MAX_BINS);
        }
    }
    size_t stride = 1;
    for (uint32_t d = job->dims; d-- > 0;) {
        job->ax[d].stride = stride;
        stride *= job->ax[d].bins;
    }
    job->cells = (size_t)cells;
    job->accumulate = (axes->spec[0].flags & IMGHIST_ACCUMULATE) != 0;
    job->outliers = (axes->spec[0].flags & IMGHIST_OUTLIERS) != 0;
    job->len = job->cells + (job->outliers ? 1 : 0);
    return IMGHIST_OK;
}

size_t imghist_ndcounts_len(const imghist_ndaxes *axes, imghist_dtype dtype)
{
    ih_nd_job job;
    const uint32_t ch = axes != NULL && axes->space != IMGHIST_SPACE_NONE ? 3 : IMGHIST_MAX_CHANNELS;
    return ih_resolve_nd(NULL, axes, dtype, ch, &job) == IMGHIST_OK ? job.len : 0;
}

/* src and its mask (one, or one an image) and their batch strides. */
static imghist_status check_images(imghist_ctx *ctx, const imghist_view *src, int masked)
{
    imghist_status st = ih_check_source(ctx, src, "source");
    const size_t n = st == IMGHIST_OK ? images_in(src) : 1;
    if (st == IMGHIST_OK && n > 1) st = ih_check_stride(ctx, src, n, src->image_stride, "source");
    if (st == IMGHIST_OK && masked && src->mask != NULL) {
        const imghist_view *m = src->mask;
        st = ih_check_mask(ctx, m, src);
        if (st == IMGHIST_OK && images_in(m) > 1) {
            if (images_in(m) != n) {
                st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                             "the mask view holds %zu masks for %zu images (1 or one an image)",
                             images_in(m), n);
            } else {
                st = ih_check_stride(ctx, m, n, m->image_stride, "masks");
            }
        }
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    return st;
}

/* A destination of src's size, count and memory, `channels` channels of dtype. */
static imghist_status check_destination(imghist_ctx *ctx, const imghist_view *src,
                                        const imghist_view *dst, imghist_dtype dtype,
                                        uint32_t channels)
{
    imghist_status st = ih_check_view(ctx, dst, "destination");
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint32_t dch = dst->channels == 0 ? 1 : dst->channels;
    if (dst->dtype != dtype || dch != channels) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "destination must have %u channel(s) of %u-byte samples", channels,
                       (unsigned)ih_dtype_size(dtype));
    }
    if (dst->width != src->width || dst->height != src->height || dst->mem != src->mem ||
        images_in(dst) != images_in(src)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "destination is not of the source's size, image count and memory");
    }
    if (images_in(dst) > 1) {
        st = ih_check_stride(ctx, dst, images_in(dst), dst->image_stride, "destination");
    }
    return st;
}

imghist_status imghist_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_ndaxes *axes, const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_images(ctx, src, 1);
    ih_nd_job job;
    if (st == IMGHIST_OK) st = ih_resolve_nd(ctx, axes, src->dtype, src->channels, &job);
    if (st == IMGHIST_OK) {
        size_t need;
        if (__builtin_mul_overflow(job.len, images_in(src), &need)) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the counts' length overflows");
        }
        st = ih_check_counts(ctx, out, need, "counts");
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, out->mem, "counts");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src->mem == IMGHIST_MEM_HOST && out->mem == IMGHIST_MEM_HOST) {
        return ih_cpu_histogramdd(ctx, src, &job, out);
    }
#if IH_HAVE_CUDA
    if (src->mem == IMGHIST_MEM_DEVICE && out->mem == IMGHIST_MEM_DEVICE) {
        return ih_cuda_histogramdd(ctx, src, &job, out);
    }
#endif
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                   "imghist_histogramdd takes images and counts in one memory");
}

imghist_status imghist_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst, imghist_space space)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_images(ctx, src, 0);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (space == IMGHIST_SPACE_NONE || !ih_space_valid(space)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "colour space %d is not a conversion",
                       (int)space);
    }
    const uint32_t ch = src->channels == 0 ? 1 : src->channels;
    if (src->dtype != IMGHIST_U8 || ch < 3) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "colour conversion takes 8-bit images of 3 or 4 channels");
    }
    st = check_destination(ctx, src, dst, IMGHIST_U8, 3);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src->mem == IMGHIST_MEM_HOST) {
        return ih_cpu_cvt_color(ctx, src, dst, space);
    }
#if IH_HAVE_CUDA
    return ih_cuda_cvt_color(ctx, src, dst, space);
#else
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "device memory without CUDA");
#endif
}

imghist_status imghist_backproject(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_ndaxes *axes, const float *hist, double scale,
                                   const imghist_view *dst)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_images(ctx, src, 0);
    ih_nd_job job;
    if (st == IMGHIST_OK) st = ih_resolve_nd(ctx, axes, src->dtype, src->channels, &job);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (job.accumulate || job.outliers) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "back-projection takes no IMGHIST_ACCUMULATE or IMGHIST_OUTLIERS");
    }
    if (hist == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "histogram pointer is NULL");
    }
    if (!isfinite(scale)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "scale %g is not finite", scale);
    }
    st = check_destination(ctx, src, dst, src->dtype, 1);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src->mem == IMGHIST_MEM_HOST) {
        return ih_cpu_backproject(ctx, src, &job, hist, (float)scale, dst);
    }
#if IH_HAVE_CUDA
    return ih_cuda_backproject(ctx, src, &job, hist, (float)scale, dst);
#else
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "device memory without CUDA");
#endif
}
