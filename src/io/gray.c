/* Colour to gray (gray.h). */
#include "gray.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* cvtColor(BGR2GRAY) for CV_16U: the 15-bit weights of the 8-bit case
 * (OpenCV 4.6 and 5.0, with and without IPP; every one of a million random
 * pixels, tests/test_color_ref.py), not the 14-bit ones of its source's
 * 16-bit table. The sum stays below 2^31 (the weights add up to 2^15). */
static inline uint16_t gray16_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint16_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

/*
 * cvtColor(BGR2GRAY) for CV_32F as OpenCV 4.6 computes it on x86-64 with
 * AVX2 (every pixel of 284 shapes, widths 1 to 69, 1001 and 4000, 3 and 4
 * channels, and of a 3000x2000 image; tests/test_pfm_ref.py compares
 * PFMs): its 8-wide vector loop gives
 * fma(R, 0.299, fma(G, 0.587, B * 0.114)), and the scalar loop for the last
 * width % 8 pixels of each row, compiled with contraction,
 * fma(R, 0.299, fma(B, 0.114, G * 0.587)). Where OpenCV runs without FMA, its
 * sums round once more and can end one unit in the last place apart.
 */
static inline float grayf_vector(float r, float g, float b)
{
    return fmaf(r, 0.299f, fmaf(g, 0.587f, b * 0.114f));
}

static inline float grayf_tail(float r, float g, float b)
{
    return fmaf(r, 0.299f, fmaf(b, 0.114f, g * 0.587f));
}

/*
 * The BGR2GRAY reduction of packed 8-bit RGB, the hot loop of a colour JPEG
 * or PNG read in that mode. Compilers vectorize the plain loop for AVX2 but
 * not for the SSE2 of the x86-64 baseline, so an AVX2 copy is chosen at run
 * time where the CPU has it.
 */
static inline __attribute__((always_inline)) void gray_row(const uint8_t *p, uint8_t *g,
                                                          size_t n)
{
    for (size_t i = 0; i < n; i++, p += 3) {
        g[i] = ih_gray_from_rgb(p[0], p[1], p[2]);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#if defined(__clang__)
#define IH_AVX2_FN __attribute__((target("avx2")))
#else
#define IH_AVX2_FN __attribute__((target("avx2"), optimize("O3")))
#endif
IH_AVX2_FN static void gray_row_avx2(const uint8_t *p, uint8_t *g, size_t n)
{
    gray_row(p, g, n);
}
#endif

void ih_gray_from_rgb_row(const uint8_t *rgb, uint8_t *gray, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
        gray_row_avx2(rgb, gray, n);
        return;
    }
#endif
    gray_row(rgb, gray, n);
}

void *ih_gray_from_samples(const void *samples, uint32_t width, uint32_t height, int channels,
                           imghist_dtype dtype, imghist_gray_mode mode)
{
    const size_t n = (size_t)width * height;
    const size_t step = (size_t)channels;
    const size_t size = ih_dtype_size(dtype);
    void *gray = malloc(n * size);
    if (gray == NULL) {
        return NULL;
    }
    if (channels == 2) { /* gray + alpha */
        const uint8_t *p = samples;
        uint8_t *g = gray;
        for (size_t i = 0; i < n; i++) {
            memcpy(g + i * size, p + i * 2 * size, size);
        }
    } else if (dtype == IMGHIST_U8) {
        const uint8_t *p = samples;
        uint8_t *g = gray;
        if (mode == IMGHIST_GRAY_LUMA) {
            for (size_t i = 0; i < n; i++, p += step) {
                g[i] = ih_luma14_from_rgb(p[0], p[1], p[2]);
            }
        } else if (step == 3) {
            ih_gray_from_rgb_row(p, g, n);
        } else {
            for (size_t i = 0; i < n; i++, p += step) {
                g[i] = ih_gray_from_rgb(p[0], p[1], p[2]);
            }
        }
    } else if (dtype == IMGHIST_U16) {
        const uint16_t *p = samples;
        uint16_t *g = gray;
        for (size_t i = 0; i < n; i++, p += step) {
            g[i] = gray16_from_rgb(p[0], p[1], p[2]);
        }
    } else {
        const float *p = samples;
        float *g = gray;
        const uint32_t vector_part = width - width % 8;
        for (uint32_t y = 0; y < height; y++) {
            for (uint32_t x = 0; x < width; x++, p += step) {
                *g++ = x < vector_part ? grayf_vector(p[0], p[1], p[2])
                                       : grayf_tail(p[0], p[1], p[2]);
            }
        }
    }
    return gray;
}
