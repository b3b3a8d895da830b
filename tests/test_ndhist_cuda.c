/*
 * The CUDA backend's N-dimensional histograms and colour conversion
 * against a CPU context, bit for bit, on device views: packed 3- and
 * 4-channel batches (the fast path, odd pixel counts for its tail),
 * masked and padded views (the general path), colour spaces fused into
 * the count, cells past shared memory (global counters), outliers and
 * accumulation. A part of test_ndhist, cuda run only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda_runtime_api.h>

#include "imghist.h"
#include "backend_suite.h"
#include "test_util.h"

static tu_rng rng;

static void *to_device(const void *h, size_t n)
{
    void *d = NULL;
    assert_int_equal(cudaMalloc(&d, n ? n : 1), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

/* One case: `count` images W x H of C channels, pitch `pitch`, masked or
 * not, counted on the CPU from host memory and on the GPU from device memory. */
static void nd_case(uint32_t W, uint32_t H, uint32_t C, size_t pitch, uint32_t count,
                    int masked, const imghist_ndaxes *ax, const char *what)
{
    imghist_ctx *cpu = bs_cpu, *gpu = bs_ctx;
    const size_t img_bytes = pitch * H;
    uint8_t *h = malloc(img_bytes * count), *m = malloc((size_t)W * H);
    assert_true(h && m);
    for (size_t i = 0; i < img_bytes * count; i++) {
        /* a few values repeat a lot, as in photographs */
        h[i] = (uint8_t)(tu_below(&rng, 4) == 0 ? 17 : tu_below(&rng, 256));
    }
    for (size_t i = 0; i < (size_t)W * H; i++) m[i] = (uint8_t)tu_below(&rng, 2);
    const size_t len = imghist_ndcounts_len(ax, IMGHIST_U8);
    assert_true(len > 0);
    uint64_t *want = malloc(len * count * 8), *got = malloc(len * count * 8);
    for (size_t i = 0; i < len * count; i++) want[i] = got[i] = tu_below(&rng, 1000);
    uint8_t *dh = to_device(h, img_bytes * count), *dm = to_device(m, (size_t)W * H);
    uint64_t *dc = to_device(got, len * count * 8);
    imghist_view hm = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
                       .height = H, .pitch = W, .channels = 1};
    imghist_view hv = {.data = h, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
                       .height = H, .pitch = pitch, .channels = C, .count = count,
                       .image_stride = (ptrdiff_t)img_bytes, .mask = masked ? &hm : NULL};
    imghist_view dmv = hm;
    dmv.data = dm;
    dmv.mem = IMGHIST_MEM_DEVICE;
    imghist_view dv = hv;
    dv.data = dh;
    dv.mem = IMGHIST_MEM_DEVICE;
    dv.mask = masked ? &dmv : NULL;
    const imghist_counts hc = {want, len * count, IMGHIST_MEM_HOST};
    const imghist_counts gc = {dc, len * count, IMGHIST_MEM_DEVICE};
    assert_int_equal(imghist_histogramdd(cpu, &hv, ax, &hc), IMGHIST_OK);
    if (imghist_histogramdd(gpu, &dv, ax, &gc) != IMGHIST_OK) {
        fail_msg("%s: %s", what, imghist_last_error(gpu));
    }
    /* device calls only queue work on the context's own stream */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(got, dc, len * count * 8, cudaMemcpyDeviceToHost), cudaSuccess);
    if (memcmp(got, want, len * count * 8) != 0) {
        fail_msg("%s: GPU and CPU counts differ (%ux%u, %u channels, %u images)", what, W, H,
                 C, count);
    }
    if (ax->space != IMGHIST_SPACE_NONE) {
        uint8_t *hout = malloc((size_t)W * H * 3 * count), *gout = malloc((size_t)W * H * 3 * count);
        uint8_t *dout = to_device(hout, (size_t)W * H * 3 * count);
        imghist_view ho = {.data = hout, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                           .width = W, .height = H, .pitch = (size_t)W * 3, .channels = 3,
                           .count = count, .image_stride = (ptrdiff_t)W * H * 3};
        imghist_view dov = ho;
        dov.data = dout;
        dov.mem = IMGHIST_MEM_DEVICE;
        hv.mask = dv.mask = NULL;
        assert_int_equal(imghist_cvt_color(cpu, &hv, &ho, ax->space), IMGHIST_OK);
        assert_int_equal(imghist_cvt_color(gpu, &dv, &dov, ax->space), IMGHIST_OK);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        assert_int_equal(cudaMemcpy(gout, dout, (size_t)W * H * 3 * count,
                                    cudaMemcpyDeviceToHost), cudaSuccess);
        assert_memory_equal(gout, hout, (size_t)W * H * 3 * count);
        cudaFree(dout);
        free(hout);
        free(gout);
    }
    cudaFree(dh);
    cudaFree(dm);
    cudaFree(dc);
    free(h);
    free(m);
    free(want);
    free(got);
}

static imghist_ndaxes axes3(uint32_t b0, uint32_t b1, uint32_t b2, imghist_space space,
                            uint32_t flags)
{
    imghist_ndaxes ax = {.dims = 3, .channel = {0, 1, 2}, .space = space};
    ax.spec[0] = (imghist_histspec){b0, 0, 256, flags};
    ax.spec[1] = (imghist_histspec){b1, 0, 256, 0};
    ax.spec[2] = (imghist_histspec){b2, 0, 256, 0};
    return ax;
}

static void test_nd_gpu_matches_cpu(void **state)
{
    (void)state;
    /* packed RGB, 8x8x8, a pixel count not a multiple of 16 */
    imghist_ndaxes ax = axes3(8, 8, 8, IMGHIST_SPACE_NONE, 0);
    nd_case(67, 13, 3, 67 * 3, 3, 0, &ax, "rgb 8x8x8");
    nd_case(64, 64, 4, 256, 2, 0, &ax, "rgba 8x8x8 (3 axes)");
    nd_case(64, 48, 3, 192, 3, 0, &ax, "packed rgb 8x8x8 (shifts)");
    nd_case(1001, 7, 3, 3003, 1, 0, &ax, "packed rgb, one image, a tail");
    imghist_ndaxes odd = axes3(5, 7, 3, IMGHIST_SPACE_NONE, 0);
    nd_case(64, 48, 3, 192, 3, 0, &odd, "packed rgb 5x7x3 (tables)");
    nd_case(64, 48, 4, 256, 2, 0, &odd, "packed rgba 5x7x3 (tables)");
    nd_case(67, 13, 3, 67 * 3 + 5, 2, 0, &ax, "padded rows");
    nd_case(67, 13, 3, 67 * 3, 2, 1, &ax, "masked");
    /* accumulate and outliers, a bin range that leaves samples out */
    imghist_ndaxes ao = axes3(5, 7, 3, IMGHIST_SPACE_NONE, IMGHIST_OUTLIERS | IMGHIST_ACCUMULATE);
    ao.spec[1] = (imghist_histspec){7, 20, 200, IMGHIST_OPENCV_BINS};
    nd_case(33, 9, 3, 99, 4, 0, &ao, "outliers, accumulate");
    /* four axes of RGBA, channels reordered and repeated */
    imghist_ndaxes a4 = {.dims = 4, .channel = {3, 1, 1, 0}};
    for (int d = 0; d < 4; d++) a4.spec[d] = (imghist_histspec){4 + d, 0, 256, 0};
    nd_case(40, 21, 4, 160, 2, 0, &a4, "4 axes");
    /* too many cells for shared memory: global counters */
    imghist_ndaxes big = axes3(64, 64, 64, IMGHIST_SPACE_NONE, 0);
    nd_case(129, 77, 3, 129 * 3, 2, 0, &big, "64^3 cells");
    nd_case(129, 77, 3, 129 * 3, 1, 1, &big, "64^3 cells, masked");
}

static void test_nd_gpu_colour_spaces(void **state)
{
    (void)state;
    static const imghist_space spaces[] = {IMGHIST_SPACE_BGR2HSV, IMGHIST_SPACE_RGB2HSV,
                                           IMGHIST_SPACE_BGR2HSV_FULL,
                                           IMGHIST_SPACE_RGB2HSV_FULL, IMGHIST_SPACE_BGR2LAB,
                                           IMGHIST_SPACE_RGB2LAB};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
        imghist_ndaxes hs = {.dims = 2, .channel = {0, 1}, .space = spaces[i]};
        hs.spec[0] = (imghist_histspec){30, 0, 180, IMGHIST_OPENCV_BINS};
        hs.spec[1] = (imghist_histspec){32, 0, 256, IMGHIST_OPENCV_BINS};
        nd_case(64, 48, 3, 192, 5, 0, &hs, "H-S 30x32");
        nd_case(31, 17, 4, 31 * 4, 3, 0, &hs, "H-S of BGRA");
        nd_case(31, 17, 3, 100, 2, 1, &hs, "H-S masked, padded");
        imghist_ndaxes lab = axes3(8, 8, 8, spaces[i], 0);
        nd_case(50, 50, 3, 150, 2, 0, &lab, "8x8x8 converted");
    }
}

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_ndhist_cuda"));
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_nd_gpu_matches_cpu),
    BS_CUDA_TEST(test_nd_gpu_colour_spaces),
};

const bs_part ndhist_cuda_part = BS_PART("ndhist cuda", tests, setup, NULL);
