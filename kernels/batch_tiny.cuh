/*
 * Launcher of the tiny-image batch kernel (host side, C++): a batch laid out
 * as a tensor (one geometry at fixed strides) of images of a few KB, one warp
 * per image, for histograms and for 8-bit equalization.
 */
#ifndef IMGHIST_BATCH_TINY_CUH
#define IMGHIST_BATCH_TINY_CUH

#include <cuda_runtime_api.h>

#include "granules.cuh"

struct ih_tiny_launch {
    ih_geom g0;               /* image 0; image i is it moved i * stride bytes */
    long long stride;
    uint32_t count;
    unsigned long long *hists; /* NULL (equalization only), or 256 device counters an image */
    bool accumulate;          /* add into hists instead of writing them */
    bool equalize;            /* look the image up through its LUT into dst */
    bool pil;                 /* the LUT by PIL's rule, not OpenCV's */
    uint8_t *dst0;            /* image 0's destination (equalize) */
    size_t dst_pitch;
    long long dst_stride;
    bool same_phase;          /* dst rows share the source rows' 16-byte phase */
    int grid;                 /* blocks (a persistent grid over the images) */
};

/* Warps a block of the kernel holds (one image each at a time). */
#define IH_TINY_WARPS 8

cudaError_t ih_launch_batch_tiny(const ih_tiny_launch &l, cudaStream_t stream);

/* Blocks per SM the kernel reaches (occupancy), for sizing its grid. */
cudaError_t ih_batch_tiny_blocks_per_sm(int *bps);

#endif
