/*
 * CLAHE of host images on the CPU backend, on IMGHIST_P_CPU_THREADS threads:
 * the tile tables first, then the blend in bands of rows. The rules are
 * OpenCV's, written out in core/clahe.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_clahe.h"
#include "parallel.h"

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
    size_t *cols;              /* per column: offsets of tile 1's and tile 2's LUT */
    float *col_a, *col_a1;     /* per column: weights of tile 2 and tile 1 */
    uint32_t tiles, bands, band_rows;
    size_t next;               /* the next tile nobody has taken (atomic) */
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
    const uint32_t tx = t % g->used_x, ty = t / g->used_x;
    memset(hist, 0, g->levels * sizeof *hist);
    const uint64_t x0 = (uint64_t)tx * g->tile_w, y0 = (uint64_t)ty * g->tile_h;
    for (uint32_t r = 0; r < g->tile_h; r++) {
        const uint32_t y = ih_clahe_reflect101((int64_t)(y0 + r), g->height);
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
                hist[sample_at(j->src, ih_clahe_reflect101((int64_t)(x0 + c), g->width), y)]++;
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
            const float *p1 = j->fluts + (size_t)r1 * g->used_x * L;
            const float *p2 = j->fluts + (size_t)r2 * g->used_x * L;
            for (uint32_t x = 0; x < g->width; x++) {
                const size_t v = srow[x];
                const size_t i1 = j->cols[2 * x] + v, i2 = j->cols[2 * x + 1] + v;
                const float a = j->col_a[x], a1 = j->col_a1[x];
                const float res = (p1[i1] * a1 + p1[i2] * a) * b1 + (p2[i1] * a1 + p2[i2] * a) * b;
                /* A blend of values in [0, 255] stays there: no clamp. */
                drow[x] = (uint8_t)round_even(res);
            }
        } else {
            const uint16_t *p1 = (const uint16_t *)j->luts + (size_t)r1 * g->used_x * L;
            const uint16_t *p2 = (const uint16_t *)j->luts + (size_t)r2 * g->used_x * L;
            const uint16_t *s16 = (const uint16_t *)srow;
            uint16_t *d16 = (uint16_t *)drow;
            for (uint32_t x = 0; x < g->width; x++) {
                const size_t v = s16[x];
                const size_t i1 = j->cols[2 * x] + v, i2 = j->cols[2 * x + 1] + v;
                const float a = j->col_a[x], a1 = j->col_a1[x];
                const float res = ((float)p1[i1] * a1 + (float)p1[i2] * a) * b1 +
                                  ((float)p2[i1] * a1 + (float)p2[i2] * a) * b;
                d16[x] = (uint16_t)round_even(res);
            }
        }
    }
}

static void tiles_work(void *arg, size_t worker)
{
    (void)worker; /* workers take tiles from the shared counter */
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
}

static void band_task(void *arg, size_t k)
{
    band(arg, (uint32_t)k);
}

static imghist_status clahe_image(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *dst, const ih_clahe_geom *g)
{
    const size_t entry = g->levels == 256 ? 1 : 2;
    /* Bytes a tile: its LUT, and for 8 bits the LUT as floats too. */
    const size_t per_tile = g->levels * entry + (g->levels == 256 ? 256 * sizeof(float) : 0);
    const uint64_t tiles = ih_clahe_used_tiles(g);
    if (tiles == 0 || tiles > UINT32_MAX || tiles > SIZE_MAX / per_tile) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "CLAHE's %ux%u tile tables do not fit in memory",
                       g->used_x, g->used_y);
    }
    clahe_job j = {0};
    j.g = g;
    j.src = src;
    j.dst = dst;
    j.tiles = (uint32_t)tiles;
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
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for CLAHE's %ux%u tile tables",
                       g->used_x, g->used_y);
    }
    j.col_a1 = j.col_a + g->width;
    for (uint32_t x = 0; x < g->width; x++) {
        int32_t t1, t2;
        ih_clahe_columns(g, x, &t1, &t2, &j.col_a[x]);
        j.cols[2 * x] = (size_t)t1 * g->levels;
        j.cols[2 * x + 1] = (size_t)t2 * g->levels;
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
    /* Tiles first, each worker with a histogram of its own; then bands of
     * rows, which read every tile's table. */
    const unsigned workers = (unsigned)(n < j.tiles ? n : j.tiles);
    ih_parallel_for(workers, workers, tiles_work, &j);
    if (!j.failed) {
        ih_parallel_for(j.bands, (unsigned)n, band_task, &j);
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

imghist_status ih_cpu_clahe(imghist_ctx *ctx, const ih_batch *b, const ih_clahe_geom *g)
{
    imghist_status st = IMGHIST_OK;
    for (size_t i = 0; i < b->count && st == IMGHIST_OK; i++) {
        imghist_view src, dst;
        ih_clahe_batch_image(b, i, &src, &dst);
        st = clahe_image(ctx, &src, &dst, g);
    }
    return st;
}
