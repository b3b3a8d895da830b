/* The CPU reference kernels, single-threaded, on one band of rows. */
#ifndef IMGHIST_CPU_HIST_H
#define IMGHIST_CPU_HIST_H

#include "core.h"

/* hist = the histogram of the rows (overwritten). */
void ih_cpu_hist_u8(const uint8_t *pixels, size_t pitch, uint32_t width, uint32_t height,
                    uint64_t hist[IH_U8_BINS]);
/* dst = lut[src]; dst may be src at the same pitch. */
void ih_cpu_apply_lut_u8(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                         uint32_t width, uint32_t height, const uint8_t lut[IH_U8_BINS]);

#endif
