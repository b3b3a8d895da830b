/* CLAHE's geometry and per-tile arithmetic, shared by the host code
 * (cpu/cpu_clahe.c) and the CUDA backend, which must give the same bits. */
#ifndef IMGHIST_CLAHE_H
#define IMGHIST_CLAHE_H

#include <stdint.h>

#include "backend.h"
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ih_clahe_geom {
    uint32_t width, height;   /* the image */
    uint32_t tiles_x, tiles_y;
    uint32_t tile_w, tile_h;  /* after OpenCV's extension (see clahe.c) */
    uint32_t used_x, used_y;  /* tile columns and rows the blend reads: the
                               * grid, or fewer when it reaches beyond the
                               * image; LUTs are stored used_x to a row */
    uint32_t levels;          /* 256 or 65536 */
    int32_t clip;             /* per-bin limit; 0: none */
    float lut_scale;          /* (float)(levels - 1) / (float)(tile_w * tile_h) */
} ih_clahe_geom;

void ih_clahe_geometry(uint32_t w, uint32_t h, uint32_t tiles_x, uint32_t tiles_y, double clip,
                       uint32_t levels, ih_clahe_geom *g);
/* The tiles an image needs (used_x * used_y), or 0 when that overflows. */
uint64_t ih_clahe_used_tiles(const ih_clahe_geom *g);
/* Clip and redistribute a tile's histogram (levels counters, changed), then
 * its LUT (levels uint8_t or uint16_t). */
void ih_clahe_clip_lut(const ih_clahe_geom *g, int32_t *hist, void *lut);
/* The two tile columns and the weight of the second for column x (rows: y). */
void ih_clahe_columns(const ih_clahe_geom *g, uint32_t x, int32_t *t1, int32_t *t2, float *a);
void ih_clahe_rows(const ih_clahe_geom *g, uint32_t y, int32_t *t1, int32_t *t2, float *b);
/* Image i of a CLAHE batch (any kind) as one-image views. */
void ih_clahe_batch_image(const ih_batch *b, size_t i, imghist_view *src, imghist_view *dst);
/* OpenCV's borderInterpolate for BORDER_REFLECT_101. */
uint32_t ih_clahe_reflect101(int64_t p, int64_t len);

#ifdef __cplusplus
}
#endif

#endif
