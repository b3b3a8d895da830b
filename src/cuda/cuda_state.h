/* The CUDA backend's host side: its per-context state and the seams between
 * its files. Device code lives in kernels/. */
#ifndef IMGHIST_CUDA_STATE_H
#define IMGHIST_CUDA_STATE_H

#include <cuda_runtime_api.h>

#include "backend.h"
#include "batch_tiny.cuh"

/* A batch path's descriptors on the GPU, and what they were built from
 * (cuda_desc.cu). */
typedef struct ih_desc_cache {
    void *dev;                          /* the descriptors the kernels read */
    size_t dev_cap;
    uint8_t *host;                      /* where the next ones are built */
    size_t host_cap;
    imghist_view *views;                /* views_n views dev was built from (0: unknown) */
    size_t views_n, views_cap, count;
    uint64_t key;                       /* the build's other inputs */
    uint64_t plan[8];                   /* the caller's plan of them (plan_bytes) */
    size_t plan_bytes;
} ih_desc_cache;

/* Pinned buffers that host images go to and from the GPU through
 * (cuda_transfer.cu), in turn. */
#define IH_PIN_SLOTS 2
#define IH_PIN_SLOT_BYTES ((size_t)2 << 20)

struct ih_pin_slot {
    uint8_t *host;    /* IH_PIN_SLOT_BYTES of pinned memory */
    cudaEvent_t done; /* recorded after the last copy from or into it */
};

struct ih_cuda_state {
    int device;
    int sm_count;
    int hist_bps, batch_bps, apply_bps; /* resident blocks per SM (occupancy) */
    int tiny_bps;                       /* of the tiny-image batch kernel */
    cudaStream_t own_stream;            /* created with the context */
    cudaStream_t stream;                /* the context's stream: own_stream or the caller's */
    cudaEvent_t handoff;                /* orders a new stream after the old one */
    unsigned long long *workspace;      /* IH_WS_COPIES * 256 counters, zero between launches */
    unsigned int *ticket;               /* the last-block ticket, zero between launches */
    unsigned long long *hist;           /* 256 results bound for host memory */
    unsigned char *lut;                 /* 256 LUT bytes */
    uint8_t *staging;                   /* host images, whole or in bands */
    size_t staging_bytes;
    ih_desc_cache batch_desc;           /* batch descriptors: geometries, then chunk starts */
    unsigned long long *batch_hist;     /* batch results bound for host memory */
    bool batch_writes;                  /* the batch kernel writes its counts (ih_batch_kernels) */
    bool batch_uniform;                 /* a uniform batch goes without descriptors (the same) */
    void *batch_ws;                     /* the batch's split images: counters, then tickets; zero */
    size_t batch_ws_cap, batch_ws_images;
    size_t batch_hist_cap;
    /* cuda_wide_ops.cu */
    ih_desc_cache wide_desc;            /* views of one shape anywhere: their pointers */
    unsigned long long *wide_counts;    /* wide results bound for host memory */
    size_t wide_counts_cap;             /* counters */
    uint8_t *wide_staging;              /* host views (and masks), whole or in bands */
    size_t wide_staging_bytes;
    unsigned int *range_keys;           /* imghist_range's min and max keys */
    struct ih_joint_state *joint;       /* cuda_joint_ops.cu's workspaces, NULL until used */
    /* cuda_batch_ops.cu: 8-bit equalization of lists */
    uint32_t eqb_small_max;             /* most granule bytes of a one-block image */
    int eqb_count_bps, eqb_apply_bps;   /* resident blocks per SM of its two kernels */
    ih_desc_cache eqb_desc;             /* its descriptors (cuda_batch_ops.cu) */
    void *eqb_ws;                       /* counters and tickets (zero between launches), LUTs */
    size_t eqb_ws_cap;                  /* bytes */
    uint32_t eqb_ws_images;             /* large images it is laid out for */
    /* cuda_clahe_ops.cu */
    void *clahe_ws;                     /* tile counters, then tile LUTs */
    size_t clahe_ws_cap;
    void *clahe_img;                    /* host images on the GPU */
    size_t clahe_img_cap;
    /* cuda_transfer.cu */
    struct ih_pin_slot pin[IH_PIN_SLOTS];
    int pin_state;                      /* 0: not yet allocated, 1: ready, -1: failed */
    unsigned pin_next;                  /* the slot the next chunk takes */
};

static inline struct ih_cuda_state *ih_cuda(imghist_ctx *ctx)
{
    return (struct ih_cuda_state *)ctx->backend_state;
}

/* A failed CUDA call as a status: IMGHIST_E_FAULTED (and the context latched)
 * for the errors that leave the CUDA context unusable, else IMGHIST_E_CUDA. */
imghist_status ih_cuda_error(imghist_ctx *ctx, const char *what, cudaError_t e);

#define IH_CUDA_TRY(ctx, what, call)                    \
    do {                                                \
        const cudaError_t e_ = (call);                  \
        if (e_ != cudaSuccess) {                        \
            return ih_cuda_error((ctx), (what), e_);    \
        }                                               \
    } while (0)

/* A U8 image, or a band of its rows, in device memory. */
typedef struct ih_dev_image {
    const uint8_t *data;
    size_t pitch;
    uint32_t width, height;
} ih_dev_image;

/* A one-channel U8 view as an ih_dev_image. */
static inline ih_dev_image ih_dev_image_of(const imghist_view *v)
{
    ih_dev_image d;
    d.data = (const uint8_t *)v->data;
    d.pitch = v->pitch;
    d.width = v->width;
    d.height = v->height;
    return d;
}

/* The same views, field by field (not their padding): a batch whose views
 * are the last call's reuses the descriptors already on the GPU. */
static inline bool ih_same_views(const imghist_view *a, const imghist_view *b, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (a[i].data != b[i].data || a[i].dtype != b[i].dtype || a[i].mem != b[i].mem ||
            a[i].width != b[i].width || a[i].height != b[i].height ||
            a[i].pitch != b[i].pitch || a[i].channels != b[i].channels) {
            return false;
        }
    }
    return true;
}

/* The most granule bytes of an image of a batch tensor that goes one warp an
 * image (kernels/batch_tiny.cu), by IMGHIST_P_EXP_BATCH_TINY. */
#define IH_TINY_BYTES 8192
static inline uint64_t ih_tiny_limit(const imghist_ctx *ctx)
{
    const int64_t knob = ctx->params.batch_tiny;
    return knob < 0 ? 0 : knob > 0 ? (uint64_t)knob : IH_TINY_BYTES;
}

/* Whether count views (and d: NULL or as many) are one geometry at fixed
 * strides, as a batch tensor's images are: the same width, height and pitch,
 * view i's data at view 0's plus i * stride, each stride a multiple of 16
 * bytes (so that every image has image 0's granules). Then *stride (and
 * *d_stride) get the strides, and the batch needs no descriptors. */
static inline bool ih_uniform_views(const imghist_view *v, const imghist_view *d, size_t count,
                                    long long *stride, long long *d_stride)
{
    const uintptr_t v0 = (uintptr_t)v[0].data, d0 = d != NULL ? (uintptr_t)d[0].data : 0;
    const uintptr_t vs = count > 1 ? (uintptr_t)v[1].data - v0 : 0;
    const uintptr_t ds = count > 1 && d != NULL ? (uintptr_t)d[1].data - d0 : 0;
    if ((vs & 15) != 0 || (ds & 15) != 0) {
        return false;
    }
    uintptr_t at = v0, d_at = d0;
    for (size_t i = 0; i < count; i++, at += vs, d_at += ds) {
        if ((uintptr_t)v[i].data != at || v[i].width != v[0].width ||
            v[i].height != v[0].height || v[i].pitch != v[0].pitch) {
            return false;
        }
        if (d != NULL && ((uintptr_t)d[i].data != d_at || d[i].width != d[0].width ||
                          d[i].height != d[0].height || d[i].pitch != d[0].pitch)) {
            return false;
        }
    }
    *stride = (long long)(intptr_t)vs;
    if (d_stride != NULL) {
        *d_stride = (long long)(intptr_t)ds;
    }
    return true;
}

/* Whether the list call in progress's checks read these very views
 * (v, and d unless NULL) and so know their layout (ctx->layout). */
static inline bool ih_layout_known(const imghist_ctx *ctx, const imghist_view *v,
                                   const imghist_view *d, size_t count)
{
    const ih_list_layout *l = &ctx->layout;
    return l->count == count && l->src == v && (d == NULL || l->dst == d);
}

/* ih_uniform_views, from what the list's checks saw where they read these
 * views (no second pass over a large list), else by reading them. */
static inline bool ih_list_uniform(const imghist_ctx *ctx, const imghist_view *v,
                                   const imghist_view *d, size_t count, long long *stride,
                                   long long *d_stride)
{
    if (!ih_layout_known(ctx, v, d, count)) {
        return ih_uniform_views(v, d, count, stride, d_stride);
    }
    const ih_list_layout *l = &ctx->layout;
    if (!l->src_uniform || (l->src_stride & 15) != 0 ||
        (d != NULL && (!l->dst_uniform || (l->dst_stride & 15) != 0))) {
        return false;
    }
    *stride = (long long)(intptr_t)l->src_stride;
    if (d_stride != NULL) {
        *d_stride = d != NULL ? (long long)(intptr_t)l->dst_stride : 0;
    }
    return true;
}

/* ih_views_one_shape of a list's sources (dst false) or destinations,
 * from the checks' pass where it read them; masks' pitches are read. */
static inline bool ih_list_one_shape(const imghist_ctx *ctx, const imghist_view *v,
                                     const imghist_view *masks, size_t count, bool dst)
{
    const ih_list_layout *l = &ctx->layout;
    if (l->count != count || (dst ? l->dst : l->src) != v) {
        return ih_views_one_shape(v, masks, count);
    }
    if (!(dst ? l->dst_one_shape : l->src_one_shape)) {
        return false;
    }
    for (size_t i = 0; masks != NULL && i < count; i++) {
        if (masks[i].pitch != masks[0].pitch) {
            return false;
        }
    }
    return true;
}

/*
 * img as one row of width * height bytes when its rows are packed (pitch ==
 * width, and dst_pitch == width for a lookup into dst), of a length that is
 * not a multiple of 16 bytes, and it holds fewer than 2^31 bytes: the granule
 * walk then meets no row end inside the image. Such a row has a granule at
 * each end that a thread takes byte by byte while its warp waits, which at
 * short rows costs the 8-bit count more than half its speed.
 */
static inline ih_dev_image ih_flat(ih_dev_image img, size_t dst_pitch)
{
    const uint64_t bytes = (uint64_t)img.width * img.height;
    if (img.height > 1 && img.width % 16 != 0 && img.pitch == img.width &&
        dst_pitch == img.width && bytes < (UINT64_C(1) << 31)) {
        img.width = (uint32_t)bytes;
        img.pitch = (size_t)bytes;
        img.height = 1;
    }
    return img;
}

/* Blocks of the tiny-image batch kernel for count images: one warp an image,
 * up to the resident grid. */
static inline int ih_tiny_grid(const struct ih_cuda_state *s, size_t count)
{
    const size_t want = (count + IH_TINY_WARPS - 1) / IH_TINY_WARPS;
    const size_t resident = (size_t)s->sm_count * (size_t)(s->tiny_bps > 0 ? s->tiny_bps : 1);
    return (int)(want < resident ? want : resident);
}

/* ---- cuda_desc.cu: batch descriptors ---- */
/* Whether c's descriptors were built from these views (a: count views; b:
 * NULL or count more) and key; then *plan (plan_bytes) gets their plan. */
bool ih_desc_cached(const ih_desc_cache *c, const imghist_view *a, const imghist_view *b,
                    size_t count, uint64_t key, void *plan, size_t plan_bytes);
/* *host: `bytes` or more of host memory to build descriptors in; c forgets
 * its views until ih_desc_upload. */
imghist_status ih_desc_buffer(imghist_ctx *ctx, ih_desc_cache *c, size_t bytes, uint8_t **host);
/* Queue the upload of that memory's first `bytes` to c->dev (grown on the
 * stream) and record what they were built from. */
imghist_status ih_desc_upload(imghist_ctx *ctx, ih_desc_cache *c, size_t bytes,
                              const imghist_view *a, const imghist_view *b, size_t count,
                              uint64_t key, const void *plan, size_t plan_bytes);
void ih_desc_close(ih_desc_cache *c);
/* *dev: c's device array of count pairs of pointers, a[i]'s data then
 * b[i]'s (0 when b is NULL); not built or uploaded again for the views of
 * c's last call. */
imghist_status ih_desc_pointers(imghist_ctx *ctx, ih_desc_cache *c, const imghist_view *a,
                                const imghist_view *b, size_t count,
                                const unsigned long long **dev);

/* ---- cuda_device_ops.cu: work on device images, queued on the stream ---- */
/* Histogram of img into hist_out (device, 256). `last`: img completes the
 * histogram (false for the earlier bands of a host image staged in bands):
 * then hist_out is written (added to when accumulate) and lut_out (NULL or
 * 256 device bytes) gets the equalization LUT. */
imghist_status ih_cuda_count(imghist_ctx *ctx, const ih_dev_image *img,
                             unsigned long long *hist_out, int accumulate,
                             unsigned char *lut_out, int last);
/* dst = lut[src] with the context's LUT. */
imghist_status ih_cuda_apply(imghist_ctx *ctx, const ih_dev_image *src, uint8_t *dst,
                             size_t dst_pitch);
imghist_status ih_cuda_hist_device(imghist_ctx *ctx, const imghist_view *src,
                                   const ih_hist_job *job, const imghist_counts *out);
imghist_status ih_cuda_hist_batch_device(imghist_ctx *ctx, const imghist_view *src,
                                         size_t count, const ih_hist_job *job,
                                         const imghist_counts *out);
/* count images of first's shape, `stride` bytes apart (checked by the core);
 * a stride that is not a multiple of 16 goes as views. */
imghist_status ih_cuda_hist_strided(imghist_ctx *ctx, const imghist_view *first, size_t count,
                                    ptrdiff_t stride, const ih_hist_job *job,
                                    const imghist_counts *out);
imghist_status ih_cuda_equalize_device(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *dst, const imghist_counts *hist);
/* cuda_clahe_ops.cu: CLAHE of a batch of device images of one shape (a
 * tensor in one set of launches), or of host images through device copies
 * (synchronised before it returns). */
imghist_status ih_cuda_clahe(imghist_ctx *ctx, const struct ih_batch *b,
                             const struct ih_clahe_geom *g);
/* Grow a stream-ordered device buffer to `need` bytes (contents lost); no
 * host synchronisation. With oom_ok, a GPU out of memory is IH_E_GPU_OOM
 * (for host calls the core can run on the CPU instead), else an error. */
imghist_status ih_cuda_grow_async(imghist_ctx *ctx, void **buf, size_t *cap, size_t need,
                                  int oom_ok);
/* Host counts: queue the copy of n counters from target (device); device
 * counts already hold them. */
imghist_status ih_cuda_deliver(imghist_ctx *ctx, const imghist_counts *out, size_t n,
                               const unsigned long long *target);

/* ---- cuda_batch_ops.cu: 8-bit equalization of lists of device views ---- */
imghist_status ih_cuda_equalize_batch_device(imghist_ctx *ctx, const imghist_view *src,
                                             const imghist_view *dst, size_t count,
                                             const imghist_counts *hists);
/* The same for count images of src's and dst's shapes, src_stride and
 * dst_stride bytes apart (checked by the core). */
imghist_status ih_cuda_equalize_strided(imghist_ctx *ctx, const imghist_view *src,
                                        ptrdiff_t src_stride, const imghist_view *dst,
                                        ptrdiff_t dst_stride, size_t count,
                                        const imghist_counts *hists);
/* One U8 device image equalized by one block in one launch, when its
 * granules fit in shared memory (*done = 1); else *done = 0 and nothing is
 * queued. hist: NULL or 256 device counters. */
imghist_status ih_cuda_equalize_one_small(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *dst, unsigned long long *hist,
                                          int *done);
/* Frees its buffers (cuda_close). */
void ih_cuda_batch_close(struct ih_cuda_state *s);

/* ---- cuda_host_ops.cu: host images through a staging buffer; synchronous ---- */
/* Grow a staging buffer (*buf, *bytes) to `want` bytes, halving the request
 * while the GPU is out of memory, down to `least`; *bytes < least afterwards
 * means no room (the caller answers IH_E_GPU_OOM). Other errors: a status. */
imghist_status ih_cuda_grow_staging(imghist_ctx *ctx, void **buf, size_t *bytes, size_t want,
                                    size_t least);
imghist_status ih_cuda_hist_host(imghist_ctx *ctx, const imghist_view *src,
                                 const ih_hist_job *job, const imghist_counts *out);
imghist_status ih_cuda_equalize_host(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *dst, const imghist_counts *hist);

/* ---- cuda_wide_ops.cu: every histogram but the 8-bit path's (U16, F32,
 * other bins, channels, masks, outliers), on device or host views ---- */
imghist_status ih_cuda_hist_wide(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *mask, const ih_hist_job *job,
                                 const imghist_counts *out);
/* Batches of device views of those jobs (as views with masks NULL or one a
 * view, or as count images of first's shape `stride` bytes apart with mask
 * NULL or count masks of its shape mask_stride bytes apart): one launch for
 * a tensor, else one per image; image i's counters at out->data + i *
 * job->len. */
imghist_status ih_cuda_hist_wide_batch(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *masks, size_t count,
                                       const ih_hist_job *job, const imghist_counts *out);
imghist_status ih_cuda_hist_wide_strided(imghist_ctx *ctx, const imghist_view *first,
                                         const imghist_view *mask, size_t count, ptrdiff_t stride,
                                         ptrdiff_t mask_stride, const ih_hist_job *job,
                                         const imghist_counts *out);
imghist_status ih_cuda_range(imghist_ctx *ctx, const imghist_view *src, const imghist_view *mask,
                             double *lo, double *hi, int *found);
/* A device view (mask NULL or a device mask) counted into job->len device
 * counters, added to them when accumulate (job->accumulate is not read); only
 * queues work on the context's stream, allocates nothing. For the 16-bit
 * equalization and anyone else who needs device counts of any job. */
imghist_status ih_cuda_hist_wide_dev(imghist_ctx *ctx, const imghist_view *src_dev,
                                     const imghist_view *mask_dev, const ih_hist_job *job,
                                     unsigned long long *dev_counts, int accumulate);

/* ---- cuda_joint_ops.cu: joint histograms, mutual information, 16-bit and
 * masked equalization ---- */
imghist_status ih_cuda_hist2d(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                              const imghist_view *mask, const ih_hist_job *ja,
                              const ih_hist_job *jb, const imghist_counts *out);
imghist_status ih_cuda_mutual_information(imghist_ctx *ctx, const imghist_counts *joint,
                                          uint32_t bins_a, uint32_t bins_b, double *result,
                                          imghist_mem result_mem);
imghist_status ih_cuda_equalize_wide(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *mask, const imghist_view *dst,
                                     const imghist_counts *hist);
/* ih_backend_ops.equalize_strided_each: the images' histograms in one
 * launch (the strided histogram kernels), their LUTs in one or two, the
 * lookups in one, in chunks of images whose counters fit the workspace. */
imghist_status ih_cuda_equalize_strided_each(imghist_ctx *ctx, const imghist_view *src,
                                             ptrdiff_t src_stride, const imghist_view *mask,
                                             ptrdiff_t mask_stride, const imghist_view *dst,
                                             ptrdiff_t dst_stride, size_t count,
                                             const imghist_counts *hists);
/* ih_backend_ops.equalize16_small_views (cuda_joint_ops.cu). */
imghist_status ih_cuda_equalize16_small_views(imghist_ctx *ctx, const imghist_view *src,
                                              const imghist_view *masks, const imghist_view *dst,
                                              size_t count, int *done);
/* ih_backend_ops.equalize_views_each: the same for views anywhere (their
 * pointers uploaded for the lookups). */
imghist_status ih_cuda_equalize_views_each(imghist_ctx *ctx, const imghist_view *src,
                                           const imghist_view *masks, const imghist_view *dst,
                                           size_t count, const imghist_counts *hists);
/* Frees the workspaces above (cuda_close). */
void ih_cuda_joint_close(struct ih_cuda_state *s);

/* cuda_transfer.cu: rows x row_bytes from host memory to the GPU, or back,
 * on the context's stream, through the context's pinned slots when that is
 * faster (what names the copy in an error). The upload returns once the rows
 * are queued: the source must stay until the stream has copied them (memory
 * that is already pinned is read by the DMA itself), which every host call
 * ensures by synchronising before it returns. Through the slots, the
 * download returns once the rows are in dst; directly (into pinned memory,
 * or rows wider than a slot), once they are queued. */
imghist_status ih_cuda_upload_2d(imghist_ctx *ctx, const char *what, void *dst, size_t dpitch,
                                 const void *src, size_t spitch, size_t row_bytes, size_t rows);
imghist_status ih_cuda_download_2d(imghist_ctx *ctx, const char *what, void *dst, size_t dpitch,
                                   const void *src, size_t spitch, size_t row_bytes, size_t rows);
/* bytes from the GPU to contiguous host memory, as ih_cuda_download_2d. */
imghist_status ih_cuda_download(imghist_ctx *ctx, const char *what, void *dst, const void *src,
                                size_t bytes);
void ih_cuda_pin_close(struct ih_cuda_state *s);

#endif
