/* Decoders: each turns a file in memory into 8-bit samples, 1 (gray) or 3
 * (RGB) channels, interleaved, rows packed. */
#ifndef IMGHIST_DECODE_H
#define IMGHIST_DECODE_H

#include "internal.h"

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

/* An 8-bit plane of w x h, rows packed, turned upright for EXIF orientation
 * o (2..8) as cv::imread does: a new w x h or h x w plane (*w, *h updated),
 * or NULL when out of memory. */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o);

/* The pixel-limit check shared by the decoders. */
imghist_status ih_check_dimensions(imghist_ctx *ctx, const char *name, uint64_t w, uint64_t h);

#endif
