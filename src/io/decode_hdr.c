/*
 * Radiance RGBE (.hdr), read here rather than by stb_image 2.27, whose loader
 * let uninitialised bytes into the floats of a file that ends early (valgrind
 * on the fuzz corpus) and never returned from some (CVE-2021-42715).
 *
 * Read: the "#?RADIANCE" or "#?RGBE" header with FORMAT=32-bit_rle_rgbe (or
 * no FORMAT line), the resolution line "-Y H +X W" (rows top to bottom, the
 * only orientation stb_image and OpenCV 4.6 read), then the pixels: flat RGBE
 * quadruples, or new-style run-length scanlines (2, 2, width; each of the
 * four components as runs and literals) when 8 <= W < 32768 and the first
 * scanline starts that way. A sample is m * 2^(e - 136) for e > 0, else 0,
 * as in both. Data that ends early, a bad run, or a scanline that switches
 * coding refuses the file.
 *
 * In 8 bits each sample becomes v * 255 rounded half to even and saturated
 * (0 from 2^31 on), as OpenCV's imread (grfmt_hdr.cpp: convertTo(CV_8U,
 * 255)) makes it (ih_cv_u8_from_float), and
 * gray is cvtColor(BGR2GRAY) of those in both gray modes (OpenCV 4.6 means
 * that for IMREAD_GRAYSCALE too). --depth native keeps the floats.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "gray.h"

/* The header: NULL, and *at at the first pixel byte, or why not. */
static const char *read_header(const uint8_t *d, size_t n, size_t *at, uint32_t *w, uint32_t *h)
{
    size_t p = 0;
    int first = 1, format_ok = 1;
    for (;;) { /* lines up to the empty one */
        const uint8_t *nl = memchr(d + p, '\n', n - p);
        if (nl == NULL) {
            return "HDR header ends early";
        }
        const size_t len = (size_t)(nl - (d + p));
        if (first) {
            if (!((len >= 10 && memcmp(d + p, "#?RADIANCE", 10) == 0) ||
                  (len >= 6 && memcmp(d + p, "#?RGBE", 6) == 0))) {
                return "not a Radiance HDR file";
            }
            first = 0;
        } else if (len == 0) {
            p += 1;
            break;
        } else if (len >= 7 && memcmp(d + p, "FORMAT=", 7) == 0) {
            format_ok = len == 22 && memcmp(d + p, "FORMAT=32-bit_rle_rgbe", 22) == 0;
        }
        p += len + 1;
    }
    if (!format_ok) {
        return "HDR pixel format is not 32-bit_rle_rgbe (XYZ is not supported)";
    }
    const uint8_t *nl = memchr(d + p, '\n', n - p);
    if (nl == NULL) {
        return "HDR resolution line ends early";
    }
    char line[64];
    const size_t len = (size_t)(nl - (d + p));
    if (len >= sizeof line) {
        return "HDR resolution line is not -Y H +X W";
    }
    memcpy(line, d + p, len);
    line[len] = '\0';
    unsigned long hh = 0, ww = 0;
    char *end = NULL;
    if (strncmp(line, "-Y ", 3) != 0) {
        return "HDR resolution line is not -Y H +X W (other orientations are not supported)";
    }
    hh = strtoul(line + 3, &end, 10);
    if (end == line + 3 || strncmp(end, " +X ", 4) != 0) {
        return "HDR resolution line is not -Y H +X W (other orientations are not supported)";
    }
    const char *wp = end + 4;
    ww = strtoul(wp, &end, 10);
    if (end == wp || *end != '\0' || hh == 0 || ww == 0 || hh > UINT32_MAX || ww > UINT32_MAX) {
        return "HDR resolution line is not -Y H +X W";
    }
    *w = (uint32_t)ww;
    *h = (uint32_t)hh;
    *at = p + len + 1;
    return NULL;
}

static void rgbe_to_float(const uint8_t *q, float *o)
{
    if (q[3] == 0) {
        o[0] = o[1] = o[2] = 0.0f;
        return;
    }
    const float f = ldexpf(1.0f, (int)q[3] - 136);
    o[0] = (float)q[0] * f;
    o[1] = (float)q[1] * f;
    o[2] = (float)q[2] * f;
}

/* One run-length scanline of w pixels into row (RGBE quadruples). */
static const char *rle_line(const uint8_t **pp, const uint8_t *end, uint32_t w, uint8_t *row)
{
    const uint8_t *p = *pp;
    if (end - p < 4) {
        return "HDR data ends early";
    }
    if (p[0] != 2 || p[1] != 2 || (p[2] & 0x80) || (((uint32_t)p[2] << 8) | p[3]) != w) {
        return "HDR scanline is not run-length coded like the first";
    }
    p += 4;
    for (int c = 0; c < 4; c++) {
        uint32_t x = 0;
        while (x < w) {
            if (p >= end) {
                return "HDR data ends early";
            }
            uint32_t count = *p++;
            if (count > 128) {
                count -= 128;
                if (count > w - x) {
                    return "HDR run passes the end of its scanline";
                }
                if (p >= end) {
                    return "HDR data ends early";
                }
                const uint8_t v = *p++;
                for (uint32_t k = 0; k < count; k++) {
                    row[4 * (x + k) + c] = v;
                }
            } else {
                if (count == 0 || count > w - x) {
                    return "HDR literal run is empty or passes the end of its scanline";
                }
                if ((size_t)(end - p) < count) {
                    return "HDR data ends early";
                }
                for (uint32_t k = 0; k < count; k++) {
                    row[4 * (x + k) + c] = p[k];
                }
                p += count;
            }
            x += count;
        }
    }
    *pp = p;
    return NULL;
}

imghist_status ih_decode_hdr(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    size_t at = 0;
    uint32_t w = 0, h = 0;
    const char *why = read_header(data, size, &at, &w, &h);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, w, h);
    if (st != IMGHIST_OK) {
        return st;
    }
    const size_t pixels = (size_t)w * h;
    /* A file too short for its size is refused before anything is allocated:
     * flat pixels take 4 bytes; a run-length scanline at least its 4-byte
     * head and 2 bytes per run of up to 127 for each component. */
    {
        const uint8_t *q = data + at;
        const size_t left = size - at;
        const int rle_head = w >= 8 && w < 32768 && left >= 3 && q[0] == 2 && q[1] == 2 &&
                             !(q[2] & 0x80);
        const uint64_t least = rle_head ? (uint64_t)h * (4 + 8 * (((uint64_t)w + 126) / 127))
                                        : (uint64_t)pixels * 4;
        if ((uint64_t)left < least) {
            return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (HDR data ends early)",
                           name);
        }
    }
    float *f = malloc(pixels * 3 * sizeof *f);
    uint8_t *row = malloc((size_t)w * 4);
    if (f == NULL || row == NULL) {
        free(f);
        free(row);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, w, h);
    }
    const uint8_t *p = data + at, *end = data + size;
    const int rle = w >= 8 && w < 32768 && end - p >= 2 && p[0] == 2 && p[1] == 2 &&
                    end - p >= 3 && !(p[2] & 0x80);
    for (uint32_t y = 0; y < h && why == NULL; y++) {
        if (rle) {
            why = rle_line(&p, end, w, row);
        } else if ((size_t)(end - p) < (size_t)w * 4) {
            why = "HDR data ends early";
        } else {
            memcpy(row, p, (size_t)w * 4);
            p += (size_t)w * 4;
        }
        for (uint32_t x = 0; x < w && why == NULL; x++) {
            rgbe_to_float(row + 4 * x, f + ((size_t)y * w + x) * 3);
        }
    }
    free(row);
    if (why != NULL) {
        free(f);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    out->width = w;
    out->height = h;
    out->channels = 3;
    out->dtype = IMGHIST_F32;
    out->samples = f;
    if (!opts->native_depth) {
        /* 8 bits in place (the samples shrink); gray here for the luma mode,
         * with cvtColor's weights, as OpenCV does for both modes. */
        uint8_t *o = (uint8_t *)f;
        for (size_t i = 0; i < pixels * 3; i++) {
            o[i] = ih_cv_u8_from_float(f[i] * 255.0f); /* convertTo(CV_8U, 255) */
        }
        out->dtype = IMGHIST_U8;
        out->reduced = 1;
        if (opts->mode == IMGHIST_GRAY_LUMA && !opts->keep_channels) {
            for (size_t i = 0; i < pixels; i++) {
                o[i] = ih_gray_from_rgb(o[3 * i], o[3 * i + 1], o[3 * i + 2]);
            }
            out->channels = 1;
        }
    }
    return IMGHIST_OK;
}
