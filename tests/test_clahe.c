/*
 * imghist_clahe and imghist_apply_lut over tensors on the backend the
 * program is run for: a tensor's images equal the single calls, at several
 * CPU thread counts. The cuda run adds test_clahe_cuda.c, the CUDA backend
 * against the CPU bit for bit. Grids past the image's size against a
 * result worked out by hand, and the grid and overlap refusals. OpenCV's own
 * results are checked by test_clahe_ref.py through the CLI and, for grids
 * the CLI does not take, by test_clahe_grids_ref.py.
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

/* The first `bytes` of each of h rows of a (pitch ap) and b (pitch bp) agree. */
static void assert_rows_equal(const uint8_t *a, size_t ap, const uint8_t *b, size_t bp,
                              size_t bytes, uint32_t h)
{
    for (uint32_t y = 0; y < h; y++) {
        assert_memory_equal(a + (size_t)y * ap, b + (size_t)y * bp, bytes);
    }
}

/* CLAHE, lookup tables and their lists on a tensor: the images one by one,
 * 8- and 16-bit, into a tensor of another layout and in place. */
static void test_tensor_clahe_and_lut(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_tensor_clahe_and_lut"));
    enum { N = 4, TW = 37, TH = 23, SP = 80, DP = 82 };
    const ptrdiff_t simg = (ptrdiff_t)SP * TH + 6, dimg = -((ptrdiff_t)DP * TH + 2);
    static uint8_t src[N * (SP * TH + 6)], dst[N * (DP * TH + 2)], one[DP * TH];
    static uint8_t inplace[sizeof src];
    uint8_t *dfirst = dst + (N - 1) * -dimg;
    const imghist_dtype types[] = {IMGHIST_U8, IMGHIST_U16};
    for (int threads = 1; threads <= 2; threads++) {
        EXPECT(ctx, imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
        for (size_t ty = 0; ty < 2; ty++) {
            fill_random(&r, src, sizeof src);
            const uint32_t w = types[ty] == IMGHIST_U16 ? TW : TW * 2;
            imghist_view s = u8_view(src, w, TH, SP), d = u8_view(dfirst, w, TH, DP);
            s.dtype = d.dtype = types[ty];
            const imghist_view st = vw_tensor(s, N, simg), dt = vw_tensor(d, N, dimg);
            memset(dst, 0x77, sizeof dst);
            EXPECT(ctx, imghist_clahe(ctx, &st, &dt, 2.5, 3, 2), IMGHIST_OK);
            imghist_view ls[N], ld[N];
            for (size_t i = 0; i < N; i++) {
                ls[i] = s, ls[i].data = tensor_image(src, simg, i);
                ld[i] = d, ld[i].data = one;
                memset(one, 0x77, sizeof one);
                EXPECT(ctx, imghist_clahe(ctx, &ls[i], &ld[i], 2.5, 3, 2), IMGHIST_OK);
                assert_memory_equal(tensor_image(dfirst, dimg, i), one, sizeof one);
            }
            /* The list form: the same images. */
            for (size_t i = 0; i < N; i++) {
                ld[i].data = tensor_image(dfirst, dimg, i);
            }
            static uint8_t keep[sizeof dst];
            memcpy(keep, dst, sizeof dst);
            memset(dst, 0x11, sizeof dst);
            EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, N, 2.5, 3, 2), IMGHIST_OK);
            for (size_t i = 0; i < N; i++) {
                assert_rows_equal(tensor_image(dfirst, dimg, i), DP,
                                  tensor_image(keep + (dfirst - dst), dimg, i), DP, TW * 2, TH);
            }
            /* In place (rows of TW * 2 bytes either type). */
            memcpy(inplace, src, sizeof src);
            imghist_view ip = st;
            ip.data = inplace;
            EXPECT(ctx, imghist_clahe(ctx, &ip, &ip, 2.5, 3, 2), IMGHIST_OK);
            for (size_t i = 0; i < N; i++) {
                assert_rows_equal(tensor_image(inplace, simg, i), SP,
                                  tensor_image(keep + (dfirst - dst), dimg, i), DP, TW * 2, TH);
            }
        }
        /* A table on a tensor of 8-bit images, and in place. */
        fill_random(&r, src, sizeof src);
        uint8_t lut[256];
        fill_random(&r, lut, sizeof lut);
        const imghist_view st = vw_tensor(u8_view(src, TW, TH, SP), N, simg);
        const imghist_view dt = vw_tensor(u8_view(dfirst, TW, TH, DP), N, dimg);
        memset(dst, 0x77, sizeof dst);
        EXPECT(ctx, imghist_apply_lut(ctx, &st, &dt, lut), IMGHIST_OK);
        for (size_t i = 0; i < N; i++) {
            const imghist_view s1 = u8_view(tensor_image(src, simg, i), TW, TH, SP);
            const imghist_view d1 = u8_view(one, TW, TH, DP);
            memset(one, 0x77, sizeof one);
            EXPECT(ctx, imghist_apply_lut(ctx, &s1, &d1, lut), IMGHIST_OK);
            assert_memory_equal(tensor_image(dfirst, dimg, i), one, (size_t)DP * (TH - 1) + TW);
        }
        memcpy(inplace, src, sizeof src);
        imghist_view ip = st;
        ip.data = inplace;
        EXPECT(ctx, imghist_apply_lut(ctx, &ip, &ip, lut), IMGHIST_OK);
        for (size_t i = 0; i < N; i++) {
            assert_rows_equal(tensor_image(inplace, simg, i), SP, tensor_image(dfirst, dimg, i),
                              DP, TW, TH);
        }
        /* Refusals: a destination of another count, a list view of several
         * images. */
        const imghist_view d2 = vw_tensor(dt, N - 1, dimg);
        EXPECT(ctx, imghist_apply_lut(ctx, &st, &d2, lut), IMGHIST_E_INVALID_ARG);
        assert_non_null(strstr(imghist_last_error(ctx), "destination holds 3 images"));
        EXPECT(ctx, imghist_clahe(ctx, &st, &d2, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        const imghist_view one_dst = u8_view(one, TW, TH, DP);
        EXPECT(ctx, imghist_clahe(ctx, &st, &one_dst, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        imghist_view ls[2] = {u8_view(src, TW, TH, SP), st};
        imghist_view ld[2] = {u8_view(one, TW, TH, DP), u8_view(dfirst, TW, TH, DP)};
        EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, 2, 2.5, 3, 2), IMGHIST_E_INVALID_ARG);
        assert_non_null(strstr(imghist_last_error(ctx), "list view 1 holds several images"));
    }
    imghist_destroy(ctx);
}

/* Grids with more tiles than pixels on both sides make every tile one
 * pixel, whose table is 0 below its value and the top level from it on;
 * each output pixel then blends, with weights of one half, the tables of
 * itself and of its left, upper and upper-left neighbours (the image's edge
 * standing in for missing ones): k of the four at or below its value give
 * round-half-even(k / 4 * top). An answer worked out without the library's
 * geometry, for 8 and 16 bits, on a list, a tensor and in place; and the
 * grid refusals. */
static void test_clahe_grid_past_image(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    tu_rng r;
    tu_seed(&r, tu_fresh_seed("test_clahe_grid_past_image"));
    enum { W = 13, H = 7, N = 3 };
    static const uint32_t grids[][2] = {{W + 1, H + 1}, {300, 300}, {1000, 9}, {W + 2, 5000}};
    static uint16_t src[N][H][W], dst[N][H][W];
    static const uint32_t u8_of[5] = {0, 64, 128, 191, 255};
    static const uint32_t u16_of[5] = {0, 16384, 32768, 49151, 65535};
    for (int wide = 0; wide < 2; wide++) {
        const imghist_dtype t = wide ? IMGHIST_U16 : IMGHIST_U8;
        const size_t es = wide ? 2 : 1, pitch = W * 2; /* rows of W uint16_t either way */
        for (size_t g = 0; g < sizeof grids / sizeof grids[0]; g++) {
            uint8_t *sb = (uint8_t *)src, *db = (uint8_t *)dst;
            fill_random(&r, sb, sizeof src);
            if (!wide) { /* a few values only: ties between neighbours */
                for (size_t i = 0; i < sizeof src; i++) sb[i] &= 0x3;
            }
            imghist_view s = u8_view(sb, W, H, pitch), d = u8_view(db, W, H, pitch);
            s.dtype = d.dtype = t;
            const imghist_view ts = vw_tensor(s, N, sizeof src[0]);
            const imghist_view td = vw_tensor(d, N, sizeof dst[0]);
            for (int form = 0; form < 3; form++) {
                memset(dst, 0x77, sizeof dst);
                static uint16_t keep[N][H][W];
                memcpy(keep, src, sizeof src);
                if (form == 0) {
                    EXPECT(ctx, imghist_clahe(ctx, &ts, &td, 40.0, grids[g][0], grids[g][1]),
                           IMGHIST_OK);
                } else if (form == 1) {
                    imghist_view ls[N], ld[N];
                    for (size_t i = 0; i < N; i++) {
                        ls[i] = s, ls[i].data = src[i];
                        ld[i] = d, ld[i].data = dst[i];
                    }
                    EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, N, 40.0, grids[g][0],
                                                   grids[g][1]), IMGHIST_OK);
                } else {
                    memcpy(dst, src, sizeof src);
                    EXPECT(ctx, imghist_clahe(ctx, &td, &td, 40.0, grids[g][0], grids[g][1]),
                           IMGHIST_OK);
                }
                for (size_t i = 0; i < N; i++) {
                    for (uint32_t y = 0; y < H; y++) {
                        for (uint32_t x = 0; x < W; x++) {
                            const uint8_t *kb = (const uint8_t *)keep[i];
                            const uint8_t *ob = (const uint8_t *)dst[i];
#define AT(b, xx, yy) (es == 1 ? (uint32_t)(b)[(size_t)(yy) * pitch + (xx)] \
                               : (uint32_t)((const uint16_t *)(b))[(size_t)(yy) * W + (xx)])
                            const uint32_t v = AT(kb, x, y);
                            const uint32_t x1 = x > 0 ? x - 1 : 0, y1 = y > 0 ? y - 1 : 0;
                            const uint32_t k = (AT(kb, x1, y1) <= v) + (AT(kb, x, y1) <= v) +
                                               (AT(kb, x1, y) <= v) + 1;
                            const uint32_t want = wide ? u16_of[k] : u8_of[k];
                            if (AT(ob, x, y) != want) {
                                fail_msg("grid %ux%u %s form %d: image %zu (%u, %u) is %u, "
                                         "not %u", grids[g][0], grids[g][1],
                                         wide ? "u16" : "u8", form, i, x, y, AT(ob, x, y), want);
                            }
#undef AT
                        }
                    }
                }
            }
        }
    }
    /* Each side 1 to 2^31 - 1. */
    const imghist_view s = u8_view((uint8_t *)src, W, H, W), d = u8_view((uint8_t *)dst, W, H, W);
    EXPECT(ctx, imghist_clahe(ctx, &s, &d, 40.0, 0, 8), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_clahe(ctx, &s, &d, 40.0, 8, 0), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_clahe(ctx, &s, &d, 40.0, 2147483648u, 8), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "tile grid"));
    EXPECT(ctx, imghist_clahe(ctx, &s, &d, 40.0, 2147483647u, 2147483647u), IMGHIST_OK);
    imghist_destroy(ctx);
}

/* A batch's destination may be its own source only: every image is read
 * before any is written. */
static void test_clahe_batch_overlap(void **state)
{
    (void)state;
    imghist_ctx *ctx = bs_new_ctx();
    enum { W = 16, H = 8 };
    static uint8_t buf[4 * W * H];
    const imghist_view s = vw_tensor(u8_view(buf, W, H, W), 3, W * H);
    const imghist_view d = vw_tensor(u8_view(buf + W * H, W, H, W), 3, W * H);
    EXPECT(ctx, imghist_clahe(ctx, &s, &d, 40.0, 2, 2), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "overlap"));
    imghist_view ls[2] = {u8_view(buf, W, H, W), u8_view(buf + W * H, W, H, W)};
    imghist_view ld[2] = {ls[1], ls[0]};
    EXPECT(ctx, imghist_clahe_list(ctx, ls, ld, 2, 40.0, 2, 2), IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_clahe_list(ctx, ls, ls, 2, 40.0, 2, 2), IMGHIST_OK);
    imghist_destroy(ctx);
}

/* ---- imghist_equalize ---- */

static const bs_test tests[] = {
    BS_TEST(test_tensor_clahe_and_lut),
    BS_TEST(test_clahe_grid_past_image),
    BS_TEST(test_clahe_batch_overlap),
};

const bs_part clahe_part = BS_PART("clahe", tests, NULL, NULL);

extern const bs_part clahe_part;
extern const bs_part clahe_cuda_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &clahe_part,
#ifdef IH_CUDA_PARTS
        &clahe_cuda_part,
#endif
    };
    return bs_main(argc, argv, "clahe", parts, BS_COUNT(parts));
}
