/*
 * PNG codec measurements for bench/PNG-CODECS.md: encode 8-bit gray images
 * with libpng at zlib levels 1..6, three strategies and five filter choices
 * (time, size, pixels checked by decoding), and decode PNGs with libpng (as
 * src/io/decode_png.c does) and with libspng.
 * usage: png_codecs encode IMAGE.pgm REPS   |   png_codecs decode FILE.png REPS
 *        png_codecs focus IMAGE.pgm REPS (the candidates, interleaved rep by rep)
 * build: cc -O2 png_codecs.c -o png_codecs $(pkg-config --cflags --libs libpng spng zlib)
 */
#define _POSIX_C_SOURCE 200809L
#include <png.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

typedef struct { unsigned char *p; size_t len, cap; } buf;

static void put(png_structp png, png_bytep d, png_size_t n)
{
    buf *b = png_get_io_ptr(png);
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, d, n);
    b->len += n;
}
static void flush(png_structp png) { (void)png; }

static unsigned char *read_pgm(const char *path, unsigned *w, unsigned *h)
{
    FILE *f = fopen(path, "rb");
    int maxv;
    if (!f || fscanf(f, "P5 %u %u %d", w, h, &maxv) != 3 || fgetc(f) == EOF) exit(1);
    unsigned char *p = malloc((size_t)*w * *h);
    if (fread(p, 1, (size_t)*w * *h, f) != (size_t)*w * *h) exit(1);
    fclose(f);
    return p;
}

static void encode(const unsigned char *img, unsigned w, unsigned h, int level, int strategy,
                   int filters, buf *out)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    out->len = 0;
    png_set_write_fn(png, out, put, flush);
    png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
    png_set_compression_level(png, level);
    png_set_compression_strategy(png, strategy);
    png_write_info(png, info);
    for (unsigned y = 0; y < h; y++) png_write_row(png, img + (size_t)y * w);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
}

typedef struct { const unsigned char *p; size_t len, pos; } src;
static void get(png_structp png, png_bytep d, png_size_t n)
{
    src *s = png_get_io_ptr(png);
    if (n > s->len - s->pos) png_error(png, "short");
    memcpy(d, s->p + s->pos, n);
    s->pos += n;
}

/* libpng, rows into one buffer, as imghist reads an 8-bit gray PNG. */
static unsigned char *decode_libpng(const unsigned char *p, size_t n, unsigned *w, unsigned *h)
{
    src s = {p, n, 0};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    png_set_read_fn(png, &s, get);
    png_read_info(png, info);
    *w = png_get_image_width(png, info);
    *h = png_get_image_height(png, info);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    unsigned char *out = malloc((size_t)*w * *h);
    png_bytep *rows = malloc(sizeof(png_bytep) * *h);
    for (unsigned y = 0; y < *h; y++) rows[y] = out + (size_t)y * *w;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    return out;
}

static unsigned char *decode_spng(const unsigned char *p, size_t n, unsigned *w, unsigned *h)
{
    spng_ctx *ctx = spng_ctx_new(0);
    spng_set_png_buffer(ctx, p, n);
    struct spng_ihdr ihdr;
    if (spng_get_ihdr(ctx, &ihdr)) exit(3);
    *w = ihdr.width;
    *h = ihdr.height;
    size_t size;
    /* SPNG_FMT_G8 is the 8-bit gray of an 8-bit (or lower) gray file. */
    if (spng_decoded_image_size(ctx, SPNG_FMT_G8, &size)) exit(3);
    unsigned char *out = malloc(size);
    if (spng_decode_image(ctx, out, size, SPNG_FMT_G8, 0)) exit(3);
    spng_ctx_free(ctx);
    return out;
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    const int reps = atoi(argv[3]);
    double *t = malloc(sizeof(double) * reps);
    if (strcmp(argv[1], "encode") == 0) {
        unsigned w, h;
        unsigned char *img = read_pgm(argv[2], &w, &h);
        static const struct { int v; const char *n; } strategies[] = {
            {Z_DEFAULT_STRATEGY, "default"}, {Z_FILTERED, "filtered"}, {Z_RLE, "rle"}};
        static const struct { int v; const char *n; } filters[] = {
            {PNG_ALL_FILTERS, "adaptive"}, {PNG_FILTER_NONE, "none"}, {PNG_FILTER_SUB, "sub"},
            {PNG_FILTER_UP, "up"}, {PNG_FILTER_PAETH, "paeth"}};
        buf out = {0};
        for (int level = 1; level <= 6; level++) {
            for (int s = 0; s < 3; s++) {
                for (int f = 0; f < 5; f++) {
                    for (int r = 0; r < reps; r++) {
                        const double t0 = now();
                        encode(img, w, h, level, strategies[s].v, filters[f].v, &out);
                        t[r] = now() - t0;
                    }
                    unsigned dw, dh;
                    unsigned char *back = decode_libpng(out.p, out.len, &dw, &dh);
                    const int same = dw == w && dh == h && memcmp(back, img, (size_t)w * h) == 0;
                    free(back);
                    printf("%d %s %s %zu %.3f %s\n", level, strategies[s].n, filters[f].n, out.len,
                           median(t, reps) * 1e3, same ? "same" : "DIFFERENT");
                    fflush(stdout);
                }
            }
        }
        return 0;
    }
    if (strcmp(argv[1], "focus") == 0) {
        unsigned w, h;
        unsigned char *img = read_pgm(argv[2], &w, &h);
        static const struct { int level, strategy, filters; const char *n; } c[] = {
            {6, Z_DEFAULT_STRATEGY, PNG_ALL_FILTERS, "6 default adaptive"},
            {1, Z_RLE, PNG_FILTER_SUB, "1 rle sub (OpenCV 4.6)"},
            {1, Z_RLE, PNG_FILTER_UP, "1 rle up"},
            {1, Z_RLE, PNG_FILTER_NONE, "1 rle none"},
            {1, Z_DEFAULT_STRATEGY, PNG_FILTER_NONE, "1 default none"}};
        enum { N = sizeof c / sizeof c[0] };
        double tt[N][64];
        size_t size[N];
        buf out = {0};
        for (int r = 0; r < reps; r++) {
            for (int i = 0; i < N; i++) {
                const double t0 = now();
                encode(img, w, h, c[i].level, c[i].strategy, c[i].filters, &out);
                tt[i][r] = now() - t0;
                size[i] = out.len;
            }
        }
        for (int i = 0; i < N; i++) {
            printf("%s|%zu|%.3f\n", c[i].n, size[i], median(tt[i], reps) * 1e3);
        }
        return 0;
    }
    /* decode */
    FILE *f = fopen(argv[2], "rb");
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    rewind(f);
    unsigned char *p = malloc(n);
    if (fread(p, 1, n, f) != n) return 1;
    fclose(f);
    unsigned w = 0, h = 0, w2 = 0, h2 = 0;
    unsigned char *a = NULL, *b = NULL;
    double tl[64], ts[64];
    for (int r = 0; r < reps; r++) { /* interleaved, so both see the same machine state */
        double t0 = now();
        free(a);
        a = decode_libpng(p, n, &w, &h);
        tl[r] = now() - t0;
        t0 = now();
        free(b);
        b = decode_spng(p, n, &w2, &h2);
        ts[r] = now() - t0;
    }
    printf("%.3f %.3f %s\n", median(tl, reps) * 1e3, median(ts, reps) * 1e3,
           w == w2 && h == h2 && memcmp(a, b, (size_t)w * h) == 0 ? "same" : "DIFFERENT");
    return 0;
}
