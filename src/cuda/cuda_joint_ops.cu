/*
 * The CUDA backend's joint histograms, mutual information, and the
 * equalizations beyond the 8-bit path (16-bit, and masked 8- or 16-bit).
 *
 * Device views only queue work on the context's stream; their buffers are
 * grow-only workspaces of the context (allocated on the stream, so growing
 * one does not synchronise either). Host views go through a staging buffer
 * of this file, whole or in bands of rows, and synchronise the stream before
 * they return.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "cuda_state.h"
#include "equalize_wide.cuh"
#include "joint.cuh"

/* The fixed part of the workspace: a 16-bit histogram, a 16-bit LUT, the
 * empty-mask flag and mutual-information results bound for host memory. */
#define AUX_HIST 0
#define AUX_LUT16 (AUX_HIST + IH_U16_LEVELS * sizeof(uint64_t))
#define AUX_FLAG (AUX_LUT16 + IH_U16_LEVELS * sizeof(uint16_t))
#define AUX_RESULT (AUX_FLAG + 256)
#define AUX_LUT_SCRATCH (AUX_RESULT + 256)
#define AUX_BYTES (AUX_LUT_SCRATCH + IH_LUT16_SCRATCH_BYTES)

struct ih_joint_state {
    uint8_t *aux;           /* AUX_BYTES */
    void *counts;           /* counters bound for host memory, joints uploaded */
    size_t counts_cap;      /* bytes */
    void *mi_ws;            /* kernels/joint.cuh's MI workspace, zero between launches */
    size_t mi_ws_cap;
    uint8_t *staging;       /* host images: a, b and mask rows, whole or in bands */
    size_t staging_bytes;
    void *eq_counts;        /* equalize_strided_each: a chunk's histograms */
    size_t eq_counts_cap;
    void *eq_luts;          /* its LUTs, then the 16-bit LUTs' scratch */
    size_t eq_luts_cap;
    ih_desc_cache eq_desc;  /* equalize_views_each: a chunk's source and destination pointers */
    ih_desc_cache eq16_desc; /* equalize16_small_views: the images' ih_eq16_view */
};

void ih_cuda_joint_close(ih_cuda_state *s)
{
    ih_joint_state *j = s->joint;
    if (j == NULL) {
        return;
    }
    cudaFree(j->aux);
    cudaFree(j->counts);
    cudaFree(j->mi_ws);
    cudaFree(j->staging);
    cudaFree(j->eq_counts);
    cudaFree(j->eq_luts);
    ih_desc_close(&j->eq_desc);
    ih_desc_close(&j->eq16_desc);
    free(j);
    s->joint = NULL;
}

static imghist_status joint_state(imghist_ctx *ctx, ih_joint_state **out)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (s->joint == NULL) {
        s->joint = (ih_joint_state *)calloc(1, sizeof(ih_joint_state));
        if (s->joint == NULL) {
            return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
        }
    }
    ih_joint_state *j = s->joint;
    if (j->aux == NULL) {
        IH_CUDA_TRY(ctx, "allocation", cudaMallocAsync((void **)&j->aux, AUX_BYTES, s->stream));
    }
    *out = j;
    return IMGHIST_OK;
}

/* Grow a stream-ordered buffer to `need` bytes; new memory zeroed when asked. */
static imghist_status grow(imghist_ctx *ctx, void **buf, size_t *cap, size_t need, int zero)
{
    if (need <= *cap) {
        return IMGHIST_OK;
    }
    cudaStream_t stream = ih_cuda(ctx)->stream;
    if (*buf != NULL) {
        IH_CUDA_TRY(ctx, "free", cudaFreeAsync(*buf, stream));
        *buf = NULL;
        *cap = 0;
    }
    IH_CUDA_TRY(ctx, "allocation", cudaMallocAsync(buf, need, stream));
    *cap = need;
    if (zero) {
        IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(*buf, 0, need, stream));
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

/* ---- staging host images ---- */

/* Up to three host views of one size staged side by side, rows packed. */
typedef struct staged_set {
    const imghist_view *v[3];  /* NULL where absent */
    size_t row_bytes[3];
    size_t offset[3];          /* of each view's band in the staging buffer */
    uint32_t band;             /* rows per band */
} staged_set;

static size_t view_row_bytes(const imghist_view *v)
{
    return (size_t)v->width * ih_dtype_size(v->dtype);
}

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/*
 * Room for as many whole rows of every view as fit, up to all of them, under
 * IMGHIST_P_STAGING_BYTES. IH_E_GPU_OOM when not even one row fits (the core
 * then runs the call on the CPU).
 */
static imghist_status reserve_staging(imghist_ctx *ctx, ih_joint_state *j, staged_set *set)
{
    const uint32_t height = set->v[0]->height;
    size_t per_row = 0;
    for (int k = 0; k < 3; k++) {
        set->row_bytes[k] = set->v[k] != NULL ? view_row_bytes(set->v[k]) : 0;
        per_row += set->row_bytes[k];
    }
    const size_t slack = 3 * 256; /* each view's band starts 256-byte aligned */
    size_t want = per_row * height + slack;
    const int64_t cap = ctx->params.staging_bytes;
    if (cap > 0 && (uint64_t)cap < want) {
        want = (size_t)cap;
    }
    const size_t one_row = per_row + slack;
    want = want < one_row ? one_row : want;
    const imghist_status grown =
        ih_cuda_grow_staging(ctx, (void **)&j->staging, &j->staging_bytes, want, one_row);
    if (grown != IMGHIST_OK) {
        return grown;
    }
    if (j->staging_bytes < one_row) {
        return IH_E_GPU_OOM;
    }
    const size_t usable = (j->staging_bytes < want ? j->staging_bytes : want) - slack;
    const size_t rows = usable / per_row;
    set->band = (uint32_t)(rows < height ? rows : height);
    size_t at = 0;
    for (int k = 0; k < 3; k++) {
        set->offset[k] = at;
        at = round_up(at + set->row_bytes[k] * set->band, 256);
    }
    if (set->band < height) {
        ih_note(ctx, "the images do not fit in GPU memory: processed in %u bands of %u rows",
                (height + set->band - 1) / set->band, set->band);
    }
    return IMGHIST_OK;
}

/* Upload views `which` (bit k: view k) of band b; staged[k] gets the device views. */
static imghist_status upload_band(imghist_ctx *ctx, ih_joint_state *j, const staged_set *set,
                                  const ih_bands *b, unsigned which, imghist_view staged[3])
{
    for (int k = 0; k < 3; k++) {
        const imghist_view *v = set->v[k];
        if (v == NULL) {
            continue;
        }
        staged[k] = *v;
        staged[k].data = j->staging + set->offset[k];
        staged[k].mem = IMGHIST_MEM_DEVICE;
        staged[k].pitch = set->row_bytes[k];
        staged[k].height = b->rows;
        if ((which & (1u << k)) != 0) {
            const imghist_status st = ih_cuda_upload_2d(
                ctx, "upload", (void *)staged[k].data, set->row_bytes[k],
                (const uint8_t *)v->data + (size_t)b->row0 * v->pitch, v->pitch,
                set->row_bytes[k], b->rows);
            if (st != IMGHIST_OK) {
                return st;
            }
        }
    }
    return IMGHIST_OK;
}

/* ---- counting ---- */

static ih_jimg jimg(const imghist_view *v)
{
    ih_jimg g;
    g.data = v != NULL ? (const uint8_t *)v->data : NULL;
    g.pitch = v != NULL ? v->pitch : 0;
    g.dtype = v != NULL ? v->dtype : IMGHIST_U8;
    return g;
}

/* Device views a, b and mask into `target`, added to. */
static imghist_status count(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                            const imghist_view *mask, const ih_hist_job *ja,
                            const ih_hist_job *jb, unsigned long long *target)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_joint_job job;
    memset(&job, 0, sizeof job);
    job.a = jimg(a);
    job.b = jimg(b);
    job.mask = jimg(mask);
    job.width = a->width;
    job.height = a->height;
    job.ba = ja->bin;
    job.bb = jb->bin;
    job.cells = ja->bin.bins * jb->bin.bins;
    job.outliers = ja->outliers;
    job.natural_u8_pair = a->dtype == IMGHIST_U8 && b->dtype == IMGHIST_U8 && ja->natural &&
                          jb->natural;
    IH_CUDA_TRY(ctx, "joint histogram launch",
                ih_launch_joint_count(job, target, s->sm_count, s->stream));
    return IMGHIST_OK;
}

/*
 * Where counts bound for `out` (n counters) are made: device counts directly;
 * host counts in the workspace, copied up first when accumulating. The
 * target starts at zero unless the call accumulates.
 */
static imghist_status begin_counts(imghist_ctx *ctx, ih_joint_state *j, const imghist_counts *out,
                                   size_t n, int accumulate, unsigned long long **target)
{
    cudaStream_t stream = ih_cuda(ctx)->stream;
    if (out->mem == IMGHIST_MEM_DEVICE) {
        *target = (unsigned long long *)out->data;
    } else {
        imghist_status st = grow(ctx, &j->counts, &j->counts_cap, n * sizeof(uint64_t), 0);
        if (st != IMGHIST_OK) {
            return st;
        }
        *target = (unsigned long long *)j->counts;
        if (accumulate) {
            IH_CUDA_TRY(ctx, "count upload",
                        cudaMemcpyAsync(*target, out->data, n * sizeof(uint64_t),
                                        cudaMemcpyHostToDevice, stream));
        }
    }
    if (!accumulate) {
        IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(*target, 0, n * sizeof(uint64_t), stream));
    }
    return IMGHIST_OK;
}

/* Queue the copy of host-bound counts back to the caller. */
static imghist_status deliver(imghist_ctx *ctx, const imghist_counts *out, size_t n,
                              const unsigned long long *target)
{
    if (out->mem == IMGHIST_MEM_HOST) {
        IH_CUDA_TRY(ctx, "result copy",
                    cudaMemcpyAsync(out->data, target, n * sizeof(uint64_t),
                                    cudaMemcpyDeviceToHost, ih_cuda(ctx)->stream));
    }
    return IMGHIST_OK;
}

imghist_status ih_cuda_hist2d(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                              const imghist_view *mask, const ih_hist_job *ja,
                              const ih_hist_job *jb, const imghist_counts *out)
{
    ih_joint_state *j = NULL;
    imghist_status st = joint_state(ctx, &j);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t n = (size_t)ja->bin.bins * jb->bin.bins + (ja->outliers ? 1 : 0);
    staged_set set;
    if (a->mem == IMGHIST_MEM_HOST) {
        memset(&set, 0, sizeof set);
        set.v[0] = a;
        set.v[1] = b;
        set.v[2] = mask;
        st = reserve_staging(ctx, j, &set); /* first: IH_E_GPU_OOM before any work */
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    unsigned long long *target = NULL;
    st = begin_counts(ctx, j, out, n, ja->accumulate, &target);
    if (st == IMGHIST_OK && a->mem == IMGHIST_MEM_DEVICE) {
        st = count(ctx, a, b, mask, ja, jb, target);
        if (st == IMGHIST_OK) st = deliver(ctx, out, n, target);
        return st;
    }
    if (st == IMGHIST_OK) {
        IH_FOR_EACH_BAND(band, a->height, set.band) {
            imghist_view staged[3];
            st = upload_band(ctx, j, &set, &band, 7u, staged);
            if (st == IMGHIST_OK) {
                st = count(ctx, &staged[0], &staged[1], mask != NULL ? &staged[2] : NULL, ja, jb,
                           target);
            }
            if (st != IMGHIST_OK) {
                break;
            }
        }
    }
    if (st == IMGHIST_OK) st = deliver(ctx, out, n, target);
    return finish(ctx, st);
}

imghist_status ih_cuda_mutual_information(imghist_ctx *ctx, const imghist_counts *joint,
                                          uint32_t bins_a, uint32_t bins_b, double *result,
                                          imghist_mem result_mem)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_joint_state *j = NULL;
    imghist_status st = joint_state(ctx, &j);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t cells = (size_t)bins_a * bins_b;
    const unsigned long long *src = (const unsigned long long *)joint->data;
    if (joint->mem == IMGHIST_MEM_HOST) {
        st = grow(ctx, &j->counts, &j->counts_cap, cells * sizeof(uint64_t), 0);
        if (st != IMGHIST_OK) {
            return st;
        }
        IH_CUDA_TRY(ctx, "joint histogram upload",
                    cudaMemcpyAsync(j->counts, joint->data, cells * sizeof(uint64_t),
                                    cudaMemcpyHostToDevice, s->stream));
        src = (const unsigned long long *)j->counts;
    }
    st = grow(ctx, &j->mi_ws, &j->mi_ws_cap, ih_mi_workspace_bytes(bins_b), 1);
    if (st != IMGHIST_OK) {
        return st;
    }
    double *res = result_mem == IMGHIST_MEM_DEVICE ? result : (double *)(j->aux + AUX_RESULT);
    IH_CUDA_TRY(ctx, "mutual information launch",
                ih_launch_mutual_information(src, bins_a, bins_b, j->mi_ws, res, s->sm_count,
                                             s->stream));
    if (result_mem == IMGHIST_MEM_DEVICE) {
        /* A host joint is read by the time the stream gets past the copy;
         * the call waits for that so that the caller may reuse it. */
        return joint->mem == IMGHIST_MEM_HOST ? finish(ctx, IMGHIST_OK) : IMGHIST_OK;
    }
    double host[2];
    const cudaError_t e =
        cudaMemcpyAsync(host, res, sizeof host, cudaMemcpyDeviceToHost, s->stream);
    st = finish(ctx, e == cudaSuccess ? IMGHIST_OK : ih_cuda_error(ctx, "result copy", e));
    if (st != IMGHIST_OK) {
        return st;
    }
    if (isnan(host[0])) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the joint histogram is empty");
    }
    result[0] = host[0];
    result[1] = host[1];
    return IMGHIST_OK;
}

/* ---- equalization ---- */

/* Device src (and mask): histogram into hist_target (zeroed here), LUT (into
 * the context's 256 bytes or the 16-bit LUT), the empty flag when asked. */
static imghist_status histogram_and_lut(imghist_ctx *ctx, ih_joint_state *j,
                                        const imghist_view *src, const imghist_view *mask,
                                        const ih_hist_job *job, unsigned long long *hist_target,
                                        int zero, int *empty_flag)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const uint32_t levels = job->bin.bins;
    if (zero) {
        IH_CUDA_TRY(ctx, "memset",
                    cudaMemsetAsync(hist_target, 0, levels * sizeof(uint64_t), s->stream));
    }
    if (src != NULL) {
        /* The wide histogram kernels (added to the zeroed target). */
        imghist_status st = ih_cuda_hist_wide_dev(ctx, src, mask, job, hist_target, 1);
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    if (empty_flag == NULL) {
        return IMGHIST_OK;
    }
    void *lut = levels == 256 ? (void *)s->lut : (void *)(j->aux + AUX_LUT16);
    IH_CUDA_TRY(ctx, "LUT launch",
                ih_launch_equalize_lut(hist_target, levels, lut, empty_flag,
                                       ctx->eq_method == IMGHIST_EQ_PIL,
                                       (unsigned long long *)(j->aux + AUX_LUT_SCRATCH),
                                       s->stream));
    return IMGHIST_OK;
}

/* dst = lut[src] on device views with the LUT histogram_and_lut made. */
static imghist_status apply(imghist_ctx *ctx, ih_joint_state *j, const imghist_view *src,
                            const imghist_view *dst)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (src->dtype == IMGHIST_U8) {
        const ih_dev_image img = ih_dev_image_of(src);
        return ih_cuda_apply(ctx, &img, (uint8_t *)dst->data, dst->pitch);
    }
    IH_CUDA_TRY(ctx, "LUT launch",
                ih_launch_apply_lut16((const uint8_t *)src->data, src->pitch,
                                      (uint8_t *)dst->data, dst->pitch, src->width, src->height,
                                      (const uint16_t *)(j->aux + AUX_LUT16), s->sm_count,
                                      s->stream));
    return IMGHIST_OK;
}

/* The workspace and the natural histogram job of an equalization of dtype. */
static imghist_status equalize_setup(imghist_ctx *ctx, imghist_dtype dtype, ih_joint_state **j,
                                     ih_hist_job *job)
{
    imghist_status st = joint_state(ctx, j);
    if (st == IMGHIST_OK) st = ih_resolve_spec(ctx, NULL, dtype, 1, job);
    return st;
}

imghist_status ih_cuda_equalize_wide(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *mask, const imghist_view *dst,
                                     const imghist_counts *hist)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_joint_state *j = NULL;
    ih_hist_job job;
    imghist_status st = equalize_setup(ctx, src->dtype, &j, &job);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t levels = job.bin.bins;
    int *flag = (int *)(j->aux + AUX_FLAG);
    unsigned long long *target = hist != NULL && hist->mem == IMGHIST_MEM_DEVICE
                                     ? (unsigned long long *)hist->data
                                     : (unsigned long long *)(j->aux + AUX_HIST);
    if (src->mem == IMGHIST_MEM_DEVICE) {
        /* An empty mask gives the identity LUT: dst becomes a copy of src. */
        st = histogram_and_lut(ctx, j, src, mask, &job, target, 1, flag);
        if (st == IMGHIST_OK) st = apply(ctx, j, src, dst);
        if (st == IMGHIST_OK && hist != NULL) st = deliver(ctx, hist, levels, target);
        return st;
    }
    staged_set set;
    memset(&set, 0, sizeof set);
    set.v[0] = src;
    set.v[2] = mask;
    st = reserve_staging(ctx, j, &set);
    if (st != IMGHIST_OK) {
        return st;
    }
    const int one_band = set.band >= src->height;
    imghist_view staged[3];
    /* Pass 1: the histogram, band by band; then the LUT. */
    IH_FOR_EACH_BAND(band, src->height, set.band) {
        st = upload_band(ctx, j, &set, &band, 5u, staged);
        if (st == IMGHIST_OK) {
            st = histogram_and_lut(ctx, j, &staged[0], mask != NULL ? &staged[2] : NULL, &job,
                                   target, band.row0 == 0, NULL);
        }
        if (st != IMGHIST_OK) {
            return finish(ctx, st);
        }
    }
    st = histogram_and_lut(ctx, j, NULL, NULL, &job, target, 0, flag);
    int empty = 0;
    if (st == IMGHIST_OK && mask != NULL) {
        const cudaError_t e =
            cudaMemcpyAsync(&empty, flag, sizeof empty, cudaMemcpyDeviceToHost, s->stream);
        st = finish(ctx, e == cudaSuccess ? IMGHIST_OK : ih_cuda_error(ctx, "flag copy", e));
        if (st == IMGHIST_OK && empty) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the mask has no non-zero sample");
        }
    }
    /* Pass 2: look up in place in the staging buffer, band by band, and copy out. */
    const size_t row_bytes = set.row_bytes[0];
    IH_FOR_EACH_BAND(band, src->height, set.band) {
        if (st != IMGHIST_OK) {
            break;
        }
        st = upload_band(ctx, j, &set, &band, one_band ? 0u : 1u, staged);
        if (st == IMGHIST_OK) st = apply(ctx, j, &staged[0], &staged[0]);
        if (st == IMGHIST_OK) {
            st = ih_cuda_download_2d(ctx, "download",
                                     (uint8_t *)dst->data + (size_t)band.row0 * dst->pitch,
                                     dst->pitch, staged[0].data, row_bytes, row_bytes, band.rows);
        }
    }
    if (st == IMGHIST_OK && hist != NULL) st = deliver(ctx, hist, levels, target);
    return finish(ctx, st);
}

/* ---- equalization of a batch's images, each with its own histogram ---- */

/* Images a chunk: 16-bit ones take 512 KiB of counters and 128 KiB of LUT
 * each (64 images: 40 MiB of workspace), 8-bit ones 2 KiB and 256 bytes. */
#define EQ_CHUNK_U16 64
#define EQ_CHUNK_U8 4096

/* A batch's images: count images of src's shape, strides apart (views
 * false; mask NULL or the first mask), or the views src[i], mask[i] (mask
 * NULL for none) and dst[i] (views true). */
typedef struct eq_images {
    const imghist_view *src, *mask, *dst;
    ptrdiff_t src_stride, mask_stride, dst_stride;
    bool views;
} eq_images;

/* 16-bit images of at most 2^16 samples whose histograms the caller does
 * not want: one launch, a block an image (ih_launch_equalize16_small). One
 * block's whole image in shared memory is slower per image than the
 * launches below but has no fixed cost: it wins from about two dozen
 * images of 2^16 samples, and at any count for images of up to 2^15
 * (bench_views16 measures the crossing). */
constexpr uint64_t EQ16_SMALL_ANY = UINT64_C(1) << 15;
constexpr size_t EQ16_SMALL_MIN_BATCH = 24;

/* Whether count images whose largest has `most` samples take it. */
static bool small16_takes(uint64_t most, size_t count)
{
    return most <= IH_EQ16_SMALL_MAX && (most <= EQ16_SMALL_ANY || count >= EQ16_SMALL_MIN_BATCH) &&
           ih_equalize16_small_fits(1, most);
}

/* A tensor (image i's source, mask and destination at their strides). */
static imghist_status equalize16_small(imghist_ctx *ctx, const eq_images *im, size_t count)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const imghist_view *m = im->mask;
    IH_CUDA_TRY(ctx, "equalization launch",
                ih_launch_equalize16_small(
                    (const uint8_t *)im->src->data, im->src_stride, im->src->pitch,
                    m != NULL ? (const uint8_t *)m->data : NULL, im->mask_stride,
                    m != NULL ? m->pitch : 0, (uint8_t *)im->dst->data, im->dst_stride,
                    im->dst->pitch, im->src->width, im->src->height, (uint32_t)count,
                    s->sm_count, s->stream));
    ctx->batch_route = IH_ROUTE_BLOCKS;
    return IMGHIST_OK;
}

/* Views anywhere, of any shapes (each image's ih_eq16_view, uploaded unless
 * they are the last call's: sources, then destinations, then masks
 * compared). */
static imghist_status equalize16_small_views(imghist_ctx *ctx, ih_joint_state *j,
                                             const imghist_view *src, const imghist_view *masks,
                                             const imghist_view *dst, size_t count)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t n_views = (masks != NULL ? 3 : 2) * count;
    imghist_view *all = (imghist_view *)malloc(n_views * sizeof *all);
    if (all == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", n_views);
    }
    memcpy(all, src, count * sizeof *all);
    memcpy(all + count, dst, count * sizeof *all);
    if (masks != NULL) {
        memcpy(all + 2 * count, masks, count * sizeof *all);
    }
    imghist_status st = IMGHIST_OK;
    uint64_t plan = 0;
    if (!ih_desc_cached(&j->eq16_desc, all, NULL, n_views, count, &plan, sizeof plan)) {
        const size_t bytes = count * sizeof(ih_eq16_view);
        uint8_t *host = NULL;
        st = ih_desc_buffer(ctx, &j->eq16_desc, bytes, &host);
        for (size_t i = 0; st == IMGHIST_OK && i < count; i++) {
            const imghist_view *m = masks != NULL ? &masks[i] : NULL;
            ih_eq16_describe((ih_eq16_view *)host + i, src[i].data, src[i].pitch,
                             m != NULL ? m->data : NULL, m != NULL ? m->pitch : 0, dst[i].data,
                             dst[i].pitch, src[i].width, src[i].height);
        }
        if (st == IMGHIST_OK) {
            st = ih_desc_upload(ctx, &j->eq16_desc, bytes, all, NULL, n_views, count, &plan,
                                sizeof plan);
        }
    }
    free(all);
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_CUDA_TRY(ctx, "equalization launch",
                ih_launch_equalize16_views((const ih_eq16_view *)j->eq16_desc.dev,
                                           (uint32_t)count, s->sm_count, s->stream));
    ctx->batch_route = IH_ROUTE_BLOCKS;
    return IMGHIST_OK;
}

imghist_status ih_cuda_equalize16_small_views(imghist_ctx *ctx, const imghist_view *src,
                                              const imghist_view *masks, const imghist_view *dst,
                                              size_t count, int *done)
{
    *done = 0;
    uint64_t most = 0;
    for (size_t i = 0; i < count; i++) {
        const uint64_t n = (uint64_t)src[i].width * src[i].height;
        most = n > most ? n : most;
    }
    if (!small16_takes(most, count)) {
        return IMGHIST_OK; /* image by image */
    }
    ih_joint_state *j = NULL;
    imghist_status st = joint_state(ctx, &j);
    if (st == IMGHIST_OK) st = equalize16_small_views(ctx, j, src, masks, dst, count);
    *done = st == IMGHIST_OK;
    return st;
}

/* equalize_strided_each and equalize_views_each: per chunk of images the
 * histograms (the backend's batch kernels, counts overwritten), the LUTs,
 * and the lookups, one launch each. */
static imghist_status equalize_each(imghist_ctx *ctx, const eq_images *im, size_t count,
                                    const imghist_counts *hists)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_joint_state *j = NULL;
    ih_hist_job job;
    imghist_status st = equalize_setup(ctx, im->src->dtype, &j, &job);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t levels = job.bin.bins;
    if (levels == IH_U16_LEVELS && hists == NULL &&
        small16_takes((uint64_t)im->src->width * im->src->height, count)) {
        return im->views ? equalize16_small_views(ctx, j, im->src, im->mask, im->dst, count)
                         : equalize16_small(ctx, im, count);
    }
    const size_t lut_size = levels == 256 ? 1 : 2;
    const size_t chunk = levels == 256 ? EQ_CHUNK_U8 : EQ_CHUNK_U16;
    const size_t first = count < chunk ? count : chunk;
    const int device_hists = hists != NULL && hists->mem == IMGHIST_MEM_DEVICE;
    if (!device_hists) {
        st = grow(ctx, &j->eq_counts, &j->eq_counts_cap, first * levels * sizeof(uint64_t), 0);
    }
    const size_t lut_bytes = first * levels * lut_size;
    if (st == IMGHIST_OK) {
        st = grow(ctx, &j->eq_luts, &j->eq_luts_cap, lut_bytes + first * IH_LUT16_SCRATCH_BYTES,
                  0);
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    const bool pil = ctx->eq_method == IMGHIST_EQ_PIL;
    const imghist_view *src = im->src, *dst = im->dst;
    for (size_t i0 = 0; i0 < count && st == IMGHIST_OK; i0 += chunk) {
        const size_t n = count - i0 < chunk ? count - i0 : chunk;
        unsigned long long *counts = device_hists
                                         ? (unsigned long long *)hists->data + i0 * levels
                                         : (unsigned long long *)j->eq_counts;
        const imghist_counts out = {(uint64_t *)counts, n * levels, IMGHIST_MEM_DEVICE};
        const uint8_t *s0;
        uint8_t *d0;
        const unsigned long long *ptrs = NULL;
        if (im->views) {
            s0 = (const uint8_t *)src[i0].data;
            d0 = (uint8_t *)dst[i0].data;
            const ih_batch list = {IH_LIST, n, &src[i0], NULL,
                                   im->mask != NULL ? &im->mask[i0] : NULL, 0, 0, 0};
            st = ctx->ops->histogram(ctx, &list, &job, &out);
            if (st == IMGHIST_OK) {
                st = ih_desc_pointers(ctx, &j->eq_desc, &src[i0], &dst[i0], n, &ptrs);
            }
        } else {
            imghist_view sv = *src, mv;
            sv.data = (uint8_t *)src->data + (ptrdiff_t)i0 * im->src_stride;
            d0 = (uint8_t *)dst->data + (ptrdiff_t)i0 * im->dst_stride;
            s0 = (const uint8_t *)sv.data;
            if (im->mask != NULL) {
                mv = *im->mask;
                mv.data = (uint8_t *)mv.data + (ptrdiff_t)i0 * im->mask_stride;
            }
            const ih_batch tensor = {IH_TENSOR, n, &sv, NULL, im->mask != NULL ? &mv : NULL,
                                     im->src_stride, 0, im->mask_stride};
            st = ctx->ops->histogram(ctx, &tensor, &job, &out);
        }
        if (st != IMGHIST_OK) {
            break;
        }
        uint8_t *luts = (uint8_t *)j->eq_luts;
        IH_CUDA_TRY(ctx, "LUT launch",
                    ih_launch_equalize_lut_batch(counts, (uint32_t)levels, luts, (uint32_t)n, pil,
                                                 (unsigned long long *)(luts + lut_bytes),
                                                 s->stream));
        IH_CUDA_TRY(ctx, "lookup launch",
                    ih_launch_apply_lut_batch(s0, im->views ? 0 : im->src_stride, src->pitch, d0,
                                              im->views ? 0 : im->dst_stride, dst->pitch,
                                              src->width, src->height, (uint32_t)levels, luts,
                                              (uint32_t)n, ptrs, s->sm_count, s->stream));
        if (hists != NULL && !device_hists) {
            IH_CUDA_TRY(ctx, "result copy",
                        cudaMemcpyAsync(hists->data + i0 * levels, counts,
                                        n * levels * sizeof(uint64_t), cudaMemcpyDeviceToHost,
                                        s->stream));
        }
    }
    return st;
}

imghist_status ih_cuda_equalize_strided_each(imghist_ctx *ctx, const imghist_view *src,
                                             ptrdiff_t src_stride, const imghist_view *mask,
                                             ptrdiff_t mask_stride, const imghist_view *dst,
                                             ptrdiff_t dst_stride, size_t count,
                                             const imghist_counts *hists)
{
    const eq_images im = {src, mask, dst, src_stride, mask_stride, dst_stride, false};
    return equalize_each(ctx, &im, count, hists);
}

imghist_status ih_cuda_equalize_views_each(imghist_ctx *ctx, const imghist_view *src,
                                           const imghist_view *masks, const imghist_view *dst,
                                           size_t count, const imghist_counts *hists)
{
    const eq_images im = {src, masks, dst, 0, 0, 0, true};
    return equalize_each(ctx, &im, count, hists);
}
