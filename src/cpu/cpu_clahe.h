/* CLAHE on the CPU backend (cpu/cpu_clahe.c). */
#ifndef IMGHIST_CPU_CLAHE_H
#define IMGHIST_CPU_CLAHE_H

#include "clahe.h"

/* CLAHE of b's one-channel U8 or U16 host images of g's size, image by
 * image (dst[i] may be src[i]). */
imghist_status ih_cpu_clahe(imghist_ctx *ctx, const ih_batch *b, const ih_clahe_geom *g);

#endif
