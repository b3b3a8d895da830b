/*
 * The CUDA kernel of the YCbCr planes to gray conversion (ih_ycc_gray_launch)
 * against the CPU reference (ih_ycc_planes_to_gray) on the same planes,
 * libjpeg's raw data output uploaded: the inputs of test_ycc_gray, all in one
 * batch (several launches' worth). 77 (skipped) without a usable GPU.
 * usage: test_ycc_gray_cuda [DIR...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "ycc_cases.h"
#include "ycc_gray.h"

int main(int argc, char **argv)
{
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus == 0) {
        printf("no usable GPU\n");
        return 77;
    }
    ycc_case *cases;
    size_t n;
    if (ycc_inputs(argv + 1, argc - 1, &cases, &n) != 0) {
        return 1;
    }
    ycc_raw *raws = calloc(n, sizeof *raws);
    ih_ycc_image *images = calloc(n, sizeof *images);
    size_t *which = calloc(n, sizeof *which);
    if (raws == NULL || images == NULL || which == NULL) {
        return 1;
    }
    size_t count = 0;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        ycc_raw *r = &raws[count];
        if (ycc_raw_read(cases[i].data, cases[i].size, r) != 0) {
            continue;
        }
        if ((r->components == 3 && !r->ycc) ||
            !ih_jpeg_color_exact(r->components, r->h, r->v)) {
            ycc_raw_free(r);
            continue;
        }
        ih_ycc_image *im = &images[count];
        im->components = r->components;
        im->width = r->width;
        im->height = r->height;
        for (int c = 0; c < r->components; c++) {
            const size_t bytes = r->pitches[c] * r->rows[c];
            uint8_t *dev = NULL;
            if (cudaMalloc((void **)&dev, bytes) != cudaSuccess ||
                cudaMemcpy(dev, r->planes[c], bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
                printf("FAIL: device memory\n");
                return 1;
            }
            im->planes[c] = dev;
            im->pitches[c] = r->pitches[c];
            im->h[c] = (uint8_t)r->h[c];
            im->v[c] = (uint8_t)r->v[c];
        }
        im->gray_pitch = r->width;
        if (cudaMalloc((void **)&im->gray, (size_t)r->width * r->height) != cudaSuccess) {
            printf("FAIL: device memory\n");
            return 1;
        }
        which[count++] = i;
    }
    if (ih_ycc_gray_launch(images, (int)count, NULL) != 0 ||
        cudaDeviceSynchronize() != cudaSuccess) {
        printf("FAIL: the launch failed\n");
        return 1;
    }
    size_t same = 0;
    for (size_t k = 0; k < count; k++) {
        const ycc_raw *r = &raws[k];
        const size_t bytes = (size_t)r->width * r->height;
        uint8_t *want = malloc(bytes), *got = malloc(bytes);
        if (want == NULL || got == NULL ||
            ih_ycc_planes_to_gray((const uint8_t *const *)r->planes, r->pitches, r->h, r->v,
                                  r->components, r->width, r->height, want, r->width) != 0 ||
            cudaMemcpy(got, images[k].gray, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
            printf("FAIL %s: no reference or no copy\n", cases[which[k]].name);
            failed = 1;
        } else {
            size_t bad = 0;
            for (size_t p = 0; p < bytes; p++) {
                bad += got[p] != want[p];
            }
            if (bad != 0) {
                printf("FAIL %s (%s): %zu of %zu pixels differ\n", cases[which[k]].name,
                       r->layout, bad, bytes);
                failed = 1;
            } else {
                same++;
            }
        }
        free(want);
        free(got);
        for (int c = 0; c < r->components; c++) {
            cudaFree((void *)images[k].planes[c]);
        }
        cudaFree(images[k].gray);
        ycc_raw_free(&raws[k]);
    }
    printf("%zu of %zu images identical\n", same, count);
    free(raws);
    free(images);
    free(which);
    ycc_inputs_free(cases, n);
    return failed || same == 0 ? 1 : 0;
}
