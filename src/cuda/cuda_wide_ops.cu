/*
 * The CUDA backend's histograms beyond the 8-bit path (U16, F32, other bins,
 * channels, masks, outliers) and imghist_range, on device or host views
 * (kernels/hist_wide.cu). Device views with device counts only queue work on
 * the context's stream and allocate nothing; host counts are copied back and
 * the stream synchronised; host views go through a staging buffer on the GPU,
 * whole or in bands of rows, the counts adding up on the GPU across bands.
 */
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "cuda_state.h"
#include "equalize_wide.cuh"
#include "hist_wide.cuh"

static ih_wide_band band_of(const imghist_view *src, const imghist_view *mask)
{
    ih_wide_band b;
    b.base = (const uint8_t *)src->data;
    b.pitch = src->pitch;
    b.width = src->width;
    b.rows = src->height;
    b.mask = mask != NULL ? (const uint8_t *)mask->data : NULL;
    b.mask_pitch = mask != NULL ? mask->pitch : 0;
    return b;
}

/* Whether a job and image of w x h samples take ih_launch_hist16_batch:
 * 16-bit samples, one channel, into their natural 65536 bins, up to `most`
 * samples (IH_HIST16_GLOBAL_MAX). */
static bool hist16_global(const ih_hist_job &job, uint64_t w, uint64_t h,
                          uint64_t most = IH_HIST16_GLOBAL_MAX)
{
    return job.dtype == IMGHIST_U16 && job.channels == 1 && job.natural && !job.outliers &&
           w * h <= most;
}

/* One band's counts added into target (zeroed by the caller for fresh
 * counts); plan: the job's, or NULL to make it here. */
static imghist_status launch(imghist_ctx *ctx, const ih_wide_band &band, const ih_hist_job *job,
                             unsigned long long *target, const ih_wide_plan_t *plan = NULL)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (hist16_global(*job, band.width, band.rows)) {
        IH_CUDA_TRY(ctx, "histogram launch",
                    ih_launch_hist16_batch(band.base, 0, band.pitch, band.mask, 0, band.mask_pitch,
                                           band.width, band.rows, target, 1, NULL, s->sm_count,
                                           s->stream));
        return IMGHIST_OK;
    }
    ih_wide_plan_t own;
    if (plan == NULL) {
        IH_CUDA_TRY(ctx, "histogram planning",
                    ih_wide_plan(job, s->sm_count, (int)ctx->params.hist_blocks_per_sm, &own));
        plan = &own;
    }
    IH_CUDA_TRY(ctx, "histogram launch", ih_wide_launch(band, *job, *plan, target, s->stream));
    return IMGHIST_OK;
}

imghist_status ih_cuda_hist_wide_dev(imghist_ctx *ctx, const imghist_view *src_dev,
                                     const imghist_view *mask_dev, const ih_hist_job *job,
                                     unsigned long long *dev_counts, int accumulate)
{
    if (!accumulate) {
        IH_CUDA_TRY(ctx, "memset",
                    cudaMemsetAsync(dev_counts, 0, job->len * sizeof(uint64_t),
                                    ih_cuda(ctx)->stream));
    }
    return launch(ctx, band_of(src_dev, mask_dev), job, dev_counts);
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

/* Room for n counters bound for host memory. Host-count calls synchronise
 * anyway, so a plain (synchronous) allocation is fine. `oom`: the status for
 * running out of memory (IH_E_GPU_OOM where the CPU can take the call). */
static imghist_status reserve_counts(imghist_ctx *ctx, size_t n, imghist_status oom)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (s->wide_counts_cap >= n) {
        return IMGHIST_OK;
    }
    const cudaError_t freed = cudaFree(s->wide_counts);
    s->wide_counts = NULL;
    s->wide_counts_cap = 0;
    IH_CUDA_TRY(ctx, "free", freed);
    const cudaError_t e = cudaMalloc((void **)&s->wide_counts, n * sizeof(uint64_t));
    if (e == cudaErrorMemoryAllocation && oom == IH_E_GPU_OOM) {
        (void)cudaGetLastError();
        s->wide_counts = NULL;
        return IH_E_GPU_OOM;
    }
    if (e != cudaSuccess) {
        s->wide_counts = NULL;
        return ih_cuda_error(ctx, "counter allocation", e);
    }
    s->wide_counts_cap = n;
    return IMGHIST_OK;
}

/* Where the kernels write n counters: device counts directly, else the
 * context's buffer; zeroed first with `zero` (which a launch that writes
 * its counters itself need not ask for). */
static imghist_status counts_target(imghist_ctx *ctx, size_t n, int zero,
                                    const imghist_counts *out, imghist_status oom,
                                    unsigned long long **target)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (out->mem == IMGHIST_MEM_DEVICE) {
        *target = (unsigned long long *)out->data;
    } else {
        const imghist_status st = reserve_counts(ctx, n, oom);
        if (st != IMGHIST_OK) {
            return st;
        }
        *target = s->wide_counts;
    }
    if (zero) {
        IH_CUDA_TRY(ctx, "memset",
                    cudaMemsetAsync(*target, 0, n * sizeof(uint64_t), s->stream));
    }
    return IMGHIST_OK;
}

/* Host counts: copy the n device counts back (added to out with accumulate)
 * and synchronise. Device counts: nothing (and no synchronisation). */
static imghist_status deliver(imghist_ctx *ctx, size_t n, int accumulate,
                              const imghist_counts *out, imghist_status st, int sync_anyway)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (out->mem == IMGHIST_MEM_DEVICE) {
        return sync_anyway ? finish(ctx, st) : st;
    }
    uint64_t *tmp = NULL;
    if (st == IMGHIST_OK && accumulate) {
        tmp = (uint64_t *)malloc(n * sizeof *tmp);
        if (tmp == NULL) {
            st = ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu counters", n);
        }
    }
    if (st == IMGHIST_OK) {
        st = ih_cuda_download(ctx, "result copy", tmp != NULL ? tmp : out->data, s->wide_counts,
                              n * sizeof(uint64_t));
    }
    st = finish(ctx, st);
    if (st == IMGHIST_OK && tmp != NULL) {
        ih_store_counts(out->data, tmp, n, 1);
    }
    free(tmp);
    return st;
}

/* ---- host views: staging ---- */

static size_t round16(size_t n)
{
    return (n + 15) / 16 * 16;
}

/* The bytes a staged row takes: packed, so that a band is one flat run for
 * the lean kernels (an RGB row's 3 x width bytes are seldom a multiple of
 * 16, and rows padded to 16 went to the general walk). A mask's rows follow
 * the band's, packed too, from the next 16-byte boundary (STAGING_SLACK
 * bytes more), so that one channel with a mask takes the lean masked walk. */
static size_t staging_pitch(const imghist_view *src)
{
    return (size_t)src->width * (src->channels > 1 ? src->channels : 1) *
           ih_dtype_size(src->dtype);
}

enum { STAGING_SLACK = 16 };

/* The staged bytes a row of source and mask takes, and the slack a band
 * needs beyond its rows. */
static size_t staging_row(const imghist_view *src, const imghist_view *mask, size_t *slack)
{
    *slack = mask != NULL ? STAGING_SLACK : 0;
    return staging_pitch(src) + (mask != NULL ? src->width : 0);
}

/* Make room for as many rows of source (and mask) as fit, up to the whole
 * image and IMGHIST_P_STAGING_BYTES, with `slack` bytes more; IH_E_GPU_OOM
 * when not one row fits. */
static imghist_status reserve_staging(imghist_ctx *ctx, size_t row_bytes, size_t slack,
                                      uint32_t height, uint32_t *band)
{
    ih_cuda_state *s = ih_cuda(ctx);
    size_t want = row_bytes * height + slack;
    const int64_t cap = ctx->params.staging_bytes;
    if (cap > 0 && (uint64_t)cap < want) {
        want = (size_t)cap;
    }
    want = want < row_bytes + slack ? row_bytes + slack : want;
    const imghist_status grown = ih_cuda_grow_staging(ctx, (void **)&s->wide_staging,
                                                       &s->wide_staging_bytes, want,
                                                       row_bytes + slack);
    if (grown != IMGHIST_OK) {
        return grown;
    }
    if (s->wide_staging_bytes < row_bytes + slack) {
        return IH_E_GPU_OOM;
    }
    const size_t usable = s->wide_staging_bytes < want ? s->wide_staging_bytes : want;
    const size_t rows = (usable - slack) / row_bytes;
    *band = (uint32_t)(rows < height ? rows : height);
    if (*band < height) {
        ih_note(ctx, "the image does not fit in GPU memory: processed in %u bands of %u rows",
                (height + *band - 1) / *band, *band);
    }
    return IMGHIST_OK;
}

/* Rows b of a host source (and mask) into the staging buffer, as a band. */
static imghist_status upload_band(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *mask, const ih_bands *b, size_t spitch,
                                  ih_wide_band *out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t row_bytes = (size_t)src->width * (src->channels > 1 ? src->channels : 1) *
                             ih_dtype_size(src->dtype);
    imghist_status st =
        ih_cuda_upload_2d(ctx, "upload", s->wide_staging, spitch,
                          (const uint8_t *)src->data + (size_t)b->row0 * src->pitch, src->pitch,
                          row_bytes, b->rows);
    if (st != IMGHIST_OK) {
        return st;
    }
    out->base = s->wide_staging;
    out->pitch = spitch;
    out->width = src->width;
    out->rows = b->rows;
    out->mask = NULL;
    out->mask_pitch = 0;
    if (mask != NULL) {
        uint8_t *m = s->wide_staging + round16((size_t)b->rows * spitch);
        const size_t mpitch = src->width;
        st = ih_cuda_upload_2d(ctx, "mask upload", m, mpitch,
                               (const uint8_t *)mask->data + (size_t)b->row0 * mask->pitch,
                               mask->pitch, src->width, b->rows);
        if (st != IMGHIST_OK) {
            return st;
        }
        out->mask = m;
        out->mask_pitch = mpitch;
    }
    return IMGHIST_OK;
}

/* Walk a host view through the staging buffer; each band goes to fn. */
template <class Fn>
static imghist_status over_host_bands(imghist_ctx *ctx, const imghist_view *src,
                                      const imghist_view *mask, Fn fn)
{
    const size_t spitch = staging_pitch(src);
    size_t slack = 0;
    const size_t per_row = staging_row(src, mask, &slack);
    uint32_t band = 0;
    imghist_status st = reserve_staging(ctx, per_row, slack, src->height, &band);
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_FOR_EACH_BAND(b, src->height, band) {
        ih_wide_band staged;
        st = upload_band(ctx, src, mask, &b, spitch, &staged);
        if (st == IMGHIST_OK) st = fn(staged);
        if (st != IMGHIST_OK) {
            return st;
        }
        /* The next upload overwrites what this band's kernel reads: the
         * stream orders them. */
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_hist_wide(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *mask, const ih_hist_job *job,
                                 const imghist_counts *out)
{
    const int host_src = src->mem == IMGHIST_MEM_HOST;
    const imghist_status oom =
        host_src && out->mem == IMGHIST_MEM_HOST ? IH_E_GPU_OOM : IMGHIST_E_CUDA;
    unsigned long long *target = NULL;
    if (host_src) {
        /* Staging first: its OOM answer comes before anything is queued. */
        size_t slack = 0;
        const size_t per_row = staging_row(src, mask, &slack);
        uint32_t band = 0;
        imghist_status st = reserve_staging(ctx, per_row, slack, src->height, &band);
        if (st == IH_E_GPU_OOM && oom != IH_E_GPU_OOM) {
            st = ih_fail(ctx, IMGHIST_E_CUDA, "GPU out of memory for staging the image");
        }
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    imghist_status st = counts_target(
        ctx, job->len, out->mem == IMGHIST_MEM_HOST || !job->accumulate, out, oom, &target);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (!host_src) {
        st = launch(ctx, band_of(src, mask), job, target);
    } else {
        st = over_host_bands(ctx, src, mask,
                             [&](const ih_wide_band &b) { return launch(ctx, b, job, target); });
    }
    return deliver(ctx, job->len, job->accumulate, out, st, host_src);
}

/* Whether count mask views are of one shape, each a fixed number of bytes
 * (*stride, any, 0 too) after the one before. */
static bool uniform_masks(const imghist_view *m, size_t count, long long *stride)
{
    const uintptr_t m0 = (uintptr_t)m[0].data;
    const uintptr_t ms = count > 1 ? (uintptr_t)m[1].data - m0 : 0;
    uintptr_t at = m0;
    for (size_t i = 0; i < count; i++, at += ms) {
        if ((uintptr_t)m[i].data != at || m[i].pitch != m[0].pitch) {
            return false; /* the sizes are the images' (checked) */
        }
    }
    *stride = (long long)(intptr_t)ms;
    return true;
}

/* Whether count views of one shape (masks NULL or one a view, of one
 * pitch) lie anywhere, each with view 0's 16-byte phase (ih_views_one_shape):
 * the batch kernels then take each image's rows from an array of pointers.
 * *mask_phase: 0 where every mask keeps mask 0's phase in units of `unit`
 * bytes (the flat masked walk's need), else 1 (ih_wide_batchable's mask
 * stride rule). */
static bool one_shape(const imghist_ctx *ctx, const imghist_view *v, const imghist_view *m,
                      size_t count, size_t unit, long long *mask_phase)
{
    if (!ih_list_one_shape(ctx, v, m, count, false)) {
        return false;
    }
    const uintptr_t m0 = m != NULL ? (uintptr_t)m[0].data : 0;
    bool in_step = true;
    for (size_t i = 0; m != NULL && i < count; i++) {
        in_step = in_step && ((uintptr_t)m[i].data - m0) % unit == 0;
    }
    *mask_phase = in_step ? 0 : 1;
    return true;
}

/*
 * A batch of device images, as views (views != NULL, masks NULL or one a
 * view) or as count images of first's shape `stride` bytes apart (mask NULL
 * or count masks of its shape mask_stride bytes apart): one launch for a
 * tensor whose kernels take batches (ih_wide_batchable), or for views of
 * one shape anywhere (one_shape: their pointers uploaded), else a launch per
 * image; one target for all their counts either way, and one copy back for
 * host counts.
 */
static imghist_status wide_batch(imghist_ctx *ctx, const imghist_view *views,
                                 const imghist_view *masks, const imghist_view *first,
                                 const imghist_view *mask, size_t count, long long stride,
                                 long long mask_stride, const ih_hist_job *job_in,
                                 const imghist_counts *out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_hist_job job = *job_in;
    if (out->mem == IMGHIST_MEM_HOST) {
        job.accumulate = 0; /* the kernels fill the context's buffer; deliver adds */
    }
    const size_t n = count * job.len;
    ih_wide_plan_t plan;
    IH_CUDA_TRY(ctx, "histogram planning",
                ih_wide_plan(&job, s->sm_count, (int)ctx->params.hist_blocks_per_sm, &plan));
    bool tensor = views == NULL, scattered = false;
    if (!tensor) {
        tensor = ih_list_uniform(ctx, views, NULL, count, &stride, NULL) &&
                 (masks == NULL || uniform_masks(masks, count, &mask_stride));
        if (!tensor && one_shape(ctx, views, masks, count, 16 / ih_dtype_size(job.dtype),
                                 &mask_stride)) {
            scattered = true;
            stride = 0;
        }
        first = &views[0];
        mask = masks;
    }
    const ih_wide_band band = band_of(first, mask);
    /* 16-bit images into 65536 bins each: the batch kernels' 16-bit pairs,
     * a few blocks an image, where they take the tensor (faster than the
     * global atomics at every size bench_wide measures); else, up to 2^20
     * samples an image, one launch of global atomics rather than a launch
     * per image below, whose fixed cost dwarfs a small image's counting;
     * views of one shape anywhere as the tensor, by their pointers.
     * IMGHIST_P_EXP_HIST16_GLOBAL > 0 puts the global atomics first up to
     * that many samples; -1: never as one launch. */
    const int64_t knob = ctx->params.hist16_global;
    const bool fits16 = (tensor || scattered) && knob >= 0 &&
                        hist16_global(job, first->width, first->height,
                                      knob > 0 ? (uint64_t)knob : IH_HIST16_GLOBAL_MAX);
    const bool one = (tensor || scattered) && !(fits16 && knob > 0) &&
                     ih_wide_batchable(band, job, plan, stride, mask_stride);
    const bool global16 = !one && fits16;
    unsigned long long *target = NULL;
    /* One launch zeroes what it needs itself. */
    imghist_status st = counts_target(ctx, n, !one && !job.accumulate, out, IMGHIST_E_CUDA, &target);
    if (st != IMGHIST_OK) {
        return st;
    }
    ctx->batch_route = one || global16 ? IH_ROUTE_BATCH : IH_ROUTE_EACH;
    const unsigned long long *ptrs = NULL;
    if ((one || global16) && scattered) {
        /* image i's first row, then its mask's (0 for none) */
        st = ih_desc_pointers(ctx, &s->wide_desc, views, masks, count, &ptrs);
        if (st != IMGHIST_OK) {
            return deliver(ctx, n, job_in->accumulate, out, st, 0);
        }
    }
    if (global16) {
        const cudaError_t e = ih_launch_hist16_batch(
            (const uint8_t *)first->data, (ptrdiff_t)stride, first->pitch,
            mask != NULL ? (const uint8_t *)mask->data : NULL, (ptrdiff_t)mask_stride,
            mask != NULL ? mask->pitch : 0, first->width, first->height, target,
            (uint32_t)count, ptrs, s->sm_count, s->stream);
        st = e == cudaSuccess ? IMGHIST_OK : ih_cuda_error(ctx, "histogram launch", e);
        return deliver(ctx, n, job_in->accumulate, out, st, 0);
    }
    if (one) {
        const cudaError_t e = ih_wide_launch_batch(band, count, stride, mask_stride, job, plan,
                                                   ih_tiny_limit(ctx), target, s->stream, ptrs);
        st = e == cudaSuccess ? st : ih_cuda_error(ctx, "histogram launch", e);
    }
    for (size_t i = 0; !one && i < count && st == IMGHIST_OK; i++) {
        ih_wide_band b = band;
        if (views != NULL) {
            b = band_of(&views[i], masks != NULL ? &masks[i] : NULL);
        } else {
            b.base = (const uint8_t *)((uintptr_t)first->data + (uintptr_t)i * (uintptr_t)stride);
            if (mask != NULL) {
                b.mask = (const uint8_t *)((uintptr_t)mask->data +
                                           (uintptr_t)i * (uintptr_t)mask_stride);
            }
        }
        st = launch(ctx, b, &job, target + i * job.len, &plan);
    }
    return deliver(ctx, n, job_in->accumulate, out, st, 0);
}

imghist_status ih_cuda_hist_wide_batch(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *masks, size_t count,
                                       const ih_hist_job *job, const imghist_counts *out)
{
    return wide_batch(ctx, src, masks, NULL, NULL, count, 0, 0, job, out);
}

imghist_status ih_cuda_hist_wide_strided(imghist_ctx *ctx, const imghist_view *first,
                                         const imghist_view *mask, size_t count, ptrdiff_t stride,
                                         ptrdiff_t mask_stride, const ih_hist_job *job,
                                         const imghist_counts *out)
{
    return wide_batch(ctx, NULL, NULL, first, mask, count, (long long)stride,
                      (long long)mask_stride, job, out);
}

imghist_status ih_cuda_range(imghist_ctx *ctx, const imghist_view *src, const imghist_view *mask,
                             double *lo, double *hi, int *found)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (s->range_keys == NULL) {
        IH_CUDA_TRY(ctx, "allocation", cudaMalloc((void **)&s->range_keys, 2 * sizeof(unsigned)));
    }
    IH_CUDA_TRY(ctx, "range launch", ih_wide_range_init(s->range_keys, s->stream));
    const uint32_t ch = src->channels > 1 ? src->channels : 1;
    imghist_status st;
    auto run = [&](const ih_wide_band &b) -> imghist_status {
        IH_CUDA_TRY(ctx, "range launch",
                    ih_wide_range_launch(b, src->dtype, ch, s->range_keys, s->sm_count, s->stream));
        return IMGHIST_OK;
    };
    if (src->mem == IMGHIST_MEM_DEVICE) {
        st = run(band_of(src, mask));
    } else {
        st = over_host_bands(ctx, src, mask, run);
        if (st == IH_E_GPU_OOM) {
            return st;
        }
    }
    unsigned int keys[2] = {0xffffffffu, 0};
    if (st == IMGHIST_OK) {
        const cudaError_t e = cudaMemcpyAsync(keys, s->range_keys, sizeof keys,
                                              cudaMemcpyDeviceToHost, s->stream);
        if (e != cudaSuccess) {
            st = ih_cuda_error(ctx, "result copy", e);
        }
    }
    st = finish(ctx, st);
    if (st == IMGHIST_OK) {
        *found = ih_wide_range_decode(keys, lo, hi);
    }
    return st;
}
