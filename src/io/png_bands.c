/*
 * The level-1 writer of 8-bit gray PNGs. Deflating takes most of an
 * equalization's time, so it goes to the fastest deflater that keeps the
 * size near OpenCV's: ISA-L's level 1 (bench/results/png-deflate.md; about
 * 2.5 times as fast as libdeflate's level 1 on photographs). Large images are
 * cut into bands, deflated apart on several threads: a band that ends in a
 * full flush ends on a byte boundary with no reference to earlier data, so
 * bands written one after the other form one valid stream (pigz's method),
 * and their Adler-32 sums combine into the stream's.
 */
#define _POSIX_C_SOURCE 200809L
#include "png_bands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#if IH_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <libdeflate.h>
#endif

#include "parallel.h"

#define BAND_BYTES ((size_t)4 << 20)
#define SMALL_INPUT ((size_t)64 << 10) /* filtered bytes deflated with zlib */

typedef struct band {
    const imghist_view *img;
    uint32_t row0, rows;
    int last;
    uint8_t *out; /* the deflated band */
    size_t out_len;
    uint32_t adler; /* of the filtered rows */
    int failed;     /* 1: out of memory, 2: the deflater failed */
    uint64_t filter_ns, deflate_ns;
} band;

/* |(int8_t)d|, written so that compilers vectorize the sums below. */
static inline uint32_t magnitude(uint8_t d)
{
    return d < 128 ? d : 256u - d;
}

/*
 * The rows [row0, row0 + rows) of img, each filtered with Sub or Up,
 * whichever leaves the smaller sum of magnitudes (the PNG specification's
 * heuristic over two filters; the first row of the image has no Up). Sub
 * goes straight to out, Up to `up_row`, copied over when it wins.
 */
static inline __attribute__((always_inline)) void filter_rows_body(
    const imghist_view *img, uint32_t row0, uint32_t rows, uint8_t *restrict out,
    uint8_t *restrict up_row)
{
    const uint32_t w = img->width;
    for (uint32_t y = row0; y < row0 + rows; y++) {
        const uint8_t *restrict row = (const uint8_t *)img->data + (size_t)y * img->pitch;
        uint8_t *restrict dst = out + (size_t)(y - row0) * ((size_t)w + 1);
        uint32_t cost_sub = magnitude(row[0]);
        dst[0] = 1;
        dst[1] = row[0];
        for (uint32_t x = 1; x < w; x++) {
            const uint8_t d = (uint8_t)(row[x] - row[x - 1]);
            dst[1 + x] = d;
            cost_sub += magnitude(d);
        }
        if (y == 0) {
            continue;
        }
        const uint8_t *restrict up = row - img->pitch;
        uint32_t cost_up = 0;
        for (uint32_t x = 0; x < w; x++) {
            const uint8_t d = (uint8_t)(row[x] - up[x]);
            up_row[x] = d;
            cost_up += magnitude(d);
        }
        if (cost_up < cost_sub) {
            dst[0] = 2;
            memcpy(dst + 1, up_row, w);
        }
    }
}

/* The baseline x86-64 target (SSE2) gets scalar code at -O2; an AVX2 copy,
 * vectorized, is chosen at run time where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#if defined(__clang__)
#define IH_PNG_AVX2_FN __attribute__((target("avx2")))
#else
#define IH_PNG_AVX2_FN __attribute__((target("avx2"), optimize("O3")))
#endif
IH_PNG_AVX2_FN static void filter_rows_avx2(const imghist_view *img, uint32_t row0,
                                            uint32_t rows, uint8_t *out, uint8_t *up_row)
{
    filter_rows_body(img, row0, rows, out, up_row);
}
#endif

static void filter_rows(const imghist_view *img, uint32_t row0, uint32_t rows, uint8_t *out,
                        uint8_t *up_row)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx2")) {
        filter_rows_avx2(img, row0, rows, out, up_row);
        return;
    }
#endif
    filter_rows_body(img, row0, rows, out, up_row);
}

/*
 * in[0..n) as raw deflate with zlib's level 1 and Z_RLE (OpenCV's setting),
 * into a new *out; a piece that is not the last ends in a full flush.
 * Returns 0, 1 when out of memory, 2 when zlib fails.
 */
static int zlib_piece(const uint8_t *in, size_t n, int last, uint8_t **out, size_t *out_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_RLE) != Z_OK) {
        return 1;
    }
    const size_t cap = deflateBound(&z, (uLong)n) + 16; /* + the flush's empty block */
    uint8_t *buf = malloc(cap);
    int rc = 1;
    if (buf != NULL) {
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)n;
        z.next_out = buf;
        z.avail_out = (uInt)cap;
        const int zrc = deflate(&z, last ? Z_FINISH : Z_FULL_FLUSH);
        rc = (last ? zrc == Z_STREAM_END : zrc == Z_OK && z.avail_in == 0) ? 0 : 2;
    }
    if (rc == 0) {
        *out = buf;
        *out_len = cap - z.avail_out;
    } else {
        free(buf);
    }
    deflateEnd(&z);
    return rc;
}

#if IH_HAVE_ISAL
/* As zlib_piece, with ISA-L's level 1. Its output is not bounded ahead
 * (it has no bound function), so the buffer grows when it fills. */
static int isal_piece(const uint8_t *in, size_t n, int last, uint8_t **out, size_t *out_len)
{
    /* The level's buffer holds its hash table and the block's tokens: the
     * smaller size gave the same or smaller output on small images. */
    const size_t level_buf_size = n <= ((size_t)1 << 20) ? ISAL_DEF_LVL1_SMALL
                                                         : ISAL_DEF_LVL1_DEFAULT;
    size_t cap = n + n / 16 + 4096;
    /* Zeroed: ISA-L does not clear all of its hash table for a short input,
     * and stale entries, though checked, would make the bytes written vary
     * from run to run. */
    uint8_t *level_buf = calloc(1, level_buf_size);
    uint8_t *buf = malloc(cap);
    int rc = 1;
    if (level_buf == NULL || buf == NULL || cap > UINT32_MAX) {
        goto done;
    }
    struct isal_zstream s;
    isal_deflate_init(&s);
    s.level = 1;
    s.level_buf = level_buf;
    s.level_buf_size = (uint32_t)level_buf_size;
    s.gzip_flag = IGZIP_DEFLATE;
    s.end_of_stream = last ? 1 : 0;
    s.flush = last ? NO_FLUSH : FULL_FLUSH;
    s.next_in = (uint8_t *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = buf;
    s.avail_out = (uint32_t)cap;
    for (;;) {
        if (isal_deflate(&s) != COMP_OK) {
            rc = 2;
            goto done;
        }
        const int complete = last ? s.internal_state.state == ZSTATE_END
                                  : s.avail_in == 0 && s.avail_out > 0;
        if (complete) {
            break;
        }
        if (s.avail_out > 0 || cap > UINT32_MAX / 2) {
            rc = 2; /* no progress with room left: not expected of ISA-L */
            goto done;
        }
        uint8_t *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            goto done;
        }
        buf = bigger;
        s.next_out = buf + s.total_out;
        s.avail_out = (uint32_t)(cap * 2 - s.total_out);
        cap *= 2;
    }
    *out = buf;
    *out_len = s.total_out;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    free(level_buf);
    return rc;
}
#endif

/* Filter the band's rows and deflate them. */
static void compress_band(band *b)
{
    const uint32_t w = b->img->width;
    const size_t n = ((size_t)w + 1) * b->rows;
    uint8_t *filtered = malloc(n);
    uint8_t *up_row = malloc(w);
    if (filtered == NULL || up_row == NULL) {
        b->failed = 1;
        goto done;
    }
    const uint64_t t0 = ih_now_ns();
    filter_rows(b->img, b->row0, b->rows, filtered, up_row);
    const uint64_t t1 = ih_now_ns();
#if IH_HAVE_ISAL
    b->adler = isal_adler32(1, filtered, n);
    if (n < SMALL_INPUT) {
        /* ISA-L's stream for a small input varies from one process to the
         * next (a valid stream of the same rows each time; the same bytes
         * every time with address-space randomisation off), and a PNG's
         * bytes should not: zlib's are the same, and at this size take
         * microseconds either way. */
        b->failed = zlib_piece(filtered, n, b->last, &b->out, &b->out_len);
    } else {
        b->failed = isal_piece(filtered, n, b->last, &b->out, &b->out_len);
    }
    /* Images of large flat areas deflate to under a sixteenth with ISA-L,
     * and to much less with zlib's run-length strategy, which such images
     * also make fast (a 24 MP painting: ISA-L 1.44 times OpenCV's size,
     * Z_RLE 0.93). */
    uint8_t *rle = NULL;
    size_t rle_len = 0;
    if (b->failed == 0 && n >= SMALL_INPUT && b->out_len < n / 16 &&
        zlib_piece(filtered, n, b->last, &rle, &rle_len) == 0) {
        if (rle_len < b->out_len) {
            free(b->out);
            b->out = rle;
            b->out_len = rle_len;
        } else {
            free(rle);
        }
    }
#else
    b->adler = (uint32_t)adler32(1L, filtered, (uInt)n);
    if (b->row0 == 0 && b->last) { /* the whole image: libdeflate, one piece */
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
        const size_t cap = c != NULL ? libdeflate_deflate_compress_bound(c, n) : 0;
        b->out = c != NULL ? malloc(cap) : NULL;
        b->failed = b->out == NULL ? 1 : 0;
        if (b->out != NULL) {
            b->out_len = libdeflate_deflate_compress(c, filtered, n, b->out, cap);
            b->failed = b->out_len == 0 ? 2 : 0;
        }
        libdeflate_free_compressor(c);
    } else {
        b->failed = zlib_piece(filtered, n, b->last, &b->out, &b->out_len);
    }
#endif
    b->filter_ns = t1 - t0;
    b->deflate_ns = ih_now_ns() - t1;
done:
    free(up_row);
    free(filtered);
}

/* One task of ih_parallel_for: band number `task` of the array. */
static void compress_task(void *bands, size_t task)
{
    compress_band(&((band *)bands)[task]);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One chunk: length, type, data, CRC over type and data. */
static int write_chunk(ih_png_write_fn write, void *arg, const char *type, const uint8_t *data,
                       size_t n)
{
    uint8_t head[8], tail[4];
    put32(head, (uint32_t)n);
    memcpy(head + 4, type, 4);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), head + 4, 4);
    if (n > 0) {
        crc = crc32(crc, data, (uInt)n);
    }
    put32(tail, (uint32_t)crc);
    return write(arg, head, 8) != 0 || (n > 0 && write(arg, data, n) != 0) ||
                   write(arg, tail, 4) != 0
               ? -1
               : 0;
}

/*
 * The file around deflated bands: signature, IHDR, the zlib header (CMF
 * 0x78, a 32 KiB window; FLG 0x01, fastest, with its check bits), each band
 * as an IDAT chunk with the Adler-32 sum after the last, IEND. Returns 0 or
 * -1 with a reason in msg.
 */
static int write_png_file(const imghist_view *img, band *bands, size_t count, uint32_t adler,
                          ih_png_write_fn write, void *arg, char *msg, size_t msglen)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const uint8_t zhead[2] = {0x78, 0x01};
    uint8_t ihdr[13], sum[4];
    put32(ihdr, img->width);
    put32(ihdr + 4, img->height);
    ihdr[8] = 8;  /* bits per sample */
    ihdr[9] = 0;  /* gray */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering (the method; each row names its filter) */
    ihdr[12] = 0; /* not interlaced */
    put32(sum, adler);
    errno = 0;
    int bad = write(arg, signature, 8) != 0 || write_chunk(write, arg, "IHDR", ihdr, 13) != 0 ||
              write_chunk(write, arg, "IDAT", zhead, 2) != 0;
    for (size_t i = 0; !bad && i < count; i++) {
        bad = write_chunk(write, arg, "IDAT", bands[i].out, bands[i].out_len) != 0;
    }
    bad = bad || write_chunk(write, arg, "IDAT", sum, 4) != 0 ||
          write_chunk(write, arg, "IEND", NULL, 0) != 0;
    if (bad) {
        snprintf(msg, msglen, "%s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int ih_png_write_u8(const imghist_view *img, unsigned threads, ih_png_write_fn write, void *arg,
                    ih_png_times *times, char *msg, size_t msglen)
{
    const size_t row_bytes = (size_t)img->width + 1;
    const int banded = (size_t)img->width * img->height >= IH_PNG_BAND_MIN_BYTES;
    uint32_t rows_per_band = banded ? (uint32_t)(BAND_BYTES / row_bytes) : img->height;
    if (rows_per_band == 0) {
        rows_per_band = 1;
    }
    /* A piece's input and output must fit the deflaters' 32-bit counters. */
    if (row_bytes * rows_per_band > UINT32_MAX / 4) {
        snprintf(msg, msglen, "rows too long for PNG output");
        return -1;
    }
    const size_t count = (img->height + (size_t)rows_per_band - 1) / rows_per_band;
    band *bands = calloc(count, sizeof *bands);
    if (bands == NULL) {
        snprintf(msg, msglen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        bands[i].img = img;
        bands[i].row0 = (uint32_t)(i * rows_per_band);
        bands[i].rows = img->height - bands[i].row0 < rows_per_band ? img->height - bands[i].row0
                                                                     : rows_per_band;
        bands[i].last = i + 1 == count;
    }
    const uint64_t t0 = ih_now_ns();
    if (count == 1) {
        compress_band(&bands[0]);
    } else {
        ih_parallel_for(count, threads, compress_task, bands);
    }
    const uint64_t wall = ih_now_ns() - t0;

    int rc = 0;
    uLong adler = adler32(0L, Z_NULL, 0);
    uint64_t filter_ns = 0, deflate_ns = 0;
    for (size_t i = 0; i < count; i++) {
        if (bands[i].failed) {
            snprintf(msg, msglen, bands[i].failed == 1 ? "out of memory"
                                                       : "the deflater failed on the image");
            rc = -1;
            break;
        }
        adler = adler32_combine(adler, bands[i].adler,
                                (z_off_t)((size_t)bands[i].rows * row_bytes));
        filter_ns += bands[i].filter_ns;
        deflate_ns += bands[i].deflate_ns;
    }
    if (times != NULL && filter_ns + deflate_ns > 0) {
        /* The call's wall time, split as the bands' own times split. */
        const uint64_t f = (uint64_t)((double)wall * (double)filter_ns /
                                      (double)(filter_ns + deflate_ns));
        times->filter_ns += f;
        times->deflate_ns += wall - f;
    }
    if (rc == 0) {
        rc = write_png_file(img, bands, count, (uint32_t)adler, write, arg, msg, msglen);
    }
    for (size_t i = 0; i < count; i++) {
        free(bands[i].out);
    }
    free(bands);
    return rc;
}
