/*
 * CLAHE (contrast-limited adaptive histogram equalization), bit for bit as
 * OpenCV's createCLAHE(clip, Size(tiles_x, tiles_y))->apply() on CV_8UC1 and
 * CV_16UC1 (imgproc/src/clahe.cpp, its CPU path):
 *
 *  - Tiles. When the width and the height are both multiples of the grid,
 *    tile = size / grid. Otherwise the image is thought of as extended at the
 *    right by tiles_x - (w % tiles_x) columns and at the bottom by
 *    tiles_y - (h % tiles_y) rows (a full grid's worth when the side is
 *    already a multiple), mirrored without repeating the edge
 *    (BORDER_REFLECT_101), and tile = extended size / grid. Only the tile
 *    histograms see the extension.
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
 * Host views run here on IMGHIST_P_CPU_THREADS threads (tiles, then bands of
 * rows); device views go to the backend (kernels/clahe.cu).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "clahe.h"

/* OpenCV's borderInterpolate for BORDER_REFLECT_101. */
static uint32_t reflect101(int64_t p, int64_t len)
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
        g->tile_w = (w + tiles_x - w % tiles_x) / tiles_x;
        g->tile_h = (h + tiles_y - h % tiles_y) / tiles_y;
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

/* ---- the host implementation ---- */

/* rintf for 0 <= v < 2^23 in the default rounding mode (to nearest, halves to
 * even), without a library call where the target has no rounding
 * instruction: adding 2^23 leaves no fraction bits. */
static inline float round_even(float v)
{
    /* Without -ffast-math the compiler may not fold this to v. */
    const float b = 8388608.0f;
    return (v + b) - b;
}

typedef struct clahe_job {
    const ih_clahe_geom *g;
    const imghist_view *src, *dst;
    uint8_t *luts;             /* tiles * levels entries of 1 or 2 bytes */
    float *fluts;              /* 8-bit: the LUTs as floats */
    int32_t *cols;             /* per column: offsets of tile 1's and tile 2's LUT */
    float *col_a, *col_a1;     /* per column: weights of tile 2 and tile 1 */
    uint32_t tiles, bands, band_rows;
    size_t next;               /* next work item (atomic): tiles, then bands */
    int failed;                /* a worker had no memory (atomic) */
} clahe_job;

static uint32_t sample_at(const imghist_view *v, uint32_t x, uint32_t y)
{
    const uint8_t *row = (const uint8_t *)v->data + (size_t)y * v->pitch;
    return v->dtype == IMGHIST_U8 ? row[x] : ((const uint16_t *)row)[x];
}

static void tile_lut(clahe_job *j, uint32_t t, int32_t *hist)
{
    const ih_clahe_geom *g = j->g;
    const uint32_t tx = t % g->tiles_x, ty = t / g->tiles_x;
    memset(hist, 0, g->levels * sizeof *hist);
    const uint32_t x0 = tx * g->tile_w, y0 = ty * g->tile_h;
    for (uint32_t r = 0; r < g->tile_h; r++) {
        const uint32_t y = reflect101((int64_t)y0 + r, g->height);
        const uint8_t *row = (const uint8_t *)j->src->data + (size_t)y * j->src->pitch;
        if (x0 + g->tile_w <= g->width) { /* all inside: the plain loop */
            if (j->src->dtype == IMGHIST_U8) {
                for (uint32_t c = 0; c < g->tile_w; c++) {
                    hist[row[x0 + c]]++;
                }
            } else {
                const uint16_t *r16 = (const uint16_t *)row;
                for (uint32_t c = 0; c < g->tile_w; c++) {
                    hist[r16[x0 + c]]++;
                }
            }
        } else {
            for (uint32_t c = 0; c < g->tile_w; c++) {
                hist[sample_at(j->src, reflect101((int64_t)x0 + c, g->width), y)]++;
            }
        }
    }
    const size_t entry = g->levels == 256 ? 1 : 2;
    uint8_t *lut = j->luts + (size_t)t * g->levels * entry;
    ih_clahe_clip_lut(g, hist, lut);
    if (g->levels == 256) {
        float *f = j->fluts + (size_t)t * 256;
        for (int i = 0; i < 256; i++) {
            f[i] = (float)lut[i];
        }
    }
}

static void band(clahe_job *j, uint32_t k)
{
    const ih_clahe_geom *g = j->g;
    const uint32_t y_end = (k + 1) * j->band_rows < g->height ? (k + 1) * j->band_rows : g->height;
    const size_t L = g->levels;
    for (uint32_t y = k * j->band_rows; y < y_end; y++) {
        int32_t r1, r2;
        float b;
        ih_clahe_rows(g, y, &r1, &r2, &b);
        const float b1 = 1.0f - b;
        const uint8_t *srow = (const uint8_t *)j->src->data + (size_t)y * j->src->pitch;
        uint8_t *drow = (uint8_t *)j->dst->data + (size_t)y * j->dst->pitch;
        if (L == 256) {
            /* The LUTs as floats (exact), the columns' offsets premultiplied:
             * four loads, six multiplies, three adds and a rounding a pixel. */
            const float *p1 = j->fluts + (size_t)r1 * g->tiles_x * L;
            const float *p2 = j->fluts + (size_t)r2 * g->tiles_x * L;
            for (uint32_t x = 0; x < g->width; x++) {
                const size_t v = srow[x];
                const size_t i1 = (size_t)j->cols[2 * x] + v, i2 = (size_t)j->cols[2 * x + 1] + v;
                const float a = j->col_a[x], a1 = j->col_a1[x];
                const float res = (p1[i1] * a1 + p1[i2] * a) * b1 + (p2[i1] * a1 + p2[i2] * a) * b;
                /* A blend of values in [0, 255] stays there: no clamp. */
                drow[x] = (uint8_t)round_even(res);
            }
        } else {
            const uint16_t *p1 = (const uint16_t *)j->luts + (size_t)r1 * g->tiles_x * L;
            const uint16_t *p2 = (const uint16_t *)j->luts + (size_t)r2 * g->tiles_x * L;
            const uint16_t *s16 = (const uint16_t *)srow;
            uint16_t *d16 = (uint16_t *)drow;
            for (uint32_t x = 0; x < g->width; x++) {
                const size_t v = s16[x];
                const size_t i1 = (size_t)j->cols[2 * x] + v, i2 = (size_t)j->cols[2 * x + 1] + v;
                const float a = j->col_a[x], a1 = j->col_a1[x];
                const float res = ((float)p1[i1] * a1 + (float)p1[i2] * a) * b1 +
                                  ((float)p2[i1] * a1 + (float)p2[i2] * a) * b;
                d16[x] = (uint16_t)round_even(res);
            }
        }
    }
}

/* Phase 1 takes tiles, phase 2 bands of rows; each phase's workers are
 * joined before the next starts. */
static void *tiles_work(void *arg)
{
    clahe_job *j = arg;
    int32_t *hist = malloc(j->g->levels * sizeof *hist);
    for (;;) {
        const size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->tiles) {
            break;
        }
        if (hist == NULL) {
            __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
            break;
        }
        tile_lut(j, (uint32_t)i, hist);
    }
    free(hist);
    return NULL;
}

static void *bands_work(void *arg)
{
    clahe_job *j = arg;
    for (;;) {
        const size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->bands) {
            return NULL;
        }
        band(j, (uint32_t)i);
    }
}

/* fn on n threads, this one included (threads that cannot start leave their
 * share to the others). */
static void run_phase(clahe_job *j, void *(*fn)(void *), uint32_t n)
{
    pthread_t tid[256];
    uint32_t started = 0;
    j->next = 0;
    for (uint32_t k = 1; k < n; k++) {
        if (pthread_create(&tid[started], NULL, fn, j) == 0) {
            started++;
        }
    }
    fn(j);
    for (uint32_t k = 0; k < started; k++) {
        pthread_join(tid[k], NULL);
    }
}

imghist_status ih_clahe_host(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                             const ih_clahe_geom *g)
{
    const size_t entry = g->levels == 256 ? 1 : 2;
    const uint32_t tiles = g->tiles_x * g->tiles_y;
    clahe_job j = {0};
    j.g = g;
    j.src = src;
    j.dst = dst;
    j.tiles = tiles;
    j.luts = malloc((size_t)tiles * g->levels * entry);
    j.fluts = g->levels == 256 ? malloc((size_t)tiles * 256 * sizeof *j.fluts) : NULL;
    j.cols = malloc((size_t)g->width * 2 * sizeof *j.cols);
    j.col_a = malloc((size_t)g->width * 2 * sizeof *j.col_a);
    if (j.luts == NULL || j.cols == NULL || j.col_a == NULL ||
        (g->levels == 256 && j.fluts == NULL)) {
        free(j.luts);
        free(j.fluts);
        free(j.cols);
        free(j.col_a);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for CLAHE's %u tile tables", tiles);
    }
    j.col_a1 = j.col_a + g->width;
    for (uint32_t x = 0; x < g->width; x++) {
        ih_clahe_columns(g, x, &j.cols[2 * x], &j.cols[2 * x + 1], &j.col_a[x]);
        j.cols[2 * x] *= (int32_t)g->levels;
        j.cols[2 * x + 1] *= (int32_t)g->levels;
        j.col_a1[x] = 1.0f - j.col_a[x];
    }
    /* Threads: about 64 K pixels of work each at least. */
    const uint64_t pixels = (uint64_t)g->width * g->height;
    uint64_t n = (uint64_t)ctx->params.cpu_threads;
    if (n > pixels / 65536 + 1) {
        n = pixels / 65536 + 1;
    }
    if (n > 256) {
        n = 256;
    }
    j.band_rows = g->height / (uint32_t)(4 * n) + 1;
    j.bands = (g->height + j.band_rows - 1) / j.band_rows;
    run_phase(&j, tiles_work, (uint32_t)(n < tiles ? n : tiles));
    if (!j.failed) {
        run_phase(&j, bands_work, (uint32_t)n);
    }
    free(j.luts);
    free(j.fluts);
    free(j.cols);
    free(j.col_a);
    if (j.failed) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for CLAHE's tile histograms");
    }
    return IMGHIST_OK;
}
