/*
 * The public operations: check everything, then dispatch to the context's
 * backend. A host image the CUDA backend has no GPU memory for runs on the
 * CPU backend instead (the one fallback, said in the note).
 */
#include <stdio.h>

#include "backend.h"

/* Device memory needs a backend that takes it. */
static imghist_status check_memory(imghist_ctx *ctx, imghist_mem mem, const char *role)
{
    if (mem == IMGHIST_MEM_DEVICE && !ctx->ops->device_memory) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       IMGHIST_WITH_CUDA ? "%s in device memory need a context on the CUDA backend"
                                         : "%s in device memory: this build of imghist has no "
                                           "CUDA backend",
                       role);
    }
    return IMGHIST_OK;
}

/* After IH_E_GPU_OOM: may the call run on the CPU instead? */
static imghist_status on_cpu_instead(imghist_ctx *ctx, int all_host)
{
    if (!all_host || ctx->fallback == NULL) {
        return ih_fail(ctx, IMGHIST_E_CUDA, "GPU out of memory for staging the image "
                                            "(cudaErrorMemoryAllocation)");
    }
    ih_note(ctx, "GPU out of memory: ran on the CPU");
    return IMGHIST_OK;
}

/* One image on the context's backend, or on the CPU when the GPU has no
 * memory for a host image. */
static imghist_status dispatch_histogram(imghist_ctx *ctx, const imghist_view *src,
                                         const ih_hist_job *job, const imghist_counts *out)
{
    imghist_status st = ctx->ops->histogram(ctx, src, job, out);
    if (st == IH_E_GPU_OOM) {
        st = on_cpu_instead(ctx, src->mem == IMGHIST_MEM_HOST && out->mem == IMGHIST_MEM_HOST);
        if (st == IMGHIST_OK) {
            st = ctx->fallback->histogram(ctx, src, job, out);
        }
    }
    return st;
}

imghist_status imghist_histogram(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *mask, const imghist_histspec *spec,
                                 const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_view_u8(ctx, src, "source");
    if (st == IMGHIST_OK && mask != NULL) {
        st = ih_check_view(ctx, mask, "mask");
        if (st == IMGHIST_OK) {
            st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "masks are not implemented in imghist %s",
                         IMGHIST_VERSION_STRING);
        }
    }
    ih_hist_job job;
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, spec, src->dtype, &job);
    if (st == IMGHIST_OK) st = ih_check_counts(ctx, out, job.bins, "counts");
    if (st == IMGHIST_OK) st = check_memory(ctx, src->mem, "images");
    if (st == IMGHIST_OK) st = check_memory(ctx, out->mem, "counts");
    if (st != IMGHIST_OK) {
        return st;
    }
    return dispatch_histogram(ctx, src, &job, out);
}

imghist_status imghist_histogram_batch(imghist_ctx *ctx, const imghist_view *src, size_t count,
                                       const imghist_histspec *spec, const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src == NULL || count == 0 || count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch is NULL, empty or too large (%zu)",
                       count);
    }
    for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
        st = ih_check_view_u8(ctx, &src[i], "batch image");
        if (st != IMGHIST_OK) {
            /* Again, with the image's number in the message: formatting it
             * for every image of a large batch cost more than the launch. */
            char role[48];
            snprintf(role, sizeof role, "batch image %zu", i);
            st = ih_check_view_u8(ctx, &src[i], role);
        } else if (src[i].mem != src[0].mem) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "the batch mixes host and device views (image %zu)", i);
        }
    }
    ih_hist_job job;
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, spec, src[0].dtype, &job);
    if (st == IMGHIST_OK && count > SIZE_MAX / job.bins) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch is too large");
    }
    if (st == IMGHIST_OK) st = ih_check_counts(ctx, out, count * job.bins, "counts");
    if (st == IMGHIST_OK) st = check_memory(ctx, src[0].mem, "images");
    if (st == IMGHIST_OK) st = check_memory(ctx, out->mem, "counts");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src[0].mem == IMGHIST_MEM_DEVICE) {
        return ctx->ops->histogram_batch(ctx, src, count, &job, out); /* one launch */
    }
    /* Host images one by one, each with the fallback of a single call. */
    for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
        imghist_counts one = *out;
        one.data = out->data + i * job.bins;
        one.len = job.bins;
        st = dispatch_histogram(ctx, &src[i], &job, &one);
    }
    return st;
}

/* The bytes a view spans, as an address range. */
static void span(const imghist_view *v, uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)v->data;
    *hi = *lo + (size_t)(v->height - 1) * v->pitch + (size_t)v->width * ih_dtype_size(v->dtype);
}

imghist_status imghist_equalize(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, const imghist_counts *hist)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_view_u8(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_view_u8(ctx, dst, "destination");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (dst->width != src->width || dst->height != src->height) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "destination is %ux%u, source %ux%u",
                       dst->width, dst->height, src->width, src->height);
    }
    if (dst->mem != src->mem) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "source and destination must both be in host or both in device memory");
    }
    uintptr_t s0, s1, d0, d1;
    span(src, &s0, &s1);
    span(dst, &d0, &d1);
    const int in_place = src->data == dst->data && src->pitch == dst->pitch;
    if (!in_place && s0 < d1 && d0 < s1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "source and destination overlap (only the same view is allowed)");
    }
    if (hist != NULL) {
        st = ih_check_counts(ctx, hist, IH_U8_BINS, "histogram counts");
        if (st == IMGHIST_OK) st = check_memory(ctx, hist->mem, "counts");
    }
    if (st == IMGHIST_OK) st = check_memory(ctx, src->mem, "images");
    if (st != IMGHIST_OK) {
        return st;
    }
    st = ctx->ops->equalize(ctx, src, dst, hist);
    if (st == IH_E_GPU_OOM) {
        st = on_cpu_instead(ctx, src->mem == IMGHIST_MEM_HOST &&
                                     (hist == NULL || hist->mem == IMGHIST_MEM_HOST));
        if (st == IMGHIST_OK) {
            st = ctx->fallback->equalize(ctx, src, dst, hist);
        }
    }
    return st;
}
