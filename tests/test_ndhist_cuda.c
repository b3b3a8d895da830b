/*
 * The CUDA backend's N-dimensional histograms and colour conversion
 * against a CPU context, bit for bit, on device views: packed 3- and
 * 4-channel batches (the fast path, odd pixel counts for its tail),
 * masked and padded views (the general path), colour spaces fused into
 * the count, cells past shared memory (global counters), outliers and
 * accumulation; 16-bit and float batches (NaN, infinities, edges, explicit
 * bin edges). A part of test_ndhist, cuda run only.
 */
#include <math.h>
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

/* The images of h (`count` images W x H of C channels of type dt, pitch
 * `pitch`), masked or not, counted on the CPU from host memory and on the
 * GPU from device memory: the same counts, added to the same start. */
static void nd_compare(const uint8_t *h, imghist_dtype dt, uint32_t W, uint32_t H, uint32_t C,
                       size_t pitch, uint32_t count, int masked, const imghist_ndaxes *ax,
                       const char *what)
{
    imghist_ctx *cpu = bs_cpu, *gpu = bs_ctx;
    const size_t img_bytes = pitch * H;
    uint8_t *m = malloc((size_t)W * H);
    assert_non_null(m);
    for (size_t i = 0; i < (size_t)W * H; i++) m[i] = (uint8_t)tu_below(&rng, 2);
    const size_t len = imghist_ndcounts_len(ax, dt);
    assert_true(len > 0);
    uint64_t *want = malloc(len * count * 8), *got = malloc(len * count * 8);
    for (size_t i = 0; i < len * count; i++) want[i] = got[i] = tu_below(&rng, 1000);
    uint8_t *dh = to_device(h, img_bytes * count), *dm = to_device(m, (size_t)W * H);
    uint64_t *dc = to_device(got, len * count * 8);
    imghist_view hm = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
                       .height = H, .pitch = W, .channels = 1};
    imghist_view hv = {.data = (void *)h, .dtype = dt, .mem = IMGHIST_MEM_HOST, .width = W,
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
    cudaFree(dh);
    cudaFree(dm);
    cudaFree(dc);
    free(m);
    free(want);
    free(got);
}

/* One 8-bit case: nd_compare, and with a colour space the conversion of
 * the same images on both. */
static void nd_case(uint32_t W, uint32_t H, uint32_t C, size_t pitch, uint32_t count,
                    int masked, const imghist_ndaxes *ax, const char *what)
{
    const size_t img_bytes = pitch * H;
    uint8_t *h = malloc(img_bytes * count);
    assert_non_null(h);
    for (size_t i = 0; i < img_bytes * count; i++) {
        /* a few values repeat a lot, as in photographs */
        h[i] = (uint8_t)(tu_below(&rng, 4) == 0 ? 17 : tu_below(&rng, 256));
    }
    nd_compare(h, IMGHIST_U8, W, H, C, pitch, count, masked, ax, what);
    if (ax->space != IMGHIST_SPACE_NONE) {
        imghist_ctx *cpu = bs_cpu, *gpu = bs_ctx;
        const imghist_view hv = {.data = h, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                                 .width = W, .height = H, .pitch = pitch, .channels = C,
                                 .count = count, .image_stride = (ptrdiff_t)img_bytes};
        uint8_t *dh = to_device(h, img_bytes * count);
        imghist_view dv = hv;
        dv.data = dh;
        dv.mem = IMGHIST_MEM_DEVICE;
        uint8_t *hout = malloc((size_t)W * H * 3 * count), *gout = malloc((size_t)W * H * 3 * count);
        uint8_t *dout = to_device(hout, (size_t)W * H * 3 * count);
        imghist_view ho = {.data = hout, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                           .width = W, .height = H, .pitch = (size_t)W * 3, .channels = 3,
                           .count = count, .image_stride = (ptrdiff_t)W * H * 3};
        imghist_view dov = ho;
        dov.data = dout;
        dov.mem = IMGHIST_MEM_DEVICE;
        assert_int_equal(imghist_cvt_color(cpu, &hv, &ho, ax->space), IMGHIST_OK);
        assert_int_equal(imghist_cvt_color(gpu, &dv, &dov, ax->space), IMGHIST_OK);
        assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
        assert_int_equal(cudaMemcpy(gout, dout, (size_t)W * H * 3 * count,
                                    cudaMemcpyDeviceToHost), cudaSuccess);
        assert_memory_equal(gout, hout, (size_t)W * H * 3 * count);
        cudaFree(dout);
        cudaFree(dh);
        free(hout);
        free(gout);
    }
    free(h);
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

/* A 16-bit or float batch (values that repeat, sit on bin edges, or for
 * floats are NaN and infinite), through nd_compare. */
static void nd_wide_case(imghist_dtype dt, uint32_t W, uint32_t H, uint32_t C, size_t pitch,
                         uint32_t count, int masked, const imghist_ndaxes *ax,
                         const char *what)
{
    const size_t img_bytes = pitch * H;
    uint8_t *h = calloc(img_bytes * count, 1);
    assert_non_null(h);
    static const float special[] = {0.0f, -0.0f, 1.0f, 255.0f, 256.0f, 0.5f, -1.0f, 1e30f,
                                    NAN, INFINITY, -INFINITY, 100.0f};
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t y = 0; y < H; y++) {
            uint8_t *row = h + i * img_bytes + y * pitch;
            for (uint32_t x = 0; x < W * C; x++) {
                const uint32_t r = tu_below(&rng, 8);
                if (dt == IMGHIST_U16) {
                    const uint16_t v = (uint16_t)(r == 0 ? 4096 : r == 1 ? 65535
                                                  : r == 2 ? 0 : tu_below(&rng, 65536));
                    memcpy(row + 2 * (size_t)x, &v, 2);
                } else {
                    const float v = r < 2 ? special[tu_below(&rng, 12)]
                                          : (float)tu_below(&rng, 300000) / 1000.0f - 20.0f;
                    memcpy(row + 4 * (size_t)x, &v, 4);
                }
            }
        }
    }
    nd_compare(h, dt, W, H, C, pitch, count, masked, ax, what);
    free(h);
}

static void test_nd_gpu_wide_types(void **state)
{
    (void)state;
    static const double e0[] = {-5.0, 0.0, 0.5, 1.0, 100.0, 255.0, 256.0};
    static const double e16[] = {0.0, 1.0, 4096.0, 4097.0, 60000.0, 65535.0};
    for (int t = 0; t < 2; t++) {
        const imghist_dtype dt = t == 0 ? IMGHIST_U16 : IMGHIST_F32;
        const size_t ss = t == 0 ? 2 : 4;
        const double top = t == 0 ? 65536.0 : 256.0;
        /* uniform bins, outliers, accumulate, a range that leaves samples out */
        imghist_ndaxes ax = {.dims = 3, .channel = {0, 1, 2}};
        ax.spec[0] = (imghist_histspec){8, 0, top, IMGHIST_OUTLIERS | IMGHIST_ACCUMULATE};
        ax.spec[1] = (imghist_histspec){7, top / 10, top / 2, IMGHIST_CLOSED};
        ax.spec[2] = (imghist_histspec){5, 0, top, IMGHIST_OPENCV_BINS};
        nd_wide_case(dt, 67, 13, 3, 67 * 3 * ss, 3, 0, &ax, "3 axes, outliers, accumulate");
        nd_wide_case(dt, 31, 9, 4, 31 * 4 * ss + 8, 2, 1, &ax, "RGBA, padded, masked");
        nd_wide_case(dt, 1, 1, 3, 3 * ss, 300, 0, &ax, "300 images of 1x1");
        /* explicit edges on one axis, a repeated channel, one image */
        imghist_ndaxes ex = {.dims = 2, .channel = {1, 1}};
        ex.spec[0] = (imghist_histspec){t == 0 ? 5 : 6, 0, 0, IMGHIST_OUTLIERS};
        ex.edges[0] = t == 0 ? e16 : e0;
        ex.spec[1] = (imghist_histspec){30, 0, top, 0};
        nd_wide_case(dt, 129, 77, 2, 129 * 2 * ss, 1, 1, &ex, "edges, masked");
        /* cells past any shared memory */
        imghist_ndaxes big = {.dims = 3, .channel = {0, 1, 2}};
        for (int d = 0; d < 3; d++) big.spec[d] = (imghist_histspec){64, 0, top, 0};
        nd_wide_case(dt, 101, 33, 3, 101 * 3 * ss, 2, 0, &big, "64^3 cells");
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
    BS_CUDA_TEST(test_nd_gpu_wide_types),
};

const bs_part ndhist_cuda_part = BS_PART("ndhist cuda", tests, setup, NULL);
