/*
 * TIFF through libtiff, from the file already in memory (TIFFClientOpenExt on
 * the bytes; the loaders applied the byte limit when they read it), first
 * directory only.
 *
 * Two paths:
 *  - raw: 8- and 16-bit unsigned integer or 32-bit IEEE float samples, gray
 *    (min-is-black or min-is-white, 1 sample, or 2 with an extra sample) or
 *    RGB (3 samples, or 4 with an extra sample), chunky or planar, strips or
 *    tiles, any compression libtiff has (JPEG-compressed YCbCr is converted
 *    to RGB by libtiff). The samples come back at the file's depth, in host
 *    order; min-is-white is inverted (integers: max - v; float: 1 - v).
 *  - everything else libtiff's RGBA interface takes (palette, 1/2/4-bit
 *    gray, CMYK, YCbCr without JPEG, more than 4 samples ...):
 *    TIFFReadRGBAImageOriented, 8 bits, 1 channel for gray photometrics and
 *    3 for the rest, plus alpha when the file has extra samples.
 * On both paths the rows are taken as stored and the Orientation tag (1..8)
 * is then applied like an EXIF orientation, as cv::imread applies a TIFF's
 * (OpenCV reads the tag through its EXIF reader): load.c turns the image
 * upright (5..8 transpose it). libtiff's own orientation handling in the RGBA
 * interface is switched off (the tag is set to top-left in memory first),
 * since it only flips and would then be applied twice.
 *
 * Hostile files: the pixel limit is checked from the header; before the
 * image is allocated every strip or tile must lie in the file with a
 * non-zero byte count, uncompressed data must be all there, and compressed
 * data must be at least 1/4096 of what it would decode to (plus 1 MiB of
 * slack), so that a small file cannot ask for a large buffer and then fail.
 * libtiff's messages go to a per-handle handler (never stderr): the first
 * error becomes the one-line message.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "decode.h"
#include "orient.h"
#include "sanitize.h"

/* Compressed data may expand at most this much before it looks hostile. */
#define MAX_EXPANSION 4096u
#define EXPANSION_SLACK ((uint64_t)1 << 20)

typedef struct tiff_mem {
    const uint8_t *data;
    uint64_t size, pos;
    char err[240]; /* libtiff's first error */
} tiff_mem;

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n)
{
    tiff_mem *m = h;
    if (n < 0) {
        return -1;
    }
    if (m->pos >= m->size) {
        return 0;
    }
    uint64_t k = m->size - m->pos;
    if ((uint64_t)n < k) {
        k = (uint64_t)n;
    }
    memcpy(buf, m->data + m->pos, (size_t)k);
    m->pos += k;
    return (tmsize_t)k;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h;
    (void)buf;
    (void)n;
    return -1;
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence)
{
    tiff_mem *m = h;
    uint64_t base;
    switch (whence) {
    case SEEK_SET:
        base = 0;
        break;
    case SEEK_CUR:
        base = m->pos;
        break;
    case SEEK_END:
        base = m->size;
        break;
    default:
        return (toff_t)-1;
    }
    /* libtiff passes negative offsets as their two's complement. */
    const uint64_t to = base + (uint64_t)off;
    if ((int64_t)off < 0 ? to > base : to < base) {
        return (toff_t)-1;
    }
    m->pos = to;
    return (toff_t)to;
}

static int mem_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t mem_size(thandle_t h)
{
    return (toff_t)((tiff_mem *)h)->size;
}

/* The bytes are "mapped" already: libtiff reads strips from them in place. */
static int mem_map(thandle_t h, void **base, toff_t *size)
{
    tiff_mem *m = h;
    *base = (void *)(uintptr_t)m->data;
    *size = (toff_t)m->size;
    return 1;
}

static void mem_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    tiff_mem *m = user;
    if (m->err[0] == '\0') {
        char text[200];
        vsnprintf(text, sizeof text, fmt, ap);
        snprintf(m->err, sizeof m->err, "%s%s%s", module ? module : "", module ? ": " : "",
                 text);
        ih_sanitize_line(m->err);
    }
    return 1; /* handled: libtiff's global handler (stderr) is not called */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

/* IMGHIST_E_DECODE naming the file, with libtiff's reason when it gave one. */
static imghist_status bad(imghist_ctx *ctx, const char *name, const tiff_mem *m, const char *what)
{
    if (m->err[0] != '\0') {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: invalid TIFF (%s: %s)", name, what, m->err);
    }
    return ih_fail(ctx, IMGHIST_E_DECODE, "%s: invalid TIFF (%s)", name, what);
}

/* a * b, or 0 on overflow (no caller multiplies by zero). */
static uint64_t mul(uint64_t a, uint64_t b)
{
    return a != 0 && b > UINT64_MAX / a ? 0 : a * b;
}

typedef struct layout {
    uint32_t w, h;
    uint16_t spp, bps, format, photometric, planar, orientation, compression;
    int tiled;
    uint32_t tw, th;      /* tiles */
    uint32_t rps;         /* strips */
    uint32_t strips_per_plane, tiles_across, tiles_down;
} layout;

/*
 * Every strip or tile in the file and not empty, and enough data for what
 * the image decodes to (`expanded` bytes). Returns NULL or a reason.
 */
static const char *check_data(TIFF *tif, const tiff_mem *m, const layout *L, uint64_t expanded,
                              char *why, size_t why_len)
{
    const uint32_t n = L->tiled ? TIFFNumberOfTiles(tif) : TIFFNumberOfStrips(tif);
    if (n == 0) {
        return "no strips or tiles";
    }
    if (n > m->size) {
        return "more strips or tiles than the file has bytes";
    }
    uint64_t present = 0;
    for (uint32_t i = 0; i < n; i++) {
        int err = 0;
        const uint64_t off = TIFFGetStrileOffsetWithErr(tif, i, &err);
        const uint64_t count = err ? 0 : TIFFGetStrileByteCountWithErr(tif, i, &err);
        if (err || count == 0 || off >= m->size) {
            snprintf(why, why_len, "%s %u has no data in the file", L->tiled ? "tile" : "strip",
                     i);
            return why;
        }
        present += count < m->size - off ? count : m->size - off;
    }
    if (L->compression == COMPRESSION_NONE) {
        if (present < expanded) {
            snprintf(why, why_len, "file is truncated: %llu of %llu bytes of image data",
                     (unsigned long long)present, (unsigned long long)expanded);
            return why;
        }
    } else if (expanded > EXPANSION_SLACK && (expanded - EXPANSION_SLACK) / MAX_EXPANSION > present) {
        snprintf(why, why_len, "%llu bytes of compressed data cannot hold %ux%u pixels",
                 (unsigned long long)present, L->w, L->h);
        return why;
    }
    return NULL;
}

/* Min-is-white: invert the gray sample of every pixel (not the extra one). */
static void invert_gray(void *samples, size_t pixels, int channels, uint16_t bps)
{
    if (bps == 8) {
        uint8_t *p = samples;
        for (size_t i = 0; i < pixels; i++) {
            p[i * (size_t)channels] = (uint8_t)(255 - p[i * (size_t)channels]);
        }
    } else if (bps == 16) {
        uint16_t *p = samples;
        for (size_t i = 0; i < pixels; i++) {
            p[i * (size_t)channels] = (uint16_t)(65535 - p[i * (size_t)channels]);
        }
    } else {
        float *p = samples;
        for (size_t i = 0; i < pixels; i++) {
            p[i * (size_t)channels] = 1.0f - p[i * (size_t)channels];
        }
    }
}

/* The raw path: decode every strip or tile into `img` (w x h x spp samples of
 * bps bits, chunky). Returns NULL or a reason. */
static const char *read_raw(TIFF *tif, const layout *L, uint8_t *img, char *why, size_t why_len)
{
    const size_t sb = L->bps / 8;
    const size_t pix = (size_t)L->spp * sb;
    const size_t row = (size_t)L->w * pix;
    const int planar = L->planar == PLANARCONFIG_SEPARATE && L->spp > 1;
    const uint32_t planes = planar ? L->spp : 1;
    const size_t unit = planar ? sb : pix; /* bytes of one pixel in a strip or tile */
    if (!L->tiled && !planar) {
        for (uint32_t s = 0; s < L->strips_per_plane; s++) {
            const uint32_t row0 = s * L->rps; /* < h: strips_per_plane = ceil(h / rps) */
            const uint32_t rows = L->h - row0 < L->rps ? L->h - row0 : L->rps;
            const tmsize_t want = (tmsize_t)((size_t)rows * row);
            if (TIFFReadEncodedStrip(tif, s, img + (size_t)row0 * row, want) != want) {
                snprintf(why, why_len, "cannot decode strip %u", s);
                return why;
            }
        }
        return NULL;
    }
    /* Planar strips and all tiles go through a buffer of one strip or tile. */
    const uint32_t bw = L->tiled ? L->tw : L->w, bh = L->tiled ? L->th : L->rps;
    const size_t buf_bytes = (size_t)bw * bh * unit;
    uint8_t *buf = malloc(buf_bytes);
    if (buf == NULL) {
        return "out of memory";
    }
    const char *fail = NULL;
    for (uint32_t p = 0; p < planes && fail == NULL; p++) {
        for (uint32_t y0 = 0; y0 < L->h && fail == NULL; y0 += bh) {
            for (uint32_t x0 = 0; x0 < L->w && fail == NULL; x0 += bw) {
                const uint32_t rows = L->h - y0 < bh ? L->h - y0 : bh;
                const uint32_t cols = L->w - x0 < bw ? L->w - x0 : bw;
                tmsize_t want, got;
                if (L->tiled) {
                    const uint32_t t = TIFFComputeTile(tif, x0, y0, 0, (uint16_t)p);
                    want = (tmsize_t)buf_bytes;
                    got = TIFFReadEncodedTile(tif, t, buf, want);
                } else {
                    const uint32_t s = p * L->strips_per_plane + y0 / L->rps;
                    want = (tmsize_t)((size_t)rows * bw * unit);
                    got = TIFFReadEncodedStrip(tif, s, buf, want);
                }
                if (got != want) {
                    snprintf(why, why_len, "cannot decode %s at (%u, %u)",
                             L->tiled ? "tile" : "strip", x0, y0);
                    fail = why;
                    break;
                }
                for (uint32_t y = 0; y < rows; y++) {
                    const uint8_t *from = buf + (size_t)y * bw * unit;
                    uint8_t *to = img + (size_t)(y0 + y) * row + (size_t)x0 * pix;
                    if (!planar) {
                        memcpy(to, from, (size_t)cols * pix);
                        continue;
                    }
                    to += (size_t)p * sb;
                    for (uint32_t x = 0; x < cols; x++) {
                        memcpy(to + (size_t)x * pix, from + (size_t)x * sb, sb);
                    }
                }
            }
        }
    }
    free(buf);
    return fail;
}

/* The RGBA path: 8-bit samples, channels as the file's photometric says. */
static imghist_status read_rgba(imghist_ctx *ctx, TIFF *tif, const tiff_mem *m, const char *name,
                                const layout *L, ih_raw *out)
{
    char emsg[1024] = "";
    if (!TIFFRGBAImageOK(tif, emsg)) {
        ih_sanitize_line(emsg);
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: unsupported TIFF (%s)", name, emsg);
    }
    uint16_t extra = 0;
    uint16_t *extra_types = NULL;
    TIFFGetField(tif, TIFFTAG_EXTRASAMPLES, &extra, &extra_types);
    const int gray = L->photometric == PHOTOMETRIC_MINISBLACK ||
                     L->photometric == PHOTOMETRIC_MINISWHITE;
    const int channels = (gray ? 1 : 3) + (extra > 0 ? 1 : 0);
    const size_t pixels = (size_t)L->w * L->h;
    uint32_t *raster = calloc(pixels, sizeof *raster);
    if (raster == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory for %ux%u pixels", name, L->w,
                       L->h);
    }
    /* Rows as stored: the Orientation tag is applied by load.c (see above). */
    TIFFSetField(tif, TIFFTAG_ORIENTATION, ORIENTATION_TOPLEFT);
    if (!TIFFReadRGBAImageOriented(tif, L->w, L->h, raster, ORIENTATION_TOPLEFT, 1)) {
        free(raster);
        return bad(ctx, name, m, "cannot decode");
    }
    /* In place: pixel i's bytes go to [i * channels, (i + 1) * channels),
     * never past the 4 bytes of pixel i, which is read first. */
    uint8_t *dst = (uint8_t *)raster;
    for (size_t i = 0; i < pixels; i++) {
        const uint32_t px = raster[i];
        uint8_t *d = dst + i * (size_t)channels;
        d[0] = (uint8_t)TIFFGetR(px);
        if (!gray) {
            d[1] = (uint8_t)TIFFGetG(px);
            d[2] = (uint8_t)TIFFGetB(px);
        }
        if (extra > 0) {
            d[channels - 1] = (uint8_t)TIFFGetA(px);
        }
    }
    out->width = L->w;
    out->height = L->h;
    out->channels = channels;
    out->dtype = IMGHIST_U8;
    out->samples = raster;
    return IMGHIST_OK;
}

static imghist_status read_image(imghist_ctx *ctx, TIFF *tif, tiff_mem *m, const char *name,
                                 const ih_decode_limits *limits, ih_raw *out)
{
    layout L;
    memset(&L, 0, sizeof L);
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &L.w) ||
        !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &L.h)) {
        return bad(ctx, name, m, "no image size");
    }
    imghist_status st = ih_check_image_size(ctx, limits, name, L.w, L.h);
    if (st != IMGHIST_OK) {
        return st;
    }
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &L.spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &L.bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &L.format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &L.planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &L.orientation);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &L.compression);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &L.photometric)) {
        L.photometric = L.spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
    }
    if (L.spp == 0 || L.spp > 16 || L.bps == 0 || L.bps > 64) {
        char why[80];
        snprintf(why, sizeof why, "%u samples of %u bits per pixel", L.spp, L.bps);
        return bad(ctx, name, m, why);
    }
    if (L.compression == COMPRESSION_JPEG && L.photometric == PHOTOMETRIC_YCBCR &&
        L.bps == 8 && L.spp == 3) {
        /* libjpeg converts to RGB; the strips then hold RGB samples. */
        TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        L.photometric = PHOTOMETRIC_RGB;
    }
    L.tiled = TIFFIsTiled(tif);
    const int integer = L.format == SAMPLEFORMAT_UINT || L.format == SAMPLEFORMAT_VOID;
    const int raw_type = (integer && (L.bps == 8 || L.bps == 16)) ||
                         (L.format == SAMPLEFORMAT_IEEEFP && L.bps == 32);
    const int gray = L.photometric == PHOTOMETRIC_MINISBLACK ||
                     L.photometric == PHOTOMETRIC_MINISWHITE;
    const int raw = raw_type && ((gray && L.spp <= 2) ||
                                 (L.photometric == PHOTOMETRIC_RGB && (L.spp == 3 || L.spp == 4)));
    if (!raw && !(integer && L.bps <= 16)) {
        return ih_fail(ctx, IMGHIST_E_DECODE,
                       "%s: unsupported TIFF (%u-bit samples of format %u, photometric %u, "
                       "%u per pixel)",
                       name, L.bps, L.format, L.photometric, L.spp);
    }
    /* What the strips or tiles decode to, in bytes. */
    const uint64_t bits_per_pixel = (uint64_t)L.spp * L.bps;
    uint64_t expanded;
    if (L.tiled) {
        if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &L.tw) ||
            !TIFFGetField(tif, TIFFTAG_TILELENGTH, &L.th) || L.tw == 0 || L.th == 0) {
            return bad(ctx, name, m, "no tile size");
        }
        L.tiles_across = (uint32_t)(((uint64_t)L.w + L.tw - 1) / L.tw);
        L.tiles_down = (uint32_t)(((uint64_t)L.h + L.th - 1) / L.th);
        const uint64_t tile_bytes = (mul(mul(L.tw, L.th), bits_per_pixel) + 7) / 8;
        expanded = mul(mul(tile_bytes, L.tiles_across), L.tiles_down);
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &L.rps);
        if (L.rps == 0 || L.rps > L.h) {
            L.rps = L.h;
        }
        L.strips_per_plane = (uint32_t)(((uint64_t)L.h + L.rps - 1) / L.rps);
        expanded = mul((mul(L.w, bits_per_pixel) + 7) / 8, L.h);
    }
    if (expanded == 0 || expanded > SIZE_MAX / 2) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: %ux%u TIFF is too large for this machine",
                       name, L.w, L.h);
    }
    char why[160];
    const char *fail = check_data(tif, m, &L, expanded, why, sizeof why);
    if (fail != NULL) {
        return bad(ctx, name, m, fail);
    }
    out->orientation = ih_orientation_to_apply(L.orientation);
    if (!raw) {
        return read_rgba(ctx, tif, m, name, &L, out);
    }
    if (!L.tiled && L.planar == PLANARCONFIG_SEPARATE && L.spp > 1 &&
        TIFFNumberOfStrips(tif) / L.spp < L.strips_per_plane) {
        return bad(ctx, name, m, "too few strips");
    }
    if (!L.tiled && (L.planar != PLANARCONFIG_SEPARATE || L.spp == 1) &&
        TIFFNumberOfStrips(tif) < L.strips_per_plane) {
        return bad(ctx, name, m, "too few strips");
    }
    if (L.tiled && mul(L.tw, L.th) > SIZE_MAX / 64) {
        return bad(ctx, name, m, "tiles too large");
    }
    const size_t total = (size_t)L.w * L.h * L.spp * (L.bps / 8);
    uint8_t *img = calloc(total, 1);
    if (img == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory for %ux%u pixels", name, L.w,
                       L.h);
    }
    fail = read_raw(tif, &L, img, why, sizeof why);
    if (fail != NULL) {
        free(img);
        if (strcmp(fail, "out of memory") == 0) {
            return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
        }
        return bad(ctx, name, m, fail);
    }
    if (L.photometric == PHOTOMETRIC_MINISWHITE) {
        invert_gray(img, (size_t)L.w * L.h, L.spp, L.bps);
    }
    out->width = L.w;
    out->height = L.h;
    out->channels = L.spp;
    out->dtype = L.bps == 8 ? IMGHIST_U8 : L.bps == 16 ? IMGHIST_U16 : IMGHIST_F32;
    out->samples = img;
    return IMGHIST_OK;
}

imghist_status ih_decode_tiff(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, const ih_load_opts *opts, ih_raw *out)
{
    /* Always the file's depth and channels (load.c reduces them): only the
     * limits are read from opts. */
    tiff_mem m = {data, size, 0, ""};
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (o == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name);
    }
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, &m);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, &m);
    /* "m" is not given: libtiff reads the strips from the bytes in place. */
    TIFF *tif = TIFFClientOpenExt("TIFF", "r", &m, mem_read, mem_write, mem_seek, mem_close,
                                  mem_size, mem_map, mem_unmap, o);
    TIFFOpenOptionsFree(o);
    if (tif == NULL) {
        return bad(ctx, name, &m, "cannot read the header");
    }
    const imghist_status st = read_image(ctx, tif, &m, name, &opts->limits, out);
    TIFFClose(tif);
    return st;
}
