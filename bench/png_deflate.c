/*
 * PNG deflate measurements for bench/results/png-deflate.md: filter an 8-bit
 * gray image (PGM) with each PNG filter choice, deflate the filtered rows
 * with zlib (level 1, Z_RLE: OpenCV's imwrite setting), libdeflate (level 1)
 * and ISA-L (levels 0 to 3), check that every stream inflates back to the
 * filtered rows, and print one line per pair: bytes and the best-of-REPS
 * milliseconds of the filter and of the deflate.
 * usage: png_deflate IMAGE.pgm|IMAGE.png REPS
 *        png_deflate inflate IMAGE.pgm|IMAGE.png REPS (zlib, libdeflate and ISA-L
 *        inflating OpenCV's and imghist's streams; libpng decoding a PNG)
 * build: cc -O2 png_deflate.c -o png_deflate \
 *        $(pkg-config --cflags --libs zlib libdeflate libisal libpng)
 */
#define _POSIX_C_SOURCE 200809L
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The fastest of n runs: on a shared machine, the run least disturbed. */
static double best(const double *t, int n)
{
    double m = t[0];
    for (int i = 1; i < n; i++) {
        m = t[i] < m ? t[i] : m;
    }
    return m;
}

/* An 8-bit gray image from a binary PGM, or from a PNG (libpng's
 * simplified reader, which converts any PNG to 8-bit gray). */
static uint8_t *read_gray(const char *path, unsigned *w, unsigned *h)
{
    const size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".png") == 0) {
        png_image im;
        memset(&im, 0, sizeof im);
        im.version = PNG_IMAGE_VERSION;
        if (!png_image_begin_read_from_file(&im, path)) {
            fprintf(stderr, "%s: %s\n", path, im.message);
            exit(1);
        }
        im.format = PNG_FORMAT_GRAY;
        uint8_t *p = malloc(PNG_IMAGE_SIZE(im));
        if (p == NULL || !png_image_finish_read(&im, NULL, p, 0, NULL)) {
            fprintf(stderr, "%s: %s\n", path, im.message);
            exit(1);
        }
        *w = im.width;
        *h = im.height;
        return p;
    }
    FILE *f = fopen(path, "rb");
    int maxv;
    if (!f || fscanf(f, "P5 %u %u %d", w, h, &maxv) != 3 || fgetc(f) == EOF) {
        fprintf(stderr, "%s: not a binary PGM\n", path);
        exit(1);
    }
    const size_t n = (size_t)*w * *h;
    uint8_t *p = malloc(n);
    if (fread(p, 1, n, f) != n) {
        exit(1);
    }
    fclose(f);
    return p;
}

enum { F_NONE, F_SUB, F_UP, F_SUB_UP, F_PAETH, F_COUNT };
static const char *const filter_names[F_COUNT] = {"none", "Sub", "Up", "Sub-or-Up", "Paeth"};

static uint8_t paeth(int a, int b, int c)
{
    const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

static void filter_rows(const uint8_t *img, unsigned w, unsigned h, int how, uint8_t *out)
{
    for (unsigned y = 0; y < h; y++) {
        const uint8_t *row = img + (size_t)y * w, *up = y ? row - w : NULL;
        uint8_t *d = out + (size_t)y * (w + 1);
        int f = how;
        if (how == F_SUB_UP) {
            uint32_t cs = 0, cu = 0;
            for (unsigned x = 0; x < w; x++) {
                const int8_t s = (int8_t)(row[x] - (x ? row[x - 1] : 0));
                const int8_t u = (int8_t)(row[x] - (up ? up[x] : 0));
                cs += (uint32_t)(s < 0 ? -s : s);
                cu += (uint32_t)(u < 0 ? -u : u);
            }
            f = up && cu < cs ? F_UP : F_SUB;
        }
        d[0] = (uint8_t)(f == F_NONE ? 0 : f == F_SUB ? 1 : f == F_UP ? 2 : 4);
        for (unsigned x = 0; x < w; x++) {
            const int a = x ? row[x - 1] : 0, b = up ? up[x] : 0, c = x && up ? up[x - 1] : 0;
            const int pred = f == F_NONE ? 0 : f == F_SUB ? a : f == F_UP ? b : paeth(a, b, c);
            d[1 + x] = (uint8_t)(row[x] - pred);
        }
    }
}

enum { D_ZLIB_RLE, D_LIBDEFLATE1, D_ISAL0, D_ISAL1, D_ISAL2, D_ISAL3, D_COUNT };
static const char *const deflater_names[D_COUNT] = {"zlib-1-RLE",  "libdeflate-1", "isal-0",
                                                    "isal-1",      "isal-2",       "isal-3"};

/* A zlib stream of in[0..n) into out (cap bytes); returns its length, 0 on failure. */
static size_t deflate_with(int d, const uint8_t *in, size_t n, uint8_t *out, size_t cap,
                           uint8_t *level_buf, size_t level_buf_size)
{
    if (d == D_ZLIB_RLE) {
        z_stream z;
        memset(&z, 0, sizeof z);
        deflateInit2(&z, 1, Z_DEFLATED, 15, 8, Z_RLE);
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)n;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        const int rc = deflate(&z, Z_FINISH);
        deflateEnd(&z);
        return rc == Z_STREAM_END ? z.total_out : 0;
    }
    if (d == D_LIBDEFLATE1) {
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
        const size_t len = libdeflate_zlib_compress(c, in, n, out, cap);
        libdeflate_free_compressor(c);
        return len;
    }
    struct isal_zstream s;
    isal_deflate_init(&s);
    s.level = (uint32_t)(d - D_ISAL0);
    s.level_buf = level_buf;
    s.level_buf_size = (uint32_t)level_buf_size;
    s.gzip_flag = IGZIP_ZLIB;
    s.end_of_stream = 1;
    s.flush = NO_FLUSH;
    s.next_in = (uint8_t *)in;
    s.avail_in = (uint32_t)n;
    s.next_out = out;
    s.avail_out = (uint32_t)cap;
    const int rc = isal_deflate(&s);
    return rc == COMP_OK && s.internal_state.state == ZSTATE_END ? s.total_out : 0;
}

static int inflates_to(const uint8_t *z, size_t zlen, const uint8_t *want, size_t n, uint8_t *tmp)
{
    uLongf got = (uLongf)n;
    return uncompress(tmp, &got, z, (uLong)zlen) == Z_OK && got == n && memcmp(tmp, want, n) == 0;
}

static int encode_table(const char *path, int reps)
{
    unsigned w, h;
    uint8_t *img = read_gray(path, &w, &h);
    const size_t n = (size_t)(w + 1) * h, cap = 2 * n + 65536;
    uint8_t *filtered = malloc(n), *out = malloc(cap), *tmp = malloc(n);
    const size_t lb_size = ISAL_DEF_LVL3_LARGE;
    uint8_t *lb = malloc(lb_size);
    double *t = malloc(sizeof *t * (size_t)reps);
    for (int f = 0; f < F_COUNT; f++) {
        for (int r = 0; r < reps; r++) {
            const double t0 = now();
            filter_rows(img, w, h, f, filtered);
            t[r] = now() - t0;
        }
        const double filter_ms = best(t, reps) * 1e3;
        for (int d = 0; d < D_COUNT; d++) {
            size_t len = 0;
            for (int r = 0; r < reps; r++) {
                const double t0 = now();
                len = deflate_with(d, filtered, n, out, cap, lb, lb_size);
                t[r] = now() - t0;
            }
            if (len == 0 || !inflates_to(out, len, filtered, n, tmp)) {
                fprintf(stderr, "%s: %s/%s does not round-trip\n", path, filter_names[f],
                        deflater_names[d]);
                continue;
            }
            printf("%s\t%u\t%u\t%s\t%s\t%zu\t%.2f\t%.2f\n", path, w, h, filter_names[f],
                   deflater_names[d], len, filter_ms, best(t, reps) * 1e3);
        }
    }
    return 0;
}

/*
 * A PNG reader's inflate: the stream OpenCV's imwrite makes (Sub, zlib level
 * 1 Z_RLE) and the one imghist writes (Sub-or-Up, ISA-L level 1), each
 * inflated whole by zlib (libpng's inflater), libdeflate and ISA-L; and,
 * for a PNG file, libpng's whole decode of it (inflate, unfiltering, rows)
 * to show the share inflating has in a read.
 */
static int inflate_table(const char *path, int reps)
{
    unsigned w, h;
    uint8_t *img = read_gray(path, &w, &h);
    const size_t n = (size_t)(w + 1) * h, cap = 2 * n + 65536;
    uint8_t *z = malloc(cap), *tmp = malloc(n), *lb = malloc(ISAL_DEF_LVL1_LARGE);
    uint8_t *filtered[2] = {malloc(n), malloc(n)};
    double *t = malloc(sizeof *t * (size_t)reps);
    static const char *const streams[2] = {"OpenCV-Sub-zlib1RLE", "imghist-SubUp-isal1"};
    static const char *const names[3] = {"zlib", "libdeflate", "isal"};
    filter_rows(img, w, h, F_SUB, filtered[0]);
    filter_rows(img, w, h, F_SUB_UP, filtered[1]);
    for (int sidx = 0; sidx < 2; sidx++) {
        const size_t zlen = deflate_with(sidx == 0 ? D_ZLIB_RLE : D_ISAL1, filtered[sidx], n, z,
                                         cap, lb, ISAL_DEF_LVL1_LARGE);
        for (int k = 0; k < 3; k++) {
            int ok = 1;
            for (int r = 0; r < reps; r++) {
                memset(tmp, 0, n);
                const double t0 = now();
                if (k == 0) {
                    uLongf got = (uLongf)n;
                    ok = uncompress(tmp, &got, z, (uLong)zlen) == Z_OK && got == n;
                } else if (k == 1) {
                    struct libdeflate_decompressor *dc = libdeflate_alloc_decompressor();
                    ok = libdeflate_zlib_decompress(dc, z, zlen, tmp, n, NULL) ==
                         LIBDEFLATE_SUCCESS;
                    libdeflate_free_decompressor(dc);
                } else {
                    struct inflate_state st;
                    isal_inflate_init(&st);
                    st.crc_flag = ISAL_ZLIB;
                    st.next_in = z;
                    st.avail_in = (uint32_t)zlen;
                    st.next_out = tmp;
                    st.avail_out = (uint32_t)n;
                    ok = isal_inflate(&st) == ISAL_DECOMP_OK && st.total_out == n;
                }
                t[r] = now() - t0;
                ok = ok && memcmp(tmp, filtered[sidx], n) == 0;
                if (!ok) {
                    fprintf(stderr, "%s: %s inflate failed\n", path, names[k]);
                    return 1;
                }
            }
            printf("%s\t%u\t%u\tinflate:%s\t%s\t%zu\t0\t%.2f\n", path, w, h, streams[sidx],
                   names[k], zlen, best(t, reps) * 1e3);
        }
    }
    const size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".png") == 0) {
        for (int r = 0; r < reps; r++) {
            const double t0 = now();
            unsigned w2, h2;
            free(read_gray(path, &w2, &h2));
            t[r] = now() - t0;
        }
        printf("%s\t%u\t%u\tdecode:file\tlibpng\t0\t0\t%.2f\n", path, w, h,
               best(t, reps) * 1e3);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "inflate") == 0) {
        return inflate_table(argv[2], atoi(argv[3]));
    }
    if (argc != 3) {
        fprintf(stderr, "usage: png_deflate [inflate] IMAGE.pgm REPS\n");
        return 2;
    }
    return encode_table(argv[1], atoi(argv[2]));
}
