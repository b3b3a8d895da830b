/*
 * imghist_bench_ndhist: N-dimensional histograms on the GPU.
 *
 *  1. An 8x8x8 RGB histogram of 1 GiB of packed RGB (a sample photograph
 *     tiled) against the read ceiling (the fastest streaming read of the
 *     same bytes) and against CUB's DeviceHistogram::MultiHistogramEven
 *     counting the three 8-bin channel histograms of the same data, in the
 *     same run; every figure the median of the timed repetitions.
 *  2. The H-S histogram (30 x 32 bins, H over [0, 180), S over [0, 256),
 *     OpenCV's bins) of 256 BGR images of 640 x 480, the conversion to HSV
 *     fused into the count, one call for the batch. The images are written
 *     to a file for bench_ndhist_cv2.py, which times OpenCV on the same
 *     pixels and checks the counts against cv2's.
 *
 *   imghist_bench_ndhist PHOTO.png [IMAGES.raw COUNTS.raw]
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/device/device_histogram.cuh>
#include <cuda_runtime_api.h>

#include "bench_kernels.cuh"
#include "imghist.h"

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)
#define IK(ctx, call)                                                                      \
    do {                                                                                   \
        imghist_status s_ = (call);                                                        \
        if (s_ != IMGHIST_OK) {                                                            \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, imghist_last_error(ctx));   \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static const int REPS = 20;

/* Median milliseconds of REPS runs of f on stream, after two warm-ups. */
template <typename F>
static double median_ms(cudaStream_t stream, F f)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int i = 0; i < REPS + 2; i++) {
        CK(cudaEventRecord(a, stream));
        f();
        CK(cudaEventRecord(b, stream));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (i >= 2) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

/* A device view of count packed 3-channel 8-bit images of w x h. */
static imghist_view packed_rgb(void *data, uint32_t w, uint32_t h, size_t count)
{
    imghist_view v = {};
    v.data = data;
    v.dtype = IMGHIST_U8;
    v.mem = IMGHIST_MEM_DEVICE;
    v.width = w;
    v.height = h;
    v.pitch = (size_t)w * 3;
    v.channels = 3;
    v.count = count;
    v.image_stride = (ptrdiff_t)((size_t)w * h * 3);
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s PHOTO.png [IMAGES.raw COUNTS.raw]\n", argv[0]);
        return 2;
    }
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, 0, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "no GPU: %s\n", imghist_last_error(ctx));
        return 77;
    }
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    IK(ctx, imghist_set_stream(ctx, stream));
    IK(ctx, imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 1));
    imghist_image *photo = NULL;
    IK(ctx, imghist_load_file(ctx, argv[1], &photo));
    const imghist_view *pv = &photo->view;
    if (pv->channels != 3) {
        fprintf(stderr, "%s: want an RGB photograph, not %u channels\n", argv[1], pv->channels);
        return 1;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs\n", prop.name, sms);

    /* ---- 1. 8x8x8 of 1 GiB ---- */
    const uint32_t W = 16384, H = 21845; /* 3 bytes a pixel: 1 GiB - 48 KiB */
    const size_t bytes = (size_t)W * H * 3;
    std::vector<uint8_t> host(bytes);
    for (uint32_t y = 0; y < H; y++) {
        const uint8_t *src = (const uint8_t *)pv->data + (size_t)(y % pv->height) * pv->pitch;
        uint8_t *row = host.data() + (size_t)y * W * 3;
        for (uint32_t x = 0; x < W; x++) {
            memcpy(row + (size_t)x * 3, src + (size_t)(x % pv->width) * 3, 3);
        }
    }
    uint8_t *d = NULL;
    CK(cudaMalloc(&d, bytes));
    CK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
    unsigned int *sink = NULL;
    CK(cudaMalloc(&sink, sizeof *sink));
    double read_ms = 1e30;
    for (int v = 0; v < READ_VARIANTS; v++) {
        const double ms = median_ms(stream, [&] {
            CK(launch_read((read_variant)v, d, bytes, sink, stream_grid(sms), stream));
        });
        read_ms = std::min(read_ms, ms);
    }
    unsigned long long *counts = NULL;
    CK(cudaMalloc(&counts, 512 * 8));
    const imghist_view v = packed_rgb(d, W, H, 1);
    imghist_ndaxes ax = {};
    ax.dims = 3;
    for (int k = 0; k < 3; k++) {
        ax.channel[k] = k;
        ax.spec[k] = imghist_histspec{8, 0, 256, 0};
    }
    const imghist_counts c = {(uint64_t *)counts, 512, IMGHIST_MEM_DEVICE};
    const double nd_ms = median_ms(stream, [&] { IK(ctx, imghist_histogramdd(ctx, &v, &ax, &c)); });
    /* the same counts as the CPU's */
    std::vector<uint64_t> got(512), want(512);
    CK(cudaMemcpy(got.data(), counts, 512 * 8, cudaMemcpyDeviceToHost));
    imghist_ctx *cpu = NULL;
    IK(cpu, imghist_create(IMGHIST_BACKEND_CPU, -1, &cpu));
    imghist_view hv = v;
    hv.data = host.data();
    hv.mem = IMGHIST_MEM_HOST;
    const imghist_counts hc = {want.data(), 512, IMGHIST_MEM_HOST};
    IK(cpu, imghist_histogramdd(cpu, &hv, &ax, &hc));
    const bool same = got == want;

    /* CUB: three 8-bin histograms of the interleaved channels */
    int *cub_hist[3];
    int levels[3] = {9, 9, 9};
    int lower[3] = {0, 0, 0}, upper[3] = {256, 256, 256};
    for (int k = 0; k < 3; k++) CK(cudaMalloc(&cub_hist[k], 8 * sizeof(int)));
    size_t temp_bytes = 0;
    const int64_t pixels = (int64_t)W * H;
    CK((cub::DeviceHistogram::MultiHistogramEven<3, 3>(NULL, temp_bytes, d, cub_hist, levels,
                                                       lower, upper, pixels, stream)));
    void *temp = NULL;
    CK(cudaMalloc(&temp, temp_bytes));
    const double cub_ms = median_ms(stream, [&] {
        CK((cub::DeviceHistogram::MultiHistogramEven<3, 3>(temp, temp_bytes, d, cub_hist, levels,
                                                           lower, upper, pixels, stream)));
    });
    const double gib = (double)bytes / (1u << 30);
    printf("8x8x8 RGB of %.4f GiB (%ux%u packed RGB, %s tiled), median of %d:\n", gib, W, H,
           argv[1], REPS);
    printf("  read ceiling        %8.3f ms  %7.1f GB/s\n", read_ms, bytes / read_ms / 1e6);
    printf("  imghist_histogramdd %8.3f ms  %7.1f GB/s  %5.1f %% of the ceiling  counts %s\n",
           nd_ms, bytes / nd_ms / 1e6, 100.0 * read_ms / nd_ms,
           same ? "equal to the CPU's" : "DIFFER FROM THE CPU'S");
    printf("  CUB MultiHistogramEven<3,3> (three 8-bin histograms) %8.3f ms  %7.1f GB/s  "
           "(imghist %.2fx its speed)\n",
           cub_ms, bytes / cub_ms / 1e6, cub_ms / nd_ms);
    CK(cudaFree(d));
    CK(cudaFree(temp));

    /* ---- 2. H-S of 256 BGR images of 640 x 480 ---- */
    const uint32_t N = 256, IW = 640, IH = 480;
    const size_t ib = (size_t)IW * IH * 3;
    std::vector<uint8_t> imgs(ib * N);
    for (uint32_t i = 0; i < N; i++) {
        /* each image a different window of the tiled photograph, channels
         * reversed (the photograph is RGB; these are BGR) */
        const uint32_t ox = (i * 37) % pv->width, oy = (i * 91) % pv->height;
        for (uint32_t y = 0; y < IH; y++) {
            const uint8_t *src = (const uint8_t *)pv->data + (size_t)((y + oy) % pv->height) * pv->pitch;
            uint8_t *row = imgs.data() + i * ib + (size_t)y * IW * 3;
            for (uint32_t x = 0; x < IW; x++) {
                const uint8_t *p = src + (size_t)((x + ox) % pv->width) * 3;
                row[x * 3] = p[2];
                row[x * 3 + 1] = p[1];
                row[x * 3 + 2] = p[0];
            }
        }
    }
    uint8_t *di = NULL;
    CK(cudaMalloc(&di, ib * N));
    CK(cudaMemcpy(di, imgs.data(), ib * N, cudaMemcpyHostToDevice));
    unsigned long long *hs = NULL;
    CK(cudaMalloc(&hs, (size_t)N * 960 * 8));
    const imghist_view bv = packed_rgb(di, IW, IH, N);
    imghist_ndaxes hsx = {};
    hsx.dims = 2;
    hsx.channel[0] = 0;
    hsx.channel[1] = 1;
    hsx.spec[0] = imghist_histspec{30, 0, 180, IMGHIST_OPENCV_BINS};
    hsx.spec[1] = imghist_histspec{32, 0, 256, IMGHIST_OPENCV_BINS};
    hsx.space = IMGHIST_SPACE_BGR2HSV;
    const imghist_counts hsc = {(uint64_t *)hs, (size_t)N * 960, IMGHIST_MEM_DEVICE};
    const double hs_ms = median_ms(stream, [&] { IK(ctx, imghist_histogramdd(ctx, &bv, &hsx, &hsc)); });
    std::vector<uint64_t> hs_got((size_t)N * 960), hs_cpu((size_t)N * 960);
    CK(cudaMemcpy(hs_got.data(), hs, hs_got.size() * 8, cudaMemcpyDeviceToHost));
    imghist_view hb = bv;
    hb.data = imgs.data();
    hb.mem = IMGHIST_MEM_HOST;
    const imghist_counts hhc = {hs_cpu.data(), hs_cpu.size(), IMGHIST_MEM_HOST};
    IK(cpu, imghist_histogramdd(cpu, &hb, &hsx, &hhc));
    printf("H-S 30x32 of %u BGR images of %ux%u, conversion fused, one call:\n", N, IW, IH);
    printf("  imghist_histogramdd %8.3f ms  %7.0f images/s  %7.1f GB/s  counts %s\n", hs_ms,
           N / hs_ms * 1e3, ib * N / hs_ms / 1e6,
           hs_got == hs_cpu ? "equal to the CPU's" : "DIFFER FROM THE CPU'S");
    if (argc == 4) {
        FILE *f = fopen(argv[2], "wb");
        FILE *g = fopen(argv[3], "wb");
        if (!f || !g || fwrite(imgs.data(), 1, imgs.size(), f) != imgs.size() ||
            fwrite(hs_got.data(), 8, hs_got.size(), g) != hs_got.size()) {
            fprintf(stderr, "cannot write %s or %s\n", argv[2], argv[3]);
            return 1;
        }
        fclose(f);
        fclose(g);
        printf("  wrote %s and %s; gpu_ms=%.4f\n", argv[2], argv[3], hs_ms);
    }
    imghist_image_free(photo);
    imghist_destroy(cpu);
    imghist_destroy(ctx);
    return same && hs_got == hs_cpu ? 0 : 1;
}
