/* 16-bit equalization of small images on the CPU backend (cpu_equalize16.c). */
#ifndef IMGHIST_CPU_EQUALIZE16_H
#define IMGHIST_CPU_EQUALIZE16_H

#include "core.h"

/*
 * 16-bit equalization of small images without the passes over all 65536
 * levels: 16-bit counts and a bitmap of the values the histogram
 * holds, whose set bits give its levels in order; the LUT at those alone
 * (ih_equalize_lut_u16_at: the same bits as the whole LUT); with a mask,
 * also the entries of the values only unmasked pixels hold, each that of
 * the histogram's level below it (the sum does not grow between levels),
 * from a second bitmap. The counts and bitmaps are cleared where they were
 * set, ready for the next image. For a 64 x 64 image the whole-LUT way
 * spent most of its time clearing 512 KiB of counts and scanning 65536
 * levels.
 */
#define SPARSE16_MAX 32768 /* samples: every count fits 16 bits */

typedef struct sparse16 {
    uint16_t count[IH_U16_LEVELS]; /* 0 between images */
    uint64_t seen[1024];   /* bit v: value v counted; 0 between images */
    uint64_t want[1024];   /* bit v: value v in an unmasked pixel; 0 between images */
    uint16_t levels[SPARSE16_MAX];
    uint16_t lut[IH_U16_LEVELS];   /* entries at the values the image holds */
} sparse16;

/* Whether src is a 16-bit image this way takes. */
int ih_sparse16_takes(const imghist_view *src);
/* Equalize src into dst by the histogram of its samples where mask (NULL:
 * every pixel) is non-zero, with sp clear before and after; 0 when the
 * mask keeps no sample (nothing written). */
int ih_equalize16_sparse(sparse16 *sp, const imghist_view *src, const imghist_view *mask,
                         const imghist_view *dst);

#endif
