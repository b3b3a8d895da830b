/*
 * 8-bit colour conversions for counting (imghist_space): the integer rules
 * of OpenCV 4.6's cvtColor for BGR/RGB -> HSV, HSV_FULL and Lab on 8-bit
 * images, so that a converted pixel equals cv2.cvtColor's bit for bit
 * (docs/ndhist.md writes the rules down). The per-pixel functions are
 * shared by the CPU loops and, compiled by nvcc, by the kernels; the tables
 * they read are built once on the host (core/colorspace.c) and copied to
 * the device as they are.
 */
#ifndef IMGHIST_COLORSPACE_H
#define IMGHIST_COLORSPACE_H

#include <stdint.h>

#include "imghist.h"

#ifdef __CUDACC__
#  define IH_CS_HD __host__ __device__ __forceinline__
#else
#  define IH_CS_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define IH_HSV_SHIFT 12
#define IH_LAB_SHIFT 12   /* fixed-point bits of the XYZ coefficients */
#define IH_GAMMA_SHIFT 3  /* extra bits of the linearised samples */
#define IH_LAB_SHIFT2 (IH_LAB_SHIFT + IH_GAMMA_SHIFT)
#define IH_LAB_CBRT_SIZE (256 * 3 / 2 * (1 << IH_GAMMA_SHIFT))

typedef struct ih_color_tables {
    int32_t sdiv[256];      /* round(255 * 2^12 / v) */
    int32_t hdiv180[256];   /* round(180 * 2^12 / (6 d)) */
    int32_t hdiv256[256];   /* round(256 * 2^12 / (6 d)) */
    uint16_t gamma[256];    /* sRGB to linear, times 255 * 2^3, rounded */
    uint16_t cbrt[IH_LAB_CBRT_SIZE]; /* f(x) of CIE Lab times 2^15 at x = i / (255 * 2^3) */
    int32_t lab[9];         /* sRGB -> XYZ / white point times 2^12, rows X Y Z, columns B G R */
} ih_color_tables;

/* The tables, built on first use (thread-safe); never NULL. */
const ih_color_tables *ih_color_tables_get(void);

/* Whether a space is known, and whether it swaps red and blue (RGB input). */
static inline int ih_space_valid(imghist_space s)
{
    return s >= IMGHIST_SPACE_NONE && s <= IMGHIST_SPACE_RGB2LAB;
}
static inline int ih_space_rgb(imghist_space s)
{
    return s == IMGHIST_SPACE_RGB2HSV || s == IMGHIST_SPACE_RGB2HSV_FULL ||
           s == IMGHIST_SPACE_RGB2LAB;
}

IH_CS_HD uint8_t ih_sat_u8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* HSV of one pixel; hr is 180 or 256, hdiv the matching table. The sum for
 * h picks one of three differences by masks so it has no branch on the
 * device, as the integer rule has none. */
IH_CS_HD void ih_hsv_pixel(int b, int g, int r, int hr, const int32_t *sdiv,
                           const int32_t *hdiv, uint8_t out[3])
{
    int v = b > g ? b : g;
    v = v > r ? v : r;
    int vmin = b < g ? b : g;
    vmin = vmin < r ? vmin : r;
    const int diff = v - vmin;
    const int vr = v == r ? -1 : 0;
    const int vg = v == g ? -1 : 0;
    const int half = 1 << (IH_HSV_SHIFT - 1);
    const int s = (diff * sdiv[v] + half) >> IH_HSV_SHIFT;
    int h = (vr & (g - b)) + (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    h = (h * hdiv[diff] + half) >> IH_HSV_SHIFT;
    h += h < 0 ? hr : 0;
    out[0] = ih_sat_u8(h);
    out[1] = (uint8_t)s;
    out[2] = (uint8_t)v;
}

/* Lab of one pixel: linearise through gamma, XYZ in fixed point, the cube
 * root by table, then L, a, b in 2^15 fixed point rounded and saturated. */
IH_CS_HD void ih_lab_pixel(int b, int g, int r, const uint16_t *gamma, const uint16_t *cbrt,
                           const int32_t *c, uint8_t out[3])
{
    const int B = gamma[b], G = gamma[g], R = gamma[r];
    const int half = 1 << (IH_LAB_SHIFT - 1);
    const int fx = cbrt[(B * c[0] + G * c[1] + R * c[2] + half) >> IH_LAB_SHIFT];
    const int fy = cbrt[(B * c[3] + G * c[4] + R * c[5] + half) >> IH_LAB_SHIFT];
    const int fz = cbrt[(B * c[6] + G * c[7] + R * c[8] + half) >> IH_LAB_SHIFT];
    const int lscale = (116 * 255 + 50) / 100;
    const int lshift = -((16 * 255 * (1 << IH_LAB_SHIFT2) + 50) / 100);
    const int half2 = 1 << (IH_LAB_SHIFT2 - 1);
    const int ab0 = 128 * (1 << IH_LAB_SHIFT2) + half2;
    out[0] = ih_sat_u8((lscale * fy + lshift + half2) >> IH_LAB_SHIFT2);
    out[1] = ih_sat_u8((500 * (fx - fy) + ab0) >> IH_LAB_SHIFT2);
    out[2] = ih_sat_u8((200 * (fy - fz) + ab0) >> IH_LAB_SHIFT2);
}

/* One pixel p (B, G, R order, or R, G, B for RGB spaces) in space s, which
 * is not IMGHIST_SPACE_NONE. */
IH_CS_HD void ih_convert_pixel(const ih_color_tables *t, imghist_space s, const uint8_t *p,
                               uint8_t out[3])
{
    const int rgb = s == IMGHIST_SPACE_RGB2HSV || s == IMGHIST_SPACE_RGB2HSV_FULL ||
                    s == IMGHIST_SPACE_RGB2LAB;
    const int b = rgb ? p[2] : p[0], g = p[1], r = rgb ? p[0] : p[2];
    switch (s) {
    case IMGHIST_SPACE_BGR2HSV:
    case IMGHIST_SPACE_RGB2HSV: ih_hsv_pixel(b, g, r, 180, t->sdiv, t->hdiv180, out); break;
    case IMGHIST_SPACE_BGR2HSV_FULL:
    case IMGHIST_SPACE_RGB2HSV_FULL: ih_hsv_pixel(b, g, r, 256, t->sdiv, t->hdiv256, out); break;
    default: ih_lab_pixel(b, g, r, t->gamma, t->cbrt, t->lab, out); break;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* IMGHIST_COLORSPACE_H */
