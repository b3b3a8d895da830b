/*
 * The CUDA backend's joint histograms, mutual information and 16-bit /
 * masked equalization against a CPU context, bit for bit (mutual information
 * to 1e-12: the device sums in another order). Fresh random sizes, pitches,
 * base offsets, bins and ranges every run (the seed is printed). Exits 77
 * (skipped) when there is no usable GPU. IMGHIST_TEST_QUICK=1: smaller cases,
 * for compute-sanitizer.
 */
#define _POSIX_C_SOURCE 200809L
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
#include "suite_util.h"
#include "test_util.h"
#include "views.h"

static imghist_ctx *gpu, *cpu;
static tu_rng rng;
static int quick;

/* ---- images: a host copy and a device copy, same pitch and base offset ---- */

enum fill { F_UNIFORM, F_CONSTANT, F_TWO, F_SMALL, F_CORRELATED, F_FLOATY };

typedef struct img {
    imghist_view h, d;      /* host and device views of the same samples */
    uint8_t *hbuf, *dbuf;   /* allocations */
    size_t bytes;
} img;

static size_t dsize(imghist_dtype t)
{
    return t == IMGHIST_U8 ? 1 : t == IMGHIST_U16 ? 2 : 4;
}

/* Sample value for a fill; `ref` (same index of another image) for F_CORRELATED. */
static double value_for(enum fill f, imghist_dtype t, double ref)
{
    const double maxv = t == IMGHIST_U8 ? 255 : t == IMGHIST_U16 ? 65535 : 1000;
    switch (f) {
    case F_UNIFORM: return t == IMGHIST_F32 ? (double)tu_below(&rng, 2000000) / 1000.0 - 500.0
                                             : (double)tu_below(&rng, (uint32_t)maxv + 1);
    case F_CONSTANT: return t == IMGHIST_F32 ? 3.25 : maxv / 2;
    case F_TWO: return tu_below(&rng, 2) ? maxv / 3 : maxv / 3 + 1;
    case F_SMALL: return (double)tu_below(&rng, 4096); /* 12-bit data */
    case F_CORRELATED: {
        double v = ref + (double)tu_below(&rng, 7) - 3.0;
        return v < 0 ? 0 : v > maxv ? maxv : v;
    }
    case F_FLOATY: { /* specials among floats */
        const uint32_t r = tu_below(&rng, 16);
        if (t == IMGHIST_F32 && r == 0) return NAN;
        if (t == IMGHIST_F32 && r == 1) return INFINITY;
        if (t == IMGHIST_F32 && r == 2) return -INFINITY;
        return value_for(F_UNIFORM, t, ref);
    }
    }
    return 0;
}

static void put(uint8_t *p, imghist_dtype t, double v)
{
    if (t == IMGHIST_U8) {
        *p = (uint8_t)v;
    } else if (t == IMGHIST_U16) {
        const uint16_t u = (uint16_t)v;
        memcpy(p, &u, 2);
    } else {
        const float f = (float)v;
        memcpy(p, &f, 4);
    }
}

static double get(const uint8_t *p, imghist_dtype t)
{
    if (t == IMGHIST_U8) return *p;
    if (t == IMGHIST_U16) { uint16_t u; memcpy(&u, p, 2); return u; }
    float f; memcpy(&f, p, 4); return f;
}

/* A w x h image of type t: pitch padded by `pad` samples, base offset by
 * `offset` bytes (a multiple of the sample size unless odd is wanted). */
static img make_img(imghist_dtype t, uint32_t w, uint32_t h, uint32_t pad, size_t offset,
                    enum fill f, const img *ref)
{
    img m;
    memset(&m, 0, sizeof m);
    const size_t es = dsize(t);
    const size_t pitch = ((size_t)w + pad) * es;
    m.bytes = offset + pitch * h;
    m.hbuf = malloc(m.bytes);
    assert_non_null(m.hbuf);
    for (size_t i = 0; i < m.bytes; i++) {
        m.hbuf[i] = (uint8_t)tu_next(&rng); /* padding: noise that must not count */
    }
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            const double r = ref != NULL ? get((const uint8_t *)ref->h.data + (size_t)y * ref->h.pitch +
                                                   (size_t)x * dsize(ref->h.dtype), ref->h.dtype)
                                         : 0;
            put(m.hbuf + offset + (size_t)y * pitch + (size_t)x * es, t, value_for(f, t, r));
        }
    }
    CUDA_OK(cudaMalloc((void **)&m.dbuf, m.bytes));
    CUDA_OK(cudaMemcpy(m.dbuf, m.hbuf, m.bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize()); /* the context's stream does not wait for the copy */
    const imghist_view v = {.data = m.hbuf + offset, .dtype = t, .mem = IMGHIST_MEM_HOST,
                            .width = w, .height = h, .pitch = pitch, .channels = 1};
    m.h = v;
    m.d = v;
    m.d.data = m.dbuf + offset;
    m.d.mem = IMGHIST_MEM_DEVICE;
    return m;
}

/* A mask with about `density` percent non-zero bytes (0: none). */
static img make_mask(uint32_t w, uint32_t h, uint32_t pad, size_t offset, uint32_t density)
{
    img m = make_img(IMGHIST_U8, w, h, pad, offset, F_CONSTANT, NULL);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            m.hbuf[offset + (size_t)y * m.h.pitch + x] =
                tu_below(&rng, 100) < density ? (uint8_t)(1 + tu_below(&rng, 255)) : 0;
        }
    }
    CUDA_OK(cudaMemcpy(m.dbuf, m.hbuf, m.bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    return m;
}

static void free_img(img *m)
{
    free(m->hbuf);
    cudaFree(m->dbuf);
    memset(m, 0, sizeof *m);
}

static void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize(s));
}

static void expect_same_counts(const uint64_t *want, const uint64_t *got, size_t n,
                               const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (want[i] != got[i]) {
            fail_msg("%s: counter %zu of %zu: CPU %llu, GPU %llu", what, i, n,
                     (unsigned long long)want[i], (unsigned long long)got[i]);
        }
    }
}

/* ---- joint histograms ---- */

/* A random spec for type t (natural when allowed and `natural`). */
static imghist_histspec random_spec(imghist_dtype t, int natural, uint32_t bins)
{
    imghist_histspec s = {0};
    if (natural && t == IMGHIST_U8) { /* U16 x U16 natural would be 2^32 cells */
        return s;
    }
    s.bins = bins;
    const uint32_t r = tu_below(&rng, 3);
    if (t == IMGHIST_F32) {
        s.lo = r == 0 ? -500.0 : -123.456;
        s.hi = r == 0 ? 500.0 : 321.0 + tu_below(&rng, 100);
    } else {
        const double maxv = t == IMGHIST_U8 ? 256 : 65536;
        s.lo = r == 0 ? 0 : r == 1 ? 3.5 : (double)tu_below(&rng, (uint32_t)maxv / 4);
        s.hi = r == 0 ? maxv : s.lo + 1 + tu_below(&rng, (uint32_t)(maxv - s.lo));
    }
    if (tu_below(&rng, 4) == 0) {
        s.flags |= IMGHIST_CLOSED;
    }
    return s;
}

/* One joint case: CPU on host views vs GPU on host and device views, host and
 * device counts, with accumulate onto random counts. */
static void joint_case(const img *a, const img *b, const img *mask, imghist_histspec sa,
                       imghist_histspec sb, const char *what)
{
    const size_t na = imghist_bins(&sa, a->h.dtype), nb = imghist_bins(&sb, b->h.dtype);
    assert_true(na > 0 && nb > 0);
    const int outl = (sa.flags & IMGHIST_OUTLIERS) != 0;
    const size_t n = na * nb + (outl ? 1 : 0);
    uint64_t *base = malloc(n * 8), *want = malloc(n * 8), *got = malloc(n * 8);
    uint64_t *dcounts = NULL;
    assert_true(base && want && got);
    CUDA_OK(cudaMalloc((void **)&dcounts, n * 8));
    const int acc = (sa.flags & IMGHIST_ACCUMULATE) != 0;
    for (size_t i = 0; i < n; i++) {
        base[i] = acc ? tu_next(&rng) >> 20 : 0xdeadbeefull;
    }
    memcpy(want, base, n * 8);
    imghist_counts hc = {.data = want, .len = n, .mem = IMGHIST_MEM_HOST};
    const imghist_view ahm = vw_masked(a->h, mask ? &mask->h : NULL);
    IH_OK(cpu, imghist_histogram2d(cpu, &ahm, &b->h, &sa, &sb, &hc));
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += want[i] - (acc ? base[i] : 0);
    (void)total;
    for (int mode = 0; mode < 4; mode++) {
        const int dev_views = mode & 1, dev_counts = (mode >> 1) & 1;
        const img *ma = mask;
        const imghist_view *va = dev_views ? &a->d : &a->h, *vb = dev_views ? &b->d : &b->h;
        const imghist_view *vm = ma == NULL ? NULL : dev_views ? &ma->d : &ma->h;
        imghist_counts out;
        if (dev_counts) {
            CUDA_OK(cudaMemcpy(dcounts, base, n * 8, cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize()); /* pageable copies may still be in flight */
            out = (imghist_counts){.data = dcounts, .len = n, .mem = IMGHIST_MEM_DEVICE};
        } else {
            memcpy(got, base, n * 8);
            out = (imghist_counts){.data = got, .len = n, .mem = IMGHIST_MEM_HOST};
        }
        const imghist_view vam = vw_masked(*va, vm);
        const imghist_status st = imghist_histogram2d(gpu, &vam, vb, &sa, &sb, &out);
        if (st != IMGHIST_OK) {
            fail_msg("%s (mode %d): %s: %s", what, mode, imghist_strerror(st),
                     imghist_last_error(gpu));
        }
        gpu_sync();
        if (dev_counts) {
            CUDA_OK(cudaMemcpy(got, dcounts, n * 8, cudaMemcpyDeviceToHost));
        }
        char label[256];
        snprintf(label, sizeof label, "%s, %s views, %s counts", what,
                 dev_views ? "device" : "host", dev_counts ? "device" : "host");
        expect_same_counts(want, got, n, label);
    }
    cudaFree(dcounts);
    free(base);
    free(want);
    free(got);
}

static const imghist_dtype types[3] = {IMGHIST_U8, IMGHIST_U16, IMGHIST_F32};

static void test_joint_type_pairs(void **state)
{
    (void)state;
    for (int ta = 0; ta < 3; ta++) {
        for (int tb = 0; tb < 3; tb++) {
            for (int iter = 0; iter < (quick ? 2 : 4); iter++) {
                const uint32_t w = 1 + tu_below(&rng, 700), h = 1 + tu_below(&rng, 300);
                const imghist_dtype A = types[ta], B = types[tb];
                img a = make_img(A, w, h, tu_below(&rng, 5), dsize(A) * tu_below(&rng, 9),
                                 F_FLOATY, NULL);
                img b = make_img(B, w, h, tu_below(&rng, 5), dsize(B) * tu_below(&rng, 9),
                                 iter == 1 ? F_CORRELATED : F_FLOATY, &a);
                img m = make_mask(w, h, tu_below(&rng, 3), tu_below(&rng, 5), 60);
                const uint32_t bins[4] = {64, 256, 1 + tu_below(&rng, 300), 7};
                imghist_histspec sa = random_spec(A, iter == 0, bins[iter]);
                imghist_histspec sb = random_spec(B, iter == 0, bins[(iter + 1) & 3]);
                sa.flags |= (iter & 1 ? IMGHIST_OUTLIERS : 0) | (iter >= 2 ? IMGHIST_ACCUMULATE : 0);
                char what[160];
                snprintf(what, sizeof what, "types %d x %d, %ux%u, %zu x %zu bins, iter %d", A, B,
                         w, h, imghist_bins(&sa, A), imghist_bins(&sb, B), iter);
                joint_case(&a, &b, iter == 3 ? &m : NULL, sa, sb, what);
                free_img(&a);
                free_img(&b);
                free_img(&m);
            }
        }
    }
}

/* The U8 x U8 natural fast path: phases equal and not, masks, patterns, 1x1. */
static void test_joint_u8_natural(void **state)
{
    (void)state;
    const enum fill fills[5] = {F_UNIFORM, F_CONSTANT, F_TWO, F_CORRELATED, F_SMALL};
    for (int iter = 0; iter < (quick ? 8 : 20); iter++) {
        const int big = iter < 5;
        const uint32_t w = big ? 4099 - tu_below(&rng, 64) : 1 + tu_below(&rng, 200);
        const uint32_t h = big ? (quick ? 120 : 700) : 1 + tu_below(&rng, 100);
        const size_t oa = tu_below(&rng, 16);
        const size_t ob = tu_below(&rng, 3) == 0 ? tu_below(&rng, 16) : oa; /* mostly in phase */
        const uint32_t pad = tu_below(&rng, 2) ? 16 : tu_below(&rng, 20);
        img a = make_img(IMGHIST_U8, w, h, pad, oa, fills[iter % 5], NULL);
        img b = make_img(IMGHIST_U8, w, h, pad, ob, iter % 5 == 3 ? F_CORRELATED : fills[(iter + 1) % 5], &a);
        img m = make_mask(w, h, 0, 0, iter % 3 == 0 ? 50 : 100);
        imghist_histspec sa = {0}, sb = {0};
        if (iter % 4 == 1) sa.flags = IMGHIST_ACCUMULATE;
        if (iter % 4 == 2) sa.flags = IMGHIST_OUTLIERS;
        char what[128];
        snprintf(what, sizeof what, "u8 natural %ux%u, offsets %zu/%zu, fill %d, iter %d", w, h,
                 oa, ob, (int)fills[iter % 5], iter);
        joint_case(&a, &b, iter % 6 == 5 ? &m : NULL, sa, sb, what);
        free_img(&a);
        free_img(&b);
        free_img(&m);
    }
    /* 1x1 */
    img a = make_img(IMGHIST_U8, 1, 1, 0, 0, F_UNIFORM, NULL);
    img b = make_img(IMGHIST_U8, 1, 1, 0, 3, F_UNIFORM, NULL);
    imghist_histspec s0 = {0};
    joint_case(&a, &b, NULL, s0, s0, "1x1");
    free_img(&a);
    free_img(&b);
}

/* Large constant and two-value images: per-block counts far past 65535 in one
 * 16-bit half, carries into the neighbour half (keys 2k, 2k+1 share a word). */
static void test_joint_wraps(void **state)
{
    (void)state;
    const uint32_t w = 4096, h = quick ? 1024 : 4096;
    for (int k = 0; k < 3; k++) {
        img a = make_img(IMGHIST_U8, w, h, 0, 0, F_CONSTANT, NULL);
        img b = make_img(IMGHIST_U8, w, h, 0, 0, k == 0 ? F_CONSTANT : F_TWO, NULL);
        if (k == 2) { /* b in {254, 255}: keys 0x7ffe, 0x7fff in one word */
            for (size_t i = 0; i < (size_t)w * h; i++) b.hbuf[i] = 254 + (uint8_t)(tu_next(&rng) & 1);
            for (size_t i = 0; i < (size_t)w * h; i++) a.hbuf[i] = 127;
            CUDA_OK(cudaMemcpy(a.dbuf, a.hbuf, a.bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy(b.dbuf, b.hbuf, b.bytes, cudaMemcpyHostToDevice));
            CUDA_OK(cudaDeviceSynchronize());
        }
        imghist_histspec s0 = {0};
        joint_case(&a, &b, NULL, s0, s0, k == 0 ? "constant 16M" : "two values 16M");
        /* and through the scalar path: 64 x 64 bins */
        imghist_histspec s64 = {.bins = 64, .lo = 0, .hi = 256};
        joint_case(&a, &b, NULL, s64, s64, "two values 16M, 64 bins");
        free_img(&a);
        free_img(&b);
    }
}

/* Host views in bands (IMGHIST_P_STAGING_BYTES), masks, mixed types. */
static void test_joint_host_bands(void **state)
{
    (void)state;
    const uint32_t w = 1001, h = 517;
    img a = make_img(IMGHIST_U16, w, h, 3, 2, F_UNIFORM, NULL);
    img b = make_img(IMGHIST_U8, w, h, 0, 1, F_UNIFORM, NULL);
    img m = make_mask(w, h, 5, 0, 70);
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 100000));
    imghist_histspec sa = {.bins = 100, .lo = 0, .hi = 65536, .flags = IMGHIST_OUTLIERS};
    imghist_histspec s0 = {0};
    joint_case(&a, &b, &m, sa, s0, "host bands, u16 x u8, mask");
    img c = make_img(IMGHIST_U8, w, h, 7, 5, F_CORRELATED, &b);
    joint_case(&c, &b, NULL, s0, s0, "host bands, u8 natural");
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0));
    free_img(&a);
    free_img(&b);
    free_img(&c);
    free_img(&m);
}

/* Large cell counts (global counters): 4096 x 4096 bins of U16. */
static void test_joint_many_cells(void **state)
{
    (void)state;
    img a = make_img(IMGHIST_U16, 513, 77, 0, 0, F_UNIFORM, NULL);
    img b = make_img(IMGHIST_U16, 513, 77, 1, 2, F_CORRELATED, &a);
    imghist_histspec s = {.bins = 4096, .lo = 0, .hi = 65536, .flags = IMGHIST_OUTLIERS};
    imghist_histspec sb = {.bins = 4096, .lo = 0, .hi = 65536};
    joint_case(&a, &b, NULL, s, sb, "4096 x 4096 cells");
    free_img(&a);
    free_img(&b);
}

/* ---- mutual information ---- */

static double rel_err(double a, double b)
{
    const double d = fabs(a - b), m = fmax(fabs(a), fabs(b));
    return m == 0 ? d : d / m;
}

/* Device MI (device and host results, device and host joints) vs the host
 * function; returns the host's result. */
static void mi_check(const uint64_t *joint, uint32_t na, uint32_t nb, double host[2])
{
    const size_t n = (size_t)na * nb;
    imghist_counts hj = {.data = (uint64_t *)joint, .len = n, .mem = IMGHIST_MEM_HOST};
    IH_OK(cpu, imghist_mutual_information(cpu, &hj, na, nb, host, IMGHIST_MEM_HOST));
    uint64_t *dj = NULL;
    double *dres = NULL;
    CUDA_OK(cudaMalloc((void **)&dj, n * 8));
    CUDA_OK(cudaMalloc((void **)&dres, 16));
    CUDA_OK(cudaMemcpy(dj, joint, n * 8, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
    imghist_counts dc = {.data = dj, .len = n, .mem = IMGHIST_MEM_DEVICE};
    double total = 0, hab = 0; /* H(A,B) in bits, the plain sum */
    for (size_t i = 0; i < n; i++) {
        total += (double)joint[i];
    }
    for (size_t i = 0; i < n; i++) {
        if (joint[i] != 0) {
            hab -= (double)joint[i] / total * log2((double)joint[i] / total);
        }
    }
    for (int mode = 0; mode < 3; mode++) {
        double got[2] = {-1, -1};
        if (mode == 0) {
            IH_OK(gpu, imghist_mutual_information(gpu, &dc, na, nb, dres, IMGHIST_MEM_DEVICE));
            gpu_sync();
            CUDA_OK(cudaMemcpy(got, dres, 16, cudaMemcpyDeviceToHost));
        } else if (mode == 1) {
            IH_OK(gpu, imghist_mutual_information(gpu, &dc, na, nb, got, IMGHIST_MEM_HOST));
        } else {
            IH_OK(gpu, imghist_mutual_information(gpu, &hj, na, nb, dres, IMGHIST_MEM_DEVICE));
            gpu_sync();
            CUDA_OK(cudaMemcpy(got, dres, 16, cudaMemcpyDeviceToHost));
        }
        /* MI is a difference of entropies: its error scales with them. */
        const double scale = fmax(fabs(host[0]), log2((double)n + 1));
        /* NMI = (H(A) + H(B)) / H(A,B): the entropies' error over H(A,B), which
         * a joint with one dominant cell makes tiny (a random 2x2 joint gave
         * MI 3.6e-15 and NMI 1 + 1.8e-9 on the host, 0 and 1 on the GPU). */
        const double nmi_ok = hab > 0 ? 1e-12 * fmax(1.0, scale / hab) : 1e-12;
        if (fabs(got[0] - host[0]) > 1e-12 * scale ||
            (hab > 0 ? fabs(got[1] - host[1]) > nmi_ok * fmax(1.0, fabs(host[1]))
                     : rel_err(got[1], host[1]) > 1e-12)) {
            fail_msg("MI %ux%u mode %d: host %.17g %.17g, GPU %.17g %.17g", na, nb, mode,
                     host[0], host[1], got[0], got[1]);
        }
    }
    cudaFree(dj);
    cudaFree(dres);
}

static void test_mutual_information(void **state)
{
    (void)state;
    /* MI of an image with itself = its entropy; independent noise ~ 0. */
    const uint32_t w = 1000, h = quick ? 200 : 1000;
    img a = make_img(IMGHIST_U8, w, h, 0, 0, F_UNIFORM, NULL);
    img b = make_img(IMGHIST_U8, w, h, 0, 0, F_UNIFORM, NULL);
    uint64_t *joint = calloc(65536, 8), hist[256];
    assert_non_null(joint);
    imghist_counts dj = {.data = NULL, .len = 65536, .mem = IMGHIST_MEM_DEVICE};
    CUDA_OK(cudaMalloc((void **)&dj.data, 65536 * 8));
    imghist_histspec s0 = {0};
    IH_OK(gpu, imghist_histogram2d(gpu, &a.d, &a.d, &s0, &s0, &dj));
    gpu_sync();
    CUDA_OK(cudaMemcpy(joint, dj.data, 65536 * 8, cudaMemcpyDeviceToHost));
    double r[2];
    mi_check(joint, 256, 256, r);
    imghist_counts hc = {.data = hist, .len = 256, .mem = IMGHIST_MEM_HOST};
    IH_OK(cpu, imghist_histogram(cpu, &a.h, NULL, &hc));
    double ent = 0, n = (double)w * h;
    for (int i = 0; i < 256; i++) {
        if (hist[i]) ent -= hist[i] / n * log2(hist[i] / n);
    }
    assert_true(fabs(r[0] - ent) < 1e-9);
    assert_true(fabs(r[1] - 2.0) < 1e-9);
    IH_OK(gpu, imghist_histogram2d(gpu, &a.d, &b.d, &s0, &s0, &dj));
    gpu_sync();
    CUDA_OK(cudaMemcpy(joint, dj.data, 65536 * 8, cudaMemcpyDeviceToHost));
    mi_check(joint, 256, 256, r);
    /* Expected bias about (255^2) / (2 N ln 2) bits. */
    assert_true(r[0] > 0 && r[0] < 3.0 * 65025 / (2 * n * log(2)));
    /* Shapes: thin, wide, odd, one cell, constant. */
    const uint32_t shapes[][2] = {{1, 1}, {1, 5000}, {5000, 1}, {3, 31}, {31, 33}, {300, 7}, {2, 2}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const uint32_t na = shapes[k][0], nb = shapes[k][1];
        uint64_t *j = calloc((size_t)na * nb, 8);
        for (size_t i = 0; i < (size_t)na * nb; i++) {
            j[i] = tu_below(&rng, 3) ? tu_next(&rng) >> 40 : 0;
        }
        j[0] += 1; /* not empty */
        mi_check(j, na, nb, r);
        free(j);
    }
    /* Empty: NaN on the device, refused with a host result. */
    memset(joint, 0, 65536 * 8);
    CUDA_OK(cudaMemset(dj.data, 0, 65536 * 8));
    CUDA_OK(cudaDeviceSynchronize());
    double *dres = NULL;
    CUDA_OK(cudaMalloc((void **)&dres, 16));
    IH_OK(gpu, imghist_mutual_information(gpu, &dj, 256, 256, dres, IMGHIST_MEM_DEVICE));
    gpu_sync();
    CUDA_OK(cudaMemcpy(r, dres, 16, cudaMemcpyDeviceToHost));
    assert_true(isnan(r[0]) && isnan(r[1]));
    assert_int_equal(imghist_mutual_information(gpu, &dj, 256, 256, r, IMGHIST_MEM_HOST),
                     IMGHIST_E_INVALID_ARG);
    cudaFree(dres);
    cudaFree(dj.data);
    free(joint);
    free_img(&a);
    free_img(&b);
}

/* ---- equalization ---- */

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

int main(void)
{
    quick = su_quick();
    const int open_rc = su_open_gpu_suite("GPU joint suite", &gpu, &cpu);
    if (open_rc != 0) {
        return open_rc;
    }
    tu_seed(&rng, tu_fresh_seed("test_gpu_joint"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joint_type_pairs),
        cmocka_unit_test(test_joint_u8_natural),
        cmocka_unit_test(test_joint_wraps),
        cmocka_unit_test(test_joint_host_bands),
        cmocka_unit_test(test_joint_many_cells),
        cmocka_unit_test(test_mutual_information),
        cmocka_unit_test(test_equalize_u16),
        cmocka_unit_test(test_equalize_masked),
        cmocka_unit_test(test_equalize_bands_and_empty_mask),
    };
    const int rc = cmocka_run_group_tests(tests, NULL, NULL);
    imghist_destroy(cpu);
    imghist_destroy(gpu);
    return rc;
}
