/*
 * The CUDA backend's back-projection, and the N-d histograms of 16-bit and
 * float images that find their cells the same way (core/ndhist.h): device
 * views only, queued on the context's stream. Everything the kernel reads besides the
 * images (the channel tables, the model, the colour tables, float edges)
 * is packed on the host into one buffer and goes up in one copy into a
 * stream-ordered allocation freed behind the kernel: the call holds no
 * memory once queued, and the caller's model may change as soon as it
 * returns (a copy from pageable memory is staged before it returns).
 */
#include <stdlib.h>
#include <string.h>

#include "backproject.cuh"
#include "cuda_state.h"
#include "ndhist.h"

#define BP_ALIGN 256

static size_t bp_round(size_t n)
{
    return (n + BP_ALIGN - 1) / BP_ALIGN * BP_ALIGN;
}

/* Fold the axes' tables (levels entries each) into one table per channel
 * read: k.chan lists the channels, out receives k.nread tables. */
static void fold_tables(const ih_nd_job *job, const int32_t *axis, uint32_t levels,
                        ih_bp_kjob *k, int32_t *out)
{
    k->nread = 0;
    for (uint32_t d = 0; d < job->dims; d++) {
        uint32_t slot = 0;
        while (slot < k->nread && k->chan[slot] != job->ax[d].channel) {
            slot++;
        }
        if (slot == k->nread) {
            k->chan[k->nread++] = job->ax[d].channel;
            memset(out + (size_t)slot * levels, 0, levels * sizeof *out);
        }
        for (uint32_t v = 0; v < levels; v++) {
            out[(size_t)slot * levels + v] += axis[(size_t)d * levels + v];
        }
    }
}

/* The kernel's job for src under job, its tables, model (hist; NULL when
 * counting) and edges packed and sent up in one stream-ordered allocation
 * (*dev: the caller frees it behind the kernel). */
static imghist_status bp_prepare(imghist_ctx *ctx, const imghist_view *src, const ih_nd_job *job,
                                 const float *hist, ih_bp_kjob *kp, void **dev)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t count = src->count > 1 ? src->count : 1;
    ih_bp_kjob &k = *kp;
    memset(&k, 0, sizeof k);
    *dev = NULL;
    uint32_t levels = 0;
    if (job->space != IMGHIST_SPACE_NONE) {
        k.mode = IH_BP_CONVERTED;
        levels = 256;
    } else if (job->dtype == IMGHIST_U8) {
        k.mode = IH_BP_TABLES_U8;
        levels = 256;
    } else if (job->dtype == IMGHIST_U16) {
        k.mode = IH_BP_TABLES_U16;
        levels = 65536;
    } else {
        k.mode = IH_BP_FLOAT;
    }
    /* The packed buffer: tables, model, colour tables, then edges. */
    size_t n_edges = 0;
    if (k.mode == IH_BP_FLOAT) {
        for (uint32_t d = 0; d < job->dims; d++) {
            n_edges += job->ax[d].edges != NULL ? job->ax[d].bins + 1 : 0;
        }
    }
    const size_t lut_bytes = bp_round((size_t)job->dims * levels * sizeof(int32_t));
    const size_t hist_bytes = hist != NULL ? bp_round(job->cells * sizeof(float)) : 0;
    const size_t col_bytes =
        k.mode == IH_BP_CONVERTED ? bp_round(sizeof(ih_color_tables)) : 0;
    const size_t bytes = lut_bytes + hist_bytes + col_bytes + n_edges * sizeof(double);
    uint8_t *host = (uint8_t *)calloc(1, bytes > 0 ? bytes : 1);
    int32_t *axis_lut = levels > 0 ? (int32_t *)malloc((size_t)job->dims * levels * 4) : NULL;
    if (host == NULL || (levels > 0 && axis_lut == NULL)) {
        free(host);
        free(axis_lut);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for the N-d tables");
    }
    if (levels > 0) {
        ih_nd_luts(job, levels, axis_lut);
        fold_tables(job, axis_lut, levels, &k, (int32_t *)host);
        free(axis_lut);
    }
    if (hist != NULL) {
        memcpy(host + lut_bytes, hist, job->cells * sizeof(float));
    }
    if (col_bytes > 0) {
        memcpy(host + lut_bytes + hist_bytes, ih_color_tables_get(), sizeof(ih_color_tables));
    }
    const size_t edges_at = lut_bytes + hist_bytes + col_bytes;
    size_t edge = 0;
    for (uint32_t d = 0; k.mode == IH_BP_FLOAT && d < job->dims; d++) {
        if (job->ax[d].edges != NULL) {
            memcpy((double *)(void *)(host + edges_at) + edge, job->ax[d].edges,
                   (job->ax[d].bins + 1) * sizeof(double));
            edge += job->ax[d].bins + 1;
        }
    }
    cudaError_t e = bytes > 0 ? cudaMallocAsync(dev, bytes, s->stream) : cudaSuccess;
    if (e == cudaSuccess && bytes > 0) {
        e = cudaMemcpyAsync(*dev, host, bytes, cudaMemcpyHostToDevice, s->stream);
    }
    free(host);
    if (e != cudaSuccess) {
        if (*dev != NULL) {
            (void)cudaFreeAsync(*dev, s->stream);
            *dev = NULL;
        }
        return ih_cuda_error(ctx, "N-d tables' upload", e);
    }
    uint8_t *d8 = (uint8_t *)*dev;
    k.lut = levels > 0 ? (const int32_t *)d8 : NULL;
    k.hist = hist != NULL ? (const float *)(d8 + lut_bytes) : NULL;
    k.tables = col_bytes > 0 ? (const ih_color_tables *)(d8 + lut_bytes + hist_bytes) : NULL;
    k.dims = job->dims;
    edge = 0;
    for (uint32_t d = 0; d < job->dims; d++) {
        const ih_nd_axis *a = &job->ax[d];
        ih_bp_axis *b = &k.ax[d];
        b->bin = a->bin;
        b->bins = a->bins;
        b->channel = a->channel;
        b->stride = (uint32_t)a->stride;
        b->closed = a->closed;
        b->opencv = a->opencv;
        b->lo = a->lo;
        b->hi = a->hi;
        b->t = a->t;
        b->u = a->u;
        if (k.mode == IH_BP_FLOAT && a->edges != NULL) {
            b->edges = (const double *)(d8 + edges_at) + edge;
            edge += a->bins + 1;
        }
    }
    k.src = (const uint8_t *)src->data;
    k.pitch = src->pitch;
    k.image_stride = src->image_stride;
    k.width = src->width;
    k.height = src->height;
    k.channels = job->channels;
    k.count = (uint32_t)count;
    k.space = job->space;
    k.cells = (uint32_t)job->cells;
    return IMGHIST_OK;
}

/* st, or the error of freeing dev behind the kernel. */
static imghist_status bp_release(imghist_ctx *ctx, void *dev, imghist_status st)
{
    if (dev != NULL) {
        const cudaError_t e = cudaFreeAsync(dev, ih_cuda(ctx)->stream);
        if (e != cudaSuccess && st == IMGHIST_OK) {
            return ih_cuda_error(ctx, "free", e);
        }
    }
    return st;
}

extern "C" imghist_status ih_cuda_backproject(imghist_ctx *ctx, const imghist_view *src,
                                              const ih_nd_job *job, const float *hist,
                                              float scale, const imghist_view *dst)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t count = src->count > 1 ? src->count : 1;
    if (count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu images: at most 2^32 - 1", count);
    }
    ih_bp_kjob k;
    void *dev = NULL;
    imghist_status st = bp_prepare(ctx, src, job, hist, &k, &dev);
    if (st != IMGHIST_OK) {
        return st;
    }
    k.dst = (uint8_t *)dst->data;
    k.dst_pitch = dst->pitch;
    k.dst_stride = dst->image_stride;
    k.scale = scale;
    const cudaError_t e = ih_launch_backproject(k, s->sm_count, s->stream);
    if (e != cudaSuccess) {
        st = ih_cuda_error(ctx, "back-projection kernel", e);
    }
    return bp_release(ctx, dev, st);
}

extern "C" imghist_status ih_cuda_histogramdd_wide(imghist_ctx *ctx, const imghist_view *src,
                                                   const ih_nd_job *job,
                                                   const imghist_counts *out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t count = src->count > 1 ? src->count : 1;
    if (count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu images: at most 2^32 - 1", count);
    }
    if (!job->accumulate) {
        IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(out->data, 0,
                                                   count * job->len * sizeof(uint64_t),
                                                   s->stream));
    }
    ih_bp_kjob k;
    void *dev = NULL;
    imghist_status st = bp_prepare(ctx, src, job, NULL, &k, &dev);
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_bp_count c;
    memset(&c, 0, sizeof c);
    if (src->mask != NULL) {
        c.mask = (const uint8_t *)src->mask->data;
        c.mask_pitch = src->mask->pitch;
        c.mask_stride = src->mask->count > 1 ? src->mask->image_stride : 0;
    }
    c.out = (unsigned long long *)out->data;
    c.len = job->len;
    c.outliers = job->outliers;
    const cudaError_t e = ih_launch_nd_count(k, c, s->sm_count, s->stream);
    if (e != cudaSuccess) {
        st = ih_cuda_error(ctx, "N-d histogram kernel", e);
    }
    return bp_release(ctx, dev, st);
}
