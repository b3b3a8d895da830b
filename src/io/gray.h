/* Colour to gray, with the weights OpenCV uses in each mode and depth
 * (src/io/gray.c). Decoders that make gray as they decode and load.c, which
 * makes it afterwards, share these so that both give the same bits. */
#ifndef IMGHIST_GRAY_H
#define IMGHIST_GRAY_H

#include <stddef.h>
#include <stdint.h>

#include "imghist.h"

/* OpenCV's cvtColor(BGR2GRAY) on one 8-bit RGB triple: 15-bit weights. */
static inline uint8_t ih_gray_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

/* What OpenCV 4.6's own decoders (BMP, PNM, the CMYK JPEG path) compute for
 * IMREAD_GRAYSCALE: 14-bit weights (imgcodecs/src/utils.cpp,
 * icvCvt_BGR2Gray_8u_C3C1R: cR = round(0.299 * 2^14) = 4899, cG = 9617,
 * cB = 2^14 - cR - cG = 1868), rounded. They differ from cvtColor's 15-bit
 * ones: about one random pixel in 400 comes out one level apart. */
static inline uint8_t ih_luma14_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((4899u * r + 9617u * g + 1868u * b + 8192u) >> 14);
}

/* ih_gray_from_rgb over n packed 8-bit RGB triples: with AVX2 where the CPU
 * has it, the same bits. */
void ih_gray_from_rgb_row(const uint8_t *rgb, uint8_t *gray, size_t n);

/*
 * width x height packed pixels of `channels` interleaved samples of type
 * dtype (2: gray + alpha; 3 or 4: RGB, alpha ignored) as one gray channel,
 * in a new malloc'd buffer; NULL when out of memory. 8-bit colour:
 * cvtColor's 15-bit weights in the BGR2GRAY mode, the 14-bit ones of
 * OpenCV's BMP and PNM decoders (ih_luma14_from_rgb) in the luma mode.
 * 16-bit colour: cvtColor's weights for CV_16U (the 15-bit ones); float: its
 * float weights, fused as its vector and row-end loops fuse them (gray.c),
 * in both modes.
 */
void *ih_gray_from_samples(const void *samples, uint32_t width, uint32_t height, int channels,
                           imghist_dtype dtype, imghist_gray_mode mode);

#endif
