/*
 * NPP's nppiHistogramEven_8u_C1R_Ctx, loaded at run time with dlopen so that
 * building the benchmark does not need NPP (the GPU machines have it, the build
 * machines need not). The few declarations needed are written out here.
 */
#ifndef IMGHIST_BENCH_NPP_H
#define IMGHIST_BENCH_NPP_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Load libnppist / libnppc and resolve the functions. Returns 1 when NPP can
 * be used; either way *note gets a one-line description (library and version,
 * or why not). */
int bench_npp_load(const char **note);

/* Scratch bytes nppiHistogramEven needs for a width x height ROI and 257
 * levels; returns the NppStatus (negative: error). */
int bench_npp_buffer_size(int width, int height, size_t *bytes, cudaStream_t stream);

/* 256-bin histogram (levels 0..256) of a width x height ROI with `step` bytes
 * per row into 256 int counters, on `stream`. Returns the NppStatus. */
int bench_npp_histogram(const uint8_t *src, int step, int width, int height, int *hist,
                        uint8_t *buffer, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
