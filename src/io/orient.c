/* EXIF orientation, applied to a gray plane as cv::imread applies it. */
#include <stdlib.h>

#include "orient.h"

/*
 * EXIF orientations, as cv::imread applies them (loadsave.cpp,
 * ApplyExifOrientation): 2 mirror left-right, 3 rotate 180, 4 mirror
 * top-bottom; 5..8 transpose first, then 6 mirror left-right, 7 both,
 * 8 top-bottom. Output pixel (x, y) comes from the transposed-or-not source
 * at the mirrored coordinates; the loops go in 32 x 32 tiles so that a
 * transpose does not walk the source a column at a time.
 */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o)
{
    const int transpose = o >= 5;
    const int mirror_x = o == 2 || o == 3 || o == 6 || o == 7;
    const int mirror_y = o == 3 || o == 4 || o == 7 || o == 8;
    const uint32_t sw = *w, sh = *h;
    const uint32_t dw = transpose ? sh : sw, dh = transpose ? sw : sh;
    uint8_t *dst = malloc((size_t)dw * dh);
    if (dst == NULL) {
        return NULL;
    }
    enum { TILE = 32 };
    for (uint32_t y0 = 0; y0 < dh; y0 += TILE) {
        for (uint32_t x0 = 0; x0 < dw; x0 += TILE) {
            const uint32_t y1 = dh - y0 < TILE ? dh : y0 + TILE;
            const uint32_t x1 = dw - x0 < TILE ? dw : x0 + TILE;
            for (uint32_t y = y0; y < y1; y++) {
                const uint32_t ty = mirror_y ? dh - 1 - y : y;
                for (uint32_t x = x0; x < x1; x++) {
                    const uint32_t tx = mirror_x ? dw - 1 - x : x;
                    /* (tx, ty) in the transposed image is (ty, tx) in the source */
                    dst[(size_t)y * dw + x] =
                        transpose ? src[(size_t)tx * sw + ty] : src[(size_t)ty * sw + tx];
                }
            }
        }
    }
    *w = dw;
    *h = dh;
    return dst;
}
