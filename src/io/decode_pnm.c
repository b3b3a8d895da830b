/*
 * Netpbm images (PBM, PGM, PPM; plain P1-P3 and raw P4-P6), read here rather
 * than by stb_image, which refused the plain formats and 1-bit PBM, and
 * returned a truncated raw file as an image with uninitialised pixels.
 *
 * The samples are the ones OpenCV 4.6's imread gives (checked against it by
 * tests/test_opencv_ref.py):
 *  - raw 8-bit samples (maxval <= 255) as stored, not scaled to 255;
 *  - plain 8-bit samples clamped to maxval and scaled, v * 255 / maxval
 *    rounded down;
 *  - 16-bit samples (maxval > 255; big-endian when raw) as stored, plain ones
 *    clamped to maxval; the high byte when 8 bits are asked for;
 *  - PBM: 0 (white) is 255, 1 (black) is 0.
 * A file whose raster ends early, or whose plain raster holds something other
 * than a number, is refused; bytes after the first image are ignored.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

typedef struct pnm_reader {
    const uint8_t *d;
    size_t n, at;
} pnm_reader;

static int is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Skip whitespace and comments (a '#' to the end of its line). */
static void skip_blanks(pnm_reader *r)
{
    for (;;) {
        while (r->at < r->n && is_space(r->d[r->at])) {
            r->at++;
        }
        if (r->at < r->n && r->d[r->at] == '#') {
            while (r->at < r->n && r->d[r->at] != '\n' && r->d[r->at] != '\r') {
                r->at++;
            }
            continue;
        }
        return;
    }
}

/* A decimal number of at most 9 digits after blanks: 0 and *v, or -1 when
 * there is none (or it is longer). */
static int read_number(pnm_reader *r, uint32_t *v)
{
    skip_blanks(r);
    uint32_t x = 0;
    int digits = 0;
    while (r->at < r->n && r->d[r->at] >= '0' && r->d[r->at] <= '9') {
        if (++digits > 9) {
            return -1;
        }
        x = x * 10 + (uint32_t)(r->d[r->at++] - '0');
    }
    *v = x;
    return digits > 0 ? 0 : -1;
}

/* The samples of a plain raster: count numbers (a PBM's digits may touch). */
static const char *read_plain(pnm_reader *r, int pbm, uint32_t maxval, size_t count, int wide,
                              int native, void *out)
{
    uint8_t *o8 = out;
    uint16_t *o16 = out;
    for (size_t i = 0; i < count; i++) {
        uint32_t v;
        if (pbm) {
            skip_blanks(r);
            if (r->at >= r->n) {
                return "PBM data ends early";
            }
            const uint8_t c = r->d[r->at++];
            if (c != '0' && c != '1') {
                return "PBM data holds something other than 0 and 1";
            }
            o8[i] = c == '0' ? 255 : 0;
            continue;
        }
        if (r->at >= r->n) {
            return "PNM data ends early";
        }
        if (read_number(r, &v) != 0) {
            skip_blanks(r);
            return r->at >= r->n ? "PNM data ends early"
                                 : "PNM data holds something other than a number";
        }
        v = v > maxval ? maxval : v;
        if (!wide) {
            o8[i] = (uint8_t)(v * 255u / maxval);
        } else if (native) {
            o16[i] = (uint16_t)v;
        } else {
            o8[i] = (uint8_t)(v >> 8);
        }
    }
    return NULL;
}

/* The samples of a raw raster of count samples (PBM: rows of bits). */
static const char *read_raw(pnm_reader *r, int pbm, uint32_t width, uint32_t height,
                            size_t count, int wide, int native, void *out)
{
    const uint8_t *p = r->d + r->at;
    const size_t left = r->n - r->at;
    if (pbm) {
        const size_t row_bytes = ((size_t)width + 7) / 8;
        if (left / row_bytes < height) {
            return "PBM data ends early";
        }
        uint8_t *o = out;
        for (uint32_t y = 0; y < height; y++) {
            const uint8_t *row = p + (size_t)y * row_bytes;
            for (uint32_t x = 0; x < width; x++) {
                o[(size_t)y * width + x] = (row[x >> 3] >> (7 - (x & 7))) & 1 ? 0 : 255;
            }
        }
        return NULL;
    }
    const size_t size = wide ? 2 : 1;
    if (left / size < count) {
        return "PNM data ends early";
    }
    if (!wide) {
        memcpy(out, p, count);
    } else if (native) {
        uint16_t *o = out;
        for (size_t i = 0; i < count; i++) {
            o[i] = (uint16_t)(p[2 * i] << 8 | p[2 * i + 1]);
        }
    } else {
        uint8_t *o = out;
        for (size_t i = 0; i < count; i++) {
            o[i] = p[2 * i];
        }
    }
    return NULL;
}

imghist_status ih_decode_pnm(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    if (size < 2 || data[0] != 'P' || data[1] < '1' || data[1] > '6') {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (not a PNM file)", name);
    }
    const int kind = data[1] - '0';
    const int plain = kind <= 3, pbm = kind == 1 || kind == 4, ppm = kind == 3 || kind == 6;
    pnm_reader r = {data, size, 2};
    uint32_t width = 0, height = 0, maxval = 1;
    if (read_number(&r, &width) != 0 || read_number(&r, &height) != 0 ||
        (!pbm && read_number(&r, &maxval) != 0)) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (PNM header is malformed)",
                       name);
    }
    if (width == 0 || height == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (PNM size is %ux%u)",
                       name, width, height);
    }
    if (maxval == 0 || maxval > 65535) {
        return ih_fail(ctx, IMGHIST_E_DECODE,
                       "%s: not a readable image (PNM maxval %u is outside 1..65535)", name,
                       maxval);
    }
    /* One whitespace character ends the header. */
    if (r.at >= r.n || !is_space(data[r.at])) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (PNM header is malformed)",
                       name);
    }
    r.at++;
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, width, height);
    if (st != IMGHIST_OK) {
        return st;
    }
    const int channels = ppm ? 3 : 1;
    const int wide = maxval > 255, native = wide && opts->native_depth;
    const size_t count = (size_t)width * height * (size_t)channels;
    void *samples = malloc(count * (native ? 2 : 1));
    if (samples == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, width,
                       height);
    }
    const char *why = plain ? read_plain(&r, pbm, maxval, count, wide, native, samples)
                            : read_raw(&r, pbm, width, height, count, wide, native, samples);
    if (why != NULL) {
        free(samples);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    out->width = width;
    out->height = height;
    out->channels = channels;
    out->dtype = native ? IMGHIST_U16 : IMGHIST_U8;
    out->reduced = wide && !native;
    out->samples = samples;
    return IMGHIST_OK;
}
