/*
 * Equalization beyond the 8-bit path's single launch (host side, C++): the
 * lookup table of a histogram already in device memory, 256 or 65536 levels,
 * and the 16-bit lookup. Launchers only enqueue work on `stream`.
 */
#ifndef IMGHIST_EQUALIZE_WIDE_CUH
#define IMGHIST_EQUALIZE_WIDE_CUH

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

/* Equalization LUT of `levels` (256 or 65536) 64-bit counts (device) into lut
 * (levels bytes for 256, levels uint16 for 65536; device): imghist_equalize_lut
 * (imghist_equalize_lut_pil when pil, 256 levels only) and
 * imghist_equalize_lut_u16 bit for bit. An empty histogram gives the identity
 * (the image is copied) and sets *empty (device int, NULL: not reported) to
 * 1, else 0. 256 levels: one block. 65536 levels (OpenCV's rule only) need
 * scratch, IH_LUT16_SCRATCH_BYTES of device memory: two launches of 64
 * blocks. Anything else: cudaErrorInvalidValue. */
#define IH_LUT16_SCRATCH_BYTES (2 * 64 * 8)
cudaError_t ih_launch_equalize_lut(const unsigned long long *hist, uint32_t levels, void *lut,
                                   int *empty, bool pil, unsigned long long *scratch,
                                   cudaStream_t stream);

/* dst = lut[src] over width x height 16-bit samples (device views, any
 * alignment; dst may be src at the same pitch). lut: 65536 device uint16. */
cudaError_t ih_launch_apply_lut16(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                  size_t dst_pitch, uint32_t width, uint32_t height,
                                  const uint16_t *lut, int sm_count, cudaStream_t stream);

#endif
