/* Which format a file is, from its first bytes: the loader's dispatch (PNG,
 * JPEG, TIFF, the rest through stb_image), told before anything is decoded,
 * so that a folder run can skip what is not an image. */
#include <string.h>

#include "decode.h"

static int starts_with(const uint8_t *d, size_t n, const char *magic, size_t len)
{
    return n >= len && memcmp(d, magic, len) == 0;
}

const char *imghist_detect_format(const void *head, size_t size)
{
    const uint8_t *d = head;
    if (d == NULL || size < 2) {
        return NULL;
    }
    if (starts_with(d, size, "\x89PNG\r\n\x1a\n", 8)) return "png";
    if (size >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff) return "jpeg";
    if (ih_is_tiff(d, size)) return "tiff";
    if (starts_with(d, size, "BM", 2)) return "bmp";
    if (starts_with(d, size, "GIF87a", 6) || starts_with(d, size, "GIF89a", 6)) return "gif";
    if (d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return "pnm";
    if (size >= 3 && d[0] == 'P' && (d[1] == 'F' || d[1] == 'f') &&
        (d[2] == ' ' || (d[2] >= '\t' && d[2] <= '\r'))) {
        return "pfm";
    }
    if (starts_with(d, size, "8BPS", 4)) return "psd";
    if (starts_with(d, size, "#?RADIANCE\n", 11) || starts_with(d, size, "#?RGBE\n", 7)) {
        return "hdr";
    }
    /* TGA has no magic number: its header is what decides (decode_tga.c).
     * The formats above were ruled out, and so is Softimage PIC (refused). */
    if (starts_with(d, size, "\x53\x80\xf6\x34", 4)) {
        return NULL;
    }
    return ih_is_tga(d, size) ? "tga" : NULL;
}
