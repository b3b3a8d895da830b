/* Loading (PNG with libpng, JPEG with libjpeg-turbo, the other formats with
 * stb_image), gray conversion, and PNG writing with libpng. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb_image.h>

#include "atomic_file.h"
#include "decode.h"
#include "internal.h"

/* Read a whole stream; `name` only labels errors. */
static imghist_status read_stream(imghist_ctx *ctx, FILE *fp, const char *name, uint8_t **data,
                                  size_t *size)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (buf == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    for (;;) {
        if (len == cap) {
            /* Files larger than any image the pixel limit admits are refused
             * later by the decoder's header check; cap growth at SIZE_MAX/2. */
            if (cap > SIZE_MAX / 2) {
                free(buf);
                return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: file too large", name);
            }
            uint8_t *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) {
            if (ferror(fp)) {
                int e = errno;
                free(buf);
                return ih_fail(ctx, IMGHIST_E_IO, "%s: read error: %s", name,
                               strerror(e ? e : EIO));
            }
            break;
        }
    }
    *data = buf;
    *size = len;
    return IMGHIST_OK;
}

imghist_status imghist_load_file(imghist_ctx *ctx, const char *path, imghist_image **out)
{
    if (ctx == NULL || path == NULL || out == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    ctx->err[0] = '\0';

    FILE *fp;
    const char *name = path;
    int is_stdin = strcmp(path, "-") == 0;
    if (is_stdin) {
        fp = stdin;
        name = "<stdin>";
    } else {
        fp = fopen(path, "rb");
        if (fp == NULL) {
            return ih_fail(ctx, IMGHIST_E_IO, "%s: %s", path, strerror(errno));
        }
        struct stat st;
        if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
            fclose(fp);
            return ih_fail(ctx, IMGHIST_E_IO, "%s: is a directory", path);
        }
    }
    uint8_t *data = NULL;
    size_t size = 0;
    imghist_status st = read_stream(ctx, fp, name, &data, &size);
    if (!is_stdin) {
        fclose(fp);
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    st = imghist_load_memory(ctx, data, size, name, out);
    free(data);
    return st;
}

imghist_status ih_check_dimensions(imghist_ctx *ctx, const char *name, uint64_t w, uint64_t h)
{
    if (w == 0 || h == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: image has no pixels", name);
    }
    if (w > UINT32_MAX || h > UINT32_MAX || w * h > ctx->max_pixels) {
        return ih_fail(ctx, IMGHIST_E_LIMIT,
                       "%s: %llux%llu is over the limit of %llu pixels (see --max-pixels)", name,
                       (unsigned long long)w, (unsigned long long)h,
                       (unsigned long long)ctx->max_pixels);
    }
    if (w * h > SIZE_MAX / 4) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: image too large for this machine", name);
    }
    return IMGHIST_OK;
}

/*
 * stb_image 2.27 (Debian 12's libstb) never returns from an RLE Radiance .hdr
 * whose data ends inside a scanline (CVE-2021-42715, fixed in 2.28): past the
 * end every byte reads as 0, a zero-length dump, forever. Walk the scanlines
 * as stbi__hdr_load does, reading 0 past the end like it, and report whether
 * it would reach that loop. Each step consumes a byte, so this is O(size).
 */
static int hdr_would_hang(const uint8_t *d, size_t n, uint32_t w, uint32_t h)
{
    static const char radiance[] = "#?RADIANCE\n", rgbe[] = "#?RGBE\n";
    if (!(n >= sizeof radiance - 1 && memcmp(d, radiance, sizeof radiance - 1) == 0) &&
        !(n >= sizeof rgbe - 1 && memcmp(d, rgbe, sizeof rgbe - 1) == 0)) {
        return 0;
    }
    if (w < 8 || w >= 32768) {
        return 0; /* flat scanlines: stb reads a fixed number of bytes */
    }
    /* The pixels start after the line that follows the first empty line;
     * stb_image reads a line into a C string, so one that starts with a NUL
     * byte is empty too. */
    size_t p = 0;
    int seen_empty = 0;
    for (;;) {
        const uint8_t *nl = memchr(d + p, '\n', n - p);
        if (nl == NULL) {
            return 0; /* stbi_info would have refused it */
        }
        const size_t line_len = (size_t)(nl - (d + p));
        const int empty = line_len == 0 || d[p] == '\0';
        p += line_len + 1;
        if (seen_empty) {
            break; /* that was the resolution line */
        }
        seen_empty = empty;
    }
#define HDR_GET8() (p < n ? d[p++] : (p++, 0))
    for (uint32_t y = 0; y < h; y++) {
        const unsigned c1 = HDR_GET8(), c2 = HDR_GET8();
        unsigned len = HDR_GET8();
        if (c1 != 2 || c2 != 2 || (len & 0x80)) {
            return 0; /* stb switches to flat scanlines for the rest */
        }
        len = (len << 8) | HDR_GET8();
        if (len != w) {
            return 0; /* stb fails */
        }
        for (int k = 0; k < 4; k++) {
            uint32_t i = 0;
            while (i < w) {
                if (p >= n) {
                    return 1; /* count reads 0 here, and again, forever */
                }
                unsigned count = d[p++];
                if (count > 128) {
                    count -= 128;
                    if (count > w - i) {
                        return 0; /* stb fails */
                    }
                    p++; /* the value */
                } else {
                    if (count > w - i) {
                        return 0;
                    }
                    p += count;
                }
                i += count;
            }
        }
    }
#undef HDR_GET8
    return 0;
}

/*
 * Formats stb_image would also try but imghist does not take: Softimage PIC
 * (its loader crashed under fuzzing, tests/crashers/). Returns a reason or
 * NULL.
 */
static const char *refused_format(const uint8_t *d, size_t n)
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

/*
 * Binary PNM (P5/P6) headers, checked here because stb_image's integer parser
 * overflows on long numbers: width, height and maxval must be plain decimal
 * numbers that fit, maxval 1..65535. Returns a reason or NULL.
 */
static const char *bad_pnm_header(const uint8_t *d, size_t n)
{
    if (n < 2 || d[0] != 'P' || (d[1] != '5' && d[1] != '6')) {
        return NULL;
    }
    size_t p = 2;
    for (int field = 0; field < 3; field++) {
        for (;;) { /* whitespace and comments */
            while (p < n && (d[p] == ' ' || d[p] == '\t' || d[p] == '\n' || d[p] == '\r' ||
                             d[p] == '\v' || d[p] == '\f')) {
                p++;
            }
            if (p < n && d[p] == '#') {
                while (p < n && d[p] != '\n' && d[p] != '\r') {
                    p++;
                }
                continue;
            }
            break;
        }
        uint64_t v = 0;
        size_t digits = 0;
        while (p < n && d[p] >= '0' && d[p] <= '9') {
            v = v * 10 + (uint64_t)(d[p++] - '0');
            if (++digits > 9) {
                return "PNM header number too large";
            }
        }
        if (digits == 0) {
            return "PNM header is malformed";
        }
        if (field == 2 && (v == 0 || v > 65535)) {
            return "PNM maxval out of range";
        }
    }
    return NULL;
}

/* Every other format through stb_image, 8 bits per sample. */
static imghist_status decode_stb(imghist_ctx *ctx, const uint8_t *data, size_t size,
                                 const char *name, ih_raw *out)
{
    const char *refused = refused_format(data, size);
    if (refused == NULL) {
        refused = bad_pnm_header(data, size);
    }
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
    imghist_status st = ih_check_dimensions(ctx, name, uw, uh);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (hdr_would_hang(data, size, (uint32_t)uw, (uint32_t)uh)) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: cannot decode (HDR file is truncated)", name);
    }
    const uint64_t pixels = uw * uh;
    uint8_t *psd = NULL;
    size_t psd_size = 0;
    const int psd_changed = psd_colour_only(data, size, &psd, &psd_size);
    if (psd_changed < 0) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    uint8_t *decoded = psd_changed ? stbi_load_from_memory(psd, (int)psd_size, &w, &h, &comp, 0)
                                   : stbi_load_from_memory(data, (int)size, &w, &h, &comp, 0);
    free(psd);
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
    /* Drop alpha in place: gray+alpha -> gray, RGBA -> RGB. */
    const size_t n = (size_t)pixels;
    const int keep = comp <= 2 ? 1 : 3;
    if (keep != comp) {
        for (size_t i = 0; i < n; i++) {
            memmove(decoded + i * keep, decoded + i * comp, (size_t)keep);
        }
    }
    out->width = (uint32_t)w;
    out->height = (uint32_t)h;
    out->channels = keep;
    /* Debian's libstb allocates with malloc (STBI_FREE is free), so the
     * samples are freed like every other decoder's. */
    out->samples = decoded;
    return IMGHIST_OK;
}

/*
 * EXIF orientations, as cv::imread applies them (loadsave.cpp,
 * ApplyExifOrientation): 2 mirror left-right, 3 rotate 180, 4 mirror
 * top-bottom; 5..8 transpose first, then 6 mirror left-right, 7 both,
 * 8 top-bottom. Output pixel (x, y) comes from the transposed-or-not source
 * at the mirrored coordinates; the loops go in 32 x 32 tiles so that a
 * transpose does not walk the source a column at a time.
 */
uint8_t *ih_orient(const uint8_t *src, uint32_t *w, uint32_t *h, int o)
{
    const int transpose = o >= 5;
    const int mirror_x = o == 2 || o == 3 || o == 6 || o == 7;
    const int mirror_y = o == 3 || o == 4 || o == 7 || o == 8;
    const uint32_t sw = *w, sh = *h;
    const uint32_t dw = transpose ? sh : sw, dh = transpose ? sw : sh;
    uint8_t *dst = malloc((size_t)dw * dh);
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
                    dst[(size_t)y * dw + x] =
                        transpose ? src[(size_t)tx * sw + ty] : src[(size_t)ty * sw + tx];
                }
            }
        }
    }
    *w = dw;
    *h = dh;
    return dst;
}

imghist_status imghist_load_memory(imghist_ctx *ctx, const void *data, size_t size,
                                   const char *name, imghist_image **out)
{
    if (ctx == NULL || out == NULL || (data == NULL && size > 0)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    *out = NULL;
    ctx->err[0] = '\0';
    if (name == NULL) {
        name = "<memory>";
    }
    if (size == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: empty file", name);
    }
    if (size > INT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: file larger than 2 GiB", name);
    }

    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const uint8_t *bytes = data;
    ih_raw raw = {0};
    imghist_status st;
    if (size >= 8 && memcmp(bytes, png_magic, 8) == 0) {
        st = ih_decode_png(ctx, bytes, size, name, &raw);
    } else if (size >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) {
        st = ih_decode_jpeg(ctx, bytes, size, name, &raw);
    } else {
        st = decode_stb(ctx, bytes, size, name, &raw);
    }
    if (st != IMGHIST_OK) {
        return st;
    }

    const size_t n = (size_t)raw.width * raw.height;
    imghist_image *img = calloc(1, sizeof *img);
    uint8_t *gray = raw.samples;
    if (img != NULL && raw.channels == 3) {
        gray = malloc(n);
        if (gray != NULL) {
            for (size_t i = 0; i < n; i++) {
                const uint8_t *p = raw.samples + 3 * i;
                gray[i] = ih_gray_from_rgb(p[0], p[1], p[2]);
            }
        }
        free(raw.samples);
    }
    if (img != NULL && gray != NULL && raw.orientation >= 2 && raw.orientation <= 8) {
        uint8_t *upright = ih_orient(gray, &raw.width, &raw.height, raw.orientation);
        free(gray);
        gray = upright;
    }
    if (img == NULL || gray == NULL) {
        free(img);
        free(gray);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    img->width = raw.width;
    img->height = raw.height;
    img->pitch = raw.width;
    img->pixels = gray;
    *out = img;
    return IMGHIST_OK;
}

void imghist_image_free(imghist_image *img)
{
    if (img == NULL) {
        return;
    }
    free(img->pixels);
    free(img);
}

struct png_err {
    char msg[200];
};

static void png_error_fn(png_structp png, png_const_charp msg)
{
    struct png_err *pe = png_get_error_ptr(png);
    snprintf(pe->msg, sizeof pe->msg, "%s", msg);
    png_longjmp(png, 1);
}

/* fwrite with the reason kept: libpng's own writer only says "Write Error". */
static void png_write_fn(png_structp png, png_bytep data, png_size_t len)
{
    if (fwrite(data, 1, len, (FILE *)png_get_io_ptr(png)) != len) {
        png_error(png, strerror(errno ? errno : EIO));
    }
}

static void png_flush_fn(png_structp png)
{
    if (fflush((FILE *)png_get_io_ptr(png)) != 0) {
        png_error(png, strerror(errno ? errno : EIO));
    }
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; /* the library never prints */
}

/* Encode to an open stream. Returns 0 or -1 with pe->msg set. */
static int encode_png(FILE *fp, const uint8_t *pixels, size_t pitch, uint32_t width,
                      uint32_t height, struct png_err *pe)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, pe, png_error_fn,
                                              png_warning_fn);
    if (png == NULL) {
        snprintf(pe->msg, sizeof pe->msg, "out of memory");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        snprintf(pe->msg, sizeof pe->msg, "out of memory");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, fp, png_write_fn, png_flush_fn);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    /* Level 6 with adaptive filtering: the usual size/speed balance. */
    png_set_compression_level(png, 6);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * pitch));
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}

imghist_status imghist_write_png(imghist_ctx *ctx, const char *path, const uint8_t *pixels,
                                 size_t pitch, uint32_t width, uint32_t height)
{
    if (path == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL path");
    }
    imghist_status st = ih_check_image(ctx, pixels, pitch, width, height);
    if (st != IMGHIST_OK) {
        return st;
    }
    /* PNG caps dimensions at 2^31 - 1. */
    if (width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: image too large for PNG", path);
    }
    ih_outfile out;
    char why[200];
    if (ih_outfile_open(&out, path, 0, why, sizeof why) != 0) {
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot create: %s", path, why);
    }
    struct png_err pe = {{0}};
    if (encode_png(out.fp, pixels, pitch, width, height, &pe) != 0) {
        ih_outfile_abort(&out);
        /* libpng reports write failures as its own message; errors from the
         * stream (disk full) show up in errno. */
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot write PNG: %s", path, pe.msg);
    }
    if (ih_outfile_commit(&out, why, sizeof why) != 0) {
        return ih_fail(ctx, IMGHIST_E_IO, "%s: cannot write: %s", path, why);
    }
    return IMGHIST_OK;
}
