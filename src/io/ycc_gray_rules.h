/*
 * One output pixel of OpenCV's imread(IMREAD_COLOR) + cvtColor(BGR2GRAY) on
 * a YCbCr JPEG, computed from the decoder's component planes (the inverse
 * DCT's samples, each at its own subsampled size). Shared by the CPU
 * reference (ycc_gray.c) and the CUDA kernel (kernels/ycc_gray.cu) so that
 * both follow one set of rules:
 *
 * - Chroma upsampling as libjpeg-turbo 2.x does it with fancy upsampling on
 *   (its default): a component at half the horizontal rate (h2v1) or at half
 *   both rates (h2v2) whose plane is more than 2 samples wide is
 *   interpolated with a triangle filter (3/4 nearer, 1/4 further sample; the
 *   2-D case sums columns first, 3 x nearer row + further row); one at half
 *   the vertical rate only (h1v2) likewise, at any width; every other
 *   integral ratio (and h2v1/h2v2 planes 1 or 2 samples wide) replicates.
 *   Neighbours past an edge are the edge sample itself. The rounding biases
 *   alternate between the two outputs of an input sample so that the
 *   filter is not biased up or down: +1/+2 (>> 2) and +8/+7 (>> 4).
 * - YCbCr to RGB in 16-bit fixed point with libjpeg's constants: R = Y +
 *   round(1.402 (Cr - 128)), B = Y + round(1.772 (Cb - 128)), G = Y +
 *   floor((-0.34414 (Cb - 128) - 0.71414 (Cr - 128)) 2^16 + 2^15) / 2^16,
 *   each coefficient rounded to 16 fractional bits, then clamped to 0..255.
 * - Gray with cvtColor's 15-bit weights (gray.h, ih_gray_from_rgb).
 */
#ifndef IMGHIST_YCC_GRAY_RULES_H
#define IMGHIST_YCC_GRAY_RULES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define IH_YCC_FN static __host__ __device__ __forceinline__
#else
#define IH_YCC_FN static inline
#endif

/* One component plane and how to bring it to full size. */
typedef struct ih_ycc_comp {
    const uint8_t *data;
    size_t pitch;        /* bytes between rows */
    uint32_t width;      /* samples per row that carry the image (downsampled width) */
    uint32_t height;     /* rows that carry the image (downsampled height) */
    uint8_t rh, rv;      /* full size / this size, horizontally and vertically */
} ih_ycc_comp;

/* Upsampling methods, chosen per component from its ratios and width. */
enum { IH_UP_FULL = 0, IH_UP_H2V1 = 1, IH_UP_H1V2 = 2, IH_UP_H2V2 = 3, IH_UP_REPLICATE = 4 };

IH_YCC_FN int ih_ycc_up_method(uint32_t rh, uint32_t rv, uint32_t width)
{
    if (rh == 1 && rv == 1) {
        return IH_UP_FULL;
    }
    if (rh == 2 && rv == 1) {
        return width > 2 ? IH_UP_H2V1 : IH_UP_REPLICATE;
    }
    if (rh == 1 && rv == 2) {
        return IH_UP_H1V2;
    }
    if (rh == 2 && rv == 2) {
        return width > 2 ? IH_UP_H2V2 : IH_UP_REPLICATE;
    }
    return IH_UP_REPLICATE;
}

IH_YCC_FN uint32_t ih_ycc_sample(const ih_ycc_comp *c, uint32_t x, uint32_t y)
{
    return c->data[(size_t)y * c->pitch + x];
}

/* Component c's sample at full-size position (x, y). */
IH_YCC_FN uint32_t ih_ycc_upsampled(const ih_ycc_comp *c, int method, uint32_t x, uint32_t y)
{
    switch (method) {
    case IH_UP_FULL:
        return ih_ycc_sample(c, x, y);
    case IH_UP_H2V1: {
        const uint32_t cx = x >> 1;
        const uint32_t near3 = 3u * ih_ycc_sample(c, cx, y);
        if ((x & 1u) == 0) {
            return (near3 + ih_ycc_sample(c, cx > 0 ? cx - 1 : 0, y) + 1u) >> 2;
        }
        return (near3 + ih_ycc_sample(c, cx + 1 < c->width ? cx + 1 : cx, y) + 2u) >> 2;
    }
    case IH_UP_H1V2: {
        const uint32_t cy = y >> 1;
        const uint32_t near3 = 3u * ih_ycc_sample(c, x, cy);
        if ((y & 1u) == 0) {
            return (near3 + ih_ycc_sample(c, x, cy > 0 ? cy - 1 : 0) + 1u) >> 2;
        }
        return (near3 + ih_ycc_sample(c, x, cy + 1 < c->height ? cy + 1 : cy) + 2u) >> 2;
    }
    case IH_UP_H2V2: {
        const uint32_t cy = y >> 1, cx = x >> 1;
        const uint32_t ny = (y & 1u) == 0 ? (cy > 0 ? cy - 1 : 0) : (cy + 1 < c->height ? cy + 1 : cy);
        const uint32_t nx = (x & 1u) == 0 ? (cx > 0 ? cx - 1 : 0) : (cx + 1 < c->width ? cx + 1 : cx);
        const uint32_t here = 3u * ih_ycc_sample(c, cx, cy) + ih_ycc_sample(c, cx, ny);
        const uint32_t side = 3u * ih_ycc_sample(c, nx, cy) + ih_ycc_sample(c, nx, ny);
        return (3u * here + side + ((x & 1u) == 0 ? 8u : 7u)) >> 4;
    }
    default:
        return ih_ycc_sample(c, x / c->rh, y / c->rv);
    }
}

IH_YCC_FN int32_t ih_ycc_clamp(int32_t v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

/* 16-bit fixed point: each coefficient x 2^16, rounded. */
#define IH_YCC_ONE_HALF ((int32_t)1 << 15)
#define IH_YCC_CR_R 91881  /* 1.40200 */
#define IH_YCC_CB_B 116130 /* 1.77200 */
#define IH_YCC_CR_G 46802  /* 0.71414 */
#define IH_YCC_CB_G 22554  /* 0.34414 */

/* BGR2GRAY of one YCbCr triple (full-size samples). */
IH_YCC_FN uint8_t ih_ycc_gray(uint32_t y, uint32_t cb, uint32_t cr)
{
    const int32_t b0 = (int32_t)cb - 128, r0 = (int32_t)cr - 128, l = (int32_t)y;
    /* Arithmetic shifts of negative values: floor division, as the tables have it. */
    const int32_t r = ih_ycc_clamp(l + ((IH_YCC_CR_R * r0 + IH_YCC_ONE_HALF) >> 16));
    const int32_t b = ih_ycc_clamp(l + ((IH_YCC_CB_B * b0 + IH_YCC_ONE_HALF) >> 16));
    const int32_t g =
        ih_ycc_clamp(l + ((-IH_YCC_CB_G * b0 - IH_YCC_CR_G * r0 + IH_YCC_ONE_HALF) >> 16));
    return (uint8_t)((9798u * (uint32_t)r + 19235u * (uint32_t)g + 3735u * (uint32_t)b + 16384u) >>
                     15);
}

#endif
