/*
 * imghist_equalize and its table through the public header, on the backend
 * the program is run for: refusals with their statuses and messages (on the
 * CPU, where device memory must be refused), in-place and overlapping
 * outputs, the reference equalization at several thread counts and on the
 * photographs, the table's refusals. The other parts of this program:
 * test_equalize_16bit.c (16-bit and masked against a reference),
 * test_equalize_batch.c (PIL's rule, lists and tensors), and in the cuda run
 * the device suites.
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

#include "imghist.h"
#include "imghist_experimental.h"
#include "api_checks.h"
#include "backend_suite.h"
#include "test_util.h"
#include "views.h"

static void test_equalize_invalid(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    static uint8_t src[PITCH * H * 4], dst[PITCH * H * 4 + 64];
    for (size_t i = 0; i < sizeof src; i++) {
        src[i] = (uint8_t)(i * 7);
    }
    uint64_t h[300];
    const imghist_view s = u8_view(src, W, H, PITCH), d = u8_view(dst, W, H, PITCH);
    const imghist_counts out = host_counts(h, 256);
    imghist_view a, b;
    imghist_counts c;

    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &out), IMGHIST_OK);
    EXPECT(NULL, imghist_equalize(NULL, &s, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, NULL, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, &s, NULL, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    c = out, c.data = NULL;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_INVALID_ARG);

    /* Sizes. */
    a = s, a.width = 0, b = d, b.width = 0;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.height = 0, b = d, b.height = 0;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.pitch = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.pitch = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.width = W - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.height = H + 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.height = H - 1;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);

    /* Enums and what is not yet there. */
    a = s, a.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.dtype = (imghist_dtype)7;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    b = d, b.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    c = out, c.mem = (imghist_mem)5;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_INVALID_ARG);
    a = s, a.dtype = IMGHIST_U16, a.width = W / 2, b = d, b.dtype = IMGHIST_U16, b.width = W / 2;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    /* types differ; a 16-bit histogram needs 65536 counters */
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, &out), IMGHIST_E_BUFSIZE);
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_PIL, NULL), IMGHIST_E_UNSUPPORTED);
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_PIL, NULL), IMGHIST_OK);
    /* The method is one imghist_method names. */
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, (imghist_method)2, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "unknown equalization method 2"));
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, (imghist_method)-1, NULL), IMGHIST_E_INVALID_ARG);
    /* The destination holds as many images as the source. */
    b = vw_tensor(d, 2, 0);
    EXPECT(ctx, imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "destination holds 2 images"));
    a = vw_tensor(s, 2, 0);
    EXPECT(ctx, imghist_equalize(ctx, &a, &d, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    a = s, a.dtype = IMGHIST_F32, a.width = W / 4, b = d, b.dtype = IMGHIST_F32, b.width = W / 4;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);
    a = s, a.channels = 2, a.width = W / 2, b = d, b.channels = 2, b.width = W / 2;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);

    /* Device memory on a CPU context. */
    a = s, a.mem = IMGHIST_MEM_DEVICE, b = d, b.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_equalize(ctx, &a, &b, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_UNSUPPORTED);
    c = out, c.mem = IMGHIST_MEM_DEVICE;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_UNSUPPORTED);
    /* Not in the same memory: wrong whatever the backend. */
    b = d, b.mem = IMGHIST_MEM_DEVICE;
    clear_error(ctx, __FILE__, __LINE__);
    imghist_status st = imghist_equalize(ctx, &s, &b, IMGHIST_EQ_OPENCV, NULL);
    if (st != IMGHIST_E_INVALID_ARG && st != IMGHIST_E_UNSUPPORTED) {
        fail_msg("equalize host to device: %d (%s)", (int)st, imghist_strerror(st));
    }
    check_message(ctx, "imghist_equalize(host src, device dst)", __FILE__, __LINE__);

    /* A refusal writes nothing: neither dst nor the counts. */
    memset(dst, 0x5a, sizeof dst);
    poison(h, 300);
    c = out, c.len = 255;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_E_BUFSIZE);
    assert_poisoned(h, 0, 300, "refused equalize");
    for (size_t i = 0; i < sizeof dst; i++) {
        if (dst[i] != 0x5a) {
            fail_msg("equalize refused for a short histogram wrote dst[%zu]", i);
        }
    }
    /* A longer histogram buffer: 256 written, the rest left alone. */
    c = out, c.len = 300;
    EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
    assert_poisoned(h, 256, 300, "equalize with a 300-count buffer");
    imghist_destroy(ctx);
}

/* dst may be src itself at the same pitch; any other overlap is refused
 * before a byte is written. */
static void test_equalize_overlap(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_equalize_overlap"));
    enum { OW = 33, OH = 9, OP = 40 };
    static uint8_t buf[OP * (OH + 2)], keep[sizeof buf], want[OP * OH];
    fill_random(&r, buf, sizeof buf);
    memcpy(keep, buf, sizeof buf);
    const imghist_view s = u8_view(buf, OW, OH, OP);
    struct {
        size_t offset, pitch;
        const char *what;
    } cases[] = {
        {1, OP, "one byte on"},
        {OP, OP, "one row down"},
        {OP * 2 - 1, OP, "two rows less one byte down"},
        {0, OP + 1, "same start, other pitch"},
        {0, OW, "same start, packed pitch"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const imghist_view d = u8_view(buf + cases[i].offset, OW, OH, cases[i].pitch);
        clear_error(ctx, __FILE__, __LINE__);
        const imghist_status st = imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, NULL);
        if (st != IMGHIST_E_INVALID_ARG) {
            fail_msg("overlap \"%s\": %d (%s), expected IMGHIST_E_INVALID_ARG", cases[i].what,
                     (int)st, imghist_strerror(st));
        }
        check_message(ctx, cases[i].what, __FILE__, __LINE__);
        assert_memory_equal(buf, keep, sizeof buf);
    }
    /* Neighbours that share no byte are fine. A view's last byte is the last
     * row's last pixel, (h - 1) * pitch + width - 1: dst may start right
     * after it, inside what would be the last row's padding. */
    const size_t end = (size_t)(OH - 1) * OP + OW;
    static uint8_t big[OP * OH + OW * OH];
    memcpy(big, buf, end);
    const imghist_view sb = u8_view(big, OW, OH, OP);
    const imghist_view db = u8_view(big + end, OW, OH, OW);
    EXPECT(ctx, imghist_equalize(ctx, &sb, &db, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    /* And dst before src. */
    const imghist_view sa = u8_view(big + (size_t)OW * OH, OW, OH, OP);
    const imghist_view da = u8_view(big, OW, OH, OW);
    EXPECT(ctx, imghist_equalize(ctx, &sa, &da, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);

    /* In place at the same pitch: the out-of-place result, padding kept. */
    uint64_t hist[256], got[256];
    reference_equalize(buf, OP, OW, OH, want, OP, hist);
    const imghist_counts c = host_counts(got, 256);
    EXPECT(ctx, imghist_equalize(ctx, &s, &s, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
    assert_memory_equal(got, hist, sizeof got);
    for (uint32_t y = 0; y < OH; y++) {
        assert_memory_equal(buf + (size_t)y * OP, want + (size_t)y * OP, OW);
        assert_memory_equal(buf + (size_t)y * OP + OW, keep + (size_t)y * OP + OW, OP - OW);
    }
    assert_memory_equal(buf + OP * OH, keep + OP * OH, sizeof buf - OP * OH);
    imghist_destroy(ctx);
}

/* ---- the CPU backend's threads ---- */

/* Histogram and equalization of one view at 1, 2, 3 and 8 threads: each the
 * naive reference, dst's padding untouched. */
static void check_threads(imghist_ctx *ctx, const uint8_t *src, uint32_t w, uint32_t h,
                          size_t sp, const char *what)
{
    const size_t dp = w + 5;
    uint8_t *want = malloc(dp * h), *dst = malloc(dp * h), *inplace = malloc(sp * h);
    assert_true(want && dst && inplace);
    uint64_t ref[256];
    reference_equalize(src, sp, w, h, want, dp, ref);
    const imghist_view s = u8_view(src, w, h, sp), d = u8_view(dst, w, h, dp);
    const imghist_view ip = u8_view(inplace, w, h, sp);
    const int threads[] = {1, 2, 3, 8};
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads[t]), IMGHIST_OK);
        uint64_t got[256];
        poison(got, 256);
        const imghist_counts c = host_counts(got, 256);
        EXPECT(ctx, imghist_histogram(ctx, &s, NULL, &c), IMGHIST_OK);
        if (memcmp(got, ref, sizeof got) != 0) {
            fail_msg("%s (%ux%u): histogram at %d threads differs from the reference", what, w,
                     h, threads[t]);
        }
        memset(dst, 0xc3, dp * h);
        poison(got, 256);
        EXPECT(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &c), IMGHIST_OK);
        assert_memory_equal(got, ref, sizeof got);
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(dst + (size_t)y * dp, want + (size_t)y * dp, w) != 0) {
                fail_msg("%s (%ux%u): equalized row %u at %d threads differs", what, w, h, y,
                         threads[t]);
            }
            for (size_t x = w; x < dp; x++) {
                assert_int_equal(dst[(size_t)y * dp + x], 0xc3);
            }
        }
        memcpy(inplace, src, sp * h);
        EXPECT(ctx, imghist_equalize(ctx, &ip, &ip, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(inplace + (size_t)y * sp, want + (size_t)y * dp, w) != 0) {
                fail_msg("%s (%ux%u): in-place row %u at %d threads differs", what, w, h, y,
                         threads[t]);
            }
        }
    }
    free(want);
    free(dst);
    free(inplace);
}

static void test_threads_random_and_odd_shapes(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_threads_random_and_odd_shapes"));
    const uint32_t w = 3001, h = 2003;
    const size_t sp = 3008;
    uint8_t *img = malloc(sp * h);
    assert_non_null(img);
    fill_random(&r, img, sp * h);
    check_threads(ctx, img, w, h, sp, "random");
    /* Skewed values: a few dominate, so per-thread partial counts matter. */
    for (size_t i = 0; i < sp * h; i++) {
        img[i] = (uint8_t)(tu_below(&r, 10) == 0 ? tu_next(&r) >> 56 : 42 + tu_below(&r, 3));
    }
    check_threads(ctx, img, w, h, sp, "skewed");
    const uint32_t shapes[][2] = {{1, 1},   {1, 1000}, {1000, 1}, {5, 2},  {333, 3},
                                  {7, 7},   {4099, 5}, {2, 9},    {1, 2},  {65537, 2}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const uint32_t sw = shapes[i][0], sh = shapes[i][1];
        const size_t pitch = sw + 3;
        uint8_t *p = malloc(pitch * sh);
        assert_non_null(p);
        fill_random(&r, p, pitch * sh);
        check_threads(ctx, p, sw, sh, pitch, "odd shape");
        free(p);
    }
    free(img);
    imghist_destroy(ctx);
}

static void test_threads_photographs(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    const char *names[] = {"hubble_deep_field.jpg", "astronaut.png", "moon.png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples_dir(), names[i]);
        imghist_image *img = NULL;
        EXPECT(ctx, imghist_load_file(ctx, path, &img), IMGHIST_OK);
        check_threads(ctx, img->view.data, img->view.width, img->view.height, img->view.pitch,
                      names[i]);
        imghist_image_free(img);
    }
    imghist_destroy(ctx);
}

/* ---- LUT ---- */

static void test_equalize_lut_invalid(void **state)
{
    (void)state;
    uint64_t h[256] = {0};
    uint8_t lut[256];
    /* empty */
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_E_INVALID_ARG);
    h[9] = 1;
    EXPECT(NULL, imghist_equalize_lut(NULL, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, NULL), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    assert_int_equal(lut[9], 9);
    /* Levels 256 or 65536, a method imghist_method names; PIL's rule has no
     * 16-bit form. The table is written only on success. */
    static uint64_t h16[65536];
    static uint16_t lut16[65536];
    h16[9] = 1;
    const uint32_t bad_levels[] = {0, 255, 257, 4096, 65535, 65537};
    for (size_t i = 0; i < sizeof bad_levels / sizeof bad_levels[0]; i++) {
        EXPECT(NULL, imghist_equalize_lut(h16, bad_levels[i], IMGHIST_EQ_OPENCV, lut16),
               IMGHIST_E_INVALID_ARG);
        EXPECT(NULL, imghist_equalize_lut(h16, bad_levels[i], IMGHIST_EQ_PIL, lut16),
               IMGHIST_E_INVALID_ARG);
    }
    EXPECT(NULL, imghist_equalize_lut(h, 256, (imghist_method)2, lut), IMGHIST_E_INVALID_ARG);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, (imghist_method)-1, lut16),
           IMGHIST_E_INVALID_ARG);
    memset(lut16, 0xa5, sizeof lut16);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_PIL, lut16), IMGHIST_E_UNSUPPORTED);
    assert_int_equal(lut16[9], 0xa5a5);
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_OPENCV, lut16), IMGHIST_OK);
    assert_int_equal(lut16[9], 9); /* one value: the identity */
    assert_int_equal(lut16[65535], 65535);
    memset(lut, 0, sizeof lut);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    assert_int_equal(lut[9], 9); /* one value: PIL's identity */
    assert_int_equal(lut[200], 200);
    memset(h, 0, sizeof h);
    EXPECT(NULL, imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_E_INVALID_ARG);
    h16[9] = 0;
    EXPECT(NULL, imghist_equalize_lut(h16, 65536, IMGHIST_EQ_OPENCV, lut16),
           IMGHIST_E_INVALID_ARG);
}

/* ---- PNG out ---- */

static const bs_test tests[] = {
    BS_CPU_TEST(test_equalize_invalid),
    BS_TEST(test_equalize_overlap),
    BS_TEST(test_threads_random_and_odd_shapes),
    BS_TEST(test_threads_photographs),
    BS_TEST(test_equalize_lut_invalid),
};

const bs_part equalize_part = BS_PART("equalize", tests, NULL, NULL);

extern const bs_part equalize_part;
extern const bs_part equalize_16bit_part;
extern const bs_part equalize_batch_part;
extern const bs_part equalize_cuda_part;
extern const bs_part equalize_wide_cuda_part;
extern const bs_part equalize_batch_cuda_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &equalize_part,
        &equalize_16bit_part,
        &equalize_batch_part,
#ifdef IH_CUDA_PARTS
        &equalize_cuda_part,
        &equalize_wide_cuda_part,
        &equalize_batch_cuda_part,
#endif
    };
    return bs_main(argc, argv, "equalize", parts, BS_COUNT(parts));
}
