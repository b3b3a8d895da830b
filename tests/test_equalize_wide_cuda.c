/*
 * The CUDA backend's 16-bit and masked equalization against a CPU context,
 * bit for bit (a part of test_equalize, cuda run only): device and host
 * views, images in bands, an empty device mask. IMGHIST_TEST_QUICK=1:
 * smaller cases.
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
#include "joint_suite.h"

/* CPU vs GPU equalization of src (mask or not), host and device views,
 * histogram in host or device memory, out of place and in place. */
static void equalize_case(const img *src, const img *mask, const char *what)
{
    const imghist_dtype t = src->h.dtype;
    const size_t levels = t == IMGHIST_U8 ? 256 : 65536;
    img want = make_img(t, src->h.width, src->h.height, 0, 0, F_CONSTANT, NULL);
    uint64_t *hw = malloc(levels * 8), *hg = malloc(levels * 8), *dh = NULL;
    CUDA_OK(cudaMalloc((void **)&dh, (levels + 1) * 8));
    imghist_counts hcw = {.data = hw, .len = levels, .mem = IMGHIST_MEM_HOST};
    const imghist_view shm = vw_masked(src->h, mask ? &mask->h : NULL);
    IH_OK(cpu, imghist_equalize(cpu, &shm, &want.h, IMGHIST_EQ_OPENCV, &hcw));
    const size_t row = (size_t)src->h.width * dsize(t);
    for (int mode = 0; mode < 6; mode++) {
        const int dev = mode & 1, dev_hist = (mode >> 1) & 1, in_place = mode >= 4;
        img out = make_img(t, src->h.width, src->h.height, 1 + (uint32_t)mode, dsize(t) * mode,
                           F_CONSTANT, NULL);
        img work = *src; /* in place: a copy of the source as the destination */
        if (in_place) {
            work = make_img(t, src->h.width, src->h.height, 0, 0, F_CONSTANT, NULL);
            work.h.pitch = work.d.pitch = src->h.pitch;
            free(work.hbuf);
            cudaFree(work.dbuf);
            work.bytes = src->bytes;
            work.hbuf = malloc(src->bytes);
            memcpy(work.hbuf, src->hbuf, src->bytes);
            CUDA_OK(cudaMalloc((void **)&work.dbuf, src->bytes));
            CUDA_OK(cudaMemcpy(work.dbuf, src->hbuf, src->bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize());
            const size_t off = (const uint8_t *)src->h.data - src->hbuf;
            work.h.data = work.hbuf + off;
            work.d.data = work.dbuf + off;
        }
        const imghist_view *s = dev ? &work.d : &work.h;
        const imghist_view *d = in_place ? s : dev ? &out.d : &out.h;
        /* Mode 3: device counts 8 but not 16 bytes aligned. */
        uint64_t *dhm = dh + (mode == 3);
        imghist_counts hc = dev_hist ? (imghist_counts){.data = dhm, .len = levels, .mem = IMGHIST_MEM_DEVICE}
                                     : (imghist_counts){.data = hg, .len = levels,
                                         .mem = IMGHIST_MEM_HOST};
        const imghist_view sm = vw_masked(*s, mask ? (dev ? &mask->d : &mask->h) : NULL);
        IH_OK(gpu, imghist_equalize(gpu, &sm, d, IMGHIST_EQ_OPENCV, &hc));
        gpu_sync();
        if (dev_hist) CUDA_OK(cudaMemcpy(hg, dhm, levels * 8, cudaMemcpyDeviceToHost));
        char label[200];
        snprintf(label, sizeof label, "%s, mode %d: histogram", what, mode);
        expect_same_counts(hw, hg, levels, label);
        const imghist_view *dh_view = in_place ? &work.h : &out.h;
        if (dev) {
            const img *o = in_place ? &work : &out;
            CUDA_OK(cudaMemcpy(o->hbuf, o->dbuf, o->bytes, cudaMemcpyDeviceToHost));
        }
        for (uint32_t y = 0; y < src->h.height; y++) {
            const uint8_t *pw = (const uint8_t *)want.h.data + (size_t)y * want.h.pitch;
            const uint8_t *pg = (const uint8_t *)dh_view->data + (size_t)y * dh_view->pitch;
            if (memcmp(pw, pg, row) != 0) {
                fail_msg("%s, mode %d: row %u differs", what, mode, y);
            }
        }
        free_img(&out);
        if (in_place) free_img(&work);
    }
    cudaFree(dh);
    free(hw);
    free(hg);
    free_img(&want);
}

static void test_equalize_u16(void **state)
{
    (void)state;
    const enum fill fills[5] = {F_UNIFORM, F_CONSTANT, F_TWO, F_SMALL, F_UNIFORM};
    for (int iter = 0; iter < (quick ? 5 : 10); iter++) {
        const uint32_t w = iter == 4 ? 4000 : 1 + tu_below(&rng, 900);
        const uint32_t h = iter == 4 ? (quick ? 100 : 1000) : 1 + tu_below(&rng, 300);
        const size_t off = iter == 7 ? 1 : 2 * tu_below(&rng, 12); /* 7: odd address */
        img s = make_img(IMGHIST_U16, w, h, tu_below(&rng, 9), off, fills[iter % 5], NULL);
        char what[128];
        snprintf(what, sizeof what, "u16 %ux%u fill %d offset %zu", w, h, (int)fills[iter % 5], off);
        equalize_case(&s, NULL, what);
        free_img(&s);
    }
}

static void test_equalize_masked(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 6 : 12); iter++) {
        const imghist_dtype t = iter & 1 ? IMGHIST_U16 : IMGHIST_U8;
        const uint32_t w = 1 + tu_below(&rng, 1200), h = 1 + tu_below(&rng, 300);
        img s = make_img(t, w, h, tu_below(&rng, 9), dsize(t) * tu_below(&rng, 12),
                         iter % 3 == 0 ? F_SMALL : F_UNIFORM, NULL);
        img m = make_mask(w, h, tu_below(&rng, 4), tu_below(&rng, 7), iter % 4 == 2 ? 1 : 40);
        m.hbuf[(const uint8_t *)m.h.data - m.hbuf] = 9; /* at least one pixel counts */
        CUDA_OK(cudaMemcpy(m.dbuf, m.hbuf, m.bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        char what[128];
        snprintf(what, sizeof what, "masked %s %ux%u", t == IMGHIST_U8 ? "u8" : "u16", w, h);
        equalize_case(&s, &m, what);
        free_img(&s);
        free_img(&m);
    }
}

/* Host views in bands, and a mask with no non-zero sample. */
static void test_equalize_bands_and_empty_mask(void **state)
{
    (void)state;
    img s = make_img(IMGHIST_U16, 777, 301, 5, 4, F_UNIFORM, NULL);
    img m = make_mask(777, 301, 0, 3, 30);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 200000));
    equalize_case(&s, NULL, "u16 in bands");
    equalize_case(&s, &m, "u16 masked in bands");
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    img z = make_mask(777, 301, 0, 3, 0);
    img d = make_img(IMGHIST_U16, 777, 301, 5, 4, F_CONSTANT, NULL);
    const imghist_view szh = vw_masked(s.h, &z.h), szd = vw_masked(s.d, &z.d);
    assert_int_equal(imghist_equalize(gpu, &szh, &d.h, IMGHIST_EQ_OPENCV, NULL),
                     IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(gpu), "no non-zero"));
    /* Device views: the destination becomes a copy, the histogram zeros. */
    uint64_t *dh = NULL, *hh = malloc(65536 * 8);
    CUDA_OK(cudaMalloc((void **)&dh, 65536 * 8));
    imghist_counts hc = {.data = dh, .len = 65536, .mem = IMGHIST_MEM_DEVICE};
    IH_OK(gpu, imghist_equalize(gpu, &szd, &d.d, IMGHIST_EQ_OPENCV, &hc));
    gpu_sync();
    CUDA_OK(cudaMemcpy(d.hbuf, d.dbuf, d.bytes, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(hh, dh, 65536 * 8, cudaMemcpyDeviceToHost));
    for (uint32_t y = 0; y < 301; y++) {
        assert_memory_equal((const uint8_t *)s.h.data + (size_t)y * s.h.pitch,
                            (const uint8_t *)d.h.data + (size_t)y * d.h.pitch, 777 * 2);
    }
    for (size_t i = 0; i < 65536; i++) assert_true(hh[i] == 0);
    cudaFree(dh);
    free(hh);
    free_img(&s);
    free_img(&m);
    free_img(&z);
    free_img(&d);
}

static int setup(void **state)
{
    (void)state;
    BS_GPU_PART_STATE("test_equalize_wide_cuda");
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_equalize_u16),
    BS_CUDA_TEST(test_equalize_masked),
    BS_CUDA_TEST(test_equalize_bands_and_empty_mask),
};

const bs_part equalize_wide_cuda_part = BS_PART("equalize 16-bit and masked cuda", tests, setup, NULL);
