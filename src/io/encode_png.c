/* PNG output: to a file (written beside the target and renamed into place)
 * or to memory. 8-bit gray at level 1 goes through imghist's own writer
 * (png_bands.c); 16-bit samples, 2 to 4 channels and the other levels through
 * libpng. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core.h"
#include "output_file.h"
#include "png_bands.h"
#include "png_glue.h"

/* Where the encoded bytes go: a stream, or a growing buffer. */
typedef struct png_sink {
    FILE *fp;
    uint8_t *buf;
    size_t len, cap;
} png_sink;

/* Append to the sink; 0, or -1 with errno set. */
static int sink_put(void *arg, const void *data, size_t len)
{
    png_sink *s = arg;
    if (s->fp != NULL) {
        return fwrite(data, 1, len, s->fp) == len ? 0 : -1;
    }
    if (len > s->cap - s->len) {
        size_t cap = s->cap ? s->cap : 1 << 16;
        while (cap - s->len < len) {
            if (cap > SIZE_MAX / 2) {
                errno = ENOMEM;
                return -1;
            }
            cap *= 2;
        }
        uint8_t *bigger = realloc(s->buf, cap);
        if (bigger == NULL) {
            errno = ENOMEM;
            return -1;
        }
        s->buf = bigger;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return 0;
}

static void sink_write(png_structp png, png_bytep data, png_size_t len)
{
    errno = 0;
    if (sink_put(png_get_io_ptr(png), data, len) != 0) {
        /* The reason kept: libpng's own writer only says "Write Error". */
        png_error(png, errno == ENOMEM ? "out of memory" : strerror(errno ? errno : EIO));
    }
}

static void sink_flush(png_structp png)
{
    png_sink *s = png_get_io_ptr(png);
    if (s->fp != NULL && fflush(s->fp) != 0) {
        png_error(png, strerror(errno ? errno : EIO));
    }
}

/*
 * What IMGHIST_P_PNG_LEVEL means (measured on equalized photographs,
 * bench/results/png-deflate.md and bench/PNG-CODECS.md):
 *  - 1, the default: imghist's own writer (png_bands.c). Each row is filtered
 *    with Sub or Up, whichever leaves the smaller sum of magnitudes, and the
 *    image is deflated by ISA-L at its level 1 (libdeflate's level 1 in a
 *    build without ISA-L): several times faster than OpenCV's imwrite
 *    setting (zlib level 1, Z_RLE, Sub) and close to its size. Images of
 *    16 MB and more are deflated in bands over the context's threads.
 *    Equalized images compress little whatever is done (equalization
 *    spreads the values).
 *  - 2..9: libpng's own defaults at that level: an adaptive choice of
 *    filter per row and zlib's Z_FILTERED strategy. Smaller on images with
 *    long repeats, several times slower.
 *  - 0: stored, unfiltered (deflate's stored blocks; filters only cost time).
 * The pixels are the same whatever the level: PNG is lossless.
 */
static void set_compression(png_structp png, int level)
{
    png_set_compression_level(png, level);
    if (level == 0) {
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    } else if (level == 1) {
        png_set_compression_strategy(png, Z_RLE);
        png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
    }
    /* 2..9: nothing more to set (libpng picks Z_FILTERED itself when rows
     * are filtered). */
}

static uint32_t view_channels(const imghist_view *img)
{
    return img->channels == 0 ? 1 : img->channels;
}

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Encode through libpng; returns 0, or -1 with err->msg set. */
static int encode(png_sink *sink, const imghist_view *img, int level, ih_png_error *err)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, err, ih_png_error_fn,
                                              ih_png_warning_fn);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, sink, sink_write, sink_flush);
    static const int colour_types[5] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY,
                                        PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                        PNG_COLOR_TYPE_RGB_ALPHA};
    const int depth = img->dtype == IMGHIST_U16 ? 16 : 8;
    png_set_IHDR(png, info, img->width, img->height, depth, colour_types[view_channels(img)],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    set_compression(png, level);
    png_write_info(png, info);
    if (depth == 16 && host_is_little_endian()) {
        png_set_swap(png); /* the view holds host-order samples; PNG is big-endian */
    }
    for (uint32_t y = 0; y < img->height; y++) {
        png_write_row(png, (png_const_bytep)img->data + (size_t)y * img->pitch);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

/* 8-bit gray at level 1 through imghist's own writer (png_bands.c),
 * everything else through libpng (at level 1 with OpenCV's setting, Z_RLE
 * and Sub); the time goes to the context's filter and deflate stages. */
static int encode_any(imghist_ctx *ctx, png_sink *sink, const imghist_view *img,
                      ih_png_error *err)
{
    const int level = (int)ctx->params.png_level;
    if (level == 1 && img->dtype == IMGHIST_U8 && view_channels(img) == 1) {
        ih_png_times t = {0, 0};
        const int rc = ih_png_write_u8(img, (unsigned)ctx->params.cpu_threads, sink_put, sink,
                                       &t, err->msg, sizeof err->msg);
        ctx->stage_ns[IMGHIST_STAGE_FILTER] += t.filter_ns;
        ctx->stage_ns[IMGHIST_STAGE_DEFLATE] += t.deflate_ns;
        return rc;
    }
    const uint64_t t0 = ih_now_ns();
    const int rc = encode(sink, img, level, err);
    ih_stage_add(ctx, IMGHIST_STAGE_DEFLATE, t0);
    return rc;
}

/* A U8 or U16 host view of 1 to 4 channels, which PNG can hold. */
static imghist_status check_image(imghist_ctx *ctx, const imghist_view *img)
{
    imghist_status st = ih_check_view(ctx, img, "image");
    if (st != IMGHIST_OK) {
        return st;
    }
    if (img->channels > 4) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "PNG output takes 1 to 4 channels, not %u",
                       img->channels);
    }
    if (img->dtype != IMGHIST_U8 && img->dtype != IMGHIST_U16) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "PNG output takes U8 or U16 samples, not F32");
    }
    if (img->mem != IMGHIST_MEM_HOST) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "PNG output needs an image in host memory");
    }
    if (img->width > PNG_UINT_31_MAX || img->height > PNG_UINT_31_MAX) {
        return ih_fail(ctx, IMGHIST_E_ENCODE, "%ux%u is too large for PNG", img->width,
                       img->height);
    }
    return IMGHIST_OK;
}

imghist_status imghist_write_png(imghist_ctx *ctx, const char *path, const imghist_view *img)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (path == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL path");
    }
    if ((st = check_image(ctx, img)) != IMGHIST_OK) {
        return st;
    }
    ih_output_file out;
    char why[200];
    if (ih_output_open(&out, path, 0, why, sizeof why) != 0) {
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot create: %s", path, why);
    }
    png_sink sink = {out.fp, NULL, 0, 0};
    ih_png_error err = {{0}};
    if (encode_any(ctx, &sink, img, &err) != 0) {
        ih_output_abort(&out);
        /* Errors from the stream (disk full) come as the errno text. */
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot write PNG: %s", path, err.msg);
    }
    if (ih_output_commit(&out, why, sizeof why) != 0) {
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot write: %s", path, why);
    }
    return IMGHIST_OK;
}

imghist_status imghist_encode_png(imghist_ctx *ctx, const imghist_view *img, void **png,
                                  size_t *size)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (png == NULL || size == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL output pointer");
    }
    *png = NULL;
    *size = 0;
    if ((st = check_image(ctx, img)) != IMGHIST_OK) {
        return st;
    }
    png_sink sink = {NULL, NULL, 0, 0};
    ih_png_error err = {{0}};
    if (encode_any(ctx, &sink, img, &err) != 0) {
        free(sink.buf);
        return ih_fail(ctx, strcmp(err.msg, "out of memory") == 0 ? IMGHIST_E_NOMEM
                                                                  : IMGHIST_E_ENCODE,
                       "cannot encode PNG: %s", err.msg);
    }
    *png = sink.buf;
    *size = sink.len;
    return IMGHIST_OK;
}

void imghist_free(void *p)
{
    free(p);
}
