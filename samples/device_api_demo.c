/*
 * device_api_demo: imghist's device API on an image the program uploads itself.
 *
 *   device_api_demo [IMAGE [OUT.png]]
 *
 * Loads IMAGE (default samples/moon.png) with imghist, copies it into a pitched
 * device buffer with the CUDA runtime, then on one stream: the histogram
 * straight into device memory, and the equalization in place. The results come
 * back only at the end, as a pipeline that keeps frames on the GPU would do.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "imghist.h"

#define CUDA_OK(call)                                                                  \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "device_api_demo: %s: %s\n", #call, cudaGetErrorString(e_)); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    const char *in = argc > 1 ? argv[1] : "samples/moon.png";
    const char *out = argc > 2 ? argv[2] : NULL;

    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CUDA, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        imghist_destroy(ctx);
        return 1;
    }
    imghist_image *img = NULL;
    if (imghist_load_file(ctx, in, &img) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        imghist_destroy(ctx);
        return 1;
    }

    uint8_t *d_img = NULL;
    size_t pitch = 0;
    uint64_t *d_hist = NULL;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMallocPitch((void **)&d_img, &pitch, img->width, img->height));
    CUDA_OK(cudaMalloc((void **)&d_hist, IMGHIST_BINS * sizeof(uint64_t)));
    CUDA_OK(cudaMemcpy2DAsync(d_img, pitch, img->pixels, img->pitch, img->width, img->height,
                              cudaMemcpyHostToDevice, stream));

    imghist_device_image dimg = {d_img, pitch, img->width, img->height};
    uint64_t hist[IMGHIST_BINS];
    if (imghist_cuda_histogram(ctx, &dimg, d_hist, IMGHIST_MEM_DEVICE, stream) != IMGHIST_OK ||
        imghist_cuda_equalize(ctx, &dimg, d_img, pitch, NULL, IMGHIST_MEM_HOST, stream) !=
            IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        return 1;
    }
    CUDA_OK(cudaMemcpyAsync(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaMemcpy2DAsync(img->pixels, img->pitch, d_img, pitch, img->width, img->height,
                              cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    uint64_t total = 0;
    int used = 0;
    for (int b = 0; b < IMGHIST_BINS; b++) {
        total += hist[b];
        used += hist[b] != 0;
    }
    printf("%s: %ux%u on the GPU (pitch %zu): %llu pixels in %d distinct values\n", in,
           img->width, img->height, pitch, (unsigned long long)total, used);
    int rc = total == (uint64_t)img->width * img->height ? 0 : 1;
    if (out != NULL && imghist_write_png(ctx, out, img->pixels, img->pitch, img->width,
                                         img->height) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        rc = 1;
    }
    cudaFree(d_img);
    cudaFree(d_hist);
    cudaStreamDestroy(stream);
    imghist_image_free(img);
    imghist_destroy(ctx);
    return rc;
}
