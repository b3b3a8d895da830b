/*
 * GIF, first frame, through giflib (Debian's libgif), rather than stb_image,
 * which turned transparent pixels and the pixels the first frame does not
 * cover black.
 *
 * The result is the logical screen in RGB: the pixels of the first image
 * take their palette colour (the local colour map, else the global one),
 * transparent ones included (imghist ignores alpha in every format); the
 * pixels outside the first image take the screen's background colour (the
 * global colour map's entry at the background index; black without a global
 * map). Interlaced images are put back in row order. A pixel index beyond the
 * colour map, an image with no colour map, or data that ends early refuses
 * the file: every sample of the result comes from the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gif_lib.h>

#include "decode.h"

typedef struct gif_source {
    const uint8_t *data;
    size_t size, at;
} gif_source;

static int read_bytes(GifFileType *gif, GifByteType *buf, int want)
{
    gif_source *s = gif->UserData;
    const size_t left = s->size - s->at;
    const size_t n = (size_t)want < left ? (size_t)want : left;
    memcpy(buf, s->data + s->at, n);
    s->at += n;
    return (int)n;
}

static imghist_status gif_error(imghist_ctx *ctx, const char *name, int code)
{
    const char *why = GifErrorString(code);
    return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (GIF: %s)", name,
                   why != NULL ? why : "corrupt data");
}

/* The first image's indices into `idx` (w x h), rows in display order. */
static int read_rows(GifFileType *gif, GifByteType *idx, int w, int h, int interlaced)
{
    if (!interlaced) {
        for (int y = 0; y < h; y++) {
            if (DGifGetLine(gif, idx + (size_t)y * (size_t)w, w) == GIF_ERROR) {
                return GIF_ERROR;
            }
        }
        return GIF_OK;
    }
    static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; pass++) {
        for (int y = start[pass]; y < h; y += step[pass]) {
            if (DGifGetLine(gif, idx + (size_t)y * (size_t)w, w) == GIF_ERROR) {
                return GIF_ERROR;
            }
        }
    }
    return GIF_OK;
}

imghist_status ih_decode_gif(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                             const ih_load_opts *opts, ih_raw *out)
{
    (void)opts;
    gif_source src = {data, size, 0};
    int err = 0;
    GifFileType *gif = DGifOpen(&src, read_bytes, &err);
    if (gif == NULL) {
        return gif_error(ctx, name, err);
    }
    imghist_status st = IMGHIST_OK;
    uint8_t *samples = NULL;
    GifByteType *idx = NULL;
    /* Records up to the first image; extensions (a graphic control block's
     * transparent index among them: see above) are skipped. */
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) {
            st = gif_error(ctx, name, gif->Error);
            goto done;
        }
        if (type == IMAGE_DESC_RECORD_TYPE) {
            break;
        }
        if (type == TERMINATE_RECORD_TYPE) {
            st = ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (GIF holds no image)", name);
            goto done;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            int code = 0; /* which extension: not needed */
            GifByteType *ext = NULL;
            if (DGifGetExtension(gif, &code, &ext) == GIF_ERROR) {
                st = gif_error(ctx, name, gif->Error);
                goto done;
            }
            while (ext != NULL) {
                if (DGifGetExtensionNext(gif, &ext) == GIF_ERROR) {
                    st = gif_error(ctx, name, gif->Error);
                    goto done;
                }
            }
        }
    }
    if (DGifGetImageDesc(gif) == GIF_ERROR) {
        st = gif_error(ctx, name, gif->Error);
        goto done;
    }
    const GifImageDesc *d = &gif->Image;
    const uint32_t sw = (uint32_t)gif->SWidth, sh = (uint32_t)gif->SHeight;
    if (sw == 0 || sh == 0 || d->Width <= 0 || d->Height <= 0) {
        st = ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (GIF image has no pixels)", name);
        goto done;
    }
    st = ih_check_image_size(ctx, &opts->limits, name, sw, sh);
    if (st == IMGHIST_OK) {
        st = ih_check_image_size(ctx, &opts->limits, name, (uint64_t)d->Width,
                                 (uint64_t)d->Height);
    }
    if (st != IMGHIST_OK) {
        goto done;
    }
    const ColorMapObject *map = d->ColorMap != NULL ? d->ColorMap : gif->SColorMap;
    if (map == NULL || map->Colors == NULL) {
        st = ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (GIF image has no colour map)",
                     name);
        goto done;
    }
    const size_t w = (size_t)d->Width, h = (size_t)d->Height;
    samples = malloc((size_t)sw * sh * 3);
    idx = malloc(w * h);
    if (samples == NULL || idx == NULL) {
        st = ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %ux%u", name, sw, sh);
        goto done;
    }
    if (read_rows(gif, idx, d->Width, d->Height, d->Interlace) == GIF_ERROR) {
        st = gif_error(ctx, name, gif->Error);
        goto done;
    }
    /* The background, then the image over it (clipped to the screen). */
    uint8_t bg[3] = {0, 0, 0};
    if (gif->SColorMap != NULL && gif->SBackGroundColor < gif->SColorMap->ColorCount) {
        const GifColorType *c = &gif->SColorMap->Colors[gif->SBackGroundColor];
        bg[0] = c->Red;
        bg[1] = c->Green;
        bg[2] = c->Blue;
    }
    for (size_t i = 0; i < (size_t)sw * sh; i++) {
        memcpy(samples + 3 * i, bg, 3);
    }
    for (size_t y = 0; y < h; y++) {
        for (size_t x = 0; x < w; x++) {
            const GifByteType v = idx[y * w + x];
            if (v >= map->ColorCount) {
                st = ih_fail(ctx, IMGHIST_E_DECODE,
                             "%s: cannot decode (GIF pixel index %u outside the colour map)", name,
                             (unsigned)v);
                goto done;
            }
            const size_t sx = (size_t)d->Left + x, sy = (size_t)d->Top + y;
            if (sx < sw && sy < sh) {
                uint8_t *o = samples + 3 * (sy * sw + sx);
                o[0] = map->Colors[v].Red;
                o[1] = map->Colors[v].Green;
                o[2] = map->Colors[v].Blue;
            }
        }
    }
    out->width = sw;
    out->height = sh;
    out->channels = 3;
    out->dtype = IMGHIST_U8;
    out->samples = samples;
    samples = NULL;
done:
    free(idx);
    free(samples);
    DGifCloseFile(gif, &err);
    return st;
}
