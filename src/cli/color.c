/*
 * --color luma|channels: --equalize (or --clahe) on a colour image, written
 * as a colour PNG, the way OpenCV users do it:
 *  - luma: cvtColor(BGR2YCrCb), equalizeHist (or CLAHE) of Y, cvtColor
 *    (YCrCb2BGR), with OpenCV 4.6's 8-bit fixed-point conversions
 *    (imgproc color_yuv: 14-bit coefficients, CV_DESCALE rounding);
 *  - channels: R, G and B each equalized (or CLAHE'd) on its own.
 * The histograms, clipping and lookups run on the context's backend (the GPU
 * with --backend cuda); the colour conversions on the host. Alpha is
 * dropped and a gray image becomes three equal channels, as imread's
 * IMREAD_COLOR gives them.
 */
#include <stdlib.h>
#include <string.h>

#include "color.h"

#define YUV_SHIFT 14
#define DESCALE(x) (((x) + (1 << (YUV_SHIFT - 1))) >> YUV_SHIFT)

static uint8_t sat8(int v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* OpenCV's RGB2YCrCb_i<uchar>: Y, Cr, Cb of one pixel. */
static void to_ycrcb(int r, int g, int b, uint8_t *y, uint8_t *cr, uint8_t *cb)
{
    const int Y = DESCALE(r * 4899 + g * 9617 + b * 1868);
    const int delta = 128 << YUV_SHIFT;
    *y = sat8(Y);
    *cr = sat8(DESCALE((r - Y) * 11682 + delta));
    *cb = sat8(DESCALE((b - Y) * 9241 + delta));
}

/* OpenCV's YCrCb2RGB_i<uchar>. */
static void from_ycrcb(int Y, int cr, int cb, uint8_t *rgb)
{
    cr -= 128;
    cb -= 128;
    rgb[0] = sat8(Y + DESCALE(cr * 22987));
    rgb[1] = sat8(Y + DESCALE(cb * -5636 + cr * -11698));
    rgb[2] = sat8(Y + DESCALE(cb * 29049));
}

/* One plane through --equalize's or --clahe's transform, in place. */
static imghist_status transform(imghist_ctx *ctx, const ih_cli_args *a, uint8_t *plane,
                                uint32_t w, uint32_t h)
{
    const imghist_view v = {.data = plane, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                            .width = w, .height = h, .pitch = w, .channels = 1};
    if (a->clahe) {
        return imghist_clahe(ctx, &v, &v, a->clip, a->tiles_x, a->tiles_y);
    }
    return imghist_equalize(ctx, &v, &v, IMGHIST_EQ_OPENCV, NULL);
}

imghist_status ih_color_equalize(imghist_ctx *ctx, const ih_cli_args *a, const imghist_view *in,
                                 uint8_t **out)
{
    *out = NULL;
    const uint32_t w = in->width, h = in->height;
    const uint32_t ch = in->channels == 0 ? 1 : in->channels;
    const size_t n = (size_t)w * h;
    uint8_t *rgb = malloc(n * 3);
    uint8_t *planes = malloc(n * 3);
    if (rgb == NULL || planes == NULL) {
        free(rgb);
        free(planes);
        return IMGHIST_E_NOMEM;
    }
    /* RGB without alpha (gray replicated). */
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *s = (const uint8_t *)in->data + (size_t)y * in->pitch;
        uint8_t *d = rgb + (size_t)y * w * 3;
        for (uint32_t x = 0; x < w; x++, s += ch, d += 3) {
            d[0] = s[0];
            d[1] = ch >= 3 ? s[1] : s[0];
            d[2] = ch >= 3 ? s[2] : s[0];
        }
    }
    uint8_t *p0 = planes, *p1 = planes + n, *p2 = planes + 2 * n;
    if (a->color == IH_COLOR_LUMA) {
        for (size_t i = 0; i < n; i++) {
            to_ycrcb(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], &p0[i], &p1[i], &p2[i]);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            p0[i] = rgb[3 * i];
            p1[i] = rgb[3 * i + 1];
            p2[i] = rgb[3 * i + 2];
        }
    }
    imghist_status st = transform(ctx, a, p0, w, h);
    if (st == IMGHIST_OK && a->color == IH_COLOR_CHANNELS) {
        st = transform(ctx, a, p1, w, h);
        if (st == IMGHIST_OK) {
            st = transform(ctx, a, p2, w, h);
        }
    }
    if (st == IMGHIST_OK) {
        for (size_t i = 0; i < n; i++) {
            if (a->color == IH_COLOR_LUMA) {
                from_ycrcb(p0[i], p1[i], p2[i], rgb + 3 * i);
            } else {
                rgb[3 * i] = p0[i];
                rgb[3 * i + 1] = p1[i];
                rgb[3 * i + 2] = p2[i];
            }
        }
    }
    free(planes);
    if (st != IMGHIST_OK) {
        free(rgb);
        return st;
    }
    *out = rgb;
    return IMGHIST_OK;
}
