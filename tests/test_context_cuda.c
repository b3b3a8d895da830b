/*
 * Contexts on the CUDA backend (a part of test_context, cuda run only):
 * device views and counts refused where they must be, host and device memory
 * mixed, the context's stream, contexts on every GPU, a CPU context refusing
 * device memory, the experimental parameters, the fall back to the CPU when
 * the GPU is out of memory for a host image, and a GPU fault (both in a child
 * process: the program run with --oom-child or --fault-child).
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

static void test_device_api_errors(void **state)
{
    (void)state;
    uint64_t h[BINS];
    const imghist_counts hc = counts_at(h, BINS, IMGHIST_MEM_HOST);
    const imghist_view bad = u8_view(NULL, IMGHIST_MEM_DEVICE, 10, 10, 10);
    IH_REFUSED(gpu, imghist_histogram(gpu, &bad, NULL, &hc), IMGHIST_E_INVALID_ARG);
    IH_REFUSED(gpu, imghist_histogram(gpu, NULL, NULL, &hc), IMGHIST_E_INVALID_ARG);
    IH_REFUSED(gpu, imghist_histogram_list(gpu, &bad, 0, NULL, &hc), IMGHIST_E_INVALID_ARG);
    /* (Device views on a CPU context: test_cpu_context_refuses_device.) */
}

/*
 * Host and device calls mixed on one CUDA context. The device call (on a
 * user stream made the context's) is still queued behind a 64 MB upload when
 * the host-view call comes; the host call must be ordered after it on the same
 * stream, or the two would share the context's GPU scratch (workspace, LUT)
 * at the same time: both results must equal the CPU's. Round r: a device
 * histogram (r % 2 == 0) or equalize (with its histogram), then a host
 * histogram (r % 4 < 2) or equalize.
 */
static void test_mixed_host_device(void **state)
{
    (void)state;
    const uint32_t w = quick ? 2047 : 8191, h = quick ? 2048 : 8192; /* 4 or 64 MB */
    const size_t pitch = (size_t)w + 65;
    const unsigned off = 3;
    const size_t bytes = off + pitch * (h - 1) + w;
    uint8_t *pinned, *dsrc_base, *ddst_base;
    uint64_t *d_counts;
    /* Pinned, so that the upload is asynchronous and keeps the stream busy. */
    CUDA_OK(cudaMallocHost((void **)&pinned, pitch * h));
    memset(pinned, 0xfd, pitch * h);
    CUDA_OK(cudaMalloc((void **)&dsrc_base, bytes));
    CUDA_OK(cudaMalloc((void **)&ddst_base, bytes));
    CUDA_OK(cudaMalloc((void **)&d_counts, BINS * sizeof(uint64_t)));
    poison_device(dsrc_base, 0xfd, bytes); /* padding that must never be counted */
    uint8_t *const dsrc = dsrc_base + off, *const ddst = ddst_base + off;
    uint8_t *want_eq = malloc(pitch * h), *got_eq = malloc(pitch * h);
    assert_non_null(want_eq);
    assert_non_null(got_eq);
    /* The host image of the host-view calls. */
    const uint32_t hw = 3001, hh = 1999;
    const size_t hp = 3008;
    uint8_t *himg = malloc(hp * hh), *hout = malloc(hp * hh), *hwant = malloc(hp * hh);
    assert_non_null(himg);
    assert_non_null(hout);
    assert_non_null(hwant);
    memset(himg, 0xfd, hp * hh);

    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    IH_OK(gpu, imghist_set_stream(gpu, s));
    const imghist_view ref_v = u8_view(pinned, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view want_eq_v = u8_view(want_eq, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view dsrc_v = u8_view(dsrc, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view ddst_v = u8_view(ddst, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view host_v = u8_view(himg, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_view hout_v = u8_view(hout, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_view hwant_v = u8_view(hwant, IMGHIST_MEM_HOST, hw, hh, hp);
    const imghist_counts dc = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);

    for (int round = 0; round < 8; round++) {
        const int eq = round % 2, host_eq = round % 4 >= 2;
        fill_image(pinned, pitch, w, h, (enum pattern)(round % N_PATTERNS));
        fill_image(himg, hp, hw, hh, (enum pattern)((round + 3) % N_PATTERNS));
        uint64_t want_d[BINS], want_h[BINS], got_d[BINS], got_h[BINS];
        if (eq) {
            const imghist_counts c = counts_at(want_d, BINS, IMGHIST_MEM_HOST);
            IH_OK(cpu, imghist_equalize(cpu, &ref_v, &want_eq_v, IMGHIST_EQ_OPENCV, &c));
        } else {
            cpu_hist(&ref_v, want_d);
        }
        if (host_eq) {
            const imghist_counts c = counts_at(want_h, BINS, IMGHIST_MEM_HOST);
            IH_OK(cpu, imghist_equalize(cpu, &host_v, &hwant_v, IMGHIST_EQ_OPENCV, &c));
        } else {
            cpu_hist(&host_v, want_h);
        }
        memset(got_h, 0xa5, sizeof got_h);

        /* All queued on s, nothing waited for: poisons, the upload, the device call. */
        CUDA_OK(cudaMemsetAsync(d_counts, 0xa5, BINS * sizeof(uint64_t), s));
        CUDA_OK(cudaMemsetAsync(ddst_base, 0xfd, bytes, s));
        CUDA_OK(cudaMemcpy2DAsync(dsrc, pitch, pinned, pitch, w, h, cudaMemcpyHostToDevice, s));
        if (eq) {
            IH_OK(gpu, imghist_equalize(gpu, &dsrc_v, &ddst_v, IMGHIST_EQ_OPENCV, &dc));
        } else {
            IH_OK(gpu, imghist_histogram(gpu, &dsrc_v, NULL, &dc));
        }
        /* Only to report whether the overlap happened (not under the sanitizers,
         * which may count the not-ready answer as an API error). */
        cudaError_t busy = cudaSuccess;
        if (!quick) {
            busy = cudaStreamQuery(s);
            (void)cudaGetLastError();
        }
        const imghist_counts hc = counts_at(got_h, BINS, IMGHIST_MEM_HOST);
        if (host_eq) {
            IH_OK(gpu, imghist_equalize(gpu, &host_v, &hout_v, IMGHIST_EQ_OPENCV, &hc));
        } else {
            IH_OK(gpu, imghist_histogram(gpu, &host_v, NULL, &hc));
        }
        CUDA_OK(cudaStreamSynchronize(s));
        printf("round %d: device %s, then host %s; stream %s when the host call came\n", round,
               eq ? "equalize" : "histogram", host_eq ? "equalize" : "histogram",
               quick ? "not queried" : busy == cudaErrorNotReady ? "busy" : "idle");

        CUDA_OK(cudaMemcpy(got_d, d_counts, sizeof got_d, cudaMemcpyDeviceToHost));
        assert_memory_equal(got_h, want_h, sizeof want_h);
        assert_memory_equal(got_d, want_d, sizeof want_d);
        for (uint32_t y = 0; host_eq && y < hh; y++) {
            if (memcmp(hout + (size_t)y * hp, hwant + (size_t)y * hp, hw) != 0) {
                fail_msg("round %d: host equalized row %u differs", round, y);
            }
        }
        if (eq) {
            CUDA_OK(cudaMemcpy2D(got_eq, pitch, ddst, pitch, w, h, cudaMemcpyDeviceToHost));
            for (uint32_t y = 0; y < h; y++) {
                if (memcmp(got_eq + (size_t)y * pitch, want_eq + (size_t)y * pitch, w) != 0) {
                    fail_msg("round %d: equalized row %u differs", round, y);
                }
            }
        }
    }
    IH_OK(gpu, imghist_set_stream(gpu, own_stream));
    CUDA_OK(cudaStreamDestroy(s));
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(dsrc_base));
    CUDA_OK(cudaFree(ddst_base));
    CUDA_OK(cudaFree(d_counts));
    free(want_eq);
    free(got_eq);
    free(himg);
    free(hout);
    free(hwant);
}

/*
 * imghist_set_stream / imghist_get_stream. Then the switch: an upload (the
 * caller's own work) and an equalization queued on stream A, set_stream(B),
 * then on B the histograms of A's output and of A's upload. Only B is
 * synchronised: B's calls see A's data only if the library ordered B after A,
 * and A's results are complete only then too (both streams are non-blocking,
 * so the plain copies that read the results wait for neither).
 */
static void test_set_get_stream(void **state)
{
    (void)state;
    imghist_stream got = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &got));
    assert_ptr_equal(got, own_stream);
    assert_non_null(own_stream); /* a CUDA context starts on a stream of its own */

    cudaStream_t a, b;
    CUDA_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
    const imghist_stream seq[] = {a, NULL, b, a, own_stream};
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        IH_OK(gpu, imghist_set_stream(gpu, seq[i]));
        got = (imghist_stream)(uintptr_t)1;
        IH_OK(gpu, imghist_get_stream(gpu, &got));
        assert_ptr_equal(got, seq[i]);
    }

    const uint32_t w = quick ? 2047 : 8191, h = quick ? 2048 : 8192; /* 4 or 64 MB */
    const size_t pitch = (size_t)w + 1;
    const size_t bytes = pitch * h;
    uint8_t *pinned, *dsrc, *ddst;
    /* Counts: [0] A's equalize histogram, [1] B's of A's output, [2] B's of the upload. */
    uint64_t *d_counts;
    CUDA_OK(cudaMallocHost((void **)&pinned, bytes));
    CUDA_OK(cudaMalloc((void **)&dsrc, bytes));
    CUDA_OK(cudaMalloc((void **)&ddst, bytes));
    CUDA_OK(cudaMalloc((void **)&d_counts, 3 * BINS * sizeof(uint64_t)));
    uint8_t *want_eq = malloc(bytes), *got_eq = malloc(bytes);
    assert_non_null(want_eq);
    assert_non_null(got_eq);
    memset(pinned, 0, bytes);
    const imghist_view ref_v = u8_view(pinned, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view want_eq_v = u8_view(want_eq, IMGHIST_MEM_HOST, w, h, pitch);
    const imghist_view src_v = u8_view(dsrc, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_view dst_v = u8_view(ddst, IMGHIST_MEM_DEVICE, w, h, pitch);
    const imghist_counts c0 = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);
    const imghist_counts c1 = counts_at(d_counts + BINS, BINS, IMGHIST_MEM_DEVICE);
    const imghist_counts c2 = counts_at(d_counts + 2 * BINS, BINS, IMGHIST_MEM_DEVICE);

    const enum pattern pats[] = {NORMALISH, MULT4_64, PHOTO, RUNS};
    for (size_t round = 0; round < sizeof pats / sizeof pats[0]; round++) {
        fill_image(pinned, pitch, w, h, pats[round]);
        uint64_t want[3][BINS], gotc[3][BINS];
        const imghist_counts wc0 = counts_at(want[0], BINS, IMGHIST_MEM_HOST);
        IH_OK(cpu, imghist_equalize(cpu, &ref_v, &want_eq_v, IMGHIST_EQ_OPENCV, &wc0));
        cpu_hist(&want_eq_v, want[1]);
        memcpy(want[2], want[0], sizeof want[0]);

        IH_OK(gpu, imghist_set_stream(gpu, a));
        /* Stale data in every output: a call ordered wrongly reads or leaves it. */
        CUDA_OK(cudaMemsetAsync(d_counts, 0xa5, 3 * BINS * sizeof(uint64_t), a));
        CUDA_OK(cudaMemsetAsync(ddst, 0, bytes, a));
        CUDA_OK(cudaMemsetAsync(dsrc, 0, bytes, a));
        CUDA_OK(cudaMemcpyAsync(dsrc, pinned, bytes, cudaMemcpyHostToDevice, a));
        IH_OK(gpu, imghist_equalize(gpu, &src_v, &dst_v, IMGHIST_EQ_OPENCV, &c0));
        IH_OK(gpu, imghist_set_stream(gpu, b));
        IH_OK(gpu, imghist_histogram(gpu, &dst_v, NULL, &c1));
        IH_OK(gpu, imghist_histogram(gpu, &src_v, NULL, &c2));
        CUDA_OK(cudaStreamSynchronize(b)); /* B only */

        CUDA_OK(cudaMemcpy(gotc, d_counts, sizeof gotc, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(got_eq, ddst, bytes, cudaMemcpyDeviceToHost));
        if (memcmp(gotc[0], want[0], sizeof want[0]) != 0) {
            fail_msg("round %zu: the equalize histogram queued on A differs", round);
        }
        if (memcmp(gotc[1], want[1], sizeof want[1]) != 0) {
            fail_msg("round %zu: B's histogram of A's equalized output differs", round);
        }
        if (memcmp(gotc[2], want[2], sizeof want[2]) != 0) {
            fail_msg("round %zu: B's histogram of the upload queued on A differs", round);
        }
        for (uint32_t y = 0; y < h; y++) {
            if (memcmp(got_eq + (size_t)y * pitch, want_eq + (size_t)y * pitch, w) != 0) {
                fail_msg("round %zu: equalized row %u differs", round, y);
            }
        }
    }
    IH_OK(gpu, imghist_set_stream(gpu, own_stream));
    CUDA_OK(cudaStreamDestroy(a));
    CUDA_OK(cudaStreamDestroy(b));
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(dsrc));
    CUDA_OK(cudaFree(ddst));
    CUDA_OK(cudaFree(d_counts));
    free(want_eq);
    free(got_eq);
}

/*
 * Contexts on a chosen GPU (imghist_create's device), as the CLI's --gpus
 * makes them: every GPU there is, and two contexts sharing GPU 0, each on its
 * own stream, give the CPU's bits for host and device images; each call
 * leaves the calling thread's current device as it was; device -1 is the
 * calling thread's current GPU; an index past the last GPU is refused.
 */
static void test_create_on_devices(void **state)
{
    (void)state;
    int count = 0;
    IH_OK(NULL, imghist_device_count(&count));
    assert_true(count >= 1);
    const uint32_t w = 1531, h = 977;
    uint8_t *img = malloc((size_t)w * h);
    assert_non_null(img);
    for (size_t i = 0; i < (size_t)w * h; i++) img[i] = (uint8_t)tu_below(&rng, 256);
    const imghist_view hv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    uint64_t want[BINS], got[BINS];
    IH_OK(cpu, imghist_histogram(cpu, &hv, NULL, &(imghist_counts){want, BINS, IMGHIST_MEM_HOST}));
    /* Slots as --gpus 0,0,1,...: GPU 0 twice, then every other GPU. */
    const int n = count + 1;
    for (int k = 0; k < n; k++) {
        const int d = k == 0 ? 0 : k - 1;
        int before = -1, after = -1, dev = -1;
        CUDA_OK(cudaGetDevice(&before));
        imghist_ctx *ctx = NULL;
        IH_OK(ctx, imghist_create(IMGHIST_BACKEND_CUDA, d, &ctx));
        IH_OK(ctx, imghist_get_device(ctx, &dev));
        assert_int_equal(dev, d);
        memset(got, 0xff, sizeof got);
        IH_OK(ctx,
              imghist_histogram(ctx, &hv, NULL, &(imghist_counts){got, BINS, IMGHIST_MEM_HOST}));
        assert_memory_equal(got, want, sizeof want);
        /* A device image on that GPU, counted into device memory. */
        CUDA_OK(cudaSetDevice(d));
        void *dimg = NULL, *dhist = NULL;
        CUDA_OK(cudaMalloc(&dimg, (size_t)w * h));
        CUDA_OK(cudaMalloc(&dhist, sizeof got));
        CUDA_OK(cudaMemcpy(dimg, img, (size_t)w * h, cudaMemcpyHostToDevice));
        /* A copy from pageable memory may still be in flight when cudaMemcpy
         * returns, and the context's stream does not wait for the legacy one. */
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaSetDevice(before));
        const imghist_view dv = u8_view(dimg, IMGHIST_MEM_DEVICE, w, h, w);
        IH_OK(ctx, imghist_histogram(ctx, &dv, NULL,
                                     &(imghist_counts){dhist, BINS, IMGHIST_MEM_DEVICE}));
        imghist_stream st = NULL;
        IH_OK(ctx, imghist_get_stream(ctx, &st));
        CUDA_OK(cudaSetDevice(d));
        CUDA_OK(cudaStreamSynchronize((cudaStream_t)st));
        CUDA_OK(cudaMemcpy(got, dhist, sizeof got, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaFree(dimg));
        CUDA_OK(cudaFree(dhist));
        CUDA_OK(cudaSetDevice(before));
        assert_memory_equal(got, want, sizeof want);
        CUDA_OK(cudaGetDevice(&after));
        assert_int_equal(after, before);
        imghist_destroy(ctx);
        CUDA_OK(cudaGetDevice(&after));
        assert_int_equal(after, before);
    }
    for (int d = 0; d < count; d++) {
        int before = -1, dev = -2;
        CUDA_OK(cudaGetDevice(&before));
        CUDA_OK(cudaSetDevice(d));
        imghist_ctx *cur = NULL;
        IH_OK(cur, imghist_create(IMGHIST_BACKEND_CUDA, -1, &cur));
        IH_OK(cur, imghist_get_device(cur, &dev));
        assert_int_equal(dev, d);
        imghist_destroy(cur);
        CUDA_OK(cudaSetDevice(before));
    }
    imghist_ctx *bad = NULL;
    IH_REFUSED(bad, imghist_create(IMGHIST_BACKEND_CUDA, count, &bad), IMGHIST_E_INVALID_ARG);
    imghist_destroy(bad);
    bad = NULL;
    IH_REFUSED(bad, imghist_create(IMGHIST_BACKEND_CUDA, -2, &bad), IMGHIST_E_INVALID_ARG);
    imghist_destroy(bad);
    free(img);
}

static void test_cpu_context_refuses_device(void **state)
{
    (void)state;
    img_t im = make_image(64, 32, 80, 0, UNIFORM);
    uint8_t *d_out;
    uint64_t *d_counts, h[2 * BINS];
    CUDA_OK(cudaMalloc((void **)&d_out, im.pitch * im.h));
    CUDA_OK(cudaMalloc((void **)&d_counts, 2 * BINS * sizeof(uint64_t)));
    uint8_t *out = malloc(im.pitch * im.h);
    const imghist_view d_out_v = u8_view(d_out, IMGHIST_MEM_DEVICE, im.w, im.h, im.pitch);
    const imghist_view out_v = u8_view(out, IMGHIST_MEM_HOST, im.w, im.h, im.pitch);
    const imghist_counts hc = counts_at(h, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hc2 = counts_at(h, 2 * BINS, IMGHIST_MEM_HOST);
    const imghist_counts dc = counts_at(d_counts, BINS, IMGHIST_MEM_DEVICE);
    const imghist_view dv2[2] = {im.dv, im.dv};

    IH_REFUSED(cpu, imghist_histogram(cpu, &im.dv, NULL, &hc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram(cpu, &im.dv, NULL, &dc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram(cpu, &im.hv, NULL, &dc), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_histogram_list(cpu, dv2, 2, NULL, &hc2), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_equalize(cpu, &im.dv, &d_out_v, IMGHIST_EQ_OPENCV, NULL),
               IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_equalize(cpu, &im.hv, &out_v, IMGHIST_EQ_OPENCV, &dc),
               IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_set_stream(cpu, own_stream), IMGHIST_E_UNSUPPORTED);
    IH_REFUSED(cpu, imghist_set_stream(cpu, NULL), IMGHIST_E_UNSUPPORTED);
    /* The context still works on host memory. */
    IH_OK(cpu, imghist_histogram(cpu, &im.hv, NULL, &hc));
    CUDA_OK(cudaFree(d_out));
    CUDA_OK(cudaFree(d_counts));
    free(out);
    free_image(&im);
}

/* A small batch of device views against the naive histogram. */
static void check_small_batch(void)
{
    enum { N = 20 };
    img_t im[N];
    imghist_view dv[N];
    uint64_t want[N * BINS], got[N * BINS];
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&rng, i % 5 == 0 ? 2000 : 200);
        const uint32_t h = 1 + tu_below(&rng, 100);
        im[i] = make_image(w, h, w + tu_below(&rng, 9), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        dv[i] = im[i].dv;
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + BINS * i);
    }
    memset(got, 0xa5, sizeof got);
    const imghist_counts hc = counts_at(got, N * BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram_list(gpu, dv, N, NULL, &hc));
    gpu_sync();
    assert_memory_equal(got, want, sizeof want);
    for (int i = 0; i < N; i++) {
        free_image(&im[i]);
    }
}

/* The experimental tuning knobs change the launch, never the result: one
 * histogram block per SM gives the CPU's bits for single images (small and
 * large), batches and equalization. (The batch run lengths 1, 3 and 16 are
 * in test_batch_mixed_sizes.) */
static void test_experimental_params(void **state)
{
    (void)state;
    int64_t lo = -1, hi = -1, v = -1;
    IH_OK(gpu, imghist_param_bounds(IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &lo, &hi));
    assert_true(lo <= 0 && hi >= 1);
    IH_OK(gpu, imghist_param_bounds(IMGHIST_P_EXP_BATCH_RUN, &lo, &hi));
    assert_true(lo <= 0 && hi >= 16);

    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 1));
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &v));
    assert_int_equal(v, 1);
    for (int iter = 0; iter < (quick ? 5 : 20); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 5000 : 300);
        const uint32_t h = 1 + tu_below(&rng, 200);
        check_hist_case(w, h, w + tu_below(&rng, 40), tu_below(&rng, 16),
                        (enum pattern)(iter % N_PATTERNS));
    }
    check_hist_case(4099, quick ? 307 : 4001, 4099, 7, NORMALISH);
    check_equalize_case(3001, quick ? 53 : 1003, 3008, 1, 3008, 1, PHOTO, 0);
    check_equalize_case(777, 333, 800, 3, 0, 0, MULT32, 1);
    check_small_batch();
    IH_OK(gpu, imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 0));
    IH_OK(gpu, imghist_get_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, &v));
    assert_int_equal(v, 0);
}

/*
 * Run this program again with `flag`, echo what it prints and return its wait
 * status. A process of its own: a GPU fault poisons the CUDA context for good
 * and an exhausted GPU would starve the other tests, and a forked copy of this
 * process could not use CUDA at all.
 */
static int run_child(const char *flag)
{
    char self[4096], cmd[4300];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_null(strchr(self, '\''));
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", self, flag);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[600];
    while (fgets(line, sizeof line, p) != NULL) {
        printf("  child: %s", line);
    }
    return pclose(p);
}

/*
 * The child of test_gpu_oom_fallback. With the context created first, it
 * takes nearly all free GPU memory with plain cudaMalloc, then asks for a host
 * image whose single row is larger than what is left: the library must run it
 * on the CPU, say so in the note, and give the CPU's bits. Once the memory is
 * back the GPU runs it again. Prints what it saw; exit 0 when all of that held.
 */
static int oom_child(void)
{
    imghist_ctx *ctx = NULL, *ref = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK ||
        imghist_create(IMGHIST_BACKEND_CPU, -1, &ref) != IMGHIST_OK) {
        printf("create: %s\n", imghist_last_error(ctx));
        return 2;
    }
    const uint32_t w = 8u << 20, h = 4; /* 8 MiB rows */
    const size_t n = (size_t)w * h;
    uint8_t *img = malloc(n), *out = malloc(n), *want = malloc(n);
    if (img == NULL || out == NULL || want == NULL) {
        printf("out of host memory\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        img[i] = (uint8_t)(((i * 2654435761u) >> 24) ^ (i / 100003));
    }
    const imghist_view iv = u8_view(img, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view ov = u8_view(out, IMGHIST_MEM_HOST, w, h, w);
    const imghist_view wv = u8_view(want, IMGHIST_MEM_HOST, w, h, w);
    uint64_t want_hist[BINS], hist[BINS];
    const imghist_counts wc = counts_at(want_hist, BINS, IMGHIST_MEM_HOST);
    const imghist_counts hc = counts_at(hist, BINS, IMGHIST_MEM_HOST);
    if (imghist_equalize(ref, &iv, &wv, IMGHIST_EQ_OPENCV, &wc) != IMGHIST_OK) {
        printf("CPU equalize: %s\n", imghist_last_error(ref));
        return 2;
    }

    /* Take the memory in ever smaller pieces; each failure is a non-sticky
     * error, cleared so that it cannot be mistaken for one of the library's. */
    enum { MAX_CHUNKS = 8192 };
    static void *chunks[MAX_CHUNKS];
    size_t nchunks = 0;
    const size_t sizes[] = {(size_t)1 << 30, (size_t)64 << 20, (size_t)1 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        while (nchunks < MAX_CHUNKS && cudaMalloc(&chunks[nchunks], sizes[s]) == cudaSuccess) {
            nchunks++;
        }
        (void)cudaGetLastError();
    }
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    printf("took %zu pieces; %zu bytes of %zu left\n", nchunks, free_b, total_b);
    int ok = 1;
    if (free_b >= w) {
        printf("a row (%u bytes) still fits: the fallback cannot be tested\n", w);
        ok = 0;
    }

    memset(hist, 0xa5, sizeof hist);
    imghist_status st = imghist_histogram(ctx, &iv, NULL, &hc);
    printf("histogram: %s: note '%s' %s\n", imghist_strerror(st), imghist_last_note(ctx),
           imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && strstr(imghist_last_note(ctx), "ran on the CPU") != NULL &&
          memcmp(hist, want_hist, sizeof hist) == 0;
    memset(hist, 0xa5, sizeof hist);
    memset(out, 0x5a, n);
    st = imghist_equalize(ctx, &iv, &ov, IMGHIST_EQ_OPENCV, &hc);
    printf("equalize: %s: note '%s' %s\n", imghist_strerror(st), imghist_last_note(ctx),
           imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && strstr(imghist_last_note(ctx), "ran on the CPU") != NULL &&
          memcmp(hist, want_hist, sizeof hist) == 0 && memcmp(out, want, n) == 0;

    for (size_t i = 0; i < nchunks; i++) {
        cudaFree(chunks[i]);
    }
    memset(hist, 0xa5, sizeof hist);
    st = imghist_histogram(ctx, &iv, NULL, &hc);
    printf("memory back: histogram: %s: note '%s' %s\n", imghist_strerror(st),
           imghist_last_note(ctx), imghist_last_error(ctx));
    ok &= st == IMGHIST_OK && imghist_last_note(ctx)[0] == '\0' &&
          memcmp(hist, want_hist, sizeof hist) == 0;

    imghist_destroy(ctx);
    imghist_destroy(ref);
    free(img);
    free(out);
    free(want);
    printf("%s\n", ok ? "fallback handled" : "FALLBACK NOT HANDLED");
    return ok ? 0 : 1;
}

static void test_gpu_oom_fallback(void **state)
{
    (void)state;
    if (quick) {
        skip(); /* the sanitizers need GPU memory of their own */
    }
    assert_int_equal(run_child("--oom-child"), 0);
}

/*
 * The child of test_gpu_fault. A device view at an address nothing is mapped
 * at makes the histogram kernel fault; from then on every call on the context
 * must return IMGHIST_E_FAULTED with a one-line message that says the GPU
 * faulted and names the CUDA error (cudaErrorIllegalAddress), write no
 * result, and not crash; the getters still answer. Prints what it saw; exit 0
 * when all of that held.
 */
static int expect_faulted(imghist_ctx *ctx, imghist_status st, const char *what)
{
    const char *msg = imghist_last_error(ctx);
    printf("%s: %s: %s\n", what, imghist_strerror(st), msg);
    return st == IMGHIST_E_FAULTED && msg[0] != '\0' && strchr(msg, '\n') == NULL &&
           contains_ci(msg, "fault") && strstr(msg, "cudaErrorIllegalAddress") != NULL;
}

static int fault_child(void)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK) {
        printf("create: %s\n", imghist_last_error(ctx));
        return 2;
    }
    enum { W = 1000, H = 700 };
    static uint8_t host[W * H], out[W * H];
    for (size_t i = 0; i < sizeof host; i++) {
        host[i] = (uint8_t)(i * 7 + i / W);
    }
    uint8_t *d_img = NULL, *d_out = NULL;
    uint64_t *d_hist = NULL;
    if (cudaMalloc((void **)&d_img, sizeof host) != cudaSuccess ||
        cudaMalloc((void **)&d_out, sizeof host) != cudaSuccess ||
        cudaMalloc((void **)&d_hist, BINS * sizeof(uint64_t)) != cudaSuccess ||
        cudaMemcpy(d_img, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
        printf("set-up failed\n");
        return 2;
    }
    const imghist_view bad = u8_view((void *)(uintptr_t)4096, IMGHIST_MEM_DEVICE, 4096, 4096, 4096);
    const imghist_counts d_counts = counts_at(d_hist, BINS, IMGHIST_MEM_DEVICE);
    imghist_status st = imghist_histogram(ctx, &bad, NULL, &d_counts);
    printf("unmapped image: %s\n", imghist_strerror(st));
    const cudaError_t e = cudaDeviceSynchronize();
    printf("synchronize: %s\n", cudaGetErrorName(e));
    int ok = st == IMGHIST_OK && e != cudaSuccess;

    const imghist_view good = u8_view(d_img, IMGHIST_MEM_DEVICE, W, H, W);
    const imghist_view good_out = u8_view(d_out, IMGHIST_MEM_DEVICE, W, H, W);
    const imghist_view hv = u8_view(host, IMGHIST_MEM_HOST, W, H, W);
    const imghist_view hv_out = u8_view(out, IMGHIST_MEM_HOST, W, H, W);
    uint64_t hist[BINS];
    memset(hist, 0xa5, sizeof hist);
    const uint64_t poison = hist[0];
    const imghist_counts hc = counts_at(hist, BINS, IMGHIST_MEM_HOST);
    ok &= expect_faulted(ctx, imghist_histogram(ctx, &good, NULL, &hc), "device histogram");
    ok &= expect_faulted(ctx, imghist_equalize(ctx, &good, &good_out, IMGHIST_EQ_OPENCV, &hc),
                         "device equalize");
    ok &= expect_faulted(ctx, imghist_histogram_list(ctx, &good, 1, NULL, &hc), "batch");
    ok &= expect_faulted(ctx, imghist_histogram(ctx, &hv, NULL, &hc), "host histogram");
    memset(out, 0x5a, sizeof out);
    ok &= expect_faulted(ctx, imghist_equalize(ctx, &hv, &hv_out, IMGHIST_EQ_OPENCV, &hc),
                         "host equalize");
    ok &= expect_faulted(ctx, imghist_set_stream(ctx, NULL), "set_stream");
    for (int b = 0; b < BINS; b++) {
        ok &= hist[b] == poison; /* no result was delivered */
    }
    for (size_t i = 0; i < sizeof out; i++) {
        ok &= out[i] == 0x5a;
    }
    imghist_stream s = (imghist_stream)(uintptr_t)1;
    st = imghist_get_stream(ctx, &s);
    printf("get_stream: %s\n", imghist_strerror(st));
    ok &= st == IMGHIST_OK && s != (imghist_stream)(uintptr_t)1;
    imghist_destroy(ctx);
    printf("%s\n", ok ? "fault handled" : "FAULT NOT HANDLED");
    return ok ? 0 : 1;
}

static void test_gpu_fault(void **state)
{
    (void)state;
    if (quick) {
        skip(); /* under compute-sanitizer the deliberate fault would be a finding */
    }
    assert_int_equal(run_child("--fault-child"), 0);
}

/* The children of test_gpu_oom_fallback and test_gpu_fault: their exit
 * status, or -1 when flag names neither. */
int context_cuda_child(const char *flag)
{
    if (strcmp(flag, "--fault-child") == 0) {
        return fault_child();
    }
    if (strcmp(flag, "--oom-child") == 0) {
        return oom_child();
    }
    return -1;
}

static int setup(void **state)
{
    (void)state;
    return gpu_suite_setup("test_context_cuda");
}

static const bs_test tests[] = {
    GPU_TEST(test_device_api_errors),
    GPU_TEST(test_mixed_host_device),
    GPU_TEST(test_set_get_stream),
    GPU_TEST(test_create_on_devices),
    GPU_TEST(test_cpu_context_refuses_device),
    GPU_TEST(test_experimental_params),
    GPU_TEST(test_gpu_oom_fallback),
    GPU_TEST(test_gpu_fault),
};

const bs_part context_cuda_part = BS_PART("context cuda", tests, setup, gpu_suite_teardown);
