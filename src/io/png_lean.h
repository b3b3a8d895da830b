/* The PNG reader for the common files (src/io/png_lean.c): whole-buffer
 * inflate with libdeflate, the pixels of the libpng path bit for bit. */
#ifndef IMGHIST_PNG_LEAN_H
#define IMGHIST_PNG_LEAN_H

#include "decode.h"

/* The ancillary chunks whose data the libpng path never reads, since they
 * change none of the pixels it returns, as one string of names each ended
 * by a NUL; the last IH_PNG_COLOUR_CHUNKS are read in the luma mode, whose
 * rgb_to_gray uses them. */
#define IH_PNG_SKIPPED_CHUNKS                                                                      \
    "tEXt\0zTXt\0iTXt\0eXIf\0sPLT\0pCAL\0sCAL\0hIST\0tIME\0pHYs\0oFFs\0bKGD\0"                      \
    "iCCP\0sRGB\0cHRM\0gAMA\0sBIT"
#define IH_PNG_COLOUR_CHUNKS 5

/*
 * Decode a PNG that is not interlaced, of 8 or 16 bits per sample (8-bit
 * palettes), whose chunks are all intact and of the kinds the libpng path
 * reads or skips, into what ih_decode_png's libpng path returns for opts.
 * Returns 1 when it did (out filled, or an error on ctx with *st set: the
 * image is over the pixel limit), 0 when the file is any other: then it has
 * allocated nothing and the caller reads the file with libpng, which gives
 * its own pixels or error for it.
 */
int ih_png_lean_decode(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                       const ih_load_opts *opts, ih_raw *out, imghist_status *st);

#endif
