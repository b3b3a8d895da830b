/*
 * Equalization of many images through the public API, on the backend under
 * test (a part of test_equalize):
 * PIL's LUT (imghist_equalize_lut with IMGHIST_EQ_PIL) against a reference
 * written from Pillow's ImageOps.equalize source and against tables worked
 * out by hand; the method argument of imghist_equalize, masked or not;
 * imghist_equalize_list and views of several images against a loop of
 * imghist_equalize for both rules, any thread count, mixed sizes, odd
 * widths, pitched rows, unaligned pointers, in place; and every refusal of
 * the list and tensor forms.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"
#include "backend_suite.h"
#include "suite_util.h"
#include "test_util.h"
#include "views.h"

static tu_rng rng;

/* A context on the backend under test with `threads` CPU threads. */
static imghist_ctx *test_ctx(int threads)
{
    return bs_new_ctx_threads(threads);
}

static imghist_view u8_view(void *p, uint32_t w, uint32_t h, size_t pitch)
{
    const imghist_view v = {.data = p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                            .width = w, .height = h, .pitch = pitch};
    return v;
}

/* ---- PIL's LUT ---- */

/*
 * Pillow's ImageOps.equalize, transcribed: histo is the list of the non-zero
 * counts; one value (or none) is the identity; step = (sum(histo) -
 * histo[-1]) // 255, 0 is the identity; else n = step // 2 and entry i is
 * n // step before n += h[i]; Image.point clips the entries to 255.
 */
static void pil_reference(const uint64_t h[256], uint8_t lut[256])
{
    uint64_t histo[256];
    int len = 0;
    for (int i = 0; i < 256; i++) {
        if (h[i] != 0) {
            histo[len++] = h[i];
        }
    }
    uint64_t step = 0;
    if (len > 1) {
        uint64_t sum = 0;
        for (int k = 0; k < len; k++) {
            sum += histo[k];
        }
        step = (sum - histo[len - 1]) / 255;
    }
    uint64_t n = step / 2;
    for (int i = 0; i < 256; i++) {
        if (step == 0) {
            lut[i] = (uint8_t)i;
            continue;
        }
        const uint64_t v = n / step;
        lut[i] = (uint8_t)(v > 255 ? 255 : v);
        n += h[i];
    }
}

static void test_pil_lut_random(void **state)
{
    (void)state;
    for (int iter = 0; iter < 3000; iter++) {
        uint64_t h[256] = {0};
        const int kind = iter % 5;
        const uint32_t values = 1 + tu_below(&rng, kind == 0 ? 3 : 256);
        for (uint32_t k = 0; k < values; k++) {
            const uint32_t v = tu_below(&rng, 256);
            switch (kind) {
            case 0: h[v] += 1 + tu_below(&rng, 600); break;           /* few values */
            case 1: h[v] += 1 + tu_below(&rng, 3); break;             /* step 0 or 1 */
            case 2: h[v] += tu_next(&rng) >> 24; break;               /* up to 2^40 */
            default: h[v] += 1 + tu_below(&rng, 100000); break;
            }
        }
        uint8_t got[256], want[256];
        pil_reference(h, want);
        assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, got), IMGHIST_OK);
        assert_memory_equal(got, want, 256);
    }
}

static void expect_identity(const uint64_t h[256])
{
    uint8_t lut[256];
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    for (int i = 0; i < 256; i++) {
        assert_int_equal(lut[i], i);
    }
}

static void test_pil_lut_by_hand(void **state)
{
    (void)state;
    uint64_t h[256];
    uint8_t lut[256];
    /* A constant image, a 1x1 image: one value, the identity. */
    memset(h, 0, sizeof h);
    h[77] = 640 * 480;
    expect_identity(h);
    memset(h, 0, sizeof h);
    h[200] = 1;
    expect_identity(h);
    /* Step 0: fewer than 255 pixels besides the largest value. */
    memset(h, 0, sizeof h);
    h[3] = 254;
    h[250] = 1000000;
    expect_identity(h);
    /* Step 1 exactly: 255 pixels below; n = 0, entry i = pixels below i. */
    h[3] = 255;
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    for (int i = 0; i < 256; i++) {
        assert_int_equal(lut[i], i <= 3 ? 0 : 255);
    }
    /* Two values, 1000 x 10 and 500 x 200: step = 1000 / 255 = 3, n = 1;
     * entries up to 10 are 1 / 3 = 0, above (1 + 1000) / 3 = 333 -> 255. */
    memset(h, 0, sizeof h);
    h[10] = 1000;
    h[200] = 500;
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    for (int i = 0; i < 256; i++) {
        assert_int_equal(lut[i], i <= 10 ? 0 : 255);
    }
    /* 100 pixels at each multiple of 32: step = 700 / 255 = 2, n = 1; entry i
     * is (1 + 100 k) / 2 with k the multiples below i: 0, 50, 100, ... 250,
     * then 300 and more -> 255. */
    memset(h, 0, sizeof h);
    for (int k = 0; k < 8; k++) {
        h[32 * k] = 100;
    }
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_OK);
    for (int i = 0; i < 256; i++) {
        const int below = i == 0 ? 0 : (i - 1) / 32 + 1;
        const int v = (1 + 100 * below) / 2;
        assert_int_equal(lut[i], v > 255 ? 255 : v);
    }
    assert_int_equal(lut[1], 50);
    assert_int_equal(lut[33], 100);
    assert_int_equal(lut[160], 250);
    assert_int_equal(lut[161], 255);
    /* Refusals: empty, NULL. */
    memset(h, 0, sizeof h);
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, lut), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_equalize_lut(NULL, 256, IMGHIST_EQ_PIL, lut), IMGHIST_E_INVALID_ARG);
    h[0] = 1;
    assert_int_equal(imghist_equalize_lut(h, 256, IMGHIST_EQ_PIL, NULL), IMGHIST_E_INVALID_ARG);
}

/* ---- the method parameter ---- */

static void fill_random(uint8_t *p, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        switch (kind % 4) {
        case 0: p[i] = (uint8_t)(tu_next(&rng) >> 56); break;
        case 1: p[i] = 90; break;                                         /* constant */
        case 2: p[i] = (uint8_t)(tu_below(&rng, 8) * 32); break;          /* multiples of 32 */
        default: p[i] = (uint8_t)(100 + tu_below(&rng, 4) * tu_below(&rng, 4)); break;
        }
    }
}

static void test_method_argument(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(1);

    enum { W = 301, H = 77 };
    uint8_t *src = malloc(W * H), *dst = malloc(W * H), *mask = malloc(W * H);
    fill_random(src, W * H, 0);
    for (size_t i = 0; i < W * H; i++) {
        src[i] = (uint8_t)(src[i] / 3 + 40); /* leaves most levels empty */
        mask[i] = (uint8_t)(i % 3 == 0);
    }
    const imghist_view sv = u8_view(src, W, H, W), dv = u8_view(dst, W, H, W);
    const imghist_view mv = u8_view(mask, W, H, W);
    /* A method imghist_method does not name: refused, nothing written. */
    memset(dst, 0x6b, W * H);
    const imghist_method unknown[] = {(imghist_method)2, (imghist_method)-1};
    for (size_t k = 0; k < 2; k++) {
        IH_REFUSED(ctx, imghist_equalize(ctx, &sv, &dv, unknown[k], NULL), IMGHIST_E_INVALID_ARG);
        IH_REFUSED(ctx, imghist_equalize_list(ctx, &sv, &dv, 1, unknown[k], NULL),
                   IMGHIST_E_INVALID_ARG);
        assert_non_null(strstr(imghist_last_error(ctx), "unknown equalization method"));
    }
    for (size_t i = 0; i < W * H; i++) {
        assert_int_equal(dst[i], 0x6b);
    }
    for (int method = 0; method < 2; method++) {
        for (int masked = 0; masked < 2; masked++) {
            uint64_t h[256];
            const imghist_counts hc = {h, 256, IMGHIST_MEM_HOST};
            const imghist_view svm = vw_masked(sv, masked ? &mv : NULL);
            IH_OK(ctx, imghist_equalize(ctx, &svm, &dv, (imghist_method)method, &hc));
            uint64_t want_h[256] = {0};
            for (size_t i = 0; i < W * H; i++) {
                want_h[src[i]] += !masked || mask[i];
            }
            assert_memory_equal(h, want_h, sizeof h);
            uint8_t lut[256];
            assert_int_equal(method ? imghist_equalize_lut(want_h, 256, IMGHIST_EQ_PIL, lut)
                                    : imghist_equalize_lut(want_h, 256, IMGHIST_EQ_OPENCV, lut),
                             IMGHIST_OK);
            for (size_t i = 0; i < W * H; i++) {
                assert_int_equal(dst[i], lut[src[i]]);
            }
        }
    }
    /* PIL's rule has no 16-bit form. */
    uint16_t s16[4] = {1, 2, 3, 4}, d16[4];
    const imghist_view v16 = {.data = s16, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
        .width = 2, .height = 2, .pitch = 4, .channels = 1};
    const imghist_view w16 = {.data = d16, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
        .width = 2, .height = 2, .pitch = 4, .channels = 1};
    IH_REFUSED(ctx, imghist_equalize(ctx, &v16, &w16, IMGHIST_EQ_PIL, NULL),
               IMGHIST_E_UNSUPPORTED);
    IH_OK(ctx, imghist_equalize(ctx, &v16, &w16, IMGHIST_EQ_OPENCV, NULL));
    free(src);
    free(dst);
    free(mask);
    imghist_destroy(ctx);
}

/* ---- imghist_equalize_list ---- */

/* A batch in host memory: sources and destinations in buffers with room for
 * pitch padding and unaligned starts; padding bytes 0xfd. */
typedef struct batch {
    size_t n;
    imghist_view *src, *dst;
    uint8_t **sbuf, **dbuf; /* allocations */
    size_t *dbytes;
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->sbuf[i]);
        free(b->dbuf[i]);
    }
    free(b->src);
    free(b->dst);
    free(b->sbuf);
    free(b->dbuf);
    free(b->dbytes);
}

/* n images: 1x1, a single row and column, odd widths, one large image, the
 * rest random; every third in place. */
static batch batch_make(size_t n, uint32_t big_w, uint32_t big_h)
{
    batch b = {n, calloc(n, sizeof(imghist_view)), calloc(n, sizeof(imghist_view)),
               calloc(n, sizeof(uint8_t *)), calloc(n, sizeof(uint8_t *)),
               calloc(n, sizeof(size_t))};
    for (size_t i = 0; i < n; i++) {
        uint32_t w = 1 + tu_below(&rng, 97), h = 1 + tu_below(&rng, 60);
        if (i == 0) w = h = 1;
        if (i == 1) h = 1;
        if (i == 2) w = 1;
        if (i == n / 2) {
            w = big_w;
            h = big_h;
        }
        const size_t sp = w + (i % 2 ? tu_below(&rng, 40) : 0);
        const unsigned soff = tu_below(&rng, 16), doff = tu_below(&rng, 16);
        const int in_place = i % 3 == 1;
        const size_t dp = in_place ? sp : w + tu_below(&rng, 24);
        b.sbuf[i] = malloc(soff + sp * h);
        memset(b.sbuf[i], 0xfd, soff + sp * h);
        for (uint32_t y = 0; y < h; y++) {
            fill_random(b.sbuf[i] + soff + (size_t)y * sp, w, (int)i);
        }
        b.src[i] = u8_view(b.sbuf[i] + soff, w, h, sp);
        if (in_place) {
            b.dst[i] = b.src[i];
        } else {
            b.dbytes[i] = doff + dp * h;
            b.dbuf[i] = malloc(b.dbytes[i]);
            memset(b.dbuf[i], 0xfd, b.dbytes[i]);
            b.dst[i] = u8_view(b.dbuf[i] + doff, w, h, dp);
        }
    }
    return b;
}

/* Every destination's rows, with their padding, and every in-place image. */
static void expect_same_outputs(const batch *a, const batch *b)
{
    for (size_t i = 0; i < a->n; i++) {
        const imghist_view *x = &a->dst[i], *y = &b->dst[i];
        if (a->dbuf[i] != NULL) {
            assert_memory_equal(a->dbuf[i], b->dbuf[i], a->dbytes[i]);
        } else {
            for (uint32_t r = 0; r < x->height; r++) {
                assert_memory_equal((uint8_t *)x->data + r * x->pitch,
                                    (uint8_t *)y->data + r * y->pitch, x->width);
            }
        }
    }
}

static void check_batch_vs_loop(int method, int threads, size_t n, uint32_t big_w,
                                uint32_t big_h)
{
    const uint64_t seed = tu_next(&rng);
    tu_rng keep = rng;
    rng.s = seed;
    batch want = batch_make(n, big_w, big_h);
    rng.s = seed;
    batch got = batch_make(n, big_w, big_h);
    rng = keep;
    imghist_ctx *one = test_ctx(1), *ctx = test_ctx(threads);
    uint64_t *want_h = malloc(n * 256 * sizeof(uint64_t));
    uint64_t *got_h = malloc((n * 256 + 7) * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        const imghist_counts c = {want_h + i * 256, 256, IMGHIST_MEM_HOST};
        IH_OK(one, imghist_equalize(one, &want.src[i], &want.dst[i], (imghist_method)method, &c));
    }
    memset(got_h, 0xa5, (n * 256 + 7) * sizeof(uint64_t));
    const imghist_counts gc = {got_h, n * 256 + 7, IMGHIST_MEM_HOST};
    IH_OK(ctx, imghist_equalize_list(ctx, got.src, got.dst, n, (imghist_method)method, &gc));
    assert_memory_equal(got_h, want_h, n * 256 * sizeof(uint64_t));
    for (size_t k = n * 256; k < n * 256 + 7; k++) {
        assert_true(got_h[k] == 0xa5a5a5a5a5a5a5a5ull); /* not written past the batch */
    }
    expect_same_outputs(&want, &got);
    batch_free(&want);
    batch_free(&got);
    free(want_h);
    free(got_h);
    imghist_destroy(one);
    imghist_destroy(ctx);
}

static void test_batch_vs_loop(void **state)
{
    (void)state;
    for (int method = 0; method < 2; method++) {
        check_batch_vs_loop(method, 1, 40, 1000, 700);
        check_batch_vs_loop(method, 4, 200, 1501, 999); /* images across threads */
        check_batch_vs_loop(method, 16, 3, 2001, 1003); /* fewer images than threads: bands */
        check_batch_vs_loop(method, 3, 1, 1, 1);
    }
}

/* Without hists, the same pixels; and a batch naming one source twice. */
static void test_batch_no_hists_shared_source(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 33, H = 9 };
    uint8_t src[W * H], d1[W * H], d2[W * H], want[W * H];
    fill_random(src, sizeof src, 3);
    const imghist_view s = u8_view(src, W, H, W);
    const imghist_view sv[2] = {s, s};
    const imghist_view dv[2] = {u8_view(d1, W, H, W), u8_view(d2, W, H, W)};
    const imghist_view wv = u8_view(want, W, H, W);
    IH_OK(ctx, imghist_equalize(ctx, &s, &wv, IMGHIST_EQ_PIL, NULL));
    IH_OK(ctx, imghist_equalize_list(ctx, sv, dv, 2, IMGHIST_EQ_PIL, NULL));
    assert_memory_equal(d1, want, sizeof want);
    assert_memory_equal(d2, want, sizeof want);
    imghist_destroy(ctx);
}

static void test_batch_refusals(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(1);
    enum { W = 16, H = 4 };
    uint8_t buf[4 * W * H];
    memset(buf, 7, sizeof buf);
    imghist_view s[2] = {u8_view(buf, W, H, W), u8_view(buf + W * H, W, H, W)};
    imghist_view d[2] = {u8_view(buf + 2 * W * H, W, H, W), u8_view(buf + 3 * W * H, W, H, W)};
    uint64_t h[2 * 256];
    const imghist_counts hc = {h, 2 * 256, IMGHIST_MEM_HOST};
    IH_OK(ctx, imghist_equalize_list(ctx, s, d, 2, IMGHIST_EQ_OPENCV, &hc));

    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, d, 0, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, NULL, d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, NULL, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_equalize_list(NULL, s, d, 2, IMGHIST_EQ_OPENCV, &hc),
                     IMGHIST_E_INVALID_ARG);
    /* A list takes one image a view, sources and destinations alike. */
    imghist_view many[2] = {s[0], vw_tensor(s[1], 2, 0)};
    IH_REFUSED(ctx, imghist_equalize_list(ctx, many, d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "list view 1 holds 2 images"));
    many[0] = vw_tensor(d[0], 3, 0), many[1] = d[1];
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, many, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "list destination 0 holds 3 images"));
    /* Short counts. */
    const imghist_counts short_c = {h, 2 * 256 - 1, IMGHIST_MEM_HOST};
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, d, 2, IMGHIST_EQ_OPENCV, &short_c),
               IMGHIST_E_BUFSIZE);
    /* Mixed and unsupported sample types, channels. */
    imghist_view bad[2] = {s[0], s[1]};
    bad[1].dtype = IMGHIST_U16;
    bad[1].pitch = 2 * W;
    bad[1].width = W / 2;
    imghist_view bad_d[2] = {d[0], d[1]};
    bad_d[1] = bad[1];
    bad_d[1].data = d[1].data;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, bad, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch image 1"));
    assert_non_null(strstr(imghist_last_error(ctx), "mixes 8- and 16-bit"));
    bad[1] = s[1];
    bad[1].dtype = IMGHIST_F32;
    bad[1].width = W / 4;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, bad, d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_UNSUPPORTED);
    bad[1] = s[1];
    bad[1].channels = 2;
    bad[1].width = W / 2;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, bad, d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_UNSUPPORTED);
    /* A destination of another size, another memory; device memory on the CPU. */
    bad_d[1] = d[1];
    bad_d[1].width = W - 1;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    bad_d[1] = d[1];
    bad_d[1].mem = IMGHIST_MEM_DEVICE;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    bad[1] = s[1];
    bad[1].mem = IMGHIST_MEM_DEVICE;
    bad_d[1] = d[1];
    bad_d[1].mem = IMGHIST_MEM_DEVICE;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, bad, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    imghist_view dev_s[1] = {s[0]}, dev_d[1] = {d[0]};
    dev_s[0].mem = dev_d[0].mem = IMGHIST_MEM_DEVICE;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, dev_s, dev_d, 1, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_UNSUPPORTED);
    const imghist_counts dev_c = {h, 256, IMGHIST_MEM_DEVICE};
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, d, 1, IMGHIST_EQ_OPENCV, &dev_c),
               IMGHIST_E_UNSUPPORTED);
    /* Overlaps: two destinations; a destination over another image's source;
     * a destination one row into its own source; the same pointer with
     * another pitch. */
    bad_d[0] = d[0];
    bad_d[1] = u8_view(buf + 2 * W * H + W, W, H, W);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    bad_d[1] = bad_d[0];
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    bad_d[0] = d[0];
    bad_d[1] = s[0];
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "overlap"));
    bad_d[0] = d[0];
    bad_d[1] = u8_view(buf + W * H + W, W, H, W);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    imghist_view tall[1] = {u8_view(buf, W / 2, H, W)};
    imghist_view tall_d[1] = {u8_view(buf, W / 2, H, W / 2)};
    IH_REFUSED(ctx, imghist_equalize_list(ctx, tall, tall_d, 1, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    /* Sources out of address order: a destination over another image's
     * source is still found. */
    const imghist_view rev_s[2] = {s[1], s[0]};
    bad_d[0] = d[0];
    bad_d[1] = s[1];
    IH_REFUSED(ctx, imghist_equalize_list(ctx, rev_s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    bad_d[0] = s[0];
    bad_d[1] = d[1];
    IH_REFUSED(ctx, imghist_equalize_list(ctx, rev_s, bad_d, 2, IMGHIST_EQ_OPENCV, &hc),
               IMGHIST_E_INVALID_ARG);
    IH_OK(ctx, imghist_equalize_list(ctx, rev_s, d, 2, IMGHIST_EQ_OPENCV, &hc));
    /* Destinations in reverse address order are fine (they are sorted). */
    const imghist_view rev_d[2] = {d[1], d[0]};
    IH_OK(ctx, imghist_equalize_list(ctx, s, rev_d, 2, IMGHIST_EQ_OPENCV, NULL));
    /* In place is fine. */
    IH_OK(ctx, imghist_equalize_list(ctx, s, s, 2, IMGHIST_EQ_OPENCV, &hc));
    imghist_destroy(ctx);
}

/* Batches laid out as tensors, whose overlap the library checks as wholes
 * (n images of W x H at a fixed stride, forwards or backwards): allowed when
 * the tensors are apart, in place, or interleaved image by image; refused
 * when a destination reaches into another image's source or into another
 * destination. Each allowed batch gives the loop of single calls' pixels. */
static imghist_view *tensor(uint8_t *base, size_t n, long stride, uint32_t w, uint32_t h)
{
    imghist_view *v = malloc(n * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < n; i++) {
        v[i] = u8_view(base + (long)i * stride, w, h, w);
    }
    return v;
}

static void expect_tensor_ok(imghist_ctx *ctx, uint8_t *buf, size_t bytes, const imghist_view *s,
                             const imghist_view *d, size_t n)
{
    /* Expected: each image equalized alone from the sources as they were. */
    uint8_t *want = malloc(bytes), *start = malloc(bytes);
    assert_true(want && start);
    memcpy(start, buf, bytes);
    memcpy(want, buf, bytes);
    for (size_t i = 0; i < n; i++) {
        imghist_view si = s[i], di = d[i];
        si.data = start + ((uint8_t *)s[i].data - buf);
        di.data = want + ((uint8_t *)d[i].data - buf);
        IH_OK(ctx, imghist_equalize(ctx, &si, &di, IMGHIST_EQ_OPENCV, NULL));
    }
    IH_OK(ctx, imghist_equalize_list(ctx, s, d, n, IMGHIST_EQ_OPENCV, NULL));
    assert_memory_equal(buf, want, bytes);
    free(want);
    free(start);
}

/* An equalization list long enough that its checks' pass runs on several
 * threads, sources and destinations laid out as tensors but for one view at
 * a task's edge or an end: valid changes equalize as the tensor does, a
 * destination of two images or one on another image's source is refused. */
static void test_batch_long_list(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(4);
    enum { W = 16, N = 40000 };
    const size_t bytes = (size_t)N * W;
    uint8_t *src = malloc(bytes), *dst = malloc(bytes), *want = malloc(bytes);
    uint8_t *other = malloc(2 * W);
    imghist_view *sv = malloc(N * sizeof *sv), *dv = malloc(N * sizeof *dv);
    assert_true(src && dst && want && other && sv && dv);
    fill_random(src, bytes, 23);
    for (size_t i = 0; i < N; i++) {
        sv[i] = u8_view(src + i * W, W, 1, W);
        dv[i] = u8_view(dst + i * W, W, 1, W);
    }
    imghist_view st = sv[0], wt = u8_view(want, W, 1, W);
    st.count = wt.count = N;
    st.image_stride = wt.image_stride = W;
    IH_OK(ctx, imghist_equalize(ctx, &st, &wt, IMGHIST_EQ_OPENCV, NULL));
    const size_t at[] = {1, 16384, 16385, 32769, N - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        const size_t i = at[k];
        for (int c = 0; c < 4; c++) {
            const imghist_view keep_s = sv[i], keep_d = dv[i];
            memcpy(other + 1, sv[i].data, W);
            if (c == 0) sv[i] = u8_view(other + 1, W, 1, W);      /* the same bytes elsewhere */
            if (c == 1) dv[i] = u8_view(other, W, 1, W);          /* written elsewhere */
            if (c == 2) dv[i].count = 2;                          /* two images */
            if (c == 3) dv[i].data = sv[i > 1 ? i - 1 : i + 1].data; /* onto a source */
            memset(dst, 0xa5, bytes);
            const imghist_status got =
                imghist_equalize_list(ctx, sv, dv, N, IMGHIST_EQ_OPENCV, NULL);
            if (c >= 2) {
                if (got != IMGHIST_E_INVALID_ARG) {
                    fail_msg("view %zu, case %d: status %d, want a refusal", i, c, (int)got);
                }
            } else {
                assert_int_equal(got, IMGHIST_OK);
                if (c == 1) memcpy(dst + i * W, other, W);
                if (memcmp(dst, want, bytes) != 0) {
                    fail_msg("view %zu, case %d: other pixels than the tensor's", i, c);
                }
            }
            sv[i] = keep_s;
            dv[i] = keep_d;
        }
    }
    free(src);
    free(dst);
    free(want);
    free(other);
    free(sv);
    free(dv);
    imghist_destroy(ctx);
}

static void test_batch_tensor_overlaps(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 24, H = 5, IMG = W * H, N = 6 };
    const size_t bytes = 4 * N * IMG;
    uint8_t *buf = malloc(bytes);
    assert_non_null(buf);
    fill_random(buf, bytes, 11);
    /* Apart: sources in the first half, destinations in the second, forwards
     * and backwards. */
    imghist_view *s = tensor(buf, N, IMG, W, H);
    imghist_view *d = tensor(buf + 2 * N * IMG, N, IMG, W, H);
    imghist_view *dr = tensor(buf + 2 * N * IMG + (N - 1) * IMG, N, -IMG, W, H);
    expect_tensor_ok(ctx, buf, bytes, s, d, N);
    expect_tensor_ok(ctx, buf, bytes, s, dr, N);
    /* In place, forwards and backwards alike. */
    imghist_view *sr = tensor(buf + (N - 1) * IMG, N, -IMG, W, H);
    expect_tensor_ok(ctx, buf, bytes, s, s, N);
    expect_tensor_ok(ctx, buf, bytes, sr, sr, N);
    /* Interleaved: sources at even slots, destinations at odd ones. */
    imghist_view *se = tensor(buf, N, 2 * IMG, W, H), *dodd = tensor(buf + IMG, N, 2 * IMG, W, H);
    expect_tensor_ok(ctx, buf, bytes, se, dodd, N);
    /* Refused: destinations one image on (each over the next image's source);
     * the sources reversed onto themselves; destinations half an image apart
     * (over each other); a destination tensor that ends inside the sources. */
    imghist_view *d1 = tensor(buf + IMG, N, IMG, W, H);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, d1, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, sr, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    imghist_view *dh = tensor(buf + 2 * N * IMG, N, IMG / 2, W, H);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, dh, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    imghist_view *dl = tensor(buf + N * IMG - IMG / 2 + 2 * (N - 1) * IMG, N, -2 * IMG, W, H);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s, dl, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    free(s);
    free(d);
    free(dr);
    free(sr);
    free(se);
    free(dodd);
    free(d1);
    free(dh);
    free(dl);
    free(buf);
    imghist_destroy(ctx);
}

/* Views of several images (tensors): the pixels and histograms of the same
 * images as a list (apart, backwards, in place, interleaved), the same
 * refusals. */
static void test_equalize_strided(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 21, H = 7, IMG = 160, N = 9 }; /* IMG: a stride past W * H */
    const size_t bytes = 4 * N * IMG;
    uint8_t *a = malloc(bytes), *b = malloc(bytes);
    uint64_t *ha = malloc(N * 256 * sizeof *ha), *hb = malloc(N * 256 * sizeof *hb);
    assert_true(a && b && ha && hb);
    const struct {
        long s_off, s_stride, d_off, d_stride;
    } cases[] = {
        {0, IMG, 2 * N * IMG, IMG},                   /* apart */
        {(N - 1) * IMG, -IMG, 2 * N * IMG, 2 * IMG},  /* backwards into every other slot */
        {5, IMG, 5, IMG},                              /* in place */
        {0, 2 * IMG, IMG, 2 * IMG},                    /* interleaved */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        fill_random(a, bytes, (int)c);
        memcpy(b, a, bytes);
        const imghist_view s = vw_tensor(u8_view(a + cases[c].s_off, W, H, W), N,
                                         cases[c].s_stride);
        const imghist_view d = vw_tensor(u8_view(a + cases[c].d_off, W, H, W), N,
                                         cases[c].d_stride);
        imghist_view *sv = tensor(b + cases[c].s_off, N, cases[c].s_stride, W, H);
        imghist_view *dv = tensor(b + cases[c].d_off, N, cases[c].d_stride, W, H);
        const imghist_counts ca = {ha, N * 256, IMGHIST_MEM_HOST};
        const imghist_counts cb = {hb, N * 256, IMGHIST_MEM_HOST};
        IH_OK(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_PIL, &ca));
        IH_OK(ctx, imghist_equalize_list(ctx, sv, dv, N, IMGHIST_EQ_PIL, &cb));
        assert_memory_equal(a, b, bytes);
        assert_memory_equal(ha, hb, N * 256 * sizeof *ha);
        free(sv);
        free(dv);
    }
    /* Refused: destinations over the next image's source; destinations over
     * each other; a stride that leaves the address space; a destination of
     * another count. */
    const imghist_view s = vw_tensor(u8_view(a, W, H, W), N, IMG);
    const imghist_view d1 = vw_tensor(u8_view(a + IMG, W, H, W), N, IMG);
    IH_REFUSED(ctx, imghist_equalize(ctx, &s, &d1, IMGHIST_EQ_PIL, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "overlap"));
    const imghist_view d2 = vw_tensor(u8_view(a + 2 * N * IMG, W, H, W), N, W);
    IH_REFUSED(ctx, imghist_equalize(ctx, &s, &d2, IMGHIST_EQ_PIL, NULL), IMGHIST_E_INVALID_ARG);
    const imghist_view far = vw_tensor(s, N, PTRDIFF_MAX / 2);
    const imghist_view d3 = vw_tensor(d2, N, IMG);
    IH_REFUSED(ctx, imghist_equalize(ctx, &far, &d3, IMGHIST_EQ_PIL, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "address space"));
    const imghist_view d4 = vw_tensor(d2, N - 1, IMG);
    IH_REFUSED(ctx, imghist_equalize(ctx, &s, &d4, IMGHIST_EQ_PIL, NULL), IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "destination holds 8 images"));
    free(a);
    free(b);
    free(ha);
    free(hb);
    imghist_destroy(ctx);
}

/* ---- 16-bit and masked batches ---- */

static imghist_view u16_view(void *p, uint32_t w, uint32_t h, size_t pitch)
{
    imghist_view v = u8_view(p, w, h, pitch);
    v.dtype = IMGHIST_U16;
    return v;
}

/* n samples of kind k: random 16-bit, constant, 12-bit data in the high
 * bits, eight multiples of 4096 (U16); or fill_random's bytes (U8). */
static void fill_levels(void *p, size_t n, imghist_dtype t, int k)
{
    if (t == IMGHIST_U8) {
        fill_random(p, n, k);
        return;
    }
    uint16_t *q = p;
    for (size_t i = 0; i < n; i++) {
        switch (k % 4) {
        case 0: q[i] = (uint16_t)(tu_next(&rng) >> 48); break;
        case 1: q[i] = 40000; break;
        case 2: q[i] = (uint16_t)(tu_below(&rng, 4096) << 4); break;
        default: q[i] = (uint16_t)(tu_below(&rng, 8) * 4096); break;
        }
    }
}

/* A mask of kind k: random bytes (about a third 0), all set, a block. */
static void fill_mask(uint8_t *m, uint32_t w, uint32_t h, int k)
{
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint8_t v;
            switch (k % 3) {
            case 0: /* random, never empty (a 1x1 image would be, a third of the time) */
                v = (x | y) != 0 && tu_below(&rng, 3) == 0 ? 0
                                                           : (uint8_t)(1 + tu_below(&rng, 255));
                break;
            case 1: v = 1; break;
            default: v = (uint8_t)(x < w / 2 + 1 && y < h / 2 + 1 ? 0x80 : 0); break;
            }
            m[(size_t)y * w + x] = v;
        }
    }
}

/*
 * n images of type t (sizes, pitches and offsets of their own; in place or
 * not), with masks or not, through imghist_equalize_list against
 * imghist_equalize image by image: the same pixels and histograms.
 */
static void check_batch_each_of(imghist_dtype t, int masked, int in_place, size_t n, int threads,
                                uint32_t wmax, uint32_t hmax)
{
    imghist_ctx *ctx = test_ctx(threads);
    const size_t z = t == IMGHIST_U8 ? 1 : 2, L = t == IMGHIST_U8 ? 256 : 65536;
    imghist_view *src = calloc(n, sizeof *src), *dst = calloc(n, sizeof *dst);
    imghist_view *ref = calloc(n, sizeof *ref), *msk = calloc(n, sizeof *msk);
    void **bufs = calloc(3 * n, sizeof *bufs);
    uint8_t **mbuf = calloc(n, sizeof *mbuf);
    uint64_t *hb = malloc(n * L * sizeof *hb);
    assert_true(src && dst && ref && msk && bufs && mbuf && hb);
    for (size_t i = 0; i < n; i++) {
        const uint32_t w = 1 + tu_below(&rng, wmax), h = 1 + tu_below(&rng, hmax);
        const size_t pitch = w * z + z * tu_below(&rng, 5), off = z * tu_below(&rng, 3);
        const size_t bytes = off + pitch * h;
        uint8_t *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
        assert_true(a && b && c);
        bufs[3 * i] = a;
        bufs[3 * i + 1] = b;
        bufs[3 * i + 2] = c;
        memset(a, 0xfd, off + pitch * h);
        for (uint32_t y = 0; y < h; y++) {
            fill_levels(a + off + y * pitch, w, t, (int)(i + y / 8));
        }
        memcpy(b, a, off + pitch * h);
        memset(c, 0xfd, off + pitch * h);
        src[i] = t == IMGHIST_U8 ? u8_view(a + off, w, h, pitch) : u16_view(a + off, w, h, pitch);
        dst[i] = src[i];
        if (!in_place) {
            dst[i].data = b + off;
        }
        ref[i] = src[i];
        ref[i].data = c + off;
        mbuf[i] = malloc((size_t)w * h);
        fill_mask(mbuf[i], w, h, (int)i);
        msk[i] = u8_view(mbuf[i], w, h, w);
    }
    /* the reference first: an in-place batch overwrites its sources */
    uint64_t *want = malloc(n * L * sizeof *want);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) {
        const imghist_counts one = {want + i * L, L, IMGHIST_MEM_HOST};
        const imghist_view si = vw_masked(src[i], masked ? &msk[i] : NULL);
        IH_OK(ctx, imghist_equalize(ctx, &si, &ref[i], IMGHIST_EQ_OPENCV, &one));
    }
    const imghist_counts hc = {hb, n * L, IMGHIST_MEM_HOST};
    vw_list_masked(src, src, masked ? msk : NULL, n);
    IH_OK(ctx, imghist_equalize_list(ctx, src, dst, n, IMGHIST_EQ_OPENCV, &hc));
    for (size_t i = 0; i < n; i++) {
        for (uint32_t y = 0; y < dst[i].height; y++) {
            const uint8_t *g = (const uint8_t *)dst[i].data + y * dst[i].pitch;
            const uint8_t *w = (const uint8_t *)ref[i].data + y * ref[i].pitch;
            if (memcmp(g, w, dst[i].width * z) != 0) {
                fail_msg("%s list (%s, %s): image %zu row %u differs from imghist_equalize",
                         t == IMGHIST_U8 ? "8-bit" : "16-bit", masked ? "masked" : "no mask",
                         in_place ? "in place" : "apart", i, y);
            }
        }
    }
    assert_memory_equal(hb, want, n * L * sizeof *hb);
    for (size_t i = 0; i < 3 * n; i++) free(bufs[i]);
    for (size_t i = 0; i < n; i++) free(mbuf[i]);
    free(bufs);
    free(mbuf);
    free(src);
    free(dst);
    free(ref);
    free(msk);
    free(hb);
    free(want);
    imghist_destroy(ctx);
}

static void check_batch_each(imghist_dtype t, int masked, int in_place, size_t n, int threads)
{
    check_batch_each_of(t, masked, in_place, n, threads, 90, 40);
}

static void test_batch_u16_and_masked(void **state)
{
    (void)state;
    /* enough pixels for the CPU's threads: images across 3 of them; fewer
     * images than threads, each cut into bands */
    check_batch_each_of(IMGHIST_U16, 1, 0, 12, 3, 600, 500);
    check_batch_each_of(IMGHIST_U8, 1, 1, 12, 3, 600, 500);
    check_batch_each_of(IMGHIST_U16, 0, 0, 2, 8, 1200, 900);
    for (int masked = 0; masked < 2; masked++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            check_batch_each(IMGHIST_U16, masked, in_place, 7, 3);
            check_batch_each(IMGHIST_U8, masked, in_place, 9, 2);
        }
    }
    check_batch_each(IMGHIST_U16, 1, 0, 1, 1);
}

/* Tensors of 16-bit images (apart and in place) with no mask, a mask an
 * image (the mask's count n) or one for all (count 1), against the list. */
static void test_strided_u16_and_masked(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 33, H = 9, N = 6 };
    const size_t img = (size_t)W * H * 2 + 6; /* a stride past the image */
    uint8_t *a = malloc(2 * N * img), *b = malloc(2 * N * img), *m = malloc((size_t)N * W * H);
    uint64_t *ha = malloc((size_t)N * 65536 * 8), *hb = malloc((size_t)N * 65536 * 8);
    uint16_t r[W * H];
    assert_true(a && b && m && ha && hb);
    memset(a, 0x33, 2 * N * img); /* the bytes between images too */
    for (int c = 0; c < 3; c++) {
        for (size_t i = 0; i < N; i++) {
            fill_levels(a + i * img, (size_t)W * H, IMGHIST_U16, (int)i + c);
            fill_mask(m + i * W * H, W, H, (int)i);
        }
        memset(a + N * img, 0x5a, N * img);
        memcpy(b, a, 2 * N * img);
        const int in_place = c == 1;
        const ptrdiff_t ms = c == 2 ? 0 : (ptrdiff_t)W * H;
        imghist_view mt;
        const imghist_view s =
            c == 0 ? vw_tensor(u16_view(a, W, H, 2 * W), N, (ptrdiff_t)img)
                   : vw_tensor_masked(u16_view(a, W, H, 2 * W), N, (ptrdiff_t)img,
                                      u8_view(m, W, H, W), c == 2 ? 1 : N, ms, &mt);
        const imghist_view d =
            vw_tensor(u16_view(in_place ? a : a + N * img, W, H, 2 * W), N, (ptrdiff_t)img);
        imghist_view sv[N], dv[N], mvs[N];
        for (size_t i = 0; i < N; i++) {
            sv[i] = u16_view(b + i * img, W, H, 2 * W);
            dv[i] = u16_view(in_place ? b + i * img : b + (N + i) * img, W, H, 2 * W);
            mvs[i] = u8_view(m + i * ms, W, H, W);
            sv[i].mask = c == 0 ? NULL : &mvs[i];
        }
        /* image 0 alone, the reference of the tensor's first destination */
        const imghist_view rv = u16_view(r, W, H, 2 * W);
        IH_OK(ctx, imghist_equalize(ctx, &sv[0], &rv, IMGHIST_EQ_OPENCV, NULL));
        const imghist_counts ca = {ha, (size_t)N * 65536, IMGHIST_MEM_HOST};
        const imghist_counts cb = {hb, (size_t)N * 65536, IMGHIST_MEM_HOST};
        IH_OK(ctx, imghist_equalize(ctx, &s, &d, IMGHIST_EQ_OPENCV, &ca));
        IH_OK(ctx, imghist_equalize_list(ctx, sv, dv, N, IMGHIST_EQ_OPENCV, &cb));
        assert_memory_equal(a, b, 2 * N * img);
        assert_memory_equal(ha, hb, (size_t)N * 65536 * 8);
        assert_memory_equal(d.data, r, sizeof r);
    }
    free(a);
    free(b);
    free(m);
    free(ha);
    free(hb);
    imghist_destroy(ctx);
}

/* What masked lists and tensors refuse, with messages naming the mask; an
 * empty host mask before any destination is written. */
static void test_masked_batch_refusals(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 16, H = 4, N = 3 };
    uint8_t src[N][W * H], dst[N][W * H], mask[N][W * H], before[N][W * H];
    imghist_view s[N], d[N], m[N], sm[N], mt;
    for (int i = 0; i < N; i++) {
        fill_random(src[i], W * H, 0);
        memset(dst[i], 0xab, W * H);
        memset(mask[i], 1, W * H);
        s[i] = u8_view(src[i], W, H, W);
        d[i] = u8_view(dst[i], W, H, W);
        m[i] = u8_view(mask[i], W, H, W);
    }
    /* masks all or none in a list; one mask a list view; a tensor's mask of
     * neither 1 nor the images' count */
    vw_list_masked(sm, s, m, N);
    sm[1].mask = NULL;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm, d, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "all or none"));
    const imghist_view two_masks = vw_tensor(m[1], 2, W * H);
    sm[1].mask = &two_masks;
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm, d, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "list view 1 has a mask of 2 images"));
    imghist_view t = vw_tensor_masked(s[0], N, W * H, m[0], 2, W * H, &mt);
    const imghist_view dt = vw_tensor(d[0], N, W * H);
    IH_REFUSED(ctx, imghist_equalize(ctx, &t, &dt, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "holds 2 masks for 3 images"));
    /* a mask of another size; of two channels */
    imghist_view bad[N] = {m[0], m[1], m[2]};
    bad[2].width = W - 1;
    vw_list_masked(sm, s, bad, N);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm, d, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch mask 2"));
    /* a mask over a destination (another image's) */
    bad[2] = m[2];
    bad[1] = u8_view(dst[0], W, H, W);
    vw_list_masked(sm, s, bad, N);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm, d, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch mask 1 overlaps destination 0"));
    /* an empty mask: refused before any image is written */
    memset(mask[1], 0, W * H);
    memcpy(before, dst, sizeof dst);
    vw_list_masked(sm, s, m, N);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm, d, N, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "batch mask 1 has no non-zero sample"));
    assert_memory_equal(before, dst, sizeof dst);
    t = vw_tensor_masked(s[0], N, W * H, m[1], 1, 0, &mt);
    IH_REFUSED(ctx, imghist_equalize(ctx, &t, &dt, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_INVALID_ARG);
    assert_memory_equal(before, dst, sizeof dst);
    /* 16-bit images with PIL's rule */
    memset(mask[1], 1, W * H);
    imghist_view s16[1] = {u16_view(src[0], W / 2, H, W)}, d16[1] = {u16_view(dst[0], W / 2, H, W)};
    imghist_view m16[1] = {u8_view(mask[0], W / 2, H, W)}, sm16[1];
    vw_list_masked(sm16, s16, m16, 1);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, sm16, d16, 1, IMGHIST_EQ_PIL, NULL),
               IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s16, d16, 1, IMGHIST_EQ_PIL, NULL),
               IMGHIST_E_UNSUPPORTED);
    /* short counts for 16-bit images */
    uint64_t h[256];
    const imghist_counts short_c = {h, 256, IMGHIST_MEM_HOST};
    IH_REFUSED(ctx, imghist_equalize_list(ctx, s16, d16, 1, IMGHIST_EQ_OPENCV, &short_c),
               IMGHIST_E_BUFSIZE);
    imghist_destroy(ctx);
}

/*
 * 16-bit images of at most 32768 samples equalize without the passes over
 * all 65536 levels (counts and a bitmap of the values present, the LUT at
 * those alone; with a mask, the entries of values only unmasked
 * pixels hold from the level below). Against the whole LUT made from the
 * image's histogram (imghist_histogram and imghist_equalize_lut) and
 * applied here: random, skewed and two-valued samples, one value, the
 * extreme values, 1 x 1, the 32768-sample limit and one past it, pitched
 * rows, in place, alone and as batches of mixed sizes on 1 and 3 threads,
 * without and with masks (half the pixels, or a single one).
 */
static void test_small_u16_against_the_whole_lut(void **state)
{
    (void)state;
    static const uint32_t dims[][2] = {{1, 1}, {64, 64}, {7, 13}, {256, 128}, {32769, 1},
                                       {181, 181}, {3, 10000}, {128, 256}};
    enum { N = sizeof dims / sizeof dims[0], KINDS = 5 };
    uint64_t *hist = malloc(65536 * sizeof *hist);
    uint16_t *lut = malloc(65536 * sizeof *lut);
    assert_true(hist && lut);
    for (int threads = 1; threads <= 3; threads += 2) {
        imghist_ctx *ctx = test_ctx(threads);
        for (int kind = 0; kind < KINDS; kind++) {
            for (int masked = 0; masked <= 2; masked++) { /* none, half, one pixel */
                uint16_t *src[N], *want[N], *got[N], *batch[N];
                uint8_t *msk[N];
                imghist_view sv[N], dv[N], mv[N];
                for (size_t i = 0; i < N; i++) {
                    const uint32_t w = dims[i][0], h = dims[i][1];
                    const size_t pitch = (size_t)w + (i % 3), n = pitch * h;
                    src[i] = malloc(n * 2);
                    want[i] = malloc(n * 2);
                    got[i] = malloc(n * 2);
                    batch[i] = malloc(n * 2);
                    msk[i] = malloc((size_t)w * h);
                    assert_true(src[i] && want[i] && got[i] && batch[i] && msk[i]);
                    for (size_t k = 0; k < n; k++) {
                        const uint32_t r = (uint32_t)(tu_next(&rng) >> 48);
                        src[i][k] = (uint16_t)(kind == 0   ? r
                                               : kind == 1 ? (r * r) >> 16
                                               : kind == 2 ? (r & 1 ? 65535 : 0)
                                               : kind == 3 ? 40000
                                                           : (k % 7 == 0 ? 65535 : r & 0xff));
                    }
                    for (size_t k = 0; k < (size_t)w * h; k++) {
                        msk[i][k] = (uint8_t)(masked == 2 ? k == (size_t)w * h / 2
                                                          : (tu_next(&rng) >> 63) == 0);
                    }
                    msk[i][(size_t)w * h / 2] = 1; /* never empty */
                    const imghist_view v = {.data = src[i], .dtype = IMGHIST_U16,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = pitch * 2,
                        .channels = 1};
                    const imghist_view m = {.data = msk[i], .dtype = IMGHIST_U8,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = w,
                        .channels = 1};
                    const imghist_counts c = {hist, 65536, IMGHIST_MEM_HOST};
                    const imghist_view vm = vw_masked(v, masked ? &m : NULL);
                    IH_OK(ctx, imghist_histogram(ctx, &vm, NULL, &c));
                    IH_OK(ctx, imghist_equalize_lut(hist, 65536, IMGHIST_EQ_OPENCV, lut));
                    memcpy(want[i], src[i], n * 2);
                    memcpy(got[i], src[i], n * 2);
                    memcpy(batch[i], src[i], n * 2);
                    for (uint32_t y = 0; y < h; y++) {
                        for (uint32_t x = 0; x < w; x++) {
                            want[i][y * pitch + x] = lut[src[i][y * pitch + x]];
                        }
                    }
                    /* alone, into a copy of the source (padding kept) */
                    imghist_view d = v;
                    d.data = got[i];
                    IH_OK(ctx, imghist_equalize(ctx, &vm, &d, IMGHIST_EQ_OPENCV, NULL));
                    if (memcmp(got[i], want[i], n * 2) != 0) {
                        fail_msg("kind %d, mask %d, %ux%u alone: differs from the whole LUT",
                                 kind, masked, w, h);
                    }
                    sv[i] = v;
                    sv[i].data = batch[i];
                    dv[i] = sv[i]; /* in place */
                    mv[i] = m;
                }
                vw_list_masked(sv, sv, masked ? mv : NULL, N);
                IH_OK(ctx, imghist_equalize_list(ctx, sv, dv, N, IMGHIST_EQ_OPENCV, NULL));
                for (size_t i = 0; i < N; i++) {
                    const size_t n = ((size_t)dims[i][0] + (i % 3)) * dims[i][1];
                    if (memcmp(batch[i], want[i], n * 2) != 0) {
                        fail_msg("kind %d, mask %d, image %zu (%ux%u) of a batch on %d "
                                 "threads: differs from the whole LUT",
                                 kind, masked, i, dims[i][0], dims[i][1], threads);
                    }
                    free(src[i]);
                    free(want[i]);
                    free(got[i]);
                    free(batch[i]);
                    free(msk[i]);
                }
            }
        }
        imghist_destroy(ctx);
    }
    free(hist);
    free(lut);
}

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_equalize_batch"));
    return 0;
}

/* test_batch_refusals gives a CPU context device memory, which it must refuse. */
static const bs_test tests[] = {
    BS_TEST(test_pil_lut_random),
    BS_TEST(test_pil_lut_by_hand),
    BS_TEST(test_method_argument),
    BS_TEST(test_batch_vs_loop),
    BS_TEST(test_batch_no_hists_shared_source),
    BS_CPU_TEST(test_batch_refusals),
    BS_TEST(test_batch_tensor_overlaps),
    BS_CPU_TEST(test_batch_long_list),
    BS_TEST(test_equalize_strided),
    BS_TEST(test_batch_u16_and_masked),
    BS_TEST(test_strided_u16_and_masked),
    BS_TEST(test_masked_batch_refusals),
    BS_TEST(test_small_u16_against_the_whole_lut),
};

const bs_part equalize_batch_part = BS_PART("equalize lists and tensors", tests, setup, NULL);
