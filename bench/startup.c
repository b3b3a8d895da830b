/*
 * Where a GPU run's start-up goes: the CUDA runtime's first call, then N
 * contexts made one after another on one GPU (as a folder run's -j N makes
 * them), then each context's first histogram of a 640x480 host image (which
 * allocates its pinned slots), then the same N contexts made by N threads at
 * once. Host clock, milliseconds.
 *
 *   imghist_bench_startup [N] [DEVICE]       (default 32, 0)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "imghist.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

enum { W = 640, H = 480 };
static uint8_t *g_img;
static int g_dev;

static int first_histogram(imghist_ctx *ctx)
{
    imghist_view v = {g_img, IMGHIST_U8, IMGHIST_MEM_HOST, W, H, W, 1, 0, 0, NULL};
    uint64_t h[256];
    imghist_counts out = {h, 256, IMGHIST_MEM_HOST};
    if (imghist_histogram(ctx, &v, NULL, &out) != IMGHIST_OK) {
        fprintf(stderr, "histogram: %s\n", imghist_last_error(ctx));
        return -1;
    }
    uint64_t sum = 0;
    for (int i = 0; i < 256; i++) {
        sum += h[i];
    }
    return sum == (uint64_t)W * H ? 0 : -1;
}

typedef struct {
    imghist_ctx *ctx;
    double made, counted; /* ms from the thread's start */
    int rc;
} job;

static void *make_one(void *p)
{
    job *j = p;
    const double t0 = now_ms();
    j->rc = imghist_create(IMGHIST_BACKEND_CUDA, g_dev, &j->ctx) == IMGHIST_OK ? 0 : -1;
    j->made = now_ms() - t0;
    if (j->rc == 0) {
        j->rc = first_histogram(j->ctx);
    }
    j->counted = now_ms() - t0;
    return NULL;
}

static void row(const char *what, double ms)
{
    printf("%-58s %9.2f ms\n", what, ms);
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 32;
    g_dev = argc > 2 ? atoi(argv[2]) : 0;
    if (n < 1 || n > 1024) {
        fprintf(stderr, "usage: imghist_bench_startup [N] [DEVICE]\n");
        return 2;
    }
    g_img = malloc((size_t)W * H);
    for (size_t i = 0; i < (size_t)W * H; i++) {
        g_img[i] = (uint8_t)(i * 2654435761u >> 24);
    }
    job *jobs = calloc((size_t)n, sizeof *jobs);
    char label[96];
    printf("imghist_bench_startup: %s, %d contexts on GPU %d\n", imghist_version_string(), n, g_dev);

    double t = now_ms();
    int count = 0;
    if (imghist_device_count(&count) != IMGHIST_OK || count <= g_dev) {
        fprintf(stderr, "no GPU %d\n", g_dev);
        return 77;
    }
    row("imghist_device_count (the CUDA runtime's first call)", now_ms() - t);

    /* One after another, as make_contexts does for one GPU. */
    t = now_ms();
    double first = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        const double t0 = now_ms();
        if (imghist_create(IMGHIST_BACKEND_CUDA, g_dev, &jobs[i].ctx) != IMGHIST_OK) {
            fprintf(stderr, "create %d: %s\n", i, imghist_last_error(jobs[i].ctx));
            return 1;
        }
        const double d = now_ms() - t0;
        if (i == 0) {
            first = d;
        } else if (d > worst) {
            worst = d;
        }
    }
    const double serial = now_ms() - t;
    row("context 1 (the GPU's primary context, kernels loaded)", first);
    snprintf(label, sizeof label, "contexts 2..%d, each (mean; worst %.2f ms)", n, worst);
    row(label, n > 1 ? (serial - first) / (n - 1) : 0);
    snprintf(label, sizeof label, "%d contexts, one after another", n);
    row(label, serial);

    t = now_ms();
    double first_h = 0;
    for (int i = 0; i < n; i++) {
        const double t0 = now_ms();
        if (first_histogram(jobs[i].ctx) != 0) {
            return 1;
        }
        if (i == 0) {
            first_h = now_ms() - t0;
        }
    }
    const double hists = now_ms() - t;
    row("first 640x480 host histogram, context 1", first_h);
    snprintf(label, sizeof label, "first 640x480 host histogram, contexts 2..%d, each (mean)", n);
    row(label, n > 1 ? (hists - first_h) / (n - 1) : 0);
    t = now_ms();
    for (int i = 0; i < n; i++) {
        if (first_histogram(jobs[i].ctx) != 0) {
            return 1;
        }
    }
    row("second 640x480 host histogram, each (mean)", (now_ms() - t) / n);

    t = now_ms();
    for (int i = 0; i < n; i++) {
        imghist_destroy(jobs[i].ctx);
        jobs[i].ctx = NULL;
    }
    snprintf(label, sizeof label, "%d contexts destroyed", n);
    row(label, now_ms() - t);

    /* All at once, one thread each, each then counting its first image. */
    pthread_t *tid = calloc((size_t)n, sizeof *tid);
    t = now_ms();
    for (int i = 0; i < n; i++) {
        if (pthread_create(&tid[i], NULL, make_one, &jobs[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    double made_max = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(tid[i], NULL);
        if (jobs[i].rc != 0) {
            fprintf(stderr, "thread %d failed\n", i);
            return 1;
        }
        made_max = jobs[i].made > made_max ? jobs[i].made : made_max;
    }
    snprintf(label, sizeof label, "%d contexts made by %d threads at once, + first image", n, n);
    row(label, now_ms() - t);
    row("  of which the slowest thread's context", made_max);
    for (int i = 0; i < n; i++) {
        imghist_destroy(jobs[i].ctx);
    }
    free(tid);
    free(jobs);
    free(g_img);
    return 0;
}
