/*
 * Launchers of the N-dimensional histogram and colour-conversion kernels
 * (host side, C++). Every launcher only enqueues work on `stream`. Samples
 * are 8-bit: each axis bins a byte through a 256-entry table of cell
 * offsets (negative: in no bin) that the host builds with the CPU's rule
 * (core/ndhist.h), so both backends give the same cells.
 */
#ifndef IMGHIST_NDHIST_CUH
#define IMGHIST_NDHIST_CUH

#include <cuda_runtime_api.h>

#include "colorspace.h"

/* A batch of 8-bit images and how to count them. */
struct ih_nd_kjob {
    const uint8_t *data;       /* image 0 */
    size_t pitch;
    ptrdiff_t image_stride;
    uint32_t width, height, channels, count;
    const uint8_t *mask;       /* NULL: none; else mask i at mask + i * mask_stride */
    size_t mask_pitch;
    ptrdiff_t mask_stride;
    uint32_t dims;
    uint32_t ch[4];            /* channel of the (converted) pixel each axis reads */
    const int32_t *lut;        /* dims * 256 cell offsets, device memory */
    imghist_space space;
    const ih_color_tables *tables; /* device memory; NULL without a conversion */
    unsigned long long *out;   /* image i's counters at out + i * len, added to */
    size_t len;
    uint32_t cells;
    int outliers;              /* count pixels in no cell at out[cells] */
    int shift_ok;              /* table c of every channel is (v >> shift[c]) * mult[c] */
    uint32_t shift[4], mult[4];
};

/* Enqueue the count of job; sm_count sizes the grid. */
cudaError_t ih_launch_ndhist(const ih_nd_kjob &job, int sm_count, cudaStream_t stream);

/* Enqueue dst = convert(src) for count images (dst: 3 channels). */
cudaError_t ih_launch_cvt_color(const uint8_t *src, size_t src_pitch, ptrdiff_t src_stride,
                                uint32_t channels, uint8_t *dst, size_t dst_pitch,
                                ptrdiff_t dst_stride, uint32_t width, uint32_t height,
                                uint32_t count, imghist_space space,
                                const ih_color_tables *tables, cudaStream_t stream);

#endif /* IMGHIST_NDHIST_CUH */
