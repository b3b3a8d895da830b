/*
 * The seam between the core and the backends. A backend is a table of
 * operations; the core checks every argument before it calls one, so a
 * backend sees only valid views, resolved specs and counts long enough. The composition root (src/create.c) chooses the table.
 */
#ifndef IMGHIST_BACKEND_H
#define IMGHIST_BACKEND_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal status: the CUDA backend had no GPU memory for a host image; the
 * core runs the call on ctx->fallback instead and says so in the note. */
#define IH_E_GPU_OOM ((imghist_status)100)

struct ih_clahe_geom;

struct ih_backend_ops {
    imghist_backend id;
    int device_memory; /* takes IMGHIST_MEM_DEVICE views and counts */
    imghist_status (*open)(imghist_ctx *ctx);
    void (*close)(imghist_ctx *ctx);
    imghist_status (*set_stream)(imghist_ctx *ctx, imghist_stream stream);
    imghist_status (*get_stream)(const imghist_ctx *ctx, imghist_stream *stream);
    /* src of job->channels channels, mask NULL or checked (U8, one channel,
     * src's size and memory); out holds job->len counters. */
    imghist_status (*histogram)(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *mask, const ih_hist_job *job,
                                const imghist_counts *out);
    /* Views of one sample type and channel count (any job), in the memory the
     * backend takes for batches (CPU: host; CUDA: device; the core runs other
     * batches image by image through histogram), masks NULL or one a view
     * (checked against its image); image i's counters at out->data + i *
     * job->len, written or, with job->accumulate, added to. */
    imghist_status (*histogram_batch)(imghist_ctx *ctx, const imghist_view *src,
                                      const imghist_view *masks, size_t count,
                                      const ih_hist_job *job, const imghist_counts *out);
    /* The same batch as count images of first's shape, `stride` bytes apart,
     * and mask NULL or count masks of its shape, mask_stride bytes apart (the
     * core checked first and mask, and that the last of each lies in the
     * address space), device memory only. NULL: the core makes the views. */
    imghist_status (*histogram_strided)(imghist_ctx *ctx, const imghist_view *first,
                                        const imghist_view *mask, size_t count, ptrdiff_t stride,
                                        ptrdiff_t mask_stride, const ih_hist_job *job,
                                        const imghist_counts *out);
    /* Finite min and max over every channel where mask is non-zero; *found = 0
     * when there is no finite sample. Host doubles; synchronous. */
    imghist_status (*range)(imghist_ctx *ctx, const imghist_view *src, const imghist_view *mask,
                            double *lo, double *hi, int *found);
    /* One-channel a and b of one size and memory; out holds ja->bin.bins *
     * jb->bin.bins counters (+ 1 when ja->outliers: pairs in no cell). */
    imghist_status (*histogram2d)(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                                  const imghist_view *mask, const ih_hist_job *ja,
                                  const ih_hist_job *jb, const imghist_counts *out);
    /* joint or result in device memory (the core computes host-only calls
     * itself). NULL without device memory. */
    imghist_status (*mutual_information)(imghist_ctx *ctx, const imghist_counts *joint,
                                         uint32_t bins_a, uint32_t bins_b, double *result,
                                         imghist_mem result_mem);
    /* One-channel U8 or U16 src and dst of one size, type and memory; mask
     * NULL or checked; hist NULL or >= 256 / 65536 counters. */
    imghist_status (*equalize)(imghist_ctx *ctx, const imghist_view *src,
                               const imghist_view *mask, const imghist_view *dst,
                               const imghist_counts *hist);
    /* count >= 1 one-channel U8 views src[i], dst[i] of one size each, all in
     * the memory the backend takes for batches (CPU: host; CUDA: device; the
     * core runs host batches on the CUDA backend image by image); no overlap
     * but dst[i] == src[i]; hists NULL or >= count * 256 counters. */
    imghist_status (*equalize_batch)(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *dst, size_t count,
                                     const imghist_counts *hists);
    /* equalize_batch of count images of src's and dst's shapes, src_stride
     * and dst_stride bytes apart (checked by the core, overlap included),
     * device memory only. NULL: the core makes the views. */
    imghist_status (*equalize_strided)(imghist_ctx *ctx, const imghist_view *src,
                                       ptrdiff_t src_stride, const imghist_view *dst,
                                       ptrdiff_t dst_stride, size_t count,
                                       const imghist_counts *hists);
    /* Equalization of count one-channel U8 or U16 device images of src's
     * and dst's shapes, src_stride and dst_stride bytes apart, each with its
     * own histogram counted where its mask (NULL: none; else mask's shape,
     * mask_stride apart, 0: one for all) is non-zero, as equalize does image
     * by image (an empty histogram: a copy). Checked by the core (overlaps
     * too); below 2^31 samples an image. NULL: the core goes image by image. */
    imghist_status (*equalize_strided_each)(imghist_ctx *ctx, const imghist_view *src,
                                            ptrdiff_t src_stride, const imghist_view *mask,
                                            ptrdiff_t mask_stride, const imghist_view *dst,
                                            ptrdiff_t dst_stride, size_t count,
                                            const imghist_counts *hists);
    /* equalize_strided_each's work on count device views src[i], dst[i] and
     * masks[i] (NULL: none) anywhere: every source of src[0]'s shape (pitch
     * too) and 16-byte phase, every destination of dst[0]'s, every mask of
     * masks[0]'s pitch (any phase). Checked by the core (overlaps too);
     * below 2^31 samples an image. NULL: the core goes image by image. */
    imghist_status (*equalize_views_each)(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *masks, const imghist_view *dst,
                                          size_t count, const imghist_counts *hists);
    /* count one-channel U8 or U16 host views src[i], dst[i] of one size each
     * (all of one type), masks NULL or one an image (none empty: checked),
     * equalized as equalize does each; hists NULL or >= count * 256 / 65536
     * counters. No device memory (the CPU backend); NULL: the core goes
     * image by image. */
    imghist_status (*equalize_each)(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *masks, const imghist_view *dst,
                                    size_t count, const imghist_counts *hists);
    /* CLAHE of one-channel U8 or U16 views src, dst of one size and type
     * (dst == src allowed), geometry from ih_clahe_geometry. Device views;
     * host views too on the CUDA backend. NULL: the core runs host views
     * itself (core/clahe.c). */
    imghist_status (*clahe)(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                            const struct ih_clahe_geom *geom);
    /* dst = lut[src] for one-channel U8 device views of one size (dst may be
     * src); lut is 256 host bytes. NULL without device memory. */
    imghist_status (*apply_lut)(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, const uint8_t *lut);
    /* Equalization of count one-channel U16 device views src[i] into dst[i]
     * of any shapes, pitches and alignments, masks NULL or one an image (any
     * pitch), without histograms, as equalize does each (an empty mask: a
     * copy). Checked by the core (overlaps too). *done 0: the backend does
     * not take these (too large, too few, or no room on this GPU) and wrote
     * nothing; the core goes image by image. NULL: never. (0.3.12) */
    imghist_status (*equalize16_small_views)(imghist_ctx *ctx, const imghist_view *src,
                                             const imghist_view *masks,
                                             const imghist_view *dst, size_t count,
                                             int *done);
};

/* A new context on `ops`, parameters at their defaults; NULL when out of memory. */
imghist_ctx *ih_ctx_new(const ih_backend_ops *ops);

/* Mutual information of a host joint histogram into host result[2]
 * (core/info.c): the definition the device code follows. 0 when empty. */
int ih_mutual_information_host(const uint64_t *joint, uint32_t bins_a, uint32_t bins_b,
                               double result[2]);

/* The backends this build has (src/cpu, src/cuda). */
extern const ih_backend_ops ih_cpu_backend;
extern const ih_backend_ops ih_cuda_backend; /* only in CUDA builds */
/* GPUs the CUDA runtime sees, 0 when it answers with an error (CUDA builds). */
int ih_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
