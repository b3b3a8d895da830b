/* JPEG cases of every sampling layout and their raw planes (ycc_cases.h). */
#include "ycc_cases.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "decode.h"
#include "imghist.h"

/* Luma, Cb, Cr factors (a zero Cb h: one gray component). */
static const int layouts[][6] = {
    {1, 1, 1, 1, 1, 1}, /* 4:4:4 */
    {2, 1, 1, 1, 1, 1}, /* 4:2:2 */
    {2, 2, 1, 1, 1, 1}, /* 4:2:0 */
    {1, 2, 1, 1, 1, 1}, /* 4:4:0 */
    {4, 1, 1, 1, 1, 1}, /* 4:1:1 */
    {4, 2, 1, 1, 1, 1}, /* 4:1:0 */
    {2, 2, 2, 1, 2, 1}, /* chroma at half the vertical rate only */
    {2, 2, 1, 2, 1, 2}, /* chroma at half the horizontal rate only */
    {2, 2, 1, 1, 2, 2}, /* Cb subsampled, Cr not */
    {1, 1, 2, 2, 2, 2}, /* luma upsampled */
    {3, 1, 1, 1, 1, 1}, /* ratio 3 */
    {2, 1, 2, 1, 2, 1}, /* 4:4:4 at factor 2 */
    {1, 1, 0, 0, 0, 0}, /* gray */
    {2, 2, 0, 0, 0, 0}, /* gray, factor 2 */
};
static const int sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {4, 3}, {17, 13}, {33, 31}, {64, 48},
                               {5, 40}, {129, 67}};
enum { N_LAYOUTS = sizeof layouts / sizeof layouts[0], N_SIZES = sizeof sizes / sizeof sizes[0] };
/* Per layout and size: plain, with restart markers every 2 MCUs. */
enum { N_VARIANTS = 2 };

size_t ycc_case_count(void)
{
    return (size_t)N_LAYOUTS * N_SIZES * N_VARIANTS;
}

struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
};

static void jerr_exit(j_common_ptr cinfo)
{
    longjmp(((struct jerr *)cinfo->err)->jump, 1);
}

static void jerr_quiet(j_common_ptr cinfo, int level)
{
    (void)cinfo;
    (void)level;
}

/* Gradients, saturated patches and noise: clamping and edges both show. */
static uint8_t sample_at(uint32_t x, uint32_t y, int c, uint32_t seed)
{
    uint32_t n = (x * 73856093u) ^ (y * 19349663u) ^ ((uint32_t)c * 83492791u) ^ seed;
    n ^= n >> 13;
    n *= 0x5bd1e995u;
    n ^= n >> 15;
    const uint32_t patch = ((x / 7) + (y / 5) + (uint32_t)c) % 4;
    if (patch == 0) {
        return (uint8_t)((c == 0 ? 255 : 0) ^ (n & 7));
    }
    if (patch == 1) {
        return (uint8_t)(n & 0xff);
    }
    return (uint8_t)((x * 11 + y * 7 * (uint32_t)(c + 1) + (n & 31)) & 0xff);
}

int ycc_case_make(size_t i, ycc_case *out)
{
    const int *lay = layouts[i / (N_SIZES * N_VARIANTS)];
    const int *sz = sizes[(i / N_VARIANTS) % N_SIZES];
    const int restart = (int)(i % N_VARIANTS);
    const int gray = lay[2] == 0;
    const uint32_t w = (uint32_t)sz[0], h = (uint32_t)sz[1];
    struct jpeg_compress_struct cinfo;
    struct jerr err;
    unsigned char *buf = NULL;
    unsigned long size = 0;
    uint8_t *row = malloc((size_t)w * 3);
    if (row == NULL) {
        return -1;
    }
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jerr_exit;
    if (setjmp(err.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(row);
        free(buf);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buf, &size);
    cinfo.image_width = w;
    cinfo.image_height = h;
    cinfo.input_components = gray ? 1 : 3;
    cinfo.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, 85 + (int)(i % 3) * 5, TRUE);
    for (int c = 0; c < cinfo.num_components; c++) {
        cinfo.comp_info[c].h_samp_factor = lay[2 * c];
        cinfo.comp_info[c].v_samp_factor = lay[2 * c + 1];
    }
    if (restart) {
        cinfo.restart_interval = 2;
    }
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < h) {
        const uint32_t y = cinfo.next_scanline;
        for (uint32_t x = 0; x < w; x++) {
            for (int c = 0; c < cinfo.input_components; c++) {
                row[x * (uint32_t)cinfo.input_components + (uint32_t)c] =
                    sample_at(x, y, c, (uint32_t)i);
            }
        }
        JSAMPROW r = row;
        jpeg_write_scanlines(&cinfo, &r, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    free(row);
    if (gray) {
        snprintf(out->name, sizeof out->name, "gray%dx%d-%ux%u%s", lay[0], lay[1], w, h,
                 restart ? "-rst" : "");
    } else {
        snprintf(out->name, sizeof out->name, "Y%dx%d-C%dx%d-%dx%d-%ux%u%s", lay[0], lay[1],
                 lay[2], lay[3], lay[4], lay[5], w, h, restart ? "-rst" : "");
    }
    out->data = buf;
    out->size = size;
    return 0;
}

int ycc_raw_read(const unsigned char *data, size_t size, ycc_raw *out)
{
    struct jpeg_decompress_struct cinfo;
    struct jerr err;
    memset(out, 0, sizeof *out);
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = jerr_exit;
    err.mgr.emit_message = jerr_quiet;
    if (setjmp(err.jump)) {
        jpeg_destroy_decompress(&cinfo);
        ycc_raw_free(out);
        return -1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (cinfo.num_components > 3 || cinfo.num_components == 2) {
        longjmp(err.jump, 1);
    }
    cinfo.raw_data_out = TRUE;
    jpeg_start_decompress(&cinfo);
    out->components = cinfo.num_components;
    out->ycc = cinfo.num_components == 3 && cinfo.jpeg_color_space == JCS_YCbCr;
    out->width = cinfo.image_width;
    out->height = cinfo.image_height;
    char *p = out->layout;
    for (int c = 0; c < cinfo.num_components; c++) {
        const jpeg_component_info *comp = &cinfo.comp_info[c];
        out->h[c] = comp->h_samp_factor;
        out->v[c] = comp->v_samp_factor;
        out->pitches[c] = (size_t)comp->width_in_blocks * DCTSIZE + 64;
        out->rows[c] = cinfo.total_iMCU_rows * (uint32_t)comp->v_samp_factor * DCTSIZE;
        out->planes[c] = calloc((size_t)out->rows[c], out->pitches[c]);
        if (out->planes[c] == NULL) {
            longjmp(err.jump, 1);
        }
        p += sprintf(p, "%s%dx%d", c == 0 ? (cinfo.num_components == 1 ? "gray " : "Y") : " ",
                     comp->h_samp_factor, comp->v_samp_factor);
    }
    const JDIMENSION step = (JDIMENSION)cinfo.max_v_samp_factor * DCTSIZE;
    JSAMPROW rows[3][4 * DCTSIZE];
    JSAMPARRAY arrays[3];
    for (JDIMENSION imcu = 0; imcu < cinfo.total_iMCU_rows; imcu++) {
        for (int c = 0; c < cinfo.num_components; c++) {
            const int n = cinfo.comp_info[c].v_samp_factor * DCTSIZE;
            for (int r = 0; r < n; r++) {
                rows[c][r] = out->planes[c] + ((size_t)imcu * (size_t)n + (size_t)r) * out->pitches[c];
            }
            arrays[c] = rows[c];
        }
        if (jpeg_read_raw_data(&cinfo, arrays, step) == 0) {
            longjmp(err.jump, 1);
        }
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

void ycc_raw_free(ycc_raw *r)
{
    for (int c = 0; c < 4; c++) {
        free(r->planes[c]);
        r->planes[c] = NULL;
    }
}

unsigned char *ycc_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            unsigned char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    fclose(f);
    *size = n;
    return buf;
}

uint8_t *ycc_cpu_gray(const unsigned char *data, size_t size, uint32_t *width, uint32_t *height)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CPU, 0, &ctx) != IMGHIST_OK) {
        imghist_destroy(ctx);
        return NULL;
    }
    ih_load_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.mode = IMGHIST_GRAY_BGR2GRAY;
    opts.limits.max_pixels = UINT64_MAX;
    ih_raw raw;
    memset(&raw, 0, sizeof raw);
    const imghist_status st = ih_decode_jpeg(ctx, data, size, "jpeg", &opts, &raw);
    imghist_destroy(ctx);
    if (st != IMGHIST_OK || raw.channels != 1 || (raw.dtype != 0 && raw.dtype != IMGHIST_U8)) {
        free(raw.samples);
        return NULL;
    }
    *width = raw.width;
    *height = raw.height;
    return raw.samples;
}

static int has_jpg_suffix(const char *name)
{
    const size_t n = strlen(name);
    return n > 4 && (strcmp(name + n - 4, ".jpg") == 0 || strcmp(name + n - 4, ".JPG") == 0);
}

int ycc_inputs(char *const dirs[], int ndirs, ycc_case **out, size_t *count)
{
    size_t n = ycc_case_count(), cap = n + 64;
    ycc_case *cases = calloc(cap, sizeof *cases);
    if (cases == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (ycc_case_make(i, &cases[i]) != 0) {
            fprintf(stderr, "case %zu: libjpeg refused it\n", i);
            ycc_inputs_free(cases, i);
            return -1;
        }
    }
    for (int d = 0; d < ndirs; d++) {
        DIR *dir = opendir(dirs[d]);
        if (dir == NULL) {
            fprintf(stderr, "%s: cannot open\n", dirs[d]);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(dir)) != NULL) {
            if (!has_jpg_suffix(e->d_name)) {
                continue;
            }
            if (n == cap) {
                cap *= 2;
                ycc_case *nc = realloc(cases, cap * sizeof *cases);
                if (nc == NULL) {
                    break;
                }
                cases = nc;
            }
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", dirs[d], e->d_name);
            ycc_case *c = &cases[n];
            memset(c, 0, sizeof *c);
            c->data = ycc_read_file(path, &c->size);
            if (c->data == NULL) {
                continue;
            }
            snprintf(c->name, sizeof c->name, "%.63s", e->d_name);
            n++;
        }
        closedir(dir);
    }
    *out = cases;
    *count = n;
    return 0;
}

void ycc_inputs_free(ycc_case *cases, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(cases[i].data);
    }
    free(cases);
}
