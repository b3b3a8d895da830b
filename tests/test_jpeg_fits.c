/*
 * imghist_exp_jpeg_fits_gpu (imghist_experimental.h): which JPEGs the GPU's
 * path may take. JPEGs written with libjpeg in memory: baseline YCbCr, gray and
 * restart-marked ones fit, with or without bytes after the end; progressive,
 * arithmetic-coded, RGB-coded (Adobe transform 0) and CMYK ones do not, nor
 * gray frames with sampling factors other than 1x1, nor
 * 12-bit frames, segments that run past the end, or any file cut short.
 * imghist_exp_exif_orientation: the EXIF orientation the CPU's decode turns
 * an image by, checked against imghist_load's own turn on the same files.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "imghist.h"
#include "imghist_experimental.h"

static int failures;

static void check(int cond, const char *what)
{
    if (!cond) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

enum kind { BASELINE, GRAY, GRAY22, RESTART, PROGRESSIVE, ARITH, ADOBE_RGB, CMYK };

/* A 67x45 JPEG of kind k (malloc'd). */
static unsigned char *make(enum kind k, unsigned long *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    unsigned char *out = NULL;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &out, size);
    const int gray = k == GRAY || k == GRAY22;
    const int comps = gray ? 1 : k == CMYK ? 4 : 3;
    c.image_width = 67;
    c.image_height = 45;
    c.input_components = comps;
    c.in_color_space = gray ? JCS_GRAYSCALE : k == CMYK ? JCS_CMYK : JCS_RGB;
    jpeg_set_defaults(&c);
    if (k == GRAY22) {
        c.comp_info[0].h_samp_factor = 2;
        c.comp_info[0].v_samp_factor = 2;
    } else if (k == RESTART) {
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

/* "Exif\0\0", a TIFF header (big: Motorola order) and IFD 0 at offset 8
 * with one entry (tag, type, count, value); its size. */
static size_t exif_block(uint8_t *b, int big, unsigned tag, unsigned type, unsigned count,
                         unsigned value)
{
    /* header: byte order, 42, IFD 0's offset; IFD 0: one entry of tag,
     * type, count and a value field, then no next IFD. */
    const unsigned vals[] = {big ? 0x4D4Du : 0x4949u, 42, 8, 1, tag, type, count};
    const int sizes[] = {2, 2, 4, 2, 2, 2, 4};
    memcpy(b, "Exif\0\0", 6);
    uint8_t *t = b + 6;
    size_t at = 0;
    for (int k = 0; k < 7; k++) {
        for (int i = 0; i < sizes[k]; i++) {
            t[at++] = (uint8_t)(vals[k] >> (big ? 8 * (sizes[k] - 1 - i) : 8 * i));
        }
    }
    /* A SHORT value sits in the first two of the four value bytes. */
    memset(t + at, 0, 8);
    t[at] = (uint8_t)(big ? value >> 8 : value);
    t[at + 1] = (uint8_t)(big ? value : value >> 8);
    return 6 + at + 8;
}

/* p (a JPEG of n bytes) with an APP1 segment of block's len bytes after
 * its SOI (malloc'd); its size in *out_n. */
static unsigned char *with_app1(const unsigned char *p, size_t n, const uint8_t *block,
                                size_t len, size_t *out_n)
{
    unsigned char *q = malloc(n + 4 + len);
    memcpy(q, p, 2);
    q[2] = 0xFF;
    q[3] = 0xE1;
    q[4] = (unsigned char)((len + 2) >> 8);
    q[5] = (unsigned char)(len + 2);
    memcpy(q + 6, block, len);
    memcpy(q + 6 + len, p + 2, n - 2);
    *out_n = n + 4 + len;
    return q;
}

static unsigned char *make(enum kind k, unsigned long *size);

static void exif_cases(void)
{
    uint8_t b[64];
    check(imghist_exp_exif_orientation(NULL, 0) == 1, "no APP1: orientation 1");
    check(imghist_exp_exif_orientation("http://ns.adobe.com/xap/1.0/", 29) == 1,
          "an XMP APP1: orientation 1");
    for (int big = 0; big < 2; big++) {
        for (unsigned o = 1; o <= 8; o++) {
            const size_t n = exif_block(b, big, 0x0112, 3, 1, o);
            check(imghist_exp_exif_orientation(b, n) == (int)o,
                  big ? "MM orientation 1..8 read" : "II orientation 1..8 read");
        }
        size_t n = exif_block(b, big, 0x010F, 2, 1, 6); /* Make, no orientation */
        check(imghist_exp_exif_orientation(b, n) == 1, "EXIF without an orientation: 1");
        n = exif_block(b, big, 0x0112, 4, 1, 1); /* a LONG: unsure */
        check(imghist_exp_exif_orientation(b, n) == 0, "orientation not a SHORT: unsure");
        n = exif_block(b, big, 0x0112, 3, 1, 9);
        check(imghist_exp_exif_orientation(b, n) == 0, "orientation 9: unsure");
        n = exif_block(b, big, 0x0112, 3, 1, 0);
        check(imghist_exp_exif_orientation(b, n) == 0, "orientation 0: unsure");
        n = exif_block(b, big, 0x0112, 3, 1, 1);
        check(imghist_exp_exif_orientation(b, n - 10) == 0, "IFD 0 cut short: unsure");
        b[6 + 2] ^= 0xFF;
        check(imghist_exp_exif_orientation(b, n) == 0, "not a TIFF header: unsure");
    }
    /* The CPU's decoder on the same blocks: orientations 5..8 swap width
     * and height (a 67x45 image), 1..4 do not; the file fits either way. */
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx) != IMGHIST_OK) {
        check(0, "a CPU context");
        imghist_destroy(ctx);
        return;
    }
    unsigned long jn = 0;
    unsigned char *jpeg = make(BASELINE, &jn);
    for (int big = 0; big < 2; big++) {
        for (unsigned o = 1; o <= 8; o++) {
            const size_t len = exif_block(b, big, 0x0112, 3, 1, o);
            size_t qn = 0;
            unsigned char *q = with_app1(jpeg, jn, b, len, &qn);
            imghist_image *img = NULL;
            char what[96];
            snprintf(what, sizeof what, "%s orientation %u: the CPU's decode turns it as read",
                     big ? "MM" : "II", o);
            const int turned = imghist_exp_exif_orientation(b, len) >= 5;
            check(imghist_load_memory(ctx, q, qn, "exif.jpg", &img) == IMGHIST_OK &&
                      img->view.width == (turned ? 45u : 67u) &&
                      img->view.height == (turned ? 67u : 45u),
                  what);
            check(imghist_exp_jpeg_fits_gpu(q, qn) == 1, "a JPEG with EXIF fits");
            imghist_image_free(img);
            free(q);
        }
    }
    free(jpeg);
    imghist_destroy(ctx);
}

int main(void)
{
    exif_cases();
    static const struct {
        enum kind k;
        int fits;
        const char *name;
    } kinds[] = {{BASELINE, 1, "baseline YCbCr"}, {GRAY, 1, "gray"},
                 {GRAY22, 0, "gray with 2x2 sampling factors"},
                 {RESTART, 1, "restart markers"}, {PROGRESSIVE, 0, "progressive"},
                 {ARITH, 0, "arithmetic-coded"}, {ADOBE_RGB, 0, "RGB-coded (Adobe)"},
                 {CMYK, 0, "CMYK"}};
    char what[160];
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        unsigned long n = 0;
        unsigned char *p = make(kinds[i].k, &n);
        snprintf(what, sizeof what, "%s: %s", kinds[i].name, kinds[i].fits ? "fits" : "declined");
        check(imghist_exp_jpeg_fits_gpu(p, n) == kinds[i].fits, what);
        free(p);
    }

    unsigned long n = 0;
    unsigned char *p = make(RESTART, &n);
    /* Any file cut short: no EOI at its end. */
    for (size_t cut = 0; cut < n; cut++) {
        if (imghist_exp_jpeg_fits_gpu(p, cut)) {
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
    check(imghist_exp_jpeg_fits_gpu(longer, n + 16) == 1, "bytes after the EOI: fits");
    free(longer);
    /* A 12-bit frame, and a segment longer than the file. */
    const size_t sof = find_marker(p, n, 0xC0);
    check(sof > 0 && p[sof + 4] == 8, "the baseline frame is found");
    if (sof > 0) {
        p[sof + 4] = 12;
        check(imghist_exp_jpeg_fits_gpu(p, n) == 0, "12-bit frame: declined");
        p[sof + 4] = 8;
        const size_t dqt = find_marker(p, n, 0xDB);
        check(dqt > 0, "a DQT segment is found");
        if (dqt > 0) {
            p[dqt + 2] = 0xFF;
            p[dqt + 3] = 0xF0;
            check(imghist_exp_jpeg_fits_gpu(p, n) == 0, "a segment past the end: declined");
        }
    }
    free(p);
    check(imghist_exp_jpeg_fits_gpu((const unsigned char *)"\xff\xd8\xff\xd9", 4) == 0,
          "no frame: declined");
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("ok\n");
    return 0;
}
