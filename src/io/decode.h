/* Decoders: each turns a file in memory into 8-bit samples, 1 (gray) or 3
 * (RGB) channels, interleaved, rows packed. load.c chooses one by the file's
 * first bytes. */
#ifndef IMGHIST_DECODE_H
#define IMGHIST_DECODE_H

#include "core.h"

typedef struct ih_raw {
    uint32_t width, height;
    int channels;      /* 1 or 3 */
    uint8_t *samples;  /* width * height * channels, malloc'd */
    int orientation;   /* EXIF orientation 2..8 to apply; 0 or 1: none */
} ih_raw;

/* Each returns IMGHIST_OK or an error with "<name>: reason" on ctx. The pixel
 * limit is checked from the header, before the image is allocated. `mode` is
 * the context's imghist_gray_mode: with IMGHIST_GRAY_LUMA the PNG and JPEG
 * decoders make gray themselves, as OpenCV's decoders do for
 * IMREAD_GRAYSCALE, and always return one channel. */
imghist_status ih_decode_png(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             imghist_gray_mode mode, ih_raw *out);
imghist_status ih_decode_jpeg(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, imghist_gray_mode mode, ih_raw *out);
imghist_status ih_decode_stb(imghist_ctx *ctx, const uint8_t *data, size_t size,
                             const char *name, imghist_gray_mode mode, ih_raw *out);

/* The EXIF orientation in an APP1-style block ("Exif\0\0" and a TIFF
 * structure), IFD 0 only, as OpenCV 4.6 reads it: 1..8, or 0 when there is
 * none or it is not a valid SHORT (decode_jpeg.c). */
int ih_exif_orientation(const uint8_t *block, size_t size);

/* OpenCV's cvtColor(BGR2GRAY) on one RGB triple: 15-bit weights. */
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

#endif
