/*
 * The benchmarks' checks: a failed CUDA or imghist call prints where and why,
 * and exits (a benchmark has nothing sensible to go on with).
 */
#ifndef IMGHIST_BENCH_CHECK_H
#define IMGHIST_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(e_), cudaGetErrorName(e_));                          \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define IH_CHECK(ctx, call)                                                                 \
    do {                                                                                    \
        imghist_status s_ = (call);                                                         \
        if (s_ != IMGHIST_OK) {                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                    imghist_last_error(ctx));                                               \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#endif
