/*
 * The CUDA backend's wide histograms (U8/U16/F32, any bins, channels, masks,
 * outliers, accumulate) and imghist_range against the CPU backend, bit for
 * bit, on device and host views and counts: every type x binning x channel
 * count x mask x flags, pitched and unaligned views, NaN/inf, values on and
 * one ulp around the edges, constant images whose counters wrap the 16-bit
 * shared counters, 1x1 images. Exits 77 (skipped) when there is no usable GPU.
 * IMGHIST_TEST_QUICK=1: a random eighth of the grid (for compute-sanitizer).
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
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
#include "imghist_experimental.h"
#include "suite_util.h"
#include "test_util.h"
#include "views.h"

static imghist_ctx *gpu, *cpu;
static tu_rng rng;
static int quick;

static size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

/* The GPU's histograms of n device images into *out: with strided, a view
 * of the n images `stride` bytes from dv[0] (its mask dm[0], one for all
 * where mask_stride is 0, else one an image mask_stride apart), else the
 * list dv (each image with its dm); masks only when masked. */
static void gpu_batch(int strided, int masked, const imghist_view *dv, const imghist_view *dm,
                      size_t n, ptrdiff_t stride, ptrdiff_t mask_stride,
                      const imghist_histspec *spec, const imghist_counts *out)
{
    if (strided) {
        imghist_view mt;
        const imghist_view t = masked ? vw_tensor_masked(dv[0], n, stride, dm[0],
                                                         mask_stride == 0 ? 1 : n, mask_stride,
                                                         &mt)
                                      : vw_tensor(dv[0], n, stride);
        IH_OK(gpu, imghist_histogram(gpu, &t, spec, out));
    } else {
        imghist_view *l = malloc(n * sizeof *l);
        assert_non_null(l);
        vw_list_masked(l, dv, masked ? dm : NULL, n);
        IH_OK(gpu, imghist_histogram_list(gpu, l, n, spec, out));
        free(l);
    }
}

/* ---- the specs of the grid ---- */

#define N_SPECS 6
static const char *spec_name[N_SPECS] = {"natural", "shift", "odd", "tiny", "1 bin", "2^20 bins"};

static imghist_histspec spec_for(imghist_dtype t, int k)
{
    imghist_histspec s = {0, 0, 0, 0};
    switch (t) {
    case IMGHIST_U8: {
        const imghist_histspec v[N_SPECS] = {{0, 0, 0, 0},      {64, 0, 256, 0},
                                             {7, 3.5, 200.25, 0}, {1, 100, 101, 0},
                                             {1, 0, 1000, 0},    {1u << 20, 0, 256, 0}};
        s = v[k];
        break;
    }
    case IMGHIST_U16: {
        const imghist_histspec v[N_SPECS] = {{0, 0, 0, 0},           {4096, 0, 65536, 0},
                                             {1000, -3.7, 70000.2, 0}, {3, 1000, 1003, 0},
                                             {1, 0, 65536, 0},        {1u << 20, 0, 65536, 0}};
        s = v[k];
        break;
    }
    default: {
        const imghist_histspec v[N_SPECS] = {{10000, 0, 1, 0},      {256, 0, 256, 0},
                                             {777, -2.5, 3.25, 0},  {5, 1, 1 + 1e-5, 0},
                                             {1, 0, 1, 0},          {1u << 20, -1, 1, 0}};
        s = v[k];
        break;
    }
    }
    return s;
}

/* Bin edge i of a spec, as binning.h computes it. */
static double edge(const imghist_histspec *s, uint32_t bins, uint32_t i)
{
    if (i >= bins) {
        return s->hi;
    }
    const double w = (s->hi - s->lo) / bins;
    volatile double step = (double)i * w;
    return s->lo + step;
}

/* ---- test images: host and device copies of one pitched view ---- */

typedef struct {
    uint8_t *host, *dbase;
    imghist_view hv, dv;
    size_t bytes;
} img_t;

/* A value for sample i: random over a span a little wider than the spec's
 * range, values on and one ulp around edges, and specials. */
static void put_sample(imghist_dtype t, uint8_t *p, const imghist_histspec *s, uint32_t bins,
                       int constant)
{
    const uint32_t r = tu_below(&rng, 16);
    if (s == NULL || s->bins == 0) {
        bins = 0; /* the natural binning: the type's whole range */
    }
    double lo = bins == 0 ? 0 : s->lo, hi = bins == 0 ? (t == IMGHIST_U8 ? 256 : 65536) : s->hi;
    if (constant) {
        double c = lo + (hi - lo) * 0.37;
        if (t == IMGHIST_F32) {
            const float f = (float)c;
            memcpy(p, &f, 4);
        } else if (t == IMGHIST_U16) {
            const uint16_t u = (uint16_t)(c < 0 ? 0 : c > 65535 ? 65535 : c);
            memcpy(p, &u, 2);
        } else {
            *p = (uint8_t)(c < 0 ? 0 : c > 255 ? 255 : c);
        }
        return;
    }
    double v;
    if (r < 5 && bins > 0) { /* on or next to an edge */
        const uint32_t i = tu_below(&rng, bins + 1);
        v = edge(s, bins, i);
    } else {
        const double span = hi - lo;
        v = lo - 0.1 * span + 1.2 * span * (double)(tu_next(&rng) >> 11) * 0x1p-53;
    }
    if (t == IMGHIST_F32) {
        float f = v > FLT_MAX ? INFINITY : v < -FLT_MAX ? -INFINITY : (float)v;
        if (r == 1) f = nextafterf(f, INFINITY);
        if (r == 2) f = nextafterf(f, -INFINITY);
        if (r == 5) f = NAN;
        if (r == 6) f = tu_below(&rng, 2) ? INFINITY : -INFINITY;
        if (r == 7) f = (float)hi; /* the closed bin's value */
        if (r == 8) f = -0.0f;
        memcpy(p, &f, 4);
        return;
    }
    if (r == 1) v = ceil(v);
    else if (r == 2) v = floor(v);
    else if (r == 3) v = floor(v) - 1;
    if (r >= 9 && r < 12) { /* anything the type holds */
        v = (double)(tu_next(&rng) >> 40);
    }
    const double maxv = t == IMGHIST_U8 ? 255 : 65535;
    v = v < 0 ? 0 : v > maxv ? maxv : floor(v);
    if (t == IMGHIST_U16) {
        const uint16_t u = (uint16_t)v;
        memcpy(p, &u, 2);
    } else {
        *p = (uint8_t)v;
    }
}

enum fill { FILL_MIXED, FILL_CONSTANT, FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE };

/* w x h x ch samples of t at device offset `offset` (bytes) with `pad` bytes of
 * padding per row. */
static img_t make_image(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t pad,
                        size_t offset, const imghist_histspec *s, uint32_t bins, enum fill f)
{
    img_t im;
    memset(&im, 0, sizeof im);
    const size_t row = (size_t)w * ch * dsize(t);
    const size_t pitch = row + pad;
    im.bytes = offset + pitch * h;
    im.host = malloc(offset + pitch * h);
    assert_non_null(im.host);
    memset(im.host, 0xfd, offset + pitch * h);
    for (uint32_t y = 0; y < h; y++) {
        uint8_t *rp = im.host + offset + (size_t)y * pitch;
        for (size_t i = 0; i < (size_t)w * ch; i++) {
            if (f == FILL_MASK_RANDOM) rp[i] = tu_below(&rng, 3) == 0 ? 0 : (uint8_t)(1 + tu_below(&rng, 255));
            else if (f == FILL_MASK_ZERO) rp[i] = 0;
            else if (f == FILL_MASK_ONE) rp[i] = 1;
            else put_sample(t, rp + i * dsize(t), s, bins, f == FILL_CONSTANT);
        }
    }
    CUDA_OK(cudaMalloc((void **)&im.dbase, im.bytes));
    CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
    /* A copy from pageable memory may still be in flight when cudaMemcpy
     * returns, and the context's stream does not wait for the legacy one. */
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view hv = {.data = im.host + offset, .dtype = t, .mem = IMGHIST_MEM_HOST,
        .width = w, .height = h, .pitch = pitch, .channels = ch};
    im.hv = hv;
    im.dv = hv;
    im.dv.data = im.dbase + offset;
    im.dv.mem = IMGHIST_MEM_DEVICE;
    return im;
}

static void free_image(img_t *im)
{
    free(im->host);
    CUDA_OK(cudaFree(im->dbase));
}

static void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize((cudaStream_t)s));
}

/* ---- one comparison ---- */

enum where { DEV_DEV, HOST_HOST, DEV_HOST, HOST_DEV };
static const char *where_name[] = {"device view, device counts", "host view, host counts",
                                   "device view, host counts", "host view, device counts"};

/* The GPU against the CPU on one image (and mask) with one spec. */
static void compare(const img_t *im, const img_t *mask, const imghist_histspec *spec,
                    enum where wh, const char *what)
{
    const imghist_view *src = wh == DEV_DEV || wh == DEV_HOST ? &im->dv : &im->hv;
    const imghist_view *m = mask == NULL ? NULL
                            : (wh == DEV_DEV || wh == DEV_HOST ? &mask->dv : &mask->hv);
    const size_t len = imghist_counts_len(spec, im->hv.dtype, im->hv.channels);
    assert_true(len > 0);
    uint64_t *want = malloc(len * 8), *got = malloc(len * 8);
    assert_non_null(want);
    assert_non_null(got);
    /* Accumulate: both start from the same random counts. */
    for (size_t i = 0; i < len; i++) {
        want[i] = (spec->flags & IMGHIST_ACCUMULATE) ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
    }
    memcpy(got, want, len * 8);
    const imghist_counts cc = {want, len, IMGHIST_MEM_HOST};
    const imghist_view chv = vw_masked(im->hv, mask != NULL ? &mask->hv : NULL);
    IH_OK(cpu, imghist_histogram(cpu, &chv, spec, &cc));
    const imghist_view gsv = vw_masked(*src, m);
    const int dev_counts = wh == DEV_DEV || wh == HOST_DEV;
    uint64_t *d = NULL;
    if (dev_counts) {
        CUDA_OK(cudaMalloc((void **)&d, len * 8));
        CUDA_OK(cudaMemcpy(d, got, len * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        const imghist_counts gc = {d, len, IMGHIST_MEM_DEVICE};
        IH_OK(gpu, imghist_histogram(gpu, &gsv, spec, &gc));
        gpu_sync();
        CUDA_OK(cudaMemcpy(got, d, len * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(d));
    } else {
        const imghist_counts gc = {got, len, IMGHIST_MEM_HOST};
        IH_OK(gpu, imghist_histogram(gpu, &gsv, spec, &gc));
        gpu_sync();
    }
    for (size_t i = 0; i < len; i++) {
        if (got[i] != want[i]) {
            fail_msg("%s (%s; %s, %ux%u x%u ch, bins %u [%g, %g) flags %u, mask %s): counter %zu "
                     "of %zu: GPU %llu, CPU %llu",
                     what, where_name[wh],
                     im->hv.dtype == IMGHIST_U8 ? "u8" : im->hv.dtype == IMGHIST_U16 ? "u16" : "f32",
                     im->hv.width, im->hv.height, im->hv.channels, spec->bins, spec->lo, spec->hi,
                     spec->flags, mask != NULL ? "yes" : "no", i, len,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    free(want);
    free(got);
}

/* An image with a mask, s fresh or (at random) accumulated: device view into
 * device and host counts, and host views (staged: packed, the mask's rows
 * after them); the comparisons made. */
static unsigned compare_masked(const img_t *im, const img_t *m, const imghist_histspec *s,
                               const char *what)
{
    imghist_histspec c = *s;
    c.flags = tu_below(&rng, 2) ? IMGHIST_ACCUMULATE : 0;
    compare(im, m, &c, DEV_DEV, what);
    compare(im, m, &c, DEV_HOST, what);
    compare(im, m, &c, HOST_HOST, what);
    return 3;
}

/* ---- the grid ---- */

static void test_grid(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    const uint32_t chans[3] = {1, 3, 4};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (int ci = 0; ci < 3; ci++) {
                const imghist_dtype t = types[ti];
                imghist_histspec base = spec_for(t, k);
                const uint32_t bins = (uint32_t)imghist_bins(&base, t);
                assert_true(bins > 0);
                const uint32_t w = 37 + tu_below(&rng, 60), h = 3 + tu_below(&rng, 40);
                const size_t pad = tu_below(&rng, 3) * 16 + dsize(t) * tu_below(&rng, 4);
                img_t im = make_image(t, w, h, chans[ci], pad, 16 * tu_below(&rng, 3) + dsize(t),
                                      &base, bins, FILL_MIXED);
                img_t mr = make_image(IMGHIST_U8, w, h, 1, tu_below(&rng, 9), tu_below(&rng, 16),
                                      NULL, 0, FILL_MASK_RANDOM);
                img_t mz = make_image(IMGHIST_U8, w, h, 1, 0, 3, NULL, 0, FILL_MASK_ZERO);
                for (int mi = 0; mi < 3; mi++) {
                    for (int fl = 0; fl < 4; fl++) {
                        for (int wh = 0; wh < 4; wh++) {
                            /* every mode for no mask, random modes otherwise */
                            if (quick && tu_below(&rng, 8) != 0) continue;
                            if (mi > 0 && wh != (int)tu_below(&rng, 4) && wh > 1) continue;
                            imghist_histspec s = base;
                            s.flags = (fl & 1 ? IMGHIST_OUTLIERS : 0) |
                                      (fl & 2 ? IMGHIST_ACCUMULATE : 0);
                            if (bins > 0 && base.bins > 0 && tu_below(&rng, 3) == 0) {
                                s.flags |= IMGHIST_CLOSED;
                            }
                            char what[96];
                            snprintf(what, sizeof what, "grid: %s", spec_name[k]);
                            compare(&im, mi == 0 ? NULL : mi == 1 ? &mr : &mz, &s,
                                    (enum where)wh, what);
                            cases++;
                        }
                    }
                }
                free_image(&im);
                free_image(&mr);
                free_image(&mz);
            }
        }
    }
    printf("grid: %u comparisons\n", cases);
}

/* Packed, 16-byte aligned views without a mask (the lean kernel's flat
 * runs, one channel or 2-4 interleaved, and the row kernels for the other
 * kinds), large enough for whole chunks, with odd row lengths and a partial
 * last granule. */
static void test_flat(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (uint32_t ch = 1; ch <= 4; ch++) {
                if (ch > 1 && quick && tu_below(&rng, 3) != 0) continue;
                const imghist_dtype t = types[ti];
                imghist_histspec s = spec_for(t, k);
                const uint32_t bins = (uint32_t)imghist_bins(&s, t);
                const uint32_t w = (quick ? 301 : 1001) + 2 * tu_below(&rng, 40);
                const uint32_t h = k % 3 == 0 ? 1 : 17 + tu_below(&rng, quick ? 40 : 300);
                for (int f = 0; f < 2; f++) {
                    img_t im = make_image(t, w, h, ch, 0, 16 * tu_below(&rng, 2), &s, bins,
                                          f == 0 ? FILL_MIXED : FILL_CONSTANT);
                    for (int fl = 0; fl < 2; fl++) {
                        imghist_histspec c = s;
                        c.flags =
                            fl ? IMGHIST_OUTLIERS : (tu_below(&rng, 2) ? IMGHIST_ACCUMULATE : 0);
                        compare(&im, NULL, &c, DEV_DEV, ch > 1 ? "flat channels" : "flat");
                        cases++;
                    }
                    free_image(&im);
                }
            }
        }
    }
    printf("flat: %u comparisons\n", cases);
}

/* Odd base addresses (U16/F32 rows not on a sample boundary: the byte path),
 * odd widths and pitches, every 16-byte phase. */
static void test_unaligned(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    for (int ti = 0; ti < 3; ti++) {
        for (size_t off = 0; off < 16; off += quick ? 5 : 1) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, 2);
            s.flags = IMGHIST_OUTLIERS;
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t ch = 1 + tu_below(&rng, 4);
            img_t im = make_image(t, 1 + tu_below(&rng, 200), 1 + tu_below(&rng, 30), ch,
                                  dsize(t) * tu_below(&rng, 9), off, &s, bins, FILL_MIXED);
            img_t m = make_image(IMGHIST_U8, im.hv.width, im.hv.height, 1, tu_below(&rng, 5), off,
                                 NULL, 0, FILL_MASK_RANDOM);
            compare(&im, NULL, &s, DEV_DEV, "unaligned");
            compare(&im, &m, &s, DEV_HOST, "unaligned, masked");
            compare(&im, NULL, &s, HOST_HOST, "unaligned host");
            free_image(&im);
            free_image(&m);
        }
    }
}

/* 1x1 images, one row, one column. */
static void test_tiny_shapes(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    const uint32_t shapes[4][2] = {{1, 1}, {1, 77}, {999, 1}, {2, 2}};
    for (int ti = 0; ti < 3; ti++) {
        for (int sh = 0; sh < 4; sh++) {
            imghist_histspec s = spec_for(types[ti], 2);
            s.flags = IMGHIST_OUTLIERS | IMGHIST_CLOSED;
            const uint32_t bins = (uint32_t)imghist_bins(&s, types[ti]);
            img_t im = make_image(types[ti], shapes[sh][0], shapes[sh][1], 1 + sh, sh * 4, sh,
                                  &s, bins, FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "tiny");
            compare(&im, NULL, &s, HOST_HOST, "tiny");
            free_image(&im);
        }
    }
}

/* Every float edge of a spec, and the floats next to it, in one image: with
 * outlier counters (the general kernel) and without (a packed device image:
 * the lean kernel, whose F32 bins come from the edge nearest the estimate).
 * [1000, 1001) puts the estimate's error near its bound (lo * inv = 10^6),
 * [10^6, 10^6 + 1) past it (no usable estimate). */
static void test_edges_exact(void **state)
{
    (void)state;
    const imghist_histspec specs[] = {{10000, 0, 1, 0},      {777, -2.5, 3.25, IMGHIST_CLOSED},
                                      {3, 0.1, 0.7, 0},      {1000, -1e30, 1e30, IMGHIST_CLOSED},
                                      {5, 1, 1 + 1e-5, 0},   {4096, 0, 4096, IMGHIST_CLOSED},
                                      {1000, -3.7, 70000.2, 0}, {1000, 1000, 1001, 0},
                                      {10000, 1e6, 1e6 + 1, IMGHIST_CLOSED}};
    for (size_t k = 0; k < 2 * (sizeof specs / sizeof specs[0]); k++) {
        for (int ti = 0; ti < 2; ti++) {
            const imghist_dtype t = ti == 0 ? IMGHIST_F32 : IMGHIST_U16;
            imghist_histspec s = specs[k / 2];
            if (k % 2 == 0) {
                s.flags |= IMGHIST_OUTLIERS;
            }
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t w = (bins + 1) * 5;
            img_t im = make_image(t, w, 1, 1, 0, 0, &s, bins, FILL_MIXED);
            uint8_t *row = im.host;
            for (uint32_t i = 0; i <= bins; i++) {
                const double e = edge(&s, bins, i);
                for (int d = 0; d < 5; d++) {
                    if (t == IMGHIST_F32) {
                        float f = (float)e;
                        if (d == 1) f = nextafterf(f, INFINITY);
                        if (d == 2) f = nextafterf(f, -INFINITY);
                        if (d == 3) f = nextafterf(nextafterf(f, INFINITY), INFINITY);
                        if (d == 4) f = nextafterf(nextafterf(f, -INFINITY), -INFINITY);
                        if (d == 4 && e == 0) f = -0.0f; /* the table's -0 against v - e */
                        memcpy(row + ((size_t)i * 5 + d) * 4, &f, 4);
                    } else {
                        double v = d == 0 ? floor(e) : d == 1 ? ceil(e) : d == 2 ? floor(e) - 1
                                 : d == 3 ? ceil(e) + 1 : e;
                        v = v < 0 ? 0 : v > 65535 ? 65535 : floor(v);
                        const uint16_t u = (uint16_t)v;
                        memcpy(row + ((size_t)i * 5 + d) * 2, &u, 2);
                    }
                }
            }
            CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize());
            compare(&im, NULL, &s, DEV_DEV, "edges");
            compare(&im, NULL, &s, HOST_HOST, "edges");
            free_image(&im);
        }
    }
}

/* Constant images and two-value images large enough that a block's 16-bit
 * shared counters wrap many times (65536 bins and more), plus uniform data
 * through every store. */
static void test_large_wraps(void **state)
{
    (void)state;
    const uint32_t w = quick ? 1024 : 4096, h = quick ? 512 : 2048;
    const uint16_t values[][2] = {{12345, 12345}, {4000, 4000}, {4000, 4001}, {0, 65535},
                                  {64, 128}};
    for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
        img_t im = make_image(IMGHIST_U16, w, h, 1, 0, 0, NULL, 0, FILL_CONSTANT);
        uint16_t *p = (uint16_t *)im.host;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            p[i] = values[k][(i / 7) & 1];
        }
        CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        const imghist_histspec specs[] = {{0, 0, 0, 0}, {0, 0, 0, IMGHIST_OUTLIERS},
                                          {4096, 0, 65536, 0}, {1u << 20, 0, 65536, 0}};
        for (size_t j = 0; j < sizeof specs / sizeof specs[0]; j++) {
            compare(&im, NULL, &specs[j], DEV_DEV, "large constant");
        }
        free_image(&im);
    }
    /* Uniform 16-bit and float data, and 4 channels of 65536 bins (global store). */
    imghist_histspec s = {0, 0, 0, 0};
    img_t im = make_image(IMGHIST_U16, w, h / 4, 4, 32, 0, &s, 65536, FILL_MIXED);
    compare(&im, NULL, &s, DEV_DEV, "large 4 channels");
    s.flags = IMGHIST_OUTLIERS;
    compare(&im, NULL, &s, HOST_HOST, "large 4 channels");
    free_image(&im);
    imghist_histspec f = {10000, 0, 1, IMGHIST_OUTLIERS};
    im = make_image(IMGHIST_F32, w, h, 1, 0, 0, &f, 10000, FILL_MIXED);
    compare(&im, NULL, &f, DEV_DEV, "large float");
    f.bins = 1u << 24;
    compare(&im, NULL, &f, DEV_DEV, "large float, 2^24 bins");
    free_image(&im);
}

/* Sample i of a 16-bit image of pattern pat (i counted from the image's
 * start, where its chunks start): 0-9 and 12-15 test_split_layouts' (patterns
 * 0-5: the sampled granules' parity), 10 a constant, 11 two values in runs
 * of 7 (test_s16_batches). */
static uint16_t s16_sample(int pat, size_t i)
{
    const uint32_t par = pat < 3 ? 0 : 1;
    const int sampled = (i * 2) % 65536 < 16384;
    if (pat == 10) return 12345;
    if (pat == 11) return (uint16_t)(4000 + ((i / 7) & 1));
    if (pat == 12) { /* a band, 1 sample in 256 far off, everywhere */
        return (uint16_t)(tu_below(&rng, 256) == 0 ? 40000 + tu_below(&rng, 25000)
                                                   : 1000 + tu_below(&rng, 16));
    }
    if (pat == 13) { /* 8 values x64, 1 in 200 odd anywhere */
        return (uint16_t)(tu_below(&rng, 200) == 0 ? 2 * tu_below(&rng, 32768) + 1
                                                   : 64 * tu_below(&rng, 8));
    }
    if (pat == 15) { /* a wide band, 1 in 256 elsewhere: too wide for a split layout */
        return (uint16_t)(tu_below(&rng, 256) == 0 ? 60000 : 20000 + tu_below(&rng, 24000));
    }
    if (pat == 14) { /* a wide band, 1 in 40 elsewhere: too many for a split layout */
        return (uint16_t)(tu_below(&rng, 40) == 0 ? tu_below(&rng, 65536)
                                                  : 20000 + tu_below(&rng, 24000));
    }
    if (pat == 2 || pat == 5) return (uint16_t)(64 * (uint32_t)(tu_next(&rng) & 7) + par);
    if (pat == 8) return (uint16_t)(1000 + (uint32_t)(tu_next(&rng) & 15));
    if (pat == 9) return (uint16_t)(tu_next(&rng) & 0xfff);
    if (pat >= 6) {
        return (uint16_t)(sampled ? 20000 + tu_below(&rng, 2000)
                          : pat == 6 && i % 97 == 0 ? tu_below(&rng, 65536)
                                                    : 50001);
    }
    if (sampled) return (uint16_t)(2 * tu_below(&rng, 32768) + par);
    if (pat % 3 == 0) {
        return (uint16_t)(i % 97 == 0 ? 2 * tu_below(&rng, 32768) + (par ^ 1) : 12344 + (par ^ 1));
    }
    return (uint16_t)(40000 + (par ^ 1));
}

/*
 * The natural 16-bit histogram's split layouts (hist_wide.cu): a block takes
 * one when the granules it samples (the first 16 KiB of each 64 KiB chunk it
 * counts) hold values of one parity only (patterns 0-5), or values within
 * 32768 of their mean (6-9). Here those do, and the rest of every chunk holds
 * values outside that set, so that such blocks count those too: through the
 * per-sample path (a value every 97 samples breaks the warp's one-value
 * vote; in 6 that value is uniform over all 65536, so that the window's
 * edges are crossed) and through the vote (one value throughout), each more
 * than 65536 times a block in the full run of the 4097-wide image on a
 * 132-SM GPU (one block per SM), so that their 16-bit halves wrap. The
 * widths are odd: the run ends in a partial granule. Also data of one set
 * only: 8 values, multiples of 64, and those plus 1; 16 values from 1000;
 * 12-bit data. And data whose sampled granules hold values outside P
 * (up to 64 of 1024 such granules take a split layout where the
 * shared layout's adds would queue on few words): a band of 16 values with
 * 1 sample in 256 elsewhere (hot pixels: the window), 8 values x64 with 1
 * in 200 odd anywhere (the parity), and for the shared layout a wide band
 * with 1 in 40 elsewhere (too many) and with 1 in 256 elsewhere (not
 * crowded).
 */
static void split_layouts_of(uint32_t w, uint32_t h)
{
    const imghist_histspec specs[] = {{0, 0, 0, 0}, {0, 0, 0, IMGHIST_ACCUMULATE}};
    static const char *const names[16] = {
        "parity 0, other parity sample by sample", "parity 0, other parity one value",
        "8 values x64",                            "parity 1, other parity sample by sample",
        "parity 1, other parity one value",        "8 values x64 + 1",
        "window, others sample by sample",         "window, others one value",
        "16 values from 1000",                     "12-bit data",
        NULL,                                      NULL,
        "band, 1 in 256 elsewhere",                "8 values x64, 1 in 200 odd",
        "wide band, 1 in 40 elsewhere",            "wide band, 1 in 256 elsewhere"};
    for (int pat = 0; pat < 16; pat++) {
        if (pat == 10 || pat == 11) continue; /* test_s16_batches' */
        img_t im = make_image(IMGHIST_U16, w, h, 1, 0, 0, NULL, 0, FILL_CONSTANT);
        uint16_t *p = (uint16_t *)im.host;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            p[i] = s16_sample(pat, i);
        }
        CUDA_OK(cudaMemcpy(im.dbase, im.host, im.bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        char what[96];
        snprintf(what, sizeof what, "split layout, pattern %d (%s)", pat, names[pat]);
        for (size_t j = 0; j < sizeof specs / sizeof specs[0]; j++) {
            compare(&im, NULL, &specs[j], DEV_DEV, what);
        }
        free_image(&im);
    }
}

static void test_split_layouts(void **state)
{
    (void)state;
    /* and one row fewer: the last, partial chunk of 4096 granules (767 or
     * 511 granules) then ends in a warp with fewer than 32 lanes in the
     * loop, which the split walk's votes must not wait for */
    const uint32_t h = quick ? 2048 : 8192;
    split_layouts_of(4097, h);
    split_layouts_of(4097, h - 1);
}

/*
 * Batches of 16-bit images of over 2^20 samples into 65536 counters
 * each: the S16 batch kernels, a few blocks an image (fewer
 * as the batch grows: with 26 images a block counts about 200000 samples,
 * so that its 16-bit halves wrap on the constant and two-value images).
 * Image i takes pattern i mod 12 (s16_sample: the split layouts and their
 * other values, sample by sample and by the vote). A tensor (strided), the
 * same as views, and as views out of order (the batch kernels on the
 * views' pointers); masks in step with the samples or not (the flat masked
 * walk, or the general one a launch an image);
 * outlier counters; a shift binning that is not one bin per value; device
 * and host counts; against the CPU image by image. With more images than
 * SMs of fewer than 65536 samples, a block an image stores its counters
 * instead of adding them to zeroed ones.
 */
static void s16_batches(size_t n, uint32_t w, uint32_t h)
{
    const size_t row = (size_t)w * 2;
    const size_t img = (row * h + 15) / 16 * 16 + 16;
    /* masks as packed as the images, w * h bytes apart (out of step with
     * the samples' 8-byte groups: the general walk, a launch an image) or
     * on 16-byte boundaries (the flat masked walk, one launch) */
    const size_t mask_at[3] = {0, (size_t)w * h, ((size_t)w * h + 15) / 16 * 16};
    const size_t mbytes = mask_at[2] * n;
    uint8_t *host = malloc(img * n), *mhost = malloc(mbytes), *dev = NULL, *mdev = NULL;
    assert_true(host != NULL && mhost != NULL);
    for (size_t k = 0; k < n; k++) {
        uint16_t *p = (uint16_t *)(host + k * img);
        for (size_t i = 0; i < img / 2; i++) {
            p[i] = s16_sample((int)(k % 12), i);
        }
    }
    for (size_t i = 0; i < mbytes; i++) {
        mhost[i] = (uint8_t)(tu_below(&rng, 3) == 0 ? 0 : 1 + tu_below(&rng, 255));
    }
    CUDA_OK(cudaMalloc((void **)&dev, img * n));
    CUDA_OK(cudaMalloc((void **)&mdev, mbytes));
    CUDA_OK(cudaMemcpy(dev, host, img * n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(mdev, mhost, mbytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    imghist_view *hv = malloc(n * sizeof *hv), *dv = malloc(n * sizeof *dv);
    imghist_view *hm = malloc(n * sizeof *hm), *dm = malloc(n * sizeof *dm);
    uint64_t *want = malloc(n * 65539 * 8), *got = malloc(n * 65539 * 8), *d = NULL;
    assert_true(hv && dv && hm && dm && want && got);
    CUDA_OK(cudaMalloc((void **)&d, n * 65539 * 8));
    const imghist_histspec specs[4] = {{0, 0, 0, 0},
                                       {0, 0, 0, IMGHIST_ACCUMULATE},
                                       {0, 0, 0, IMGHIST_OUTLIERS},
                                       {65536, 0, 131072, 0}};
    unsigned cases = 0;
    for (int sp = 0; sp < 4; sp++) {
        const imghist_histspec *spec = &specs[sp];
        const size_t len = imghist_counts_len(spec, IMGHIST_U16, 1);
        for (int masked = 0; masked < 3; masked++) {
            for (int form = 0; form < 3; form++) {
                if (quick && (sp + masked + form) % 2 != 0) continue;
                const size_t ms = mask_at[masked];
                /* form 2: views 0 and 1 swapped (not a progression) */
                for (size_t k = 0; k < n; k++) {
                    const size_t at = form == 2 && k < 2 ? 1 - k : k;
                    const imghist_view v = {.data = host + at * img, .dtype = IMGHIST_U16,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = row,
                        .channels = 1};
                    const imghist_view m = {.data = mhost + at * ms, .dtype = IMGHIST_U8,
                        .mem = IMGHIST_MEM_HOST, .width = w, .height = h, .pitch = w,
                        .channels = 1};
                    hv[k] = v;
                    hm[k] = m;
                    dv[k] = v;
                    dm[k] = m;
                    dv[k].data = dev + at * img;
                    dm[k].data = mdev + at * ms;
                    dv[k].mem = dm[k].mem = IMGHIST_MEM_DEVICE;
                }
                for (size_t i = 0; i < n * len; i++) {
                    want[i] = sp == 1 ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
                }
                memcpy(got, want, n * len * 8);
                for (size_t k = 0; k < n; k++) {
                    const imghist_counts c = {want + k * len, len, IMGHIST_MEM_HOST};
                    const imghist_view hk = vw_masked(hv[k], masked ? &hm[k] : NULL);
                    IH_OK(cpu, imghist_histogram(cpu, &hk, spec, &c));
                }
                printf("S16 batch: spec %d, mask %d, form %d\n", sp, masked, form);
                fflush(stdout); /* a case that hangs shows */
                const int dev_counts = (form + sp) % 2;
                imghist_counts gc = {got, n * len, IMGHIST_MEM_HOST};
                if (dev_counts) {
                    CUDA_OK(cudaMemcpy(d, got, n * len * 8, cudaMemcpyHostToDevice));
                    CUDA_OK(cudaDeviceSynchronize());
                    gc.data = d;
                    gc.mem = IMGHIST_MEM_DEVICE;
                }
                gpu_batch(form == 0, masked, dv, dm, n, (ptrdiff_t)img, (ptrdiff_t)ms, spec, &gc);
                gpu_sync();
                if (dev_counts) {
                    CUDA_OK(cudaMemcpy(got, d, n * len * 8, cudaMemcpyDeviceToHost));
                }
                for (size_t i = 0; i < n * len; i++) {
                    if (got[i] != want[i]) {
                        fail_msg("S16 batch (spec %d, mask %d, form %d, %s counts, %zu images "
                                 "of %ux%u): image %zu (pattern %zu) counter %zu: GPU %llu, "
                                 "CPU %llu",
                                 sp, masked, form, dev_counts ? "device" : "host", n, w, h,
                                 i / len, (form == 2 && i / len < 2 ? 1 - i / len : i / len) % 12,
                                 i % len, (unsigned long long)got[i],
                                 (unsigned long long)want[i]);
                    }
                }
                cases++;
            }
        }
    }
    free(hv);
    free(dv);
    free(hm);
    free(dm);
    free(want);
    free(got);
    free(host);
    free(mhost);
    CUDA_OK(cudaFree(d));
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFree(mdev));
    printf("S16 batches: %u comparisons of %zu images of %ux%u\n", cases, n, w, h);
}

static void test_s16_batches(void **state)
{
    (void)state;
    /* odd sizes: each flat run ends in a partial granule */
    s16_batches(quick ? 12 : 26, 1031, 1030);
    /* More images than SMs, of fewer than 65536 samples: a block an image,
     * which stores all its counters (the constant image puts 65535
     * in one 16-bit half) */
    s16_batches(300, 255, 257);
    s16_batches(quick ? 150 : 400, 181, 181);
}

/* Host images through staging in bands (IMGHIST_P_STAGING_BYTES), masks too. */
static void test_host_bands(void **state)
{
    (void)state;
    imghist_histspec s = {1000, -3.7, 70000.2, IMGHIST_OUTLIERS | IMGHIST_ACCUMULATE};
    img_t im = make_image(IMGHIST_U16, 301, 97, 3, 6, 0, &s, 1000, FILL_MIXED);
    img_t m = make_image(IMGHIST_U8, 301, 97, 1, 5, 0, NULL, 0, FILL_MASK_RANDOM);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 10000));
    compare(&im, &m, &s, HOST_HOST, "bands");
    compare(&im, NULL, &s, HOST_DEV, "bands");
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    double lo, hi, clo, chi;
    const imghist_view imm = vw_masked(im.hv, &m.hv);
    IH_OK(gpu, imghist_range(gpu, &imm, &lo, &hi));
    IH_OK(cpu, imghist_range(cpu, &imm, &clo, &chi));
    assert_true(lo == clo && hi == chi);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    free_image(&im);
    free_image(&m);
    /* 8-bit channels, one bin per value, rows of 3 x 301 bytes (not a
     * multiple of 16): staged packed, one flat run (the plain layout), in
     * bands and whole, and beside a mask. */
    /* one channel with a mask, staged in bands of odd row bytes (the lean
     * masked walk on each band) */
    {
        imghist_histspec n = {32, 0, 256, 0};
        img_t c = make_image(IMGHIST_U8, 301, 200, 1, 5, 3, &n, 32, FILL_MIXED);
        img_t cm = make_image(IMGHIST_U8, 301, 200, 1, 2, 1, NULL, 0, FILL_MASK_RANDOM);
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 10000));
        compare(&c, &cm, &n, HOST_HOST, "one channel staged in bands, masked");
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
        compare(&c, &cm, &n, HOST_DEV, "one channel staged, masked");
        free_image(&c);
        free_image(&cm);
    }
    for (uint32_t ch = 2; ch <= 4; ch++) {
        imghist_histspec n = {0, 0, 0, 0};
        img_t c = make_image(IMGHIST_U8, 301, 97 + 200 * (ch & 1), ch, 7, 0, &n, 256, FILL_MIXED);
        img_t cm = make_image(IMGHIST_U8, 301, c.hv.height, 1, 0, 0, NULL, 0, FILL_MASK_RANDOM);
        for (int bands = 0; bands < 2; bands++) {
            IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, bands ? 10000 : 0));
            compare(&c, NULL, &n, HOST_HOST, "8-bit channels staged");
            compare(&c, NULL, &n, HOST_DEV, "8-bit channels staged");
            compare(&c, &cm, &n, HOST_HOST, "8-bit channels staged, masked");
        }
        free_image(&c);
        free_image(&cm);
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
}

/* Device counts: the call only queues work on the context's stream. */
static void test_stream_order(void **state)
{
    (void)state;
    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    imghist_stream old;
    IH_OK(gpu, imghist_get_stream(gpu, &old));
    IH_OK(gpu, imghist_set_stream(gpu, (imghist_stream)st));
    imghist_histspec s = {4096, 0, 4096, 0};
    img_t im = make_image(IMGHIST_U16, 1000, 300, 1, 0, 0, &s, 4096, FILL_MIXED);
    compare(&im, NULL, &s, DEV_DEV, "own stream");
    IH_OK(gpu, imghist_set_stream(gpu, old));
    CUDA_OK(cudaStreamDestroy(st));
    free_image(&im);
}

/* ---- batches (lists and views of several images) of every job ---- */

enum layout { L_PACKED, L_PITCHED, L_ODD_STRIDE, L_BACKWARDS, L_VIEWS_TENSOR, L_VIEWS_MIXED,
              L_VIEWS_SWAPPED, N_LAYOUTS };
static const char *layout_name[N_LAYOUTS] = {"packed tensor",    "pitched tensor",
                                             "stride not x16",   "backwards stride",
                                             "tensor as views",  "views of two shapes",
                                             "views of one shape, pairs swapped"};

/* n images of w x h x ch in one device buffer as `lay` places them, the
 * batch's counts on the GPU (device or host counts) against the CPU's single
 * calls, image by image; with IMGHIST_ACCUMULATE both start from the same
 * random counts. */
/* masked: 0 none, 1 a mask an image (rows of w + 0..5 bytes, each mask 3
 * bytes after the last), 2 one mask for all (stride 0), 3 a packed mask an
 * image, each on a 16-byte boundary (the flat masked walk). */
static void check_batch_masked(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t n,
                               enum layout lay, const imghist_histspec *spec, int dev_counts,
                               enum fill f, int masked)
{
    const uint32_t bins = (uint32_t)imghist_bins(spec, t);
    const size_t row = (size_t)w * ch * dsize(t);
    const size_t pitch = lay == L_PITCHED ? row + dsize(t) * (1 + tu_below(&rng, 9)) : row;
    size_t img = pitch * h;
    if (lay == L_ODD_STRIDE) {
        img += (img % 16 == 0) ? dsize(t) : 0; /* a phase that moves from image to image */
    } else {
        img = (img + 15) / 16 * 16 + 16 * tu_below(&rng, 2);
    }
    const size_t off = lay == L_ODD_STRIDE ? dsize(t) : 16 * tu_below(&rng, 3);
    const size_t bytes = off + img * n + 2 * pitch * h + 64;
    uint8_t *host = malloc(bytes), *dev = NULL;
    assert_non_null(host);
    memset(host, 0xfd, bytes);
    for (size_t i = 0; i < bytes / dsize(t); i++) {
        put_sample(t, host + i * dsize(t), spec, bins, f == FILL_CONSTANT);
    }
    CUDA_OK(cudaMalloc((void **)&dev, bytes));
    CUDA_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    /* Image i's host and device views. */
    imghist_view *hv = malloc(n * sizeof *hv), *dv = malloc(n * sizeof *dv);
    assert_true(hv != NULL && dv != NULL);
    for (size_t i = 0; i < n; i++) {
        /* L_VIEWS_SWAPPED: images 2k and 2k + 1 trade places (not a
         * progression from 3 images on: the batch kernels take the views'
         * pointers) */
        const size_t place = lay == L_BACKWARDS                      ? n - 1 - i
                             : lay == L_VIEWS_SWAPPED && (i ^ 1) < n ? i ^ 1
                                                                     : i;
        const size_t at = off + place * img;
        const imghist_view v = {.data = host + at, .dtype = t, .mem = IMGHIST_MEM_HOST, .width = w,
            .height = h, .pitch = pitch, .channels = ch};
        hv[i] = v;
        if (lay == L_VIEWS_MIXED && i % 3 == 1) { /* a smaller image at the same place */
            hv[i].width = w > 1 ? w - 1 : 1;
            hv[i].height = h > 1 ? h - 1 : 1;
        }
        dv[i] = hv[i];
        dv[i].data = dev + at;
        dv[i].mem = IMGHIST_MEM_DEVICE;
    }
    const size_t mpitch = masked == 3 ? w : w + tu_below(&rng, 6);
    const size_t mimg = masked == 1 ? mpitch * h + 3 : masked == 3 ? (mpitch * h + 15) / 16 * 16 : 0;
    const size_t mbytes = masked ? mimg * n + mpitch * h : 1;
    uint8_t *mhost = malloc(mbytes), *mdev = NULL;
    imghist_view *hm = malloc(n * sizeof *hm), *dm = malloc(n * sizeof *dm);
    assert_true(mhost != NULL && hm != NULL && dm != NULL);
    for (size_t i = 0; i < mbytes; i++) {
        mhost[i] = (uint8_t)(tu_below(&rng, 3) ? 1 + tu_below(&rng, 255) : 0);
    }
    CUDA_OK(cudaMalloc((void **)&mdev, mbytes));
    CUDA_OK(cudaMemcpy(mdev, mhost, mbytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    for (size_t i = 0; i < n; i++) {
        const imghist_view m = {.data = mhost + i * mimg, .dtype = IMGHIST_U8,
            .mem = IMGHIST_MEM_HOST, .width = hv[i].width, .height = hv[i].height, .pitch = mpitch,
            .channels = 1};
        hm[i] = m;
        dm[i] = m;
        dm[i].data = mdev + i * mimg;
        dm[i].mem = IMGHIST_MEM_DEVICE;
    }
    const size_t len = imghist_counts_len(spec, t, ch);
    uint64_t *want = malloc(n * len * 8), *got = malloc((n * len + 1) * 8);
    assert_true(want != NULL && got != NULL);
    for (size_t i = 0; i < n * len; i++) {
        want[i] = (spec->flags & IMGHIST_ACCUMULATE) ? tu_next(&rng) >> 20 : 0x5a5a5a5a5a5a5a5aull;
    }
    memcpy(got, want, n * len * 8);
    got[n * len] = 0x5a5a5a5a5a5a5a5aull;
    for (size_t i = 0; i < n; i++) {
        const imghist_counts c = {want + i * len, len, IMGHIST_MEM_HOST};
        const imghist_view hvi = vw_masked(hv[i], masked ? &hm[i] : NULL);
        IH_OK(cpu, imghist_histogram(cpu, &hvi, spec, &c));
    }
    uint64_t *d = NULL;
    imghist_counts gc = {got, n * len, IMGHIST_MEM_HOST};
    if (dev_counts) {
        CUDA_OK(cudaMalloc((void **)&d, n * len * 8));
        CUDA_OK(cudaMemcpy(d, got, n * len * 8, cudaMemcpyHostToDevice));
        CUDA_OK(cudaDeviceSynchronize());
        gc.data = d;
        gc.mem = IMGHIST_MEM_DEVICE;
    }
    const ptrdiff_t stride = lay == L_BACKWARDS ? -(ptrdiff_t)img : (ptrdiff_t)img;
    gpu_batch(lay <= L_BACKWARDS, masked, dv, dm, n, stride, (ptrdiff_t)mimg, spec, &gc);
    gpu_sync();
    if (dev_counts) {
        CUDA_OK(cudaMemcpy(got, d, n * len * 8, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(d));
    }
    for (size_t i = 0; i < n * len; i++) {
        if (got[i] != want[i]) {
            fail_msg("batch (%s, mask %d, %s counts; %s %ux%u x%u ch, %zu images, bins %u [%g, "
                     "%g) flags %u): image %zu counter %zu of %zu: GPU %llu, CPU %llu",
                     layout_name[lay], masked, dev_counts ? "device" : "host",
                     t == IMGHIST_U8 ? "u8" : t == IMGHIST_U16 ? "u16" : "f32", w, h, ch, n,
                     spec->bins, spec->lo, spec->hi, spec->flags, i / len, i % len, len,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    assert_true(got[n * len] == 0x5a5a5a5a5a5a5a5aull);
    if (masked) {
        /* Host views and masks on the CUDA context (the core's image-by-image
         * path, each image staged with its mask) against the CPU backend's
         * batch. */
        imghist_histspec s2 = *spec;
        s2.flags &= ~(uint32_t)IMGHIST_ACCUMULATE;
        uint64_t *hw = malloc(n * len * 8), *hg = malloc(n * len * 8);
        assert_true(hw != NULL && hg != NULL);
        const imghist_counts cw = {hw, n * len, IMGHIST_MEM_HOST};
        const imghist_counts cg = {hg, n * len, IMGHIST_MEM_HOST};
        imghist_view *hl = malloc(n * sizeof *hl);
        assert_non_null(hl);
        vw_list_masked(hl, hv, hm, n);
        IH_OK(cpu, imghist_histogram_list(cpu, hl, n, &s2, &cw));
        IH_OK(gpu, imghist_histogram_list(gpu, hl, n, &s2, &cg));
        free(hl);
        for (size_t i = 0; i < n * len; i++) {
            if (hg[i] != hw[i]) {
                fail_msg("host masked batch (%s): image %zu counter %zu: GPU %llu, CPU %llu",
                         layout_name[lay], i / len, i % len, (unsigned long long)hg[i],
                         (unsigned long long)hw[i]);
            }
        }
        free(hw);
        free(hg);
    }
    free(want);
    free(got);
    free(hv);
    free(dv);
    free(host);
    free(hm);
    free(dm);
    free(mhost);
    CUDA_OK(cudaFree(dev));
    CUDA_OK(cudaFree(mdev));
}

static void check_batch(imghist_dtype t, uint32_t w, uint32_t h, uint32_t ch, size_t n,
                        enum layout lay, const imghist_histspec *spec, int dev_counts,
                        enum fill f)
{
    check_batch_masked(t, w, h, ch, n, lay, spec, dev_counts, f, 0);
}

/* 8-bit channels with one bin per value in rows that are not one flat run
 * (padded rows, unaligned starts: a crop), large enough for many blocks, one
 * image and a batch (the plain layout's row walk). */
static void test_channel_rows(void **state)
{
    (void)state;
    unsigned cases = 0;
    for (uint32_t ch = 2; ch <= 4; ch++) {
        for (int i = 0; i < (quick ? 2 : 6); i++) {
            imghist_histspec s = {0, 0, 0, i % 3 == 2 ? IMGHIST_ACCUMULATE : 0};
            const uint32_t w = 601 + tu_below(&rng, 700), h = 50 + tu_below(&rng, 300);
            const size_t pad = i == 0 ? 0 : tu_below(&rng, 40);
            const size_t off = i == 0 ? 1 + tu_below(&rng, 15) : tu_below(&rng, 16);
            img_t im = make_image(IMGHIST_U8, w, h, ch, pad, off, &s, 256,
                                  i == 1 ? FILL_CONSTANT : FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "8-bit channels in rows");
            compare(&im, NULL, &s, DEV_HOST, "8-bit channels in rows");
            /* with a mask (the plain layout's masked row walk): random, of
             * any pitch and start, and all zero */
            img_t m = make_image(IMGHIST_U8, w, h, 1, tu_below(&rng, 20), tu_below(&rng, 16),
                                 NULL, 0, i == 3 ? FILL_MASK_ZERO : FILL_MASK_RANDOM);
            compare(&im, &m, &s, DEV_DEV, "8-bit channels in rows, masked");
            compare(&im, &m, &s, DEV_HOST, "8-bit channels in rows, masked");
            free_image(&m);
            free_image(&im);
            cases += 4;
        }
        const imghist_histspec n = {0, 0, 0, 0};
        check_batch(IMGHIST_U8, 500 + tu_below(&rng, 300), 100 + tu_below(&rng, 100), ch,
                    2 + tu_below(&rng, 5), L_PITCHED, &n, (int)tu_below(&rng, 2), FILL_MIXED);
        check_batch(IMGHIST_U8, 20 + tu_below(&rng, 30), 10 + tu_below(&rng, 30), ch,
                    300 + tu_below(&rng, 300), L_PITCHED, &n, (int)tu_below(&rng, 2), FILL_MIXED);
        check_batch_masked(IMGHIST_U8, 300 + tu_below(&rng, 300), 50 + tu_below(&rng, 100), ch,
                           2 + tu_below(&rng, 5), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 1 + (int)tu_below(&rng, 3));
        cases += 3;
    }
    printf("channel rows: %u comparisons\n", cases);
}

/* One channel with a packed mask aligned with the image (the lean kernel's
 * masked walk): every type, lean binnings, one image of one block or many,
 * one row, odd widths (a partial last granule), masks of random bytes, all
 * zero and all set; batches of such images. */
static void test_masked_flat(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < 2; k++) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, k);
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            for (int shape = 0; shape < 4; shape++) {
                const uint32_t w = shape == 0 ? 1 + tu_below(&rng, 3000)
                                              : 37 + 2 * tu_below(&rng, 500);
                const uint32_t h = shape == 0 ? 1 : shape == 1 ? 3 + tu_below(&rng, 20)
                                                               : 100 + tu_below(&rng, 700);
                img_t im = make_image(t, w, h, 1, 0, 16 * tu_below(&rng, 3), &s, bins,
                                      shape == 3 ? FILL_CONSTANT : FILL_MIXED);
                const enum fill mf[3] = {FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE};
                for (int mi = 0; mi < 3; mi++) {
                    img_t m = make_image(IMGHIST_U8, w, h, 1, 0, 16 * tu_below(&rng, 3), NULL, 0,
                                         mf[mi]);
                    cases += compare_masked(&im, &m, &s, "flat masked");
                    free_image(&m);
                }
                free_image(&im);
            }
            check_batch_masked(t, 200 + tu_below(&rng, 300), 100 + tu_below(&rng, 100), 1,
                               2 + tu_below(&rng, 4), L_PACKED, &s, (int)tu_below(&rng, 2),
                               FILL_MIXED, 3);
            check_batch_masked(t, 16 + tu_below(&rng, 40), 8 + tu_below(&rng, 30), 1,
                               300 + tu_below(&rng, 300), L_PACKED, &s, (int)tu_below(&rng, 2),
                               FILL_MIXED, 3);
            cases += 2;
        }
    }
    printf("masked flat: %u comparisons\n", cases);
}

/*
 * 8-bit channels with a mask as packed as the pixels (the plain
 * layout's flat masked walk; for two and four channels only where the mask
 * is aligned with the granules, 16 / channels pixels each, else the row
 * walk): one row, a few rows, many blocks' worth;
 * widths whose rows end inside a granule; masks random, all zero and all
 * set, aligned or one byte off; device and host views and counts; batches
 * as a tensor and as views out of order.
 */
static void test_masked_channels_flat(void **state)
{
    (void)state;
    unsigned cases = 0;
    const imghist_histspec s = {0, 0, 0, 0};
    for (uint32_t ch = 2; ch <= 4; ch++) {
        for (int shape = 0; shape < 4; shape++) {
            const uint32_t w = shape == 0 ? 1 + tu_below(&rng, 3000)
                               : shape == 3 ? 1024 + 2 * tu_below(&rng, 300)
                                            : 37 + tu_below(&rng, 700);
            const uint32_t h = shape == 0 ? 1 : shape == 1 ? 3 + tu_below(&rng, 20)
                                                           : (quick ? 200 : 600) + tu_below(&rng, 300);
            img_t im = make_image(IMGHIST_U8, w, h, ch, 0, 16 * tu_below(&rng, 3), &s, 256,
                                  shape == 2 ? FILL_CONSTANT : FILL_MIXED);
            const enum fill mf[4] = {FILL_MASK_RANDOM, FILL_MASK_ZERO, FILL_MASK_ONE,
                                     FILL_MASK_RANDOM};
            for (int mi = 0; mi < 4; mi++) {
                /* aligned with the granules' pixels, or (mi 3) one byte off */
                const size_t moff = mi == 3 ? 1 : (16 / ch) * tu_below(&rng, 4);
                img_t m = make_image(IMGHIST_U8, w, h, 1, 0, moff, NULL, 0, mf[mi]);
                cases += compare_masked(&im, &m, &s, "channels, packed mask");
                free_image(&m);
            }
            free_image(&im);
        }
        const imghist_histspec n = {0, 0, 0, 0};
        check_batch_masked(IMGHIST_U8, 200 + tu_below(&rng, 300), 50 + tu_below(&rng, 100), ch,
                           2 + tu_below(&rng, 5), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        check_batch_masked(IMGHIST_U8, 100 + tu_below(&rng, 300), 20 + tu_below(&rng, 100), ch,
                           3 + tu_below(&rng, 5), L_VIEWS_SWAPPED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        check_batch_masked(IMGHIST_U8, 8 + tu_below(&rng, 30), 4 + tu_below(&rng, 20), ch,
                           300 + tu_below(&rng, 300), L_PACKED, &n, (int)tu_below(&rng, 2),
                           FILL_MIXED, 3);
        cases += 3;
    }
    printf("masked channels, flat: %u comparisons\n", cases);
}

/* A flat image over 4 GiB with rows of an odd number of bytes, with and
 * without a mask: the lean kernels take it in launches of at most 4 GiB,
 * each starting on a 16-byte boundary (rows a multiple of 16). Row r holds
 * the value 13 r mod 256; the mask clears every third row. Skipped in quick
 * runs and where the GPU has less than 10 GB free. */
static void test_huge_flat(void **state)
{
    (void)state;
    size_t free_b = 0, total_b = 0;
    CUDA_OK(cudaMemGetInfo(&free_b, &total_b));
    if (quick || free_b < ((size_t)10 << 30)) {
        printf("huge flat: skipped (%s)\n", quick ? "quick" : "less than 10 GB free");
        return;
    }
    const uint32_t w = 65537, h = 65600;
    const size_t bytes = (size_t)w * h;
    uint8_t *img = NULL, *mask = NULL;
    CUDA_OK(cudaMalloc((void **)&img, bytes));
    CUDA_OK(cudaMalloc((void **)&mask, bytes));
    for (uint32_t r = 0; r < h; r++) {
        CUDA_OK(cudaMemsetAsync(img + (size_t)r * w, (int)((13u * r) & 255u), w, 0));
        CUDA_OK(cudaMemsetAsync(mask + (size_t)r * w, r % 3 == 0 ? 0 : 1, w, 0));
    }
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view v = {.data = img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE, .width = w,
        .height = h, .pitch = w, .channels = 1};
    const imghist_view m = {.data = mask, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE,
        .width = w, .height = h, .pitch = w, .channels = 1};
    const imghist_histspec s = {32, 0, 256, 0}; /* lean, 32-bit counters */
    uint64_t got[32], want[32];
    for (int masked = 0; masked < 2; masked++) {
        memset(want, 0, sizeof want);
        for (uint32_t r = 0; r < h; r++) {
            if (!masked || r % 3 != 0) {
                want[((13u * r) & 255u) >> 3] += w;
            }
        }
        const imghist_counts c = {got, 32, IMGHIST_MEM_HOST};
        const imghist_view vm = vw_masked(v, masked ? &m : NULL);
        IH_OK(gpu, imghist_histogram(gpu, &vm, &s, &c));
        for (int b = 0; b < 32; b++) {
            if (got[b] != want[b]) {
                fail_msg("huge flat (%s): bin %d is %llu, want %llu", masked ? "masked" : "plain",
                         b, (unsigned long long)got[b], (unsigned long long)want[b]);
            }
        }
    }
    CUDA_OK(cudaFree(img));
    CUDA_OK(cudaFree(mask));
    printf("huge flat: 2 comparisons\n");
}

/* Every type x binning x channel count x flags x layout: tiny images (one
 * warp each), small ones (one block each, which stores its counts), larger
 * ones (several blocks an image, adding), S16 and global stores (2^20
 * bins), constant images. */
static void test_batches(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    unsigned cases = 0;
    for (int ti = 0; ti < 3; ti++) {
        for (int k = 0; k < N_SPECS; k++) {
            for (int lay = 0; lay < N_LAYOUTS; lay++) {
                for (int size = 0; size < 2; size++) {
                    if (quick && tu_below(&rng, 6) != 0) continue;
                    const imghist_dtype t = types[ti];
                    imghist_histspec s = spec_for(t, k);
                    const int huge = s.bins == (1u << 20) || (t == IMGHIST_U16 && k == 0);
                    const uint32_t ch = huge || tu_below(&rng, 2) ? 1 : 3;
                    const uint32_t w = size ? 200 + tu_below(&rng, 300) : 1 + tu_below(&rng, 40);
                    const uint32_t h = size ? 100 + tu_below(&rng, 200) : 1 + tu_below(&rng, 30);
                    const size_t n = huge ? 3 : size ? 1 + tu_below(&rng, 6) : 1 + tu_below(&rng, 300);
                    const int fl = (int)tu_below(&rng, 4);
                    s.flags = (fl & 1 ? IMGHIST_OUTLIERS : 0) | (fl & 2 ? IMGHIST_ACCUMULATE : 0);
                    if (s.bins > 0 && tu_below(&rng, 3) == 0) {
                        s.flags |= IMGHIST_CLOSED;
                    }
                    check_batch(t, w, h, ch, n, (enum layout)lay, &s, (int)tu_below(&rng, 2),
                                tu_below(&rng, 8) == 0 ? FILL_CONSTANT : FILL_MIXED);
                    /* and masked: a mask an image, or one for all */
                    check_batch_masked(t, w, h, ch, n, (enum layout)lay, &s,
                                       (int)tu_below(&rng, 2), FILL_MIXED,
                                       1 + (int)tu_below(&rng, 2));
                    cases += 2;
                }
            }
        }
    }
    /* Many small RGB and float images: more than two waves of blocks. */
    const imghist_histspec rgb = {0, 0, 0, 0}, unit = {256, 0, 1, 0};
    check_batch(IMGHIST_U8, 32, 32, 3, 5000, L_PACKED, &rgb, 1, FILL_MIXED);
    check_batch(IMGHIST_F32, 24, 24, 1, 3000, L_PACKED, &unit, 0, FILL_MIXED);
    /* No image one warp each (-1), then images of up to 64 KB so. */
    const imghist_histspec odd16 = {1000, -3.7, 70000.2, IMGHIST_ACCUMULATE};
    const imghist_histspec u16_256 = {256, 0, 65536, IMGHIST_ACCUMULATE};
    for (int k = 0; k < 2; k++) {
        IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, k == 0 ? -1 : 65536));
        check_batch(IMGHIST_U8, 37, 29, 3, 300, L_PACKED, &rgb, 1, FILL_MIXED);
        check_batch(IMGHIST_F32, 120, 100, 1, 40, L_PACKED, &unit, 0, FILL_MIXED);
        check_batch(IMGHIST_U16, 64, 50, 2, 70, L_VIEWS_TENSOR, &odd16, 1, FILL_CONSTANT);
        check_batch(IMGHIST_U16, 64, 50, 1, 70, L_BACKWARDS, &u16_256, 0, FILL_MIXED);
    }
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_TINY, 0));
    printf("batches: %u comparisons\n", cases + 10);
}

/* The F32 lean kernel's padded layout on flat runs of 1-4 channels: ranges
 * whose estimate takes the edge table only near an edge (open and closed,
 * a zero edge, 32 copies of 256 bins), one whose bound is too loose for it
 * ([1000, 1001): binning.h's way through lean_bin), one with no usable
 * estimate at all, and one wider than FLT_MAX (v - lo overflows: once bin 0
 * in lean_bin, which tiny images' batches take). Each a few chunks long with
 * a partial last granule, in batches (one block an image, and several), and
 * for two ranges an image of several chunks a block. */
static void test_float_layouts(void **state)
{
    (void)state;
    const imghist_histspec specs[] = {{10000, 0, 1, 0},
                                      {777, -2.5, 3.25, IMGHIST_CLOSED},
                                      {256, 0, 1, IMGHIST_CLOSED},
                                      {1000, -1e30, 1e30, IMGHIST_CLOSED},
                                      {1000, 1000, 1001, 0},
                                      {3000, 1e6, 1e6 + 1, 0},
                                      {100, -3e38, 3e38, 0}};
    unsigned cases = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        for (uint32_t ch = 1; ch <= 4; ch++) {
            const imghist_histspec s = specs[k];
            const uint32_t bins = (uint32_t)imghist_bins(&s, IMGHIST_F32);
            const uint32_t w = 2 * 2048 * 4 / ch + 1 + 2 * tu_below(&rng, 8), h = 3;
            img_t im = make_image(IMGHIST_F32, w, h, ch, 0, 0, &s, bins, FILL_MIXED);
            compare(&im, NULL, &s, DEV_DEV, "float layouts");
            free_image(&im);
            check_batch(IMGHIST_F32, 50 + k, 20, ch, 24, L_PACKED, &s, 0, FILL_MIXED);
            check_batch(IMGHIST_F32, 700, 300, ch, 3, L_PACKED, &s, 0, FILL_MIXED);
            cases += 3;
            if (k < 2 && (ch == 1 || ch == 3)) {
                /* Several chunks a block (2^23 samples or so: a few a block on
                 * 132 SMs), in both halves of the walk's two buffers. */
                img_t big = make_image(IMGHIST_F32, 4099, 2048 / ch, ch, 0, 0, &s, bins,
                                       FILL_MIXED);
                compare(&big, NULL, &s, DEV_DEV, "float layouts, large");
                free_image(&big);
                cases++;
            }
        }
    }
    printf("float layouts: %u comparisons\n", cases);
}

/* imghist_range against the CPU: every type, channels, masks, NaN/inf. */
static void test_range(void **state)
{
    (void)state;
    const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};
    for (int ti = 0; ti < 3; ti++) {
        for (int rep = 0; rep < (quick ? 3 : 12); rep++) {
            const imghist_dtype t = types[ti];
            imghist_histspec s = spec_for(t, 2);
            const uint32_t bins = (uint32_t)imghist_bins(&s, t);
            const uint32_t ch = 1 + tu_below(&rng, 4);
            img_t im = make_image(t, 1 + tu_below(&rng, 300), 1 + tu_below(&rng, 50), ch,
                                  dsize(t) * tu_below(&rng, 5), rep % 5, &s, bins,
                                  rep == 0 ? FILL_CONSTANT : FILL_MIXED);
            img_t m = make_image(IMGHIST_U8, im.hv.width, im.hv.height, 1, 0, 0, NULL, 0,
                                 rep % 3 == 2 ? FILL_MASK_ZERO : FILL_MASK_RANDOM);
            for (int mi = 0; mi < 2; mi++) {
                for (int dev = 0; dev < 2; dev++) {
                    double lo = 0, hi = 0, clo = 0, chi = 0;
                    const imghist_view *mm = mi ? (dev ? &m.dv : &m.hv) : NULL;
                    const imghist_view gv = vw_masked(dev ? im.dv : im.hv, mm);
                    const imghist_view cv = vw_masked(im.hv, mi ? &m.hv : NULL);
                    const imghist_status g = imghist_range(gpu, &gv, &lo, &hi);
                    const imghist_status c = imghist_range(cpu, &cv, &clo, &chi);
                    assert_int_equal(g, c);
                    if (c == IMGHIST_OK) {
                        if (lo != clo || hi != chi) {
                            fail_msg("range: GPU [%.9g, %.9g], CPU [%.9g, %.9g]", lo, hi, clo, chi);
                        }
                    }
                }
            }
            free_image(&im);
            free_image(&m);
        }
    }
    /* Only NaN and inf: no finite sample. */
    float bad[6] = {NAN, INFINITY, -INFINITY, NAN, NAN, INFINITY};
    float *d;
    CUDA_OK(cudaMalloc((void **)&d, sizeof bad));
    CUDA_OK(cudaMemcpy(d, bad, sizeof bad, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    const imghist_view v = {.data = d, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_DEVICE, .width = 3,
        .height = 2, .pitch = 12, .channels = 1};
    double lo, hi;
    assert_int_equal(imghist_range(gpu, &v, &lo, &hi), IMGHIST_E_INVALID_ARG);
    CUDA_OK(cudaFree(d));
}

int main(void)
{
    quick = su_quick();
    const int open_rc = su_open_gpu_suite("wide GPU suite", &gpu, &cpu);
    if (open_rc != 0) {
        return open_rc;
    }
    tu_seed(&rng, tu_fresh_seed("test_gpu_wide"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid),        cmocka_unit_test(test_flat),
        cmocka_unit_test(test_unaligned),   cmocka_unit_test(test_channel_rows),
        cmocka_unit_test(test_masked_flat), cmocka_unit_test(test_masked_channels_flat),
        cmocka_unit_test(test_huge_flat),
        cmocka_unit_test(test_tiny_shapes), cmocka_unit_test(test_edges_exact),
        cmocka_unit_test(test_large_wraps), cmocka_unit_test(test_split_layouts),
        cmocka_unit_test(test_s16_batches),
        cmocka_unit_test(test_host_bands),
        cmocka_unit_test(test_stream_order), cmocka_unit_test(test_range),
        cmocka_unit_test(test_batches),     cmocka_unit_test(test_float_layouts),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    imghist_destroy(cpu);
    imghist_destroy(gpu);
    return rc;
}
