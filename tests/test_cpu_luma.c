#define _POSIX_C_SOURCE 200809L
/* The CPU reference path, a part of test_cpu: the loaders' gray rules
 * (IMGHIST_P_LOAD_GRAY) against libjpeg, libpng and OpenCV's weights, and
 * PNG output levels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>
#include <stb_image_write.h>
#include <zlib.h>

#include "cpu_hist.h"
#include "imghist.h"
#include "orient.h"
#include "cpu_suite.h"
#include "test_util.h"

static const char *samples_dir(void)
{
    const char *d = getenv("IMGHIST_SAMPLES");
    if (d == NULL || *d == '\0') {
        fail_msg("IMGHIST_SAMPLES is not set (meson test sets it to the samples folder)");
    }
    return d;
}

static imghist_image *load_sample(imghist_ctx *ctx, const char *name, imghist_gray_mode mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", samples_dir(), name);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, mode), IMGHIST_OK);
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_file(ctx, path, &img), IMGHIST_OK);
    return img;
}

static imghist_image *load_bytes(imghist_ctx *ctx, const uint8_t *data, size_t size,
                                 imghist_gray_mode mode)
{
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, mode), IMGHIST_OK);
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_memory(ctx, data, size, "test", &img), IMGHIST_OK);
    return img;
}

static size_t count_differences(const imghist_image *a, const imghist_image *b)
{
    assert_int_equal(a->view.width, b->view.width);
    assert_int_equal(a->view.height, b->view.height);
    size_t n = 0;
    for (size_t i = 0; i < (size_t)a->view.width * a->view.height; i++) {
        n += pixels_of(a)[i] != pixels_of(b)[i];
    }
    return n;
}

/* A gray file has nothing to convert: both modes give the stored samples. */
static void test_luma_gray_png_same_as_default(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    static const char *const gray_samples[] = {"camera.png", "moon.png"};
    for (size_t s = 0; s < 2; s++) {
        imghist_image *def = load_sample(ctx, gray_samples[s], IMGHIST_GRAY_BGR2GRAY);
        imghist_image *luma = load_sample(ctx, gray_samples[s], IMGHIST_GRAY_LUMA);
        assert_int_equal(count_differences(def, luma), 0);
        imghist_image_free(def);
        imghist_image_free(luma);
    }
    /* 16-bit gray with and without alpha: the high byte in both modes. */
    uint16_t g16[64 * 2];
    for (int i = 0; i < 128; i++) {
        g16[i] = (uint16_t)(i * 517 + 3);
    }
    for (int ct = 0; ct < 2; ct++) {
        const int color_type = ct ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY;
        const uint32_t w = ct ? 8 : 16;
        size_t size = 0;
        uint8_t *png = tu_png_encode(w, 8, color_type, 16, g16, NULL, 0, &size);
        assert_non_null(png);
        imghist_image *luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
        for (uint32_t i = 0; i < w * 8; i++) {
            assert_int_equal(pixels_of(luma)[i], g16[ct ? 2 * i : i] >> 8);
        }
        imghist_image_free(luma);
        free(png);
    }
    imghist_destroy(ctx);
}

/* The photograph's luma is libjpeg-turbo's own gray decode (the Y plane),
 * done here with libjpeg directly, and not cvtColor's gray of the decoded
 * colour. */
static void test_luma_jpeg_is_libjpeg_gray(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/hubble_deep_field.jpg", samples_dir());
    size_t size = 0;
    uint8_t *file = tu_read_file(path, &size);
    assert_non_null(file);

    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr jerr;
    cinfo.err = jpeg_std_error(&jerr);
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, file, (unsigned long)size);
    assert_int_equal(jpeg_read_header(&cinfo, TRUE), JPEG_HEADER_OK);
    assert_int_equal(cinfo.num_components, 3);
    cinfo.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&cinfo);
    const uint32_t w = cinfo.output_width, h = cinfo.output_height;
    assert_int_equal(cinfo.output_components, 1);
    uint8_t *want = malloc((size_t)w * h);
    assert_non_null(want);
    while (cinfo.output_scanline < h) {
        JSAMPROW row = want + (size_t)cinfo.output_scanline * w;
        assert_int_equal(jpeg_read_scanlines(&cinfo, &row, 1), 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);

    imghist_ctx *ctx = cpu_ctx();
    imghist_image *luma = load_bytes(ctx, file, size, IMGHIST_GRAY_LUMA);
    assert_int_equal(luma->view.width, w); /* its EXIF orientation is 1 */
    assert_int_equal(luma->view.height, h);
    assert_memory_equal(pixels_of(luma), want, (size_t)w * h);
    imghist_image *def = load_bytes(ctx, file, size, IMGHIST_GRAY_BGR2GRAY);
    const size_t differ = count_differences(def, luma);
    /* The Y plane against gray from upsampled, converted colour: 4197 of the
     * 872000 pixels differ, by at most 5, at this writing. */
    assert_true(differ > (size_t)w * h / 1000);
    imghist_image_free(def);
    imghist_image_free(luma);
    imghist_destroy(ctx);
    free(want);
    free(file);
}

/* libpng's rgb_to_gray as OpenCV sets it up: 0.299 and 0.587 become 9797
 * and 19234 (/ 32768), blue 3737; 8-bit sums are truncated and a pixel whose
 * channels are equal is kept; 16-bit sums are rounded, then the high byte. */
static uint8_t png_luma8(int r, int g, int b)
{
    if (r == g && r == b) {
        return (uint8_t)r;
    }
    return (uint8_t)((9797 * r + 19234 * g + 3737 * b) >> 15);
}

static void test_luma_png_rgb_weights(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_luma_png_rgb_weights"));
    enum { W = 64, H = 32 };
    static uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)tu_next(&r);
    }
    for (size_t i = 0; i < W * H; i += 5) { /* gray pixels among the colour */
        rgb[3 * i + 1] = rgb[3 * i + 2] = rgb[3 * i];
    }
    size_t size = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, rgb, NULL, 0, &size);
    assert_non_null(png);
    imghist_image *luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    size_t off_bgr2gray = 0;
    for (size_t i = 0; i < W * H; i++) {
        const uint8_t *p = rgb + 3 * i;
        assert_int_equal(pixels_of(luma)[i], png_luma8(p[0], p[1], p[2]));
        off_bgr2gray += pixels_of(luma)[i] != cv_gray(p[0], p[1], p[2]);
    }
    assert_true(off_bgr2gray > 0); /* truncation against cvtColor's rounding */
    imghist_image_free(luma);
    free(png);

    static uint16_t rgb16[W * 3];
    for (size_t i = 0; i < W * 3; i++) {
        rgb16[i] = (uint16_t)tu_next(&r);
    }
    png = tu_png_encode(W, 1, PNG_COLOR_TYPE_RGB, 16, rgb16, NULL, 0, &size);
    assert_non_null(png);
    luma = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    for (size_t i = 0; i < W; i++) {
        const uint16_t *p = rgb16 + 3 * i;
        const uint32_t g16 = (9797u * p[0] + 19234u * p[1] + 3737u * p[2] + 16384u) >> 15;
        assert_int_equal(pixels_of(luma)[i], g16 >> 8);
    }
    imghist_image_free(luma);
    free(png);
    imghist_destroy(ctx);
}

/* A copy of png with one more chunk right after IHDR (at byte 33). */
static uint8_t *png_with_chunk(const uint8_t *png, size_t size, const char *type,
                               const uint8_t *body, uint32_t len, int bad_crc, size_t *out_size)
{
    const size_t at = 8 + 25;
    uint8_t *out = malloc(size + 12 + len);
    assert_non_null(out);
    memcpy(out, png, at);
    uint8_t *c = out + at;
    c[0] = (uint8_t)(len >> 24);
    c[1] = (uint8_t)(len >> 16);
    c[2] = (uint8_t)(len >> 8);
    c[3] = (uint8_t)len;
    memcpy(c + 4, type, 4);
    memcpy(c + 8, body, len);
    uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), c + 4, len + 4) ^ (bad_crc ? 1u : 0u);
    c[8 + len] = (uint8_t)(crc >> 24);
    c[9 + len] = (uint8_t)(crc >> 16);
    c[10 + len] = (uint8_t)(crc >> 8);
    c[11 + len] = (uint8_t)crc;
    memcpy(c + 12 + len, png + at, size - at);
    *out_size = size + 12 + len;
    return out;
}

/* A file gamma makes libpng convert in linear light, in the luma mode only
 * (the other decodes colour as stored, as imread(IMREAD_COLOR) does). Gray
 * pixels, black and white stay. */
static void test_luma_png_gamma(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    enum { W = 32, H = 16 };
    static uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < W * H; i++) {
        rgb[3 * i] = (uint8_t)(i * 7);
        rgb[3 * i + 1] = (uint8_t)(i % 3 == 0 ? i * 7 : i * 13 + 5);
        rgb[3 * i + 2] = (uint8_t)(i % 3 == 0 ? i * 7 : 255 - i);
    }
    size_t size = 0, gsize = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_RGB, 8, rgb, NULL, 0, &size);
    assert_non_null(png);
    const uint8_t gama[4] = {0, 0, 0xb1, 0x8f}; /* 45455: 1 / 2.2 */
    uint8_t *gpng = png_with_chunk(png, size, "gAMA", gama, 4, 0, &gsize);
    imghist_image *plain = load_bytes(ctx, png, size, IMGHIST_GRAY_LUMA);
    imghist_image *linear = load_bytes(ctx, gpng, gsize, IMGHIST_GRAY_LUMA);
    imghist_image *def_plain = load_bytes(ctx, png, size, IMGHIST_GRAY_BGR2GRAY);
    imghist_image *def_gamma = load_bytes(ctx, gpng, gsize, IMGHIST_GRAY_BGR2GRAY);
    assert_int_equal(count_differences(def_plain, def_gamma), 0);
    size_t changed = 0;
    for (size_t i = 0; i < W * H; i++) {
        if (i % 3 == 0) {
            assert_int_equal(pixels_of(linear)[i], rgb[3 * i]);
        }
        changed += pixels_of(linear)[i] != pixels_of(plain)[i];
    }
    assert_true(changed > W * H / 3);
    imghist_image_free(plain);
    imghist_image_free(linear);
    imghist_image_free(def_plain);
    imghist_image_free(def_gamma);
    free(gpng);
    free(png);
    imghist_destroy(ctx);
}

/* An eXIf chunk's orientation is applied in the luma mode, as OpenCV 4.6
 * applies it; the BGR2GRAY mode keeps 0.2's results and ignores it. A chunk
 * with a bad CRC or a wrong byte order is one libpng would drop. */
static void test_luma_png_exif_orientation(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    enum { W = 5, H = 3 };
    uint8_t g[W * H];
    for (int i = 0; i < W * H; i++) {
        g[i] = (uint8_t)(i * 10);
    }
    size_t size = 0;
    uint8_t *png = tu_png_encode(W, H, PNG_COLOR_TYPE_GRAY, 8, g, NULL, 0, &size);
    assert_non_null(png);
    /* TIFF, big-endian: IFD 0 at 8, one entry, Orientation SHORT 6. */
    uint8_t tiff[26] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6};
    for (int variant = 0; variant < 3; variant++) {
        if (variant == 2) {
            tiff[1] = 'I'; /* "MI": libpng's "incorrect byte-order specifier" */
        }
        size_t esize = 0;
        uint8_t *epng = png_with_chunk(png, size, "eXIf", tiff, sizeof tiff, variant == 1, &esize);
        imghist_image *luma = load_bytes(ctx, epng, esize, IMGHIST_GRAY_LUMA);
        imghist_image *def = load_bytes(ctx, epng, esize, IMGHIST_GRAY_BGR2GRAY);
        assert_int_equal(def->view.width, W);
        assert_memory_equal(pixels_of(def), g, sizeof g);
        if (variant == 0) {
            uint32_t w = W, h = H;
            uint8_t *want = ih_orient(g, &w, &h, 6);
            assert_non_null(want);
            assert_int_equal(luma->view.width, H);
            assert_int_equal(luma->view.height, W);
            assert_memory_equal(pixels_of(luma), want, sizeof g);
            free(want);
        } else {
            assert_int_equal(luma->view.width, W);
            assert_memory_equal(pixels_of(luma), g, sizeof g);
        }
        imghist_image_free(luma);
        imghist_image_free(def);
        free(epng);
    }
    free(png);
    imghist_destroy(ctx);
}

/* The stb_image formats: OpenCV's 14-bit weights in the luma mode (BMP),
 * and a 16-bit PNM's high byte (stb_image 2.27 would give the low one). */
static void test_luma_bmp_and_pnm16(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_luma_bmp_and_pnm16"));
    enum { W = 23, H = 11 };
    uint8_t rgb[W * H * 3];
    for (size_t i = 0; i < sizeof rgb; i++) {
        rgb[i] = (uint8_t)tu_next(&r);
    }
    /* The two sets of weights part on about 1 random pixel in 400; on
     * (1, 123, 0) they do: 72 here, 73 for cvtColor. */
    rgb[0] = 1;
    rgb[1] = 123;
    rgb[2] = 0;
    static struct membuf m;
    m.len = 0;
    assert_true(stbi_write_bmp_to_func(to_mem, &m, W, H, 3, rgb));
    imghist_image *luma = load_bytes(ctx, m.data, m.len, IMGHIST_GRAY_LUMA);
    size_t off_bgr2gray = 0;
    for (size_t i = 0; i < W * H; i++) {
        const uint8_t *p = rgb + 3 * i;
        const uint8_t want = (uint8_t)((4899 * p[0] + 9617 * p[1] + 1868 * p[2] + 8192) >> 14);
        assert_int_equal(pixels_of(luma)[i], want);
        off_bgr2gray += want != cv_gray(p[0], p[1], p[2]);
    }
    assert_true(off_bgr2gray > 0);
    imghist_image_free(luma);

    /* P5, 4 x 2, maxval 65535, big-endian samples; and P6 1 x 1. */
    static const uint8_t pgm[] = "P5\n4 2\n65535\n"
                                 "\x12\x34\xab\xcd\x00\xff\xff\x00\x80\x01\x7f\xfe\x01\x02\xfe\xdc";
    luma = load_bytes(ctx, pgm, sizeof pgm - 1, IMGHIST_GRAY_LUMA);
    static const uint8_t high[8] = {0x12, 0xab, 0x00, 0xff, 0x80, 0x7f, 0x01, 0xfe};
    assert_memory_equal(pixels_of(luma), high, 8);
    imghist_image_free(luma);
    static const uint8_t ppm[] = "P6 1 1 1000\n\x03\x20\x01\x00\x00\x10";
    luma = load_bytes(ctx, ppm, sizeof ppm - 1, IMGHIST_GRAY_LUMA);
    assert_int_equal(pixels_of(luma)[0], (4899 * 3 + 9617 * 1 + 1868 * 0 + 8192) >> 14);
    imghist_image_free(luma);
    imghist_destroy(ctx);
}

/* ---- PNG output levels (IMGHIST_P_PNG_LEVEL) ---- */

/* Every level writes the same pixels (decoded here with libpng, not with the
 * loader under test), on an equalized photograph and on a pitched view. The
 * default is 1 (zlib's Z_RLE and the Sub filter, OpenCV's imwrite settings),
 * and its file must stay within 10 % of level 6's (0.2's setting) on the
 * photograph, as it did when the default was chosen. */
static void test_png_levels_roundtrip(void **state)
{
    (void)state;
    imghist_ctx *ctx = cpu_ctx();
    int64_t level = -1;
    assert_int_equal(imghist_get_param(ctx, IMGHIST_P_PNG_LEVEL, &level), IMGHIST_OK);
    assert_int_equal(level, 1);
    imghist_image *photo = load_sample(ctx, "coffee.png", IMGHIST_GRAY_BGR2GRAY);
    assert_int_equal(imghist_equalize(ctx, &photo->view, &photo->view, IMGHIST_EQ_OPENCV, NULL),
                     IMGHIST_OK);
    const uint32_t w = photo->view.width, h = photo->view.height;
    /* The photograph's left 301 columns through a view with a pitch. */
    const imghist_view pitched = u8_view(pixels_of(photo), w, 301, h);
    size_t sizes[10] = {0};
    for (int lv = 0; lv <= 9; lv++) {
        assert_int_equal(imghist_set_param(ctx, IMGHIST_P_PNG_LEVEL, lv), IMGHIST_OK);
        for (int v = 0; v < 2; v++) {
            const imghist_view *view = v ? &pitched : &photo->view;
            void *png = NULL;
            size_t size = 0;
            assert_int_equal(imghist_encode_png(ctx, view, &png, &size), IMGHIST_OK);
            png_image im;
            memset(&im, 0, sizeof im);
            im.version = PNG_IMAGE_VERSION;
            assert_true(png_image_begin_read_from_memory(&im, png, size));
            assert_int_equal(im.width, view->width);
            assert_int_equal(im.height, h);
            im.format = PNG_FORMAT_GRAY;
            uint8_t *back = malloc(PNG_IMAGE_SIZE(im));
            assert_non_null(back);
            assert_true(png_image_finish_read(&im, NULL, back, 0, NULL));
            for (uint32_t y = 0; y < h; y++) {
                assert_memory_equal(back + (size_t)y * view->width,
                                    pixels_of(photo) + (size_t)y * w, view->width);
            }
            free(back);
            if (v == 0) {
                sizes[lv] = size;
            }
            imghist_free(png);
        }
    }
    assert_true(sizes[0] > (size_t)w * h);             /* stored */
    assert_true(sizes[1] * 10 <= sizes[6] * 11);        /* within 10 % of 0.2's */
    assert_true(sizes[1] < sizes[0]);
    imghist_image_free(photo);
    imghist_destroy(ctx);
}

const struct CMUnitTest cpu_luma_tests[] = {
    cmocka_unit_test(test_luma_gray_png_same_as_default),
    cmocka_unit_test(test_luma_jpeg_is_libjpeg_gray),
    cmocka_unit_test(test_luma_png_rgb_weights),
    cmocka_unit_test(test_luma_png_gamma),
    cmocka_unit_test(test_luma_png_exif_orientation),
    cmocka_unit_test(test_luma_bmp_and_pnm16),
    cmocka_unit_test(test_png_levels_roundtrip),
};
const size_t cpu_luma_test_count = sizeof cpu_luma_tests / sizeof cpu_luma_tests[0];
