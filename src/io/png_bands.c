/*
 * Why bands: deflating a large image at level 1 takes most of an
 * equalization's time, and zlib has no threads. A full flush ends a band on a
 * byte boundary with no reference to earlier data, so bands compressed apart
 * and written one after the other form one valid stream (pigz's method). With
 * Z_RLE, whose matches only reach one byte back, cutting costs next to nothing
 * in size (a few bytes per band).
 */
#define _POSIX_C_SOURCE 200809L
#include "png_bands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "parallel.h"

#define BAND_BYTES ((size_t)4 << 20)

typedef struct band {
    const imghist_view *img;
    uint32_t row0, rows;
    int last;
    uint8_t *out; /* the deflated band */
    size_t out_len;
    uLong adler;  /* of the filtered rows */
    int failed;
} band;

/* Filter the band's rows with Sub (filter byte 1) and deflate them. */
static void compress_band(band *b)
{
    const uint32_t w = b->img->width;
    const size_t row_bytes = (size_t)w + 1;
    uint8_t *filtered = malloc(row_bytes * b->rows);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (filtered == NULL || deflateInit2(&z, 1, Z_DEFLATED, -15, 8, Z_RLE) != Z_OK) {
        free(filtered);
        b->failed = 1;
        return;
    }
    for (uint32_t y = 0; y < b->rows; y++) {
        const uint8_t *src = (const uint8_t *)b->img->data + (size_t)(b->row0 + y) * b->img->pitch;
        uint8_t *dst = filtered + (size_t)y * row_bytes;
        dst[0] = 1;
        dst[1] = src[0];
        for (uint32_t x = 1; x < w; x++) {
            dst[1 + x] = (uint8_t)(src[x] - src[x - 1]);
        }
    }
    const size_t in_len = row_bytes * b->rows;
    b->adler = adler32(adler32(0L, Z_NULL, 0), filtered, (uInt)in_len);
    const size_t cap = deflateBound(&z, (uLong)in_len) + 16; /* + the flush's empty block */
    b->out = malloc(cap);
    if (b->out == NULL) {
        b->failed = 1;
    } else {
        z.next_in = filtered;
        z.avail_in = (uInt)in_len;
        z.next_out = b->out;
        z.avail_out = (uInt)cap;
        const int rc = deflate(&z, b->last ? Z_FINISH : Z_FULL_FLUSH);
        b->failed = b->last ? rc != Z_STREAM_END : (rc != Z_OK || z.avail_in != 0);
        b->out_len = cap - z.avail_out;
    }
    deflateEnd(&z);
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
 * The file around deflated bands: signature, IHDR, the zlib header (level 1:
 * CMF 0x78, a 32 KiB window; FLG 0x01, fastest, with its check bits), each
 * band as an IDAT chunk with the Adler-32 sum after the last, IEND. Returns 0
 * or -1 with a reason in msg.
 */
static int write_png_file(const imghist_view *img, band *bands, size_t count, uLong adler,
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
    put32(sum, (uint32_t)adler);
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

int ih_png_write_bands(const imghist_view *img, unsigned threads, ih_png_write_fn write,
                       void *arg, char *msg, size_t msglen)
{
    const size_t row_bytes = (size_t)img->width + 1;
    uint32_t rows_per_band = (uint32_t)(BAND_BYTES / row_bytes);
    if (rows_per_band == 0) {
        rows_per_band = 1;
    }
    /* A band's input and output must fit zlib's 32-bit counters. */
    if (row_bytes * rows_per_band > UINT32_MAX / 2) {
        snprintf(msg, msglen, "rows too long for banded PNG output");
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
    ih_parallel_for(count, threads, compress_task, bands);

    int rc = 0;
    uLong adler = adler32(0L, Z_NULL, 0);
    for (size_t i = 0; i < count; i++) {
        if (bands[i].failed) {
            snprintf(msg, msglen, "out of memory or zlib error compressing the image");
            rc = -1;
            break;
        }
        adler = adler32_combine(adler, bands[i].adler,
                                (z_off_t)((size_t)bands[i].rows * row_bytes));
    }
    if (rc == 0) {
        rc = write_png_file(img, bands, count, adler, write, arg, msg, msglen);
    }
    for (size_t i = 0; i < count; i++) {
        free(bands[i].out);
    }
    free(bands);
    return rc;
}

int ih_png_write_deflate(const imghist_view *img, ih_png_write_fn write, void *arg, char *msg,
                         size_t msglen)
{
    const uint32_t w = img->width;
    const size_t row_bytes = (size_t)w + 1;
    const size_t n = row_bytes * img->height;
    uint8_t *filtered = malloc(n);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
    band one;
    memset(&one, 0, sizeof one);
    int rc = -1;
    if (filtered == NULL || c == NULL) {
        snprintf(msg, msglen, "out of memory");
        goto done;
    }
    /* Each row Sub or Up, whichever leaves the smaller sum of magnitudes
     * (the PNG specification's heuristic, over two filters). */
    for (uint32_t y = 0; y < img->height; y++) {
        const uint8_t *row = (const uint8_t *)img->data + (size_t)y * img->pitch;
        const uint8_t *up = y > 0 ? row - img->pitch : NULL;
        uint8_t *dst = filtered + (size_t)y * row_bytes;
        uint32_t cost_sub = 0, cost_up = 0;
        for (uint32_t x = 0; x < w; x++) {
            const int8_t s = (int8_t)(row[x] - (x > 0 ? row[x - 1] : 0));
            const int8_t u = (int8_t)(row[x] - (up != NULL ? up[x] : 0));
            cost_sub += (uint32_t)(s < 0 ? -s : s);
            cost_up += (uint32_t)(u < 0 ? -u : u);
        }
        if (up != NULL && cost_up < cost_sub) {
            dst[0] = 2;
            for (uint32_t x = 0; x < w; x++) {
                dst[1 + x] = (uint8_t)(row[x] - up[x]);
            }
        } else {
            dst[0] = 1;
            dst[1] = row[0];
            for (uint32_t x = 1; x < w; x++) {
                dst[1 + x] = (uint8_t)(row[x] - row[x - 1]);
            }
        }
    }
    const size_t cap = libdeflate_deflate_compress_bound(c, n);
    one.out = malloc(cap);
    if (one.out == NULL) {
        snprintf(msg, msglen, "out of memory");
        goto done;
    }
    one.out_len = libdeflate_deflate_compress(c, filtered, n, one.out, cap);
    if (one.out_len == 0) {
        snprintf(msg, msglen, "libdeflate could not compress the image");
        goto done;
    }
    rc = write_png_file(img, &one, 1, libdeflate_adler32(1, filtered, n), write, arg, msg,
                        msglen);
done:
    free(one.out);
    free(filtered);
    libdeflate_free_compressor(c);
    return rc;
}
