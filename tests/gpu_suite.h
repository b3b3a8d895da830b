/*
 * The state and helpers of the CUDA parts that compare the CUDA backend with
 * the CPU backend bit for bit on 8-bit images (include after the headers of
 * gpu parts: <cmocka.h>, <cuda_runtime_api.h>, "imghist.h",
 * "backend_suite.h", "suite_util.h", "test_util.h"): the two contexts, the
 * GPU context's own stream, the samples folder and a photograph, patterns,
 * images with a host and a device copy. Each part including it has its own
 * copy of the state, filled by gpu_suite_setup from its group setup.
 */
#ifndef IMGHIST_GPU_SUITE_H
#define IMGHIST_GPU_SUITE_H

#define BINS 256 /* one bin per 8-bit value: every histogram in this suite */


static imghist_ctx *gpu, *cpu;
/* The stream the GPU context started on; every test leaves the context on it. */
static imghist_stream own_stream;
static const char *samples;
static tu_rng rng;
/* IMGHIST_TEST_QUICK=1: fewer and smaller cases, for runs under compute-sanitizer. */
static int quick;

enum pattern { UNIFORM, CONSTANT, MULT32, MULT4_64, NORMALISH, RUNS, PHOTO, N_PATTERNS };
static const char *pattern_name[] = {"uniform", "constant", "multiples of 32", "64 values x4",
                                     "normal-ish", "runs", "photograph"};
static imghist_image *photo;

static inline uint8_t pattern_value(enum pattern p, size_t i, uint32_t x, uint32_t y)
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
    case PHOTO: {
        const imghist_view *v = &photo->view;
        return ((const uint8_t *)v->data)[(size_t)(y % v->height) * v->pitch + (x % v->width)];
    }
    default: return 0;
    }
}

/* Fill the w x h pixels of a pitched buffer; the padding is left as it is. */
static inline void fill_image(uint8_t *p, size_t pitch, uint32_t w, uint32_t h, enum pattern pat)
{
    size_t i = 0;
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++, i++) {
            p[(size_t)y * pitch + x] = pattern_value(pat, i, x, y);
        }
    }
}

static inline imghist_view u8_view(void *data, imghist_mem mem, uint32_t w, uint32_t h, size_t pitch)
{
    const imghist_view v = {.data = data, .dtype = IMGHIST_U8, .mem = mem,
                            .width = w, .height = h, .pitch = pitch};
    return v;
}

static inline imghist_counts counts_at(uint64_t *data, size_t len, imghist_mem mem)
{
    const imghist_counts c = {.data = data, .len = len, .mem = mem};
    return c;
}

/* Wait for the GPU context's work. It runs on the context's stream, which the
 * legacy default stream (and so a plain cudaMemcpy) need not wait for. */
static inline void gpu_sync(void)
{
    imghist_stream s = NULL;
    IH_OK(gpu, imghist_get_stream(gpu, &s));
    CUDA_OK(cudaStreamSynchronize(s));
}

/* The CPU backend's histogram of a host view: the reference. */
static inline void cpu_hist(const imghist_view *v, uint64_t out[BINS])
{
    const imghist_counts c = counts_at(out, BINS, IMGHIST_MEM_HOST);
    IH_OK(cpu, imghist_histogram(cpu, v, NULL, &c));
}

/* Case-insensitive substring test, for messages whose capitalisation is free. */
static inline int contains_ci(const char *s, const char *word)
{
    const size_t n = strlen(word);
    for (; *s != '\0'; s++) {
        size_t i = 0;
        while (i < n && s[i] != '\0' &&
               tolower((unsigned char)s[i]) == tolower((unsigned char)word[i])) {
            i++;
        }
        if (i == n) {
            return 1;
        }
    }
    return 0;
}

/* A pitched host image and its copy in device memory, padding filled with a
 * value that must never be counted or written (the image avoids it except for
 * CONSTANT/PHOTO patterns). */
typedef struct {
    uint8_t *host;   /* pitch * height */
    uint8_t *dbase;  /* device allocation */
    uint8_t *dev;    /* dbase + offset: the image's first byte */
    size_t pitch;
    uint32_t w, h;
    size_t bytes;    /* allocation size */
    imghist_view hv, dv; /* the two copies as views */
} img_t;

static inline img_t make_image(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = {0};
    im.w = w;
    im.h = h;
    im.pitch = pitch;
    im.bytes = offset + pitch * (h - 1) + w; /* no slack after the last pixel */
    im.host = malloc(pitch * h);
    assert_non_null(im.host);
    memset(im.host, 0xfd, pitch * h);
    fill_image(im.host, pitch, w, h, p);
    CUDA_OK(cudaMalloc((void **)&im.dbase, im.bytes));
    CUDA_OK(cudaMemset(im.dbase, 0xfd, im.bytes));
    im.dev = im.dbase + offset;
    CUDA_OK(cudaMemcpy2D(im.dev, pitch, im.host, pitch, w, h, cudaMemcpyHostToDevice));
    /* The copies are on the legacy default stream, which the context's stream
     * may not wait for: finish them before any imghist call reads the image. */
    CUDA_OK(cudaDeviceSynchronize());
    im.hv = u8_view(im.host, IMGHIST_MEM_HOST, w, h, pitch);
    im.dv = u8_view(im.dev, IMGHIST_MEM_DEVICE, w, h, pitch);
    return im;
}

static inline void free_image(img_t *im)
{
    free(im->host);
    CUDA_OK(cudaFree(im->dbase));
}

/* Device memory set to `byte`, finished before the next imghist call. */
static inline void poison_device(void *p, int byte, size_t n)
{
    CUDA_OK(cudaMemset(p, byte, n));
    CUDA_OK(cudaDeviceSynchronize());
}

/* After every test: the GPU context back on its own stream with its default
 * parameters, whatever a failed test left, so that no test runs in the
 * conditions another one set. */
static inline int reset_gpu(void **state)
{
    (void)state;
    int bad = imghist_set_stream(gpu, own_stream) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_STAGING_BYTES, 0) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, 0) != IMGHIST_OK;
    bad |= imghist_set_param(gpu, IMGHIST_P_EXP_BATCH_RUN, 0) != IMGHIST_OK;
    bad |= cudaDeviceSynchronize() != cudaSuccess;
    if (bad) {
        fprintf(stderr, "reset_gpu: %s\n", imghist_last_error(gpu));
    }
    return bad ? -1 : 0;
}

static inline void check_hist_case(uint32_t w, uint32_t h, size_t pitch, unsigned offset, enum pattern p)
{
    img_t im = make_image(w, h, pitch, offset, p);
    uint64_t want[BINS], got[BINS], *d_hist;
    tu_naive_hist(im.host, pitch, w, h, want);

    /* Device-resident result, poisoned first, on the context's own stream. */
    CUDA_OK(cudaMalloc((void **)&d_hist, sizeof got));
    poison_device(d_hist, 0xa5, sizeof got);
    const imghist_counts dc = counts_at(d_hist, BINS, IMGHIST_MEM_DEVICE);
    IH_OK(gpu, imghist_histogram(gpu, &im.dv, NULL, &dc));
    gpu_sync();
    CUDA_OK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
    if (memcmp(got, want, sizeof got) != 0) {
        for (int b = 0; b < BINS; b++) {
            if (got[b] != want[b]) {
                fprintf(stderr, "%ux%u pitch %zu offset %u %s: bin %d got %llu want %llu\n", w, h,
                        pitch, offset, pattern_name[p], b, (unsigned long long)got[b],
                        (unsigned long long)want[b]);
                break;
            }
        }
        fail();
    }
    /* Host-bound result on a stream of our own, made the context's for the call. */
    cudaStream_t s;
    CUDA_OK(cudaStreamCreate(&s));
    IH_OK(gpu, imghist_set_stream(gpu, s));
    memset(got, 0xa5, sizeof got);
    const imghist_counts hc = counts_at(got, BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_histogram(gpu, &im.dv, NULL, &hc));
    CUDA_OK(cudaStreamSynchronize(s));
    IH_OK(gpu, imghist_set_stream(gpu, own_stream)); /* before s goes away */
    CUDA_OK(cudaStreamDestroy(s));
    assert_memory_equal(got, want, sizeof got);
    CUDA_OK(cudaFree(d_hist));
    free_image(&im);
}

static inline void check_equalize_case(uint32_t w, uint32_t h, size_t sp, unsigned soff, size_t dp,
                                unsigned doff, enum pattern p, int in_place)
{
    if (in_place) {
        dp = sp;
    }
    img_t src = make_image(w, h, sp, soff, p);
    uint8_t *want = malloc(dp * h), *got = malloc(dp * h);
    memset(want, 0xfd, dp * h);
    uint64_t want_hist[BINS], got_hist[BINS];
    const imghist_view want_v = u8_view(want, IMGHIST_MEM_HOST, w, h, dp);
    const imghist_counts want_c = counts_at(want_hist, BINS, IMGHIST_MEM_HOST);
    IH_OK(cpu, imghist_equalize(cpu, &src.hv, &want_v, IMGHIST_EQ_OPENCV, &want_c));

    uint8_t *dbase = NULL, *dst;
    size_t dbytes = doff + dp * (h - 1) + w;
    if (in_place) {
        dst = src.dev;
    } else {
        CUDA_OK(cudaMalloc((void **)&dbase, dbytes));
        poison_device(dbase, 0xfd, dbytes);
        dst = dbase + doff;
    }
    const imghist_view dst_v = u8_view(dst, IMGHIST_MEM_DEVICE, w, h, dp);
    memset(got_hist, 0x5a, sizeof got_hist);
    const imghist_counts got_c = counts_at(got_hist, BINS, IMGHIST_MEM_HOST);
    IH_OK(gpu, imghist_equalize(gpu, &src.dv, &dst_v, IMGHIST_EQ_OPENCV, &got_c));
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

/*
 * A part's group setup: the harness's contexts, the GPU context's own stream,
 * the photograph of the samples folder (the program's argument after `cuda`;
 * "samples" without one), the part's seed. 0, or -1 with the reason on
 * standard error.
 */
static inline int gpu_suite_setup(const char *who)
{
    BS_GPU_PART_STATE(who);
    samples = bs_argc > 1 ? bs_argv[1] : "samples";
    if (imghist_get_stream(gpu, &own_stream) != IMGHIST_OK) {
        fprintf(stderr, "imghist_get_stream: %s\n", imghist_last_error(gpu));
        return -1;
    }
    char photo_path[4200];
    snprintf(photo_path, sizeof photo_path, "%s/astronaut.png", samples);
    if (imghist_load_file(cpu, photo_path, &photo) != IMGHIST_OK) {
        fprintf(stderr, "%s\n", imghist_last_error(cpu));
        return -1;
    }
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    printf("GPU: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    return 0;
}

static inline int gpu_suite_teardown(void **state)
{
    (void)state;
    imghist_image_free(photo);
    photo = NULL;
    return 0;
}

#define GPU_TEST(f) BS_CUDA_TEST_TEARDOWN(f, reset_gpu)

#endif
