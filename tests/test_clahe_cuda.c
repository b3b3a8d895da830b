/*
 * CLAHE on the CUDA backend against the CPU backend, bit for bit (a part of
 * test_clahe, cuda run only): 8- and 16-bit, tile grids, clip limits, lists,
 * device and host views, in place, and batches of 1 to 17 images run in one
 * set of launches (pitched, strided, backwards, grids past 256 and past the
 * image's size).
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

/* Device memory on a context of the CPU backend: refused, whichever argument
 * holds it; and the CPU backend has no stream. Real device allocations, so
 * that only the memory kind can be the reason. */
/* CLAHE on the GPU against the CPU context, bit for bit: U8 in every
 * pattern and in sizes that are not multiples of the grid (pitched, at an
 * odd offset), U16, device views in place, host views on the CUDA context,
 * and a device batch. */
static void check_clahe(const void *host, size_t pitch, uint32_t w, uint32_t h, imghist_dtype t,
                        double clip, uint32_t tx, uint32_t ty)
{
    const size_t es = t == IMGHIST_U8 ? 1 : 2, row = (size_t)w * es;
    uint8_t *want = malloc(row * h), *got = malloc(row * h), *hgot = malloc(row * h);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(hgot);
    imghist_view hs = {.data = (void *)host, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w,
        .height = h, .pitch = pitch, .channels = 1};
    imghist_view hd = {.data = want, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(cpu, &hs, &hd, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("cpu clahe: %s", imghist_last_error(cpu));
    }
    /* Device, pitched source at an odd offset, packed destination. */
    uint8_t *dsrc, *ddst;
    CUDA_OK(cudaMalloc((void **)&dsrc, pitch * h + 2));
    CUDA_OK(cudaMalloc((void **)&ddst, row * h));
    poison_device(ddst, 0xab, row * h);
    uint8_t *dimg = dsrc + (es == 1 ? 1 : 2);
    CUDA_OK(cudaMemcpy(dimg, host, pitch * h, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    imghist_view ds = {.data = dimg, .dtype = t, .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h,
        .pitch = pitch, .channels = 1};
    imghist_view dd = {.data = ddst, .dtype = t, .mem = IMGHIST_MEM_DEVICE, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(gpu, &ds, &dd, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe: %s", imghist_last_error(gpu));
    }
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, ddst, row * h, cudaMemcpyDeviceToHost));
    if (memcmp(got, want, row * h) != 0) {
        fail_msg("CLAHE %ux%u %s clip %g tiles %ux%u: device result differs", w, h,
                 es == 1 ? "u8" : "u16", clip, tx, ty);
    }
    /* In place on the device. */
    if (imghist_clahe(gpu, &ds, &ds, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe in place: %s", imghist_last_error(gpu));
    }
    gpu_sync();
    CUDA_OK(cudaMemcpy2D(got, row, dimg, pitch, row, h, cudaMemcpyDeviceToHost));
    assert_memory_equal(got, want, row * h);
    /* A host view on the CUDA context. */
    imghist_view hg = {.data = hgot, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w, .height = h,
        .pitch = row, .channels = 1};
    if (imghist_clahe(gpu, &hs, &hg, clip, tx, ty) != IMGHIST_OK) {
        fail_msg("gpu clahe of a host view: %s", imghist_last_error(gpu));
    }
    assert_memory_equal(hgot, want, row * h);
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    free(want);
    free(got);
    free(hgot);
}

static void test_clahe(void **state)
{
    (void)state;
    static const uint32_t sizes[][2] = {{640, 480}, {333, 517}, {1, 77}, {50, 1}, {1, 1},
                                        {3, 5}, {1920, 1080}, {4000, 3000}};
    static const struct { double clip; uint32_t tx, ty; } set[] = {
        {40.0, 8, 8}, {2.0, 8, 8}, {0.0, 4, 4}, {1.0, 3, 5}, {4.0, 16, 16}, {0.5, 7, 3}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t w = sizes[k][0], h = sizes[k][1];
        if (quick && (uint64_t)w * h > 3000000) {
            continue;
        }
        for (int p = 0; p < N_PATTERNS; p++) {
            if (p == PHOTO) {
                continue;
            }
            const size_t pitch = w + 3;
            uint8_t *img = malloc(pitch * h);
            assert_non_null(img);
            memset(img, 0xfd, pitch * h);
            fill_image(img, pitch, w, h, (enum pattern)p);
            const size_t si = (k + (size_t)p) % (sizeof set / sizeof set[0]);
            check_clahe(img, pitch, w, h, IMGHIST_U8, set[si].clip, set[si].tx, set[si].ty);
            free(img);
        }
        /* U16: random 16-bit values and 12-bit values in the high bits. */
        const size_t pitch16 = (size_t)w * 2 + 6;
        uint8_t *img16 = malloc(pitch16 * h);
        assert_non_null(img16);
        for (int variant = 0; variant < 2; variant++) {
            for (uint32_t y = 0; y < h; y++) {
                uint16_t *r = (uint16_t *)(img16 + (size_t)y * pitch16);
                for (uint32_t x = 0; x < w; x++) {
                    const uint32_t v = tu_next(&rng);
                    r[x] = (uint16_t)(variant == 0 ? v : (v & 0xfff) << 4);
                }
            }
            const size_t si = (k + 3 + (size_t)variant) % (sizeof set / sizeof set[0]);
            check_clahe(img16, pitch16, w, h, IMGHIST_U16, set[si].clip, set[si].tx,
                        set[si].ty);
        }
        free(img16);
    }
    /* A device batch of three sizes against image-by-image CPU results. */
    static const uint32_t bs[3][2] = {{64, 48}, {333, 17}, {640, 480}};
    imghist_view src[3], dst[3], hsrc[3], hdst[3];
    uint8_t *dev[3], *host[3], *want[3];
    for (int i = 0; i < 3; i++) {
        const size_t n = (size_t)bs[i][0] * bs[i][1];
        host[i] = malloc(n);
        want[i] = malloc(n);
        assert_non_null(host[i]);
        assert_non_null(want[i]);
        fill_image(host[i], bs[i][0], bs[i][0], bs[i][1], (enum pattern)(i % 3));
        CUDA_OK(cudaMalloc((void **)&dev[i], n));
        CUDA_OK(cudaMemcpy(dev[i], host[i], n, cudaMemcpyHostToDevice));
        src[i] = u8_view(dev[i], IMGHIST_MEM_DEVICE, bs[i][0], bs[i][1], bs[i][0]);
        dst[i] = src[i];
        hsrc[i] = u8_view(host[i], IMGHIST_MEM_HOST, bs[i][0], bs[i][1], bs[i][0]);
        hdst[i] = u8_view(want[i], IMGHIST_MEM_HOST, bs[i][0], bs[i][1], bs[i][0]);
    }
    CUDA_OK(cudaDeviceSynchronize());
    assert_int_equal(imghist_clahe_list(cpu, hsrc, hdst, 3, 3.0, 4, 4), IMGHIST_OK);
    assert_int_equal(imghist_clahe_list(gpu, src, dst, 3, 3.0, 4, 4), IMGHIST_OK);
    gpu_sync();
    for (int i = 0; i < 3; i++) {
        const size_t n = (size_t)bs[i][0] * bs[i][1];
        uint8_t *got = malloc(n);
        assert_non_null(got);
        CUDA_OK(cudaMemcpy(got, dev[i], n, cudaMemcpyDeviceToHost));
        assert_memory_equal(got, want[i], n);
        free(got);
        free(host[i]);
        free(want[i]);
        CUDA_OK(cudaFree(dev[i]));
    }
    /* A device view of several images (backwards, pitched, a gap between
     * images) into a tensor of another layout: CLAHE and a lookup table,
     * against the CPU image by image. */
    enum { TN = 5, TW = 203, TH = 61, TSP = 208, TDP = 224 };
    const size_t sst = (size_t)TSP * TH + 48, dst_st = (size_t)TDP * TH;
    uint8_t *th = malloc(TN * sst), *tw = malloc(TN * dst_st), *tg = malloc(TN * dst_st);
    uint8_t *tsd = NULL, *tdd = NULL, lut[256];
    assert_true(th && tw && tg);
    for (size_t i = 0; i < TN; i++) {
        fill_image(th + i * sst, TSP, TW, TH, (enum pattern)(i % 3));
    }
    for (int k = 0; k < 256; k++) lut[k] = (uint8_t)(k * 37 + 11);
    CUDA_OK(cudaMalloc((void **)&tsd, TN * sst));
    CUDA_OK(cudaMalloc((void **)&tdd, TN * dst_st));
    CUDA_OK(cudaMemcpy(tsd, th, TN * sst, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view ts = vw_tensor(u8_view(tsd + (TN - 1) * sst, IMGHIST_MEM_DEVICE, TW, TH,
                                              TSP), TN, -(ptrdiff_t)sst);
    const imghist_view td = vw_tensor(u8_view(tdd, IMGHIST_MEM_DEVICE, TW, TH, TDP), TN,
                                      (ptrdiff_t)dst_st);
    for (int op = 0; op < 2; op++) {
        memset(tw, 0, TN * dst_st);
        for (size_t i = 0; i < TN; i++) {
            const imghist_view hs = u8_view(th + (TN - 1 - i) * sst, IMGHIST_MEM_HOST, TW, TH,
                                            TSP);
            const imghist_view hd = u8_view(tw + i * dst_st, IMGHIST_MEM_HOST, TW, TH, TDP);
            IH_OK(cpu, op == 0 ? imghist_clahe(cpu, &hs, &hd, 2.0, 5, 3)
                               : imghist_apply_lut(cpu, &hs, &hd, lut));
        }
        CUDA_OK(cudaMemset(tdd, 0, TN * dst_st));
        CUDA_OK(cudaDeviceSynchronize());
        IH_OK(gpu, op == 0 ? imghist_clahe(gpu, &ts, &td, 2.0, 5, 3)
                           : imghist_apply_lut(gpu, &ts, &td, lut));
        gpu_sync();
        CUDA_OK(cudaMemcpy(tg, tdd, TN * dst_st, cudaMemcpyDeviceToHost));
        if (memcmp(tg, tw, TN * dst_st) != 0) {
            fail_msg("%s of a device view of %d images differs from the CPU's image by image",
                     op == 0 ? "CLAHE" : "a lookup table", TN);
        }
    }
    CUDA_OK(cudaFree(tsd));
    CUDA_OK(cudaFree(tdd));
    free(th);
    free(tw);
    free(tg);
}

/* One device tensor of n images (w x h, pitch bytes a row, image_stride
 * bytes apart, backwards when negative) through imghist_clahe on the GPU,
 * into a tensor of another layout and in place, and the same images as a
 * host tensor on the GPU context: each image as the CPU makes it alone. */
static void check_clahe_batch(size_t n, uint32_t w, uint32_t h, imghist_dtype t, size_t pitch,
                              ptrdiff_t stride, double clip, uint32_t tx, uint32_t ty)
{
    const size_t es = t == IMGHIST_U8 ? 1 : 2, row = (size_t)w * es;
    const size_t span = (size_t)(stride < 0 ? -stride : stride);
    const size_t bytes = (n - 1) * span + pitch * (h - 1) + row;
    const size_t dpitch = row + 2 * es, dstride = dpitch * h + 4;
    const size_t dbytes = (n - 1) * dstride + dpitch * (h - 1) + row;
    /* got holds the destination tensor, or the source one after pass 1. */
    uint8_t *host = malloc(bytes), *want = malloc(n * row * h);
    uint8_t *got = malloc(bytes > dbytes ? bytes : dbytes);
    uint8_t *hout = malloc(dbytes);
    assert_true(host && want && got && hout);
    for (size_t i = 0; i < bytes; i++) {
        host[i] = (uint8_t)(tu_next(&rng) >> 56);
    }
    /* Image i's first sample: the lowest address for a backwards tensor is
     * the last image's. */
    const size_t first = stride < 0 ? (n - 1) * span : 0;
    for (size_t i = 0; i < n; i++) {
        const imghist_view hs = {.data = host + first + (ptrdiff_t)i * stride, .dtype = t,
            .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = pitch, .channels = 1};
        const imghist_view hd = {.data = want + i * row * h, .dtype = t, .mem = IMGHIST_MEM_HOST,
            .width = w, .height = h, .pitch = row, .channels = 1};
        if (imghist_clahe(cpu, &hs, &hd, clip, tx, ty) != IMGHIST_OK) {
            fail_msg("cpu clahe: %s", imghist_last_error(cpu));
        }
    }
    uint8_t *dsrc, *ddst;
    CUDA_OK(cudaMalloc((void **)&dsrc, bytes + 2));
    CUDA_OK(cudaMalloc((void **)&ddst, dbytes));
    uint8_t *dimg = dsrc + es; /* not at the allocation's alignment */
    CUDA_OK(cudaMemcpy(dimg, host, bytes, cudaMemcpyHostToDevice));
    poison_device(ddst, 0xab, dbytes);
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view s0 = {.data = dimg + first, .dtype = t, .mem = IMGHIST_MEM_DEVICE,
        .width = w, .height = h, .pitch = pitch, .channels = 1};
    const imghist_view d0 = {.data = ddst, .dtype = t, .mem = IMGHIST_MEM_DEVICE, .width = w,
        .height = h, .pitch = dpitch, .channels = 1};
    const imghist_view ts = vw_tensor(s0, n, stride), td = vw_tensor(d0, n, (ptrdiff_t)dstride);
    for (int pass = 0; pass < 3; pass++) {
        /* 0: into another tensor; 1: in place; 2: host tensors on the GPU. */
        imghist_status st;
        if (pass == 2) {
            memset(hout, 0x5c, dbytes);
            imghist_view hs = vw_tensor(s0, n, stride), hd = vw_tensor(d0, n, (ptrdiff_t)dstride);
            hs.mem = hd.mem = IMGHIST_MEM_HOST;
            hs.data = host + first;
            hd.data = hout;
            st = imghist_clahe(gpu, &hs, &hd, clip, tx, ty);
        } else {
            st = imghist_clahe(gpu, &ts, pass == 0 ? &td : &ts, clip, tx, ty);
        }
        if (st != IMGHIST_OK) {
            fail_msg("gpu clahe of %zu images (pass %d): %s", n, pass, imghist_last_error(gpu));
        }
        gpu_sync();
        if (pass == 0) {
            CUDA_OK(cudaMemcpy(got, ddst, dbytes, cudaMemcpyDeviceToHost));
        } else if (pass == 1) {
            CUDA_OK(cudaMemcpy(got, dimg, bytes, cudaMemcpyDeviceToHost));
        }
        const uint8_t *out = pass == 2 ? hout : got;
        for (size_t i = 0; i < n; i++) {
            for (uint32_t y = 0; y < h; y++) {
                const uint8_t *g = pass == 1 ? out + first + (ptrdiff_t)i * stride + y * pitch
                                             : out + i * dstride + y * dpitch;
                if (memcmp(g, want + (i * h + y) * row, row) != 0) {
                    fail_msg("CLAHE batch of %zu %ux%u %s (pitch %zu, stride %td, clip %g, "
                             "tiles %ux%u), pass %d: image %zu row %u differs from the CPU",
                             n, w, h, es == 1 ? "u8" : "u16", pitch, stride, clip, tx, ty, pass,
                             i, y);
                }
            }
        }
    }
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    free(host);
    free(want);
    free(got);
    free(hout);
}

/* Batches in one set of launches against the CPU image by image: counts 1,
 * 2, 3 and 17, odd sizes, pitched rows, gaps and backwards strides, U8 and
 * U16, in place, grids above 256 and past the image's size. */
static void test_clahe_batches(void **state)
{
    (void)state;
    static const struct {
        size_t n;
        uint32_t w, h;
        imghist_dtype t;
        unsigned pad;   /* bytes a row past the samples */
        int gap;        /* bytes between images past the rows; < 0: backwards */
        double clip;
        uint32_t tx, ty;
    } c[] = {
        {1, 640, 480, IMGHIST_U8, 0, 0, 40.0, 8, 8},
        {2, 333, 517, IMGHIST_U8, 3, 5, 2.0, 8, 8},
        {3, 101, 37, IMGHIST_U8, 1, -7, 0.0, 7, 3},
        {17, 64, 48, IMGHIST_U8, 0, 0, 40.0, 8, 8},
        {17, 31, 9, IMGHIST_U8, 5, 11, 1.5, 4, 2},
        {3, 1, 1, IMGHIST_U8, 0, 1, 40.0, 8, 8},
        {2, 1, 77, IMGHIST_U8, 2, 0, 40.0, 3, 300},
        {3, 53, 37, IMGHIST_U8, 1, 3, 40.0, 300, 300},
        {2, 203, 61, IMGHIST_U8, 0, -16, 3.0, 257, 2},
        {2, 640, 480, IMGHIST_U8, 0, 0, 0.0, 640, 480},
        {1, 97, 65, IMGHIST_U16, 2, 0, 40.0, 8, 8},
        {3, 97, 65, IMGHIST_U16, 6, 2, 4.0, 5, 7},
        {2, 33, 17, IMGHIST_U16, 0, -4, 40.0, 40, 20},
        {17, 20, 11, IMGHIST_U16, 4, 8, 0.0, 3, 3},
    };
    for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
        const size_t es = c[k].t == IMGHIST_U8 ? 1 : 2;
        const size_t pitch = (size_t)c[k].w * es + c[k].pad * es;
        const size_t span = pitch * c[k].h + (size_t)(c[k].gap < 0 ? -c[k].gap : c[k].gap) * es;
        const ptrdiff_t stride = c[k].gap < 0 ? -(ptrdiff_t)span : (ptrdiff_t)span;
        if (quick && c[k].n * c[k].w * c[k].h > 100000) {
            continue;
        }
        check_clahe_batch(c[k].n, c[k].w, c[k].h, c[k].t, pitch, stride, c[k].clip, c[k].tx,
                          c[k].ty);
    }
}

static int setup(void **state)
{
    (void)state;
    return gpu_suite_setup("test_clahe_cuda");
}

static const bs_test tests[] = {
    GPU_TEST(test_clahe),
    GPU_TEST(test_clahe_batches),
};

const bs_part clahe_cuda_part = BS_PART("clahe cuda", tests, setup, gpu_suite_teardown);
