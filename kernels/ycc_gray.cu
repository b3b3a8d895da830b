/*
 * The YCbCr planes to BGR2GRAY conversion on the GPU (src/io/ycc_gray.h):
 * one thread a pixel, the rules of ycc_gray_rules.h, so that the bytes are
 * the CPU reference's. Images go in chunks whose descriptors travel as the
 * kernel's parameter (no device copy of them); blockIdx.z picks the image.
 */
#include <cuda_runtime.h>

#include "ycc_gray.h"
#include "ycc_gray_rules.h"

namespace {

/* Images per launch: 24 descriptors stay under the 4 KiB parameter limit. */
constexpr int CHUNK = 24;
constexpr int TILE_X = 32, TILE_Y = 8;

struct ImageDesc {
    ih_ycc_comp comp[3];
    uint8_t method[3];
    uint8_t components;
    uint32_t width, height;
    uint8_t *gray;
    size_t gray_pitch;
};

struct Chunk {
    ImageDesc image[CHUNK];
};

__global__ void ycc_gray_kernel(const Chunk chunk)
{
    const ImageDesc &im = chunk.image[blockIdx.z];
    const uint32_t x = blockIdx.x * TILE_X + threadIdx.x;
    const uint32_t y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= im.width || y >= im.height) {
        return;
    }
    uint8_t *out = im.gray + (size_t)y * im.gray_pitch + x;
    if (im.components == 1) {
        *out = (uint8_t)ih_ycc_sample(&im.comp[0], x, y);
        return;
    }
    *out = ih_ycc_gray(ih_ycc_upsampled(&im.comp[0], im.method[0], x, y),
                       ih_ycc_upsampled(&im.comp[1], im.method[1], x, y),
                       ih_ycc_upsampled(&im.comp[2], im.method[2], x, y));
}

ImageDesc describe(const ih_ycc_image &src)
{
    ImageDesc d = {};
    d.components = (uint8_t)src.components;
    d.width = src.width;
    d.height = src.height;
    d.gray = src.gray;
    d.gray_pitch = src.gray_pitch;
    int mh = 1, mv = 1;
    for (int c = 0; c < src.components; c++) {
        mh = src.h[c] > mh ? src.h[c] : mh;
        mv = src.v[c] > mv ? src.v[c] : mv;
    }
    for (int c = 0; c < src.components; c++) {
        ih_ycc_comp &k = d.comp[c];
        k.data = src.planes[c];
        k.pitch = src.pitches[c];
        k.width = (uint32_t)(((uint64_t)src.width * src.h[c] + (uint64_t)mh - 1) / (uint64_t)mh);
        k.height = (uint32_t)(((uint64_t)src.height * src.v[c] + (uint64_t)mv - 1) / (uint64_t)mv);
        k.rh = (uint8_t)(mh / src.h[c]);
        k.rv = (uint8_t)(mv / src.v[c]);
        d.method[c] = (uint8_t)ih_ycc_up_method(k.rh, k.rv, k.width);
    }
    return d;
}

} // namespace

extern "C" int ih_ycc_gray_launch(const ih_ycc_image *images, int count, void *stream)
{
    for (int i = 0; i < count; i++) {
        const int h[3] = {images[i].h[0], images[i].h[1], images[i].h[2]};
        const int v[3] = {images[i].v[0], images[i].v[1], images[i].v[2]};
        if (!ih_jpeg_color_exact(images[i].components, h, v)) {
            return -1;
        }
    }
    for (int first = 0; first < count; first += CHUNK) {
        const int n = count - first < CHUNK ? count - first : CHUNK;
        Chunk chunk = {};
        uint32_t wmax = 0, hmax = 0;
        for (int i = 0; i < n; i++) {
            chunk.image[i] = describe(images[first + i]);
            wmax = images[first + i].width > wmax ? images[first + i].width : wmax;
            hmax = images[first + i].height > hmax ? images[first + i].height : hmax;
        }
        if (wmax == 0 || hmax == 0) {
            continue;
        }
        const dim3 block(TILE_X, TILE_Y);
        const dim3 grid((wmax + TILE_X - 1) / TILE_X, (hmax + TILE_Y - 1) / TILE_Y, (unsigned)n);
        ycc_gray_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(chunk);
        if (cudaGetLastError() != cudaSuccess) {
            return -2;
        }
    }
    return 0;
}
