/* CLAHE on the device (kernels/clahe.cu): the same geometry and arithmetic
 * as core/clahe.c, bit for bit, for a batch of images of one shape. */
#ifndef IMGHIST_KERNELS_CLAHE_CUH
#define IMGHIST_KERNELS_CLAHE_CUH

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "clahe.h"

/* count device images of the geometry's size: image i's sample (x, y) at
 * src + i * src_stride + y * src_pitch + x * sample size (dst likewise). */
typedef struct ih_clahe_images {
    const void *src;
    size_t src_pitch;
    ptrdiff_t src_stride;
    void *dst;
    size_t dst_pitch;
    ptrdiff_t dst_stride;
    size_t count;
} ih_clahe_images;

/* The most images of one set of launches: count * tiles blocks a launch. */
size_t ih_clahe_max_images(const ih_clahe_geom *g);
/* Bytes of workspace ih_clahe_launch needs for count images; 0 when that
 * overflows or count is over ih_clahe_max_images. */
size_t ih_clahe_workspace(const ih_clahe_geom *g, size_t count, int sm_count);

/* Queue CLAHE of the images (U8 when levels == 256, else U16) on stream,
 * three launches whatever the count: the tile histograms of every image,
 * clipping and the LUTs of every tile, then the blend of every pixel. ws
 * holds ih_clahe_workspace(g, im->count, sm_count) bytes. Returns the first
 * launch error. */
cudaError_t ih_clahe_launch(const ih_clahe_images *im, const ih_clahe_geom *g, void *ws,
                            int sm_count, cudaStream_t stream);

#endif
