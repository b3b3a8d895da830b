/* The CUDA backend's histogram comparisons (cuda_compare_ops.cu), the
 * backend's `compare` slot. */
#ifndef IMGHIST_CUDA_COMPARE_H
#define IMGHIST_CUDA_COMPARE_H

#include "backend.h"

imghist_status ih_cuda_compare(imghist_ctx *ctx, const imghist_hists *query,
                               const imghist_hists *set, imghist_compare_method method,
                               double *out, imghist_mem out_mem);

#endif
