/* CLAHE on the device (kernels/clahe.cu): the same geometry and arithmetic
 * as core/clahe.c, bit for bit. */
#ifndef IMGHIST_KERNELS_CLAHE_CUH
#define IMGHIST_KERNELS_CLAHE_CUH

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "clahe.h"

/* Queue CLAHE of one device image (U8 when levels == 256, else U16) on
 * stream: tile histograms into hist (tiles * levels int32, zeroed here),
 * clipping and LUTs into lut (tiles * levels entries), then the blend into
 * dst. Returns the first launch error. */
cudaError_t ih_clahe_launch(const void *src, size_t src_pitch, void *dst, size_t dst_pitch,
                            const ih_clahe_geom *g, int32_t *hist, void *lut, int sm_count,
                            cudaStream_t stream);

#endif
