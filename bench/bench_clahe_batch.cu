/*
 * imghist_bench_clahe: CLAHE of device batches through the public API only,
 * so that one binary times whichever libimghist.so.2 the loader finds
 * (LD_LIBRARY_PATH): an A/B of two builds runs this program against each in
 * turn.
 *
 *   imghist_bench_clahe [--runs N] [--samples DIR]
 *
 * Cases (clip 40, 8x8 tiles): 256 images of 640x480 uint8 as one tensor
 * view (imghist_clahe) and as a list of 256 views (imghist_clahe_list); 32
 * of 640x480 uint16 as a tensor; one 640x480 uint8 image. The images are
 * 640x480 crops of a photograph (samples/hubble_deep_field.jpg, 8-bit gray;
 * the 16-bit ones 257 v plus noise), another crop each image, or a gradient
 * with noise when the file cannot be read. Each call is timed alone with
 * CUDA events on the context's stream after three warm-up calls; the line
 * gives the median and the minimum over --runs, and an FNV-1a hash of the
 * output, which two builds that agree bit for bit print alike.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "bench_check.h"
#include "imghist.h"

namespace {

enum { W = 640, H = 480 };

uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ p[i]) * 1099511628211ull;
    }
    return h;
}

uint64_t noise(uint64_t i)
{
    uint64_t r = (i + 1) * 0x9e3779b97f4a7c15ull;
    r ^= r >> 29;
    r *= 0xbf58476d1ce4e5b9ull;
    return r ^ (r >> 32);
}

/* n host images of W x H (es bytes a sample), packed. */
std::vector<uint8_t> images(imghist_ctx *ctx, const char *samples, size_t n, size_t es)
{
    std::vector<uint8_t> out(n * W * H * es);
    char path[4096];
    snprintf(path, sizeof path, "%s/hubble_deep_field.jpg", samples);
    imghist_image *img = NULL;
    const bool photo = imghist_load_file(ctx, path, &img) == IMGHIST_OK &&
                       img->view.width >= W && img->view.height >= H;
    if (!photo) {
        fprintf(stderr, "note: %s not loaded (%s); a gradient with noise instead\n", path,
                imghist_last_error(ctx));
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t ox = photo ? (uint32_t)(i * 37 % (img->view.width - W + 1)) : 0;
        const uint32_t oy = photo ? (uint32_t)(i * 53 % (img->view.height - H + 1)) : 0;
        for (uint32_t y = 0; y < H; y++) {
            const uint8_t *row =
                photo ? (const uint8_t *)img->view.data + (size_t)(y + oy) * img->view.pitch + ox
                      : NULL;
            for (uint32_t x = 0; x < W; x++) {
                const size_t at = (i * H + y) * W + x;
                const uint64_t r = noise(at);
                const uint32_t v = photo ? row[x]
                                         : std::min<uint32_t>(255, (x + y) * 180 / (W + H) +
                                                                       (uint32_t)(r & 31));
                if (es == 1) {
                    out[at] = (uint8_t)v;
                } else {
                    ((uint16_t *)out.data())[at] = (uint16_t)(v * 257 - (v > 0 ? r % 257 : 0));
                }
            }
        }
    }
    imghist_image_free(img);
    return out;
}

struct Case {
    const char *name;
    size_t n;
    imghist_dtype t;
    bool list;
};

void run_case(imghist_ctx *ctx, const char *samples, const Case &c, int runs)
{
    const size_t es = c.t == IMGHIST_U8 ? 1 : 2, bytes = (size_t)W * H * es;
    const std::vector<uint8_t> host = images(ctx, samples, c.n, es);
    uint8_t *src, *dst;
    CUDA_CHECK(cudaMalloc((void **)&src, c.n * bytes));
    CUDA_CHECK(cudaMalloc((void **)&dst, c.n * bytes));
    CUDA_CHECK(cudaMemcpy(src, host.data(), c.n * bytes, cudaMemcpyHostToDevice));
    imghist_view s = {};
    s.data = src;
    s.dtype = c.t;
    s.mem = IMGHIST_MEM_DEVICE;
    s.width = W;
    s.height = H;
    s.pitch = (size_t)W * es;
    s.channels = 1;
    imghist_view d = s;
    d.data = dst;
    std::vector<imghist_view> ls(c.n, s), ld(c.n, d);
    for (size_t i = 0; i < c.n; i++) {
        ls[i].data = src + i * bytes;
        ld[i].data = dst + i * bytes;
    }
    s.count = d.count = c.n;
    s.image_stride = d.image_stride = (ptrdiff_t)bytes;
    imghist_stream stream;
    IH_CHECK(ctx, imghist_get_stream(ctx, &stream));
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int k = 0; k < runs + 3; k++) {
        CUDA_CHECK(cudaEventRecord(a, (cudaStream_t)stream));
        if (c.list) {
            IH_CHECK(ctx, imghist_clahe_list(ctx, ls.data(), ld.data(), c.n, 40.0, 8, 8));
        } else {
            IH_CHECK(ctx, imghist_clahe(ctx, &s, &d, 40.0, 8, 8));
        }
        CUDA_CHECK(cudaEventRecord(b, (cudaStream_t)stream));
        CUDA_CHECK(cudaEventSynchronize(b));
        float t;
        CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
        if (k >= 3) {
            ms.push_back(t);
        }
    }
    std::vector<uint8_t> out(c.n * bytes);
    CUDA_CHECK(cudaMemcpy(out.data(), dst, out.size(), cudaMemcpyDeviceToHost));
    std::sort(ms.begin(), ms.end());
    printf("%-28s %4zu x %ux%u  median %8.3f ms  min %8.3f ms  hash %016llx\n", c.name, c.n, W,
           H, ms[ms.size() / 2], ms[0], (unsigned long long)fnv1a(out.data(), out.size()));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
}

} // namespace

int main(int argc, char **argv)
{
    int runs = 20;
    const char *samples = "samples";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--runs") == 0) {
            runs = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        } else if (strcmp(argv[i], "--samples") == 0) {
            samples = argv[i + 1];
        }
    }
    Dl_info where;
    if (dladdr((void *)imghist_clahe, &where) != 0 && where.dli_fname != NULL) {
        printf("library %s (%s)\n", where.dli_fname, imghist_version_string());
    }
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, 0, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "no CUDA context: %s\n", imghist_last_error(ctx));
        imghist_destroy(ctx);
        return 77;
    }
    static const Case cases[] = {
        {"u8 tensor (imghist_clahe)", 256, IMGHIST_U8, false},
        {"u8 list (imghist_clahe_list)", 256, IMGHIST_U8, true},
        {"u16 tensor", 32, IMGHIST_U16, false},
        {"u8 one image", 1, IMGHIST_U8, false},
    };
    for (const Case &c : cases) {
        run_case(ctx, samples, c, runs);
    }
    imghist_destroy(ctx);
    return 0;
}
