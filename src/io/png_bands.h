/* imghist's own writer of 8-bit gray PNGs at level 1: filtered rows deflated
 * in one piece, or in bands on several threads for large images. */
#ifndef IMGHIST_PNG_BANDS_H
#define IMGHIST_PNG_BANDS_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* Images with at least this much pixel data are written in bands. */
#define IH_PNG_BAND_MIN_BYTES ((size_t)16 << 20)

/* Where the bytes go: returns 0, or -1 with errno set. */
typedef int (*ih_png_write_fn)(void *arg, const void *data, size_t n);

/* The wall time of a call spent filtering and deflating, in nanoseconds (added
 * to; bands on several threads split it as their own times split). */
typedef struct ih_png_times {
    uint64_t filter_ns, deflate_ns;
} ih_png_times;

/*
 * Write img (U8, host) as a PNG with each row filtered with Sub or Up,
 * whichever leaves the smaller sum of magnitudes, deflated at the fastest
 * setting that keeps the size near OpenCV's imwrite (bench/results/png-deflate.md):
 * ISA-L's level 1 where imghist is built with ISA-L, libdeflate's level 1
 * otherwise. Images whose pixel data reach IH_PNG_BAND_MIN_BYTES are cut
 * into bands of about 4 MB, each deflated on its own over `threads` threads
 * (ISA-L, or zlib's Z_RLE without it) and written as one zlib stream. The
 * bytes written depend on the image only, not on the thread count.
 * Returns 0, or -1 with a reason in msg.
 */
int ih_png_write_u8(const imghist_view *img, unsigned threads, ih_png_write_fn write, void *arg,
                    ih_png_times *times, char *msg, size_t msglen);

#endif
