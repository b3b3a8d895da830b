/*
 * device_api_demo: imghist on an image that lives in device memory.
 *
 *   device_api_demo [IMAGE [OUT.png]]
 *
 * Loads IMAGE (default samples/moon.png) with imghist, copies it into a pitched
 * device buffer with the CUDA runtime, hands the context the program's own
 * stream, then: the histogram straight into device memory, and the
 * equalization in place, both described by device views. The results come
 * back only at the end, as a pipeline that keeps frames on the GPU would do.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "imghist.h"

#define BINS 256 /* one bin per 8-bit value */

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
    if (imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx) != IMGHIST_OK) {
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
    const imghist_view *hv = &img->view; /* the loaded image, in host memory */

    uint8_t *d_img = NULL;
    size_t pitch = 0;
    uint64_t *d_hist = NULL;
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    CUDA_OK(cudaMallocPitch((void **)&d_img, &pitch, hv->width, hv->height));
    CUDA_OK(cudaMalloc((void **)&d_hist, BINS * sizeof(uint64_t)));
    CUDA_OK(cudaMemcpy2DAsync(d_img, pitch, hv->data, hv->pitch, hv->width, hv->height,
                              cudaMemcpyHostToDevice, stream));

    /* The upload above and imghist's work below are ordered by being on one
     * stream: the context's, set here, not per call. */
    if (imghist_set_stream(ctx, stream) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        return 1;
    }
    const imghist_view dimg = {.data = d_img, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_DEVICE,
                               .width = hv->width, .height = hv->height, .pitch = pitch};
    const imghist_counts dcounts = {.data = d_hist, .len = BINS, .mem = IMGHIST_MEM_DEVICE};
    uint64_t hist[BINS];
    /* In place: dst is the source view itself. */
    if (imghist_histogram(ctx, &dimg, NULL, &dcounts) != IMGHIST_OK ||
        imghist_equalize(ctx, &dimg, &dimg, IMGHIST_EQ_OPENCV, NULL) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        return 1;
    }
    CUDA_OK(cudaMemcpyAsync(hist, d_hist, sizeof hist, cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaMemcpy2DAsync(hv->data, hv->pitch, d_img, pitch, hv->width, hv->height,
                              cudaMemcpyDeviceToHost, stream));
    CUDA_OK(cudaStreamSynchronize(stream));

    uint64_t total = 0;
    int used = 0;
    for (int b = 0; b < BINS; b++) {
        total += hist[b];
        used += hist[b] != 0;
    }
    printf("%s: %ux%u on the GPU (pitch %zu): %llu pixels in %d distinct values\n", in,
           hv->width, hv->height, pitch, (unsigned long long)total, used);
    int rc = total == (uint64_t)hv->width * hv->height ? 0 : 1;
    if (out != NULL && imghist_write_png(ctx, out, hv) != IMGHIST_OK) {
        fprintf(stderr, "device_api_demo: %s\n", imghist_last_error(ctx));
        rc = 1;
    }
    /* The context's work is on `stream`: destroy the context (which waits for
     * it) before the stream. */
    imghist_image_free(img);
    imghist_destroy(ctx);
    cudaFree(d_img);
    cudaFree(d_hist);
    cudaStreamDestroy(stream);
    return rc;
}
