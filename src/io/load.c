/*
 * Loading: a file or a buffer, the decoder chosen by the first bytes (PNG with
 * libpng, JPEG with libjpeg-turbo, TIFF with libtiff, GIF with giflib, BMP,
 * TGA, PNM and HDR with readers of imghist's own, PSD with stb_image), then
 * depth reduction, gray conversion (gray.c) and EXIF orientation (orient.c),
 * as IMGHIST_P_LOAD_DEPTH, _CHANNELS and _GRAY ask. Standard input is the
 * CLI's business.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "gray.h"
#include "orient.h"
#include "read_all.h"

/* A loaded image: the public part first, so that the caller's pointer is the
 * allocation's. */
typedef struct ih_image {
    imghist_image pub;
} ih_image;

static imghist_status over_byte_limit(imghist_ctx *ctx, const char *name)
{
    return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: file is larger than the limit of %lld bytes", name,
                   (long long)ctx->params.max_input_bytes);
}

static int looks_like_image(const uint8_t *head, size_t n)
{
    return imghist_detect_format(head, n) != NULL;
}

/* Read a whole file, refusing it as soon as it passes the byte limit; a
 * stream of unknown length (a pipe, a device) as soon as its first bytes
 * are no image. */
static imghist_status read_file(imghist_ctx *ctx, FILE *fp, const char *name, uint8_t **data,
                                size_t *size)
{
    const uint64_t limit = (uint64_t)ctx->params.max_input_bytes;
    struct stat sb;
    size_t hint = 0;
    if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode)) {
        if ((uint64_t)sb.st_size > limit) {
            return over_byte_limit(ctx, name); /* before any allocation */
        }
        hint = (size_t)sb.st_size;
    }
    errno = 0;
    switch (ih_read_all(fp, limit, hint, hint == 0 ? looks_like_image : NULL, data, size)) {
    case IH_READ_OK:
        return IMGHIST_OK;
    case IH_READ_OVER_LIMIT:
        return over_byte_limit(ctx, name);
    case IH_READ_ERROR:
        return ih_fail(ctx, IMGHIST_E_IO, "%s: read error: %s", name,
                       strerror(errno ? errno : EIO));
    case IH_READ_NOMEM:
        break;
    }
    return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
}

imghist_status imghist_load_file(imghist_ctx *ctx, const char *path, imghist_image **out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (path == NULL || out == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    const uint64_t t0 = ih_now_ns();
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        return ih_fail(ctx, IMGHIST_E_IO, "%s: %s", path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fileno(fp), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(fp);
        return ih_fail(ctx, IMGHIST_E_IO, "%s: is a directory", path);
    }
    uint8_t *data = NULL;
    size_t size = 0;
    st = read_file(ctx, fp, path, &data, &size);
    fclose(fp);
    ih_stage_add(ctx, IMGHIST_STAGE_READ, t0);
    if (st != IMGHIST_OK) {
        return st;
    }
    st = imghist_load_memory(ctx, data, size, path, out);
    free(data);
    return st;
}

/* The decoder for these bytes. */
static imghist_status decode(imghist_ctx *ctx, const uint8_t *bytes, size_t size,
                             const char *name, const ih_load_opts *opts, ih_raw *raw)
{
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (size >= 8 && memcmp(bytes, png_magic, 8) == 0) {
        return ih_decode_png(ctx, bytes, size, name, opts, raw);
    }
    if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) {
        return ih_decode_jpeg(ctx, bytes, size, name, opts, raw);
    }
    if (ih_is_tiff(bytes, size)) {
        return ih_decode_tiff(ctx, bytes, size, name, opts, raw);
    }
    if (size >= 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '6') {
        return ih_decode_pnm(ctx, bytes, size, name, opts, raw);
    }
    /* TGA has no magic number: what is left that starts like none of
     * stb_image's other formats and has a TGA header. */
    const char *format = imghist_detect_format(bytes, size);
    if (format != NULL && strcmp(format, "tga") == 0) {
        return ih_decode_tga(ctx, bytes, size, name, opts, raw);
    }
    if (format != NULL && strcmp(format, "bmp") == 0) {
        return ih_decode_bmp(ctx, bytes, size, name, opts, raw);
    }
    if (format != NULL && strcmp(format, "gif") == 0) {
        return ih_decode_gif(ctx, bytes, size, name, opts, raw);
    }
    if (format != NULL && strcmp(format, "hdr") == 0) {
        return ih_decode_hdr(ctx, bytes, size, name, opts, raw);
    }
    if (format != NULL && strcmp(format, "pfm") == 0) {
        return ih_decode_pfm(ctx, bytes, size, name, opts, raw);
    }
    if (format != NULL && strcmp(format, "psd") == 0) {
        return ih_decode_stb(ctx, bytes, size, name, opts, raw);
    }
    /* Nothing else goes to stb_image: its loaders would take headers the
     * readers above refuse (a TGA-like header with a gray depth of 32 bits
     * came back with uninitialised pixels). */
    const char *why = ih_stb_refused_reason(bytes, size);
    return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (%s)", name,
                   why != NULL ? why
                               : "unrecognised format: not PNG, JPEG, TIFF, BMP, GIF, PNM, PFM, "
                                 "TGA, PSD or Radiance HDR");
}

/* raw as one gray channel, unless opts keep the channels; 1 when out of
 * memory (raw freed by the caller). */
static int to_gray(ih_raw *raw, const ih_load_opts *opts)
{
    if (opts->keep_channels || raw->channels == 1) {
        return 0;
    }
    void *gray = ih_gray_from_samples(raw->samples, raw->width, raw->height, raw->channels,
                                      raw->dtype, opts->mode);
    if (gray == NULL) {
        return 1;
    }
    free(raw->samples);
    raw->samples = gray;
    raw->channels = 1;
    return 0;
}

/* A float sample in 8 bits: clamp(v, 0, 1) * 255, rounded half up; NaN is 0. */
static uint8_t float_to_u8(float v)
{
    if (!(v > 0.0f)) {
        return 0; /* negative, zero and NaN */
    }
    if (v >= 1.0f) {
        return 255;
    }
    return (uint8_t)(v * 255.0f + 0.5f);
}

/*
 * 16-bit and float samples to 8 bits, in place (the samples shrink): 16-bit
 * keeps the high byte (>> 8), as libpng's strip_16 and OpenCV's 8-bit imread
 * do; float is clamped to [0, 1] and scaled to 255.
 */
static void reduce_to_u8(ih_raw *raw)
{
    const size_t n = (size_t)raw->width * raw->height * (size_t)raw->channels;
    uint8_t *dst = raw->samples;
    if (raw->dtype == IMGHIST_U16) {
        const uint16_t *src = raw->samples;
        for (size_t i = 0; i < n; i++) {
            dst[i] = (uint8_t)(src[i] >> 8);
        }
    } else if (raw->dtype == IMGHIST_F32) {
        const float *src = raw->samples;
        for (size_t i = 0; i < n; i++) {
            dst[i] = float_to_u8(src[i]);
        }
    }
    raw->dtype = IMGHIST_U8;
}

imghist_status imghist_load_memory(imghist_ctx *ctx, const void *data, size_t size,
                                   const char *name, imghist_image **out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (out == NULL || (data == NULL && size > 0)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    if (name == NULL) {
        name = "<memory>";
    }
    if (size == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: empty file", name);
    }
    if (size > (uint64_t)ctx->params.max_input_bytes) {
        return over_byte_limit(ctx, name);
    }
    ih_raw raw = {0};
    raw.dtype = IMGHIST_U8;
    const ih_load_opts opts = {
        .mode = (imghist_gray_mode)ctx->params.load_gray,
        .native_depth = ctx->params.load_depth != 0,
        .keep_channels = ctx->params.load_channels != 0,
        .read_truncated = ctx->params.load_truncated != 0,
        .limits = {.max_pixels = (uint64_t)ctx->params.max_pixels},
    };
    const uint64_t t0 = ih_now_ns();
    st = decode(ctx, data, size, name, &opts, &raw);
    ih_stage_add(ctx, IMGHIST_STAGE_DECODE, t0);
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint64_t t1 = ih_now_ns();
    /* Depth first, then gray: a 16-bit PNG's 8-bit gray is computed from the
     * high bytes, as OpenCV's 8-bit imread computes it. */
    const int reduced = raw.reduced || (!opts.native_depth && raw.dtype != IMGHIST_U8);
    if (reduced) {
        reduce_to_u8(&raw);
    }
    ih_image *full = calloc(1, sizeof *full);
    imghist_image *img = full ? &full->pub : NULL;
    int failed = img == NULL;
    /* Gray before the turn moves fewer bytes; float gray after it, since
     * OpenCV's float rule depends on where a pixel lies in its row. */
    const int gray_first = raw.dtype != IMGHIST_F32;
    if (!failed && gray_first) failed = to_gray(&raw, &opts);
    if (!failed && ih_orientation_to_apply(raw.orientation) != 0) {
        void *upright = ih_orient_pixels(raw.samples, &raw.width, &raw.height, raw.orientation,
                                  (size_t)raw.channels * ih_dtype_size(raw.dtype));
        free(raw.samples);
        raw.samples = upright;
        failed = upright == NULL;
    }
    if (!failed && !gray_first) failed = to_gray(&raw, &opts);
    if (failed) {
        free(img);
        free(raw.samples);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    img->view.data = raw.samples;
    img->view.dtype = raw.dtype;
    img->view.mem = IMGHIST_MEM_HOST;
    img->view.width = raw.width;
    img->view.height = raw.height;
    img->view.pitch = (size_t)raw.width * (size_t)raw.channels * ih_dtype_size(raw.dtype);
    img->view.channels = (uint32_t)raw.channels;
    img->flags = (raw.truncated ? IMGHIST_IMAGE_TRUNCATED : 0u) |
                 (reduced ? IMGHIST_IMAGE_REDUCED : 0u);
    ih_stage_add(ctx, IMGHIST_STAGE_GRAY, t1);
    *out = img;
    return IMGHIST_OK;
}

void imghist_image_free(imghist_image *img)
{
    if (img == NULL) {
        return;
    }
    free(img->view.data);
    free(img);
}
