/*
 * A PNG reader for the files folder runs meet most: not interlaced, 8 or 16
 * bits per sample (palettes of 8 bits), every chunk intact. libpng inflates
 * through zlib a row at a time; here the IDAT data are inflated in one call
 * to libdeflate's whole-buffer decompressor, which is several times faster,
 * then unfiltered and turned into exactly the samples decode_png.c's libpng
 * path returns (its transformations are described there).
 *
 * Anything else goes to libpng, so that its pixels, its warnings-only
 * tolerance and its error messages stay the only ones: a chunk this reader
 * does not know, a chunk out of its place, a bad CRC (all chunks are
 * checked), a file that ends before IEND, a zlib stream that does not inflate
 * to exactly the image's bytes or does not end with the IDAT data (its
 * Adler-32 included), a filter type over 4, a palette index past the
 * palette. In the luma mode a file with gAMA, sRGB, iCCP, cHRM or sBIT goes
 * to libpng too, whose rgb_to_gray then works in linear light. A zlib header
 * that declares a window under 32 KiB is taken only when the image fits in
 * that window: zlib refuses a match reaching further back, libdeflate does
 * not look. Bytes after IEND are never read, by libpng either.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "gray.h"
#include "orient.h"
#include "png_lean.h"

#define CHUNK(a, b, c, d)                                                                          \
    ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

enum {
    PNG_GRAY = 0,
    PNG_RGB = 2,
    PNG_PALETTE = 3,
    PNG_GRAY_ALPHA = 4,
    PNG_RGBA = 6,
};

typedef struct lean_png {
    uint32_t w, h;
    int depth, color, channels; /* channels as stored: palette 1 */
    int num_palette, num_trans; /* palette entries; tRNS alphas of a palette */
    int has_trns;               /* a valid tRNS chunk */
    uint16_t trans[3];          /* tRNS of gray (trans[0]) or RGB */
    uint8_t palette[256][3];
    uint8_t trans_alpha[256];
    size_t idat_first, idat_end; /* the first IDAT's offset, the end of the last */
    size_t idat_bytes, idat_chunks;
} lean_png;

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A chunk the libpng path skips unread in this mode (png_lean.h). */
static int skipped_chunk(const uint8_t *type, int luma)
{
    static const char list[] = IH_PNG_SKIPPED_CHUNKS;
    const size_t n = sizeof list / 5 - (luma ? IH_PNG_COLOUR_CHUNKS : 0);
    for (size_t i = 0; i < n; i++) {
        if (memcmp(list + 5 * i, type, 4) == 0) {
            return 1;
        }
    }
    return 0;
}

static int read_ihdr(const uint8_t *b, uint32_t len, lean_png *p)
{
    if (len != 13) {
        return 0;
    }
    p->w = be32(b);
    p->h = be32(b + 4);
    p->depth = b[8];
    p->color = b[9];
    /* libpng refuses widths past about 2^29 on every machine; under 2^28
     * nothing it checks in IHDR depends on the width. */
    if (p->w == 0 || p->h == 0 || p->w > (1u << 28) || p->h > 0x7fffffffu || b[10] != 0 ||
        b[11] != 0 || b[12] != 0) {
        return 0;
    }
    switch (p->color) {
    case PNG_GRAY:
        p->channels = 1;
        break;
    case PNG_RGB:
        p->channels = 3;
        break;
    case PNG_PALETTE:
        p->channels = 1;
        return p->depth == 8;
    case PNG_GRAY_ALPHA:
        p->channels = 2;
        break;
    case PNG_RGBA:
        p->channels = 4;
        break;
    default:
        return 0;
    }
    return p->depth == 8 || p->depth == 16;
}

/* A tRNS chunk that libpng takes as it is, without a warning. */
static int read_trns(const uint8_t *b, uint32_t len, int seen_plte, lean_png *p)
{
    const uint32_t max = p->depth == 16 ? 0xffffu : 0xffu;
    if (p->color == PNG_PALETTE) {
        if (!seen_plte || len == 0 || len > (uint32_t)p->num_palette) {
            return 0;
        }
        memcpy(p->trans_alpha, b, len);
        p->num_trans = (int)len;
    } else if (p->color == PNG_GRAY || p->color == PNG_RGB) {
        const uint32_t n = p->color == PNG_GRAY ? 1 : 3;
        if (len != 2 * n) {
            return 0;
        }
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t v = (uint32_t)b[2 * i] << 8 | b[2 * i + 1];
            if (v > max) {
                return 0;
            }
            p->trans[i] = (uint16_t)v;
        }
    } else {
        return 0; /* libpng ignores it, with a warning */
    }
    p->has_trns = 1;
    return 1;
}

/* Walks every chunk up to IEND: 1 when the file is one this reader takes. */
static int scan_chunks(const uint8_t *d, size_t n, int luma, lean_png *p)
{
    size_t pos = 8;
    int phase = 0; /* 0 before the IDATs, 1 in them, 2 after them */
    int seen_plte = 0;
    for (int first = 1;; first = 0) {
        if (n - pos < 12) {
            return 0;
        }
        const uint32_t len = be32(d + pos), type = be32(d + pos + 4);
        if (len > 0x7fffffffu || len > n - pos - 12) {
            return 0;
        }
        const uint8_t *body = d + pos + 8;
        if (libdeflate_crc32(0, d + pos + 4, (size_t)len + 4) != be32(body + len)) {
            return 0;
        }
        if (first) {
            if (type != CHUNK('I', 'H', 'D', 'R') || !read_ihdr(body, len, p)) {
                return 0;
            }
        } else if (type == CHUNK('I', 'D', 'A', 'T')) {
            if (phase == 2 || (phase == 0 && p->color == PNG_PALETTE && !seen_plte)) {
                return 0;
            }
            if (phase == 0) {
                p->idat_first = pos;
                phase = 1;
            }
            p->idat_bytes += len;
            p->idat_chunks++;
            p->idat_end = pos + 12 + len;
        } else {
            phase = phase == 1 ? 2 : phase;
            if (type == CHUNK('I', 'E', 'N', 'D')) {
                return phase == 2 && len == 0;
            }
            if (type == CHUNK('P', 'L', 'T', 'E')) {
                if (phase != 0 || seen_plte || p->has_trns || p->color != PNG_PALETTE ||
                    len == 0 || len % 3 != 0 || len > 768) {
                    return 0;
                }
                memcpy(p->palette, body, len);
                p->num_palette = (int)(len / 3);
                seen_plte = 1;
            } else if (type == CHUNK('t', 'R', 'N', 'S')) {
                if (phase != 0 || p->has_trns || !read_trns(body, len, seen_plte, p)) {
                    return 0;
                }
            } else if (!skipped_chunk(d + pos + 4, luma)) {
                return 0;
            }
        }
        pos += 12 + (size_t)len;
    }
}

/*
 * The inflated image, tens of megabytes for a photograph, is written once
 * and dropped: fresh pages faulted in one at a time cost about as much as
 * inflating into them. Where the system has it, a large buffer is mapped
 * with its pages populated in one call, on huge pages where allowed.
 */
#if defined(MAP_ANONYMOUS) && defined(MADV_POPULATE_WRITE)
#define IH_MAP_MIN ((size_t)4 << 20)
static uint8_t *raw_alloc(size_t n)
{
    if (n < IH_MAP_MIN) {
        return malloc(n);
    }
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    madvise(p, n, MADV_HUGEPAGE);
#endif
    madvise(p, n, MADV_POPULATE_WRITE); /* before Linux 5.14: faulted as written */
    return p;
}

static void raw_free(uint8_t *p, size_t n)
{
    if (p != NULL && n >= IH_MAP_MIN) {
        munmap(p, n);
    } else {
        free(p);
    }
}
#else
static uint8_t *raw_alloc(size_t n)
{
    return malloc(n);
}

static void raw_free(uint8_t *p, size_t n)
{
    (void)n;
    free(p);
}
#endif

/* A zlib header zlib takes as libdeflate does, for an image of raw bytes. */
static int zlib_header_ok(const uint8_t *z, size_t n, size_t raw)
{
    if (n < 2) {
        return 0;
    }
    const unsigned cmf = z[0], flg = z[1], cinfo = cmf >> 4;
    if ((cmf & 15) != 8 || cinfo > 7 || (cmf * 256 + flg) % 31 != 0 || (flg & 0x20) != 0) {
        return 0;
    }
    return cinfo == 7 || raw <= ((size_t)1 << (cinfo + 8));
}

static inline uint8_t paeth(int a, int b, int c)
{
    const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    if (pa <= pb && pa <= pc) {
        return (uint8_t)a;
    }
    return (uint8_t)(pb <= pc ? b : c);
}

#if defined(__SSE2__)
/* Average and Paeth carry each pixel into the next: a pixel at a time, its
 * bytes side by side in 16-bit lanes, for pixels of 3 to 8 bytes (RGB and
 * RGBA of 8 bits, their 16-bit forms). The first row is never given here. */
static inline __m128i load_px(const uint8_t *p, size_t bpp)
{
    /* built in a register: a pixel put together on the stack would be
     * read back before its bytes are all stored */
    uint64_t v;
    uint32_t w;
    uint16_t h;
    switch (bpp) {
    case 3:
        memcpy(&h, p, 2);
        v = h | (uint64_t)p[2] << 16;
        break;
    case 4:
        memcpy(&w, p, 4);
        v = w;
        break;
    case 6:
        memcpy(&w, p, 4);
        memcpy(&h, p + 4, 2);
        v = w | (uint64_t)h << 32;
        break;
    default:
        memcpy(&v, p, 8);
        break;
    }
    return _mm_unpacklo_epi8(_mm_cvtsi64_si128((long long)v), _mm_setzero_si128());
}

static inline void store_px(uint8_t *p, __m128i x, size_t bpp)
{
    const uint64_t v = (uint64_t)_mm_cvtsi128_si64(_mm_packus_epi16(x, x));
    const uint32_t w = (uint32_t)v;
    const uint16_t h = (uint16_t)v, h2 = (uint16_t)(v >> 32);
    switch (bpp) {
    case 3:
        memcpy(p, &h, 2);
        p[2] = (uint8_t)(v >> 16);
        break;
    case 4:
        memcpy(p, &w, 4);
        break;
    case 6:
        memcpy(p, &w, 4);
        memcpy(p + 4, &h2, 2);
        break;
    default:
        memcpy(p, &v, 8);
        break;
    }
}

static inline __m128i abs16(__m128i x)
{
    return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

static inline __m128i pick(__m128i mask, __m128i yes, __m128i no)
{
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

static inline void avg_px_n(uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    const __m128i low = _mm_set1_epi16(0xff);
    __m128i a = _mm_setzero_si128();
    for (size_t i = 0; i < n; i += bpp) {
        const __m128i b = load_px(prev + i, bpp), x = load_px(row + i, bpp);
        a = _mm_and_si128(_mm_add_epi16(x, _mm_srli_epi16(_mm_add_epi16(a, b), 1)), low);
        store_px(row + i, a, bpp);
    }
}

static inline void paeth_px_n(uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    const __m128i low = _mm_set1_epi16(0xff);
    __m128i a = _mm_setzero_si128(), c = a; /* left of the first pixel: zeros */
    for (size_t i = 0; i < n; i += bpp) {
        const __m128i b = load_px(prev + i, bpp), x = load_px(row + i, bpp);
        const __m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c);
        const __m128i pa = abs16(bc), pb = abs16(ac), pc = abs16(_mm_add_epi16(bc, ac));
        const __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc));
        const __m128i pred = pick(not_a, pick(_mm_cmpgt_epi16(pb, pc), c, b), a);
        a = _mm_and_si128(_mm_add_epi16(x, pred), low);
        store_px(row + i, a, bpp);
        c = b;
    }
}

/* One loop per pixel size, so that the loads and stores of a pixel are a
 * few instructions, not calls to memcpy. */
#define IH_BY_BPP(fn, row, prev, n, bpp)                                                          \
    switch (bpp) {                                                                                 \
    case 3:                                                                                        \
        fn(row, prev, n, 3);                                                                       \
        break;                                                                                     \
    case 4:                                                                                        \
        fn(row, prev, n, 4);                                                                       \
        break;                                                                                     \
    case 6:                                                                                        \
        fn(row, prev, n, 6);                                                                       \
        break;                                                                                     \
    default:                                                                                       \
        fn(row, prev, n, 8);                                                                       \
        break;                                                                                     \
    }

static void avg_pixels(uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    IH_BY_BPP(avg_px_n, row, prev, n, bpp)
}

static void paeth_pixels(uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    IH_BY_BPP(paeth_px_n, row, prev, n, bpp)
}
#define IH_PIXEL_FILTERS(bpp) ((bpp) == 3 || (bpp) == 4 || (bpp) == 6 || (bpp) == 8)
#else
#define IH_PIXEL_FILTERS(bpp) 0
static void avg_pixels(uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    (void)row, (void)prev, (void)n, (void)bpp;
}
#define paeth_pixels avg_pixels
#endif

/* Undo one row's filter in place; prev is the row above, unfiltered, or NULL
 * for the first row (a row of zeros). 0 for a filter type over 4. */
static int unfilter_row(int type, uint8_t *row, const uint8_t *prev, size_t n, size_t bpp)
{
    switch (type) {
    case 0:
        return 1;
    case 1:
        for (size_t i = bpp; i < n; i++) {
            row[i] = (uint8_t)(row[i] + row[i - bpp]);
        }
        return 1;
    case 2:
        if (prev != NULL) {
            for (size_t i = 0; i < n; i++) {
                row[i] = (uint8_t)(row[i] + prev[i]);
            }
        }
        return 1;
    case 3:
        if (prev == NULL) {
            for (size_t i = bpp; i < n; i++) {
                row[i] = (uint8_t)(row[i] + (row[i - bpp] >> 1));
            }
            return 1;
        }
        if (IH_PIXEL_FILTERS(bpp)) {
            avg_pixels(row, prev, n, bpp);
            return 1;
        }
        for (size_t i = 0; i < bpp; i++) {
            row[i] = (uint8_t)(row[i] + (prev[i] >> 1));
        }
        for (size_t i = bpp; i < n; i++) {
            row[i] = (uint8_t)(row[i] + ((row[i - bpp] + prev[i]) >> 1));
        }
        return 1;
    case 4:
        if (prev == NULL) { /* Paeth of (a, 0, 0) is a: Sub */
            return unfilter_row(1, row, NULL, n, bpp);
        }
        if (IH_PIXEL_FILTERS(bpp)) {
            paeth_pixels(row, prev, n, bpp);
            return 1;
        }
        for (size_t i = 0; i < bpp; i++) {
            row[i] = (uint8_t)(row[i] + prev[i]); /* Paeth of (0, b, 0) is b */
        }
        for (size_t i = bpp; i < n; i++) {
            row[i] = (uint8_t)(row[i] + paeth(row[i - bpp], prev[i], prev[i - bpp]));
        }
        return 1;
    default:
        return 0;
    }
}

/* A stored sample: 8 bits, or 16 big-endian ones. */
static inline uint32_t sample(const uint8_t *row, size_t i, int depth)
{
    return depth == 16 ? (uint32_t)row[2 * i] << 8 | row[2 * i + 1] : row[i];
}

/* What one unfiltered row becomes, as libpng's transformations make it. */
typedef struct row_job {
    const lean_png *p;
    int keep16;      /* U16 samples in host order, else the high byte */
    int keep_alpha;  /* IMGHIST_P_LOAD_CHANNELS: alpha kept, tRNS to alpha */
    int luma;        /* libpng's rgb_to_gray */
    int out_ch;      /* channels returned */
    uint8_t *rgb;    /* a row of 8-bit RGB for the BGR2GRAY mode */
    uint8_t max_idx; /* the largest palette index met */
} row_job;

/* libpng's rgb_to_gray without gamma, with OpenCV's weights in its fixed
 * point: 8 bits truncated, 16 bits rounded, then the high byte. */
static uint8_t luma_pixel(const uint8_t *px, int depth)
{
    const uint32_t rc = 9797, gc = 19234, bc = 32768 - rc - gc;
    if (depth == 8) {
        const uint32_t r = px[0], g = px[1], b = px[2];
        return r == g && r == b ? (uint8_t)r : (uint8_t)((rc * r + gc * g + bc * b) >> 15);
    }
    const uint32_t r = sample(px, 0, 16), g = sample(px, 1, 16), b = sample(px, 2, 16);
    return (uint8_t)(((rc * r + gc * g + bc * b + 16384) >> 15) >> 8);
}

/* A palette image's row, 8-bit samples: RGB or RGBA (keep_alpha and tRNS),
 * or gray by rgb_to_gray or cvtColor's weights. */
static void palette_row(row_job *j, const uint8_t *row, uint8_t *out)
{
    const lean_png *p = j->p;
    const uint32_t w = p->w;
    uint8_t mx = j->max_idx;
    if (j->keep_alpha) {
        const int alpha = p->has_trns;
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t i = row[x];
            mx = i > mx ? i : mx;
            memcpy(out, p->palette[i], 3);
            if (alpha) {
                out[3] = (int)i < p->num_trans ? p->trans_alpha[i] : 255;
            }
            out += alpha ? 4 : 3;
        }
    } else {
        uint8_t *rgb = j->rgb;
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t i = row[x];
            mx = i > mx ? i : mx;
            memcpy(rgb + 3 * (size_t)x, p->palette[i], 3);
        }
        if (j->luma) {
            for (uint32_t x = 0; x < w; x++) {
                out[x] = luma_pixel(rgb + 3 * (size_t)x, 8);
            }
        } else {
            ih_gray_from_rgb_row(j->rgb, out, w);
        }
    }
    j->max_idx = mx;
}

static void convert_row(row_job *j, const uint8_t *row, void *out_row)
{
    const lean_png *p = j->p;
    const uint32_t w = p->w;
    const int ch = p->channels, depth = p->depth;
    if (p->color == PNG_PALETTE) {
        palette_row(j, row, out_row);
        return;
    }
    const int colour = p->color == PNG_RGB || p->color == PNG_RGBA;
    /* tRNS becomes alpha only for gray and RGB, when alpha is kept */
    const int add_alpha = j->keep_alpha && p->has_trns;
    const int copy_ch = j->out_ch - add_alpha; /* samples copied per pixel */
    const size_t px_bytes = (size_t)ch * (size_t)(depth / 8);
    if (colour && j->out_ch == 1) { /* a gray mode */
        uint8_t *out = out_row;
        if (j->luma) {
            for (uint32_t x = 0; x < w; x++) {
                out[x] = luma_pixel(row + x * px_bytes, depth);
            }
            return;
        }
        const uint8_t *rgb = row;
        if (depth == 16 || ch == 4) {
            for (uint32_t x = 0; x < w; x++) {
                for (int c = 0; c < 3; c++) {
                    j->rgb[3 * (size_t)x + c] = row[x * px_bytes + (size_t)c * (depth / 8)];
                }
            }
            rgb = j->rgb;
        }
        ih_gray_from_rgb_row(rgb, out, w);
        return;
    }
    if (j->keep16) {
        uint16_t *out = out_row;
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t *px = row + x * px_bytes;
            int match = add_alpha;
            for (int c = 0; c < copy_ch; c++) {
                const uint32_t v = sample(px, (size_t)c, 16);
                match &= add_alpha && v == p->trans[c]; /* trans has 3 entries */
                *out++ = (uint16_t)v;
            }
            if (add_alpha) {
                *out++ = match ? 0 : 0xffff;
            }
        }
        return;
    }
    uint8_t *out = out_row;
    if (depth == 8 && !add_alpha && copy_ch == ch) {
        memcpy(out, row, (size_t)w * (size_t)ch);
        return;
    }
    for (uint32_t x = 0; x < w; x++) {
        const uint8_t *px = row + x * px_bytes;
        int match = add_alpha;
        for (int c = 0; c < copy_ch; c++) {
            const uint32_t v = sample(px, (size_t)c, depth);
            match &= add_alpha && v == p->trans[c]; /* trans has 3 entries */
            *out++ = (uint8_t)(depth == 16 ? v >> 8 : v);
        }
        if (add_alpha) {
            *out++ = match ? 0 : 255;
        }
    }
}

/* The channels the libpng path returns for this file and these options. */
static int out_channels(const lean_png *p, const ih_load_opts *opts, int keep16)
{
    const int colour = p->color != PNG_GRAY && p->color != PNG_GRAY_ALPHA;
    if (opts->keep_channels) {
        if (p->color == PNG_PALETTE) {
            return p->has_trns ? 4 : 3;
        }
        return p->channels + (p->has_trns ? 1 : 0);
    }
    if (!colour) {
        return 1;
    }
    /* 16-bit colour kept at 16 bits: RGB, for load.c to make gray */
    return keep16 ? 3 : 1;
}

int ih_png_lean_decode(imghist_ctx *ctx, const uint8_t *data, size_t size, const char *name,
                       const ih_load_opts *opts, ih_raw *out, imghist_status *st)
{
    const int luma = opts->mode == IMGHIST_GRAY_LUMA && !opts->keep_channels;
    lean_png *p = calloc(1, sizeof *p);
    if (p == NULL || !scan_chunks(data, size, luma, p)) {
        free(p);
        return 0;
    }
    /* From here on libpng would have read the header and the chunks before
     * the first IDAT without complaint, and checks the size next. */
    if (ih_check_image_size(ctx, &opts->limits, name, p->w, p->h) != IMGHIST_OK) {
        free(p);
        *st = IMGHIST_E_LIMIT;
        return 1;
    }
    const size_t bpp = (size_t)p->channels * (size_t)(p->depth / 8);
    const size_t rowbytes = (size_t)p->w * bpp;
    const int keep16 = opts->native_depth && p->depth == 16;
    const int out_ch = out_channels(p, opts, keep16);
    const size_t out_row = (size_t)p->w * (size_t)out_ch * (keep16 ? 2u : 1u);
    size_t raw_size, out_size;
    if (__builtin_mul_overflow(rowbytes + 1, (size_t)p->h, &raw_size) ||
        __builtin_mul_overflow(out_row, (size_t)p->h, &out_size)) {
        free(p);
        return 0;
    }

    const uint8_t *z = data + p->idat_first + 8;
    uint8_t *joined = NULL;
    if (p->idat_chunks > 1) {
        joined = malloc(p->idat_bytes ? p->idat_bytes : 1);
        size_t at = 0;
        for (size_t pos = p->idat_first; joined != NULL && pos < p->idat_end;) {
            const uint32_t len = be32(data + pos);
            memcpy(joined + at, data + pos + 8, len);
            at += len;
            pos += 12 + (size_t)len;
        }
        z = joined;
    }
    uint8_t *raw = NULL, *samples = NULL, *rgb = NULL;
    struct libdeflate_decompressor *dec = NULL;
    int ok = (p->idat_chunks == 1 || joined != NULL) &&
             zlib_header_ok(z, p->idat_bytes, raw_size);
    if (ok) {
        raw = raw_alloc(raw_size);
        samples = malloc(out_size);
        rgb = malloc((size_t)p->w * 3);
        dec = libdeflate_alloc_decompressor();
        ok = raw != NULL && samples != NULL && rgb != NULL && dec != NULL;
    }
    if (ok) {
        size_t in_used = 0, out_used = 0;
        ok = libdeflate_zlib_decompress_ex(dec, z, p->idat_bytes, raw, raw_size, &in_used,
                                           &out_used) == LIBDEFLATE_SUCCESS &&
             in_used == p->idat_bytes && out_used == raw_size;
    }
    libdeflate_free_decompressor(dec);
    free(joined);
    row_job job = {p, keep16, opts->keep_channels, luma, out_ch, rgb, 0};
    const uint8_t *prev = NULL;
    for (uint32_t y = 0; ok && y < p->h; y++) {
        uint8_t *line = raw + (rowbytes + 1) * y;
        ok = unfilter_row(line[0], line + 1, prev, rowbytes, bpp);
        if (ok) {
            convert_row(&job, line + 1, samples + out_row * y);
        }
        prev = line + 1;
    }
    /* libpng paints indices past the palette black, with a warning */
    if (ok && p->color == PNG_PALETTE && (int)job.max_idx >= p->num_palette) {
        ok = 0;
    }
    raw_free(raw, raw_size);
    free(rgb);
    if (!ok) {
        free(samples);
        free(p);
        return 0;
    }
    out->width = p->w;
    out->height = p->h;
    out->channels = out_ch;
    out->dtype = keep16 ? IMGHIST_U16 : IMGHIST_U8;
    out->reduced = p->depth == 16 && !keep16;
    out->samples = samples;
    out->orientation = opts->mode == IMGHIST_GRAY_LUMA ? ih_png_exif_orientation(data, size) : 0;
    free(p);
    *st = IMGHIST_OK;
    return 1;
}
