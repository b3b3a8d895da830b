/* EXIF orientation (src/io/orient.c): read from a JPEG's APP1 block, a PNG's
 * eXIf chunk or a TIFF's Orientation tag by the decoders, applied by load.c. */
#ifndef IMGHIST_ORIENT_H
#define IMGHIST_ORIENT_H

#include <stddef.h>
#include <stdint.h>

/* The EXIF orientation in an APP1-style block ("Exif\0\0" and a TIFF
 * structure), IFD 0 only, as OpenCV 4.6 reads it: 1..8, or 0 when there is
 * none or it is not a valid SHORT. */
int ih_exif_orientation(const uint8_t *block, size_t size);

/* The EXIF orientation in the eXIf chunk of a PNG file (all its bytes, from
 * the signature), as OpenCV 4.6 gets it; 0 when there is none. */
int ih_png_exif_orientation(const uint8_t *png, size_t size);

/* An orientation as the decoders report it: 2..8 to apply, else 0 (1 is
 * already upright; other values are ignored, as cv::imread ignores them). */
static inline int ih_orientation_to_apply(int o)
{
    return o >= 2 && o <= 8 ? o : 0;
}

/* An image of w x h pixels of `pixel_bytes` bytes each, rows packed, turned
 * upright for EXIF orientation o (2..8) as cv::imread does: a new w x h or
 * h x w image (*w, *h updated), or NULL when out of memory. */
void *ih_orient_pixels(const void *src, uint32_t *w, uint32_t *h, int o, size_t pixel_bytes);

/* The same for an 8-bit plane (one byte per pixel). */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o);

#endif
