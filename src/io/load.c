/*
 * Loading: a file or a buffer, the decoder chosen by the first bytes (PNG with
 * libpng, JPEG with libjpeg-turbo, the rest with stb_image), then gray
 * conversion and EXIF orientation. Standard input is the CLI's business.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "orient.h"
#include "read_all.h"

static imghist_status over_byte_limit(imghist_ctx *ctx, const char *name)
{
    return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: file is larger than the limit of %lld bytes", name,
                   (long long)ctx->params.max_input_bytes);
}

/* Read a whole file, refusing it as soon as it passes the byte limit. */
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
    switch (ih_read_all(fp, limit, hint, data, size)) {
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
    if (st != IMGHIST_OK) {
        return st;
    }
    st = imghist_load_memory(ctx, data, size, path, out);
    free(data);
    return st;
}

/* The decoder for these bytes. */
static imghist_status decode(imghist_ctx *ctx, const uint8_t *bytes, size_t size,
                             const char *name, imghist_gray_mode mode, ih_raw *raw)
{
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (size >= 8 && memcmp(bytes, png_magic, 8) == 0) {
        return ih_decode_png(ctx, bytes, size, name, mode, raw);
    }
    if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) {
        return ih_decode_jpeg(ctx, bytes, size, name, mode, raw);
    }
    return ih_decode_stb(ctx, bytes, size, name, mode, raw);
}

/*
 * Samples -> one gray plane (the samples are consumed); NULL when out of
 * memory. Three channels come from stb_image, or from PNG and JPEG in the
 * BGR2GRAY mode: cvtColor's 15-bit weights there; in the luma mode the
 * 14-bit ones OpenCV's BMP and PNM decoders use for IMREAD_GRAYSCALE.
 */
static uint8_t *to_gray(ih_raw *raw, imghist_gray_mode mode)
{
    if (raw->channels == 1) {
        return raw->samples;
    }
    const size_t n = (size_t)raw->width * raw->height;
    uint8_t *gray = malloc(n);
    if (gray != NULL) {
        const uint8_t *p = raw->samples;
        if (mode == IMGHIST_GRAY_LUMA) {
            for (size_t i = 0; i < n; i++, p += 3) {
                gray[i] = ih_luma14_from_rgb(p[0], p[1], p[2]);
            }
        } else {
            for (size_t i = 0; i < n; i++, p += 3) {
                gray[i] = ih_gray_from_rgb(p[0], p[1], p[2]);
            }
        }
    }
    free(raw->samples);
    raw->samples = NULL;
    return gray;
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
    const imghist_gray_mode mode = (imghist_gray_mode)ctx->params.load_gray;
    st = decode(ctx, data, size, name, mode, &raw);
    if (st != IMGHIST_OK) {
        return st;
    }
    imghist_image *img = calloc(1, sizeof *img);
    uint8_t *gray = to_gray(&raw, mode);
    if (gray != NULL && raw.orientation >= 2 && raw.orientation <= 8) {
        uint8_t *upright = ih_orient(gray, &raw.width, &raw.height, raw.orientation);
        free(gray);
        gray = upright;
    }
    if (img == NULL || gray == NULL) {
        free(img);
        free(gray);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    img->view.data = gray;
    img->view.dtype = IMGHIST_U8;
    img->view.mem = IMGHIST_MEM_HOST;
    img->view.width = raw.width;
    img->view.height = raw.height;
    img->view.pitch = raw.width;
    img->view.channels = 1;
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
