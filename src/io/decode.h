/* Decoders: each turns a file in memory into samples, interleaved, rows
 * packed. load.c chooses one by the file's first bytes, then reduces depth and
 * channels as the context's parameters ask. */
#ifndef IMGHIST_DECODE_H
#define IMGHIST_DECODE_H

#include <math.h>

#include "core.h"

typedef struct ih_raw {
    uint32_t width, height;
    int channels;        /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    imghist_dtype dtype; /* U8; U16 (host order) or F32 only when asked for */
    void *samples;       /* width * height * channels samples, malloc'd */
    int orientation;     /* EXIF orientation 2..8 to apply; 0 or 1: none */
    int truncated;       /* the data ended early and the decoder read it anyway */
    int reduced;         /* the file's 16-bit or float samples made U8 by the decoder */
} ih_raw;

/* The limits a decoder checks from the file's header, before it allocates
 * the image. */
typedef struct ih_decode_limits {
    uint64_t max_pixels; /* IMGHIST_P_MAX_PIXELS: width * height at most this */
} ih_decode_limits;

/* What the context asks of a load (its IMGHIST_P_LOAD_* parameters and the
 * limits); load.c fills it, so that the decoders read no parameter. */
typedef struct ih_load_opts {
    imghist_gray_mode mode; /* IMGHIST_P_LOAD_GRAY */
    int native_depth;       /* IMGHIST_P_LOAD_DEPTH = 1: U16 and F32 kept */
    int keep_channels;      /* IMGHIST_P_LOAD_CHANNELS = 1: no gray, alpha kept */
    int read_truncated;     /* IMGHIST_P_LOAD_TRUNCATED = 1: a JPEG that ends early is read */
    ih_decode_limits limits;
} ih_load_opts;

/* IMGHIST_OK when a w x h image may be decoded: it has pixels, is within
 * limits->max_pixels and can be addressed on this machine; otherwise an error
 * with "<name>: reason" on ctx (decode_limits.c). */
imghist_status ih_check_image_size(imghist_ctx *ctx, const ih_decode_limits *limits,
                                   const char *name, uint64_t w, uint64_t h);

/* Each returns IMGHIST_OK or an error with "<name>: reason" on ctx. The size
 * is checked against opts->limits (ih_check_image_size) from the header,
 * before the image is allocated. With IMGHIST_GRAY_LUMA (and keep_channels
 * off) the PNG and JPEG decoders make gray themselves, as OpenCV's decoders
 * do for IMREAD_GRAYSCALE, and return one channel; in the BGR2GRAY mode the
 * JPEG decoder and the PNG decoder (for a file that is not interlaced) reduce
 * each 8-bit colour row with ih_gray_from_rgb_row as they decode it (gray.c,
 * the same bits as load.c's conversion afterwards). A decoder may return U16
 * or F32 samples only when native_depth is set, except the TIFF decoder,
 * which always returns the file's depth (load.c reduces it). Alpha may be
 * returned in every mode (load.c drops it for gray). The EXIF orientation is
 * reported in out->orientation (orient.c reads it), for load.c to apply. */
imghist_status ih_decode_png(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_jpeg(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_tiff(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_pnm(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_gif(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_hdr(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_pfm(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_bmp(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
imghist_status ih_decode_tga(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out);
/* 1 when the first 18 bytes are a TGA header that ih_decode_tga takes (TGA
 * has no magic number: the caller rules out the formats that have one). */
int ih_is_tga(const uint8_t *d, size_t n);
/* Why bytes that look like a format imghist refuses (Softimage PIC, a JPEG
 * behind 0xFF fill bytes) are not read, or NULL. */
const char *ih_stb_refused_reason(const uint8_t *d, size_t n);
imghist_status ih_decode_stb(imghist_ctx *ctx, const uint8_t *data, size_t size,
                             const char *name, const ih_load_opts *opts, ih_raw *out);

/* A float in 8 bits as OpenCV's convertTo(CV_8U) makes it on x86-64: rounded
 * half to even and saturated, except that what the conversion to int cannot
 * hold (NaN, infinities, magnitudes of 2^31 and more) becomes the integer
 * "indefinite" INT_MIN there, so 0. */
static inline uint8_t ih_cv_u8_from_float(float x)
{
    if (!(x > -2147483648.0f && x < 2147483648.0f) || !(x > 0.0f)) {
        return 0;
    }
    return x >= 255.0f ? 255 : (uint8_t)lrintf(x);
}

/* 1 when the bytes start like a TIFF file: "II*\0" or "MM\0*", or BigTIFF's
 * "II+\0" or "MM\0+" (libtiff reads both). */
static inline int ih_is_tiff(const uint8_t *d, size_t n)
{
    return n >= 4 && ((d[0] == 'I' && d[1] == 'I' && (d[2] == 42 || d[2] == 43) && d[3] == 0) ||
                      (d[0] == 'M' && d[1] == 'M' && d[2] == 0 && (d[3] == 42 || d[3] == 43)));
}

#endif
