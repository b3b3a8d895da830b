/*
 * Fuzz target: imghist_load_memory on arbitrary bytes, then the histogram and
 * an in-place equalization of whatever decoded.
 *
 * Invariants (a violation is __builtin_trap(), which libFuzzer reports as a
 * crash and the replay program as a failed test):
 *  - the status is IMGHIST_OK or one an in-memory load documents
 *    (IMGHIST_E_DECODE, IMGHIST_E_LIMIT, IMGHIST_E_NOMEM);
 *  - on failure *out is NULL and imghist_last_error() is one non-empty line
 *    without control characters;
 *    on success it is "" and the image is a non-empty U8 host view within
 *    the pixel limit, rows packed (pitch == width) as imghist.h promises;
 *  - the histogram sums to width * height;
 *  - imghist_equalize in place succeeds, returns the same histogram, and
 *    every pixel becomes lut[old] with lut from imghist_equalize_lut;
 *  - everything is freed (ASan's leak check).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imghist.h"
#include "fuzz_check.h"

#define FUZZ_MAX_PIXELS (UINT64_C(1) << 16)

/* Non-empty, short, and no control character at all: the message may quote
 * bytes from the file, which the library must have made printable. */
static int one_line(const char *s)
{
    if (s == NULL || s[0] == '\0' || strlen(s) >= 512) {
        return 0;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            return 0;
        }
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static imghist_ctx *ctx = NULL;
    if (ctx == NULL) {
        CHECK(imghist_create(IMGHIST_BACKEND_CPU, &ctx) == IMGHIST_OK && ctx != NULL);
        /* Small images keep an execution well under a millisecond (at 2^22
         * pixels a run took ~5 ms, ~200 executions a second; at 2^16 ~15000);
         * larger declared sizes still exercise the header checks and the
         * limit path. */
        CHECK(imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, (int64_t)FUZZ_MAX_PIXELS) == IMGHIST_OK);
        /* The two gray modes decode differently (luma: JPEG's own luma plane,
         * libpng's rgb_to_gray and the colour chunks it reads); the replay
         * tests run the corpus in both. */
        const char *gray = getenv("IMGHIST_FUZZ_GRAY");
        if (gray != NULL && strcmp(gray, "luma") == 0) {
            CHECK(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, IMGHIST_GRAY_LUMA) == IMGHIST_OK);
        }
    }

    /* IMGHIST_FUZZ_FORMATS=png,jpeg replays only those formats (the valgrind
     * replay, until the stb_image formats are free of uninitialised reads). */
    static const char *formats = NULL;
    static int formats_read = 0;
    if (!formats_read) {
        formats = getenv("IMGHIST_FUZZ_FORMATS");
        formats_read = 1;
    }
    if (formats != NULL) {
        const char *f = imghist_detect_format(data, size);
        if (f == NULL || strstr(formats, f) == NULL) {
            return 0;
        }
    }

    imghist_image *img = (imghist_image *)(uintptr_t)1; /* must be overwritten */
    imghist_status st = imghist_load_memory(ctx, data, size, "fuzz", &img);
    if (st != IMGHIST_OK) {
        CHECK(st == IMGHIST_E_DECODE || st == IMGHIST_E_LIMIT || st == IMGHIST_E_NOMEM);
        CHECK(img == NULL);
        CHECK(one_line(imghist_last_error(ctx)));
        return 0;
    }
    CHECK(img != NULL);
    CHECK(imghist_last_error(ctx)[0] == '\0');
    const imghist_view *v = &img->view;
    CHECK(v->width > 0 && v->height > 0 && v->data != NULL);
    CHECK(v->dtype == IMGHIST_U8 && v->mem == IMGHIST_MEM_HOST && v->channels <= 1);
    CHECK(v->pitch == v->width); /* the header promises packed rows */
    const uint64_t npix = (uint64_t)v->width * v->height;
    CHECK(npix <= FUZZ_MAX_PIXELS);

    uint64_t hist[256];
    const imghist_counts counts = {.data = hist, .len = 256, .mem = IMGHIST_MEM_HOST};
    CHECK(imghist_histogram(ctx, v, NULL, NULL, &counts) == IMGHIST_OK);
    uint64_t sum = 0;
    for (int b = 0; b < 256; b++) {
        sum += hist[b];
    }
    CHECK(sum == npix);

    uint8_t lut[256];
    CHECK(imghist_equalize_lut(hist, lut) == IMGHIST_OK);

    /* Keep the original rows to check the in-place result against the LUT. */
    uint8_t *const pixels = v->data;
    const size_t rowbytes = v->width;
    uint8_t *orig = malloc(rowbytes * v->height);
    CHECK(orig != NULL);
    for (uint32_t y = 0; y < v->height; y++) {
        memcpy(orig + (size_t)y * rowbytes, pixels + (size_t)y * v->pitch, rowbytes);
    }

    uint64_t hist2[256];
    const imghist_counts counts2 = {.data = hist2, .len = 256, .mem = IMGHIST_MEM_HOST};
    CHECK(imghist_equalize(ctx, v, v, &counts2) == IMGHIST_OK);
    CHECK(memcmp(hist, hist2, sizeof hist) == 0);
    for (uint32_t y = 0; y < v->height; y++) {
        const uint8_t *o = orig + (size_t)y * rowbytes;
        const uint8_t *p = pixels + (size_t)y * v->pitch;
        for (uint32_t x = 0; x < v->width; x++) {
            CHECK(p[x] == lut[o[x]]);
        }
    }
    free(orig);
    imghist_image_free(img);
    return 0;
}
