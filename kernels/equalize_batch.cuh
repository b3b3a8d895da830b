/*
 * Launchers of the batched 8-bit equalization (host side, C++): many images
 * of any sizes, each with its own histogram and LUT, in one or two launches.
 */
#ifndef IMGHIST_EQUALIZE_BATCH_CUH
#define IMGHIST_EQUALIZE_BATCH_CUH

#include <cuda_runtime_api.h>

#include "granules.cuh"

/* One image of the batch (a device array of them is the descriptor). */
struct ih_eq_image {
    ih_geom src;        /* the source as granules */
    uint8_t *dst;
    size_t dst_pitch;
    uint32_t index;     /* its place in the caller's batch: histogram at hists + 256 * index */
    uint32_t same_phase; /* dst rows share the source rows' 16-byte phase: whole
                            granules are stored with one 16-byte store */
};

struct ih_eq_batch_launch {
    /* Images whose granules fit in shared memory: one block each, read once. */
    const ih_eq_image *small;
    uint32_t n_small;
    uint32_t small_bytes;           /* shared memory for the largest one's granules */
    /* The others: counted by a persistent grid over their chunks numbered back
     * to back, then looked up. */
    const ih_eq_image *large;
    const uint32_t *chunk_start;    /* n_large + 1 entries */
    uint32_t n_large;
    uint32_t count_run, apply_run;  /* chunks per run of each launch */
    int count_grid, apply_grid;
    unsigned long long *ws;         /* n_large * 256 counters, zero, left zero */
    unsigned int *tickets;          /* n_large, zero, left zero */
    unsigned char *luts;            /* n_large * 256 LUT bytes */
    unsigned long long *hists;      /* NULL, or 256 device counters per image of the batch */
    bool pil;                       /* PIL's rule, not OpenCV's */
    /* A uniform batch (every image of one geometry, at fixed strides, and
     * all of them small or all large) travels in the launch itself: small,
     * large and chunk_start are not read; image i is `one` with its source
     * and destination moved i times the strides, and index i; a large one
     * has per_image chunks. So does a single small image (strides 0). */
    bool uniform;
    ih_eq_image one;
    long long src_stride, dst_stride;
    uint32_t per_image;
};

/* Queue the batch: the large images' counts (when there are any), then one
 * launch with the small images and the large images' lookups. */
cudaError_t ih_launch_equalize_batch(const ih_eq_batch_launch &l, cudaStream_t stream);

/* Per device, once: the most granule bytes an image may have to go the
 * one-block way (*small_max, 0 for none), and the blocks per SM of the count
 * and lookup kernels. */
cudaError_t ih_equalize_batch_setup(uint32_t *small_max, int *count_bps, int *apply_bps);

#endif
