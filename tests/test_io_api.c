/*
 * The public file calls on a CPU context: PNG encoding and writing with
 * their refusals, loading refusals, the shape of a loaded view, the input
 * byte limit, "-" read as a file name. A part of test_io (test_io_native.c
 * has its main).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <png.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "api_checks.h"
#include "backend_suite.h"
#include "test_util.h"
#include "views.h"

static imghist_ctx *cpu_ctx(void)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_non_null(ctx);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    return ctx;
}

/* Encode, decode back through imghist (libpng checks the zlib stream and the
 * CRCs), and compare the pixels. */
static void check_png_roundtrip(imghist_ctx *ctx, const imghist_view *v, const void *png,
                                size_t size)
{
    imghist_image *img = NULL;
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "roundtrip.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, v->width);
    assert_int_equal(img->view.height, v->height);
    for (uint32_t y = 0; y < v->height; y++) {
        if (memcmp((const uint8_t *)img->view.data + (size_t)y * v->width,
                   (const uint8_t *)v->data + (size_t)y * v->pitch, v->width) != 0) {
            fail_msg("PNG round trip: row %u differs", y);
        }
    }
    imghist_image_free(img);
}

/* The level-1 writer: one piece below 16 MB of pixels, bands over the
 * context's threads from there. Both give the same bytes for any thread
 * count and the same pixels back. */
static void test_encode_png_writers(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_encode_png_writers"));
    enum { BW = 8195, BH = 4097, BP = 8200 }; /* 33.6 MB: bands; odd width, padded rows */
    uint8_t *px = malloc((size_t)BP * BH);
    assert_non_null(px);
    /* Smooth with noise, as photographs are, so that runs and literals mix;
     * horizontal stripes make Up win some rows and Sub others. */
    for (uint32_t y = 0; y < BH; y++) {
        for (uint32_t x = 0; x < BP; x++) {
            const uint32_t base = (y / 64) % 2 ? x / 7 + y / 5 : y * 3 + x / 40;
            px[(size_t)y * BP + x] = (uint8_t)(base + (tu_next(&r) >> 62));
        }
    }
    const imghist_view sizes[2] = {u8_view(px, BW, 1500, BP), u8_view(px, BW, BH, BP)};
    for (int k = 0; k < 2; k++) {
        void *one = NULL, *three = NULL;
        size_t n1 = 0, n3 = 0;
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 1), IMGHIST_OK);
        EXPECT(ctx, imghist_encode_png(ctx, &sizes[k], &one, &n1), IMGHIST_OK);
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 3), IMGHIST_OK);
        EXPECT(ctx, imghist_encode_png(ctx, &sizes[k], &three, &n3), IMGHIST_OK);
        assert_int_equal(n1, n3);
        assert_memory_equal(one, three, n1);
        check_png_roundtrip(ctx, &sizes[k], three, n3);
        /* Compressed: the data are about 2 bits of noise per pixel. */
        assert_true(n1 < (size_t)sizes[k].width * sizes[k].height / 2);
        imghist_free(one);
        imghist_free(three);
    }
    free(px);
    imghist_destroy(ctx);
}

/* Shapes and contents at the writer's edges: one pixel, one row, one
 * column, odd widths, constant images (runs only: the flat-image path),
 * noise that does not compress, and a flat image with edges and a noisy
 * one, both large enough to be written in bands.
 * Every one decodes (libpng, through imghist) to its pixels, and encodes to
 * the same bytes twice. */
static void test_encode_png_edges(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_encode_png_edges"));
    enum { MAXW = 4801, MAXH = 3600 };
    uint8_t *px = malloc((size_t)MAXW * MAXH);
    assert_non_null(px);
    static const uint32_t shapes[][3] = {
        /* width, height, content: 0 noise, 1 zeros, 2 all 255, 3 blocks with edges */
        {1, 1, 0}, {1, 1, 2}, {1, 9, 0}, {9, 1, 0}, {1, 300, 1}, {300, 1, 2},
        {2, 2, 0}, {3, 5, 0}, {17, 3, 3}, {63, 64, 0}, {65, 33, 3}, {333, 77, 1},
        {333, 77, 2}, {1001, 999, 0}, {4801, 3600, 3}, {4801, 3600, 0},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const uint32_t w = shapes[k][0], h = shapes[k][1], kind = shapes[k][2];
        for (uint32_t y = 0; y < h; y++) {
            for (uint32_t x = 0; x < w; x++) {
                uint8_t v = (uint8_t)(tu_next(&r) >> 56);
                if (kind == 1) v = 0;
                if (kind == 2) v = 255;
                if (kind == 3) v = (uint8_t)(((x / 97) * 37 + (y / 61) * 91) & 0xf0);
                px[(size_t)y * w + x] = v;
            }
        }
        const imghist_view v = u8_view(px, w, h, w);
        void *png = NULL;
        size_t size = 0;
        EXPECT(ctx, imghist_encode_png(ctx, &v, &png, &size), IMGHIST_OK);
        check_png_roundtrip(ctx, &v, png, size);
        /* The same bytes again after the heap's free blocks are dirtied:
         * nothing the deflater reads is left uninitialised. */
        for (size_t junk = 16 << 10; junk <= (120 << 10); junk += 8 << 10) {
            void *p = malloc(junk);
            assert_non_null(p);
            memset(p, 0xa5, junk);
            free(p);
        }
        void *again = NULL;
        size_t again_size = 0;
        EXPECT(ctx, imghist_encode_png(ctx, &v, &again, &again_size), IMGHIST_OK);
        assert_int_equal(again_size, size);
        assert_memory_equal(again, png, size);
        imghist_free(again);
        if (kind == 1 || kind == 2) {
            assert_true(size < 200 + (size_t)w * h / 50); /* runs compress */
        }
        imghist_free(png);
    }
    free(px);
    imghist_destroy(ctx);
}

static void test_encode_png(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_encode_png"));
    enum { EW = 37, EH = 11, EP = 40 };
    uint8_t px[EP * EH];
    fill_random(&r, px, sizeof px);
    const imghist_view v = u8_view(px, EW, EH, EP);
    void *png = NULL;
    size_t size = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &v, &png, &size), IMGHIST_OK);
    assert_non_null(png);
    assert_true(size > 8);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    imghist_image *img = NULL;
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "encoded.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, EW);
    assert_int_equal(img->view.height, EH);
    assert_int_equal(img->view.pitch, EW);
    for (uint32_t y = 0; y < EH; y++) {
        assert_memory_equal((const uint8_t *)img->view.data + (size_t)y * EW, px + (size_t)y * EP,
                            EW);
    }
    imghist_image_free(img);
    imghist_free(png);
    imghist_free(NULL);

    /* 1 x 1, and every value in one row. */
    uint8_t all[256];
    for (int i = 0; i < 256; i++) {
        all[i] = (uint8_t)(255 - i);
    }
    const uint32_t shapes[][2] = {{1, 1}, {256, 1}, {1, 256}};
    for (size_t k = 0; k < 3; k++) {
        const imghist_view sv = u8_view(all, shapes[k][0], shapes[k][1], shapes[k][0]);
        EXPECT(ctx, imghist_encode_png(ctx, &sv, &png, &size), IMGHIST_OK);
        EXPECT(ctx, imghist_load_memory(ctx, png, size, NULL, &img), IMGHIST_OK);
        assert_int_equal(img->view.width, shapes[k][0]);
        assert_int_equal(img->view.height, shapes[k][1]);
        assert_memory_equal(img->view.data, all, (size_t)shapes[k][0] * shapes[k][1]);
        imghist_image_free(img);
        imghist_free(png);
    }

    /* Refusals. */
    imghist_view b;
    EXPECT(NULL, imghist_encode_png(NULL, &v, &png, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, NULL, &png, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, &v, NULL, &size), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_encode_png(ctx, &v, &png, NULL), IMGHIST_E_INVALID_ARG);
    b = v, b.data = NULL;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.width = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.height = 0;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.pitch = EW - 1;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    /* 16-bit samples and 2-4 channels are PNGs too; float is not, nor
     * are 5 channels. */
    b = v, b.dtype = IMGHIST_U16, b.width = EW / 2;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_OK);
    imghist_free(png);
    b = v, b.channels = 2, b.width = EW / 2;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_OK);
    imghist_free(png);
    png = NULL;
    b = v, b.dtype = IMGHIST_F32, b.width = EW / 4;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_UNSUPPORTED);
    b = v, b.channels = 5, b.width = 1;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_INVALID_ARG);
    b = v, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_encode_png(ctx, &b, &png, &size), IMGHIST_E_UNSUPPORTED);
    imghist_destroy(ctx);
}

static void test_write_png_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/out.png", dir);
    uint8_t px[W * H] = {0};
    const imghist_view v = u8_view(px, W, H, W);
    imghist_view b;
    EXPECT(NULL, imghist_write_png(NULL, path, &v), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_write_png(ctx, NULL, &v), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_write_png(ctx, path, NULL), IMGHIST_E_INVALID_ARG);
    b = v, b.data = NULL;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.width = 0;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.pitch = W - 1;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_INVALID_ARG);
    b = v, b.dtype = IMGHIST_F32, b.width = W / 4;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_UNSUPPORTED);
    b = v, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_write_png(ctx, path, &b), IMGHIST_E_UNSUPPORTED);
    /* None of the refusals left a file. */
    assert_false(tu_exists(path));
    EXPECT(ctx, imghist_write_png(ctx, path, &v), IMGHIST_OK);
    assert_true(tu_exists(path));
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* ---- loading ---- */

static void test_load_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    imghist_image *img = NULL;
    const char junk[] = "not an image";
    EXPECT(NULL, imghist_load_memory(NULL, junk, sizeof junk, "x", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_memory(ctx, NULL, 10, "x", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_memory(ctx, junk, sizeof junk, "x", NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_load_file(NULL, "/dev/null", &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_file(ctx, NULL, &img), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_load_file(ctx, "/dev/null", NULL), IMGHIST_E_INVALID_ARG);
    /* A NULL name labels the message "<memory>". */
    img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_load_memory(ctx, junk, sizeof junk, NULL, &img), IMGHIST_E_DECODE);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "<memory>"));
    imghist_image_free(NULL);
    imghist_destroy(ctx);
}

/* A loaded image is a packed U8 host view. */
static void test_loaded_view_shape(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    const char *names[] = {"coffee.png", "hubble_deep_field.jpg"};
    for (size_t i = 0; i < 2; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples_dir(), names[i]);
        imghist_image *img = NULL;
        EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
        assert_non_null(img->view.data);
        assert_int_equal(img->view.dtype, IMGHIST_U8);
        assert_int_equal(img->view.mem, IMGHIST_MEM_HOST);
        assert_int_equal(img->view.pitch, img->view.width);
        assert_true(img->view.channels <= 1);
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

/* A PNG of a few kilobytes (noise does not compress), made outside the
 * library. */
static uint8_t *test_png(size_t *size)
{
    uint8_t px[64 * 64];
    tu_rng r;
    tu_seed(&r, 12345);
    fill_random(&r, px, sizeof px);
    uint8_t *png = tu_png_encode(64, 64, PNG_COLOR_TYPE_GRAY, 8, px, NULL, 0, size);
    assert_non_null(png);
    assert_true(*size > 1000);
    return png;
}

static void test_input_byte_limit(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    size_t size = 0;
    uint8_t *png = test_png(&size);
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/in.png", dir);
    assert_int_equal(tu_write_file(path, png, size), 0);
    char limit[32];

    imghist_image *img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, 100), IMGHIST_OK);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_E_LIMIT);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "100"));
    img = (imghist_image *)(uintptr_t)1;
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    assert_null(img);
    assert_non_null(strstr(imghist_last_error(ctx), "100"));

    /* One byte short: refused, and the message gives the limit (a number
     * that appears nowhere else). */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, (int64_t)size - 1), IMGHIST_OK);
    snprintf(limit, sizeof limit, "%zu", size - 1);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_E_LIMIT);
    if (strstr(imghist_last_error(ctx), limit) == NULL) {
        fail_msg("load_memory over the byte limit %s: \"%s\" does not give it", limit,
                 imghist_last_error(ctx));
    }
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    if (strstr(imghist_last_error(ctx), limit) == NULL) {
        fail_msg("load_file over the byte limit %s: \"%s\" does not give it", limit,
                 imghist_last_error(ctx));
    }

    /* Exactly the size: loads, both ways. */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, (int64_t)size), IMGHIST_OK);
    EXPECT(ctx, imghist_load_memory(ctx, png, size, "in.png", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    imghist_image_free(img);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    imghist_image_free(img);

    /* The pixel limit through load_file too, from the header. */
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64 - 1), IMGHIST_OK);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_E_LIMIT);
    assert_null(img);
    EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, 64 * 64), IMGHIST_OK);
    EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
    imghist_image_free(img);

    free(png);
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

/* "-" is a file name like any other: the library never reads stdin. */
static void test_dash_is_a_file(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    size_t size = 0;
    uint8_t *png = test_png(&size);
    char *dir = tu_temp_dir();
    assert_non_null(dir);
    char cwd[4200];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    imghist_image *img = NULL;
    /* No file "-" here: an I/O error, not a read of stdin. */
    EXPECT(ctx, imghist_load_file(ctx, "-", &img), IMGHIST_E_IO);
    assert_null(img);
    assert_int_equal(tu_write_file("-", png, size), 0);
    EXPECT(ctx, imghist_load_file(ctx, "-", &img), IMGHIST_OK);
    assert_int_equal(img->view.width, 64);
    assert_int_equal(img->view.height, 64);
    imghist_image_free(img);
    assert_int_equal(chdir(cwd), 0);
    free(png);
    tu_remove_tree(dir);
    free(dir);
    imghist_destroy(ctx);
}

const struct CMUnitTest io_api_tests[] = {
    cmocka_unit_test(test_encode_png),
    cmocka_unit_test(test_encode_png_writers),
    cmocka_unit_test(test_encode_png_edges),
    cmocka_unit_test(test_write_png_invalid),
    cmocka_unit_test(test_load_invalid),
    cmocka_unit_test(test_loaded_view_shape),
    cmocka_unit_test(test_input_byte_limit),
    cmocka_unit_test(test_dash_is_a_file),
};
const size_t io_api_test_count = sizeof io_api_tests / sizeof io_api_tests[0];
