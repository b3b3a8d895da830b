/*
 * The CUDA backend against the CPU reference, bit for bit: fresh random sizes,
 * pitches and unaligned base pointers, adversarial patterns, photographs, the
 * batch API and equalization. Exits 77 (skipped) when there is no usable GPU.
 * argv[1], if given, is the samples folder.
 */
#define _POSIX_C_SOURCE 200809L
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
#include "test_util.h"

#define CUDA_OK(call) assert_int_equal((call), cudaSuccess)

static imghist_ctx *gpu, *cpu;
static const char *samples;
static tu_rng rng;
/* IMGHIST_TEST_QUICK=1: fewer and smaller cases, for runs under compute-sanitizer. */
static int quick;

enum pattern { UNIFORM, CONSTANT, MULT32, MULT4_64, NORMALISH, RUNS, PHOTO, N_PATTERNS };
static const char *pattern_name[] = {"uniform", "constant", "multiples of 32", "64 values x4",
                                     "normal-ish", "runs", "photograph"};
static imghist_image *photo;

static uint8_t pattern_value(enum pattern p, size_t i, uint32_t x, uint32_t y)
{
    switch (p) {
    case UNIFORM: return (uint8_t)(tu_next(&rng) >> 56);
    case CONSTANT: return 127;
    case MULT32: return (uint8_t)(tu_below(&rng, 8) * 32);
    case MULT4_64: return (uint8_t)(tu_below(&rng, 64) * 4);
    case NORMALISH: { /* sum of 4 uniforms: a bell around 128 */
        uint64_t r = tu_next(&rng);
        return (uint8_t)(((r & 0xff) + ((r >> 8) & 0xff) + ((r >> 16) & 0xff) + ((r >> 24) & 0xff)) / 4);
    }
    case RUNS: return (uint8_t)((i / 64) * 2654435761u >> 24);
    case PHOTO:
        return photo->pixels[(size_t)(y % photo->height) * photo->pitch + (x % photo->width)];
    default: return 0;
    }
}

/* A pitched host image, padding filled with a value that must never be counted
 * or written (the image avoids it except for CONSTANT/PHOTO patterns). */
typedef struct {
    uint8_t *host;   /* pitch * height */
    uint8_t *dbase;  /* device allocation */
    uint8_t *dev;    /* dbase + offset: the image's first byte */
    size_t pitch;
    uint32_t w, h;
    size_t bytes;    /* allocation size */
} img_t;

static img_t make_image(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = {0};
    im.w = w;
    im.h = h;
    im.pitch = pitch;
    im.bytes = offset + pitch * (h - 1) + w; /* no slack after the last pixel */
    im.host = malloc(pitch * h);
    assert_non_null(im.host);
    memset(im.host, 0xfd, pitch * h);
    size_t i = 0;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++, i++) {
            im.host[(size_t)y * pitch + x] = pattern_value(p, i, x, y);
        }
    }
    CUDA_OK(cudaMalloc((void **)&im.dbase, im.bytes));
    CUDA_OK(cudaMemset(im.dbase, 0xfd, im.bytes));
    im.dev = im.dbase + offset;
    CUDA_OK(cudaMemcpy2D(im.dev, pitch, im.host, pitch, w, h, cudaMemcpyHostToDevice));
    return im;
}

static void free_image(img_t *im)
{
    free(im->host);
    CUDA_OK(cudaFree(im->dbase));
}

static void check_hist_case(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = make_image(w, h, pitch, offset, p);
    uint64_t want[256], got[256], *d_hist;
    tu_naive_hist(im.host, pitch, w, h, want);
    imghist_device_image di = {im.dev, pitch, w, h};

    /* Device-resident result, poisoned first. */
    CUDA_OK(cudaMalloc((void **)&d_hist, sizeof got));
    CUDA_OK(cudaMemset(d_hist, 0xa5, sizeof got));
    assert_int_equal(imghist_cuda_histogram(gpu, &di, d_hist, IMGHIST_MEM_DEVICE, 0), IMGHIST_OK);
    CUDA_OK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
    if (memcmp(got, want, sizeof got) != 0) {
        for (int b = 0; b < 256; b++) {
            if (got[b] != want[b]) {
                fprintf(stderr, "%ux%u pitch %zu offset %u %s: bin %d got %llu want %llu\n", w, h,
                        pitch, offset, pattern_name[p], b, (unsigned long long)got[b],
                        (unsigned long long)want[b]);
                break;
            }
        }
        fail();
    }
    /* Host-bound result on a stream of our own. */
    cudaStream_t s;
    CUDA_OK(cudaStreamCreate(&s));
    memset(got, 0xa5, sizeof got);
    assert_int_equal(imghist_cuda_histogram(gpu, &di, got, IMGHIST_MEM_HOST, s), IMGHIST_OK);
    CUDA_OK(cudaStreamSynchronize(s));
    CUDA_OK(cudaStreamDestroy(s));
    assert_memory_equal(got, want, sizeof got);
    CUDA_OK(cudaFree(d_hist));
    free_image(&im);
}

static void test_hist_random_shapes(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 25 : 120); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 5000 : 300);
        const uint32_t h = 1 + tu_below(&rng, iter % 5 == 0 ? 3 : 200);
        const size_t pitch = w + (iter % 3 == 0 ? 0 : tu_below(&rng, 70));
        const unsigned offset = tu_below(&rng, 16);
        check_hist_case(w, h, pitch, offset, (enum pattern)(iter % N_PATTERNS));
    }
}

static void test_hist_edge_shapes(void **state)
{
    (void)state;
    /* 1x1, single rows and columns, widths around the 16-byte granule. */
    const uint32_t widths[] = {1, 2, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        for (unsigned off = 0; off < 16; off += 5) {
            check_hist_case(widths[i], 1, widths[i], off, UNIFORM);
            check_hist_case(widths[i], 7, widths[i], off, MULT32);
            check_hist_case(widths[i], 5, widths[i] + 16, off, CONSTANT);
            check_hist_case(1, widths[i], 1 + off, off, UNIFORM);
        }
    }
}

static void test_hist_patterns_large(void **state)
{
    (void)state;
    /* Many blocks, many chunks per block: every pattern at ~40 MB, aligned
     * and not. */
    for (int p = 0; p < N_PATTERNS; p++) {
        check_hist_case(4099, quick ? 307 : 10007, 4099, (unsigned)p % 16, (enum pattern)p);
        check_hist_case(4096, quick ? 64 : 2048, 4096 + 512, 0, (enum pattern)p);
    }
}

static void check_equalize_case(uint32_t w, uint32_t h, size_t sp, unsigned soff, size_t dp,
                                unsigned doff, enum pattern p, int in_place)
{
    if (in_place) {
        dp = sp;
    }
    img_t src = make_image(w, h, sp, soff, p);
    uint8_t *want = malloc(dp * h), *got = malloc(dp * h);
    memset(want, 0xfd, dp * h);
    uint64_t want_hist[256], got_hist[256];
    assert_int_equal(imghist_equalize(cpu, src.host, sp, want, dp, w, h, want_hist), IMGHIST_OK);

    uint8_t *dbase = NULL, *dst;
    size_t dbytes = doff + dp * (h - 1) + w;
    if (in_place) {
        dst = src.dev;
    } else {
        CUDA_OK(cudaMalloc((void **)&dbase, dbytes));
        CUDA_OK(cudaMemset(dbase, 0xfd, dbytes));
        dst = dbase + doff;
    }
    imghist_device_image di = {src.dev, sp, w, h};
    memset(got_hist, 0x5a, sizeof got_hist);
    assert_int_equal(imghist_cuda_equalize(gpu, &di, dst, dp, got_hist, IMGHIST_MEM_HOST, 0),
                     IMGHIST_OK);
    CUDA_OK(cudaDeviceSynchronize());
    assert_memory_equal(got_hist, want_hist, sizeof got_hist);
    if (in_place) {
        /* Padding of an in-place image keeps the source's bytes. */
        CUDA_OK(cudaMemcpy2D(got, sp, dst, sp, w, h, cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            assert_memory_equal(got + (size_t)y * sp, want + (size_t)y * dp, w);
        }
    } else {
        /* Whole rows including padding: padding must stay 0xfd. */
        CUDA_OK(cudaMemcpy(got, dbase + doff, dbytes - doff, cudaMemcpyDeviceToHost));
        for (uint32_t y = 0; y < h; y++) {
            const size_t n = y + 1 < h ? dp : w;
            if (memcmp(got + (size_t)y * dp, want + (size_t)y * dp, n) != 0) {
                fprintf(stderr, "equalize %ux%u sp %zu+%u dp %zu+%u %s: row %u differs\n", w, h,
                        sp, soff, dp, doff, pattern_name[p], y);
                fail();
            }
        }
        CUDA_OK(cudaFree(dbase));
    }
    free(want);
    free(got);
    free_image(&src);
}

static void test_equalize_random(void **state)
{
    (void)state;
    for (int iter = 0; iter < (quick ? 14 : 60); iter++) {
        const uint32_t w = 1 + tu_below(&rng, iter % 4 == 0 ? 3000 : 200);
        const uint32_t h = 1 + tu_below(&rng, 150);
        const size_t sp = w + tu_below(&rng, 40);
        const size_t dp = (iter % 2) ? sp : w + tu_below(&rng, 40);
        const unsigned soff = tu_below(&rng, 16);
        /* Half the cases share the 16-byte phase (vector path), half not. */
        const unsigned doff = (iter % 3 == 0) ? tu_below(&rng, 16) : soff;
        check_equalize_case(w, h, sp, soff, dp, doff, (enum pattern)(iter % N_PATTERNS), 0);
    }
    for (int p = 0; p < N_PATTERNS; p++) {
        check_equalize_case(3001, quick ? 53 : 2003, 3008, 0, 3008, 0, (enum pattern)p, 0);
        check_equalize_case(777, 333, 800, 3, 0, 0, (enum pattern)p, 1);
    }
    check_equalize_case(1, 1, 1, 0, 1, 0, UNIFORM, 0);
}

static void test_batch(void **state)
{
    (void)state;
    enum { N = 61 };
    (void)quick;
    img_t im[N];
    imghist_device_image di[N];
    uint64_t *want = malloc(N * 256 * sizeof(uint64_t));
    uint64_t *got = malloc(N * 256 * sizeof(uint64_t));
    for (int i = 0; i < N; i++) {
        const uint32_t w = 1 + tu_below(&rng, i % 7 == 0 ? 1500 : 150);
        const uint32_t h = 1 + tu_below(&rng, 120);
        im[i] = make_image(w, h, w + tu_below(&rng, 33), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        di[i] = (imghist_device_image){im[i].dev, im[i].pitch, w, h};
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + 256 * i);
    }
    for (int round = 0; round < 3; round++) {
        memset(got, 0xa5, N * 256 * sizeof(uint64_t));
        const size_t n = round == 2 ? 1 : N;
        if (round == 1) {
            uint64_t *d;
            CUDA_OK(cudaMalloc((void **)&d, N * 256 * sizeof(uint64_t)));
            CUDA_OK(cudaMemset(d, 0xa5, N * 256 * sizeof(uint64_t)));
            assert_int_equal(imghist_cuda_histogram_batch(gpu, di, n, d, IMGHIST_MEM_DEVICE, 0),
                             IMGHIST_OK);
            CUDA_OK(cudaMemcpy(got, d, N * 256 * sizeof(uint64_t), cudaMemcpyDeviceToHost));
            CUDA_OK(cudaFree(d));
        } else {
            assert_int_equal(imghist_cuda_histogram_batch(gpu, di, n, got, IMGHIST_MEM_HOST, 0),
                             IMGHIST_OK);
            CUDA_OK(cudaDeviceSynchronize());
        }
        assert_memory_equal(got, want, n * 256 * sizeof(uint64_t));
    }
    for (int i = 0; i < N; i++) {
        free_image(&im[i]);
    }
    free(want);
    free(got);
}

/* Many tiny images and one large one: blocks whose run of chunks crosses
 * hundreds of images, and images split over many blocks. */
static void test_batch_mixed_sizes(void **state)
{
    (void)state;
    const size_t n = quick ? 300 : 1500;
    img_t *im = malloc(n * sizeof *im);
    imghist_device_image *di = malloc(n * sizeof *di);
    uint64_t *want = malloc(n * 256 * sizeof(uint64_t)), *got = malloc(n * 256 * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        const int big = i == n / 2;
        const uint32_t w = big ? 3001 : 1 + tu_below(&rng, 40);
        const uint32_t h = big ? (quick ? 200 : 2000) : 1 + tu_below(&rng, 4);
        im[i] = make_image(w, h, w + tu_below(&rng, 5), tu_below(&rng, 16),
                           (enum pattern)(i % N_PATTERNS));
        di[i] = (imghist_device_image){im[i].dev, im[i].pitch, w, h};
        tu_naive_hist(im[i].host, im[i].pitch, w, h, want + 256 * i);
    }
    /* The library's run length, then runs of 1, 3 and 16 chunks (a block's
     * segments then cross from none to hundreds of image ends). */
    const char *runs[] = {NULL, "1", "3", "16"};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        if (runs[r] == NULL) {
            unsetenv("IMGHIST_BATCH_RUN");
        } else {
            setenv("IMGHIST_BATCH_RUN", runs[r], 1);
        }
        memset(got, 0xa5, n * 256 * sizeof(uint64_t));
        assert_int_equal(imghist_cuda_histogram_batch(gpu, di, n, got, IMGHIST_MEM_HOST, 0),
                         IMGHIST_OK);
        CUDA_OK(cudaDeviceSynchronize());
        for (size_t i = 0; i < n; i++) {
            if (memcmp(got + 256 * i, want + 256 * i, 256 * sizeof(uint64_t)) != 0) {
                unsetenv("IMGHIST_BATCH_RUN");
                fail_msg("batch image %zu (%ux%u) differs (run %s)", i, di[i].width,
                         di[i].height, runs[r] ? runs[r] : "default");
            }
        }
    }
    unsetenv("IMGHIST_BATCH_RUN");
    for (size_t i = 0; i < n; i++) {
        free_image(&im[i]);
    }
    free(im);
    free(di);
    free(want);
    free(got);
}

/* The host-image entry points on the CUDA backend, on the photographs. */
static void test_host_api_photographs(void **state)
{
    (void)state;
    const char *names[] = {"moon.png", "camera.png", "coffee.png", "astronaut.png",
                           "hubble_deep_field.jpg"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", samples, names[i]);
        imghist_image *img = NULL;
        assert_int_equal(imghist_load_file(cpu, path, &img), IMGHIST_OK);
        const size_t n = (size_t)img->width * img->height;
        uint64_t hc[256], hg[256];
        uint8_t *ec = malloc(n), *eg = malloc(n);
        assert_int_equal(imghist_histogram(gpu, img->pixels, img->pitch, img->width, img->height, hg),
                         IMGHIST_OK);
        assert_int_equal(imghist_histogram(cpu, img->pixels, img->pitch, img->width, img->height, hc),
                         IMGHIST_OK);
        assert_memory_equal(hg, hc, sizeof hc);
        assert_int_equal(imghist_equalize(gpu, img->pixels, img->pitch, eg, img->width, img->width,
                                          img->height, hg),
                         IMGHIST_OK);
        assert_int_equal(imghist_equalize(cpu, img->pixels, img->pitch, ec, img->width, img->width,
                                          img->height, hc),
                         IMGHIST_OK);
        assert_memory_equal(eg, ec, n);
        assert_memory_equal(hg, hc, sizeof hc);
        free(ec);
        free(eg);
        imghist_image_free(img);
    }
}

/* Host images that do not fit the staging buffer go through in bands, with
 * the same bits, and the note says so. */
static void test_host_api_in_bands(void **state)
{
    (void)state;
    const uint32_t w = 1237, h = 911;
    uint8_t *img = malloc((size_t)w * h), *eg = malloc((size_t)w * h), *ec = malloc((size_t)w * h);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        img[i] = pattern_value((enum pattern)(i % 3 == 0 ? MULT32 : NORMALISH), i, 0, 0);
    }
    uint64_t hg[256], hc[256];
    setenv("IMGHIST_CUDA_STAGING_BYTES", "100000", 1); /* 80 rows per band */
    assert_int_equal(imghist_histogram(gpu, img, w, w, h, hg), IMGHIST_OK);
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    assert_int_equal(imghist_equalize(gpu, img, w, eg, w, w, h, hg), IMGHIST_OK);
    assert_non_null(strstr(imghist_last_note(gpu), "bands"));
    unsetenv("IMGHIST_CUDA_STAGING_BYTES");
    assert_int_equal(imghist_equalize(cpu, img, w, ec, w, w, h, hc), IMGHIST_OK);
    assert_memory_equal(hg, hc, sizeof hc);
    assert_memory_equal(eg, ec, (size_t)w * h);
    /* And back to one piece. */
    assert_int_equal(imghist_histogram(gpu, img, w, w, h, hg), IMGHIST_OK);
    assert_string_equal(imghist_last_note(gpu), "");
    assert_memory_equal(hg, hc, sizeof hc);
    free(img);
    free(eg);
    free(ec);
}

/* More than 2^32 pixels in one image: 64-bit counts end to end. */
static void test_over_4g_pixels(void **state)
{
    (void)state;
    if (quick) {
        skip();
    }
    const uint32_t w = 65536, h = 65552; /* 2^32 + 2^20 pixels */
    const size_t n = (size_t)w * h;
    uint8_t *d;
    if (cudaMalloc((void **)&d, n) != cudaSuccess) {
        (void)cudaGetLastError();
        printf("not enough GPU memory for %zu bytes: skipped\n", n);
        skip();
    }
    CUDA_OK(cudaMemset(d, 7, n));
    CUDA_OK(cudaMemset(d + 12345, 250, 1000001));
    imghist_device_image di = {d, w, w, h};
    uint64_t got[256];
    assert_int_equal(imghist_cuda_histogram(gpu, &di, got, IMGHIST_MEM_HOST, 0), IMGHIST_OK);
    CUDA_OK(cudaDeviceSynchronize());
    assert_int_equal(got[7], (uint64_t)n - 1000001);
    assert_int_equal(got[250], 1000001);
    assert_true(got[7] > UINT32_MAX);
    CUDA_OK(cudaFree(d));
}

static void test_device_api_errors(void **state)
{
    (void)state;
    uint64_t h[256];
    imghist_device_image bad = {NULL, 10, 10, 10};
    assert_int_equal(imghist_cuda_histogram(gpu, &bad, h, IMGHIST_MEM_HOST, 0),
                     IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_cuda_histogram(gpu, NULL, h, IMGHIST_MEM_HOST, 0),
                     IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_cuda_histogram(cpu, &bad, h, IMGHIST_MEM_HOST, 0),
                     IMGHIST_E_UNSUPPORTED);
    assert_int_equal(imghist_cuda_histogram_batch(gpu, &bad, 0, h, IMGHIST_MEM_HOST, 0),
                     IMGHIST_E_INVALID_ARG);
}

/*
 * The child of test_gpu_fault (a process of its own: a GPU fault poisons the
 * CUDA context for good). A device image at an address nothing is mapped at
 * makes the histogram kernel fault; from then on every entry point must return
 * IMGHIST_E_CUDA with a one-line message, write no result, and not crash.
 * Prints what it saw; exit 0 when all of that held.
 */
static int expect_cuda_error(imghist_ctx *ctx, imghist_status st, const char *what)
{
    const char *msg = imghist_last_error(ctx);
    printf("%s: status %d: %s\n", what, (int)st, msg);
    return st == IMGHIST_E_CUDA && msg[0] != '\0' && strchr(msg, '\n') == NULL &&
           strstr(msg, "cudaError") != NULL;
}

static int fault_child(void)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, &ctx) != IMGHIST_OK) {
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
        cudaMalloc((void **)&d_hist, 256 * sizeof(uint64_t)) != cudaSuccess ||
        cudaMemcpy(d_img, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("set-up failed\n");
        return 2;
    }
    const imghist_device_image bad = {(const uint8_t *)(uintptr_t)4096, 4096, 4096, 4096};
    imghist_status st = imghist_cuda_histogram(ctx, &bad, d_hist, IMGHIST_MEM_DEVICE, 0);
    printf("unmapped image: status %d\n", (int)st);
    const cudaError_t e = cudaDeviceSynchronize();
    printf("synchronize: %s\n", cudaGetErrorName(e));
    int ok = st == IMGHIST_OK && e != cudaSuccess;

    const imghist_device_image good = {d_img, W, W, H};
    uint64_t hist[256];
    memset(hist, 0xa5, sizeof hist);
    const uint64_t poison = hist[0];
    ok &= expect_cuda_error(ctx, imghist_cuda_histogram(ctx, &good, hist, IMGHIST_MEM_HOST, 0),
                            "device histogram");
    ok &= expect_cuda_error(ctx,
                            imghist_cuda_equalize(ctx, &good, d_out, W, hist, IMGHIST_MEM_HOST, 0),
                            "device equalize");
    ok &= expect_cuda_error(
        ctx, imghist_cuda_histogram_batch(ctx, &good, 1, hist, IMGHIST_MEM_HOST, 0), "batch");
    ok &= expect_cuda_error(ctx, imghist_histogram(ctx, host, W, W, H, hist), "host histogram");
    memset(out, 0x5a, sizeof out);
    ok &= expect_cuda_error(ctx, imghist_equalize(ctx, host, W, out, W, W, H, hist),
                            "host equalize");
    for (int b = 0; b < 256; b++) {
        ok &= hist[b] == poison; /* no result was delivered */
    }
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
    char self[4096], cmd[4200];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_null(strchr(self, '\''));
    snprintf(cmd, sizeof cmd, "'%s' --fault-child 2>&1", self);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char line[600];
    while (fgets(line, sizeof line, p) != NULL) {
        printf("  child: %s", line);
    }
    assert_int_equal(pclose(p), 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--fault-child") == 0) {
        return fault_child();
    }
    samples = argc > 1 ? argv[1] : "samples";
    quick = getenv("IMGHIST_TEST_QUICK") != NULL && atoi(getenv("IMGHIST_TEST_QUICK")) != 0;
    imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, &gpu);
    if (st == IMGHIST_E_NO_GPU || st == IMGHIST_E_UNSUPPORTED) {
        printf("skipping the GPU suite: %s\n", imghist_last_error(gpu));
        imghist_destroy(gpu);
        return 77;
    }
    if (st != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CUDA context: %s\n", imghist_last_error(gpu));
        return 1;
    }
    if (imghist_create(IMGHIST_BACKEND_CPU, &cpu) != IMGHIST_OK) {
        return 1;
    }
    char photo_path[4200];
    snprintf(photo_path, sizeof photo_path, "%s/astronaut.png", samples);
    if (imghist_load_file(cpu, photo_path, &photo) != IMGHIST_OK) {
        fprintf(stderr, "%s\n", imghist_last_error(cpu));
        return 1;
    }
    tu_seed(&rng, tu_fresh_seed("test_gpu"));
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_edge_shapes),
        cmocka_unit_test(test_hist_random_shapes),
        cmocka_unit_test(test_hist_patterns_large),
        cmocka_unit_test(test_equalize_random),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_batch_mixed_sizes),
        cmocka_unit_test(test_host_api_photographs),
        cmocka_unit_test(test_host_api_in_bands),
        cmocka_unit_test(test_over_4g_pixels),
        cmocka_unit_test(test_device_api_errors),
        cmocka_unit_test(test_gpu_fault),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    imghist_image_free(photo);
    imghist_destroy(cpu);
    imghist_destroy(gpu);
    return rc;
}
