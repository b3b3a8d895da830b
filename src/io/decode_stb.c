/*
 * Photoshop PSD (the one format without a reader of imghist's or a
 * library's own) through stb_image, 8 bits per sample (IMGHIST_P_LOAD_DEPTH
 * = 1: 16-bit PSD as 16 bits); with guards in front of the stb_image 2.27
 * loaders that fuzzing found unsafe.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image.h>

#include "decode.h"

/*
 * Formats stb_image would also try but imghist does not take: Softimage PIC
 * (its loader crashed under fuzzing, tests/crashers/). Returns a reason or
 * NULL.
 */
const char *ih_stb_refused_reason(const uint8_t *d, size_t n)
{
    static const uint8_t pic[4] = {0x53, 0x80, 0xf6, 0x34};
    if (n >= 4 && memcmp(d, pic, 4) == 0) {
        return "Softimage PIC is not supported";
    }
    /* 0xFF fill bytes, then SOI: stb_image's own JPEG decoder would take it
     * (imghist_load_memory sends only FF D8 FF to libjpeg-turbo), and its
     * DHT reader writes out of bounds on bad code counts. */
    if (n >= 2 && d[0] == 0xff) {
        size_t i = 1;
        while (i < n && d[i] == 0xff) {
            i++;
        }
        if (i < n && d[i] == 0xd8) {
            return "JPEG does not start with FF D8 FF";
        }
    }
    return NULL;
}

/*
 * Photoshop files with an alpha channel. stb_image 2.27 "removes the white
 * matte" of such a file by dividing the colour by alpha and casting the float
 * back to a byte without a range check (stb_image.h:6225, undefined behaviour
 * and garbage on files whose colour is not premultiplied; found by fuzzing,
 * tests/crashers/stb_psd_rgba_unmatte_float_cast_ub.psd). imghist ignores
 * alpha in every format, so it hands stb a copy of the file that declares only
 * the three colour channels: the planes come first in a PSD, and for RLE data
 * the per-row byte counts of the extra channels, which end the count table,
 * are cut out. Returns 1 and the copy (to be freed) when the file was changed,
 * 0 when it needs no change or is too short for this to apply (stb then reads
 * the original and reports it), -1 when out of memory.
 */
static uint32_t be16(const uint8_t *p)
{
    return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int psd_colour_only(const uint8_t *d, size_t n, uint8_t **copy, size_t *copy_n)
{
    if (n < 26 || memcmp(d, "8BPS", 4) != 0 || be16(d + 4) != 1) {
        return 0;
    }
    const uint32_t channels = be16(d + 12), rows = be32(d + 14);
    if (channels <= 3 || channels > 16) {
        return 0; /* nothing to drop, or stb refuses it */
    }
    /* Skip the colour-mode, resources and layer sections (length-prefixed). */
    size_t at = 26;
    for (int section = 0; section < 3; section++) {
        if (n - at < 4 || be32(d + at) > n - at - 4) {
            return 0;
        }
        at += 4 + (size_t)be32(d + at);
    }
    if (n - at < 2) {
        return 0;
    }
    const uint32_t compression = be16(d + at);
    at += 2;
    /* RLE: channels * rows 16-bit counts; those of channels 3.. go. */
    size_t cut_at = at, cut = 0;
    if (compression == 1) {
        const uint64_t table = (uint64_t)channels * rows * 2;
        if (table > n - at) {
            return 0;
        }
        cut_at = at + (size_t)rows * 3 * 2;
        cut = (size_t)(table - (uint64_t)rows * 3 * 2);
    }
    uint8_t *c = malloc(n - cut);
    if (c == NULL) {
        return -1;
    }
    memcpy(c, d, cut_at);
    memcpy(c + cut_at, d + cut_at + cut, n - cut_at - cut);
    c[12] = 0;
    c[13] = 3;
    *copy = c;
    *copy_n = n - cut;
    return 1;
}

/* Keep the first `keep` of every pixel's `comp` samples of `size` bytes, in
 * place. */
static void drop_channels(uint8_t *p, size_t pixels, int comp, int keep, size_t size)
{
    for (size_t i = 0; i < pixels; i++) {
        memmove(p + i * (size_t)keep * size, p + i * (size_t)comp * size, (size_t)keep * size);
    }
}

/* PSD through stb_image. */
imghist_status ih_decode_stb(imghist_ctx *ctx, const uint8_t *data, size_t size,
                             const char *name, const ih_load_opts *opts, ih_raw *out)
{
    const char *refused = ih_stb_refused_reason(data, size);
    if (refused != NULL) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (%s)", name, refused);
    }
    /* Dimensions from the header first, so that a tiny file declaring a huge
     * image is refused before anything large is allocated. */
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, (int)size, &w, &h, &comp)) {
        const char *why = stbi_failure_reason();
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: not a readable image (%s)", name,
                       why ? why : "unknown format");
    }
    /* stb_image's BMP header reader gives a top-down file's height as
     * negative (its loader then uses the absolute value). */
    const uint64_t uw = w > 0 ? (uint64_t)w : 0;
    const uint64_t uh = h >= 0 ? (uint64_t)h : (uint64_t)(-(int64_t)h);
    imghist_status st = ih_check_image_size(ctx, &opts->limits, name, uw, uh);
    if (st != IMGHIST_OK) {
        return st;
    }
    const uint64_t pixels = uw * uh;
    uint8_t *psd_data = NULL;
    size_t psd_size = 0;
    const int psd_changed = psd_colour_only(data, size, &psd_data, &psd_size);
    if (psd_changed < 0) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    const int psd = size >= 4 && memcmp(data, "8BPS", 4) == 0;
    /* stbi_is_16_bit cannot tell a 16-bit PSD (2.27's stbi__psd_is16 reads
     * the depth from the wrong offset: its STBI_NOTUSED(get32be) does not
     * evaluate the call), so the header is read here. */
    const int psd16 = opts->native_depth && psd && size >= 26 && be16(data + 22) == 16;
    const uint8_t *src = psd_changed ? psd_data : data;
    const size_t src_size = psd_changed ? psd_size : size;
    imghist_dtype dtype = IMGHIST_U8;
    void *decoded;
    if (psd16) {
        decoded = stbi_load_16_from_memory(src, (int)src_size, &w, &h, &comp, 0);
        dtype = IMGHIST_U16;
    } else {
        decoded = stbi_load_from_memory(src, (int)src_size, &w, &h, &comp, 0);
    }
    free(psd_data);
    if (decoded == NULL) {
        const char *why = stbi_failure_reason();
        if (why != NULL && strcmp(why, "outofmem") == 0) {
            return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory decoding %dx%d", name, w, h);
        }
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (%s)", name,
                       why ? why : "corrupt data");
    }
    if (comp < 1 || comp > 4 || (uint64_t)w * (uint64_t)h != pixels) {
        stbi_image_free(decoded);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: decoder returned an unexpected layout", name);
    }
    /* stb_image gives a PSD as RGBA whatever it holds (RGB files only); imghist
     * reads its colour only (see psd_colour_only): RGB. */
    if (psd && comp == 4) {
        drop_channels(decoded, (size_t)pixels, 4, 3, ih_dtype_size(dtype));
        comp = 3;
    }
    out->width = (uint32_t)w;
    out->height = (uint32_t)h;
    out->channels = comp;
    out->dtype = dtype;
    out->reduced = psd && !psd16 && size >= 26 && be16(data + 22) == 16;
    /* Debian's libstb allocates with malloc (STBI_FREE is free), so the
     * samples are freed like every other decoder's. */
    out->samples = decoded;
    return IMGHIST_OK;
}

