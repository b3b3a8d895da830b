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
 * with IMGHIST_EQ_OPENCV (IMGHIST_EQ_PIL when pil, 256 levels only) bit for
 * bit. An empty histogram gives the identity
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

/* The LUTs of `count` histograms (levels counts each, one after another in
 * hists) into luts (count LUTs, one after another), as
 * ih_launch_equalize_lut makes each (an empty histogram gives the identity);
 * 65536 levels need IH_LUT16_SCRATCH_BYTES of scratch an image (48 images
 * and more take a block an image instead, and no scratch). */
cudaError_t ih_launch_equalize_lut_batch(const unsigned long long *hists, uint32_t levels,
                                         void *luts, uint32_t count, bool pil,
                                         unsigned long long *scratch, cudaStream_t stream);

/* The natural 16-bit histograms of `count` images of width x height samples
 * (below 2^31), image i at src + i * src_stride, added to counts + i * 65536
 * (zeroed by the caller); mask NULL or image i's at mask + i * mask_stride (a
 * sample counted where its byte is not 0). With ptrs (device memory, NULL:
 * the strides) image i is at ptrs[2 i] and its mask, where mask is not NULL,
 * at ptrs[2 i + 1]. Global atomics: for single
 * images of up to IH_HIST16_GLOBAL_MAX samples, where a block's 65536
 * private counters cost more to clear and fold than the image to count, and
 * tensors of such images that the batch kernels do not take. */
#define IH_HIST16_GLOBAL_MAX (UINT64_C(1) << 20)
cudaError_t ih_launch_hist16_batch(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                   const uint8_t *mask, ptrdiff_t mask_stride, size_t mask_pitch,
                                   uint32_t width, uint32_t height, unsigned long long *counts,
                                   uint32_t count, const unsigned long long *ptrs, int sm_count,
                                   cudaStream_t stream);

/* The 16-bit equalization (OpenCV's rule, 65536 levels) of `count` images
 * of width x height samples, at most IH_EQ16_SMALL_MAX, a block an image:
 * histogram, LUT and lookups in shared memory, no counts or LUTs in global
 * memory. Image i at src + i * src_stride, dst + i * dst_stride, its mask
 * (NULL: none) at mask + i * mask_stride. An empty mask copies the image.
 * Needs more than 128 KiB of shared memory a block
 * (ih_equalize16_small_fits). dst may be src. */
#define IH_EQ16_SMALL_MAX (UINT64_C(1) << 16)
cudaError_t ih_launch_equalize16_small(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                       const uint8_t *mask, ptrdiff_t mask_stride,
                                       size_t mask_pitch, uint8_t *dst, ptrdiff_t dst_stride,
                                       size_t dst_pitch, uint32_t width, uint32_t height,
                                       uint32_t count, int sm_count, cudaStream_t stream);
/* Whether images of width x height samples take ih_launch_equalize16_small
 * on the current device. */
bool ih_equalize16_small_fits(uint64_t width, uint64_t height);

/* One image of a batch of views of shapes of their own for
 * ih_launch_equalize16_views (device addresses; mask 0: none); made by
 * ih_eq16_describe. */
typedef struct ih_eq16_view {
    unsigned long long src, dst, mask;
    unsigned long long src_pitch, dst_pitch, mask_pitch;
    uint32_t width, samples, div_mul, div_shift; /* the rows' fast division */
} ih_eq16_view;
void ih_eq16_describe(ih_eq16_view *v, const void *src, size_t src_pitch, const void *mask,
                      size_t mask_pitch, void *dst, size_t dst_pitch, uint32_t width,
                      uint32_t height);
/* ih_launch_equalize16_small's work on `count` images described in device
 * memory (views: count of them, each of at most IH_EQ16_SMALL_MAX samples,
 * none empty), a block an image. */
cudaError_t ih_launch_equalize16_views(const ih_eq16_view *views, uint32_t count, int sm_count,
                                       cudaStream_t stream);

/* dst_i = lut_i[src_i] for `count` images of width x height samples (8-bit
 * for 256 levels, 16-bit for 65536), image i at src + i * src_stride and dst
 * + i * dst_stride bytes, its LUT the i-th of luts (as
 * ih_launch_equalize_lut_batch writes them). Below 2^31 samples an image;
 * dst may be src (same pitch and stride). With ptrs (device memory, NULL:
 * the strides), image i's source and destination are at ptrs[2 i] and
 * ptrs[2 i + 1] instead; src and dst are image 0's, every source keeps
 * src's 16-byte phase and every destination dst's, the strides are 0. */
cudaError_t ih_launch_apply_lut_batch(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                      uint8_t *dst, ptrdiff_t dst_stride, size_t dst_pitch,
                                      uint32_t width, uint32_t height, uint32_t levels,
                                      const void *luts, uint32_t count,
                                      const unsigned long long *ptrs, int sm_count,
                                      cudaStream_t stream);

#endif
