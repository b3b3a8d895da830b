#define _GNU_SOURCE
#include "test_util.h"

#include <ftw.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void tu_seed(tu_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t tu_next(tu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t tu_below(tu_rng *r, uint32_t n)
{
    return (uint32_t)((tu_next(r) >> 32) * (uint64_t)n >> 32);
}

uint64_t tu_fresh_seed(const char *who)
{
    const char *env = getenv("IMGHIST_TEST_SEED");
    uint64_t seed;
    if (env != NULL && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    fprintf(stderr, "%s: seed %llu (replay with IMGHIST_TEST_SEED=%llu)\n", who,
            (unsigned long long)seed, (unsigned long long)seed);
    return seed;
}

void tu_naive_hist(const uint8_t *p, size_t pitch, uint32_t w, uint32_t h, uint64_t hist[256])
{
    memset(hist, 0, 256 * sizeof hist[0]);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            hist[p[(size_t)y * pitch + x]]++;
        }
    }
}

struct membuf {
    uint8_t *data;
    size_t len, cap;
    int failed;
};

static void mem_write(png_structp png, png_bytep data, png_size_t len)
{
    struct membuf *m = png_get_io_ptr(png);
    if (m->len + len > m->cap) {
        size_t cap = (m->cap + len) * 2;
        uint8_t *d = realloc(m->data, cap);
        if (d == NULL) {
            m->failed = 1;
            return;
        }
        m->data = d;
        m->cap = cap;
    }
    memcpy(m->data + m->len, data, len);
    m->len += len;
}

static void mem_flush(png_structp png)
{
    (void)png;
}

uint8_t *tu_png_encode(uint32_t w, uint32_t h, int color_type, int bit_depth, const void *samples,
                       const uint8_t *palette, int npal, size_t *size)
{
    volatile int ch = 1;
    switch (color_type) {
    case PNG_COLOR_TYPE_GRAY_ALPHA: ch = 2; break;
    case PNG_COLOR_TYPE_RGB: ch = 3; break;
    case PNG_COLOR_TYPE_RGB_ALPHA: ch = 4; break;
    default: ch = 1; break;
    }
    struct membuf m = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    const size_t bps = bit_depth == 16 ? 2 : 1;
    uint8_t *row = malloc((size_t)w * ch * bps);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(row);
        free(m.data);
        return NULL;
    }
    png_set_write_fn(png, &m, mem_write, mem_flush);
    png_set_IHDR(png, info, w, h, bit_depth, color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[256];
        for (int i = 0; i < npal; i++) {
            pal[i].red = palette[3 * i];
            pal[i].green = palette[3 * i + 1];
            pal[i].blue = palette[3 * i + 2];
        }
        png_set_PLTE(png, info, pal, npal);
    }
    png_write_info(png, info);
    for (uint32_t y = 0; y < h; y++) {
        const size_t n = (size_t)w * ch;
        if (bit_depth == 16) {
            const uint16_t *s = (const uint16_t *)samples + (size_t)y * n;
            for (size_t i = 0; i < n; i++) {
                row[2 * i] = (uint8_t)(s[i] >> 8); /* PNG is big-endian */
                row[2 * i + 1] = (uint8_t)s[i];
            }
        } else {
            memcpy(row, (const uint8_t *)samples + (size_t)y * n, n);
        }
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(row);
    if (m.failed) {
        free(m.data);
        return NULL;
    }
    *size = m.len;
    return m.data;
}

uint8_t *tu_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            uint8_t *b = realloc(buf, cap);
            if (b == NULL) {
                free(buf);
                buf = NULL;
            }
            buf = b;
        }
    }
    fclose(f);
    *size = len;
    return buf;
}

int tu_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        return -1;
    }
    int ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

char *tu_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/imghist-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

void tu_remove_tree(const char *dir)
{
    if (dir != NULL) {
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    }
}

int tu_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
