/* Large 8-bit gray PNGs at level 1, compressed in bands on several threads. */
#ifndef IMGHIST_PNG_BANDS_H
#define IMGHIST_PNG_BANDS_H

#include <stddef.h>

#include "core.h"

/* Images with at least this much pixel data are written in bands. */
#define IH_PNG_BAND_MIN_BYTES ((size_t)16 << 20)

/* Where the bytes go: returns 0, or -1 with errno set. */
typedef int (*ih_png_write_fn)(void *arg, const void *data, size_t n);

/*
 * Write img (U8, host) as a PNG at level 1: Sub filter and zlib's Z_RLE
 * strategy, as the single-stream writer uses, with the rows cut into bands of
 * about 4 MB, each deflated on its own (ending in a full flush) and the bands'
 * Adler-32 sums combined: one valid zlib stream. The bands depend on the
 * image only, so the bytes written are the same for any thread count.
 * Returns 0, or -1 with a reason in msg.
 */
int ih_png_write_bands(const imghist_view *img, unsigned threads, ih_png_write_fn write,
                       void *arg, char *msg, size_t msglen);

/*
 * Write img (U8, host) as a PNG with each row filtered with Sub or Up,
 * whichever leaves the smaller sum of magnitudes, deflated in one piece by
 * libdeflate at its level 1: faster than zlib's Z_RLE with the Sub filter
 * (OpenCV's imwrite setting) at a small cost in size; bench/PNG-CODECS.md
 * holds the measurements of this and the other filters.
 * Returns 0, or -1 with a reason in msg.
 */
int ih_png_write_deflate(const imghist_view *img, ih_png_write_fn write, void *arg, char *msg,
                         size_t msglen);

#endif
