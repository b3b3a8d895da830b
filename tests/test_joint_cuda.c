/*
 * The CUDA backend's joint histograms and mutual information against a CPU
 * context, bit for bit (mutual information to 1e-12: the device sums in
 * another order), a part of test_joint, cuda run only. Fresh random sizes,
 * pitches, base offsets, bins and ranges every run (the seed is printed).
 * IMGHIST_TEST_QUICK=1: smaller cases, for compute-sanitizer.
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

static int setup(void **state)
{
    (void)state;
    BS_GPU_PART_STATE("test_joint_cuda");
    return 0;
}

static const bs_test tests[] = {
    BS_CUDA_TEST(test_joint_type_pairs),
    BS_CUDA_TEST(test_joint_u8_natural),
    BS_CUDA_TEST(test_joint_wraps),
    BS_CUDA_TEST(test_joint_host_bands),
    BS_CUDA_TEST(test_joint_many_cells),
    BS_CUDA_TEST(test_mutual_information),
};

const bs_part joint_cuda_part = BS_PART("joint cuda", tests, setup, NULL);
