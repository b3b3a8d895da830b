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
 * Then the same bytes again with IMGHIST_P_LOAD_DEPTH and
 * IMGHIST_P_LOAD_CHANNELS set (the file's depth and channels):
 *  - the same status as the 8-bit gray load (both decode or neither does),
 *    the same size; U8, U16 or F32, 1 to 4 channels, rows packed;
 *  - every channel's histogram sums to width * height (natural bins for
 *    integers; 64 bins over [0, 1) with the outlier counters for float);
 *  - small U8 and U16 images survive imghist_encode_png and a native load
 *    bit for bit;
 *  - with IMGHIST_FUZZ_TWICE=1 set, a second native load of the same bytes,
 *    made after a block of the image's size was filled with 0x5a and freed
 *    (so that a decoder leaving bytes unwritten would likely see other
 *    garbage), gives the same image byte for byte.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "imghist.h"
#include "fuzz_check.h"

static void check_native(const uint8_t *data, size_t size, imghist_status gray_status,
                         uint32_t gray_w, uint32_t gray_h);

/* The pixel limit: 2^16, or IMGHIST_FUZZ_MAX_PIXELS (the replay of the
 * conformance suites, whose images are larger). */
static uint64_t fuzz_max_pixels(void)
{
    static uint64_t limit = 0;
    if (limit == 0) {
        const char *e = getenv("IMGHIST_FUZZ_MAX_PIXELS");
        limit = e != NULL ? strtoull(e, NULL, 10) : 0;
        if (limit == 0) {
            limit = UINT64_C(1) << 16;
        }
    }
    return limit;
}
#define FUZZ_MAX_PIXELS fuzz_max_pixels()

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

/* IMGHIST_FUZZ_GRAY=luma: the luma gray mode; IMGHIST_FUZZ_TRUNCATED=1:
 * JPEGs that end early are read, so that the part libjpeg-turbo makes up goes
 * through the checks too. */
static void env_params(imghist_ctx *ctx)
{
    const char *gray = getenv("IMGHIST_FUZZ_GRAY");
    if (gray != NULL && strcmp(gray, "luma") == 0) {
        CHECK(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, IMGHIST_GRAY_LUMA) == IMGHIST_OK);
    }
    const char *cut = getenv("IMGHIST_FUZZ_TRUNCATED");
    if (cut != NULL && strcmp(cut, "1") == 0) {
        CHECK(imghist_set_param(ctx, IMGHIST_P_LOAD_TRUNCATED, 1) == IMGHIST_OK);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static imghist_ctx *ctx = NULL;
    if (ctx == NULL) {
        CHECK(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx) == IMGHIST_OK && ctx != NULL);
        /* Small images keep an execution well under a millisecond (at 2^22
         * pixels a run took ~5 ms, ~200 executions a second; at 2^16 ~15000);
         * larger declared sizes still exercise the header checks and the
         * limit path. */
        CHECK(imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, (int64_t)FUZZ_MAX_PIXELS) == IMGHIST_OK);
        /* The two gray modes decode differently (luma: JPEG's own luma plane,
         * libpng's rgb_to_gray and the colour chunks it reads); the replay
         * tests run the corpus in both. */
        env_params(ctx);
    }

    /* IMGHIST_FUZZ_FORMATS=png,jpeg,... replays only those formats (the
     * valgrind replay leaves out those stb_image still decodes). */
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
        check_native(data, size, st, 0, 0);
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
    CHECK(imghist_histogram(ctx, v, NULL, &counts) == IMGHIST_OK);
    uint64_t sum = 0;
    for (int b = 0; b < 256; b++) {
        sum += hist[b];
    }
    CHECK(sum == npix);

    uint8_t lut[256];
    CHECK(imghist_equalize_lut(hist, 256, IMGHIST_EQ_OPENCV, lut) == IMGHIST_OK);

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
    CHECK(imghist_equalize(ctx, v, v, IMGHIST_EQ_OPENCV, &counts2) == IMGHIST_OK);
    CHECK(memcmp(hist, hist2, sizeof hist) == 0);
    for (uint32_t y = 0; y < v->height; y++) {
        const uint8_t *o = orig + (size_t)y * rowbytes;
        const uint8_t *p = pixels + (size_t)y * v->pitch;
        for (uint32_t x = 0; x < v->width; x++) {
            CHECK(p[x] == lut[o[x]]);
        }
    }
    free(orig);
    const uint32_t w = v->width, h = v->height;
    imghist_image_free(img);
    check_native(data, size, IMGHIST_OK, w, h);
    return 0;
}

/* The native load of the same bytes (see the top). */
static void check_native(const uint8_t *data, size_t size, imghist_status gray_status,
                         uint32_t gray_w, uint32_t gray_h)
{
    static imghist_ctx *ctx = NULL;
    if (ctx == NULL) {
        CHECK(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx) == IMGHIST_OK && ctx != NULL);
        CHECK(imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, (int64_t)FUZZ_MAX_PIXELS) == IMGHIST_OK);
        CHECK(imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, 1) == IMGHIST_OK);
        CHECK(imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 1) == IMGHIST_OK);
        env_params(ctx);
    }
    imghist_image *img = (imghist_image *)(uintptr_t)1;
    const imghist_status st = imghist_load_memory(ctx, data, size, "fuzz", &img);
    if (st != IMGHIST_OK) {
        /* NOMEM may strike one load and not the other. */
        CHECK(st == gray_status || st == IMGHIST_E_NOMEM || gray_status == IMGHIST_E_NOMEM);
        CHECK(img == NULL);
        CHECK(one_line(imghist_last_error(ctx)));
        return;
    }
    CHECK(gray_status == IMGHIST_OK);
    const imghist_view *v = &img->view;
    CHECK(v->width == gray_w && v->height == gray_h && v->data != NULL);
    CHECK(v->mem == IMGHIST_MEM_HOST && v->channels >= 1 && v->channels <= 4);
    CHECK(v->dtype == IMGHIST_U8 || v->dtype == IMGHIST_U16 || v->dtype == IMGHIST_F32);
    const size_t sample = v->dtype == IMGHIST_U8 ? 1 : v->dtype == IMGHIST_U16 ? 2 : 4;
    CHECK(v->pitch == (size_t)v->width * v->channels * sample);
    const uint64_t npix = (uint64_t)v->width * v->height;

    const imghist_histspec float_spec = {64, 0.0, 1.0, IMGHIST_OUTLIERS};
    const imghist_histspec *spec = v->dtype == IMGHIST_F32 ? &float_spec : NULL;
    const size_t len = imghist_counts_len(spec, v->dtype, v->channels);
    CHECK(len > 0);
    uint64_t *hist = malloc(len * sizeof *hist);
    CHECK(hist != NULL);
    const imghist_counts counts = {.data = hist, .len = len, .mem = IMGHIST_MEM_HOST};
    CHECK(imghist_histogram(ctx, v, spec, &counts) == IMGHIST_OK);
    const size_t per = len / v->channels;
    for (uint32_t c = 0; c < v->channels; c++) {
        uint64_t sum = 0;
        for (size_t b = 0; b < per; b++) {
            sum += hist[c * per + b];
        }
        CHECK(sum == npix);
    }
    free(hist);

    static int twice = -1;
    if (twice < 0) {
        const char *t = getenv("IMGHIST_FUZZ_TWICE");
        twice = t != NULL && strcmp(t, "1") == 0;
    }
    if (twice) {
        const size_t bytes = v->pitch * v->height;
        void *scribble = malloc(bytes);
        CHECK(scribble != NULL);
        memset(scribble, 0x5a, bytes);
        free(scribble);
        imghist_image *again = NULL;
        CHECK(imghist_load_memory(ctx, data, size, "fuzz", &again) == IMGHIST_OK);
        CHECK(again->view.dtype == v->dtype && again->view.channels == v->channels &&
              again->view.width == v->width && again->view.height == v->height &&
              again->view.pitch == v->pitch);
        CHECK(memcmp(again->view.data, v->data, bytes) == 0);
        imghist_image_free(again);
    }

    if (v->dtype != IMGHIST_F32 && npix <= 4096) {
        void *png = NULL;
        size_t png_size = 0;
        CHECK(imghist_encode_png(ctx, v, &png, &png_size) == IMGHIST_OK);
        imghist_image *back = NULL;
        CHECK(imghist_load_memory(ctx, png, png_size, "fuzz.png", &back) == IMGHIST_OK);
        CHECK(back->view.dtype == v->dtype && back->view.channels == v->channels &&
              back->view.width == v->width && back->view.height == v->height);
        CHECK(memcmp(back->view.data, v->data, v->pitch * v->height) == 0);
        imghist_image_free(back);
        imghist_free(png);
    }
    imghist_image_free(img);
}
