/* EXIF orientation, applied to an image as cv::imread applies it. */
#include <stdlib.h>
#include <string.h>

#include "orient.h"

/*
 * EXIF orientations, as cv::imread applies them (loadsave.cpp,
 * ApplyExifOrientation): 2 mirror left-right, 3 rotate 180, 4 mirror
 * top-bottom; 5..8 transpose first, then 6 mirror left-right, 7 both,
 * 8 top-bottom. Output pixel (x, y) comes from the transposed-or-not source
 * at the mirrored coordinates; the loops go in 32 x 32 tiles so that a
 * transpose does not walk the source a column at a time.
 */
void *ih_orient_pixels(const void *src_, uint32_t *w, uint32_t *h, int o, size_t pixel_bytes)
{
    const uint8_t *src = src_;
    const int transpose = o >= 5;
    const int mirror_x = o == 2 || o == 3 || o == 6 || o == 7;
    const int mirror_y = o == 3 || o == 4 || o == 7 || o == 8;
    const uint32_t sw = *w, sh = *h;
    const uint32_t dw = transpose ? sh : sw, dh = transpose ? sw : sh;
    const size_t pb = pixel_bytes;
    uint8_t *dst = malloc((size_t)dw * dh * pb);
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
                    const size_t from = transpose ? (size_t)tx * sw + ty : (size_t)ty * sw + tx;
                    if (pb == 1) {
                        dst[(size_t)y * dw + x] = src[from];
                    } else {
                        memcpy(dst + ((size_t)y * dw + x) * pb, src + from * pb, pb);
                    }
                }
            }
        }
    }
    *w = dw;
    *h = dh;
    return dst;
}

uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o)
{
    return ih_orient_pixels(src, w, h, o, 1);
}
