/*
 * Many image files in one call: the listing of the CLI's batch runs
 * (common/walk.c) and its workers (common/file_pool.c), each worker with
 * contexts of its own that decode and count.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "file_pool.h"
#include "imghist_experimental.h"
#include "parallel.h"
#include "sanitize.h"
#include "walk.h"

/* ---- Listing ---- */

/* The entries a walk could not read, gathered for the list. */
typedef struct failures {
    imghist_file_failure *items;
    size_t count, cap;
    int nomem;
} failures;

static char *format_line(const char *fmt, const char *a, const char *b)
{
    const int len = snprintf(NULL, 0, fmt, a, b);
    char *s = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (s != NULL) {
        snprintf(s, (size_t)len + 1, fmt, a, b);
        ih_sanitize_line(s);
    }
    return s;
}

static void note_skip(void *user, const char *path, const char *why, int error)
{
    failures *f = user;
    if (!error || f->nomem) {
        return;
    }
    if (f->count == f->cap) {
        const size_t cap = f->cap ? 2 * f->cap : 16;
        imghist_file_failure *more = realloc(f->items, cap * sizeof *more);
        if (more == NULL) {
            f->nomem = 1;
            return;
        }
        f->items = more;
        f->cap = cap;
    }
    imghist_file_failure *e = &f->items[f->count];
    e->path = strdup(path);
    e->message = format_line("%s: cannot be read: %s", path, why);
    if (e->path == NULL || e->message == NULL) {
        free(e->path);
        free(e->message);
        f->nomem = 1;
        return;
    }
    f->count++;
}

void imghist_file_list_free(imghist_file_list *list)
{
    if (list == NULL) {
        return;
    }
    for (size_t i = 0; i < list->count; i++) free(list->paths[i]);
    for (size_t i = 0; i < list->n_unreadable; i++) {
        free(list->unreadable[i].path);
        free(list->unreadable[i].message);
    }
    free(list->paths);
    free(list->unreadable);
    free(list);
}

imghist_status imghist_list_files(imghist_ctx *ctx, const char *const *inputs, size_t n_inputs,
                                  int recursive, imghist_file_list **out)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (out == NULL || inputs == NULL || n_inputs == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       out == NULL || inputs == NULL ? "NULL argument" : "no inputs");
    }
    *out = NULL;
    for (size_t i = 0; i < n_inputs; i++) {
        if (inputs[i] == NULL) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "input %zu is NULL", i);
        }
    }
    failures f = {0};
    ih_file_list found;
    char err[1024];
    imghist_file_list *list = calloc(1, sizeof *list);
    if (list == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    const int walked = ih_walk_inputs(inputs, n_inputs, recursive, imghist_detect_format,
                                      note_skip, &f, &found, err, sizeof err);
    if (walked != 0) { /* -1: a missing input; -2: memory */
        st = ih_fail(ctx, walked == -1 ? IMGHIST_E_IO : IMGHIST_E_NOMEM, "%s", err);
    } else if (f.nomem ||
               (list->paths = malloc((found.count ? found.count : 1) * sizeof(char *))) == NULL) {
        st = ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
    }
    list->unreadable = f.items;
    list->n_unreadable = f.count;
    if (st == IMGHIST_OK) {
        for (size_t i = 0; i < found.count; i++) {
            list->paths[i] = found.files[i].path; /* now the list's */
            found.files[i].path = NULL;
        }
        list->count = found.count;
        list->skipped = found.skipped;
    }
    ih_free_file_list(&found);
    if (st != IMGHIST_OK) {
        imghist_file_list_free(list);
        return st;
    }
    *out = list;
    return IMGHIST_OK;
}

/* ---- Counting ---- */

/* The sample type loads give for a spec check: 8-bit unless the file's own
 * depth is asked for, when F32 stands for any (it has no natural bins). */
static imghist_dtype load_type(const ih_params *p)
{
    return p->load_depth ? IMGHIST_F32 : IMGHIST_U8;
}

static uint32_t load_channels(const ih_params *p)
{
    return p->load_channels ? IMGHIST_MAX_CHANNELS : 1;
}

size_t imghist_files_counts_len(const imghist_ctx *ctx, const imghist_histspec *spec)
{
    ih_hist_job job;
    if (ctx == NULL ||
        ih_resolve_spec(NULL, spec, load_type(&ctx->params), load_channels(&ctx->params),
                        &job) != IMGHIST_OK) {
        return 0;
    }
    return job.len;
}

/* A worker's contexts: `count` counts (the caller's backend and GPU),
 * `load` decodes and counts small images (a CPU one beside a GPU one).
 * Made on the worker's first CPU decode: with the GPU's JPEG decoder most
 * workers only wait on its batches. */
typedef struct files_worker {
    imghist_ctx *count, *load;
    imghist_status st; /* the contexts could not be made */
    char why[256];
} files_worker;

typedef struct files_run {
    const char *const *paths;
    const imghist_histspec *spec;
    uint64_t *out;
    size_t len;    /* counters a file */
    size_t stride; /* counters a channel */
    imghist_file_result *results;
    files_worker *workers;
    imghist_progress_fn progress;
    void *user;
    imghist_ctx *caller;     /* whose backend, GPU and parameters the workers take */
    unsigned threads_each;
    imghist_exp_jpeg_gpu *gpu; /* JPEGs decoded on the GPU (NULL: none) */
    imghist_status first;  /* the first failure in list order, IMGHIST_OK if none */
    size_t first_at, failed;
} files_run;

/* What a worker hands on for one file, in list order; the rest goes
 * straight to the caller's arrays. */
typedef struct file_slot {
    imghist_status status;
} file_slot;

static void set_message(imghist_file_result *r, const char *fmt, const char *a, const char *b)
{
    if (r != NULL) {
        r->message = format_line(fmt, a, b);
    }
}

static imghist_status worker_context(imghist_ctx *ctx, imghist_backend backend,
                                     unsigned threads, imghist_ctx **out, char *why,
                                     size_t len);

/* The worker's contexts, made on first use. */
static imghist_status ready_worker(const files_run *run, files_worker *w)
{
    if (w->count != NULL || w->st != IMGHIST_OK) {
        return w->st;
    }
    imghist_ctx *ctx = run->caller;
    w->st = worker_context(ctx, ctx->backend, run->threads_each, &w->count, w->why,
                           sizeof w->why);
    w->load = w->count;
    if (w->st == IMGHIST_OK && ctx->backend != IMGHIST_BACKEND_CPU) {
        w->st = worker_context(ctx, IMGHIST_BACKEND_CPU, run->threads_each, &w->load, w->why,
                               sizeof w->why);
    }
    return w->st;
}

/* One file on the CPU's decoder. */
static imghist_status count_on_cpu(files_run *run, files_worker *w, const char *path,
                                   imghist_file_result *r, uint64_t *counts)
{
    imghist_status st = ready_worker(run, w);
    if (st != IMGHIST_OK) {
        set_message(r, "%s: not counted: %s", path, w->why);
        return st;
    }
    imghist_image *img = NULL;
    st = imghist_load_file(w->load, path, &img);
    if (st != IMGHIST_OK) {
        set_message(r, "%s%s", imghist_last_error(w->load), "");
        return st;
    }
    const imghist_view *v = &img->view;
    const size_t channels = v->channels > 1 ? v->channels : 1;
    const size_t bytes = (size_t)v->width * v->height * channels * ih_dtype_size(v->dtype);
    imghist_ctx *ctx = bytes >= IH_GPU_MIN_BYTES ? w->count : w->load;
    const imghist_counts c = {counts, channels * run->stride, IMGHIST_MEM_HOST};
    st = imghist_histogram(ctx, v, run->spec, &c);
    if (st != IMGHIST_OK) {
        memset(counts, 0, run->len * sizeof *counts);
        set_message(r, "%s: %s", path, imghist_last_error(ctx));
    }
    if (r != NULL) {
        r->width = v->width;
        r->height = v->height;
        r->channels = (uint32_t)channels;
        r->dtype = v->dtype;
        r->flags = img->flags;
    }
    imghist_image_free(img);
    return st;
}

static void count_file(void *user, unsigned worker, size_t item, void *slot)
{
    files_run *run = user;
    files_worker *w = &run->workers[worker];
    const char *path = run->paths[item];
    imghist_file_result *r = run->results != NULL ? &run->results[item] : NULL;
    uint64_t *counts = run->out + item * run->len;
    memset(counts, 0, run->len * sizeof *counts);
    uint32_t width = 0, height = 0;
    imghist_status st = IMGHIST_OK;
    if (imghist_exp_jpeg_gpu_file(run->gpu, path, &width, &height, counts, NULL)) {
        if (r != NULL) { /* an 8-bit gray image, as the CPU's load makes it */
            r->width = width;
            r->height = height;
            r->channels = 1;
            r->dtype = IMGHIST_U8;
            r->flags = 0;
        }
    } else {
        imghist_exp_jpeg_gpu_cpu_enter(run->gpu);
        st = count_on_cpu(run, w, path, r, counts);
        imghist_exp_jpeg_gpu_cpu_leave(run->gpu);
    }
    if (r != NULL) {
        r->status = st;
    }
    ((file_slot *)slot)->status = st;
}

static int tick(void *user, size_t done, size_t total)
{
    const files_run *run = user;
    return run->progress(run->user, done, total);
}

/* Threads of a call: `threads`, or one per core, at most the pool's most. */
static unsigned thread_count(unsigned threads)
{
    if (threads == 0) {
        const long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    return threads < IH_PARALLEL_MAX_THREADS ? threads : IH_PARALLEL_MAX_THREADS;
}

/* A context of ctx's backend and GPU with its parameters, but threads; on
 * failure why says so. */
static imghist_status worker_context(imghist_ctx *ctx, imghist_backend backend,
                                     unsigned threads, imghist_ctx **out, char *why,
                                     size_t len)
{
    int device = -1;
    if (backend == IMGHIST_BACKEND_CUDA) {
        (void)imghist_get_device(ctx, &device);
    }
    imghist_status st = imghist_create(backend, device, out);
    if (st != IMGHIST_OK) {
        snprintf(why, len, "a worker's %s context: %s", imghist_backend_name(backend),
                 *out != NULL ? imghist_last_error(*out) : "out of memory");
        imghist_destroy(*out);
        *out = NULL;
        return st;
    }
    (*out)->params = ctx->params;
    (*out)->params.cpu_threads = threads;
    return IMGHIST_OK;
}

static void destroy_workers(files_worker *w, unsigned n)
{
    for (unsigned i = 0; w != NULL && i < n; i++) {
        if (w[i].load != w[i].count) {
            imghist_destroy(w[i].load);
        }
        imghist_destroy(w[i].count);
    }
    free(w);
}

/* The workers, the first one's contexts made now: a backend that cannot
 * make one fails the call before any work. */
static files_worker *make_workers(files_run *run, unsigned n, imghist_status *st)
{
    files_worker *w = calloc(n, sizeof *w);
    if (w == NULL) {
        *st = ih_fail(run->caller, IMGHIST_E_NOMEM, "out of memory");
        return NULL;
    }
    *st = ready_worker(run, &w[0]);
    if (*st != IMGHIST_OK) {
        ih_fail(run->caller, *st, "%s", w[0].why);
        destroy_workers(w, n);
        return NULL;
    }
    return w;
}

/* The GPU's JPEG decoder for the call, as IMGHIST_P_DECODE asks: NULL when
 * the CPU decodes every file. */
static imghist_status start_gpu_decode(imghist_ctx *ctx, const char *const *paths, size_t n,
                                       unsigned cpu_jobs,
                                       const imghist_histspec *spec, imghist_exp_jpeg_gpu **out)
{
    *out = NULL;
    const int64_t mode = ctx->params.decode;
    if (mode == IMGHIST_DECODE_CPU || (mode == IMGHIST_DECODE_AUTO &&
                                       ctx->backend != IMGHIST_BACKEND_CUDA)) {
        return IMGHIST_OK;
    }
    if (ctx->backend != IMGHIST_BACKEND_CUDA) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                       "IMGHIST_DECODE_GPU decodes on the context's GPU: a CPU context has none");
    }
    int device = 0;
    (void)imghist_get_device(ctx, &device);
    /* auto weighs the run by its bytes: many small files are the CPU's. */
    uint64_t bytes = 0;
    for (size_t i = 0; mode == IMGHIST_DECODE_AUTO && i < n; i++) {
        struct stat st;
        bytes += stat(paths[i], &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    }
    const imghist_exp_jpeg_gpu_opts o = {.mode = (imghist_decode)mode,
                                         .n_files = n,
                                         .n_bytes = bytes > 0 ? bytes : 1,
                                         .spec = spec,
                                         .gpus = &device,
                                         .n_gpus = 1,
                                         .local_size = 1,
                                         .cpu_jobs = cpu_jobs};
    const imghist_status st = imghist_exp_jpeg_gpu_start(ctx, &o, out);
    if (st != IMGHIST_OK && mode != IMGHIST_DECODE_GPU) {
        *out = NULL;
        return ih_begin(ctx); /* auto: the CPU decodes; the failure is no error */
    }
    return st;
}

/* The arguments, before any work. */
static imghist_status check_files_args(imghist_ctx *ctx, const char *const *paths, size_t n,
                                       const imghist_histspec *spec, const imghist_counts *out,
                                       ih_hist_job *job)
{
    if (paths == NULL || out == NULL || out->data == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL argument");
    }
    if (n == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "no files");
    }
    for (size_t i = 0; i < n; i++) {
        if (paths[i] == NULL) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "path %zu is NULL", i);
        }
    }
    if (out->mem != IMGHIST_MEM_HOST) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the counts of many files are host memory");
    }
    if (spec != NULL && (spec->flags & IMGHIST_ACCUMULATE) != 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "IMGHIST_ACCUMULATE: each file's counters are its own");
    }
    if (ctx->params.load_depth && (spec == NULL || spec->bins == 0)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "files at their own depth (IMGHIST_P_LOAD_DEPTH 1) may be 8-bit, 16-bit "
                       "or float, which share no natural bins: give bins and a range");
    }
    imghist_status st = ih_resolve_spec(ctx, spec, load_type(&ctx->params),
                                        load_channels(&ctx->params), job);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (n > SIZE_MAX / job->len || out->len < n * job->len) {
        return ih_fail(ctx, IMGHIST_E_BUFSIZE, "%zu files need %zu counters each; counts hold %zu",
                       n, job->len, out->len);
    }
    return IMGHIST_OK;
}

/* Each file's status in list order: the first failure, and their number. */
static void note_result(void *user, size_t item, void *slot)
{
    files_run *run = user;
    const imghist_status st = ((file_slot *)slot)->status;
    if (st != IMGHIST_OK && run->failed++ == 0) {
        run->first = st;
        run->first_at = item;
    }
}

/* The call's outcome once every file is done. */
static imghist_status summarize(imghist_ctx *ctx, const files_run *run, size_t n)
{
    if (run->failed == 0) {
        return IMGHIST_OK;
    }
    const imghist_file_result *r = run->results != NULL ? &run->results[run->first_at] : NULL;
    if (r != NULL && r->message != NULL) {
        return ih_fail(ctx, run->first, "%zu of %zu files failed; the first: %s", run->failed,
                       n, r->message);
    }
    return ih_fail(ctx, run->first, "%zu of %zu files failed; the first: %s: %s", run->failed, n,
                   run->paths[run->first_at], imghist_strerror(run->first));
}

imghist_status imghist_histogram_files(imghist_ctx *ctx, const char *const *paths, size_t n,
                                       unsigned threads, const imghist_histspec *spec,
                                       const imghist_counts *out, imghist_file_result *results,
                                       imghist_progress_fn progress, void *user)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_hist_job job;
    if ((st = check_files_args(ctx, paths, n, spec, out, &job)) != IMGHIST_OK) {
        return st;
    }
    if (results != NULL) {
        memset(results, 0, n * sizeof *results);
    }
    const unsigned all = thread_count(threads);
    unsigned n_workers = n < all ? (unsigned)n : all;
    /* Fewer files than threads: the spare threads count within images. */
    const unsigned threads_each = all / n_workers;
    files_run run = {paths, spec, out->data, job.len, job.stride, results, NULL, progress, user,
                     ctx, threads_each, NULL, IMGHIST_OK, 0, 0};
    if ((st = start_gpu_decode(ctx, paths, n, n_workers, spec, &run.gpu)) != IMGHIST_OK) {
        return st;
    }
    if (run.gpu != NULL) {
        /* Workers beyond the threads asked for only wait on the GPU's
         * batches: at most `all` of them decode on the CPU at once. */
        const size_t more = imghist_exp_jpeg_gpu_waiters(run.gpu);
        const size_t most = IH_PARALLEL_MAX_THREADS;
        const size_t want = n < n_workers + more ? n : n_workers + more;
        n_workers = (unsigned)(want < most ? want : most);
    }
    run.workers = make_workers(&run, n_workers, &st);
    size_t taken = 0;
    if (st == IMGHIST_OK) {
        const ih_pool_job pool = {.items = n,
                                  .workers = n_workers,
                                  .window = 4 * (size_t)n_workers + 16,
                                  .slot_size = sizeof(file_slot),
                                  .user = &run,
                                  .process = count_file,
                                  .emit = note_result,
                                  .tick = progress != NULL ? tick : NULL,
                                  .tick_ms = 100};
        if (ih_pool_run(&pool, &taken) != 0) {
            st = ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory");
        }
    }
    (void)imghist_exp_jpeg_gpu_stop(run.gpu, NULL, 0, NULL);
    destroy_workers(run.workers, n_workers);
    if (st != IMGHIST_OK) {
        return st; /* nothing was counted */
    }
    for (size_t i = taken; i < n; i++) {
        memset(run.out + i * run.len, 0, run.len * sizeof *run.out);
        if (results != NULL) {
            results[i].status = IMGHIST_E_CANCELED;
            set_message(&results[i], "%s: not counted (%s)", paths[i], "canceled");
        }
    }
    if (taken < n) {
        return ih_fail(ctx, IMGHIST_E_CANCELED, "canceled after %zu of %zu files", taken, n);
    }
    if (progress != NULL) {
        (void)progress(user, n, n); /* the end; too late to cancel */
    }
    return summarize(ctx, &run, n);
}
