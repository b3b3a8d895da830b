/*
 * Launchers of the wide histogram kernels (host side, C++): U8, U16 and F32
 * samples, 1..4 interleaved channels, any bins and ranges (binning.h), masks
 * and outliers. The 8-bit, 256-bin, one-channel, unmasked path stays in
 * hist_u8.cu.
 */
#ifndef IMGHIST_HIST_WIDE_CUH
#define IMGHIST_HIST_WIDE_CUH

#include <cuda_runtime_api.h>

#include "core.h"

/* Where a launch keeps its counters. */
enum ih_wide_store {
    IH_WIDE_S32 = 0, /* shared memory, 32-bit counters, `copies` copies per block */
    IH_WIDE_S16 = 1, /* shared memory, two 16-bit counters per word, one copy */
    IH_WIDE_GLOBAL = 2 /* straight into the 64-bit target, warp-aggregated */
};

/* One band of rows of a device view (and its mask) for one launch. */
struct ih_wide_band {
    const uint8_t *base;   /* first sample of the first row */
    size_t pitch;          /* bytes */
    uint32_t width, rows;  /* pixels, rows */
    const uint8_t *mask;   /* NULL, or the mask's first byte of the band */
    size_t mask_pitch;
};

/* How the counts of a job are kept on this GPU (ih_wide_plan). */
struct ih_wide_plan_t {
    int store;             /* ih_wide_store */
    int copies;            /* IH_WIDE_S32: power of two, 1..32 */
    int table;             /* F32: edge table in shared memory */
    size_t smem;           /* dynamic shared bytes per block */
    int threads;
    int grid;              /* persistent grid (blocks) */
};

/* Choose the store, copies and grid of a job on the current device.
 * blocks_per_sm: 0 for the default, else the wanted blocks per SM of the
 * shared 32-bit path (IMGHIST_P_EXP_HIST_BLOCKS_PER_SM). */
cudaError_t ih_wide_plan(const ih_hist_job *job, int sm_count, int blocks_per_sm,
                         ih_wide_plan_t *plan);

/* Add the counts of one band into target (job->len device counters; the
 * caller zeroes them for a fresh histogram). Only enqueues work on stream. */
cudaError_t ih_wide_launch(const ih_wide_band &band, const ih_hist_job &job,
                           const ih_wide_plan_t &plan, unsigned long long *target,
                           cudaStream_t stream);

/* Whether `count` images of band's shape (and masks of its mask's, if any,
 * mask_stride bytes apart), img_stride bytes apart, go in one launch
 * (ih_wide_launch_batch): a stride that is a multiple of 16 bytes, samples
 * on their own alignment, a store with batch kernels (S32 and global; S16
 * for 16-bit samples binned by a shift: without a mask, or the natural
 * histogram with masks as packed as the images and in step with them), and
 * each image under IH_MAX_GRANULES granules. */
bool ih_wide_batchable(const ih_wide_band &band, const ih_hist_job &job,
                       const ih_wide_plan_t &plan, long long img_stride, long long mask_stride);

/* The counts of count images (ih_wide_batchable), image i's job.len counters
 * at target + i * job.len: written, or added to with job.accumulate (the
 * target needs no zeroing); with band.mask, image i's mask at band.mask + i
 * * mask_stride (any stride, 0 too). Packed unmasked images of at most
 * tiny_bytes bytes go one warp an image where the job allows (a lean kind,
 * no outlier counters, few counters). views: NULL, or a device array of
 * 2 * count pointers, image i's first row and its mask's (images of band's
 * shape anywhere, each with band.base's 16-byte phase; the strides then
 * only say whether the masks keep band.mask's phase: ih_wide_batchable's
 * rule, 0 where they do); no tiny kernel then. Only enqueues work on
 * stream. */
cudaError_t ih_wide_launch_batch(const ih_wide_band &band, size_t count, long long img_stride,
                                 long long mask_stride, const ih_hist_job &job,
                                 const ih_wide_plan_t &plan, uint64_t tiny_bytes,
                                 unsigned long long *target, cudaStream_t stream,
                                 const unsigned long long *views = nullptr);

/* Finite min / max of a band where the mask is set, folded into keys[0]
 * (min) and keys[1] (max), order-preserving 32-bit encodings of floats;
 * ih_wide_range_init sets them to "none". */
cudaError_t ih_wide_range_init(unsigned int *keys, cudaStream_t stream);
cudaError_t ih_wide_range_launch(const ih_wide_band &band, imghist_dtype dtype,
                                 uint32_t channels, unsigned int *keys, int sm_count,
                                 cudaStream_t stream);
/* keys (host copy) -> doubles; 0 when no finite sample was seen. */
int ih_wide_range_decode(const unsigned int keys[2], double *lo, double *hi);

#endif
