/*
 * The CPU reference of N-dimensional histograms, colour conversion and
 * back-projection (core/ndhist.h). Integer samples go through one lookup
 * table an axis that holds each value's offset in cells (negative: in no
 * bin), so a pixel's cell is a sum of table entries; float samples are
 * binned one by one by ih_nd_bin.
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "colorspace.h"
#include "ndhist.h"

/* Below every sum of IMGHIST_MAX_DIMS offsets, each under 2^24. */
#define NO_BIN (-(1 << 28))

void ih_nd_luts(const ih_nd_job *job, uint32_t levels, int32_t *lut)
{
    for (uint32_t d = 0; d < job->dims; d++) {
        const ih_nd_axis *a = &job->ax[d];
        for (uint32_t v = 0; v < levels; v++) {
            const uint32_t b = ih_nd_bin(a, (double)v);
            lut[(size_t)d * levels + v] = b < a->bins ? (int32_t)(b * a->stride) : NO_BIN;
        }
    }
}

/* The cell of the pixel p of a float image, or -1. */
static int64_t float_cell(const ih_nd_job *job, const float *p)
{
    int64_t off = 0;
    for (uint32_t d = 0; d < job->dims; d++) {
        const ih_nd_axis *a = &job->ax[d];
        const uint32_t b = ih_nd_bin(a, (double)p[a->channel]);
        if (b >= a->bins) {
            return -1;
        }
        off += (int64_t)b * (int64_t)a->stride;
    }
    return off;
}

/* The cell of pixel x of a row, or a negative number: integer samples by
 * the tables (levels entries an axis), float samples by their bins. */
static inline int64_t pixel_cell(const ih_nd_job *job, const ih_color_tables *t,
                                 const int32_t *lut, uint32_t levels, const uint8_t *row,
                                 uint32_t x)
{
    const uint32_t ch = job->channels;
    int64_t off = 0;
    if (job->space != IMGHIST_SPACE_NONE) {
        uint8_t px[3];
        ih_convert_pixel(t, job->space, row + (size_t)x * ch, px);
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[d * 256u + px[job->ax[d].channel]];
        }
        return off;
    }
    switch (job->dtype) {
    case IMGHIST_U8: {
        const uint8_t *p = row + (size_t)x * ch;
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[d * 256u + p[job->ax[d].channel]];
        }
        return off;
    }
    case IMGHIST_U16: {
        const uint16_t *p = (const uint16_t *)(const void *)row + (size_t)x * ch;
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[(size_t)d * levels + p[job->ax[d].channel]];
        }
        return off;
    }
    default: return float_cell(job, (const float *)(const void *)row + (size_t)x * ch);
    }
}

/* What a pass over the pixels needs: the tables of an integer source
 * (NULL for floats) with `levels` entries an axis, and the colour tables
 * when a conversion comes first. */
typedef struct nd_pass {
    int32_t *lut;
    uint32_t levels;
    const ih_color_tables *t;
} nd_pass;

static imghist_status pass_begin(imghist_ctx *ctx, const ih_nd_job *job, nd_pass *p)
{
    p->lut = NULL;
    p->levels = 0;
    p->t = job->space != IMGHIST_SPACE_NONE ? ih_color_tables_get() : NULL;
    if (job->space == IMGHIST_SPACE_NONE && job->dtype == IMGHIST_F32) {
        return IMGHIST_OK;
    }
    p->levels = job->space == IMGHIST_SPACE_NONE && job->dtype == IMGHIST_U16 ? 65536u : 256u;
    p->lut = malloc((size_t)job->dims * p->levels * sizeof *p->lut);
    if (p->lut == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for lookup tables");
    }
    ih_nd_luts(job, p->levels, p->lut);
    return IMGHIST_OK;
}

imghist_status ih_cpu_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const imghist_counts *out)
{
    nd_pass p;
    if (pass_begin(ctx, job, &p) != IMGHIST_OK) {
        return IMGHIST_E_NOMEM;
    }
    const size_t n = src->count > 1 ? src->count : 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t *h = out->data + i * job->len;
        if (!job->accumulate) {
            memset(h, 0, job->len * sizeof *h);
        }
        const uint8_t *img = ih_image_at(src, i);
        const uint8_t *mask = ih_mask_at(src, i);
        uint64_t none = 0;
        for (uint32_t y = 0; y < src->height; y++) {
            const uint8_t *row = img + (size_t)y * src->pitch;
            const uint8_t *mrow = mask != NULL ? mask + (size_t)y * src->mask->pitch : NULL;
            for (uint32_t x = 0; x < src->width; x++) {
                if (mrow != NULL && mrow[x] == 0) {
                    continue;
                }
                const int64_t c = pixel_cell(job, p.t, p.lut, p.levels, row, x);
                if (c < 0) {
                    none++;
                } else {
                    h[c]++;
                }
            }
        }
        if (job->outliers) {
            h[job->cells] += none;
        }
    }
    free(p.lut);
    return IMGHIST_OK;
}

imghist_status ih_cpu_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, imghist_space space)
{
    (void)ctx;
    const ih_color_tables *t = ih_color_tables_get();
    const uint32_t ch = src->channels;
    const size_t n = src->count > 1 ? src->count : 1;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *img = ih_image_at(src, i);
        uint8_t *oimg = (uint8_t *)dst->data + (ptrdiff_t)i * dst->image_stride;
        for (uint32_t y = 0; y < src->height; y++) {
            const uint8_t *row = img + (size_t)y * src->pitch;
            uint8_t *orow = oimg + (size_t)y * dst->pitch;
            for (uint32_t x = 0; x < src->width; x++) {
                uint8_t px[3];
                ih_convert_pixel(t, space, row + (size_t)x * ch, px);
                memcpy(orow + (size_t)x * 3, px, 3);
            }
        }
    }
    return IMGHIST_OK;
}

/* One row of a back-projection: OpenCV multiplies in single precision,
 * then rounds half to even and saturates for integer types. */
static void backproject_row(const ih_nd_job *job, const nd_pass *p, const float *hist,
                            float scale, const uint8_t *row, uint32_t width, imghist_dtype dt,
                            void *out)
{
    for (uint32_t x = 0; x < width; x++) {
        const int64_t c = pixel_cell(job, p->t, p->lut, p->levels, row, x);
        const float v = c < 0 ? 0.0f : hist[c] * scale;
        if (dt == IMGHIST_F32) {
            ((float *)out)[x] = v;
            continue;
        }
        const float top = dt == IMGHIST_U8 ? 255.0f : 65535.0f;
        const long r = isnan(v) ? 0 : lrintf(fminf(fmaxf(v, 0.0f), top));
        if (dt == IMGHIST_U8) {
            ((uint8_t *)out)[x] = (uint8_t)r;
        } else {
            ((uint16_t *)out)[x] = (uint16_t)r;
        }
    }
}

imghist_status ih_cpu_backproject(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const float *hist, float scale,
                                  const imghist_view *dst)
{
    nd_pass p;
    if (pass_begin(ctx, job, &p) != IMGHIST_OK) {
        return IMGHIST_E_NOMEM;
    }
    const size_t n = src->count > 1 ? src->count : 1;
    for (size_t i = 0; i < n; i++) {
        for (uint32_t y = 0; y < src->height; y++) {
            backproject_row(job, &p, hist, scale, ih_image_at(src, i) + (size_t)y * src->pitch,
                            src->width, dst->dtype,
                            (uint8_t *)dst->data + (ptrdiff_t)i * dst->image_stride +
                                (size_t)y * dst->pitch);
        }
    }
    free(p.lut);
    return IMGHIST_OK;
}
