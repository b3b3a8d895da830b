/* EXIF orientation: read from the decoders' metadata, applied to an image as
 * cv::imread applies it. */
#include "orient.h"

#include <stdlib.h>
#include <string.h>

#include <libexif/exif-data.h>
#include <zlib.h>

/*
 * The EXIF orientation, read as OpenCV 4.6's decoders read it: IFD 0 only.
 * libexif parses the block; its "follow the specification" option (which
 * adds or rewrites entries) is off. A PNG's eXIf chunk comes here behind an
 * "Exif\0\0" header.
 */
int ih_exif_orientation(const uint8_t *block, size_t size)
{
    if (size < 6 || memcmp(block, "Exif\0\0", 6) != 0 || size > 0xffffffffu) {
        return 0;
    }
    ExifData *ed = exif_data_new();
    if (ed == NULL) {
        return 0;
    }
    exif_data_unset_option(ed, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
    exif_data_load_data(ed, block, (unsigned int)size);
    int o = 0;
    ExifEntry *e = exif_content_get_entry(ed->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
    if (e != NULL && e->format == EXIF_FORMAT_SHORT && e->components >= 1 && e->size >= 2 &&
        e->data != NULL) {
        o = exif_get_short(e->data, exif_data_get_byte_order(ed));
    }
    exif_data_unref(ed);
    return o >= 1 && o <= 8 ? o : 0;
}

/*
 * The orientation in the PNG's eXIf chunk, as OpenCV 4.6 gets it: libpng
 * 1.6.39 keeps the first eXIf chunk that is at least 2 bytes long, starts
 * "MM" or "II" and has a good CRC (a later one is a "duplicate"), before the
 * image data or else after it, and OpenCV reads that. libpng would allocate
 * the chunk from its declared length before reading it (see below), so the
 * chunks are walked here, in the file already in memory, and libpng skips
 * eXIf (decode_png.c). 0 when there is none.
 */
int ih_png_exif_orientation(const uint8_t *d, size_t n)
{
    size_t at = 8;
    while (n - at >= 12) {
        const uint32_t len = (uint32_t)d[at] << 24 | (uint32_t)d[at + 1] << 16 |
                             (uint32_t)d[at + 2] << 8 | d[at + 3];
        const uint8_t *type = d + at + 4;
        if (len > 0x7fffffffu || len > n - at - 12) {
            return 0; /* libpng fails on it, or the file is cut short */
        }
        const uint8_t *body = type + 4;
        if (memcmp(type, "IEND", 4) == 0) {
            return 0;
        }
        if (memcmp(type, "eXIf", 4) == 0 && len >= 2 && body[0] == body[1] &&
            (body[0] == 'M' || body[0] == 'I')) {
            const uint32_t crc = (uint32_t)body[len] << 24 | (uint32_t)body[len + 1] << 16 |
                                 (uint32_t)body[len + 2] << 8 | body[len + 3];
            if (crc32(crc32(0, NULL, 0), type, len + 4) == crc) {
                /* libexif wants the "Exif\0\0" header of a JPEG APP1 block. */
                uint8_t *block = malloc((size_t)len + 6);
                if (block == NULL) {
                    return 0;
                }
                memcpy(block, "Exif\0\0", 6);
                memcpy(block + 6, body, len);
                const int o = ih_exif_orientation(block, (size_t)len + 6);
                free(block);
                return o;
            }
        }
        at += (size_t)len + 12;
    }
    return 0;
}


/*
 * EXIF orientations, as cv::imread applies them (loadsave.cpp,
 * ApplyExifOrientation): 2 mirror left-right, 3 rotate 180, 4 mirror
 * top-bottom; 5..8 transpose first, then 6 mirror left-right, 7 both,
 * 8 top-bottom. Output pixel (x, y) comes from the transposed-or-not source
 * at the mirrored coordinates; the loops go in 32 x 32 tiles so that a
 * transpose does not walk the source a column at a time.
 */
void *ih_orient_pixels(const void *src_, uint32_t *w, uint32_t *h, int o, size_t pixel_bytes)
{
    const uint8_t *src = src_;
    const int transpose = o >= 5;
    const int mirror_x = o == 2 || o == 3 || o == 6 || o == 7;
    const int mirror_y = o == 3 || o == 4 || o == 7 || o == 8;
    const uint32_t sw = *w, sh = *h;
    const uint32_t dw = transpose ? sh : sw, dh = transpose ? sw : sh;
    const size_t pb = pixel_bytes;
    uint8_t *dst = malloc((size_t)dw * dh * pb);
    if (dst == NULL) {
        return NULL;
    }
    enum { TILE = 32 };
    for (uint32_t y0 = 0; y0 < dh; y0 += TILE) {
        for (uint32_t x0 = 0; x0 < dw; x0 += TILE) {
            const uint32_t y1 = dh - y0 < TILE ? dh : y0 + TILE;
            const uint32_t x1 = dw - x0 < TILE ? dw : x0 + TILE;
            for (uint32_t y = y0; y < y1; y++) {
                const uint32_t ty = mirror_y ? dh - 1 - y : y;
                for (uint32_t x = x0; x < x1; x++) {
                    const uint32_t tx = mirror_x ? dw - 1 - x : x;
                    /* (tx, ty) in the transposed image is (ty, tx) in the source */
                    const size_t from = transpose ? (size_t)tx * sw + ty : (size_t)ty * sw + tx;
                    if (pb == 1) {
                        dst[(size_t)y * dw + x] = src[from];
                    } else {
                        memcpy(dst + ((size_t)y * dw + x) * pb, src + from * pb, pb);
                    }
                }
            }
        }
    }
    *w = dw;
    *h = dh;
    return dst;
}

uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o)
{
    return ih_orient_pixels(src, w, h, o, 1);
}
