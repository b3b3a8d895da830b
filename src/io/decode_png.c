/*
 * PNG through libpng, which checks every chunk's CRC and the zlib stream
 * (stb_image does not), with the transforms OpenCV's imread applies: palette
 * and low bit depths expanded, 16-bit samples reduced by dropping the low byte
 * (>> 8), alpha and tRNS ignored, no gamma correction.
 */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "png_glue.h"

struct png_src {
    const uint8_t *data;
    size_t size, pos;
    ih_png_error err;
};

static void read_fn(png_structp png, png_bytep out, png_size_t n)
{
    struct png_src *s = png_get_io_ptr(png);
    if (n > s->size - s->pos) {
        png_error(png, "file is truncated");
    }
    memcpy(out, s->data + s->pos, n);
    s->pos += n;
}

imghist_status ih_decode_png(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             ih_raw *out)
{
    struct png_src src = {data, size, 0, {{0}}};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src.err, ih_png_error_fn,
                                             ih_png_warning_fn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (png == NULL || info == NULL) {
        png_destroy_read_struct(&png, &info, NULL);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    uint8_t *volatile samples = NULL;
    png_bytep *volatile rows = NULL;
    volatile imghist_status st = IMGHIST_E_DECODE;

    if (setjmp(png_jmpbuf(png))) {
        free(samples);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        if (st == IMGHIST_E_DECODE) {
            return ih_fail(ctx, st, "%s: invalid PNG (%s)", name, src.err.msg);
        }
        return st;
    }
    png_set_read_fn(png, &src, read_fn);
    png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
    /* Ancillary chunks that do not change the pixels imghist reads are
     * skipped unread. libpng 1.6.39 allocates the buffer of such a chunk
     * (eXIf, the text chunks, sPLT, ...) from its declared length before
     * reading it: a 116-byte file declaring an 842 MB eXIf chunk made it ask
     * for 842 MB (found by fuzzing with -malloc_limit_mb; tests/crashers/
     * png_exif_chunk_length_malloc_bomb.png). Skipped, a chunk is read
     * through in small pieces and a false length ends in "truncated". Unknown
     * chunks are skipped the same way (libpng's default without a callback).
     * gAMA, cHRM, sRGB, iCCP, sBIT and bKGD only matter to transformations
     * imghist does not ask for (OpenCV does not either). */
    static const png_byte skipped[] = "tEXt\0zTXt\0iTXt\0eXIf\0iCCP\0sPLT\0pCAL\0sCAL\0"
                                      "hIST\0tIME\0pHYs\0oFFs\0sBIT\0sRGB\0cHRM\0gAMA\0bKGD";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skipped,
                                (int)(sizeof skipped / 5));
    png_read_info(png, info);

    const uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if (ih_check_pixel_limit(ctx, name, w, h) != IMGHIST_OK) {
        st = IMGHIST_E_LIMIT;
        png_longjmp(png, 1);
    }
    const int color = png_get_color_type(png, info);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_packing(png);
    if (color == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    }
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    const int channels = png_get_channels(png, info);
    const size_t rowbytes = png_get_rowbytes(png, info);
    if ((channels != 1 && channels != 3) || rowbytes != (size_t)w * channels) {
        snprintf(src.err.msg, sizeof src.err.msg, "unexpected layout after transforms");
        png_longjmp(png, 1);
    }
    samples = malloc(rowbytes * h);
    rows = malloc(sizeof(png_bytep) * h);
    if (samples == NULL || rows == NULL) {
        st = ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory for %ux%u pixels", name, w, h);
        png_longjmp(png, 1);
    }
    for (uint32_t y = 0; y < h; y++) {
        rows[y] = samples + rowbytes * y;
    }
    png_read_image(png, rows);
    png_read_end(png, NULL); /* checks the trailing chunks' CRCs and IEND */
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->width = w;
    out->height = h;
    out->channels = channels;
    out->samples = samples;
    return IMGHIST_OK;
}
