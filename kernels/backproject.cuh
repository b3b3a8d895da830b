/*
 * Launchers of the back-projection kernel (host side, C++): cv2.calcBackProject
 * on device images, bit for bit with the CPU reference (cpu/cpu_ndhist.c),
 * and of the count that finds its cells the same way (16-bit and float N-d
 * histograms). The launchers only enqueue work on `stream`.
 */
#ifndef IMGHIST_BACKPROJECT_CUH
#define IMGHIST_BACKPROJECT_CUH

#include <cuda_runtime_api.h>

#include "binning.h"
#include "colorspace.h"

/* How a float sample is binned on one axis: core/ndhist.h's ih_nd_axis
 * with its edges in device memory. */
struct ih_bp_axis {
    ih_binning bin;        /* uniform bins (edges NULL) */
    const double *edges;   /* bins + 1 edges, device memory, or NULL */
    uint32_t bins, channel, stride;
    int closed, opencv;
    double lo, hi, t, u;
};

/* How the cell of a pixel is found. */
enum ih_bp_mode {
    IH_BP_TABLES_U8 = 0,   /* 8-bit samples through tables of 256 offsets */
    IH_BP_TABLES_U16,      /* 16-bit samples through tables of 65536 offsets */
    IH_BP_CONVERTED,       /* 8-bit pixels converted, then tables of 256 */
    IH_BP_FLOAT            /* float samples binned axis by axis */
};

/* A batch of images and how to back-project it. */
struct ih_bp_kjob {
    const uint8_t *src;    /* image 0 */
    size_t pitch;
    ptrdiff_t image_stride;
    uint32_t width, height, channels, count;
    uint8_t *dst;          /* one channel of the source's type */
    size_t dst_pitch;
    ptrdiff_t dst_stride;
    ih_bp_mode mode;
    /* Tables: one per channel read, chan[k] naming it; an entry is the sum
     * of the offsets (bin * stride) of the axes reading that channel,
     * negative for a value in no bin. */
    const int32_t *lut;    /* nread * levels entries, device memory */
    uint32_t nread, chan[4];
    imghist_space space;
    const ih_color_tables *tables; /* device memory; IH_BP_CONVERTED only */
    uint32_t dims;
    ih_bp_axis ax[4];      /* IH_BP_FLOAT only */
    const float *hist;     /* cells floats, device memory */
    uint32_t cells;
    float scale;
};

/* Enqueue the back-projection of job; sm_count sizes the grid. */
cudaError_t ih_launch_backproject(const ih_bp_kjob &job, int sm_count, cudaStream_t stream);

/* Counting with the same cells: the N-d histogram of 16-bit and float
 * images (IH_BP_TABLES_U16, IH_BP_FLOAT; dst, hist and scale unused). */
struct ih_bp_count {
    const uint8_t *mask;       /* NULL: none; else mask i at mask + i * mask_stride */
    size_t mask_pitch;
    ptrdiff_t mask_stride;
    unsigned long long *out;   /* image i's counters at out + i * len, added to */
    size_t len;
    int outliers;              /* count pixels in no cell at out[cells] */
};

/* Enqueue the count of job into c.out; sm_count sizes the grid. */
cudaError_t ih_launch_nd_count(const ih_bp_kjob &job, const ih_bp_count &c, int sm_count,
                               cudaStream_t stream);

#endif /* IMGHIST_BACKPROJECT_CUH */
