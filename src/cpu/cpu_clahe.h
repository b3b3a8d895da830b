/* CLAHE on the CPU backend (cpu/cpu_clahe.c). */
#ifndef IMGHIST_CPU_CLAHE_H
#define IMGHIST_CPU_CLAHE_H

#include "clahe.h"

/* CLAHE of a one-channel U8 or U16 host view into dst (dst may be src). */
imghist_status ih_cpu_clahe(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                            const ih_clahe_geom *g);

#endif
