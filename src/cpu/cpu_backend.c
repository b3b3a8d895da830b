/*
 * The CPU backend, the reference the CUDA backend is checked against: host
 * views only. With IMGHIST_P_CPU_THREADS > 1 an image is cut into bands of
 * rows, one per thread; each thread counts its band into its own histogram and
 * the histograms are added, so the result does not depend on the thread count.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bands.h"
#include "cpu_hist.h"

/* Below this many pixels per thread, starting a thread costs more than it saves. */
#define MIN_PIXELS_PER_THREAD (UINT64_C(1) << 18)

typedef struct band_work {
    const imghist_view *src, *dst; /* dst NULL: count; else apply lut */
    const uint8_t *lut;
    uint32_t row0, rows;
    uint64_t hist[IH_U8_BINS];
} band_work;

static void *run_band(void *arg)
{
    band_work *w = arg;
    const uint8_t *s = (const uint8_t *)w->src->data + (size_t)w->row0 * w->src->pitch;
    if (w->dst == NULL) {
        ih_cpu_hist_u8(s, w->src->pitch, w->src->width, w->rows, w->hist);
    } else {
        uint8_t *d = (uint8_t *)w->dst->data + (size_t)w->row0 * w->dst->pitch;
        ih_cpu_apply_lut_u8(s, w->src->pitch, d, w->dst->pitch, w->src->width, w->rows, w->lut);
    }
    return NULL;
}

/* Threads worth starting for this image under the context's parameter. */
static uint32_t threads_for(const imghist_ctx *ctx, const imghist_view *src)
{
    const uint64_t pixels = (uint64_t)src->width * src->height;
    uint64_t n = (uint64_t)ctx->params.cpu_threads;
    const uint64_t useful = pixels / MIN_PIXELS_PER_THREAD;
    n = n < useful ? n : useful;
    n = n < src->height ? n : src->height;
    return n > 0 ? (uint32_t)n : 1;
}

/*
 * Run the bands, the first on this thread. If a thread cannot be started its
 * band runs here too, so the call still completes. hist (NULL when applying a
 * LUT) receives the sum of the bands' histograms.
 */
static imghist_status run_bands(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, const uint8_t *lut,
                                uint64_t hist[IH_U8_BINS])
{
    const uint32_t n = threads_for(ctx, src);
    band_work one;
    band_work *work = n == 1 ? &one : calloc(n, sizeof *work);
    pthread_t *tid = n == 1 ? NULL : calloc(n, sizeof *tid);
    char *started = n == 1 ? NULL : calloc(n, 1);
    if (work == NULL || (n > 1 && (tid == NULL || started == NULL))) {
        if (work != &one) free(work);
        free(tid);
        free(started);
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %u threads", n);
    }
    const uint32_t band = (src->height + n - 1) / n;
    uint32_t i = 0;
    IH_FOR_EACH_BAND(b, src->height, band) {
        work[i].src = src;
        work[i].dst = dst;
        work[i].lut = lut;
        work[i].row0 = b.row0;
        work[i].rows = b.rows;
        if (i > 0) {
            started[i] = pthread_create(&tid[i], NULL, run_band, &work[i]) == 0;
        }
        i++;
    }
    for (uint32_t k = 0; k < i; k++) {
        if (k == 0 || !started[k]) {
            run_band(&work[k]);
        } else {
            pthread_join(tid[k], NULL);
        }
    }
    if (hist != NULL) {
        memset(hist, 0, sizeof(uint64_t) * IH_U8_BINS);
        for (uint32_t k = 0; k < i; k++) {
            for (int v = 0; v < IH_U8_BINS; v++) {
                hist[v] += work[k].hist[v];
            }
        }
    }
    if (work != &one) free(work);
    free(tid);
    free(started);
    return IMGHIST_OK;
}

static imghist_status cpu_histogram(imghist_ctx *ctx, const imghist_view *src,
                                    const ih_hist_job *job, const imghist_counts *out)
{
    uint64_t hist[IH_U8_BINS];
    imghist_status st = run_bands(ctx, src, NULL, NULL, hist);
    if (st == IMGHIST_OK) {
        ih_store_counts(out->data, hist, IH_U8_BINS, job->accumulate);
    }
    return st;
}

static imghist_status cpu_equalize(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_view *dst, const imghist_counts *hist_out)
{
    uint64_t hist[IH_U8_BINS];
    uint8_t lut[IH_U8_BINS];
    imghist_status st = run_bands(ctx, src, NULL, NULL, hist);
    if (st != IMGHIST_OK) {
        return st;
    }
    imghist_equalize_lut(hist, lut); /* cannot fail: the image is not empty */
    st = run_bands(ctx, src, dst, lut, NULL);
    if (st == IMGHIST_OK && hist_out != NULL) {
        memcpy(hist_out->data, hist, sizeof hist);
    }
    return st;
}

static void cpu_close(imghist_ctx *ctx)
{
    (void)ctx;
}

const ih_backend_ops ih_cpu_backend = {
    .id = IMGHIST_BACKEND_CPU,
    .device_memory = 0,
    .open = NULL,
    .close = cpu_close,
    .set_stream = NULL,
    .get_stream = NULL,
    .histogram = cpu_histogram,
    .histogram_batch = NULL,
    .equalize = cpu_equalize,
};
