/*
 * imghist_bench_backproject: back-projection of a 24-megapixel BGR image
 * (6000 x 4000, a sample photograph tiled, channels reversed) with a 2-D
 * H-S model (30 x 32 bins, H over [0, 180), S over [0, 256), OpenCV's
 * bins: OpenCV's back-projection tutorial), on the GPU, three ways:
 *   hsv   imghist_backproject of the image already converted to HSV;
 *   two   imghist_cvt_color to HSV, then imghist_backproject of that;
 *   fused imghist_backproject with the conversion fused in (one pass);
 * against the read+write ceiling: a streaming copy kernel moving as many
 * bytes as back-projection of HSV reads and writes together (half of them
 * read, half written), in the same run. Every figure: CUDA events around
 * the call, the median of REPS after WARM runs. The GPU's output is
 * checked against the CPU backend's, byte for byte. With an output folder,
 * the BGR and HSV images, the model and the GPU's back-projection are
 * written there for bench_backproject_cv2.py (OpenCV's time, same data).
 *
 *   imghist_bench_backproject PHOTO.png [OUTDIR]
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "bench_check.h"
#include "bench_kernels.cuh"
#include "imghist.h"

static const int WARM = 3, REPS = 25;
static const uint32_t W = 6000, H = 4000;

/* The median of REPS timed runs of f (milliseconds, CUDA events on stream). */
template <typename F>
static double timed(cudaStream_t stream, F f)
{
    cudaEvent_t t0, t1;
    CUDA_CHECK(cudaEventCreate(&t0));
    CUDA_CHECK(cudaEventCreate(&t1));
    for (int i = 0; i < WARM; i++) f();
    std::vector<float> ms(REPS);
    for (int i = 0; i < REPS; i++) {
        CUDA_CHECK(cudaEventRecord(t0, stream));
        f();
        CUDA_CHECK(cudaEventRecord(t1, stream));
        CUDA_CHECK(cudaEventSynchronize(t1));
        CUDA_CHECK(cudaEventElapsedTime(&ms[i], t0, t1));
    }
    std::nth_element(ms.begin(), ms.begin() + REPS / 2, ms.end());
    CUDA_CHECK(cudaEventDestroy(t0));
    CUDA_CHECK(cudaEventDestroy(t1));
    return ms[REPS / 2];
}

static imghist_view image(void *data, imghist_mem mem, uint32_t channels)
{
    imghist_view v = {};
    v.data = data;
    v.dtype = IMGHIST_U8;
    v.mem = mem;
    v.width = W;
    v.height = H;
    v.pitch = (size_t)W * channels;
    v.channels = channels;
    return v;
}

static void save(const std::string &path, const void *p, size_t n)
{
    FILE *f = fopen(path.c_str(), "wb");
    if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path.c_str());
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s PHOTO.png [OUTDIR]\n", argv[0]);
        return 2;
    }
    imghist_ctx *gpu = NULL, *cpu = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, 0, &gpu) != IMGHIST_OK) {
        fprintf(stderr, "no GPU: %s\n", imghist_last_error(gpu));
        return 77;
    }
    IH_CHECK(cpu, imghist_create(IMGHIST_BACKEND_CPU, -1, &cpu));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    IH_CHECK(gpu, imghist_set_stream(gpu, stream));
    imghist_image *photo = NULL;
    IH_CHECK(gpu, imghist_set_param(gpu, IMGHIST_P_LOAD_CHANNELS, 1));
    IH_CHECK(gpu, imghist_load_file(gpu, argv[1], &photo));
    const imghist_view *pv = &photo->view;
    if (pv->channels != 3 || pv->dtype != IMGHIST_U8) {
        fprintf(stderr, "%s: want an 8-bit RGB photograph\n", argv[1]);
        return 1;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);

    const size_t px = (size_t)W * H, bgr_bytes = px * 3;
    std::vector<uint8_t> bgr(bgr_bytes), hsv(bgr_bytes), want(px), got(px);
    for (uint32_t y = 0; y < H; y++) {
        const uint8_t *src = (const uint8_t *)pv->data + (size_t)(y % pv->height) * pv->pitch;
        uint8_t *row = bgr.data() + (size_t)y * W * 3;
        for (uint32_t x = 0; x < W; x++) {
            const uint8_t *p = src + (size_t)(x % pv->width) * 3;
            row[x * 3] = p[2];
            row[x * 3 + 1] = p[1];
            row[x * 3 + 2] = p[0];
        }
    }
    uint8_t *d_bgr = NULL, *d_hsv = NULL, *d_out = NULL, *d_copy = NULL;
    CUDA_CHECK(cudaMalloc(&d_bgr, bgr_bytes));
    CUDA_CHECK(cudaMalloc(&d_hsv, bgr_bytes));
    CUDA_CHECK(cudaMalloc(&d_out, px));
    CUDA_CHECK(cudaMemcpy(d_bgr, bgr.data(), bgr_bytes, cudaMemcpyHostToDevice));
    const imghist_view vb = image(d_bgr, IMGHIST_MEM_DEVICE, 3);
    const imghist_view vh = image(d_hsv, IMGHIST_MEM_DEVICE, 3);
    const imghist_view vo = image(d_out, IMGHIST_MEM_DEVICE, 1);
    IH_CHECK(gpu, imghist_cvt_color(gpu, &vb, &vh, IMGHIST_SPACE_BGR2HSV));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(hsv.data(), d_hsv, bgr_bytes, cudaMemcpyDeviceToHost));

    /* The model: the image's own H-S histogram scaled to [0, 255], as the
     * tutorial's normalize(hist, 0, 255, NORM_MINMAX) of a histogram whose
     * smallest count is 0. */
    imghist_ndaxes ax = {};
    ax.dims = 2;
    ax.channel[0] = 0;
    ax.channel[1] = 1;
    ax.spec[0] = imghist_histspec{30, 0, 180, IMGHIST_OPENCV_BINS};
    ax.spec[1] = imghist_histspec{32, 0, 256, IMGHIST_OPENCV_BINS};
    std::vector<uint64_t> counts(960);
    const imghist_view hh = image(hsv.data(), IMGHIST_MEM_HOST, 3);
    const imghist_counts hc = {counts.data(), 960, IMGHIST_MEM_HOST};
    IH_CHECK(cpu, imghist_set_param(cpu, IMGHIST_P_CPU_THREADS, 16));
    IH_CHECK(cpu, imghist_histogramdd(cpu, &hh, &ax, &hc));
    const uint64_t top = *std::max_element(counts.begin(), counts.end());
    std::vector<float> model(960);
    for (size_t i = 0; i < 960; i++) model[i] = (float)((double)counts[i] * 255.0 / top);

    const double hsv_ms = timed(stream, [&] {
        IH_CHECK(gpu, imghist_backproject(gpu, &vh, &ax, model.data(), 1.0, &vo));
    });
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, px, cudaMemcpyDeviceToHost));
    const imghist_view ho = image(want.data(), IMGHIST_MEM_HOST, 1);
    IH_CHECK(cpu, imghist_backproject(cpu, &hh, &ax, model.data(), 1.0, &ho));
    bool same = got == want;

    const double two_ms = timed(stream, [&] {
        IH_CHECK(gpu, imghist_cvt_color(gpu, &vb, &vh, IMGHIST_SPACE_BGR2HSV));
        IH_CHECK(gpu, imghist_backproject(gpu, &vh, &ax, model.data(), 1.0, &vo));
    });
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, px, cudaMemcpyDeviceToHost));
    same = same && got == want;

    imghist_ndaxes fused = ax;
    fused.space = IMGHIST_SPACE_BGR2HSV;
    CUDA_CHECK(cudaMemset(d_out, 0, px));
    const double fused_ms = timed(stream, [&] {
        IH_CHECK(gpu, imghist_backproject(gpu, &vb, &fused, model.data(), 1.0, &vo));
    });
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, px, cudaMemcpyDeviceToHost));
    same = same && got == want;

    /* The ceiling: a copy moving (read + written) bytes of the HSV pass. */
    const size_t moved = bgr_bytes + px, copy_bytes = moved / 2 / 16 * 16;
    CUDA_CHECK(cudaMalloc(&d_copy, copy_bytes));
    const double copy_ms = timed(stream, [&] {
        CUDA_CHECK(launch_copy(d_copy, d_hsv, copy_bytes, stream_grid(prop.multiProcessorCount),
                               stream));
    });
    const double cvt_ms = timed(stream, [&] {
        IH_CHECK(gpu, imghist_cvt_color(gpu, &vb, &vh, IMGHIST_SPACE_BGR2HSV));
    });

    printf("back-projection of %ux%u BGR (%.1f MP, %s tiled), H-S 30x32 model, "
           "median of %d after %d warm-up runs:\n", W, H, px / 1e6, argv[1], REPS, WARM);
    printf("  copy ceiling (%.1f MB read + %.1f MB written) %8.3f ms  %7.1f GB/s\n",
           copy_bytes / 1e6, copy_bytes / 1e6, copy_ms, 2.0 * copy_bytes / copy_ms / 1e6);
    printf("  backproject of HSV (72 MB read, 24 MB written)  %8.3f ms  %7.1f GB/s  "
           "%5.1f %% of the ceiling\n", hsv_ms, moved / hsv_ms / 1e6, 100.0 * copy_ms / hsv_ms);
    printf("  cvt_color BGR->HSV alone                        %8.3f ms\n", cvt_ms);
    printf("  cvt_color + backproject (two calls)             %8.3f ms\n", two_ms);
    printf("  backproject with BGR->HSV fused (one call)      %8.3f ms\n", fused_ms);
    printf("  GPU output %s\n", same ? "equal to the CPU backend's (all three)"
                                     : "DIFFERS FROM THE CPU BACKEND'S");
    printf("gpu_ms hsv=%.4f two=%.4f fused=%.4f copy=%.4f\n", hsv_ms, two_ms, fused_ms, copy_ms);
    if (argc == 3) {
        const std::string dir = argv[2];
        save(dir + "/bgr.raw", bgr.data(), bgr_bytes);
        save(dir + "/hsv.raw", hsv.data(), bgr_bytes);
        save(dir + "/model.raw", model.data(), model.size() * sizeof(float));
        save(dir + "/backproject.raw", got.data(), px);
    }
    CUDA_CHECK(cudaFree(d_bgr));
    CUDA_CHECK(cudaFree(d_hsv));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_copy));
    imghist_image_free(photo);
    imghist_destroy(cpu);
    imghist_destroy(gpu);
    return same ? 0 : 1;
}
