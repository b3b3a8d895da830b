/*
 * The workers of a batch run, on the file pool (common/file_pool.h): each
 * takes the next image of the list, decodes it, counts or equalizes it,
 * writes its PNG or plot, and puts its result in a window of slots. The
 * records are written in list order, and a worker runs at most `window`
 * images ahead of what has been written: memory stays bounded (a decoded
 * image and its PNG per worker, a small record per slot) whatever the
 * folder's size.
 */
#define _POSIX_C_SOURCE 200809L
#include "batch_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_context.h"
#include "file_pool.h"
#include "measure.h"
#include "output_file.h"
#include "plot.h"
#include "signals.h"
#include "stats.h"

/* mkdir -p of the folder that will hold path. */
static int make_parents(char *path)
{
    for (char *p = strchr(path + 1, '/'); p != NULL; p = strchr(p + 1, '/')) {
        *p = '\0';
        const int rc = mkdir(path, 0777);
        const int e = errno;
        *p = '/';
        if (rc != 0 && e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    return 0;
}

/* Encode and write one equalized image; a message in r on failure. The
 * writing's time (the encoding is the library's) goes to the worker's. */
static void write_png(ih_worker *w, imghist_ctx *ctx, const ih_file *f, const imghist_view *img,
                      ih_result *r)
{
    void *png = NULL;
    size_t size = 0;
    if (imghist_encode_png(ctx, img, &png, &size) != IMGHIST_OK) {
        r->status = IMGHIST_E_ENCODE;
        snprintf(r->msg, sizeof r->msg, "%s: %s", f->out, imghist_last_error(ctx));
        return;
    }
    const uint64_t t0 = ih_stats_now();
    char why[256];
    ih_output_file out;
    r->status = IMGHIST_E_IO;
    if (make_parents(f->out) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot create its folder: %s", f->out,
                 strerror(errno));
    } else if (ih_output_open(&out, f->out, 0, why, sizeof why) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot create: %s", f->out, why);
    } else if (fwrite(png, 1, size, out.fp) != size || ih_output_close(&out, why, sizeof why)) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot write: %s", f->out,
                 out.fp != NULL ? strerror(errno ? errno : EIO) : why);
        ih_output_abort(&out);
    } else if (ih_stop_signal() != 0) {
        /* Stopped: a file not yet in place is not put there. */
        ih_output_abort(&out);
        r->status = IMGHIST_E_IO;
        snprintf(r->msg, sizeof r->msg, "%s: not written (interrupted)", f->out);
    } else if (ih_output_commit(&out, why, sizeof why) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot write: %s", f->out, why);
    } else {
        r->status = IMGHIST_OK;
    }
    imghist_free(png);
    w->write_ns += ih_stats_now() - t0;
}

/* --plot-dir: DIR/rel.png, a plot of the image's histogram, written like
 * the equalized PNGs (beside the target, then renamed). */
static void write_plot_file(const ih_cli_args *a, const ih_file *f, ih_result *r)
{
    char *path = ih_output_path(a->plot_dir, f->path + f->rel);
    if (path == NULL) {
        r->status = IMGHIST_E_NOMEM;
        snprintf(r->msg, sizeof r->msg, "%s: out of memory", f->path);
        return;
    }
    const ih_plot plot = {f->path, &r->hist, NULL, a->log_scale, 0};
    char why[256];
    ih_output_file out;
    r->status = IMGHIST_E_IO;
    if (make_parents(path) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot create its folder: %s", path,
                 strerror(errno));
    } else if (ih_output_open(&out, path, 0, why, sizeof why) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot create: %s", path, why);
    } else if (ih_write_plot(out.fp, &plot) != 0 || ih_output_close(&out, why, sizeof why)) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot draw or write the plot", path);
        ih_output_abort(&out);
    } else if (ih_stop_signal() != 0) {
        ih_output_abort(&out);
        snprintf(r->msg, sizeof r->msg, "%s: not written (interrupted)", path);
    } else if (ih_output_commit(&out, why, sizeof why) != 0) {
        snprintf(r->msg, sizeof r->msg, "%s: cannot write: %s", path, why);
    } else {
        r->status = IMGHIST_OK;
    }
    free(path);
}

/* The context that counts an image of the worker's: its CPU one (an auto
 * run) until its GPU one is ready, and for small images. */
static imghist_ctx *counting_ctx(ih_worker *w, const imghist_view *v)
{
    if (w->cpu == NULL) {
        return w->ctx;
    }
    const size_t channels = v->channels > 1 ? v->channels : 1;
    const size_t bytes = (size_t)v->width * v->height * channels * ih_sample_size(v->dtype);
    if (bytes >= IH_GPU_MIN_BYTES && __atomic_load_n(&w->ready, __ATOMIC_ACQUIRE)) {
        w->on_ctx++;
        return w->ctx;
    }
    w->on_cpu++;
    return w->cpu;
}

static void process(ih_worker *w, const ih_cli_args *a, const ih_file *f, ih_result *r)
{
    imghist_image *img = NULL;
    imghist_ctx *ctx = w->cpu != NULL ? w->cpu : w->ctx; /* decoding is the same on both */
    r->status = imghist_load_file(ctx, f->path, &img);
    if (r->status != IMGHIST_OK) {
        snprintf(r->msg, sizeof r->msg, "%s", imghist_last_error(ctx));
        return;
    }
    ctx = counting_ctx(w, &img->view);
    r->width = img->view.width;
    r->height = img->view.height;
    r->truncated = (img->flags & IMGHIST_IMAGE_TRUNCATED) != 0;
    r->reduced = (img->flags & IMGHIST_IMAGE_REDUCED) != 0 && a->has_range;
    char why[600];
    r->status = ih_measure(ctx, a, &img->view, NULL, a->equalize_out ? &img->view : NULL,
                           &r->hist, why, sizeof why); /* equalized in place */
    if (r->status != IMGHIST_OK) {
        snprintf(r->msg, sizeof r->msg, "%s: %s", f->path, why);
    } else {
        if (a->equalize_out != NULL) {
            write_png(w, ctx, f, &img->view, r);
        }
        if (a->plot_dir != NULL && r->status == IMGHIST_OK) {
            write_plot_file(a, f, r);
        }
    }
    imghist_image_free(img);
}

/* The pool's items are the list's files; its slots ih_results. */
typedef struct run {
    ih_batch_plan *plan;
    const ih_file_list *files;
    ih_records *records;
} run;

static void process_item(void *user, unsigned worker, size_t item, void *slot)
{
    run *r = user;
    ih_result *res = slot;
    const ih_file *f = &r->files->files[item];
    uint8_t *equalized = NULL;
    if (ih_gpu_decode_file(r->plan->gpu, f, &res->width, &res->height, &res->hist,
                           &equalized)) {
        res->status = IMGHIST_OK; /* decoded and counted (and equalized) on the GPU */
        if (equalized != NULL) {
            ih_worker *w = &r->plan->workers[worker];
            const imghist_view v = {.data = equalized, .dtype = IMGHIST_U8,
                                    .mem = IMGHIST_MEM_HOST, .width = res->width,
                                    .height = res->height, .pitch = res->width, .channels = 1};
            /* Writing is the CPU's work: -j at once, as for decoding. */
            ih_gpu_cpu_enter(r->plan->gpu);
            write_png(w, w->cpu != NULL ? w->cpu : w->ctx, f, &v, res);
            ih_gpu_cpu_leave(r->plan->gpu);
            free(equalized);
        }
        return;
    }
    ih_gpu_cpu_enter(r->plan->gpu);
    process(&r->plan->workers[worker], r->plan->a, f, res);
    ih_gpu_cpu_leave(r->plan->gpu);
}

static void emit_item(void *user, size_t item, void *slot)
{
    run *r = user;
    ih_records_put(r->records, item, slot); /* takes the slot's counts */
}

static int stop_signal(void *user)
{
    (void)user;
    return ih_stop_signal() != 0;
}

void ih_run_workers(ih_batch_plan *p, const ih_file_list *files, ih_records *records)
{
    run r = {p, files, records};
    const ih_pool_job job = {.items = files->count,
                             .workers = p->n_workers,
                             .window = 4 * (size_t)p->n_workers + 16,
                             .slot_size = sizeof(ih_result),
                             .user = &r,
                             .process = process_item,
                             .emit = emit_item,
                             .stop = stop_signal};
    size_t taken = 0;
    if (ih_pool_run(&job, &taken) != 0) {
        ih_say("out of memory");
        records->write_failed = 1;
    }
}
