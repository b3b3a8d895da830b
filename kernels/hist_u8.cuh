/* Launchers of the 8-bit histogram and LUT kernels (host side, C++). */
#ifndef IMGHIST_HIST_U8_CUH
#define IMGHIST_HIST_U8_CUH

#include <cuda_runtime_api.h>

#include "granules.cuh"

/* Threads per block of the histogram and LUT-apply kernels, and granules a
 * block takes per step (4 16-byte loads in flight per thread). */
#define IH_HIST_THREADS 512
#define IH_HIST_CHUNK (IH_HIST_THREADS * 4)

/* Copies of the global workspace: block b adds into copy b % IH_WS_COPIES, so
 * that the per-block merges of a small image do not all queue on the same
 * 256 addresses in L2. */
#define IH_WS_COPIES 8

struct ih_hist_launch {
    int grid;                       /* blocks; the kernel loops over chunks */
    unsigned long long *ws;         /* IH_WS_COPIES * 256 zeroed counters, left zeroed */
    unsigned int *counter;          /* zero, left zero */
    unsigned long long *hist_out;   /* final 256 counts (device) */
    unsigned char *lut_out;         /* NULL, or 256 bytes of equalization LUT (device) */
    bool accumulate;                /* add to hist_out's counts instead of overwriting them */
    bool finalize;                  /* last band of the image: produce hist_out/lut_out */
    bool pil;                       /* the LUT by PIL's rule, not OpenCV's */
};

/* Histogram of one band of granules; see ih_hist_launch. */
cudaError_t ih_launch_hist_u8(const ih_geom &g, const ih_hist_launch &l, cudaStream_t stream);

/* The images of a batch: device descriptors, or one geometry repeated. */
struct ih_batch_images {
    const ih_geom *geoms;        /* device, one per image, */
    const uint32_t *chunk_start; /* and their chunks numbered back to back (count + 1); */
    /* or, with both NULL, a uniform batch: image i is image 0 moved i * stride
     * bytes, per_image chunks each. */
    ih_geom g0;
    long long stride;
    uint32_t per_image;
};

/* Histograms of many images in one persistent launch: image i is written to
 * hists[256*i] (device) when ws is given (count * 256 counters and count
 * tickets, device, zero before and left zero; every image must have a chunk),
 * and added into it when ws is NULL. Blocks take runs of `run` chunks in
 * turn. */
cudaError_t ih_launch_hist_u8_batch(const ih_batch_images &imgs, uint32_t count, uint32_t run,
                                    int grid, unsigned long long *hists, unsigned long long *ws,
                                    unsigned int *tickets, cudaStream_t stream);

/* dst = lut[src] over an image; `lut` is 256 device bytes, 4-byte aligned. */
cudaError_t ih_launch_apply_lut(const ih_geom &src, uint8_t *dst, size_t dst_pitch,
                                const unsigned char *lut, int grid, cudaStream_t stream);

/* Which batch kernels to use on this GPU, as built for it: *writes, whether
 * the launch should be given a workspace, to write its counts (only where
 * the writing kernel spills no registers: sm_90 has none; sm_80 to sm_89
 * spill some, and there the counts are cleared and added into, which costs
 * less than the spills); *uniform, whether a uniform batch may go without descriptors
 * (only where the uniform kernel of that mode spills nothing either). */
cudaError_t ih_batch_kernels(bool *writes, bool *uniform);

/* Blocks per SM the kernels reach (occupancy), for sizing persistent grids. */
cudaError_t ih_hist_blocks_per_sm(int *hist, int *batch, int *apply);

#endif
