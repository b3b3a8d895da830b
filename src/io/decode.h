/* Decoders: each turns a file in memory into samples, interleaved, rows
 * packed. load.c chooses one by the file's first bytes, then reduces depth and
 * channels as the context's parameters ask. */
#ifndef IMGHIST_DECODE_H
#define IMGHIST_DECODE_H

#include "core.h"

typedef struct ih_raw {
    uint32_t width, height;
    int channels;        /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
    imghist_dtype dtype; /* U8; U16 (host order) or F32 only when asked for */
    void *samples;       /* width * height * channels samples, malloc'd */
    int orientation;     /* EXIF orientation 2..8 to apply; 0 or 1: none */
    int truncated;       /* the data ended early and the decoder read it anyway */
} ih_raw;

/* What the context asks of a load (its IMGHIST_P_LOAD_* parameters). */
typedef struct ih_load_opts {
    imghist_gray_mode mode; /* IMGHIST_P_LOAD_GRAY */
    int native_depth;       /* IMGHIST_P_LOAD_DEPTH = 1: U16 and F32 kept */
    int keep_channels;      /* IMGHIST_P_LOAD_CHANNELS = 1: no gray, alpha kept */
    int read_truncated;     /* IMGHIST_P_LOAD_TRUNCATED = 1: a JPEG that ends early is read */
} ih_load_opts;

/* Each returns IMGHIST_OK or an error with "<name>: reason" on ctx. The pixel
 * limit is checked from the header, before the image is allocated. With
 * IMGHIST_GRAY_LUMA (and keep_channels off) the PNG and JPEG decoders make
 * gray themselves, as OpenCV's decoders do for IMREAD_GRAYSCALE, and return
 * one channel; in the BGR2GRAY mode the JPEG decoder and the PNG decoder (for
 * a file that is not interlaced) reduce each 8-bit colour row with
 * ih_gray_from_rgb_row as they decode it (load.c's weights, the same bits).
 * A decoder may return U16 or F32 samples only when native_depth is set,
 * except the TIFF decoder, which always returns the file's depth (load.c
 * reduces it). Alpha may be returned in every mode (load.c drops it for
 * gray). */
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

/* 1 when the bytes start like a TIFF file: "II*\0" or "MM\0*", or BigTIFF's
 * "II+\0" or "MM\0+" (libtiff reads both). */
static inline int ih_is_tiff(const uint8_t *d, size_t n)
{
    return n >= 4 && ((d[0] == 'I' && d[1] == 'I' && (d[2] == 42 || d[2] == 43) && d[3] == 0) ||
                      (d[0] == 'M' && d[1] == 'M' && d[2] == 0 && (d[3] == 42 || d[3] == 43)));
}

/* The EXIF orientation in an APP1-style block ("Exif\0\0" and a TIFF
 * structure), IFD 0 only, as OpenCV 4.6 reads it: 1..8, or 0 when there is
 * none or it is not a valid SHORT (decode_jpeg.c). */
int ih_exif_orientation(const uint8_t *block, size_t size);

/* OpenCV's cvtColor(BGR2GRAY) on one RGB triple: 15-bit weights. */
static inline uint8_t ih_gray_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

/* ih_gray_from_rgb over n packed RGB triples (load.c): with AVX2 where the
 * CPU has it, the same bits. */
void ih_gray_from_rgb_row(const uint8_t *rgb, uint8_t *gray, size_t n);

/* What OpenCV 4.6's own decoders (BMP, PNM, the CMYK JPEG path) compute for
 * IMREAD_GRAYSCALE: 14-bit weights (imgcodecs/src/utils.cpp,
 * icvCvt_BGR2Gray_8u_C3C1R: cR = round(0.299 * 2^14) = 4899, cG = 9617,
 * cB = 2^14 - cR - cG = 1868), rounded. They differ from cvtColor's 15-bit
 * ones: about one random pixel in 400 comes out one level apart. */
static inline uint8_t ih_luma14_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((4899u * r + 9617u * g + 1868u * b + 8192u) >> 14);
}

/* The same weights on 16-bit samples: cvtColor(BGR2GRAY) for CV_16U. The sum
 * stays below 2^32 (the weights add up to 2^14). */
static inline uint16_t ih_gray16_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint16_t)((4899u * r + 9617u * g + 1868u * b + 8192u) >> 14);
}

/* cvtColor(BGR2GRAY) for CV_32F, in OpenCV's order: B, G, then R, each
 * product rounded to float and summed left to right (the build is ISO C,
 * which does not contract a * b + c into a fused multiply-add). */
static inline float ih_grayf_from_rgb(float r, float g, float b)
{
    const float pb = b * 0.114f, pg = g * 0.587f, pr = r * 0.299f;
    return (pb + pg) + pr;
}

#endif
