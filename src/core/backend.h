/*
 * The seam between the core and the backends. A backend is a table of
 * operations; the core checks every argument before it calls one, so a
 * backend sees only valid views (one U8 channel), resolved specs and counts
 * long enough. The composition root (src/create.c) chooses the table.
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

struct ih_backend_ops {
    imghist_backend id;
    int device_memory; /* takes IMGHIST_MEM_DEVICE views and counts */
    imghist_status (*open)(imghist_ctx *ctx);
    void (*close)(imghist_ctx *ctx);
    imghist_status (*set_stream)(imghist_ctx *ctx, imghist_stream stream);
    imghist_status (*get_stream)(const imghist_ctx *ctx, imghist_stream *stream);
    imghist_status (*histogram)(imghist_ctx *ctx, const imghist_view *src,
                                const ih_hist_job *job, const imghist_counts *out);
    /* Device views only (host batches go image by image through histogram);
     * image i's bins at out->data + i * job->bins. NULL without device memory. */
    imghist_status (*histogram_batch)(imghist_ctx *ctx, const imghist_view *src, size_t count,
                                      const ih_hist_job *job, const imghist_counts *out);
    /* src and dst of one size, in one memory; hist NULL or >= 256 counters. */
    imghist_status (*equalize)(imghist_ctx *ctx, const imghist_view *src,
                               const imghist_view *dst, const imghist_counts *hist);
};

/* A new context on `ops`, parameters at their defaults; NULL when out of memory. */
imghist_ctx *ih_ctx_new(const ih_backend_ops *ops);

/* The backends this build has (src/cpu, src/cuda). */
extern const ih_backend_ops ih_cpu_backend;
extern const ih_backend_ops ih_cuda_backend; /* only in CUDA builds */

#ifdef __cplusplus
}
#endif

#endif
