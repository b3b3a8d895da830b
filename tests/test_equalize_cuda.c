/*
 * 8-bit equalization and histograms of host images on the CUDA backend
 * against the reference and the CPU backend, bit for bit (a part of
 * test_equalize, cuda run only): random shapes and pitches, the photographs,
 * host images in bands, host copies through pinned and pageable buffers,
 * histogram matching on device memory.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <float.h>
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
#include <cuda_runtime_api.h>

#include "imghist.h"
#include "imghist_experimental.h"
#include "backend_suite.h"
#include "suite_util.h"
#include "test_util.h"
#include "views.h"
#include "gpu_suite.h"

static void test_equalize_random(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 14 : 60); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 3000 : 200);
        const uint32_t h = 1 + tu_below(&rng, 150);
        const size_t sp = w + tu_below(&rng, 40);
        const size_t dp = (iter % 2) ? sp : w + tu_below(&rng, 40);
        const unsigned soff = tu_below(&rng, 16);
        /* Half the cases share the 16-byte phase (vector path), half not. */
        const unsigned doff = (iter % 3 == 0) ? tu_below(&rng, 16) : soff;
        check_equalize_case(w, h, sp, soff, dp, doff, (enum pattern)(iter % N_PATTERNS), 0);
    }
    for (int p = 0; p < N_PATTERNS; p++) {
        check_equalize_case(3001, quick ? 53 : 2003, 3008, 0, 3008, 0, (enum pattern)p, 0);
        check_equalize_case(2048, quick ? 40 : 1001, 2048, 0, 2048, 0, (enum pattern)p, 0);
        check_equalize_case(2048, quick ? 40 : 1001, 2560, 0, 2048, 0, (enum pattern)p, 0);
        check_equalize_case(777, 333, 800, 3, 0, 0, (enum pattern)p, 1);
    }
    check_equalize_case(1, 1, 1, 0, 1, 0, UNIFORM, 0);
    /* Packed rows (pitch == width) go as one row (ih_flat): odd widths, same
     * and other phases, in place; small (one block) and two-pass. */
    const uint32_t packed[] = {1, 15, 17, 33, 1080, 3000};
    for (unsigned i = 0; i < sizeof packed / sizeof packed[0]; i++) {
        const uint32_t w = packed[i], h = w > 100 ? (quick ? 9 : 61) : 37;
        check_equalize_case(w, h, w, i, w, i, (enum pattern)(i % N_PATTERNS), 0);
        check_equalize_case(w, h, w, 3, w, 8, UNIFORM, 0);
        check_equalize_case(w, h, w, 5, 0, 0, MULT32, 1);
    }
    check_equalize_case(1080, quick ? 300 : 1920, 1080, 0, 1080, 0, UNIFORM, 0);
}

/* Host views on the CUDA backend, on the photographs. */
static void test_host_api_photographs(void **state)
{
    (void)state;
    const char *names[] = {"moon.png", "camera.png", "coffee.png", "astronaut.png",
                           "hubble_deep_field.jpg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples, names[i]);
        imghist_image *img = NULL;
        IH_OK(cpu, imghist_load_file(cpu, path, &img));
        const imghist_view *v = &img->view;
        const size_t n = (size_t)v->width * v->height;
        uint64_t hc[BINS], hg[BINS];
        uint8_t *ec = malloc(n), *eg = malloc(n);
        const imghist_counts hc_c = counts_at(hc, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hg_c = counts_at(hg, BINS, IMGHIST_MEM_HOST);
        const imghist_view ec_v = u8_view(ec, IMGHIST_MEM_HOST, v->width, v->height, v->width);
        const imghist_view eg_v = u8_view(eg, IMGHIST_MEM_HOST, v->width, v->height, v->width);
        IH_OK(gpu, imghist_histogram(gpu, v, NULL, &hg_c));
        IH_OK(cpu, imghist_histogram(cpu, v, NULL, &hc_c));
        assert_memory_equal(hg, hc, sizeof hc);
        IH_OK(gpu, imghist_equalize(gpu, v, &eg_v, IMGHIST_EQ_OPENCV, &hg_c));
        IH_OK(cpu, imghist_equalize(cpu, v, &ec_v, IMGHIST_EQ_OPENCV, &hc_c));
        assert_memory_equal(eg, ec, n);
        assert_memory_equal(hg, hc, sizeof hc);
        free(ec);
        free(eg);
        imghist_image_free(img);
    }
}

/* Host images that do not fit the staging limit go through in bands, with
 * the same bits, and the note says so; with the limit back at 0 (automatic)
 * the image goes in one piece and the note is empty. */
static void test_host_api_in_bands(void **state)
{
    (void)state;
    const uint32_t w = 1237, h = 911;
    const size_t n = (size_t)w * h;
    uint8_t *img = malloc(n), *eg = malloc(n), *ec = malloc(n);
    for (size_t i = 0; i < n; i++) {
        img[i] = pattern_value((enum pattern)(i % 3 == 0 ? MULT32 : NORMALISH), i, 0, 0);
    }
    const imghist_view iv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view egv = u8_view(eg, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view ecv = u8_view(ec, IMGHIST_MEM_HOST, w, h, w);
    uint64_t hg[BINS], hc[BINS];
    const imghist_counts hgc = counts_at(hg, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hcc = counts_at(hc, BINS, IMGHIST_MEM_HOST);
    int64_t v = -1;
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 100000)); /* 80 rows per band */
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_STAGING_BYTES, &v));
    assert_int_equal(v, 100000);
    IH_OK(gpu, imghist_histogram(gpu, &iv, NULL, &hgc));
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    IH_OK(gpu, imghist_equalize(gpu, &iv, &egv, IMGHIST_EQ_OPENCV, &hgc));
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    IH_OK(cpu, imghist_equalize(cpu, &iv, &ecv, IMGHIST_EQ_OPENCV, &hcc));
    assert_memory_equal(hg, hc, sizeof hc);
    assert_memory_equal(eg, ec, n);
    /* And back to one piece. */
    IH_OK(gpu, imghist_histogram(gpu, &iv, NULL, &hgc));
    assert_string_equal(imghist_last_note(gpu), "");
    assert_memory_equal(hg, hc, sizeof hc);
    free(img);
    free(eg);
    free(ec);
}

/* Host memory for one case of test_host_transfers: malloc'd, or pinned by
 * CUDA (which the library copies from directly). */
static uint8_t *host_alloc(size_t n, int pinned)
{
    void *p = NULL;
    if (pinned) {
        CUDA_OK(cudaMallocHost(&p, n));
    } else {
        p = malloc(n);
    }
    assert_non_null(p);
    return (uint8_t *)p;
}

static void host_free(void *p, int pinned)
{
    if (pinned) {
        CUDA_OK(cudaFreeHost(p));
    } else {
        free(p);
    }
}

/*
 * Host images go to the GPU and back through the context's pinned slots
 * (2 MiB each, in turn) when they are large enough, and directly otherwise:
 * images of several slots with pitched rows at odd offsets, in bands that
 * are themselves several slots, a row wider than a slot, CUDA-pinned memory,
 * a small image, and a U16 view with a mask (the wide path's two uploads).
 * Counts and equalized pixels equal the CPU's; the destination's padding
 * keeps its poison.
 */
static void test_host_transfers(void **state)
{
    (void)state;
    static const struct {
        uint32_t w, h;
        size_t spad, dpad; /* pitch - width, source and destination */
        unsigned soff, doff;
        int64_t staging;   /* IMGHIST_P_STAGING_BYTES, 0: automatic */
        int pinned;
    } cases[] = {
        {3001, 2100, 12, 18, 3, 5, 0, 0},             /* 4 slots of 699 rows */
        {3001, 2100, 0, 0, 0, 0, 0, 0},               /* packed: one memcpy a slot */
        {3001, 2100, 12, 18, 3, 5, 3001 * 1000, 0},   /* 3 bands of 2 slots */
        {2200000, 3, 1, 7, 1, 2, 0, 0},               /* a row wider than a slot */
        {2048, 1500, 16, 16, 0, 0, 0, 1},             /* pinned already */
        {200, 100, 5, 3, 1, 1, 0, 0},                 /* below the slots' threshold */
        {640, 480, 0, 0, 0, 0, 0, 0},                 /* one slot */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const uint32_t w = cases[k].w, h = cases[k].h;
        const size_t sp = w + cases[k].spad, dp = w + cases[k].dpad;
        const size_t sbytes = cases[k].soff + sp * h, dbytes = cases[k].doff + dp * h;
        const int pinned = cases[k].pinned;
        uint8_t *sbase = host_alloc(sbytes, pinned), *dbase = host_alloc(dbytes, pinned);
        uint8_t *want = malloc(dp * h);
        assert_non_null(want);
        uint8_t *src = sbase + cases[k].soff, *dst = dbase + cases[k].doff;
        memset(sbase, 0xfd, sbytes);
        fill_image(src, sp, w, h, (enum pattern)(k % PHOTO));
        memset(dbase, 0xee, dbytes);
        memset(want, 0xee, dp * h);
        const imghist_view sv = u8_view(src, IMGHIST_MEM_HOST, w, h, sp);
        const imghist_view dv = u8_view(dst, IMGHIST_MEM_HOST, w, h, dp);
        const imghist_view wv = u8_view(want, IMGHIST_MEM_HOST, w, h, dp);
        uint64_t hg[BINS], hc[BINS], he[BINS];
        const imghist_counts hgc = counts_at(hg, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hcc = counts_at(hc, BINS, IMGHIST_MEM_HOST);
        const imghist_counts hec = counts_at(he, BINS, IMGHIST_MEM_HOST);
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, cases[k].staging));
        IH_OK(gpu, imghist_histogram(gpu, &sv, NULL, &hgc));
        IH_OK(gpu, imghist_equalize(gpu, &sv, &dv, IMGHIST_EQ_OPENCV, &hec));
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
        IH_OK(cpu, imghist_equalize(cpu, &sv, &wv, IMGHIST_EQ_OPENCV, &hcc));
        if (memcmp(hg, hc, sizeof hc) != 0 || memcmp(he, hc, sizeof hc) != 0) {
            fail_msg("case %zu (%ux%u): counts differ from the CPU's", k, w, h);
        }
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(dst + y * dp, want + y * dp, dp) != 0) {
                fail_msg("case %zu (%ux%u): row %u differs from the CPU's (padding included)",
                         k, w, h, y);
            }
        }
        for (unsigned i = 0; i < cases[k].doff; i++) {
            assert_int_equal(dbase[i], 0xee);
        }
        free(want);
        host_free(sbase, pinned);
        host_free(dbase, pinned);
    }

    /* U16 with a mask: the wide path uploads both. */
    const uint32_t w = 1500, h = 1100;
    const size_t sp = 2 * w + 6, mp = w + 3;
    uint8_t *img = malloc(sp * h), *mask = malloc(mp * h);
    uint64_t *cg = malloc(65536 * sizeof(uint64_t)), *cc = malloc(65536 * sizeof(uint64_t));
    assert_true(img != NULL && mask != NULL && cg != NULL && cc != NULL);
    for (uint32_t y = 0; y < h; y++) {
        uint16_t *row = (uint16_t *)(img + y * sp);
        for (uint32_t x = 0; x < w; x++) {
            row[x] = (uint16_t)(tu_next(&rng) >> 48);
            mask[y * mp + x] = (uint8_t)((x * 7 + y * 3) % 5 != 0);
        }
    }
    const imghist_view v16 = {.data = img, .dtype = IMGHIST_U16, .mem = IMGHIST_MEM_HOST,
                              .width = w, .height = h, .pitch = sp};
    const imghist_view mv = u8_view(mask, IMGHIST_MEM_HOST, w, h, mp);
    const imghist_counts cgc = counts_at(cg, 65536, IMGHIST_MEM_HOST);
    const imghist_counts ccc = counts_at(cc, 65536, IMGHIST_MEM_HOST);
    const imghist_view v16m = vw_masked(v16, &mv);
    IH_OK(gpu, imghist_histogram(gpu, &v16m, NULL, &cgc));
    IH_OK(cpu, imghist_histogram(cpu, &v16m, NULL, &ccc));
    assert_memory_equal(cg, cc, 65536 * sizeof(uint64_t));
    free(img);
    free(mask);
    free(cg);
    free(cc);
}

/* Histogram matching on the GPU through the C API: the device image's
 * histogram, imghist_match_lut, imghist_apply_lut on the device; the same
 * bytes as the CPU context, the padding untouched. */
static void test_match_on_device(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{640, 480}, {333, 517}, {1, 1}, {4097, 3}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t w = sizes[k][0], h = sizes[k][1];
        img_t a = make_image(w, h, w + 5, 3, (enum pattern)(k % 3));
        img_t r = make_image(97, 61, 97, 0, NORMALISH);
        uint64_t ha[BINS], hr[BINS], hc[BINS];
        const imghist_counts ca = counts_at(ha, BINS, IMGHIST_MEM_HOST);
        const imghist_counts cr = counts_at(hr, BINS, IMGHIST_MEM_HOST);
        assert_int_equal(imghist_histogram(gpu, &a.dv, NULL, &ca), IMGHIST_OK);
        assert_int_equal(imghist_histogram(gpu, &r.dv, NULL, &cr), IMGHIST_OK);
        gpu_sync();
        cpu_hist(&a.hv, hc);
        assert_memory_equal(ha, hc, sizeof ha);
        uint8_t lut[256];
        assert_int_equal(imghist_match_lut(ha, hr, lut), IMGHIST_OK);
        /* Device, in place. */
        assert_int_equal(imghist_apply_lut(gpu, &a.dv, &a.dv, lut), IMGHIST_OK);
        assert_int_equal(imghist_apply_lut(cpu, &a.hv, &a.hv, lut), IMGHIST_OK);
        gpu_sync();
        uint8_t *back = malloc(a.pitch * h);
        assert_non_null(back);
        CUDA_OK(cudaMemcpy2D(back, a.pitch, a.dev, a.pitch, a.pitch - (a.pitch - w), h,
                             cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            assert_memory_equal(back + (size_t)y * a.pitch, a.host + (size_t)y * a.pitch, w);
        }
        /* The padding after each row was not written. */
        if (h > 1) {
            uint8_t pad[5];
            CUDA_OK(cudaMemcpy(pad, a.dev + w, 5, cudaMemcpyDeviceToHost));
            for (int i = 0; i < 5; i++) {
                assert_int_equal(pad[i], 0xfd);
            }
        }
        free(back);
        free_image(&a);
        free_image(&r);
    }
}

static int setup(void **state)
{
    (void)state;
    return gpu_suite_setup("test_equalize_cuda");
}

static const bs_test tests[] = {
    GPU_TEST(test_equalize_random),
    GPU_TEST(test_host_api_photographs),
    GPU_TEST(test_host_api_in_bands),
    GPU_TEST(test_host_transfers),
    GPU_TEST(test_match_on_device),
};

const bs_part equalize_cuda_part = BS_PART("equalize cuda", tests, setup, gpu_suite_teardown);
