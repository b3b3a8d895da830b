/* The CPU reference path: histogram and LUT application. */
#include <string.h>

#include "cpu_hist.h"

/*
 * Four interleaved 32-bit sub-histograms break the store-to-load dependency
 * when neighbouring pixels share a value (flat image regions), the common case
 * in photographs. The sub-histograms are folded into the 64-bit result before
 * any of them could overflow.
 */
#define IH_FOLD_EVERY (UINT32_C(1) << 30)

static void fold(uint32_t sub[4][IH_U8_BINS], uint64_t hist[IH_U8_BINS])
{
    for (int b = 0; b < IH_U8_BINS; b++) {
        hist[b] += (uint64_t)sub[0][b] + sub[1][b] + sub[2][b] + sub[3][b];
    }
    memset(sub, 0, sizeof(uint32_t) * 4 * IH_U8_BINS);
}

void ih_cpu_hist_u8(const uint8_t *pixels, size_t pitch, uint32_t width, uint32_t height,
                      uint64_t hist[IH_U8_BINS])
{
    uint32_t sub[4][IH_U8_BINS];
    memset(sub, 0, sizeof sub);
    memset(hist, 0, sizeof(uint64_t) * IH_U8_BINS);

    uint64_t since_fold = 0;
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *p = pixels + (size_t)y * pitch;
        uint32_t x = 0;
        for (; x + 4 <= width; x += 4) {
            sub[0][p[x]]++;
            sub[1][p[x + 1]]++;
            sub[2][p[x + 2]]++;
            sub[3][p[x + 3]]++;
        }
        for (; x < width; x++) {
            sub[0][p[x]]++;
        }
        since_fold += width;
        if (since_fold >= IH_FOLD_EVERY) {
            fold(sub, hist);
            since_fold = 0;
        }
    }
    fold(sub, hist);
}

void ih_cpu_apply_lut_u8(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                      uint32_t width, uint32_t height, const uint8_t lut[IH_U8_BINS])
{
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *s = src + (size_t)y * src_pitch;
        uint8_t *d = dst + (size_t)y * dst_pitch;
        for (uint32_t x = 0; x < width; x++) {
            d[x] = lut[s[x]];
        }
    }
}
