/*
 * PNG through libpng, which checks every chunk's CRC and the zlib stream
 * (stb_image does not), with the transforms OpenCV 4.6's imread applies
 * (grfmt_png.cpp, readData): palette and low bit depths expanded, 16-bit
 * samples reduced by dropping the low byte (>> 8), alpha and tRNS ignored.
 * For cvtColor(BGR2GRAY) colour is decoded as it is stored (no gamma
 * correction) and reduced with gray.c's weights (ih_gray_from_rgb_row): row
 * by row as libpng gives them where the file is not interlaced, so that the
 * colour image is never held whole; by load.c after png_read_image where it
 * is. For IMREAD_GRAYSCALE (IMGHIST_GRAY_LUMA) OpenCV has libpng make gray,
 * and so does this: png_set_rgb_to_gray with its weights 0.299 and 0.587,
 * which libpng keeps as 9797 and 19234 (/ 32768, truncated), sums truncated.
 * libpng does that in linear light when the file declares a gamma (gAMA,
 * sRGB, or an iCCP profile it knows as sRGB; sBIT shapes the 16-bit tables),
 * so in that mode those chunks are read, as OpenCV reads them. It also applies the EXIF orientation
 * of an eXIf chunk (orient.c), as OpenCV 4.6 does.
 *
 * IMGHIST_P_LOAD_DEPTH = 1 keeps 16-bit samples (byte-swapped to host order);
 * gray is then made by load.c with OpenCV's 16-bit weights in both gray modes
 * (no rgb_to_gray). IMGHIST_P_LOAD_CHANNELS = 1 keeps alpha, turns a tRNS
 * chunk into an alpha channel (palette and RGB images become RGBA, gray
 * becomes gray+alpha), expands palettes to RGB and makes no gray.
 */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "decode.h"
#include "gray.h"
#include "orient.h"
#include "png_glue.h"
#include "png_lean.h"

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

static int host_is_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* libpng's transformations to the samples imghist keeps: 8 or 16 bits,
 * alpha kept or dropped, palettes and low-depth gray expanded, and in the
 * luma mode OpenCV's rgb_to_gray. They may longjmp, as any libpng call. */
static void set_transforms(png_structp png, png_infop info, const ih_load_opts *opts, int luma,
                           int keep16)
{
    const int color = png_get_color_type(png, info);
    if (keep16) {
        if (host_is_little_endian()) {
            png_set_swap(png); /* PNG stores 16-bit samples big-endian */
        }
    } else {
        png_set_strip_16(png);
    }
    if (opts->keep_channels) {
        if (png_get_valid(png, info, PNG_INFO_tRNS)) {
            png_set_tRNS_to_alpha(png);
        }
    } else {
        png_set_strip_alpha(png);
    }
    png_set_packing(png);
    if (color == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    }
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (luma && !keep16) {
        /* OpenCV's png_set_rgb_to_gray(png, 1, 0.299, 0.587), in the fixed
         * point libpng turns those doubles into. On gray it does nothing. */
        png_set_rgb_to_gray_fixed(png, PNG_ERROR_ACTION_NONE, 29900, 58700);
    }
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
}

imghist_status ih_decode_png(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    /* The common files go through png_lean.c first; IMGHIST_PNG_READER=libpng
     * sends every file to libpng, for tests that compare the two. */
    const char *reader = getenv("IMGHIST_PNG_READER");
    imghist_status lean_st = IMGHIST_OK;
    if ((reader == NULL || strcmp(reader, "libpng") != 0) &&
        ih_png_lean_decode(ctx, data, size, name, opts, out, &lean_st)) {
        return lean_st;
    }
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
    uint8_t *volatile rgb_row = NULL; /* BGR2GRAY, not interlaced: one decoded row */
    volatile imghist_status st = IMGHIST_E_DECODE;

    if (setjmp(png_jmpbuf(png))) {
        free(samples);
        free(rows);
        free(rgb_row);
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
     * gAMA, cHRM, sRGB, iCCP and sBIT only matter to transformations the
     * BGR2GRAY mode does not ask for; luma's rgb_to_gray uses them (gAMA,
     * sRGB and sBIT are a few bytes; libpng refuses iCCP profiles over its
     * 8 MB chunk limit), so that mode reads them. */
    static const png_byte skipped[] = IH_PNG_SKIPPED_CHUNKS;
    const int luma = opts->mode == IMGHIST_GRAY_LUMA && !opts->keep_channels;
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skipped,
                                (int)(sizeof skipped / 5) - (luma ? IH_PNG_COLOUR_CHUNKS : 0));
    png_read_info(png, info);

    const uint32_t w = png_get_image_width(png, info), h = png_get_image_height(png, info);
    if (ih_check_image_size(ctx, &opts->limits, name, w, h) != IMGHIST_OK) {
        st = IMGHIST_E_LIMIT;
        png_longjmp(png, 1);
    }
    const int file16 = png_get_bit_depth(png, info) == 16; /* before the transforms */
    const int keep16 = opts->native_depth && file16;
    set_transforms(png, info, opts, luma, keep16);

    const int channels = png_get_channels(png, info);
    const size_t rowbytes = png_get_rowbytes(png, info);
    const size_t sample_bytes = keep16 ? 2 : 1;
    if (channels < 1 || channels > 4 || (!opts->keep_channels && channels == 2) ||
        (!opts->keep_channels && channels == 4) ||
        rowbytes != (size_t)w * (size_t)channels * sample_bytes) {
        snprintf(src.err.msg, sizeof src.err.msg, "unexpected layout after transforms");
        png_longjmp(png, 1);
    }
    const int row_gray = !luma && !opts->keep_channels && !keep16 && channels == 3 &&
                         png_get_interlace_type(png, info) == PNG_INTERLACE_NONE;
    if (row_gray) {
        samples = malloc((size_t)w * h);
        rgb_row = malloc(rowbytes);
        if (samples == NULL || rgb_row == NULL) {
            st = ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory for %ux%u pixels", name, w, h);
            png_longjmp(png, 1);
        }
        for (uint32_t y = 0; y < h; y++) {
            png_read_row(png, rgb_row, NULL);
            ih_gray_from_rgb_row(rgb_row, samples + (size_t)w * y, w);
        }
    } else {
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
    }
    png_read_end(png, NULL); /* checks the trailing chunks' CRCs and IEND */
    free(rows);
    free(rgb_row);
    png_destroy_read_struct(&png, &info, NULL);
    out->width = w;
    out->height = h;
    out->channels = row_gray ? 1 : channels;
    out->dtype = keep16 ? IMGHIST_U16 : IMGHIST_U8;
    out->reduced = file16 && !keep16;
    out->samples = samples;
    /* In the BGR2GRAY mode the orientation is not applied, so that mode's
     * results stay what they are (OpenCV 4.6 applies it in both). */
    out->orientation =
        opts->mode == IMGHIST_GRAY_LUMA ? ih_png_exif_orientation(data, size) : 0;
    return IMGHIST_OK;
}
