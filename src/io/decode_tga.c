/*
 * Truevision TGA, read here rather than by stb_image 2.27, which ignored the
 * right-to-left bit (such images came out mirrored) and misread a colour map
 * whose first index is not 0 (it skipped that many bytes of the file and
 * then refused the palette).
 *
 * Image types 1, 2, 3 and their run-length forms 9, 10, 11: colour-mapped
 * (8- or 16-bit indices into 15/16/24/32-bit entries), truecolour (15/16,
 * 24, 32 bits) and gray (8 bits, or 16: gray and alpha). 15/16-bit colour is
 * expanded as v * 255 / 31 (as Pillow and stb_image do) and its attribute bit
 * ignored; 32-bit pixels keep their alpha. Runs may cross rows. Rows come out
 * top to bottom and left to right whatever the file's origin. A pixel index
 * outside the colour map, or data that ends early, refuses the file: every
 * sample of the result comes from the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

typedef struct tga_header {
    uint32_t id_len, map_type, type, map_first, map_len, map_bits;
    uint32_t width, height, bits, descriptor;
} tga_header;

static uint32_t le16(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static void read_header(const uint8_t *d, tga_header *h)
{
    h->id_len = d[0];
    h->map_type = d[1];
    h->type = d[2];
    h->map_first = le16(d + 3);
    h->map_len = le16(d + 5);
    h->map_bits = d[7];
    h->width = le16(d + 12);
    h->height = le16(d + 14);
    h->bits = d[16];
    h->descriptor = d[17];
}

/* NULL when the header describes an image this reader takes, else why not. */
static const char *header_problem(const tga_header *h)
{
    const uint32_t base = h->type & 7;
    if (h->map_type > 1 || (h->type != 1 && h->type != 2 && h->type != 3 && h->type != 9 &&
                            h->type != 10 && h->type != 11)) {
        return "not a TGA file";
    }
    if (h->map_type == 1 && h->map_bits != 15 && h->map_bits != 16 && h->map_bits != 24 &&
        h->map_bits != 32) {
        return "TGA colour map entries of an unsupported size";
    }
    if (base == 1 && (h->map_type != 1 || (h->bits != 8 && h->bits != 16))) {
        return "TGA colour-mapped image without a colour map or with odd indices";
    }
    if (base == 2 && h->bits != 15 && h->bits != 16 && h->bits != 24 && h->bits != 32) {
        return "TGA truecolour depth not 15, 16, 24 or 32 bits";
    }
    if (base == 3 && h->bits != 8 && h->bits != 16) {
        return "TGA gray depth not 8 or 16 bits";
    }
    if (h->width == 0 || h->height == 0) {
        return "TGA image has no pixels";
    }
    return NULL;
}

int ih_is_tga(const uint8_t *d, size_t n)
{
    if (n < 18) {
        return 0;
    }
    tga_header h;
    read_header(d, &h);
    return header_problem(&h) == NULL;
}

/* 5-5-5 colour (blue in the low bits) as R, G, B. */
static void rgb555(uint32_t v, uint8_t *o)
{
    o[0] = (uint8_t)(((v >> 10) & 31) * 255 / 31);
    o[1] = (uint8_t)(((v >> 5) & 31) * 255 / 31);
    o[2] = (uint8_t)((v & 31) * 255 / 31);
}

/* A stored colour (15/16, 24 or 32 bits, BGR(A) order) as `channels`
 * samples, R, G, B (, A). */
static void colour_of(const uint8_t *p, uint32_t bits, int channels, uint8_t *o)
{
    if (bits <= 16) {
        rgb555(le16(p), o);
        return;
    }
    o[0] = p[2];
    o[1] = p[1];
    o[2] = p[0];
    if (channels == 4) {
        o[3] = p[3];
    }
}

imghist_status ih_decode_tga(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    (void)opts;
    if (size < 18) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (not a TGA file)", name);
    }
    tga_header h;
    read_header(data, &h);
    const char *why = header_problem(&h);
    if (why != NULL) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (%s)", name, why);
    }
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, h.width, h.height);
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint32_t base = h.type & 7;
    const int rle = h.type >= 9;
    const uint32_t pixel_bytes = (h.bits + 7) / 8;
    const uint32_t entry_bytes = (h.map_bits + 7) / 8;
    size_t at = 18 + (size_t)h.id_len;
    const size_t map_size = h.map_type == 1 ? (size_t)h.map_len * entry_bytes : 0;
    if (at > size || size - at < map_size) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (TGA colour map ends early)",
                       name);
    }
    const uint8_t *map = data + at;
    at += map_size;
    int channels;
    if (base == 1) {
        channels = h.map_bits == 32 ? 4 : 3;
    } else if (base == 2) {
        channels = h.bits == 32 ? 4 : 3;
    } else {
        channels = h.bits == 16 ? 2 : 1;
    }
    const size_t pixels = (size_t)h.width * h.height;
    uint8_t *samples = malloc(pixels * (size_t)channels);
    if (samples == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, h.width,
                       h.height);
    }
    const int right_to_left = (h.descriptor & 0x10) != 0;
    const int top_down = (h.descriptor & 0x20) != 0;
    const uint8_t *p = data + at;
    const uint8_t *end = data + size;
    uint32_t run = 0;       /* pixels left in the current packet */
    int repeat = 0;         /* the packet repeats one stored pixel */
    const uint8_t *px = p;  /* the stored pixel of a repeating packet */
    why = NULL;
    for (size_t i = 0; i < pixels && why == NULL; i++) {
        if (rle) {
            if (run == 0) {
                if (p >= end) {
                    why = "TGA data ends early";
                    break;
                }
                const uint8_t head = *p++;
                run = (uint32_t)(head & 0x7f) + 1;
                repeat = (head & 0x80) != 0;
                if (repeat) {
                    if ((size_t)(end - p) < pixel_bytes) {
                        why = "TGA data ends early";
                        break;
                    }
                    px = p;
                    p += pixel_bytes;
                }
            }
            run--;
        }
        const uint8_t *src = px;
        if (!rle || !repeat) {
            if ((size_t)(end - p) < pixel_bytes) {
                why = "TGA data ends early";
                break;
            }
            src = p;
            p += pixel_bytes;
        }
        /* Where stored pixel i goes. */
        const uint32_t sy = (uint32_t)(i / h.width), sx = (uint32_t)(i % h.width);
        const uint32_t y = top_down ? sy : h.height - 1 - sy;
        const uint32_t x = right_to_left ? h.width - 1 - sx : sx;
        uint8_t *o = samples + ((size_t)y * h.width + x) * (size_t)channels;
        if (base == 1) {
            const uint32_t index = h.bits == 8 ? src[0] : le16(src);
            if (index < h.map_first || index - h.map_first >= h.map_len) {
                why = "TGA pixel index outside the colour map";
                break;
            }
            colour_of(map + (size_t)(index - h.map_first) * entry_bytes, h.map_bits, channels, o);
        } else if (base == 2) {
            colour_of(src, h.bits, channels, o);
        } else {
            o[0] = src[0];
            if (channels == 2) {
                o[1] = src[1];
            }
        }
    }
    if (why != NULL) {
        free(samples);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name, why);
    }
    out->width = h.width;
    out->height = h.height;
    out->channels = channels;
    out->dtype = IMGHIST_U8;
    out->samples = samples;
    return IMGHIST_OK;
}
