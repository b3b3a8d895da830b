/*
 * The CUDA backend's back-projection against a CPU context on device
 * views, byte for byte, the destination's row and image padding included
 * (it must stay untouched): 8-bit pixels of 1 to 4 channels, colour spaces
 * fused in, 16-bit and float samples, uniform bins by both rules and
 * explicit edges, models in shared and in global memory, and the
 * adversarial corners: constant images, every value at and around bin
 * edges, 1x1 images and batches of them, odd widths and widths of
 * multiples of 32, padded rows, products that saturate, negative, zero,
 * half-way, infinite and NaN model values, NaN and infinite float samples.
 * A part of test_ndhist, cuda run only.
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

static size_t sample_size(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

static void *to_device(const void *h, size_t n)
{
    void *d = NULL;
    assert_int_equal(cudaMalloc(&d, n ? n : 1), cudaSuccess);
    assert_int_equal(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice), cudaSuccess);
    return d;
}

/* Float outputs equal bit for bit, but for NaNs of two different payloads
 * (an infinite model value times a zero scale: x86 and CUDA have different
 * default NaNs); integer outputs byte for byte. */
static int same_output(const uint8_t *a, const uint8_t *b, size_t n, imghist_dtype dt,
                       size_t *at)
{
    if (dt != IMGHIST_F32) {
        for (size_t i = 0; i < n; i++) {
            if (a[i] != b[i]) {
                *at = i;
                return 0;
            }
        }
        return 1;
    }
    for (size_t i = 0; i + 4 <= n; i += 4) {
        float x, y;
        memcpy(&x, a + i, 4);
        memcpy(&y, b + i, 4);
        if (memcmp(a + i, b + i, 4) != 0 && !(isnan(x) && isnan(y))) {
            *at = i;
            return 0;
        }
    }
    return 1;
}

/* Back-project `count` images (h: W x H of C channels of dt, rows `pitch`
 * bytes apart, images pitch * H apart) on both contexts into padded
 * destinations and compare them whole. */
static void bp_case(const void *h, imghist_dtype dt, uint32_t W, uint32_t H, uint32_t C,
                    size_t pitch, uint32_t count, const imghist_ndaxes *ax, const float *model,
                    double scale, const char *what)
{
    const size_t es = sample_size(dt);
    const size_t in_bytes = pitch * H * count;
    const size_t opitch = (W + 3) * es;          /* three samples of row padding */
    const size_t ostride = opitch * H + 8 * es;  /* and a gap between images */
    const size_t out_bytes = ostride * count;
    uint8_t *want = malloc(out_bytes), *got = malloc(out_bytes);
    assert_true(want && got);
    memset(want, 0xA5, out_bytes);
    void *din = to_device(h, in_bytes);
    uint8_t *dout = to_device(want, out_bytes);
    imghist_view hv = {.data = (void *)h, .dtype = dt, .mem = IMGHIST_MEM_HOST, .width = W,
                       .height = H, .pitch = pitch, .channels = C, .count = count,
                       .image_stride = (ptrdiff_t)(pitch * H)};
    imghist_view dv = hv;
    dv.data = din;
    dv.mem = IMGHIST_MEM_DEVICE;
    imghist_view ho = {.data = want, .dtype = dt, .mem = IMGHIST_MEM_HOST, .width = W,
                       .height = H, .pitch = opitch, .channels = 1, .count = count,
                       .image_stride = (ptrdiff_t)ostride};
    imghist_view dov = ho;
    dov.data = dout;
    dov.mem = IMGHIST_MEM_DEVICE;
    if (imghist_backproject(bs_cpu, &hv, ax, model, scale, &ho) != IMGHIST_OK) {
        fail_msg("%s: CPU: %s", what, imghist_last_error(bs_cpu));
    }
    if (imghist_backproject(bs_ctx, &dv, ax, model, scale, &dov) != IMGHIST_OK) {
        fail_msg("%s: GPU: %s", what, imghist_last_error(bs_ctx));
    }
    /* device calls only queue work on the context's own stream */
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(cudaMemcpy(got, dout, out_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    size_t at = 0;
    if (!same_output(got, want, out_bytes, dt, &at)) {
        fail_msg("%s: GPU and CPU differ at byte %zu (%ux%u, %u channels, %u images): "
                 "%u, want %u", what, at, W, H, C, count, got[at], want[at]);
    }
    cudaFree(din);
    cudaFree(dout);
    free(want);
    free(got);
}

/* A model of `cells` floats: random in [0, top), with the corner values
 * mixed in when `corners`. */
static float *model_of(size_t cells, float top, int corners)
{
    static const float odd[] = {0.0f, -0.0f, -3.0f, 0.5f, 1.5f, 2.5f, 254.5f, 255.5f,
                                256.0f, 1e30f, -1e30f, 65535.5f, INFINITY, -INFINITY};
    float *m = malloc(cells * sizeof *m);
    assert_non_null(m);
    for (size_t i = 0; i < cells; i++) {
        m[i] = (float)tu_below(&rng, 1u << 24) / (float)(1u << 24) * top;
        if (corners && tu_below(&rng, 4) == 0) {
            m[i] = odd[tu_below(&rng, sizeof odd / sizeof odd[0])];
        }
    }
    return m;
}

static uint8_t *bytes_of(size_t n, int kind)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: p[i] = (uint8_t)(tu_below(&rng, 4) == 0 ? 17 : tu_below(&rng, 256)); break;
        case 1: p[i] = 255; break;
        case 2: p[i] = 0; break;
        default: p[i] = (uint8_t)(i * 7 + i / 3); break; /* every value, at every offset */
        }
    }
    return p;
}

static imghist_ndaxes hs_axes(imghist_space space)
{
    imghist_ndaxes ax = {.dims = 2, .channel = {0, 1}, .space = space};
    ax.spec[0] = (imghist_histspec){30, 0, 180, IMGHIST_OPENCV_BINS};
    ax.spec[1] = (imghist_histspec){32, 0, 256, IMGHIST_OPENCV_BINS};
    return ax;
}

static void test_bp_gpu_u8(void **state)
{
    (void)state;
    static const double scales[] = {1.0, 0.5, 3.7, 255.0 / 1000.0, 1000.0, -1.0, 0.0};
    imghist_ndaxes hs = hs_axes(IMGHIST_SPACE_NONE);
    float *m = model_of(960, 300.0f, 1);
    for (int kind = 0; kind < 4; kind++) {
        uint8_t *img = bytes_of((67 * 3 + 5) * 13 * 3, kind);
        for (size_t s = 0; s < sizeof scales / sizeof scales[0]; s++) {
            bp_case(img, IMGHIST_U8, 67, 13, 3, 67 * 3 + 5, 3, &hs, m, scales[s],
                    "H-S 30x32, padded rows, a batch");
        }
        bp_case(img, IMGHIST_U8, 64, 4, 3, 192, 2, &hs, m, 1.0, "width 64");
        bp_case(img, IMGHIST_U8, 32, 3, 4, 128, 3, &hs, m, 1.0, "width 32, 4 channels");
        bp_case(img, IMGHIST_U8, 1, 1, 3, 3, 1, &hs, m, 2.0, "1x1");
        bp_case(img, IMGHIST_U8, 1, 1, 3, 3, 300, &hs, m, 2.0, "300 images of 1x1");
        bp_case(img, IMGHIST_U8, 33, 1, 3, 99, 5, &hs, m, 0.75, "rows of 33");
        free(img);
    }
    free(m);
    /* one channel, every value against 256, 32, 30 and 7 bins of both rules */
    uint8_t *ramp = bytes_of(256 * 9, 3);
    static const uint32_t bins[] = {256, 32, 30, 7, 1};
    for (size_t b = 0; b < sizeof bins / sizeof bins[0]; b++) {
        for (int rule = 0; rule < 2; rule++) {
            imghist_ndaxes one = {.dims = 1, .channel = {0}};
            one.spec[0] = (imghist_histspec){bins[b], rule ? 20 : 0, rule ? 180 : 256,
                                             rule ? IMGHIST_OPENCV_BINS : 0};
            float *mb = model_of(bins[b], 512.0f, 1);
            bp_case(ramp, IMGHIST_U8, 256, 9, 1, 256, 1, &one, mb, 1.0, "gray ramp");
            bp_case(ramp, IMGHIST_U8, 61, 7, 1, 64, 4, &one, mb, 0.5, "gray, odd width");
            free(mb);
        }
    }
    /* explicit edges, open and closed at the top, on two channels */
    static const double e0[] = {0, 50, 51, 200, 255}, e1[] = {0, 31.5, 32, 96, 128, 256};
    for (int closed = 0; closed < 2; closed++) {
        imghist_ndaxes ed = {.dims = 2, .channel = {1, 0}, .edges = {e0, e1}};
        ed.spec[0] = (imghist_histspec){4, 0, 1, closed ? IMGHIST_CLOSED : 0};
        ed.spec[1] = (imghist_histspec){5, 0, 1, 0};
        float *me = model_of(20, 255.0f, 1);
        uint8_t *img = bytes_of(45 * 11 * 2 * 2, 3);
        bp_case(img, IMGHIST_U8, 45, 11, 2, 90, 2, &ed, me, 1.0, "explicit edges");
        free(img);
        free(me);
    }
    /* four axes, channels repeated; then a model past shared memory */
    imghist_ndaxes a4 = {.dims = 4, .channel = {3, 1, 1, 0}};
    for (int d = 0; d < 4; d++) a4.spec[d] = (imghist_histspec){4 + d, 0, 256, 0};
    float *m4 = model_of(4 * 5 * 6 * 7, 100.0f, 1);
    uint8_t *rgba = bytes_of(40 * 21 * 4 * 2, 0);
    bp_case(rgba, IMGHIST_U8, 40, 21, 4, 160, 2, &a4, m4, 1.5, "4 axes");
    free(m4);
    imghist_ndaxes big = {.dims = 3, .channel = {0, 1, 2}};
    for (int d = 0; d < 3; d++) big.spec[d] = (imghist_histspec){64, 0, 256, 0};
    float *mbig = model_of(64 * 64 * 64, 255.0f, 1);
    bp_case(rgba, IMGHIST_U8, 40, 21, 4, 160, 2, &big, mbig, 1.0, "64^3 cells");
    bp_case(rgba, IMGHIST_U8, 53, 7, 3, 160, 2, &big, mbig, 1.0, "64^3 cells of RGB");
    free(mbig);
    free(rgba);
    free(ramp);
}

static void test_bp_gpu_colour_spaces(void **state)
{
    (void)state;
    static const imghist_space spaces[] = {IMGHIST_SPACE_BGR2HSV, IMGHIST_SPACE_RGB2HSV,
                                           IMGHIST_SPACE_BGR2HSV_FULL,
                                           IMGHIST_SPACE_RGB2HSV_FULL, IMGHIST_SPACE_BGR2LAB,
                                           IMGHIST_SPACE_RGB2LAB};
    float *m = model_of(960, 300.0f, 1);
    float *m3 = model_of(512, 300.0f, 1);
    uint8_t *img = bytes_of(101 * 4 * 17 * 3, 0), *ramp = bytes_of(256 * 3 * 64, 3);
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++) {
        imghist_ndaxes hs = hs_axes(spaces[i]);
        bp_case(img, IMGHIST_U8, 100, 17, 3, 303, 3, &hs, m, 1.0, "H-S of BGR, converted");
        bp_case(img, IMGHIST_U8, 101, 17, 4, 404, 2, &hs, m, 0.5, "H-S of BGRA, converted");
        bp_case(ramp, IMGHIST_U8, 256, 64, 3, 768, 1, &hs, m, 1.0, "H-S of a ramp");
        imghist_ndaxes c3 = {.dims = 3, .channel = {2, 0, 1}, .space = spaces[i]};
        for (int d = 0; d < 3; d++) c3.spec[d] = (imghist_histspec){8, 0, 256, 0};
        bp_case(img, IMGHIST_U8, 77, 9, 3, 240, 2, &c3, m3, 1.0, "8x8x8 converted");
    }
    free(img);
    free(ramp);
    free(m);
    free(m3);
}

static void test_bp_gpu_u16_f32(void **state)
{
    (void)state;
    /* 16-bit: tables of 65536 in global memory, products that saturate */
    const uint32_t W = 37, H = 11;
    uint16_t *u = malloc((size_t)(W + 2) * 2 * H * 3 * sizeof *u);
    assert_non_null(u);
    for (size_t i = 0; i < (size_t)(W + 2) * 2 * H * 3; i++) {
        u[i] = (uint16_t)(i % 5 == 0 ? (i * 4096) & 0xffff : tu_below(&rng, 65536));
    }
    imghist_ndaxes g = {.dims = 1, .channel = {0}};
    g.spec[0] = (imghist_histspec){16, 0, 65536, IMGHIST_OPENCV_BINS};
    float *m16 = model_of(16, 300.0f, 1);
    bp_case(u, IMGHIST_U16, W, H, 1, (W + 2) * 2, 3, &g, m16, 300.0, "u16 16 bins");
    bp_case(u, IMGHIST_U16, W, H, 1, (W + 2) * 2, 3, &g, m16, 1.0, "u16 16 bins, scale 1");
    imghist_ndaxes g2 = {.dims = 2, .channel = {1, 0}};
    g2.spec[0] = (imghist_histspec){100, 1000, 60000, 0};
    g2.spec[1] = (imghist_histspec){9, 0, 65536, IMGHIST_OPENCV_BINS};
    float *m2 = model_of(900, 70000.0f, 1);
    bp_case(u, IMGHIST_U16, W, H, 2, (W + 1) * 4, 3, &g2, m2, 1.0, "u16 two channels");
    free(m16);
    free(m2);
    free(u);
    /* float samples: both rules, explicit edges, NaN and infinities */
    static const float odd[] = {NAN, INFINITY, -INFINITY, 0.0f, 1.0f, 0.5f, -0.0f, 0.1f,
                                0.2f, 0.3f, 0.7f, 1e-40f, 0.99999994f};
    float *f = malloc((size_t)(W + 1) * 3 * H * 2 * sizeof *f);
    assert_non_null(f);
    for (size_t i = 0; i < (size_t)(W + 1) * 3 * H * 2; i++) {
        f[i] = tu_below(&rng, 3) == 0 ? odd[tu_below(&rng, sizeof odd / sizeof odd[0])]
                                      : (float)tu_below(&rng, 1u << 20) / (1u << 20) * 1.4f -
                                            0.2f;
    }
    float *mf = model_of(10 * 7, 5.0f, 1);
    const size_t fp = (W + 1) * 3 * sizeof(float);
    for (int rule = 0; rule < 3; rule++) {
        imghist_ndaxes fa = {.dims = 2, .channel = {0, 2}};
        const uint32_t fl = rule == 0 ? IMGHIST_OPENCV_BINS : rule == 1 ? 0 : IMGHIST_CLOSED;
        fa.spec[0] = (imghist_histspec){10, 0, 1, fl};
        fa.spec[1] = (imghist_histspec){7, 0.1, 0.8, fl};
        bp_case(f, IMGHIST_F32, W, H, 3, fp, 2, &fa, mf, 2.5, "float, uniform bins");
        bp_case(f, IMGHIST_F32, W, H, 3, fp, 2, &fa, mf, 0.0, "float, zero scale");
    }
    static const double fe0[] = {-0.1, 0, 0.1, 0.2, 0.25, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0};
    static const double fe1[] = {0, 0.3, 0.30000001, 0.5, 0.6, 0.7, 0.8, 1};
    imghist_ndaxes fe = {.dims = 2, .channel = {1, 0}, .edges = {fe0, fe1}};
    fe.spec[0] = (imghist_histspec){10, 0, 1, IMGHIST_CLOSED};
    fe.spec[1] = (imghist_histspec){7, 0, 1, 0};
    bp_case(f, IMGHIST_F32, W, H, 3, fp, 2, &fe, mf, -1.25, "float, explicit edges");
    imghist_ndaxes one = {.dims = 1, .channel = {0}};
    one.spec[0] = (imghist_histspec){10, 0, 1, IMGHIST_OPENCV_BINS};
    bp_case(f, IMGHIST_F32, 1, 1, 1, 4, 5, &one, mf, 1.0, "float 1x1");
    free(mf);
    free(f);
}

static void test_bp_gpu_refusals(void **state)
{
    (void)state;
    uint8_t *d = NULL;
    assert_int_equal(cudaMalloc((void **)&d, 64), cudaSuccess);
    uint8_t host[16];
    const float model[2] = {1, 2};
    imghist_ndaxes ax = {.dims = 1, .channel = {0}};
    ax.spec[0] = (imghist_histspec){2, 0, 256, 0};
    imghist_view dv = {.data = d, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE, .width = 4,
                       .height = 4, .pitch = 4, .channels = 1};
    imghist_view hv = dv;
    hv.data = host;
    hv.mem = IMGHIST_MEM_HOST;
    /* one memory for both views; a device view on the CPU backend */
    assert_int_equal(imghist_backproject(bs_ctx, &dv, &ax, model, 1.0, &hv),
                     IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_backproject(bs_cpu, &dv, &ax, model, 1.0, &dv),
                     IMGHIST_E_UNSUPPORTED);
    assert_int_equal(imghist_backproject(bs_ctx, &dv, &ax, NULL, 1.0, &dv),
                     IMGHIST_E_INVALID_ARG);
    cudaFree(d);
}

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_backproject_cuda"));
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_bp_gpu_u8),
    BS_CUDA_TEST(test_bp_gpu_colour_spaces),
    BS_CUDA_TEST(test_bp_gpu_u16_f32),
    BS_CUDA_TEST(test_bp_gpu_refusals),
};

const bs_part backproject_cuda_part = BS_PART("backproject cuda", tests, setup, NULL);
