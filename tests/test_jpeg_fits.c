/*
 * ih_jpeg_fits_gpu (src/cli/gpu_decode.h): which JPEGs the GPU's path may
 * take. JPEGs written with libjpeg in memory: baseline YCbCr, gray and
 * restart-marked ones fit, with or without bytes after the end; progressive,
 * arithmetic-coded, RGB-coded (Adobe transform 0) and CMYK ones do not, nor
 * 12-bit frames, segments that run past the end, or any file cut short.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "gpu_decode.h"

static int failures;

static void check(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

enum kind { BASELINE, GRAY, RESTART, PROGRESSIVE, ARITH, ADOBE_RGB, CMYK };

/* A 67x45 JPEG of kind k (malloc'd). */
static unsigned char *make(enum kind k, unsigned long *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    unsigned char *out = NULL;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, size);
    const int comps = k == GRAY ? 1 : k == CMYK ? 4 : 3;
    c.image_width = 67;
    c.image_height = 45;
    c.input_components = comps;
    c.in_color_space = k == GRAY ? JCS_GRAYSCALE : k == CMYK ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&c);
    if (k == RESTART) {
        c.restart_interval = 2;
    } else if (k == PROGRESSIVE) {
        jpeg_simple_progression(&c);
    } else if (k == ARITH) {
        c.arith_code = TRUE;
    } else if (k == ADOBE_RGB) {
        jpeg_set_colorspace(&c, JCS_RGB);
    }
    jpeg_start_compress(&c, TRUE);
    unsigned char row[67 * 4];
    for (unsigned y = 0; y < c.image_height; y++) {
        for (int x = 0; x < 67 * comps; x++) {
            row[x] = (unsigned char)(x * 3 + y * 5 + (x * y % 7) * 9);
        }
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&c, rows, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return out;
}

/* The offset of the first marker m, or 0. */
static size_t find_marker(const unsigned char *p, size_t n, unsigned char m)
{
    for (size_t i = 2; i + 1 < n; i++) {
        if (p[i] == 0xFF && p[i + 1] == m) {
            return i;
        }
    }
    return 0;
}

int main(void)
{
    static const struct {
        enum kind k;
        int fits;
        const char *name;
    } kinds[] = {{BASELINE, 1, "baseline YCbCr"}, {GRAY, 1, "gray"},
                 {RESTART, 1, "restart markers"}, {PROGRESSIVE, 0, "progressive"},
                 {ARITH, 0, "arithmetic-coded"}, {ADOBE_RGB, 0, "RGB-coded (Adobe)"},
                 {CMYK, 0, "CMYK"}};
    char what[160];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        unsigned long n = 0;
        unsigned char *p = make(kinds[i].k, &n);
        snprintf(what, sizeof what, "%s: %s", kinds[i].name, kinds[i].fits ? "fits" : "declined");
        check(ih_jpeg_fits_gpu(p, n) == kinds[i].fits, what);
        free(p);
    }

    unsigned long n = 0;
    unsigned char *p = make(RESTART, &n);
    /* Any file cut short: no EOI at its end. */
    for (size_t cut = 0; cut < n; cut++) {
        if (ih_jpeg_fits_gpu(p, cut)) {
            snprintf(what, sizeof what, "restart-marked file cut to %zu of %lu bytes: declined",
                     cut, n);
            check(0, what);
            break;
        }
    }
    /* Bytes after the end (cameras write them) do not matter. */
    unsigned char *longer = malloc(n + 16);
    memcpy(longer, p, n);
    memset(longer + n, 0xA5, 16);
    check(ih_jpeg_fits_gpu(longer, n + 16) == 1, "bytes after the EOI: fits");
    free(longer);
    /* A 12-bit frame, and a segment longer than the file. */
    const size_t sof = find_marker(p, n, 0xC0);
    check(sof > 0 && p[sof + 4] == 8, "the baseline frame is found");
    if (sof > 0) {
        p[sof + 4] = 12;
        check(ih_jpeg_fits_gpu(p, n) == 0, "12-bit frame: declined");
        p[sof + 4] = 8;
        const size_t dqt = find_marker(p, n, 0xDB);
        check(dqt > 0, "a DQT segment is found");
        if (dqt > 0) {
            p[dqt + 2] = 0xFF;
            p[dqt + 3] = 0xF0;
            check(ih_jpeg_fits_gpu(p, n) == 0, "a segment past the end: declined");
        }
    }
    free(p);
    check(ih_jpeg_fits_gpu((const unsigned char *)"\xff\xd8\xff\xd9", 4) == 0,
          "no frame: declined");
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
