/* Bands of rows: an image too large for one pass (a staging buffer, a launch's
 * granule range) is walked `band` rows at a time, the last band shorter. */
#ifndef IMGHIST_BANDS_H
#define IMGHIST_BANDS_H

#include <stdint.h>

typedef struct ih_bands {
    uint32_t height, band; /* the image's rows, rows per band (>= 1) */
    uint32_t row0, rows;   /* the current band; rows == 0 once past the end */
} ih_bands;

static inline ih_bands ih_bands_first(uint32_t height, uint32_t band)
{
    ih_bands b;
    b.height = height;
    b.band = band > 0 ? band : 1;
    b.row0 = 0;
    b.rows = height < b.band ? height : b.band;
    return b;
}

static inline void ih_bands_next(ih_bands *b)
{
    b->row0 += b->rows;
    const uint32_t left = b->height - b->row0;
    b->rows = left < b->band ? left : b->band;
}

/* This band is the image's last. */
static inline int ih_bands_last(const ih_bands *b)
{
    return b->row0 + b->rows == b->height;
}

#define IH_FOR_EACH_BAND(b, height, band) \
    for (ih_bands b = ih_bands_first((height), (band)); b.rows > 0; ih_bands_next(&b))

#endif
