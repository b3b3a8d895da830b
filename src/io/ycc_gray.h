/*
 * The BGR2GRAY gray plane of a JPEG from its decoded component planes
 * (ycc_gray_rules.h has the arithmetic): the CPU reference here and, in CUDA
 * builds, a batched kernel (kernels/ycc_gray.cu) that gives the same bits.
 * A GPU decoder that yields the planes (nvJPEG's NVJPEG_OUTPUT_YUV) gets from
 * them the bytes imghist's own JPEG decoder makes in the bgr2gray mode.
 */
#ifndef IMGHIST_YCC_GRAY_H
#define IMGHIST_YCC_GRAY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Whether the gray plane is reproduced exactly for a JPEG of `components`
 * components (1, gray; 3, YCbCr) with these sampling factors (the frame
 * header's, 1..4 each): every component's factors must divide the largest
 * ones, as libjpeg requires. Returns 1 or 0.
 */
int ih_jpeg_color_exact(int components, const int h[], const int v[]);

/*
 * Whether nvJPEG's hardware decoder (NVJPEG_OUTPUT_YUV) was measured to give
 * planes equal to libjpeg's inverse DCT output for this layout, so that the
 * gray plane made from them is exact (bench/results/jpeg-color-gpu.md):
 * gray at factors 1x1 only (a gray frame at 2x2 decodes to other samples),
 * and YCbCr with Cb and Cr alike at luma/chroma factors 1x1/1x1, 2x1/1x1,
 * 2x2/1x1, 1x2/1x1, 2x1/2x1, 2x2/1x2 or 2x2/2x1. The hardware itself refuses
 * 4:1:1, 4:1:0, ratio 3, mixed chroma and upsampled luma. Returns 1 or 0.
 */
int ih_nvjpeg_yuv_exact(int components, const int h[], const int v[]);

/*
 * planes[c] (rows pitches[c] bytes apart) hold component c's samples at its
 * own size: ceil(width * h[c] / max h) x ceil(height * v[c] / max v); no
 * padding is read. Writes width x height gray bytes to gray (rows gray_pitch
 * apart). One component: the plane is copied. Returns 0, or -1 when
 * ih_jpeg_color_exact refuses the layout.
 */
int ih_ycc_planes_to_gray(const uint8_t *const planes[], const size_t pitches[], const int h[],
                          const int v[], int components, uint32_t width, uint32_t height,
                          uint8_t *gray, size_t gray_pitch);

/* One image of a batch for the kernel: device planes, as above. */
typedef struct ih_ycc_image {
    const uint8_t *planes[3];
    size_t pitches[3];
    uint8_t h[3], v[3];
    int components;
    uint32_t width, height;
    uint8_t *gray; /* device, width x height */
    size_t gray_pitch;
} ih_ycc_image;

/*
 * Launches the gray conversion of count images (images: a host array; the
 * planes and gray outputs are device memory) on stream (a cudaStream_t, NULL
 * for the default one). Returns 0, -1 when an image's layout is not exact
 * (nothing is launched) or -2 when a launch fails (cudaGetLastError). Only in
 * CUDA builds (src/meson.build's ycc_gray_lib, which the CLI may link: the
 * library's copy of these symbols would be hidden).
 */
int ih_ycc_gray_launch(const ih_ycc_image *images, int count, void *stream);

#ifdef __cplusplus
}
#endif

#endif
