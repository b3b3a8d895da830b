/*
 * Image I/O beyond 8-bit gray: IMGHIST_P_LOAD_DEPTH and
 * IMGHIST_P_LOAD_CHANNELS on PNG, PNM, PSD, HDR, JPEG and TIFF; TIFF through
 * libtiff (8/16/float, gray/RGB, strips/tiles, chunky/planar, compressions,
 * orientation, palette, hostile files); PNG output of U8/U16 views of 1 to 4
 * channels. Every test image is made here: TIFFs with libtiff, PNGs with
 * libpng (tu_png_encode), PNM, PSD and HDR by hand. Expected values come from
 * the samples the files were made from and the formulas of imghist.h, never
 * from imghist itself.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>
#include <tiffio.h>
#include <zlib.h>

#include "imghist.h"
#include "test_util.h"

/* ---------------------------------------------------------------- helpers */

static imghist_ctx *ctx_mode(int depth, int channels, imghist_gray_mode gray)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, depth), IMGHIST_OK);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, channels), IMGHIST_OK);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, gray), IMGHIST_OK);
    return ctx;
}

/* Load from memory; fails the test with the library's message otherwise. */
static imghist_image *load(imghist_ctx *ctx, const void *data, size_t size, const char *name)
{
    imghist_image *img = NULL;
    const imghist_status st = imghist_load_memory(ctx, data, size, name, &img);
    if (st != IMGHIST_OK) {
        fail_msg("%s: load failed: %s", name, imghist_last_error(ctx));
    }
    assert_non_null(img);
    return img;
}

static size_t sample_size(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

/* The image is w x h x ch of type t, rows packed, and its samples are `want`. */
static void expect_image(const imghist_image *img, imghist_dtype t, uint32_t w, uint32_t h,
                         uint32_t ch, const void *want, const char *what)
{
    const imghist_view *v = &img->view;
    if (v->dtype != t || v->width != w || v->height != h || v->channels != ch) {
        fail_msg("%s: got %ux%u x%u of type %d, want %ux%u x%u of type %d", what, v->width,
                 v->height, v->channels, (int)v->dtype, w, h, ch, (int)t);
    }
    const size_t row = (size_t)w * ch * sample_size(t);
    assert_int_equal(v->pitch, row);
    if (memcmp(v->data, want, row * h) != 0) {
        const uint8_t *a = v->data, *b = want;
        size_t i = 0;
        while (a[i] == b[i]) {
            i++;
        }
        fail_msg("%s: samples differ from byte %zu (got %u, want %u)", what, i, a[i], b[i]);
    }
}

/* Load with a fresh context in the given mode and compare (see expect_image). */
static void expect_load(int depth, int channels, imghist_gray_mode mode, const void *file,
                        size_t size, imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch,
                        const void *want, const char *what)
{
    imghist_ctx *ctx = ctx_mode(depth, channels, mode);
    imghist_image *img = load(ctx, file, size, what);
    expect_image(img, t, w, h, ch, want, what);
    imghist_image_free(img);
    imghist_destroy(ctx);
}

static uint16_t gray16(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint16_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

static uint8_t gray8(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

static uint8_t luma8(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((4899u * r + 9617u * g + 1868u * b + 8192u) >> 14);
}

/* OpenCV 4.6's float BGR2GRAY on x86-64 with AVX2, pixel x of a row of w:
 * its vector loop's fused order, or its scalar loop's for the last w % 8. */
static float grayf(float r, float g, float b, uint32_t x, uint32_t w)
{
    return x < w - w % 8 ? fmaf(r, 0.299f, fmaf(g, 0.587f, b * 0.114f))
                         : fmaf(r, 0.299f, fmaf(b, 0.114f, g * 0.587f));
}

static uint8_t float_u8(float v)
{
    if (!(v > 0.0f)) {
        return 0;
    }
    return v >= 1.0f ? 255 : (uint8_t)(v * 255.0f + 0.5f);
}

static void *random_samples(tu_rng *r, size_t n, imghist_dtype t)
{
    void *p = malloc(n * sample_size(t) + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        if (t == IMGHIST_U8) {
            ((uint8_t *)p)[i] = (uint8_t)tu_next(r);
        } else if (t == IMGHIST_U16) {
            ((uint16_t *)p)[i] = (uint16_t)tu_next(r);
        } else {
            ((float *)p)[i] = (float)((double)tu_below(r, 3000001) / 1000000.0 - 1.0);
        }
    }
    return p;
}

/* Default-mode (8-bit gray, BGR2GRAY) expectation for samples of any type. */
static uint8_t *expect_default(const void *s, size_t pixels, uint32_t ch, imghist_dtype t)
{
    uint8_t *out = malloc(pixels);
    assert_non_null(out);
    for (size_t i = 0; i < pixels; i++) {
        uint32_t v[3];
        for (uint32_t c = 0; c < (ch >= 3 ? 3u : 1u); c++) {
            const size_t k = i * ch + c;
            v[c] = t == IMGHIST_U8    ? ((const uint8_t *)s)[k]
                   : t == IMGHIST_U16 ? (uint32_t)(((const uint16_t *)s)[k] >> 8)
                                      : float_u8(((const float *)s)[k]);
        }
        out[i] = ch >= 3 ? gray8(v[0], v[1], v[2]) : (uint8_t)v[0];
    }
    return out;
}

/* Native-depth gray expectation. */
static void *expect_native_gray(const void *s, uint32_t w, uint32_t h, uint32_t ch,
                                imghist_dtype t)
{
    const size_t pixels = (size_t)w * h;
    void *out = malloc(pixels * sample_size(t));
    assert_non_null(out);
    for (size_t i = 0; i < pixels; i++) {
        const size_t k = i * ch;
        if (t == IMGHIST_U16) {
            const uint16_t *p = (const uint16_t *)s + k;
            ((uint16_t *)out)[i] = ch >= 3 ? gray16(p[0], p[1], p[2]) : p[0];
        } else if (t == IMGHIST_F32) {
            const float *p = (const float *)s + k;
            ((float *)out)[i] = ch >= 3 ? grayf(p[0], p[1], p[2], (uint32_t)(i % w), w) : p[0];
        } else {
            const uint8_t *p = (const uint8_t *)s + k;
            ((uint8_t *)out)[i] = ch >= 3 ? gray8(p[0], p[1], p[2]) : p[0];
        }
    }
    return out;
}

/* ---------------------------------------------------------------- TIFF writer */

typedef struct tiff_spec {
    uint32_t w, h;
    uint16_t spp;
    imghist_dtype type;
    int miniswhite;       /* else RGB for spp >= 3, min-is-black below */
    uint16_t compression;
    int tiled;            /* 16 x 16 tiles */
    int planar;           /* separate planes */
    uint32_t rps;         /* rows per strip (strips) */
    int big_endian;
    int predictor;
    uint16_t orientation; /* 0: none written */
} tiff_spec;

static void quiet_tiff(const char *module, const char *fmt, va_list ap)
{
    (void)module;
    (void)fmt;
    (void)ap;
}

/* A TIFF in memory made by libtiff from chunky samples. */
static uint8_t *make_tiff(const tiff_spec *s, const void *samples, size_t *size)
{
    char path[] = "/tmp/imghist_tiff_XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    TIFF *t = TIFFOpen(path, s->big_endian ? "wb" : "wl");
    assert_non_null(t);
    const size_t sb = sample_size(s->type);
    const uint16_t photometric = s->miniswhite ? PHOTOMETRIC_MINISWHITE
                                 : s->spp >= 3 ? PHOTOMETRIC_RGB
                                               : PHOTOMETRIC_MINISBLACK;
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, s->w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, s->h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s->spp);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, (uint16_t)(8 * sb));
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                 s->type == IMGHIST_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, s->planar ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
    TIFFSetField(t, TIFFTAG_COMPRESSION, s->compression ? s->compression : COMPRESSION_NONE);
    if (s->predictor) {
        TIFFSetField(t, TIFFTAG_PREDICTOR, s->type == IMGHIST_F32 ? PREDICTOR_FLOATINGPOINT
                                                                  : PREDICTOR_HORIZONTAL);
    }
    if (s->orientation) {
        TIFFSetField(t, TIFFTAG_ORIENTATION, s->orientation);
    }
    if (s->spp == 2 || s->spp == 4) {
        const uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, extra);
    }
    const uint32_t planes = s->planar ? s->spp : 1;
    const size_t unit = s->planar ? sb : sb * s->spp;
    const uint32_t bw = s->tiled ? 16 : s->w, bh = s->tiled ? 16 : s->rps;
    if (s->tiled) {
        TIFFSetField(t, TIFFTAG_TILEWIDTH, 16);
        TIFFSetField(t, TIFFTAG_TILELENGTH, 16);
    } else {
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, s->rps);
    }
    uint8_t *buf = calloc((size_t)bw * bh, unit);
    assert_non_null(buf);
    const uint8_t *src = samples;
    for (uint32_t p = 0; p < planes; p++) {
        for (uint32_t y0 = 0; y0 < s->h; y0 += bh) {
            for (uint32_t x0 = 0; x0 < s->w; x0 += bw) {
                memset(buf, 0, (size_t)bw * bh * unit);
                const uint32_t rows = s->h - y0 < bh ? s->h - y0 : bh;
                for (uint32_t y = 0; y < rows; y++) {
                    for (uint32_t x = x0; x < s->w && x < x0 + bw; x++) {
                        const uint8_t *px = src + ((size_t)(y0 + y) * s->w + x) * s->spp * sb;
                        uint8_t *d = buf + ((size_t)y * bw + (x - x0)) * unit;
                        memcpy(d, s->planar ? px + p * sb : px, unit);
                    }
                }
                int ok;
                if (s->tiled) {
                    const uint32_t tile = TIFFComputeTile(t, x0, y0, 0, (uint16_t)p);
                    ok = TIFFWriteEncodedTile(t, tile, buf, (tmsize_t)((size_t)bw * bh * unit)) >= 0;
                } else {
                    const uint32_t strip = TIFFComputeStrip(t, y0, (uint16_t)p);
                    ok = TIFFWriteEncodedStrip(t, strip, buf, (tmsize_t)((size_t)bw * rows * unit)) >= 0;
                }
                assert_true(ok);
            }
        }
    }
    free(buf);
    TIFFClose(t);
    uint8_t *bytes = tu_read_file(path, size);
    unlink(path);
    assert_non_null(bytes);
    return bytes;
}

/* A TIFF file for the hand-written cases: one strip of h rows. */
static TIFF *open_tiff_one_strip(char *path, uint32_t w, uint32_t h, uint16_t bps,
                                 uint16_t photometric)
{
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    TIFF *t = TIFFOpen(path, "w");
    assert_non_null(t);
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, bps);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, photometric);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, h);
    return t;
}

/* Close it and read it back. */
static uint8_t *close_tiff_read(TIFF *t, const char *path, size_t *size)
{
    TIFFClose(t);
    uint8_t *file = tu_read_file(path, size);
    unlink(path);
    assert_non_null(file);
    return file;
}

/* ---------------------------------------------------------------- PNG */

static const int png_types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};

/* imghist's PNG writer, U8 and U16 views of 1 to 4 channels (with a pitch
 * larger than the row), read back at native depth and channels (identical),
 * and in the default mode (>> 8, gray). Through memory and through a file,
 * at levels 1 and 6. */
static void test_png_write_read_round_trip(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_png_write_read_round_trip"));
    imghist_ctx *native = ctx_mode(1, 1, IMGHIST_GRAY_BGR2GRAY);
    imghist_ctx *gray = ctx_mode(0, 0, IMGHIST_GRAY_BGR2GRAY);
    imghist_ctx *native_gray = ctx_mode(1, 0, IMGHIST_GRAY_BGR2GRAY);
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/out.png", dir);
    for (int level = 1; level <= 6; level += 5) {
        assert_int_equal(imghist_set_param(native, IMGHIST_P_PNG_LEVEL, level), IMGHIST_OK);
        for (int t = 0; t < 2; t++) {
            const imghist_dtype type = t ? IMGHIST_U16 : IMGHIST_U8;
            for (uint32_t ch = 1; ch <= 4; ch++) {
                const uint32_t w = 1 + tu_below(&r, 70), h = 1 + tu_below(&r, 40);
                const size_t row = (size_t)w * ch * sample_size(type), pitch = row + 6;
                void *packed = random_samples(&r, (size_t)w * h * ch, type);
                uint8_t *padded = malloc(pitch * h);
                for (uint32_t y = 0; y < h; y++) {
                    memcpy(padded + y * pitch, (uint8_t *)packed + y * row, row);
                    memset(padded + y * pitch + row, 0xa5, pitch - row);
                }
                const imghist_view v = {.data = padded, .dtype = type, .mem = IMGHIST_MEM_HOST,
                    .width = w, .height = h, .pitch = pitch, .channels = ch};
                void *png = NULL;
                size_t size = 0;
                assert_int_equal(imghist_encode_png(native, &v, &png, &size), IMGHIST_OK);
                /* The PNG itself is what was asked for: libpng's reading of
                 * the header. */
                assert_int_equal(((uint8_t *)png)[24], t ? 16 : 8);
                assert_int_equal(((uint8_t *)png)[25], png_types[ch]);
                char what[100];
                snprintf(what, sizeof what, "level %d, %s x%u, native", level, t ? "U16" : "U8",
                         ch);
                imghist_image *img = load(native, png, size, what);
                expect_image(img, type, w, h, ch, packed, what);
                imghist_image_free(img);

                /* The default mode: 8-bit gray (alpha ignored). */
                snprintf(what, sizeof what, "level %d, %s x%u, default", level,
                         t ? "U16" : "U8", ch);
                img = load(gray, png, size, what);
                uint8_t *want = expect_default(packed, (size_t)w * h, ch, type);
                expect_image(img, IMGHIST_U8, w, h, 1, want, what);
                free(want);
                imghist_image_free(img);

                /* Native depth, gray: the 16-bit weights. */
                snprintf(what, sizeof what, "level %d, %s x%u, native gray", level,
                         t ? "U16" : "U8", ch);
                img = load(native_gray, png, size, what);
                void *wantg = expect_native_gray(packed, w, h, ch, type);
                expect_image(img, type, w, h, 1, wantg, what);
                free(wantg);
                imghist_image_free(img);

                /* The file writer gives the same bytes. */
                assert_int_equal(imghist_write_png(native, path, &v), IMGHIST_OK);
                size_t fsize = 0;
                uint8_t *file = tu_read_file(path, &fsize);
                assert_non_null(file);
                assert_int_equal(fsize, size);
                assert_memory_equal(file, png, size);
                free(file);
                imghist_free(png);
                free(padded);
                free(packed);
            }
        }
    }
    /* Refusals: F32, 5 channels; nothing written. */
    float f[4] = {0};
    const imghist_view fv = {.data = f, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST, .width = 2,
        .height = 2, .pitch = 8, .channels = 1};
    remove(path);
    assert_int_equal(imghist_write_png(native, path, &fv), IMGHIST_E_UNSUPPORTED);
    uint8_t five[10] = {0};
    const imghist_view cv = {.data = five, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = 2,
        .height = 1, .pitch = 10, .channels = 5};
    assert_int_equal(imghist_write_png(native, path, &cv), IMGHIST_E_INVALID_ARG);
    assert_false(tu_exists(path));
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(native);
    imghist_destroy(gray);
    imghist_destroy(native_gray);
}

/* 16-bit PNGs written by libpng (not by imghist): gray and RGB at native
 * depth are the samples and the 16-bit formula; RGBA with channels kept. */
static void test_png16_from_libpng(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_png16_from_libpng"));
    const uint32_t w = 53, h = 29;
    for (uint32_t ch = 1; ch <= 4; ch++) {
        uint16_t *s = random_samples(&r, (size_t)w * h * ch, IMGHIST_U16);
        size_t size = 0;
        uint8_t *png = tu_png_encode(w, h, png_types[ch], 16, s, NULL, 0, &size);
        assert_non_null(png);
        for (int mode = 0; mode < 2; mode++) {
            /* The 16-bit weights whatever the gray mode. */
            uint16_t *want = expect_native_gray(s, w, h, ch, IMGHIST_U16);
            expect_load(1, 0, mode ? IMGHIST_GRAY_LUMA : IMGHIST_GRAY_BGR2GRAY, png, size,
                        IMGHIST_U16, w, h, 1, want, "png16 native gray");
            free(want);
        }
        expect_load(1, 1, IMGHIST_GRAY_BGR2GRAY, png, size, IMGHIST_U16, w, h, ch, s,
                    "png16 native channels");
        /* Channels kept, depth reduced: the high bytes. */
        uint8_t *hi = malloc((size_t)w * h * ch);
        for (size_t i = 0; i < (size_t)w * h * ch; i++) {
            hi[i] = (uint8_t)(s[i] >> 8);
        }
        expect_load(0, 1, IMGHIST_GRAY_BGR2GRAY, png, size, IMGHIST_U8, w, h, ch, hi,
                    "png16 8-bit channels");
        free(hi);
        free(png);
        free(s);
    }
}

/* Palette PNG with tRNS: channels mode expands it to RGBA; gray ignores it. */
static void test_png_palette_trns_channels(void **state)
{
    (void)state;
    const uint32_t w = 7, h = 5;
    const uint8_t pal[4 * 3] = {10, 20, 30, 200, 100, 0, 0, 255, 128, 90, 90, 90};
    uint8_t idx[7 * 5];
    for (size_t i = 0; i < sizeof idx; i++) {
        idx[i] = (uint8_t)(i * 7 % 4);
    }
    /* tu_png_encode has no tRNS: insert one before IDAT by hand. */
    size_t size = 0;
    uint8_t *png = tu_png_encode(w, h, PNG_COLOR_TYPE_PALETTE, 8, idx, pal, 4, &size);
    assert_non_null(png);
    const uint8_t alpha[2] = {0, 77}; /* entries 0 and 1; the rest opaque */
    uint8_t chunk[12 + 2];
    chunk[0] = 0, chunk[1] = 0, chunk[2] = 0, chunk[3] = 2;
    memcpy(chunk + 4, "tRNS", 4);
    memcpy(chunk + 8, alpha, 2);
    const uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), chunk + 4, 6);
    chunk[10] = (uint8_t)(crc >> 24), chunk[11] = (uint8_t)(crc >> 16);
    chunk[12] = (uint8_t)(crc >> 8), chunk[13] = (uint8_t)crc;
    size_t at = 8;
    while (memcmp(png + at + 4, "IDAT", 4) != 0) {
        at += 12 + ((size_t)png[at] << 24 | (size_t)png[at + 1] << 16 |
                    (size_t)png[at + 2] << 8 | png[at + 3]);
    }
    uint8_t *with = malloc(size + sizeof chunk);
    memcpy(with, png, at);
    memcpy(with + at, chunk, sizeof chunk);
    memcpy(with + at + sizeof chunk, png + at, size - at);
    uint8_t want[7 * 5 * 4], want_gray[7 * 5];
    for (size_t i = 0; i < sizeof idx; i++) {
        memcpy(want + 4 * i, pal + 3 * idx[i], 3);
        want[4 * i + 3] = idx[i] < 2 ? alpha[idx[i]] : 255;
        want_gray[i] = gray8(pal[3 * idx[i]], pal[3 * idx[i] + 1], pal[3 * idx[i] + 2]);
    }
    expect_load(0, 1, IMGHIST_GRAY_BGR2GRAY, with, size + sizeof chunk, IMGHIST_U8, w, h, 4, want,
                "palette + tRNS, channels");
    expect_load(0, 0, IMGHIST_GRAY_BGR2GRAY, with, size + sizeof chunk, IMGHIST_U8, w, h, 1,
                want_gray, "palette + tRNS, gray");
    free(with);
    free(png);
}

/* ---------------------------------------------------------------- PNM, PSD, HDR */

/* Binary 16-bit PGM/PPM: native keeps the samples; the default is the high
 * byte of the big-endian sample (OpenCV), in both gray modes. */
static void test_pnm16(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_pnm16"));
    const uint32_t w = 13, h = 9;
    for (uint32_t ch = 1; ch <= 3; ch += 2) {
        const size_t n = (size_t)w * h * ch;
        uint16_t *s = random_samples(&r, n, IMGHIST_U16);
        char head[64];
        const int hl = snprintf(head, sizeof head, "P%c\n%u %u\n65535\n", ch == 1 ? '5' : '6', w, h);
        uint8_t *file = malloc((size_t)hl + 2 * n);
        memcpy(file, head, (size_t)hl);
        for (size_t i = 0; i < n; i++) {
            file[hl + 2 * i] = (uint8_t)(s[i] >> 8);
            file[hl + 2 * i + 1] = (uint8_t)s[i];
        }
        const size_t size = (size_t)hl + 2 * n;
        expect_load(1, 1, IMGHIST_GRAY_BGR2GRAY, file, size, IMGHIST_U16, w, h, ch, s,
                    "pnm16 native");
        uint16_t *g16 = expect_native_gray(s, w, h, ch, IMGHIST_U16);
        expect_load(1, 0, IMGHIST_GRAY_BGR2GRAY, file, size, IMGHIST_U16, w, h, 1, g16,
                    "pnm16 native gray");
        free(g16);

        for (int mode = 0; mode < 2; mode++) {
            uint8_t *want = malloc((size_t)w * h);
            for (size_t i = 0; i < (size_t)w * h; i++) {
                const uint16_t *p = s + i * ch;
                want[i] = ch == 1 ? (uint8_t)(p[0] >> 8)
                          : mode  ? luma8(p[0] >> 8, p[1] >> 8, p[2] >> 8)
                                  : gray8(p[0] >> 8, p[1] >> 8, p[2] >> 8);
            }
            expect_load(0, 0, mode ? IMGHIST_GRAY_LUMA : IMGHIST_GRAY_BGR2GRAY, file, size,
                        IMGHIST_U8, w, h, 1, want, "pnm16 default: high byte");
            free(want);
        }
        free(file);
        free(s);
    }
}

static void put16be(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32be(uint8_t *p, uint32_t v)
{
    put16be(p, v >> 16);
    put16be(p + 2, v & 0xffff);
}

/* A raw (uncompressed) 16-bit RGB PSD: native depth through stbi_load_16. */
static void test_psd16(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_psd16"));
    const uint32_t w = 11, h = 6, n = w * h;
    uint16_t *s = random_samples(&r, (size_t)n * 3, IMGHIST_U16);
    const size_t size = 26 + 4 + 4 + 4 + 2 + (size_t)n * 3 * 2;
    uint8_t *f = calloc(size, 1);
    memcpy(f, "8BPS", 4);
    put16be(f + 4, 1);
    put16be(f + 12, 3);
    put32be(f + 14, h);
    put32be(f + 18, w);
    put16be(f + 22, 16);
    put16be(f + 24, 3); /* RGB */
    uint8_t *planes = f + 26 + 12 + 2;
    for (uint32_t c = 0; c < 3; c++) {
        for (uint32_t i = 0; i < n; i++) {
            put16be(planes + 2 * ((size_t)c * n + i), s[(size_t)i * 3 + c]);
        }
    }
    expect_load(1, 1, IMGHIST_GRAY_BGR2GRAY, f, size, IMGHIST_U16, w, h, 3, s, "psd16 native");
    uint8_t *want = expect_default(s, n, 3, IMGHIST_U16);
    expect_load(0, 0, IMGHIST_GRAY_BGR2GRAY, f, size, IMGHIST_U8, w, h, 1, want, "psd16 default");
    free(want);
    free(f);
    free(s);
}

/* A flat (not run-length) Radiance HDR: native depth is F32 RGB, each
 * sample mantissa * 2^(exponent - 136) as stb_image decodes RGBE. */
static void test_hdr_float(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_hdr_float"));
    const uint32_t w = 5, h = 3; /* under 8 wide: flat scanlines */
    const char head[] = "#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 3 +X 5\n";
    const size_t hl = sizeof head - 1, size = hl + (size_t)w * h * 4;
    uint8_t *f = malloc(size);
    memcpy(f, head, hl);
    float want[5 * 3 * 3];
    for (uint32_t i = 0; i < w * h; i++) {
        uint8_t *px = f + hl + 4 * i;
        for (int c = 0; c < 3; c++) {
            px[c] = (uint8_t)tu_below(&r, 256);
        }
        px[3] = (uint8_t)(120 + tu_below(&r, 20));
        const float scale = (float)ldexp(1.0, px[3] - 136);
        for (int c = 0; c < 3; c++) {
            want[3 * i + c] = px[c] * scale;
        }
    }
    expect_load(1, 1, IMGHIST_GRAY_BGR2GRAY, f, size, IMGHIST_F32, w, h, 3, want, "hdr native");
    float *g = expect_native_gray(want, w, h, 3, IMGHIST_F32);
    expect_load(1, 0, IMGHIST_GRAY_BGR2GRAY, f, size, IMGHIST_F32, w, h, 1, g, "hdr native gray");
    free(g);
    /* The default stays 8-bit. */
    imghist_ctx *ctx = ctx_mode(0, 0, IMGHIST_GRAY_BGR2GRAY);
    imghist_image *img = load(ctx, f, size, "hdr");
    assert_int_equal(img->view.dtype, IMGHIST_U8);
    assert_int_equal(img->view.channels, 1);
    imghist_image_free(img);
    imghist_destroy(ctx);
    free(f);
}

/* ---------------------------------------------------------------- TIFF */

/* 8/16/float x gray/gray+alpha/RGB/RGBA x strips/tiles/planar x none, LZW,
 * deflate (with and without a predictor) x byte order: native decoding gives
 * the samples back; the default mode gives 8-bit gray as documented. */
static void test_tiff_matrix(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_tiff_matrix"));
    imghist_ctx *native = ctx_mode(1, 1, IMGHIST_GRAY_BGR2GRAY);
    imghist_ctx *native_gray = ctx_mode(1, 0, IMGHIST_GRAY_BGR2GRAY);
    imghist_ctx *gray = ctx_mode(0, 0, IMGHIST_GRAY_BGR2GRAY);
    static const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    static const uint16_t comps[3] = {COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE};
    int cases = 0;
    for (int t = 0; t < 3; t++) {
        for (uint16_t spp = 1; spp <= 4; spp++) {
            for (int layout = 0; layout < 3; layout++) { /* strips, tiles, planar strips */
                for (int c = 0; c < 3; c++) {
                    tiff_spec s = {0};
                    s.w = 17 + tu_below(&r, 30);
                    s.h = 9 + tu_below(&r, 30);
                    s.spp = spp;
                    s.type = types[t];
                    s.compression = comps[c];
                    s.tiled = layout == 1;
                    s.planar = layout == 2 && spp > 1;
                    s.rps = 1 + tu_below(&r, 8);
                    s.big_endian = (int)tu_below(&r, 2);
                    s.predictor = c > 0 && tu_below(&r, 2);
                    /* libtiff 4.5 does not read back its own big-endian
                     * float files with the floating-point predictor (it
                     * fails on its own, without imghist): not tested. */
                    if (s.type == IMGHIST_F32 && s.predictor) {
                        s.big_endian = 0;
                    }
                    const size_t n = (size_t)s.w * s.h * spp;
                    void *samples = random_samples(&r, n, s.type);
                    size_t size = 0;
                    uint8_t *file = make_tiff(&s, samples, &size);
                    char what[160];
                    snprintf(what, sizeof what,
                             "TIFF %s x%u %s compression %u predictor %d %s-endian %ux%u",
                             t == 0 ? "U8" : t == 1 ? "U16" : "F32", spp,
                             layout == 0 ? "strips" : layout == 1 ? "tiles" : "planar",
                             s.compression, s.predictor, s.big_endian ? "big" : "little", s.w,
                             s.h);
                    imghist_image *img = load(native, file, size, what);
                    expect_image(img, s.type, s.w, s.h, spp, samples, what);
                    imghist_image_free(img);

                    img = load(native_gray, file, size, what);
                    void *g = expect_native_gray(samples, s.w, s.h, spp, s.type);
                    expect_image(img, s.type, s.w, s.h, 1, g, what);
                    free(g);
                    imghist_image_free(img);

                    img = load(gray, file, size, what);
                    uint8_t *d = expect_default(samples, (size_t)s.w * s.h, spp, s.type);
                    expect_image(img, IMGHIST_U8, s.w, s.h, 1, d, what);
                    free(d);
                    imghist_image_free(img);
                    free(file);
                    free(samples);
                    cases++;
                }
            }
        }
    }
    assert_int_equal(cases, 3 * 4 * 3 * 3);
    imghist_destroy(native);
    imghist_destroy(native_gray);
    imghist_destroy(gray);
}

/* Float TIFF samples are kept bit for bit: NaN, infinities, -0, denormals;
 * the default mode maps NaN to 0 and clamps. */
static void test_tiff_float_special(void **state)
{
    (void)state;
    const uint32_t w = 8, h = 2;
    float s[16] = {NAN, INFINITY, -INFINITY, -0.0f, 1e-40f, 0.5f, 1.0f, 2.0f,
                   -1.0f, 0.25f, 0.999f, 0.001f, 3.4e38f, -3.4e38f, 0.0019608f, 0.0019607f};
    tiff_spec spec = {.w = w, .h = h, .spp = 1, .type = IMGHIST_F32,
                      .compression = COMPRESSION_ADOBE_DEFLATE, .rps = 1};
    size_t size = 0;
    uint8_t *file = make_tiff(&spec, s, &size);
    expect_load(1, 0, IMGHIST_GRAY_BGR2GRAY, file, size, IMGHIST_F32, w, h, 1, s,
                "float specials (bit for bit, NaN included)");
    const uint8_t want[16] = {0, 255, 0, 0, 0, 128, 255, 255, 0, 64, 255, 0, 255, 0, 1, 0};
    expect_load(0, 0, IMGHIST_GRAY_BGR2GRAY, file, size, IMGHIST_U8, w, h, 1, want,
                "float specials, default");
    free(file);
}

/* Min-is-white is inverted; the Orientation tag is applied like EXIF's (6:
 * rotate 90 degrees clockwise), on the raw path and on the RGBA path. */
static void test_tiff_miniswhite_and_orientation(void **state)
{
    (void)state;
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_tiff_miniswhite_and_orientation"));
    const uint32_t w = 6, h = 4;
    uint16_t s16[24];
    for (int i = 0; i < 24; i++) {
        s16[i] = (uint16_t)tu_next(&r);
    }
    tiff_spec spec = {.w = w, .h = h, .spp = 1, .type = IMGHIST_U16, .rps = 4,
                      .miniswhite = 1};
    size_t size = 0;
    uint8_t *file = make_tiff(&spec, s16, &size);
    imghist_ctx *ctx = ctx_mode(1, 1, IMGHIST_GRAY_BGR2GRAY);
    imghist_image *img = load(ctx, file, size, "miniswhite");
    uint16_t inv[24];
    for (int i = 0; i < 24; i++) {
        inv[i] = (uint16_t)(65535 - s16[i]);
    }
    expect_image(img, IMGHIST_U16, w, h, 1, inv, "min-is-white");
    imghist_image_free(img);
    free(file);

    /* Orientation 6 on 8-bit RGB: the result is h x w, pixel (x, y) from
     * stored (y, h - 1 - x). Raw path, then the same picture as a palette
     * image (RGBA path). */
    uint8_t rgb[6 * 4 * 3], idx[6 * 4], pal[24 * 3];
    for (int i = 0; i < 24; i++) {
        idx[i] = (uint8_t)i;
        for (int c = 0; c < 3; c++) {
            pal[3 * i + c] = rgb[3 * i + c] = (uint8_t)tu_next(&r);
        }
    }
    uint8_t want[6 * 4 * 3];
    for (uint32_t y = 0; y < w; y++) {
        for (uint32_t x = 0; x < h; x++) {
            memcpy(want + 3 * (y * h + x), rgb + 3 * ((h - 1 - x) * w + y), 3);
        }
    }
    tiff_spec rs = {.w = w, .h = h, .spp = 3, .type = IMGHIST_U8, .rps = 2, .orientation = 6,
                    .compression = COMPRESSION_LZW};
    file = make_tiff(&rs, rgb, &size);
    img = load(ctx, file, size, "orientation 6");
    expect_image(img, IMGHIST_U8, h, w, 3, want, "orientation 6, raw path");
    imghist_image_free(img);
    free(file);

    char path[] = "/tmp/imghist_pal_XXXXXX";
    TIFF *t = open_tiff_one_strip(path, w, h, 8, PHOTOMETRIC_PALETTE);
    TIFFSetField(t, TIFFTAG_ORIENTATION, 6);
    uint16_t cmap[3][256] = {{0}};
    for (int i = 0; i < 24; i++) {
        for (int c = 0; c < 3; c++) {
            cmap[c][i] = (uint16_t)(pal[3 * i + c] * 257);
        }
    }
    TIFFSetField(t, TIFFTAG_COLORMAP, cmap[0], cmap[1], cmap[2]);
    assert_true(TIFFWriteEncodedStrip(t, 0, idx, sizeof idx) >= 0);
    file = close_tiff_read(t, path, &size);
    img = load(ctx, file, size, "palette orientation 6");
    expect_image(img, IMGHIST_U8, h, w, 3, want, "orientation 6, palette (RGBA path)");
    imghist_image_free(img);
    imghist_destroy(ctx);
    free(file);
}

/* A 1-bit min-is-white image through the RGBA path: gray, 0 or 255. */
static void test_tiff_bilevel(void **state)
{
    (void)state;
    const uint32_t w = 10, h = 3;
    const uint8_t bits[3 * 2] = {0xa5, 0x40, 0xff, 0xc0, 0x00, 0x00};
    char path[] = "/tmp/imghist_bilevel_XXXXXX";
    TIFF *t = open_tiff_one_strip(path, w, h, 1, PHOTOMETRIC_MINISWHITE);
    TIFFSetField(t, TIFFTAG_COMPRESSION, COMPRESSION_CCITTFAX4);
    assert_true(TIFFWriteEncodedStrip(t, 0, (void *)bits, sizeof bits) >= 0);
    size_t size = 0;
    uint8_t *file = close_tiff_read(t, path, &size);
    uint8_t want[30];
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            const int bit = bits[y * 2 + x / 8] >> (7 - x % 8) & 1;
            want[y * w + x] = bit ? 0 : 255; /* 1 is black */
        }
    }
    for (int native = 0; native < 2; native++) {
        expect_load(native, native, IMGHIST_GRAY_BGR2GRAY, file, size, IMGHIST_U8, w, h, 1, want,
                    "bilevel G4");
    }
    free(file);
}

/* A hand-made little-endian 8-bit gray TIFF, directory first: one strip of
 * `count` bytes at `offset`, and `data_len` bytes of data after the header
 * (from `payload`, or made up when it is NULL). */
static uint8_t *tiny_tiff_c(uint32_t w, uint32_t h, uint32_t offset, uint32_t count,
                            uint32_t data_len, int with_offsets, uint16_t compression,
                            const uint8_t *payload, size_t *size)
{
    const int entries = with_offsets ? 8 : 7;
    const size_t ifd_len = 2 + 12 * (size_t)entries + 4;
    const size_t head = 8 + ifd_len;
    *size = head + data_len;
    uint8_t *f = calloc(*size, 1);
    memcpy(f, "II*\0", 4);
    f[4] = 8;
    uint8_t *p = f + 8;
    p[0] = (uint8_t)entries;
    p += 2;
#define ENTRY(tag, type, value)                                                    \
    do {                                                                           \
        p[0] = (uint8_t)(tag), p[1] = (uint8_t)((tag) >> 8);                       \
        p[2] = (uint8_t)(type);                                                    \
        p[4] = 1;                                                                  \
        const uint32_t v_ = (value);                                               \
        p[8] = (uint8_t)v_, p[9] = (uint8_t)(v_ >> 8);                             \
        p[10] = (uint8_t)(v_ >> 16), p[11] = (uint8_t)(v_ >> 24);                  \
        p += 12;                                                                   \
    } while (0)
    ENTRY(256, 4, w);
    ENTRY(257, 4, h);
    ENTRY(258, 3, 8);
    ENTRY(259, 3, compression);
    ENTRY(262, 3, 1);
    if (with_offsets) {
        ENTRY(273, 4, offset);
    }
    ENTRY(278, 4, h);
    ENTRY(279, 4, count);
#undef ENTRY
    for (uint32_t i = 0; i < data_len; i++) {
        f[head + i] = payload ? payload[i] : (uint8_t)(i * 31);
    }
    return f;
}

static uint8_t *tiny_tiff(uint32_t w, uint32_t h, uint32_t offset, uint32_t count,
                          uint32_t data_len, int with_offsets, size_t *size)
{
    return tiny_tiff_c(w, h, offset, count, data_len, with_offsets, COMPRESSION_NONE, NULL,
                       size);
}

/* What libtiff writes on stderr while `fn` runs must be nothing. */
static int stderr_fd_saved = -1;
static char stderr_path[] = "/tmp/imghist_stderr_XXXXXX";

static void capture_stderr(void)
{
    fflush(stderr);
    const int fd = mkstemp(stderr_path);
    assert_true(fd >= 0);
    stderr_fd_saved = dup(2);
    dup2(fd, 2);
    close(fd);
}

static size_t release_stderr(void)
{
    fflush(stderr);
    dup2(stderr_fd_saved, 2);
    close(stderr_fd_saved);
    size_t n = 0;
    free(tu_read_file(stderr_path, &n));
    unlink(stderr_path);
    memcpy(stderr_path + strlen(stderr_path) - 6, "XXXXXX", 6);
    return n;
}

/* Hostile TIFFs fail with IMGHIST_E_DECODE or IMGHIST_E_LIMIT, a one-line
 * message naming the file, nothing on stderr. */
static void test_tiff_hostile(void **state)
{
    (void)state;
    imghist_ctx *ctx = ctx_mode(1, 1, IMGHIST_GRAY_BGR2GRAY);
    uint8_t good_s[40 * 30];
    for (size_t i = 0; i < sizeof good_s; i++) {
        good_s[i] = (uint8_t)(i * 13);
    }
    tiff_spec spec = {.w = 40, .h = 30, .spp = 1, .type = IMGHIST_U8, .rps = 30,
                      .compression = COMPRESSION_ADOBE_DEFLATE};
    size_t good_size = 0;
    uint8_t *good = make_tiff(&spec, good_s, &good_size);
    spec.compression = COMPRESSION_NONE;
    spec.tiled = 1;
    size_t raw_size = 0;
    uint8_t *raw = make_tiff(&spec, good_s, &raw_size);

    struct {
        const char *name;
        uint8_t *data;
        size_t size;
        imghist_status want;
    } cases[20];
    int n = 0;
    size_t sz;
    /* A correct tiny file first: the builder works. */
    uint8_t *ok = tiny_tiff(4, 2, 8 + 2 + 12 * 8 + 4, 8, 8, 1, &sz);
    imghist_image *img = load(ctx, ok, sz, "tiny.tif");
    assert_int_equal(img->view.width, 4);
    imghist_image_free(img);
    free(ok);
    cases[n].name = "huge.tif";
    cases[n].data = tiny_tiff(100000, 100000, 110, 100, 100, 1, &cases[n].size);
    cases[n++].want = IMGHIST_E_LIMIT;
    cases[n].name = "strip-past-end.tif";
    cases[n].data = tiny_tiff(64, 64, 1000000, 4096, 16, 1, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    cases[n].name = "strip-too-short.tif";
    cases[n].data = tiny_tiff(64, 64, 110, 4096, 16, 1, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    cases[n].name = "zero-byte-strip.tif";
    cases[n].data = tiny_tiff(64, 64, 110, 0, 16, 1, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    cases[n].name = "no-strip-offsets.tif";
    cases[n].data = tiny_tiff(64, 64, 0, 4096, 16, 0, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    cases[n].name = "big-declared-30000x30000.tif";
    cases[n].data = tiny_tiff(30000, 30000, 110, 100, 100, 1, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    /* Truncated valid files, compressed and not, at several lengths. */
    static const size_t cuts[4] = {5, 9, 60, 0};
    for (int k = 0; k < 4; k++) {
        const size_t at = cuts[k] ? cuts[k] : good_size - 20;
        cases[n].name = "truncated-deflate.tif";
        cases[n].data = malloc(at);
        memcpy(cases[n].data, good, at);
        cases[n].size = at;
        cases[n++].want = IMGHIST_E_DECODE;
    }
    /* Deflate data cut in half, the directory intact (it comes first). */
    uint8_t plain[64 * 64], packed[64 * 64 + 100];
    for (size_t i = 0; i < sizeof plain; i++) {
        plain[i] = (uint8_t)(i * i >> 3);
    }
    uLongf packed_len = sizeof packed;
    assert_int_equal(compress(packed, &packed_len, plain, sizeof plain), Z_OK);
    cases[n].name = "deflate-data-cut.tif";
    cases[n].data = tiny_tiff_c(64, 64, 110, (uint32_t)packed_len, (uint32_t)packed_len / 2, 1,
                                COMPRESSION_ADOBE_DEFLATE, packed, &cases[n].size);
    cases[n++].want = IMGHIST_E_DECODE;
    /* The same, whole: it decodes (so the cut one fails for the cut). */
    {
        size_t whole_size = 0;
        uint8_t *whole = tiny_tiff_c(64, 64, 110, (uint32_t)packed_len, (uint32_t)packed_len, 1,
                                     COMPRESSION_ADOBE_DEFLATE, packed, &whole_size);
        imghist_image *wimg = load(ctx, whole, whole_size, "deflate-whole.tif");
        expect_image(wimg, IMGHIST_U8, 64, 64, 1, plain, "deflate-whole.tif");
        imghist_image_free(wimg);
        free(whole);
    }
    cases[n].name = "truncated-tiles.tif";
    cases[n].data = malloc(raw_size / 2);
    memcpy(cases[n].data, raw, raw_size / 2);
    cases[n].size = raw_size / 2;
    cases[n++].want = IMGHIST_E_DECODE;
    /* The deflate data damaged in the middle. */
    cases[n].name = "corrupt-deflate.tif";
    cases[n].data = malloc(good_size);
    memcpy(cases[n].data, good, good_size);
    for (size_t i = 16; i < 40; i++) {
        cases[n].data[i] ^= 0x5a;
    }
    cases[n].size = good_size;
    cases[n++].want = IMGHIST_E_DECODE;

    capture_stderr();
    imghist_status got[20];
    char msg[20][600];
    for (int i = 0; i < n; i++) {
        imghist_image *out = (imghist_image *)(uintptr_t)1;
        got[i] = imghist_load_memory(ctx, cases[i].data, cases[i].size, cases[i].name, &out);
        snprintf(msg[i], sizeof msg[i], "%s", imghist_last_error(ctx));
        if (got[i] == IMGHIST_OK) {
            imghist_image_free(out);
        } else {
            assert_null(out);
        }
    }
    const size_t printed = release_stderr();
    for (int i = 0; i < n; i++) {
        printf("  %s -> %s\n", cases[i].name, msg[i]);
        if (got[i] != cases[i].want) {
            fail_msg("%s: status %d (%s), want %d", cases[i].name, (int)got[i], msg[i],
                     (int)cases[i].want);
        }
        assert_non_null(strstr(msg[i], cases[i].name));
        assert_null(strchr(msg[i], '\n'));
        free(cases[i].data);
    }
    assert_int_equal(printed, 0);
    free(good);
    free(raw);
    imghist_destroy(ctx);
}

/* ---------------------------------------------------------------- channels, JPEG, detect */

/* A JPEG sample in channels mode is RGB, and its default gray is the 15-bit
 * formula of those RGB values; JPEG stays 8-bit in native depth. */
static void test_jpeg_channels(void **state)
{
    (void)state;
    const char *dir = getenv("IMGHIST_SAMPLES");
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/hubble_deep_field.jpg", dir);
    imghist_ctx *ch = ctx_mode(1, 1, IMGHIST_GRAY_BGR2GRAY);
    imghist_ctx *gr = ctx_mode(0, 0, IMGHIST_GRAY_BGR2GRAY);
    imghist_image *rgb = NULL, *gray = NULL;
    assert_int_equal(imghist_load_file(ch, path, &rgb), IMGHIST_OK);
    assert_int_equal(imghist_load_file(gr, path, &gray), IMGHIST_OK);
    assert_int_equal(rgb->view.channels, 3);
    assert_int_equal(rgb->view.dtype, IMGHIST_U8);
    const size_t n = (size_t)rgb->view.width * rgb->view.height;
    uint8_t *want = expect_default(rgb->view.data, n, 3, IMGHIST_U8);
    expect_image(gray, IMGHIST_U8, rgb->view.width, rgb->view.height, 1, want, "jpeg gray");
    /* Not gray: the channels differ somewhere. */
    const uint8_t *p = rgb->view.data;
    size_t differ = 0;
    for (size_t i = 0; i < n; i++) {
        differ += p[3 * i] != p[3 * i + 1] || p[3 * i + 1] != p[3 * i + 2];
    }
    assert_true(differ > 0);
    free(want);
    imghist_image_free(rgb);
    imghist_image_free(gray);
    imghist_destroy(ch);
    imghist_destroy(gr);
}

static void test_detect_tiff(void **state)
{
    (void)state;
    assert_string_equal(imghist_detect_format("II*\0\x08\0\0\0", 8), "tiff");
    assert_string_equal(imghist_detect_format("MM\0*\0\0\0\x08", 8), "tiff");
    assert_string_equal(imghist_detect_format("II+\0\x08\0\0\0", 8), "tiff");
    assert_null(imghist_detect_format("II*", 3));
    assert_null(imghist_detect_format("IM*\0\x08\0\0\0", 8));
}

/* test_io_api.c's tests: the public file calls' refusals and limits. */
extern const struct CMUnitTest io_api_tests[];
extern const size_t io_api_test_count;

int main(void)
{
    TIFFSetWarningHandler(quiet_tiff); /* the test's own writing */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png_write_read_round_trip),
        cmocka_unit_test(test_png16_from_libpng),
        cmocka_unit_test(test_png_palette_trns_channels),
        cmocka_unit_test(test_pnm16),
        cmocka_unit_test(test_psd16),
        cmocka_unit_test(test_hdr_float),
        cmocka_unit_test(test_tiff_matrix),
        cmocka_unit_test(test_tiff_float_special),
        cmocka_unit_test(test_tiff_miniswhite_and_orientation),
        cmocka_unit_test(test_tiff_bilevel),
        cmocka_unit_test(test_tiff_hostile),
        cmocka_unit_test(test_jpeg_channels),
        cmocka_unit_test(test_detect_tiff),
    };
    const int native = cmocka_run_group_tests(tests, NULL, NULL);
    const int api = _cmocka_run_group_tests("io_api", io_api_tests, io_api_test_count, NULL, NULL);
    return native != 0 || api != 0;
}
