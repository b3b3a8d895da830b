/*
 * Launchers of the histogram-comparison kernels (host side, C++): OpenCV's
 * compareHist methods and the 1-D EMD as core/compare.c defines them, in its
 * order of operations and with no fused multiply-add, so that every method
 * but KL_DIV (whose log is CUDA's) gives the CPU's bits. Every launcher only
 * enqueues work on `stream`.
 */
#ifndef IMGHIST_COMPARE_CUH
#define IMGHIST_COMPARE_CUH

#include <cuda_runtime_api.h>

#include "imghist.h"

/* One histogram's own sums (core/compare.h's ih_cmp_row). */
struct ih_cmp_dev_row {
    double s1, s11;
};

/* n histograms of `bins` values of `type`, histogram i at src + i * stride
 * bytes, into doubles at dst, bin major: bin j of histogram i at j * n + i
 * (U64 counts rounded to float first). */
cudaError_t ih_launch_cmp_convert(const void *src, imghist_hist_type type, size_t stride,
                                  size_t n, size_t bins, double *dst, cudaStream_t stream);
/* Each histogram's ih_cmp_dev_row for `method`; for EMD its values are
 * replaced by its normalised cumulative sums. */
cudaError_t ih_launch_cmp_rows(double *v, size_t n, size_t bins, imghist_compare_method method,
                               ih_cmp_dev_row *rows, cudaStream_t stream);
/* out[i] = d(q, v[i]) for n rows. */
cudaError_t ih_launch_cmp_many(const double *q, const ih_cmp_dev_row *qrow, const double *v,
                               const ih_cmp_dev_row *rows, size_t n, size_t bins,
                               imghist_compare_method method, bool float_steps, double *out,
                               cudaStream_t stream);
/* out[i * n + j] = d(v[i], v[j]) for every pair, in 64 x 64 tiles. */
cudaError_t ih_launch_cmp_all(const double *v, const ih_cmp_dev_row *rows, size_t n, size_t bins,
                              imghist_compare_method method, bool float_steps, double *out,
                              cudaStream_t stream);

#endif
