/*
 * N-dimensional histograms, colour conversion and back-projection
 * (imghist.h's section of that name): the resolved axes the core checks
 * and the backends count with, and the backends' entry points. The
 * per-sample bin rule here is the one the CPU loops and the CUDA lookup
 * tables are both built from.
 */
#ifndef IMGHIST_NDHIST_H
#define IMGHIST_NDHIST_H

#include "binning.h"
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ih_nd_axis {
    ih_binning bin;        /* uniform bins (edges NULL) */
    const double *edges;   /* bins + 1 explicit edges, or NULL */
    uint32_t bins;
    uint32_t channel;      /* of the (converted) pixel */
    int closed;            /* explicit edges: a sample equal to the last is in the last bin */
    int opencv;            /* IMGHIST_OPENCV_BINS: bin floor(v * t + u) on [lo, hi) */
    double lo, hi, t, u;
    size_t stride;         /* cells from one bin of this axis to the next */
} ih_nd_axis;

typedef struct ih_nd_job {
    uint32_t dims;
    ih_nd_axis ax[IMGHIST_MAX_DIMS];
    imghist_space space;
    imghist_dtype dtype;   /* of the source */
    uint32_t channels;     /* of the source */
    uint32_t sample_channels; /* of the pixel the axes read: 3 when converted */
    size_t cells;          /* product of the bins */
    size_t len;            /* counters per image: cells (+ 1 with outliers) */
    int accumulate, outliers;
} ih_nd_job;

/* The bin of v on axis a, or a->bins when it is in none (NaN included). */
static inline uint32_t ih_nd_bin(const ih_nd_axis *a, double v)
{
    if (a->opencv) {
        return ih_opencv_bin(a->lo, a->hi, a->t, a->u, a->bins, v);
    }
    if (a->edges == NULL) {
        const uint32_t i = ih_bin_of_double(&a->bin, v);
        return i < a->bins ? i : a->bins;
    }
    return ih_edges_bin(a->edges, a->bins, a->closed, v);
}

/* Resolve and check axes for sources of dtype with `channels` channels
 * (ctx may be NULL: no message). */
imghist_status ih_resolve_nd(imghist_ctx *ctx, const imghist_ndaxes *axes, imghist_dtype dtype,
                             uint32_t channels, ih_nd_job *job);

/* Image i of a checked view: its first sample, and its mask's (NULL: none). */
static inline const uint8_t *ih_image_at(const imghist_view *v, size_t i)
{
    return (const uint8_t *)v->data + (ptrdiff_t)i * v->image_stride;
}
static inline const uint8_t *ih_mask_at(const imghist_view *v, size_t i)
{
    if (v->mask == NULL) {
        return NULL;
    }
    return v->mask->count > 1 ? ih_image_at(v->mask, i) : (const uint8_t *)v->mask->data;
}

/* The CPU backend (src/cpu/cpu_ndhist.c): host views and counts, checked.
 * Integer lookup tables per axis: the offset of each value's bin in cells,
 * negative for none (U8: 256 entries an axis, U16: 65536). */
imghist_status ih_cpu_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const imghist_counts *out);
imghist_status ih_cpu_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, imghist_space space);
imghist_status ih_cpu_backproject(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const float *hist, float scale,
                                  const imghist_view *dst);
/* Fill lut (levels entries an axis, axis after axis) for an integer source. */
void ih_nd_luts(const ih_nd_job *job, uint32_t levels, int32_t *lut);

#if IH_HAVE_CUDA || defined(__CUDACC__) /* the .cu files that define them */
/* The CUDA backend (src/cuda/cuda_ndhist_ops.cu): device views. */
imghist_status ih_cuda_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                   const ih_nd_job *job, const imghist_counts *out);
imghist_status ih_cuda_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst, imghist_space space);
/* src/cuda/cuda_backproject_ops.cu: every source type; hist in host memory. */
imghist_status ih_cuda_backproject(imghist_ctx *ctx, const imghist_view *src,
                                   const ih_nd_job *job, const float *hist, float scale,
                                   const imghist_view *dst);
/* The same file: N-d histograms of U16 and F32 device images. */
imghist_status ih_cuda_histogramdd_wide(imghist_ctx *ctx, const imghist_view *src,
                                        const ih_nd_job *job, const imghist_counts *out);
#endif

#ifdef __cplusplus
}
#endif

#endif /* IMGHIST_NDHIST_H */
