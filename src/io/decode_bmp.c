/*
 * Windows and OS/2 bitmaps, read here rather than by stb_image 2.27, which
 * let uninitialised palette entries reach the pixels (out-of-range indices,
 * short OS/2 palettes), and refused run-length files, 52/56-byte headers,
 * OS/2 2.x headers and unusual bit masks. Held to bmpsuite 2.8
 * (tests/conformance/): every "good" file is read, and each file is read as
 * OpenCV 4.6 reads it where OpenCV reads it correctly, else as bmpsuite's
 * reference rendering shows it.
 *
 * What is read:
 *  - headers: OS/2 1.x (12 bytes, 3-byte palette entries), OS/2 2.x (16 to
 *    64 bytes), Windows 40, 52, 56, 108 and 124 bytes (and longer ones, as
 *    Windows 40-byte ones); bottom-up and top-down rows;
 *  - palettes of 1, 2, 4 and 8 bits per pixel. Entries come from the file
 *    only: the palette stops where the pixel data starts or the file ends, and
 *    an index past its last entry is black, as OpenCV's zero-filled palette
 *    gives it;
 *  - 16 and 32 bits per pixel, by the default masks or BI_BITFIELDS and
 *    BI_ALPHABITFIELDS masks (each contiguous). A field of n bits is scaled
 *    as v * 255 / (2^n - 1), rounded, so that its largest value is 255, as
 *    bmpsuite's renderings show it. OpenCV 4.6 shifts 5-5-5 and 5-6-5 fields
 *    instead (v << 3, v << 2), which reads 5-bit white as 248: imghist
 *    differs from it there by up to 7 levels;
 *  - 24 bits per pixel, and OS/2 2.x run-length 24-bit (RLE24);
 *  - run-length 8- and 4-bit (RLE8, RLE4) with end-of-line, delta and an
 *    early end of bitmap: pixels the data skips take palette entry 0, as in
 *    OpenCV. A run or literal that passes the end of its row, a delta that
 *    leaves the image's columns, or data that ends before the end-of-bitmap
 *    code and the last row refuses the file;
 *  - BI_JPEG and BI_PNG: the embedded JPEG or PNG, through imghist's own
 *    readers.
 * Alpha is ignored. Gray palettes give one channel. Refused with a reason:
 * OS/2 Huffman 1D, 64 bits per pixel, any other depth or compression, masks
 * that are not contiguous, data that ends early.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_JPEG = 4, BI_PNG = 5,
       BI_ALPHABITFIELDS = 6 };

typedef struct bmp_info {
    uint32_t header_size, offset;
    int64_t width, height; /* height < 0: rows top-down */
    uint32_t bits, compression, colors_used;
    int os2;           /* OS/2 1.x (12-byte header) or 2.x */
    uint32_t masks[4]; /* red, green, blue, alpha */
    uint32_t palette_at, entry_size;
} bmp_info;

typedef struct field {
    uint32_t mask, shift, bits;
} field;

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Reads the headers; NULL when the file is one this reader takes (up to its
 * pixel data), else why not. */
static const char *read_info(const uint8_t *d, size_t n, bmp_info *b)
{
    memset(b, 0, sizeof *b);
    if (n < 18 || d[0] != 'B' || d[1] != 'M') {
        return "BMP file header ends early";
    }
    b->offset = le32(d + 10);
    b->header_size = le32(d + 14);
    const uint32_t hs = b->header_size;
    if (hs < 12 || (hs > 12 && hs < 16)) {
        return "BMP header size is not valid";
    }
    if (hs > n - 14) {
        return "BMP header ends early";
    }
    const uint8_t *h = d + 14;
    if (hs == 12) {
        b->os2 = 1;
        b->width = le16(h + 4);
        b->height = le16(h + 6);
        b->bits = le16(h + 10);
        b->entry_size = 3;
    } else {
        /* OS/2 2.x headers are 16 to 64 bytes; 40 is read as Windows'. */
        b->os2 = hs <= 64 && hs != 40 && hs != 52 && hs != 56;
        b->width = (int32_t)le32(h + 4);
        b->height = (int32_t)le32(h + 8);
        b->bits = le16(h + 14);
        b->compression = hs >= 20 ? le32(h + 16) : BI_RGB;
        b->colors_used = hs >= 36 ? le32(h + 32) : 0;
        b->entry_size = 4;
    }
    b->palette_at = 14 + hs;
    if (b->width <= 0 || b->height == 0 || b->height == INT32_MIN) {
        return "BMP width or height is not valid";
    }
    const uint32_t bits = b->bits, c = b->compression;
    if (b->os2 && c == 3) {
        return "OS/2 BMP with Huffman 1D compression is not supported";
    }
    if (b->os2 && c == 4) {
        if (bits != 24) {
            return "OS/2 BMP run-length 24-bit data with another depth";
        }
        return NULL;
    }
    if (bits == 64) {
        return "BMP with 64 bits per pixel is not supported";
    }
    /* An embedded JPEG or PNG has its own depth; in an OS/2 header those
     * codes mean something else (4: run-length 24-bit, above; 5: nothing). */
    const int embedded = !b->os2 && (c == BI_JPEG || c == BI_PNG);
    if (bits != 1 && bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 24 &&
        bits != 32 && !embedded) {
        return "BMP bit depth is not valid";
    }
    switch (c) {
    case BI_RGB:
        break;
    case BI_JPEG:
    case BI_PNG:
        if (!embedded) {
            return "BMP compression type is not supported";
        }
        break;
    case BI_RLE8:
        if (bits != 8) {
            return "BMP run-length 8-bit data with another depth";
        }
        break;
    case BI_RLE4:
        if (bits != 4) {
            return "BMP run-length 4-bit data with another depth";
        }
        break;
    case BI_BITFIELDS:
    case BI_ALPHABITFIELDS:
        if (bits != 16 && bits != 32) {
            return "BMP bit fields with a depth other than 16 or 32 bits";
        }
        break;
    default:
        return "BMP compression type is not supported";
    }
    if (bits == 16 || bits == 32) {
        if (c == BI_BITFIELDS || c == BI_ALPHABITFIELDS) {
            /* In the header from 52 bytes on, else right after it, however
             * long it is (and the palette, if any, after the masks). */
            const uint8_t *m = h + 40;
            if (hs < 52) {
                const uint32_t count = c == BI_ALPHABITFIELDS ? 4 : 3;
                if (n - 14 - hs < 4 * count) {
                    return "BMP bit masks end early";
                }
                m = h + hs;
                b->palette_at += 4 * count;
            }
            b->masks[0] = le32(m);
            b->masks[1] = le32(m + 4);
            b->masks[2] = le32(m + 8);
            if (hs >= 56 || (hs < 52 && c == BI_ALPHABITFIELDS)) {
                b->masks[3] = le32(m + 12);
            }
        } else if (bits == 16) {
            b->masks[0] = 0x7c00;
            b->masks[1] = 0x03e0;
            b->masks[2] = 0x001f;
        } else {
            b->masks[0] = 0xff0000;
            b->masks[1] = 0x00ff00;
            b->masks[2] = 0x0000ff;
        }
    }
    return NULL;
}

/* A mask as a field of contiguous bits; -1 when it is not one. */
static int make_field(uint32_t mask, uint32_t bits, field *f)
{
    f->mask = mask;
    f->shift = f->bits = 0;
    if (mask == 0) {
        return 0;
    }
    if (bits == 16 && mask > 0xffff) {
        return -1;
    }
    while (!(mask & 1u)) {
        mask >>= 1;
        f->shift++;
    }
    while (mask & 1u) {
        mask >>= 1;
        f->bits++;
    }
    return mask == 0 ? 0 : -1;
}

/* One field of a pixel in 8 bits: v * 255 / (2^n - 1), rounded. */
static uint8_t field_value(const field *f, uint32_t px)
{
    if (f->bits == 0) {
        return 0;
    }
    const uint32_t v = (px & f->mask) >> f->shift;
    const uint64_t max = ((uint64_t)1 << f->bits) - 1;
    return (uint8_t)(((uint64_t)v * 255u + max / 2) / max);
}

typedef struct bmp_out {
    uint32_t w, h;
    int channels;
    uint8_t *px; /* w * h * channels, rows top-down */
} bmp_out;

/* Row r of the file (in storage order) in the output. */
static uint8_t *out_row(const bmp_out *o, const bmp_info *b, uint32_t r)
{
    const uint32_t y = b->height < 0 ? r : o->h - 1 - r;
    return o->px + (size_t)y * o->w * (size_t)o->channels;
}

static void put_colour(uint8_t *dst, int channels, const uint8_t *rgb)
{
    if (channels == 1) {
        dst[0] = rgb[0];
    } else {
        memcpy(dst, rgb, 3);
    }
}

/* Indexed pixels (one index byte per pixel, rows in storage order) through
 * the palette. */
static void map_indices(const uint8_t *idx, const uint8_t (*pal)[3], const bmp_out *o,
                        const bmp_info *b)
{
    for (uint32_t r = 0; r < o->h; r++) {
        uint8_t *dst = out_row(o, b, r);
        const uint8_t *src = idx + (size_t)r * o->w;
        for (uint32_t x = 0; x < o->w; x++) {
            put_colour(dst + (size_t)x * o->channels, o->channels, pal[src[x]]);
        }
    }
}

/* Run-length data (RLE8, RLE4, RLE24) into `cells`, w * h cells of `cell`
 * bytes in storage row order, zero where the data skips. NULL or why not. */
static const char *unpack_rle(const uint8_t *p, const uint8_t *end, uint32_t w, uint32_t h,
                              uint32_t bits, uint8_t *cells)
{
    const size_t cell = bits == 24 ? 3 : 1;
    uint32_t x = 0, y = 0;
    while (y < h) {
        if (end - p < 2) {
            return "BMP run-length data ends early";
        }
        const uint32_t a = p[0], c = p[1];
        p += 2;
        uint8_t *row = cells + (size_t)y * w * cell;
        if (a > 0) { /* a run of a pixels */
            if (a > w - x) {
                return "BMP run-length data runs past the end of a row";
            }
            if (bits == 24) { /* the colour is c and the next two bytes */
                if (end - p < 2) {
                    return "BMP run-length data ends early";
                }
                const uint8_t bgr[3] = {(uint8_t)c, p[0], p[1]};
                p += 2;
                for (uint32_t k = 0; k < a; k++) {
                    memcpy(row + (size_t)(x + k) * 3, bgr, 3);
                }
            } else if (bits == 8) {
                memset(row + x, (int)c, a);
            } else {
                for (uint32_t k = 0; k < a; k++) {
                    row[x + k] = (uint8_t)(k & 1 ? c & 15 : c >> 4);
                }
            }
            x += a;
        } else if (c == 0) { /* end of line */
            x = 0;
            y++;
        } else if (c == 1) { /* end of bitmap */
            return NULL;
        } else if (c == 2) { /* delta */
            if (end - p < 2) {
                return "BMP run-length data ends early";
            }
            const uint32_t dx = p[0], dy = p[1];
            p += 2;
            if (dx > w - x) {
                return "BMP run-length delta moves past the end of a row";
            }
            x += dx;
            y += dy;
        } else { /* c literal pixels, padded to 16 bits */
            if (c > w - x) {
                return "BMP run-length data runs past the end of a row";
            }
            const size_t bytes = bits == 24 ? (size_t)c * 3 : bits == 8 ? c : (c + 1) / 2;
            const size_t padded = (bytes + 1) & ~(size_t)1;
            if ((size_t)(end - p) < bytes) {
                return "BMP run-length data ends early";
            }
            if (bits == 4) {
                for (uint32_t k = 0; k < c; k++) {
                    const uint8_t v = p[k / 2];
                    row[x + k] = (uint8_t)(k & 1 ? v & 15 : v >> 4);
                }
            } else {
                memcpy(row + (size_t)x * cell, p, bytes);
            }
            p += (size_t)(end - p) < padded ? bytes : padded;
            x += c;
        }
    }
    return NULL;
}

/* The palette: up to 2^bits entries from the file, the rest black. Returns
 * 1 when every entry is gray. */
static int read_palette(const uint8_t *d, size_t n, const bmp_info *b, uint8_t (*pal)[3])
{
    memset(pal, 0, 256 * 3);
    size_t count = b->colors_used != 0 ? b->colors_used : (size_t)1 << b->bits;
    if (count > ((size_t)1 << b->bits)) {
        count = (size_t)1 << b->bits;
    }
    /* Only bytes before the pixel data (where that is after the palette's
     * start) and inside the file. */
    size_t limit = n;
    if (b->offset > b->palette_at && b->offset < limit) {
        limit = b->offset;
    }
    const size_t room = limit > b->palette_at ? (limit - b->palette_at) / b->entry_size : 0;
    if (count > room) {
        count = room;
    }
    const uint8_t *e = d + b->palette_at;
    for (size_t i = 0; i < count; i++, e += b->entry_size) {
        pal[i][0] = e[2];
        pal[i][1] = e[1];
        pal[i][2] = e[0];
    }
    int gray = 1;
    for (size_t i = 0; i < 256; i++) {
        gray &= pal[i][0] == pal[i][1] && pal[i][1] == pal[i][2];
    }
    return gray;
}

/* An embedded JPEG or PNG (BI_JPEG, BI_PNG). */
static imghist_status decode_embedded(imghist_ctx *ctx, const uint8_t *d, size_t n,
                                      const bmp_info *b, const char *name,
                                      const ih_load_opts *opts, ih_raw *out)
{
    if (b->offset >= n) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (BMP %s data is missing)", name,
                       b->compression == BI_JPEG ? "JPEG" : "PNG");
    }
    const uint8_t *e = d + b->offset;
    const size_t size = n - b->offset;
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (b->compression == BI_PNG && size >= 8 && memcmp(e, png_magic, 8) == 0) {
        return ih_decode_png(ctx, e, size, name, opts, out);
    }
    if (b->compression == BI_JPEG && size >= 3 && e[0] == 0xff && e[1] == 0xd8 && e[2] == 0xff) {
        return ih_decode_jpeg(ctx, e, size, name, opts, out);
    }
    return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (BMP says %s but holds no %s data)",
                   name, b->compression == BI_JPEG ? "JPEG" : "PNG",
                   b->compression == BI_JPEG ? "JPEG" : "PNG");
}

imghist_status ih_decode_bmp(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    bmp_info b;
    const char *why = read_info(data, size, &b);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    if (!b.os2 && (b.compression == BI_JPEG || b.compression == BI_PNG)) {
        return decode_embedded(ctx, data, size, &b, name, opts, out);
    }
    const uint64_t w64 = (uint64_t)b.width;
    const uint64_t h64 = (uint64_t)(b.height < 0 ? -b.height : b.height);
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, w64, h64);
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint32_t w = (uint32_t)w64, h = (uint32_t)h64;
    if (b.offset < b.palette_at || b.offset > size) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (BMP pixel data offset %s)", name,
                       b.offset > size ? "is past the end of the file" : "is inside the header");
    }
    const int rle = b.compression == BI_RLE8 || b.compression == BI_RLE4 ||
                    (b.os2 && b.compression == 4);
    const int indexed = b.bits <= 8;
    uint8_t pal[256][3];
    int gray = 0;
    if (indexed) {
        gray = read_palette(data, size, &b, pal);
    }
    field f[3] = {{0}};
    if (b.bits == 16 || b.bits == 32) {
        for (int k = 0; k < 3; k++) {
            if (make_field(b.masks[k], b.bits, &f[k]) != 0) {
                return ih_fail(ctx, IMGHIST_E_DECODE,
                               "%s: cannot decode (BMP bit mask is not contiguous)",
                               name);
            }
        }
    }
    if (!rle) { /* the data must hold every row before anything is allocated */
        const uint64_t stride = ((uint64_t)w * b.bits + 31) / 32 * 4;
        const uint64_t last = ((uint64_t)w * b.bits + 7) / 8;
        if ((uint64_t)(size - b.offset) < stride * (h - 1) + last) {
            return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (BMP pixel data ends early)",
                           name);
        }
    }
    bmp_out o = {w, h, indexed && gray ? 1 : 3, NULL};
    o.px = malloc((size_t)w * h * (size_t)o.channels);
    if (o.px == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, w, h);
    }
    const uint8_t *p = data + b.offset;
    const uint8_t *end = data + size;
    why = NULL;
    if (rle) {
        const size_t cell = b.bits == 24 ? 3 : 1;
        uint8_t *cells = calloc((size_t)w * h, cell);
        if (cells == NULL) {
            free(o.px);
            return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, w, h);
        }
        why = unpack_rle(p, end, w, h, b.bits, cells);
        if (why == NULL && b.bits == 24) {
            for (uint32_t r = 0; r < h; r++) {
                uint8_t *dst = out_row(&o, &b, r);
                const uint8_t *src = cells + (size_t)r * w * 3;
                for (uint32_t x = 0; x < w; x++) {
                    const uint8_t rgb[3] = {src[3 * x + 2], src[3 * x + 1], src[3 * x]};
                    memcpy(dst + (size_t)x * 3, rgb, 3);
                }
            }
        } else if (why == NULL) {
            map_indices(cells, (const uint8_t(*)[3])pal, &o, &b);
        }
        free(cells);
    } else {
        const size_t row_bytes = ((size_t)w * b.bits + 7) / 8;
        const size_t stride = ((size_t)w * b.bits + 31) / 32 * 4;
        if ((size_t)(end - p) < stride * (h - 1) + row_bytes) {
            why = "BMP pixel data ends early";
        }
        for (uint32_t r = 0; r < h && why == NULL; r++) {
            const uint8_t *src = p + (size_t)r * stride;
            uint8_t *dst = out_row(&o, &b, r);
            for (uint32_t x = 0; x < w; x++) {
                uint8_t *px = dst + (size_t)x * o.channels;
                if (indexed) {
                    const uint32_t per = 8 / b.bits;
                    const uint32_t shift = 8 - b.bits * (x % per + 1);
                    const uint32_t v = (uint32_t)(src[x / per] >> shift) & ((1u << b.bits) - 1);
                    put_colour(px, o.channels, pal[v]);
                } else if (b.bits == 24) {
                    const uint8_t *s = src + (size_t)x * 3;
                    px[0] = s[2];
                    px[1] = s[1];
                    px[2] = s[0];
                } else {
                    const uint32_t v = b.bits == 16 ? le16(src + (size_t)x * 2)
                                                    : le32(src + (size_t)x * 4);
                    for (int k = 0; k < 3; k++) {
                        px[k] = field_value(&f[k], v);
                    }
                }
            }
        }
    }
    if (why != NULL) {
        free(o.px);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    (void)opts; /* gray and depth are load.c's: 8-bit samples, alpha dropped */
    out->width = w;
    out->height = h;
    out->channels = o.channels;
    out->dtype = IMGHIST_U8;
    out->samples = o.px;
    return IMGHIST_OK;
}
