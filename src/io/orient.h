/* EXIF orientation (src/io/orient.c). */
#ifndef IMGHIST_ORIENT_H
#define IMGHIST_ORIENT_H

#include <stdint.h>

/* An 8-bit plane of w x h, rows packed, turned upright for EXIF orientation
 * o (2..8) as cv::imread does: a new w x h or h x w plane (*w, *h updated),
 * or NULL when out of memory. */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o);

#endif
