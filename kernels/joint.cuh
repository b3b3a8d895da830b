/*
 * Launchers of the joint-histogram and mutual-information kernels (host
 * side, C++). Every launcher only enqueues work on `stream`.
 *
 * Counting kernels add into 64-bit counters in device memory (zero them first
 * for a fresh histogram); they never read the counters, so the caller decides
 * between overwriting and accumulating.
 */
#ifndef IMGHIST_JOINT_CUH
#define IMGHIST_JOINT_CUH

#include <cuda_runtime_api.h>

#include "binning.h"
#include "imghist.h"

/* Threads per block of the shared-memory counting kernels. */
#define IH_JOINT_THREADS 1024

/* Most counters a block keeps in shared memory: 65536 16-bit halves in
 * 32-bit words (128 KiB) and, past the cells, the outlier counter. */
#define IH_JOINT_SHARED_KEYS 65537u

/* One device image (a, b or a mask) as the counting kernels see it. */
struct ih_jimg {
    const uint8_t *data;
    size_t pitch;
    imghist_dtype dtype;
};

/*
 * A count over width x height pixels of two images. Pixel (x, y) has the key
 * of its joint cell i * bins_b + j, or `cells` (an outlier, counted only when
 * outliers is set). Pixels whose mask byte is 0 are skipped.
 */
struct ih_joint_job {
    ih_jimg a, b, mask;   /* mask.data NULL: no mask */
    uint32_t width, height;
    ih_binning ba, bb;
    uint32_t cells;       /* bins_a * bins_b */
    int outliers;         /* count pixels in no cell at out[cells] */
    int natural_u8_pair;  /* a, b U8 with one bin per value: key = a << 8 | b */
};

/* Enqueue the count of `job` into out[0 .. cells (+1)), added to. sm_count
 * sizes the grid. */
cudaError_t ih_launch_joint_count(const ih_joint_job &job, unsigned long long *out, int sm_count,
                                  cudaStream_t stream);

/*
 * Mutual information of a bins_a x bins_b joint histogram (device, 64-bit)
 * into result[0] = MI bits, result[1] = NMI (device doubles); NaN for an empty
 * histogram. ws: the workspace of ih_mi_workspace_bytes(bins_b) bytes, zero
 * before the first launch; every launch leaves it zero.
 */
size_t ih_mi_workspace_bytes(uint32_t bins_b);
cudaError_t ih_launch_mutual_information(const unsigned long long *joint, uint32_t bins_a,
                                         uint32_t bins_b, void *ws, double *result,
                                         int sm_count, cudaStream_t stream);

#endif
