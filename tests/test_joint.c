/*
 * imghist_histogram2d and imghist_mutual_information on the backend under
 * test against the reference of ref_hist.h and entropies computed here. The
 * cuda run adds test_joint_cuda.c, the CUDA backend against the CPU.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"
#include "backend_suite.h"
#include "ref_hist.h"
#include "test_util.h"
#include "views.h"

static void test_joint_against_reference(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 4; threads += 3) {
        imghist_ctx *ctx = test_ctx(threads);
        enum { W = 613, H = 517 };
        uint8_t *a = malloc(W * H);
        float *b = malloc(sizeof *b * W * H);
        uint8_t *m = malloc(W * H);
        assert_true(a && b && m);
        for (size_t i = 0; i < (size_t)W * H; i++) {
            a[i] = (uint8_t)tu_below(&rng, 256);
            b[i] = tu_below(&rng, 50) == 0 ? NAN : (float)(a[i] / 255.0 + (tu_below(&rng, 100) - 50) * 1e-3);
            m[i] = (uint8_t)tu_below(&rng, 2);
        }
        const imghist_view va = {.data = a, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W, .channels = 1};
        const imghist_view vb = {.data = b, .dtype = IMGHIST_F32, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W * 4, .channels = 1};
        const imghist_view vm = {.data = m, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
            .width = W, .height = H, .pitch = W, .channels = 1};
        const imghist_histspec sa = {64, 0, 256, IMGHIST_OUTLIERS};
        const imghist_histspec sb = {50, 0.0, 1.0, 0};
        const ref_spec ra = {64, 0, 256, 0, 1, 0}, rb = {50, 0.0, 1.0, 0, 0, 0};
        double *ea = ref_edges(&ra), *eb = ref_edges(&rb);
        for (int masked = 0; masked < 2; masked++) {
            uint64_t *want = calloc(64 * 50 + 1, sizeof *want), *got = malloc(sizeof *got * (64 * 50 + 1));
            for (size_t i = 0; i < (size_t)W * H; i++) {
                if (masked && !m[i]) continue;
                const uint32_t i1 = ref_bin(&ra, ea, a[i]), i2 = ref_bin(&rb, eb, b[i]);
                if (i1 < 64 && i2 < 50) want[i1 * 50 + i2]++; else want[64 * 50]++;
            }
            const imghist_counts out = {got, 64 * 50 + 1, IMGHIST_MEM_HOST};
            const imghist_view vam = vw_masked(va, masked ? &vm : NULL);
            EXPECT(ctx, imghist_histogram2d(ctx, &vam, &vb, &sa, &sb, &out), IMGHIST_OK);
            assert_memory_equal(got, want, sizeof *got * (64 * 50 + 1));
            /* b's mask is not read: a's selects the pixels. */
            const imghist_view vbm = vw_masked(vb, masked ? NULL : &vm);
            EXPECT(ctx, imghist_histogram2d(ctx, &vam, &vbm, &sa, &sb, &out), IMGHIST_OK);
            assert_memory_equal(got, want, sizeof *got * (64 * 50 + 1));
            free(want);
            free(got);
        }
        free(ea);
        free(eb);
        /* Refusals: sizes, channels, short buffers, flags on the second spec. */
        uint64_t c[64 * 50 + 1];
        const imghist_counts out = {c, 64 * 50, IMGHIST_MEM_HOST};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, &sa, &sb, &out), IMGHIST_E_BUFSIZE);
        imghist_view small = vb;
        small.width = W - 1;
        const imghist_counts out2 = {c, 64 * 50 + 1, IMGHIST_MEM_HOST};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &small, &sa, &sb, &out2),
               IMGHIST_E_INVALID_ARG);
        const imghist_histspec sb_acc = {50, 0.0, 1.0, IMGHIST_ACCUMULATE};
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, &sa, &sb_acc, &out2),
               IMGHIST_E_INVALID_ARG);
        const imghist_view two = vw_tensor(va, 2, 0);
        EXPECT(ctx, imghist_histogram2d(ctx, &two, &vb, &sa, &sb, &out2), IMGHIST_E_INVALID_ARG);
        EXPECT(ctx, imghist_histogram2d(ctx, &va, &two, &sa, &sb, &out2), IMGHIST_E_INVALID_ARG);
        const imghist_histspec big = {5000, 0, 1, 0};
        EXPECT(ctx, imghist_histogram2d(ctx, &vb, &vb, &big, &big, &out2),
               IMGHIST_E_INVALID_ARG);
        free(a);
        free(b);
        free(m);
        imghist_destroy(ctx);
    }
}

static double entropy_of(const uint64_t *h, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += h[i];
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        if (h[i]) {
            const double p = (double)h[i] / total;
            e -= p * log2(p);
        }
    }
    return e;
}

static void test_mutual_information(void **state)
{
    (void)state;
    imghist_ctx *ctx = test_ctx(2);
    enum { W = 1000, H = 700 };
    uint8_t *a = malloc(W * H), *b = malloc(W * H);
    uint64_t *joint = malloc(sizeof *joint * 65536);
    assert_true(a && b && joint);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        a[i] = (uint8_t)(tu_below(&rng, 200) + (i % W) / 20); /* not uniform */
        b[i] = (uint8_t)tu_below(&rng, 256);
    }
    const imghist_view va = {.data = a, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_view vb = {.data = b, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST, .width = W,
        .height = H, .pitch = W, .channels = 1};
    const imghist_counts jc = {joint, 65536, IMGHIST_MEM_HOST};
    double r[2];

    /* With itself: MI = H(A), NMI = 2. */
    EXPECT(ctx, imghist_histogram2d(ctx, &va, &va, NULL, NULL, &jc), IMGHIST_OK);
    EXPECT(ctx, imghist_mutual_information(ctx, &jc, 256, 256, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    uint64_t ha[256];
    const imghist_counts hc = {ha, 256, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_histogram(ctx, &va, NULL, &hc), IMGHIST_OK);
    const double h = entropy_of(ha, 256);
    assert_true(h > 7.0);
    assert_true(fabs(r[0] - h) < 1e-9 * h);
    assert_true(fabs(r[1] - 2.0) < 1e-12);

    /* Independent noise: MI close to 0 (the bias of the plug-in estimator is
     * about (255 * 255) / (2 N ln 2) = 0.067 bits here), NMI close to 1. */
    EXPECT(ctx, imghist_histogram2d(ctx, &va, &vb, NULL, NULL, &jc), IMGHIST_OK);
    EXPECT(ctx, imghist_mutual_information(ctx, &jc, 256, 256, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(r[0] >= 0.0 && r[0] < 0.1);
    assert_true(r[1] > 1.0 && r[1] < 1.01);

    /* A 2x2 table by hand: n = [[2, 0], [0, 2]] -> MI 1 bit, NMI 2;
     * [[1, 1], [1, 1]] -> MI 0, NMI (1 + 1) / 2 = 1. */
    const uint64_t diag[4] = {2, 0, 0, 2}, flat[4] = {1, 1, 1, 1};
    const imghist_counts dc = {(uint64_t *)diag, 4, IMGHIST_MEM_HOST};
    const imghist_counts fc = {(uint64_t *)flat, 4, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_mutual_information(ctx, &dc, 2, 2, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(fabs(r[0] - 1.0) < 1e-15 && fabs(r[1] - 2.0) < 1e-15);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 2, r, IMGHIST_MEM_HOST), IMGHIST_OK);
    assert_true(fabs(r[0]) < 1e-15 && fabs(r[1] - 1.0) < 1e-15);

    const uint64_t zero[4] = {0};
    const imghist_counts zc = {(uint64_t *)zero, 4, IMGHIST_MEM_HOST};
    EXPECT(ctx, imghist_mutual_information(ctx, &zc, 2, 2, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 3, r, IMGHIST_MEM_HOST),
           IMGHIST_E_BUFSIZE);
    EXPECT(ctx, imghist_mutual_information(ctx, &fc, 0, 3, r, IMGHIST_MEM_HOST),
           IMGHIST_E_INVALID_ARG);
    if (!bs_on_cuda()) { /* a device result from a CPU context */
        EXPECT(ctx, imghist_mutual_information(ctx, &fc, 2, 2, r, IMGHIST_MEM_DEVICE),
               IMGHIST_E_UNSUPPORTED);
    }
    free(a);
    free(b);
    free(joint);
    imghist_destroy(ctx);
}

/* ---- equalization ---- */

static int setup(void **state)
{
    (void)state;
    tu_seed(&rng, tu_fresh_seed("test_joint"));
    return 0;
}

static const bs_test tests[] = {
    BS_TEST(test_joint_against_reference),
    BS_TEST(test_mutual_information),
};

const bs_part joint_part = BS_PART("joint", tests, setup, NULL);

extern const bs_part joint_part;
extern const bs_part joint_cuda_part;

int main(int argc, char **argv)
{
    static const bs_part *const parts[] = {
        &joint_part,
#ifdef IH_CUDA_PARTS
        &joint_cuda_part,
#endif
    };
    return bs_main(argc, argv, "joint", parts, BS_COUNT(parts));
}
