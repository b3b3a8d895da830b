/*
 * The seam between the core and the backends. A backend is a table of
 * operations; the core checks every argument before it calls one, so a
 * backend sees only valid views, resolved specs and counts long enough. The
 * composition root (src/create.c) chooses the table.
 */
#ifndef IMGHIST_BACKEND_H
#define IMGHIST_BACKEND_H

#include <stdbool.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal status: the CUDA backend had no GPU memory for a host image; the
 * core runs the call on ctx->fallback instead and says so in the note. */
#define IH_E_GPU_OOM ((imghist_status)100)

struct ih_clahe_geom;

/* The images of a call, checked by the core: one image, a list of views, or
 * a tensor (image i of src[0] at i * src_stride bytes from it; likewise
 * dst[0] and masks[0], mask_stride 0: one mask for all). src, dst and masks
 * hold count views for a list and one for the others; dst is NULL for
 * counting, masks NULL where no image has one. Tensors come in device
 * memory only (the core passes host ones as their lists). */
typedef enum ih_batch_kind { IH_ONE, IH_LIST, IH_TENSOR } ih_batch_kind;
typedef struct ih_batch {
    ih_batch_kind kind;
    size_t count;
    const imghist_view *src, *dst, *masks;
    ptrdiff_t src_stride, dst_stride, mask_stride;
} ih_batch;

/* A backend: one slot per operation, each choosing its own route. */
struct ih_backend_ops {
    imghist_backend id;
    int device_memory; /* takes IMGHIST_MEM_DEVICE views and counts */
    imghist_status (*open)(imghist_ctx *ctx);
    void (*close)(imghist_ctx *ctx);
    /* NULL: the backend has no stream (IMGHIST_E_UNSUPPORTED). */
    imghist_status (*set_stream)(imghist_ctx *ctx, imghist_stream stream);
    imghist_status (*get_stream)(const imghist_ctx *ctx, imghist_stream *stream);
    /* Histograms of b's images, one job each (views of job->channels
     * channels, one type and memory); image i's counters at out->data + i *
     * job->len, written or, with job->accumulate, added to. A list or tensor
     * of host views on a device backend is the backend's to split. */
    imghist_status (*histogram)(imghist_ctx *ctx, const ih_batch *b, const ih_hist_job *job,
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
    /* Equalization of b's one-channel images of `levels` (256: U8, 65536:
     * U16) levels by ctx->eq_method, each with its own histogram counted
     * where its mask is non-zero (an empty one on a device: a copy); hists
     * NULL or count * levels counters. No overlap but dst[i] == src[i]. */
    imghist_status (*equalize)(imghist_ctx *ctx, const ih_batch *b, const imghist_counts *hists,
                               size_t levels);
    /* CLAHE of b's one-channel U8 or U16 images, all of geom's size and one
     * type (dst[i] == src[i] allowed, no other overlap), geometry from
     * ih_clahe_geometry. Tensors in device memory only. */
    imghist_status (*clahe)(imghist_ctx *ctx, const ih_batch *b,
                            const struct ih_clahe_geom *geom);
    /* dst = lut[src] for one-channel U8 views of one size (dst may be src);
     * lut is 256 host bytes. */
    imghist_status (*apply_lut)(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, const uint8_t *lut);
    /* Checked histogram comparisons (core/compare.c): query NULL for every
     * pair of set, else query against each. NULL: the core computes host
     * ones itself and refuses device memory. */
    imghist_status (*compare)(imghist_ctx *ctx, const imghist_hists *query,
                              const imghist_hists *set, imghist_compare_method method,
                              double *out, imghist_mem out_mem);
};

/* The one fallback. After a call on the context's backend returned *st: the
 * backend to run it again on, when *st is IH_E_GPU_OOM and all the call's
 * memory (src, and counts unless NULL) is host memory: the CPU, said in the
 * note. Else NULL, with *st what the call returns (out of GPU memory:
 * IMGHIST_E_CUDA). */
const ih_backend_ops *ih_fallback_for(imghist_ctx *ctx, imghist_status *st,
                                      const imghist_view *src, const imghist_counts *counts);
/* One image's histogram (job set) or equalization (job NULL, levels set)
 * on the context's backend, run again on the fallback when ih_fallback_for
 * names one. */
typedef struct ih_one {
    ih_batch image;
    const ih_hist_job *job;
    const imghist_counts *counts;
    size_t levels;
} ih_one;
imghist_status ih_dispatch_one(imghist_ctx *ctx, const ih_one *c);
/* Image by image, each as a one-image call on the context's backend with
 * the fallback of one (a device backend's route for lists it has no batch
 * for). Equalization failures name the image. */
imghist_status ih_histogram_each(imghist_ctx *ctx, const ih_batch *b, const ih_hist_job *job,
                                 const imghist_counts *out);
imghist_status ih_equalize_each(imghist_ctx *ctx, const ih_batch *b, const imghist_counts *hists,
                                size_t levels);
/* Whether count views lie at one stride from each other (*stride, any
 * sign, as an unsigned difference): a tensor passed as views. */
bool ih_views_progression(const imghist_view *v, size_t count, uintptr_t *stride);

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
