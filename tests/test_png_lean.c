/*
 * The lean PNG reader (src/io/png_lean.c) against libpng: every PNG of
 * PngSuite and samples/, the PNGs of any folder named on the command line,
 * and PNGs made here with every filter type, depth, colour type, palette and
 * tRNS, several and empty IDATs, and broken ones (truncated, bad CRC, bad
 * Adler-32, bad filter type, stray chunks) are loaded in every load mode
 * twice, with IMGHIST_PNG_READER=libpng and without: status, message,
 * shape, flags and every sample must be the same. The files made here also
 * say whether the lean reader must take them, so that a reader that sent
 * everything to libpng would fail.
 */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "imghist.h"
#include "png_lean.h"
#include "test_util.h"

static int failures;
static unsigned compared, lean_taken;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    failures++;
}

/* The load modes: gray mode x IMGHIST_P_LOAD_DEPTH x IMGHIST_P_LOAD_CHANNELS,
 * and a pixel limit the larger images pass. */
typedef struct mode {
    imghist_gray_mode gray;
    int depth, channels;
    long long max_pixels;
} mode;

static const mode modes[] = {
    {IMGHIST_GRAY_BGR2GRAY, 0, 0, 0}, {IMGHIST_GRAY_LUMA, 0, 0, 0},
    {IMGHIST_GRAY_BGR2GRAY, 1, 0, 0}, {IMGHIST_GRAY_LUMA, 1, 0, 0},
    {IMGHIST_GRAY_BGR2GRAY, 0, 1, 0}, {IMGHIST_GRAY_LUMA, 0, 1, 0},
    {IMGHIST_GRAY_BGR2GRAY, 1, 1, 0}, {IMGHIST_GRAY_BGR2GRAY, 0, 0, 100},
};
#define N_MODES (sizeof modes / sizeof modes[0])

static imghist_ctx *make_ctx(const mode *m)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx) != IMGHIST_OK ||
        imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, m->depth) != IMGHIST_OK ||
        imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, m->channels) != IMGHIST_OK ||
        imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, m->gray) != IMGHIST_OK ||
        (m->max_pixels > 0 &&
         imghist_set_param(ctx, IMGHIST_P_MAX_PIXELS, m->max_pixels) != IMGHIST_OK)) {
        fprintf(stderr, "cannot make a context\n");
        exit(1);
    }
    return ctx;
}

/* What one load gave. */
typedef struct result {
    imghist_status st;
    char msg[512];
    imghist_image *img;
} result;

static result load(imghist_ctx *ctx, const uint8_t *d, size_t n, const char *name, int libpng)
{
    result r = {0};
    if (libpng) {
        setenv("IMGHIST_PNG_READER", "libpng", 1);
    } else {
        unsetenv("IMGHIST_PNG_READER");
    }
    r.st = imghist_load_memory(ctx, d, n, name, &r.img);
    if (r.st != IMGHIST_OK) {
        snprintf(r.msg, sizeof r.msg, "%s", imghist_last_error(ctx));
    }
    unsetenv("IMGHIST_PNG_READER");
    return r;
}

static int same_image(const imghist_image *a, const imghist_image *b)
{
    const imghist_view *x = &a->view, *y = &b->view;
    if (x->width != y->width || x->height != y->height || x->channels != y->channels ||
        x->dtype != y->dtype || x->pitch != y->pitch || a->flags != b->flags) {
        return 0;
    }
    return memcmp(x->data, y->data, x->pitch * x->height) == 0;
}

/* Whether the lean reader takes the file in this mode (not whether it
 * decodes it right: the comparison says that). */
static int lean_takes(imghist_ctx *ctx, const mode *m, const uint8_t *d, size_t n)
{
    const ih_load_opts opts = {
        .mode = m->gray,
        .native_depth = m->depth,
        .keep_channels = m->channels,
        .limits = {.max_pixels = m->max_pixels > 0 ? (uint64_t)m->max_pixels : UINT64_MAX},
    };
    ih_raw raw = {0};
    imghist_status st = IMGHIST_OK;
    const int took = ih_png_lean_decode(ctx, d, n, "x", &opts, &raw, &st);
    free(raw.samples);
    return took;
}

/* Compare the two readers on one file in every mode. want_lean: 1 the lean
 * reader must take it in every mode but luma ones when luma_falls_back,
 * 0 it must not, -1 either. */
static void compare_file(const char *name, const uint8_t *d, size_t n, int want_lean,
                         int luma_falls_back)
{
    for (size_t i = 0; i < N_MODES; i++) {
        imghist_ctx *ctx = make_ctx(&modes[i]);
        result a = load(ctx, d, n, name, 0);
        result b = load(ctx, d, n, name, 1);
        compared++;
        if (a.st != b.st || strcmp(a.msg, b.msg) != 0) {
            fail("%s mode %zu: lean %d '%s', libpng %d '%s'", name, i, a.st, a.msg, b.st, b.msg);
        } else if (a.st == IMGHIST_OK && !same_image(a.img, b.img)) {
            fail("%s mode %zu: images differ", name, i);
        }
        const int took = lean_takes(ctx, &modes[i], d, n);
        lean_taken += (unsigned)took;
        const int luma = modes[i].gray == IMGHIST_GRAY_LUMA && !modes[i].channels;
        int want = want_lean;
        if (want == 1 && luma && luma_falls_back) {
            want = 0;
        }
        if (modes[i].max_pixels > 0) {
            want = -1; /* a file too large is refused before its data are read */
        }
        if (want >= 0 && took != want) {
            fail("%s mode %zu: the lean reader %s it", name, i, took ? "took" : "did not take");
        }
        imghist_image_free(a.img);
        imghist_image_free(b.img);
        imghist_destroy(ctx);
    }
}

static void compare_folder(const char *dir)
{
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/*.png", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) {
        fail("no PNG in %s", dir);
        return;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t n = 0;
        uint8_t *d = tu_read_file(g.gl_pathv[i], &n);
        if (d == NULL) {
            fail("cannot read %s", g.gl_pathv[i]);
            continue;
        }
        compare_file(g.gl_pathv[i], d, n, -1, 0);
        free(d);
    }
    globfree(&g);
}

/* ------------------------------------------------------------ PNG maker */

typedef struct buf {
    uint8_t *d;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = realloc(b->d, b->cap);
        if (b->d == NULL) {
            exit(1);
        }
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put32(buf *b, uint32_t v)
{
    const uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(b, x, 4);
}

static void chunk(buf *b, const char *type, const void *data, uint32_t n)
{
    put32(b, n);
    put(b, type, 4);
    put(b, data, n);
    uLong crc = crc32(0, (const Bytef *)type, 4);
    crc = crc32(crc, data, n);
    put32(b, (uint32_t)crc);
}

/* What to make. */
typedef struct spec {
    uint32_t w, h;
    int color, depth;
    int filter;       /* 0..4, or 5: each row its own (y % 5), 6: a random one */
    int idat_pieces;  /* IDAT chunks the stream is cut into */
    int empty_idat;   /* a zero-length IDAT first */
    int palette_n;    /* entries of PLTE for a palette image */
    int trns;         /* a tRNS chunk (palette: this many alphas) */
    int bad_index;    /* a palette index past the palette */
    int window_bits;  /* deflate's window (9..15); 0: 15 */
    const char *pre;  /* an extra chunk before IDAT ("gAMA", "tEXt", "prVt", "PLTE") */
    const char *post; /* an extra chunk after IDAT */
    const char *mid;  /* an extra chunk after the first IDAT */
} spec;

static int channels_of(int color)
{
    return color == 0 || color == 3 ? 1 : color == 2 ? 3 : color == 4 ? 2 : 4;
}

static uint8_t paeth_of(int a, int b, int c)
{
    const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* A PNG of s, its pixels from the seed; the zlib stream's offset and size
 * in *zoff, *zlen (of the first IDAT's data when it is in one piece). */
static buf make_png(const spec *s, uint64_t seed, size_t *zoff, size_t *zlen)
{
    tu_rng rng;
    tu_seed(&rng, seed);
    const size_t bpp = (size_t)channels_of(s->color) * (size_t)(s->depth / 8);
    const size_t rb = s->w * bpp;
    uint8_t *img = calloc(rb * s->h + 8, 1), *filt = malloc((rb + 1) * s->h);
    for (size_t i = 0; i < rb * s->h; i++) {
        /* smooth ramps with noise, so that every filter sees real work */
        const size_t x = i % rb, y = i / rb;
        img[i] = (uint8_t)(x * 3 + y * 5 + tu_below(&rng, 16));
    }
    if (s->color == 3) {
        for (size_t i = 0; i < rb * s->h; i++) {
            img[i] = (uint8_t)(img[i] % (uint32_t)s->palette_n);
        }
        if (s->bad_index) {
            img[rb * s->h / 2] = (uint8_t)s->palette_n;
        }
    }
    for (uint32_t y = 0; y < s->h; y++) {
        const uint8_t *row = img + rb * y, *up = y ? row - rb : NULL;
        uint8_t *o = filt + (rb + 1) * y;
        const int f = s->filter == 5 ? (int)(y % 5) : s->filter == 6 ? (int)tu_below(&rng, 5)
                                                                       : s->filter;
        o[0] = (uint8_t)f;
        for (size_t i = 0; i < rb; i++) {
            const int a = i >= bpp ? row[i - bpp] : 0, b = up ? up[i] : 0,
                      c = up && i >= bpp ? up[i - bpp] : 0;
            const int pred = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2
                                                                            : paeth_of(a, b, c);
            o[1 + i] = (uint8_t)(row[i] - pred);
        }
    }
    z_stream z = {0};
    deflateInit2(&z, 6, Z_DEFLATED, s->window_bits ? s->window_bits : 15, 8, Z_DEFAULT_STRATEGY);
    uLong cap = deflateBound(&z, (uLong)((rb + 1) * s->h));
    uint8_t *zd = malloc(cap);
    z.next_in = filt;
    z.avail_in = (uInt)((rb + 1) * s->h);
    z.next_out = zd;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    const size_t zn = z.total_out;
    deflateEnd(&z);

    buf b = {0};
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    put(&b, sig, 8);
    const uint8_t ihdr[13] = {(uint8_t)(s->w >> 24), (uint8_t)(s->w >> 16), (uint8_t)(s->w >> 8),
                              (uint8_t)s->w, (uint8_t)(s->h >> 24), (uint8_t)(s->h >> 16),
                              (uint8_t)(s->h >> 8), (uint8_t)s->h, (uint8_t)s->depth,
                              (uint8_t)s->color, 0, 0, 0};
    chunk(&b, "IHDR", ihdr, 13);
    static const uint8_t gama[4] = {0, 0, 0xb1, 0x8f};
    static const uint8_t text[] = "Comment\0made by the test";
    uint8_t pal[768];
    for (int i = 0; i < 768; i++) {
        pal[i] = (uint8_t)(i * 37 + 11);
    }
    if (s->pre != NULL && strcmp(s->pre, "PLTE") == 0) {
        chunk(&b, "PLTE", pal, 30);
    }
    if (s->color == 3) {
        chunk(&b, "PLTE", pal, (uint32_t)s->palette_n * 3);
    }
    if (s->trns) {
        uint8_t t[256];
        for (int i = 0; i < 256; i++) {
            t[i] = (uint8_t)(i * 91);
        }
        /* gray and RGB: a value the image holds (the first pixel's) */
        memcpy(t, img, 6);
        const uint32_t tn = s->color == 3 ? (uint32_t)s->trns : s->color == 0 ? 2 : 6;
        if (s->depth == 8 && s->color != 3) {
            for (uint32_t i = 0; i < tn; i += 2) {
                t[i + 1] = img[i / 2];
                t[i] = 0;
            }
        }
        chunk(&b, "tRNS", t, tn);
    }
    /* big-endian EXIF, IFD 0 with one entry: Orientation (0x112) = 6 */
    static const uint8_t exif[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 1, 0x12, 0, 3,
                                   0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0};
    if (s->pre != NULL && strcmp(s->pre, "gAMA") == 0) {
        chunk(&b, "gAMA", gama, 4);
    } else if (s->pre != NULL && strcmp(s->pre, "eXIf") == 0) {
        chunk(&b, "eXIf", exif, sizeof exif);
    } else if (s->pre != NULL && strcmp(s->pre, "PLTE") != 0) {
        chunk(&b, s->pre, text, sizeof text - 1);
    }
    if (s->empty_idat) {
        chunk(&b, "IDAT", "", 0);
    }
    *zoff = b.n + 8;
    *zlen = zn;
    const int pieces = s->idat_pieces > 0 ? s->idat_pieces : 1;
    for (int i = 0; i < pieces; i++) {
        const size_t from = zn * (size_t)i / (size_t)pieces, to = zn * (size_t)(i + 1) / pieces;
        chunk(&b, "IDAT", zd + from, (uint32_t)(to - from));
        if (i == 0 && s->mid != NULL) {
            chunk(&b, s->mid, text, sizeof text - 1);
        }
    }
    if (s->post != NULL) {
        chunk(&b, s->post, text, sizeof text - 1);
    }
    chunk(&b, "IEND", "", 0);
    free(img);
    free(filt);
    free(zd);
    return b;
}

/* Rewrite the CRC of the chunk whose data start at off and run n bytes. */
static void fix_crc(buf *b, size_t off, size_t n)
{
    const uLong crc = crc32(0, b->d + off - 4, (uInt)(n + 4));
    b->d[off + n] = (uint8_t)(crc >> 24);
    b->d[off + n + 1] = (uint8_t)(crc >> 16);
    b->d[off + n + 2] = (uint8_t)(crc >> 8);
    b->d[off + n + 3] = (uint8_t)crc;
}

static void generated(void)
{
    static const struct {
        int color, depth;
    } kinds[] = {{0, 8}, {0, 16}, {2, 8}, {2, 16}, {3, 8}, {4, 8}, {4, 16}, {6, 8}, {6, 16}};
    static const uint32_t sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {3, 5}, {33, 17}, {255, 3}};
    unsigned k = 0;
    for (size_t c = 0; c < sizeof kinds / sizeof kinds[0]; c++) {
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            for (int filter = 0; filter <= 6; filter++, k++) {
                spec s = {sizes[z][0], sizes[z][1], kinds[c].color, kinds[c].depth, filter,
                          1 + (int)(k % 3), (int)(k % 7 == 0), 0, 0, 0, 0, NULL, NULL, NULL};
                if (s.color == 3) {
                    s.palette_n = 1 + (int)(k * 53 % 256);
                }
                if (s.color == 0 || s.color == 2 || s.color == 3) {
                    s.trns = k % 2 ? (s.color == 3 ? 1 + (int)(k % (unsigned)s.palette_n) : 1) : 0;
                }
                if (k % 5 == 0) {
                    s.pre = "tEXt";
                }
                if (k % 4 == 1) {
                    s.post = "tIME";
                }
                size_t zoff, zlen;
                buf b = make_png(&s, 1000 + k, &zoff, &zlen);
                char name[96];
                snprintf(name, sizeof name, "made c%d d%d %ux%u f%d #%u", s.color, s.depth, s.w,
                         s.h, s.filter, k);
                compare_file(name, b.d, b.n, 1, 0);
                free(b.d);
            }
        }
    }
}

/* Files the lean reader must leave to libpng, or take, as marked. */
static void edge_cases(void)
{
    const spec rgb = {40, 9, 2, 8, 5, 3, 0, 0, 0, 0, 0, NULL, NULL, NULL};
    size_t zoff, zlen;
    char name[64];

    buf b = make_png(&rgb, 1, &zoff, &zlen);
    compare_file("rgb", b.d, b.n, 1, 0);
    /* truncated at every length: libpng's "file is truncated" and others */
    for (size_t n = 8; n < b.n; n += (n < 64 ? 1 : 7)) {
        snprintf(name, sizeof name, "truncated to %zu", n);
        compare_file(name, b.d, n, 0, 0);
    }
    /* trailing bytes after IEND are not read */
    buf t = {0};
    put(&t, b.d, b.n);
    put(&t, "garbage", 7);
    compare_file("trailing garbage", t.d, t.n, 1, 0);
    free(t.d);
    /* a flipped bit in each chunk: bad CRC (IHDR, IDAT, IEND) */
    static const size_t flips[] = {16, 40, 70};
    for (size_t i = 0; i < 3; i++) {
        const size_t at = i == 2 ? b.n - 5 : flips[i];
        b.d[at] ^= 4;
        snprintf(name, sizeof name, "bad CRC at %zu", at);
        compare_file(name, b.d, b.n, 0, 0);
        b.d[at] ^= 4;
    }
    free(b.d);

    /* one IDAT: its deflate data, its Adler-32 and its filter bytes broken, CRC right */
    spec one = rgb;
    one.idat_pieces = 1;
    one.filter = 0; /* stored filter bytes stay visible after level 0 */
    b = make_png(&one, 2, &zoff, &zlen);
    b.d[zoff + zlen - 1] ^= 1;
    fix_crc(&b, zoff, zlen);
    compare_file("bad Adler-32", b.d, b.n, 0, 0);
    b.d[zoff + zlen - 1] ^= 1;
    b.d[zoff + zlen / 2] ^= 0x55;
    fix_crc(&b, zoff, zlen);
    compare_file("bad deflate data", b.d, b.n, 0, 0);
    b.d[zoff + zlen / 2] ^= 0x55;
    b.d[zoff] = 0x78 ^ 0x10; /* an unknown window with a bad check */
    fix_crc(&b, zoff, zlen);
    compare_file("bad zlib header", b.d, b.n, 0, 0);
    free(b.d);

    /* a filter type of 5: made with level 0, the filter byte is in the clear */
    one.w = 4;
    one.h = 2;
    b = make_png(&one, 3, &zoff, &zlen);
    {
        z_stream z = {0};
        uint8_t raw[2 * 13] = {0}, zd[128];
        raw[0] = 5;
        deflateInit(&z, 0);
        z.next_in = raw;
        z.avail_in = sizeof raw;
        z.next_out = zd;
        z.avail_out = sizeof zd;
        deflate(&z, Z_FINISH);
        buf f = {0};
        put(&f, b.d, zoff - 8);
        chunk(&f, "IDAT", zd, (uint32_t)z.total_out);
        chunk(&f, "IEND", "", 0);
        deflateEnd(&z);
        compare_file("filter type 5", f.d, f.n, 0, 0);
        free(f.d);
    }
    free(b.d);

    /* more image data than the image, and less */
    spec big = rgb;
    big.idat_pieces = 1;
    b = make_png(&big, 4, &zoff, &zlen);
    b.d[19] = 8; /* height 9 -> 8: too much data */
    fix_crc(&b, 16, 13);
    compare_file("too much data", b.d, b.n, 0, 0);
    b.d[19] = 10; /* too little */
    fix_crc(&b, 16, 13);
    compare_file("too little data", b.d, b.n, 0, 0);
    free(b.d);

    const struct {
        const char *what;
        spec s;
        int lean, luma_falls_back;
    } cases[] = {
        {"zero-length IDAT", {9, 9, 6, 16, 6, 2, 1, 0, 0, 0, 0, NULL, NULL, NULL}, 1, 0},
        {"many IDATs", {64, 30, 2, 16, 6, 40, 0, 0, 0, 0, 0, NULL, NULL, NULL}, 1, 0},
        {"gAMA", {20, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, "gAMA", NULL, NULL}, 1, 1},
        {"gAMA gray", {20, 20, 0, 16, 6, 1, 0, 0, 0, 0, 0, "gAMA", NULL, NULL}, 1, 1},
        {"gAMA palette", {20, 20, 3, 8, 6, 1, 0, 200, 0, 0, 0, "gAMA", NULL, NULL}, 1, 1},
        {"private chunk", {20, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, "prVt", NULL, NULL}, 0, 0},
        {"private chunk after", {20, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, NULL, "prVt", NULL}, 0, 0},
        {"eXIf", {30, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, "eXIf", NULL, NULL}, 1, 0},
        {"tEXt after IDAT", {20, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, NULL, "tEXt", NULL}, 1, 0},
        {"tEXt between IDATs", {20, 20, 2, 8, 6, 3, 0, 0, 0, 0, 0, NULL, NULL, "tEXt"}, 0, 0},
        {"PLTE in RGB", {20, 20, 2, 8, 6, 1, 0, 0, 0, 0, 0, "PLTE", NULL, NULL}, 0, 0},
        {"index past palette", {20, 20, 3, 8, 6, 1, 0, 17, 5, 1, 0, NULL, NULL, NULL}, 0, 0},
        {"full palette tRNS", {20, 20, 3, 8, 6, 1, 0, 256, 256, 0, 0, NULL, NULL, NULL}, 1, 0},
        {"small window, small image", {10, 10, 0, 8, 6, 1, 0, 0, 0, 0, 9, NULL, NULL, NULL}, 1, 0},
        {"small window, large image", {300, 300, 0, 8, 6, 1, 0, 0, 0, 0, 9, NULL, NULL, NULL}, 0, 0},
        {"large", {1000, 400, 6, 8, 6, 3, 0, 0, 0, 0, 0, NULL, NULL, NULL}, 1, 0},
        /* inflated into mapped pages (over 4 MiB) */
        {"mapped", {1600, 1000, 2, 8, 6, 4, 0, 0, 0, 0, 0, NULL, NULL, NULL}, 1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        b = make_png(&cases[i].s, 50 + i, &zoff, &zlen);
        compare_file(cases[i].what, b.d, b.n, cases[i].lean, cases[i].luma_falls_back);
        if (strcmp(cases[i].what, "eXIf") == 0) {
            /* the luma mode turns it upright: 30 x 20 becomes 20 x 30 */
            imghist_ctx *ctx = make_ctx(&modes[1]);
            result r = load(ctx, b.d, b.n, "eXIf", 0);
            if (r.st != IMGHIST_OK || r.img->view.width != 20 || r.img->view.height != 30) {
                fail("eXIf: not turned by its orientation");
            }
            imghist_image_free(r.img);
            imghist_destroy(ctx);
        }
        free(b.d);
    }
}

int main(int argc, char **argv)
{
    const char *samples = getenv("IMGHIST_SAMPLES");
    if (samples != NULL) {
        char dir[4096];
        compare_folder(samples);
        snprintf(dir, sizeof dir, "%s/../tests/conformance/pngsuite", samples);
        compare_folder(dir);
    }
    for (int i = 1; i < argc; i++) {
        compare_folder(argv[i]);
    }
    generated();
    edge_cases();
    printf("%u loads compared, %u taken by the lean reader, %d failures\n", compared,
           lean_taken, failures);
    return failures ? 1 : 0;
}
