/*
 * The CPU reference of N-dimensional histograms, colour conversion and
 * back-projection (core/ndhist.h). Integer samples go through one lookup
 * table an axis that holds each value's offset in cells (negative: in no
 * bin), so a pixel's cell is a sum of table entries; float samples are
 * binned one by one by ih_nd_bin.
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "colorspace.h"
#include "ndhist.h"
#include "parallel.h"

/* Below every sum of IMGHIST_MAX_DIMS offsets, each under 2^24. */
#define NO_BIN (-(1 << 28))

void ih_nd_luts(const ih_nd_job *job, uint32_t levels, int32_t *lut)
{
    for (uint32_t d = 0; d < job->dims; d++) {
        const ih_nd_axis *a = &job->ax[d];
        for (uint32_t v = 0; v < levels; v++) {
            const uint32_t b = ih_nd_bin(a, (double)v);
            lut[(size_t)d * levels + v] = b < a->bins ? (int32_t)(b * a->stride) : NO_BIN;
        }
    }
}

/* The cell of the pixel p of a float image, or -1. */
static int64_t float_cell(const ih_nd_job *job, const float *p)
{
    int64_t off = 0;
    for (uint32_t d = 0; d < job->dims; d++) {
        const ih_nd_axis *a = &job->ax[d];
        const uint32_t b = ih_nd_bin(a, (double)p[a->channel]);
        if (b >= a->bins) {
            return -1;
        }
        off += (int64_t)b * (int64_t)a->stride;
    }
    return off;
}

/* The cell of pixel x of a row, or a negative number: integer samples by
 * the tables (levels entries an axis), float samples by their bins. */
static inline int64_t pixel_cell(const ih_nd_job *job, const ih_color_tables *t,
                                 const int32_t *lut, uint32_t levels, const uint8_t *row,
                                 uint32_t x)
{
    const uint32_t ch = job->channels;
    int64_t off = 0;
    if (job->space != IMGHIST_SPACE_NONE) {
        uint8_t px[3];
        ih_convert_pixel(t, job->space, row + (size_t)x * ch, px);
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[d * 256u + px[job->ax[d].channel]];
        }
        return off;
    }
    switch (job->dtype) {
    case IMGHIST_U8: {
        const uint8_t *p = row + (size_t)x * ch;
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[d * 256u + p[job->ax[d].channel]];
        }
        return off;
    }
    case IMGHIST_U16: {
        const uint16_t *p = (const uint16_t *)(const void *)row + (size_t)x * ch;
        for (uint32_t d = 0; d < job->dims; d++) {
            off += lut[(size_t)d * levels + p[job->ax[d].channel]];
        }
        return off;
    }
    default: return float_cell(job, (const float *)(const void *)row + (size_t)x * ch);
    }
}

/* What a pass over the pixels needs: the tables of an integer source
 * (NULL for floats) with `levels` entries an axis, and the colour tables
 * when a conversion comes first. */
typedef struct nd_pass {
    int32_t *lut;
    uint32_t levels;
    const ih_color_tables *t;
} nd_pass;

static imghist_status pass_begin(imghist_ctx *ctx, const ih_nd_job *job, nd_pass *p)
{
    p->lut = NULL;
    p->levels = 0;
    p->t = job->space != IMGHIST_SPACE_NONE ? ih_color_tables_get() : NULL;
    if (job->space == IMGHIST_SPACE_NONE && job->dtype == IMGHIST_F32) {
        return IMGHIST_OK;
    }
    p->levels = job->space == IMGHIST_SPACE_NONE && job->dtype == IMGHIST_U16 ? 65536u : 256u;
    p->lut = malloc((size_t)job->dims * p->levels * sizeof *p->lut);
    if (p->lut == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for lookup tables");
    }
    ih_nd_luts(job, p->levels, p->lut);
    return IMGHIST_OK;
}

/* Rows [y0, y1) of image i counted into h (job->len counters, added to). */
static void count_rows(const ih_nd_job *job, const nd_pass *p, const imghist_view *src,
                       size_t i, uint32_t y0, uint32_t y1, uint64_t *h)
{
    const uint8_t *img = ih_image_at(src, i);
    const uint8_t *mask = ih_mask_at(src, i);
    uint64_t none = 0;
    for (uint32_t y = y0; y < y1; y++) {
        const uint8_t *row = img + (size_t)y * src->pitch;
        const uint8_t *mrow = mask != NULL ? mask + (size_t)y * src->mask->pitch : NULL;
        for (uint32_t x = 0; x < src->width; x++) {
            if (mrow != NULL && mrow[x] == 0) {
                continue;
            }
            const int64_t c = pixel_cell(job, p->t, p->lut, p->levels, row, x);
            if (c < 0) {
                none++;
            } else {
                h[c]++;
            }
        }
    }
    if (job->outliers) {
        h[job->cells] += none;
    }
}

/* The tasks of a call: `bands` bands of `rows` rows in each image, task t
 * being band t % bands of image t / bands. */
typedef struct nd_tasks {
    const ih_nd_job *job;
    const nd_pass *p;
    const imghist_view *src;
    uint32_t bands, rows;
    uint64_t *counts;           /* histogramdd: job->len counters a task */
    const float *hist;          /* backproject */
    float scale;
    const imghist_view *dst;
} nd_tasks;

/* Bands an image is cut into and the tasks' total for `threads` threads:
 * as many tasks as threads where images are fewer, each of at least 64 K
 * pixels, their private counters at most 256 MiB together (len: 0 when the
 * tasks need none). */
static uint32_t bands_for(const imghist_view *src, size_t n, uint32_t threads, size_t len)
{
    if (threads <= 1 || n >= threads) {
        return 1;
    }
    uint64_t b = (threads + n - 1) / n;
    const uint64_t by_pixels = (uint64_t)src->width * src->height / 65536u;
    b = b < by_pixels ? b : by_pixels;
    b = b < src->height ? b : src->height;
    if (len > 0) {
        const uint64_t by_memory = ((uint64_t)256 << 20) / (len * sizeof(uint64_t) * n);
        b = b < by_memory ? b : by_memory;
    }
    return b > 0 ? (uint32_t)b : 1;
}

static void count_task(void *arg, size_t t)
{
    const nd_tasks *w = arg;
    const uint32_t y0 = (uint32_t)(t % w->bands) * w->rows;
    const uint32_t y1 = y0 + w->rows < w->src->height ? y0 + w->rows : w->src->height;
    if (y0 < y1) {
        count_rows(w->job, w->p, w->src, t / w->bands, y0, y1,
                   w->counts + t * w->job->len);
    }
}

static uint32_t cpu_threads(const imghist_ctx *ctx)
{
    const int64_t n = ctx->params.cpu_threads;
    return n < 1 ? 1u : n > IH_PARALLEL_MAX_THREADS ? IH_PARALLEL_MAX_THREADS : (uint32_t)n;
}

imghist_status ih_cpu_histogramdd(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const imghist_counts *out)
{
    nd_pass p;
    if (pass_begin(ctx, job, &p) != IMGHIST_OK) {
        return IMGHIST_E_NOMEM;
    }
    const size_t n = src->count > 1 ? src->count : 1;
    const uint32_t threads = cpu_threads(ctx);
    nd_tasks w = {job, &p, src, bands_for(src, n, threads, job->len), 0, NULL, NULL, 0, NULL};
    w.rows = (src->height + w.bands - 1) / w.bands;
    const size_t tasks = n * w.bands;
    /* One band an image counts straight into the output; bands into their own. */
    if (w.bands == 1) {
        if (!job->accumulate) {
            memset(out->data, 0, n * job->len * sizeof *out->data);
        }
        w.counts = out->data;
    } else {
        w.counts = calloc(tasks * job->len, sizeof *w.counts);
        if (w.counts == NULL) {
            free(p.lut);
            return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu tasks' counters", tasks);
        }
    }
    ih_parallel_for(tasks, threads, count_task, &w);
    if (w.bands > 1) {
        for (size_t i = 0; i < n; i++) {
            uint64_t *h = out->data + i * job->len;
            const uint64_t *c = w.counts + i * w.bands * job->len;
            ih_store_counts(h, c, job->len, job->accumulate);
            for (uint32_t b = 1; b < w.bands; b++) {
                ih_store_counts(h, c + (size_t)b * job->len, job->len, 1);
            }
        }
        free(w.counts);
    }
    free(p.lut);
    return IMGHIST_OK;
}

imghist_status ih_cpu_cvt_color(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, imghist_space space)
{
    (void)ctx;
    const ih_color_tables *t = ih_color_tables_get();
    const uint32_t ch = src->channels;
    const size_t n = src->count > 1 ? src->count : 1;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *img = ih_image_at(src, i);
        uint8_t *oimg = (uint8_t *)dst->data + (ptrdiff_t)i * dst->image_stride;
        for (uint32_t y = 0; y < src->height; y++) {
            const uint8_t *row = img + (size_t)y * src->pitch;
            uint8_t *orow = oimg + (size_t)y * dst->pitch;
            for (uint32_t x = 0; x < src->width; x++) {
                uint8_t px[3];
                ih_convert_pixel(t, space, row + (size_t)x * ch, px);
                memcpy(orow + (size_t)x * 3, px, 3);
            }
        }
    }
    return IMGHIST_OK;
}

/* One row of a back-projection: OpenCV multiplies in single precision,
 * then rounds half to even and saturates for integer types. */
static void backproject_row(const ih_nd_job *job, const nd_pass *p, const float *hist,
                            float scale, const uint8_t *row, uint32_t width, imghist_dtype dt,
                            void *out)
{
    for (uint32_t x = 0; x < width; x++) {
        const int64_t c = pixel_cell(job, p->t, p->lut, p->levels, row, x);
        const float v = c < 0 ? 0.0f : hist[c] * scale;
        if (dt == IMGHIST_F32) {
            ((float *)out)[x] = v;
            continue;
        }
        const float top = dt == IMGHIST_U8 ? 255.0f : 65535.0f;
        const long r = isnan(v) ? 0 : lrintf(fminf(fmaxf(v, 0.0f), top));
        if (dt == IMGHIST_U8) {
            ((uint8_t *)out)[x] = (uint8_t)r;
        } else {
            ((uint16_t *)out)[x] = (uint16_t)r;
        }
    }
}

static void backproject_task(void *arg, size_t t)
{
    const nd_tasks *w = arg;
    const size_t i = t / w->bands;
    const uint32_t y0 = (uint32_t)(t % w->bands) * w->rows;
    const uint32_t y1 = y0 + w->rows < w->src->height ? y0 + w->rows : w->src->height;
    for (uint32_t y = y0; y < y1; y++) {
        backproject_row(w->job, w->p, w->hist, w->scale,
                        ih_image_at(w->src, i) + (size_t)y * w->src->pitch, w->src->width,
                        w->dst->dtype,
                        (uint8_t *)w->dst->data + (ptrdiff_t)i * w->dst->image_stride +
                            (size_t)y * w->dst->pitch);
    }
}

imghist_status ih_cpu_backproject(imghist_ctx *ctx, const imghist_view *src,
                                  const ih_nd_job *job, const float *hist, float scale,
                                  const imghist_view *dst)
{
    nd_pass p;
    if (pass_begin(ctx, job, &p) != IMGHIST_OK) {
        return IMGHIST_E_NOMEM;
    }
    const size_t n = src->count > 1 ? src->count : 1;
    const uint32_t threads = cpu_threads(ctx);
    nd_tasks w = {job, &p, src, bands_for(src, n, threads, 0), 0, NULL, hist, scale, dst};
    w.rows = (src->height + w.bands - 1) / w.bands;
    ih_parallel_for(n * w.bands, threads, backproject_task, &w);
    free(p.lut);
    return IMGHIST_OK;
}
