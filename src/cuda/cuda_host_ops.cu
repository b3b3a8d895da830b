/*
 * The CUDA backend on host images. An image goes through a staging buffer on
 * the GPU: the whole image when GPU memory allows (and IMGHIST_P_STAGING_BYTES
 * does not cap it), else as many whole rows as fit, band after band (the
 * kernels accumulate across bands, so the result is the same). Work is queued
 * on the context's stream like any other; these calls synchronise it before
 * they return, since the caller's memory is read and written.
 */
#include <string.h>

#include "bands.h"
#include "cuda_state.h"

imghist_status ih_cuda_grow_staging(imghist_ctx *ctx, void **buf, size_t *bytes, size_t want,
                                    size_t least)
{
    if (*bytes >= want) {
        return IMGHIST_OK;
    }
    const cudaError_t freed = cudaFree(*buf);
    *buf = NULL;
    *bytes = 0;
    IH_CUDA_TRY(ctx, "free", freed);
    for (size_t try_bytes = want; try_bytes >= least && try_bytes > 0; try_bytes /= 2) {
        const cudaError_t e = cudaMalloc(buf, try_bytes);
        if (e == cudaSuccess) {
            *bytes = try_bytes;
            return IMGHIST_OK;
        }
        *buf = NULL;
        if (e != cudaErrorMemoryAllocation) {
            return ih_cuda_error(ctx, "staging allocation", e);
        }
        (void)cudaGetLastError(); /* out of memory is not sticky */
    }
    return IMGHIST_OK; /* *bytes < least: the caller says IH_E_GPU_OOM */
}
#include "hist_u8.cuh"

/*
 * Make room for `band` rows of width bytes, as many as fit up to the whole
 * image. Returns IH_E_GPU_OOM when not even one row fits (the core then runs
 * the call on the CPU). Any failure other than running out of memory (a GPU
 * fault left by an earlier kernel, say) is an error.
 */
static imghist_status reserve_staging(imghist_ctx *ctx, uint32_t width, uint32_t height,
                                      uint32_t *band)
{
    ih_cuda_state *s = ih_cuda(ctx);
    size_t want = (size_t)width * height;
    const int64_t cap = ctx->params.staging_bytes;
    if (cap > 0 && (uint64_t)cap < want) {
        want = (size_t)cap;
    }
    if (want < width) {
        want = width; /* one row at least */
    }
    const imghist_status grown =
        ih_cuda_grow_staging(ctx, (void **)&s->staging, &s->staging_bytes, want, width);
    if (grown != IMGHIST_OK) {
        return grown;
    }
    if (s->staging_bytes < width) {
        return IH_E_GPU_OOM;
    }
    const size_t usable = s->staging_bytes < want ? s->staging_bytes : want;
    const size_t rows = usable / width;
    *band = (uint32_t)(rows < height ? rows : height);
    if (*band < height) {
        ih_note(ctx, "the image does not fit in GPU memory: processed in %u bands of %u rows",
                (height + *band - 1) / *band, *band);
    }
    return IMGHIST_OK;
}

/* Copy rows [row0, row0 + rows) of a host image into the staging buffer. */
static imghist_status upload_band(imghist_ctx *ctx, const imghist_view *src, const ih_bands *b,
                                  ih_dev_image *staged)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const imghist_status st =
        ih_cuda_upload_2d(ctx, "upload", s->staging, src->width,
                          (const uint8_t *)src->data + (size_t)b->row0 * src->pitch, src->pitch,
                          src->width, b->rows);
    if (st != IMGHIST_OK) {
        return st;
    }
    staged->data = s->staging;
    staged->pitch = src->width;
    staged->width = src->width;
    staged->height = b->rows;
    return IMGHIST_OK;
}

/*
 * Pass 1 of every host call: the image, band by band, through the staging
 * buffer into the histogram kernel; target (device) gets the counts and
 * lut_out (NULL or device) the LUT. A single band stays in staged for pass 2.
 */
static imghist_status count_host_image(imghist_ctx *ctx, const imghist_view *src, uint32_t band,
                                       unsigned long long *target, int accumulate,
                                       unsigned char *lut_out, ih_dev_image *staged)
{
    IH_FOR_EACH_BAND(b, src->height, band) {
        imghist_status st = upload_band(ctx, src, &b, staged);
        if (st == IMGHIST_OK) {
            st = ih_cuda_count(ctx, staged, target, accumulate, lut_out, ih_bands_last(&b));
        }
        if (st != IMGHIST_OK) {
            if (b.row0 > 0) {
                /* Earlier bands left their counts in the workspace, which the
                 * next call expects zero (only the last band's launch clears it). */
                ih_cuda_state *s = ih_cuda(ctx);
                (void)cudaMemsetAsync(s->workspace, 0,
                                      IH_WS_COPIES * 256 * sizeof(unsigned long long), s->stream);
            }
            return st;
        }
    }
    return IMGHIST_OK;
}

/* Wait for the stream; a failure there is the call's failure. */
static imghist_status finish(imghist_ctx *ctx, imghist_status st)
{
    const cudaError_t e = cudaStreamSynchronize(ih_cuda(ctx)->stream);
    if (e != cudaSuccess) {
        const imghist_status sync_st = ih_cuda_error(ctx, "synchronize", e);
        return st == IMGHIST_OK || sync_st == IMGHIST_E_FAULTED ? sync_st : st;
    }
    return st;
}

/* The start of every host call: staging reserved; counts on the device take
 * the results directly (*target), others go through the context's buffer. */
static imghist_status begin_host_call(imghist_ctx *ctx, const imghist_view *src,
                                      const imghist_counts *counts, uint32_t *band,
                                      unsigned long long **target)
{
    const int to_device = counts != NULL && counts->mem == IMGHIST_MEM_DEVICE;
    *target = to_device ? (unsigned long long *)counts->data : ih_cuda(ctx)->hist;
    return reserve_staging(ctx, src->width, src->height, band);
}

/* Copy the context's 256 counts to host memory (once the stream gets there). */
static imghist_status download_counts(imghist_ctx *ctx, uint64_t *host)
{
    return ih_cuda_download(ctx, "download", host, ih_cuda(ctx)->hist, 256 * sizeof(uint64_t));
}

imghist_status ih_cuda_hist_host(imghist_ctx *ctx, const imghist_view *src,
                                 const ih_hist_job *job, const imghist_counts *out)
{
    uint32_t band = 0;
    unsigned long long *target;
    imghist_status st = begin_host_call(ctx, src, out, &band, &target);
    if (st != IMGHIST_OK) {
        return st;
    }
    const int to_device = out->mem == IMGHIST_MEM_DEVICE;
    ih_dev_image staged;
    st = count_host_image(ctx, src, band, target, to_device && job->accumulate, NULL, &staged);
    uint64_t hist[256];
    if (st == IMGHIST_OK && !to_device) {
        st = download_counts(ctx, hist);
    }
    st = finish(ctx, st);
    if (st == IMGHIST_OK && !to_device) {
        ih_store_counts(out->data, hist, 256, job->accumulate);
    }
    return st;
}

imghist_status ih_cuda_equalize_host(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *dst, const imghist_counts *hist)
{
    ih_cuda_state *s = ih_cuda(ctx);
    uint32_t band = 0;
    unsigned long long *target;
    imghist_status st = begin_host_call(ctx, src, hist, &band, &target);
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_dev_image staged;
    st = count_host_image(ctx, src, band, target, 0, s->lut, &staged);
    /* Pass 2: look up in place in the staging buffer, band by band, and copy out. */
    if (st == IMGHIST_OK) {
        IH_FOR_EACH_BAND(b, src->height, band) {
            if (band < src->height) {
                st = upload_band(ctx, src, &b, &staged);
            }
            if (st == IMGHIST_OK) {
                st = ih_cuda_apply(ctx, &staged, s->staging, src->width);
            }
            if (st == IMGHIST_OK) {
                st = ih_cuda_download_2d(ctx, "download",
                                         (uint8_t *)dst->data + (size_t)b.row0 * dst->pitch,
                                         dst->pitch, s->staging, src->width, src->width, b.rows);
            }
            if (st != IMGHIST_OK) {
                break;
            }
        }
    }
    if (st == IMGHIST_OK && hist != NULL && hist->mem == IMGHIST_MEM_HOST) {
        st = download_counts(ctx, hist->data);
    }
    return finish(ctx, st);
}
