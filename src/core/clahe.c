/*
 * CLAHE (contrast-limited adaptive histogram equalization), bit for bit as
 * OpenCV's createCLAHE(clip, Size(tiles_x, tiles_y))->apply() on CV_8UC1 and
 * CV_16UC1 (imgproc/src/clahe.cpp, its CPU path):
 *
 *  - Tiles. Any grid of 1 to 2^31 - 1 tiles a side. When the width and the
 *    height are both multiples of the grid, tile = size / grid. Otherwise
 *    the image is thought of as extended at the right by
 *    tiles_x - (w % tiles_x) columns and at the bottom by
 *    tiles_y - (h % tiles_y) rows (a full grid's worth when the side is
 *    already a multiple), mirrored without repeating the edge
 *    (BORDER_REFLECT_101), and tile = extended size / grid. A side with
 *    more tiles than pixels thus has tiles one pixel wide. Only the tile
 *    histograms see the extension, and only the tiles the blend reads are
 *    computed: the first used_x columns and used_y rows, up to those of the
 *    last pixel's neighbours (never more than the pixels of a side).
 *  - Clip limit. n = tile_w * tile_h pixels, L = 256 or 65536 levels:
 *    limit = max(1, (int)(clip * n / L)) in double when clip > 0, else none.
 *    Counts above it are cut to it; the cut total c is spread as c / L to
 *    every bin, then the remainder r = c % L one each to bins 0, s, 2s, ...
 *    with s = max(L / r, 1), r of them at most.
 *  - Tile LUTs: lut[v] = round-half-even((float)(h[0] + ... + h[v]) * scale)
 *    saturated to L - 1, scale = (float)(L - 1) / (float)n.
 *  - Each output pixel blends the LUTs of the four nearest tile centres in
 *    single precision: fx = x * (1.0f / tile_w) - 0.5f, x1 = floor(fx),
 *    a = fx - x1, the tile columns clamped to the grid (likewise rows), and
 *    out = rhe((l11 * (1 - a) + l12 * a) * (1 - b) + (l21 * (1 - a) + l22 * a) * b),
 *    evaluated in that order with no fused multiply-add (the library is built
 *    with -ffp-contract=off).
 *
 * The geometry and the per-tile arithmetic live here, shared by the CPU
 * backend (cpu/cpu_clahe.c) and the CUDA backend (kernels/clahe.cu).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clahe.h"

uint32_t ih_clahe_reflect101(int64_t p, int64_t len)
{
    if (len == 1) {
        return 0;
    }
    while (p < 0 || p >= len) {
        p = p < 0 ? -p : 2 * (len - 1) - p;
    }
    return (uint32_t)p;
}

void ih_clahe_geometry(uint32_t w, uint32_t h, uint32_t tiles_x, uint32_t tiles_y, double clip,
                       uint32_t levels, ih_clahe_geom *g)
{
    g->width = w;
    g->height = h;
    g->tiles_x = tiles_x;
    g->tiles_y = tiles_y;
    g->levels = levels;
    if (w % tiles_x == 0 && h % tiles_y == 0) {
        g->tile_w = w / tiles_x;
        g->tile_h = h / tiles_y;
    } else {
        g->tile_w = (uint32_t)(((uint64_t)w + tiles_x - w % tiles_x) / tiles_x);
        g->tile_h = (uint32_t)(((uint64_t)h + tiles_y - h % tiles_y) / tiles_y);
    }
    const int64_t total = (int64_t)g->tile_w * g->tile_h;
    g->lut_scale = (float)(levels - 1) / (float)total;
    g->clip = 0;
    if (clip > 0.0) {
        const double c = clip * (double)total / (double)levels;
        g->clip = c >= 2147483647.0 ? INT32_MAX : (int32_t)c;
        if (g->clip < 1) {
            g->clip = 1;
        }
    }
    /* The blend's tile index grows with the coordinate: the last pixel's
     * second tile is the last one read. */
    int32_t t1, t2;
    float weight;
    ih_clahe_columns(g, w - 1, &t1, &t2, &weight);
    g->used_x = (uint32_t)t2 + 1;
    ih_clahe_rows(g, h - 1, &t1, &t2, &weight);
    g->used_y = (uint32_t)t2 + 1;
}

uint64_t ih_clahe_used_tiles(const ih_clahe_geom *g)
{
    uint64_t n;
    return __builtin_mul_overflow((uint64_t)g->used_x, (uint64_t)g->used_y, &n) ? 0 : n;
}

void ih_clahe_clip_lut(const ih_clahe_geom *g, int32_t *hist, void *lut)
{
    const uint32_t L = g->levels;
    if (g->clip > 0) {
        int64_t clipped = 0;
        for (uint32_t i = 0; i < L; i++) {
            if (hist[i] > g->clip) {
                clipped += hist[i] - g->clip;
                hist[i] = g->clip;
            }
        }
        const int64_t batch = clipped / L;
        int64_t residual = clipped - batch * L;
        for (uint32_t i = 0; i < L; i++) {
            hist[i] += (int32_t)batch;
        }
        if (residual != 0) {
            const int64_t step = (int64_t)L / residual > 1 ? (int64_t)L / residual : 1;
            for (int64_t i = 0; i < L && residual > 0; i += step, residual--) {
                hist[i]++;
            }
        }
    }
    int32_t sum = 0;
    const float max = (float)(L - 1);
    for (uint32_t i = 0; i < L; i++) {
        sum += hist[i];
        float v = rintf((float)sum * g->lut_scale);
        v = v < 0.0f ? 0.0f : v > max ? max : v;
        if (L == 256) {
            ((uint8_t *)lut)[i] = (uint8_t)v;
        } else {
            ((uint16_t *)lut)[i] = (uint16_t)v;
        }
    }
}

void ih_clahe_columns(const ih_clahe_geom *g, uint32_t x, int32_t *t1, int32_t *t2, float *a)
{
    const float inv = 1.0f / (float)g->tile_w;
    const float f = (float)x * inv - 0.5f;
    const int32_t c1 = (int32_t)floorf(f);
    *a = f - (float)c1;
    *t1 = c1 < 0 ? 0 : c1;
    *t2 = c1 + 1 > (int32_t)g->tiles_x - 1 ? (int32_t)g->tiles_x - 1 : c1 + 1;
}

void ih_clahe_rows(const ih_clahe_geom *g, uint32_t y, int32_t *t1, int32_t *t2, float *b)
{
    const float inv = 1.0f / (float)g->tile_h;
    const float f = (float)y * inv - 0.5f;
    const int32_t r1 = (int32_t)floorf(f);
    *b = f - (float)r1;
    *t1 = r1 < 0 ? 0 : r1;
    *t2 = r1 + 1 > (int32_t)g->tiles_y - 1 ? (int32_t)g->tiles_y - 1 : r1 + 1;
}


void ih_clahe_batch_image(const ih_batch *b, size_t i, imghist_view *src, imghist_view *dst)
{
    if (b->kind == IH_TENSOR) {
        *src = b->src[0];
        *dst = b->dst[0];
        src->data = (uint8_t *)src->data + (ptrdiff_t)i * b->src_stride;
        dst->data = (uint8_t *)dst->data + (ptrdiff_t)i * b->dst_stride;
        src->count = dst->count = 1;
    } else {
        *src = b->src[i];
        *dst = b->dst[i];
    }
}
