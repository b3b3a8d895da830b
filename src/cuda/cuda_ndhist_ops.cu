/*
 * The CUDA backend's N-dimensional histograms and colour conversion
 * (core/ndhist.h): device views and counts only, queued on the context's
 * stream. The per-channel cell tables and the colour tables go up with
 * each call into stream-ordered allocations freed behind the kernel, so a
 * call holds no memory after it is queued.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_state.h"
#include "ndhist.cuh"
#include "ndhist.h"

/* Host-built tables uploaded for one call: channel tables, then colours. */
typedef struct nd_upload {
    void *dev;
    int32_t *lut;
    ih_color_tables *tables;
} nd_upload;

static imghist_status upload(imghist_ctx *ctx, const int32_t *lut, size_t lut_entries,
                             bool colours, nd_upload *u)
{
    cudaStream_t stream = ih_cuda(ctx)->stream;
    const size_t lut_bytes = (lut_entries * sizeof(int32_t) + 255) / 256 * 256;
    const size_t bytes = lut_bytes + (colours ? sizeof(ih_color_tables) : 0);
    u->dev = NULL;
    IH_CUDA_TRY(ctx, "allocation", cudaMallocAsync(&u->dev, bytes, stream));
    u->lut = (int32_t *)u->dev;
    u->tables = colours ? (ih_color_tables *)((uint8_t *)u->dev + lut_bytes) : NULL;
    if (lut_entries) {
        IH_CUDA_TRY(ctx, "copy", cudaMemcpyAsync(u->lut, lut, lut_entries * sizeof(int32_t),
                                                 cudaMemcpyHostToDevice, stream));
    }
    if (colours) {
        IH_CUDA_TRY(ctx, "copy", cudaMemcpyAsync(u->tables, ih_color_tables_get(),
                                                 sizeof(ih_color_tables),
                                                 cudaMemcpyHostToDevice, stream));
    }
    return IMGHIST_OK;
}

static imghist_status release(imghist_ctx *ctx, nd_upload *u, imghist_status st)
{
    if (u->dev != NULL) {
        const cudaError_t e = cudaFreeAsync(u->dev, ih_cuda(ctx)->stream);
        if (e != cudaSuccess && st == IMGHIST_OK) {
            return ih_cuda_error(ctx, "free", e);
        }
    }
    return st;
}

/* Whether every channel table t[c] is (v >> shift) * mult (mult 0 for an
 * unread channel): then the kernel needs no tables. */
static int shift_form(const int32_t *t, uint32_t pc, uint32_t *shift, uint32_t *mult)
{
    for (uint32_t c = 0; c < pc; c++) {
        int found = 0;
        for (uint32_t sh = 0; sh <= 8 && !found; sh++) {
            const int32_t m = sh < 8 ? t[c * 256 + (1u << sh)] : 0;
            int ok = m >= 0;
            for (uint32_t v = 0; v < 256 && ok; v++) {
                ok = t[c * 256 + v] == (int32_t)((v >> sh) * (uint32_t)m);
            }
            if (ok) {
                shift[c] = sh < 8 ? sh : 0;
                mult[c] = (uint32_t)m;
                found = 1;
            }
        }
        if (!found) {
            return 0;
        }
    }
    return 1;
}

extern "C" imghist_status ih_cuda_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                              const ih_nd_job *job, const imghist_counts *out)
{
    if (src->dtype != IMGHIST_U8) { /* cuda_backproject_ops.cu: cells found per sample */
        return ih_cuda_histogramdd_wide(ctx, src, job, out);
    }
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t count = src->count > 1 ? src->count : 1;
    if (count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu images: at most 2^32 - 1", count);
    }
    /* The axes' tables folded into one table per channel of the pixel. */
    int32_t axis_lut[IMGHIST_MAX_DIMS * 256];
    int32_t chan_lut[IMGHIST_MAX_CHANNELS * 256];
    ih_nd_luts(job, 256, axis_lut);
    const uint32_t pc = job->sample_channels;
    memset(chan_lut, 0, sizeof chan_lut);
    for (uint32_t d = 0; d < job->dims; d++) {
        for (uint32_t v = 0; v < 256; v++) {
            chan_lut[job->ax[d].channel * 256 + v] += axis_lut[d * 256 + v];
        }
    }
    if (!job->accumulate) {
        IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(out->data, 0,
                                                   count * job->len * sizeof(uint64_t),
                                                   s->stream));
    }
    nd_upload u;
    imghist_status st = upload(ctx, chan_lut, (size_t)pc * 256,
                               job->space != IMGHIST_SPACE_NONE, &u);
    if (st != IMGHIST_OK) {
        return release(ctx, &u, st);
    }
    ih_nd_kjob k;
    memset(&k, 0, sizeof k);
    k.data = (const uint8_t *)src->data;
    k.pitch = src->pitch;
    k.image_stride = src->image_stride;
    k.width = src->width;
    k.height = src->height;
    k.channels = job->channels;
    k.count = (uint32_t)count;
    if (src->mask != NULL) {
        k.mask = (const uint8_t *)src->mask->data;
        k.mask_pitch = src->mask->pitch;
        k.mask_stride = src->mask->count > 1 ? src->mask->image_stride : 0;
    }
    k.dims = job->dims;
    k.lut = u.lut;
    k.space = job->space;
    k.tables = u.tables;
    k.out = (unsigned long long *)out->data;
    k.len = job->len;
    k.cells = (uint32_t)job->cells;
    k.outliers = job->outliers;
    k.shift_ok = shift_form(chan_lut, pc, k.shift, k.mult);
    const cudaError_t e = ih_launch_ndhist(k, s->sm_count, s->stream);
    if (e != cudaSuccess) {
        st = ih_cuda_error(ctx, "N-d histogram kernel", e);
    }
    return release(ctx, &u, st);
}

extern "C" imghist_status ih_cuda_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                            const imghist_view *dst, imghist_space space)
{
    const size_t count = src->count > 1 ? src->count : 1;
    if (count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%zu images: at most 2^32 - 1", count);
    }
    nd_upload u;
    imghist_status st = upload(ctx, NULL, 0, true, &u);
    if (st != IMGHIST_OK) {
        return release(ctx, &u, st);
    }
    const cudaError_t e = ih_launch_cvt_color(
        (const uint8_t *)src->data, src->pitch, src->image_stride, src->channels,
        (uint8_t *)dst->data, dst->pitch, dst->image_stride, src->width, src->height,
        (uint32_t)count, space, u.tables, ih_cuda(ctx)->stream);
    if (e != cudaSuccess) {
        st = ih_cuda_error(ctx, "colour conversion kernel", e);
    }
    return release(ctx, &u, st);
}
