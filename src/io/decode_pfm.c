/*
 * Portable float map (.pfm), read as OpenCV's imread reads it (4.6 and
 * later, imgcodecs/src/grfmt_pfm.cpp): "PF" (RGB) or "Pf" (gray), one
 * whitespace byte, then the width, the height and the scale as text, each
 * token ended by one whitespace byte, then width * height * channels 32-bit
 * floats, rows bottom to top. A negative scale means little-endian samples,
 * a positive one big-endian; every sample is multiplied by 1 / |scale| in
 * float, as OpenCV does (a scale of 0 or NaN is refused, as OpenCV's assert
 * refuses it). Bytes after the samples are ignored; fewer refuse the file.
 *
 * In 8 bits each sample becomes v rounded half to even and saturated, with
 * no scaling by 255, and 0 for NaN, infinities and magnitudes of 2^31 or
 * more: OpenCV's convertTo(CV_8U) of the floats (ih_cv_u8_from_float), what
 * its imread returns without IMREAD_ANYDEPTH. Gray is cvtColor(BGR2GRAY) of
 * those in both gray modes (OpenCV 4.6 returns colour for IMREAD_GRAYSCALE
 * of a PFM). --depth native keeps the floats.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "gray.h"

/* The next token at d[*p]: up to the first whitespace byte, which ends it
 * and is consumed. NULL when the data ends first or it is empty or long. */
static const char *token(const uint8_t *d, size_t n, size_t *p, char *buf, size_t cap)
{
    size_t len = 0;
    while (*p < n && !isspace(d[*p])) {
        if (len + 1 >= cap) {
            return NULL;
        }
        buf[len++] = (char)d[(*p)++];
    }
    if (*p >= n || len == 0) {
        return NULL;
    }
    (*p)++;
    buf[len] = '\0';
    return buf;
}

/* A positive decimal size of at most UINT32_MAX, or 0. */
static uint32_t size_of(const char *s)
{
    if (s == NULL || !isdigit((unsigned char)s[0])) {
        return 0;
    }
    char *end = NULL;
    const unsigned long long v = strtoull(s, &end, 10);
    return *end == '\0' && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* The header: NULL, with *at at the first sample byte, or why not. */
static const char *read_header(const uint8_t *d, size_t n, size_t *at, uint32_t *w, uint32_t *h,
                               int *channels, float *scale)
{
    if (n < 3 || d[0] != 'P' || (d[1] != 'F' && d[1] != 'f') || !isspace(d[2])) {
        return "not a PFM file";
    }
    *channels = d[1] == 'F' ? 3 : 1;
    size_t p = 3;
    char a[32], b[32], c[64];
    *w = size_of(token(d, n, &p, a, sizeof a));
    *h = size_of(token(d, n, &p, b, sizeof b));
    if (*w == 0 || *h == 0) {
        return "PFM size is not two positive numbers";
    }
    const char *s = token(d, n, &p, c, sizeof c);
    char *end = NULL;
    *scale = s != NULL ? strtof(s, &end) : 0.0f;
    if (s == NULL || *end != '\0') {
        return "PFM scale is not a number";
    }
    if (!(fabsf(*scale) > 0.0f) || isinf(*scale)) {
        return "PFM scale is 0, infinite or NaN";
    }
    *at = p;
    return NULL;
}

static float sample_at(const uint8_t *q, int big_endian)
{
    const uint32_t u = big_endian ? (uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
                                        (uint32_t)q[2] << 8 | q[3]
                                  : (uint32_t)q[3] << 24 | (uint32_t)q[2] << 16 |
                                        (uint32_t)q[1] << 8 | q[0];
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

imghist_status ih_decode_pfm(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    size_t at = 0;
    uint32_t w = 0, h = 0;
    int channels = 0;
    float scale = 0.0f;
    const char *why = read_header(data, size, &at, &w, &h, &channels, &scale);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, w, h);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t row_samples = (size_t)w * (size_t)channels;
    const size_t samples = row_samples * h;
    if ((size - at) / 4 < samples) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (PFM data ends early)", name);
    }
    float *f = malloc(samples * sizeof *f);
    if (f == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, w, h);
    }
    const int big_endian = scale > 0.0f;
    const float k = 1.0f / fabsf(scale);
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *q = data + at + (size_t)(h - 1 - y) * row_samples * 4;
        float *o = f + (size_t)y * row_samples;
        for (size_t i = 0; i < row_samples; i++) {
            o[i] = sample_at(q + 4 * i, big_endian) * k;
        }
    }
    out->width = w;
    out->height = h;
    out->channels = channels;
    out->dtype = IMGHIST_F32;
    out->samples = f;
    if (!opts->native_depth) {
        /* 8 bits in place (the samples shrink); gray here for the luma mode,
         * with cvtColor's weights, as for the BGR2GRAY mode afterwards. */
        uint8_t *o = (uint8_t *)f;
        for (size_t i = 0; i < samples; i++) {
            o[i] = ih_cv_u8_from_float(f[i]);
        }
        out->dtype = IMGHIST_U8;
        out->reduced = 1;
        if (channels == 3 && opts->mode == IMGHIST_GRAY_LUMA && !opts->keep_channels) {
            const size_t pixels = (size_t)w * h;
            for (size_t i = 0; i < pixels; i++) {
                o[i] = ih_gray_from_rgb(o[3 * i], o[3 * i + 1], o[3 * i + 2]);
            }
            out->channels = 1;
        }
    }
    return IMGHIST_OK;
}
