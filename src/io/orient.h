/* EXIF orientation (src/io/orient.c). */
#ifndef IMGHIST_ORIENT_H
#define IMGHIST_ORIENT_H

#include <stddef.h>
#include <stdint.h>

/* An image of w x h pixels of `pixel_bytes` bytes each, rows packed, turned
 * upright for EXIF orientation o (2..8) as cv::imread does: a new w x h or
 * h x w image (*w, *h updated), or NULL when out of memory. */
void *ih_orient_pixels(const void *src, uint32_t *w, uint32_t *h, int o, size_t pixel_bytes);

/* The same for an 8-bit plane (one byte per pixel). */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o);

#endif
