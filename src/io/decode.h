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
 * limit is checked from the header, before the image is allocated. */
imghist_status ih_decode_png(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             ih_raw *out);
imghist_status ih_decode_jpeg(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, ih_raw *out);
imghist_status ih_decode_stb(imghist_ctx *ctx, const uint8_t *data, size_t size,
                             const char *name, ih_raw *out);

/* OpenCV's BGR2GRAY on one RGB triple. */
static inline uint8_t ih_gray_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

#endif
