/*
 * A batch run. The main thread lists the images (walk.c) and opens the run's
 * outputs; worker threads, each with its own library context (so each has its
 * own GPU stream on the CUDA backend), take images in order, decode, count or
 * equalize, encode and write them. Results come back through a window of
 * slots and the main thread writes the CSV, JSON Lines and total in sorted
 * order whatever the scheduling; a worker may run at most `window` images
 * ahead of what has been written, so memory stays bounded (a decoded image and
 * its PNG per worker, a small record per slot) whatever the folder's size.
 */
#define _POSIX_C_SOURCE 200809L
#include "batch.h"
#include "plot.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_context.h"
#include "mpi_run.h"
#include "output_file.h"
#include "outputs.h"
#include "measure.h"
#include "progress.h"
#include "report.h"
#include "scale.h"
#include "signals.h"
#include "walk.h"

int ih_is_batch(const ih_cli_args *a)
{
    if (a->scale.shard_n > 0 || ih_mpi.size > 1) {
        return 1; /* a share of the inputs is a batch, even of one file */
    }
    if (a->n_inputs != 1) {
        return a->n_inputs > 1;
    }
    struct stat st;
    return strcmp(a->input, "-") != 0 && stat(a->input, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct result {
    int done;
    imghist_status status;
    uint32_t width, height;
    ih_hist_out hist; /* counts malloc'd by the worker, freed once written */
    int truncated;    /* read with --read-truncated though its data ended early */
    char msg[800];
} result;

typedef struct batch {
    const ih_cli_args *a;
    const ih_file_list *files;
    size_t window;
    result *slots;
    size_t next_take, next_emit;
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t done_cv, space_cv;
} batch;

typedef struct worker {
    batch *b;
    imghist_ctx *ctx;
    int device; /* its GPU, -1: the default */
    pthread_t tid;
    int started;
    /* An auto run on GPUs: the worker's CPU context decodes its images and
     * counts them until ctx (made in the background) is ready, and the small
     * ones after (counting_ctx). */
    imghist_ctx *cpu;
    int ready;              /* ctx is made (atomic: the maker sets it) */
    size_t on_cpu, on_ctx;  /* images counted with each */
} worker;

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

/* Encode and write one equalized image; a message in r on failure. */
static void write_png(imghist_ctx *ctx, const ih_file *f, const imghist_view *img, result *r)
{
    void *png = NULL;
    size_t size = 0;
    if (imghist_encode_png(ctx, img, &png, &size) != IMGHIST_OK) {
        r->status = IMGHIST_E_ENCODE;
        snprintf(r->msg, sizeof r->msg, "%s: %s", f->out, imghist_last_error(ctx));
        return;
    }
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
}

/* --plot-dir: DIR/rel.png, a plot of the image's histogram, written like
 * the equalized PNGs (beside the target, then renamed). */
static void write_plot_file(const ih_cli_args *a, const ih_file *f, result *r)
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

/*
 * An auto run's images with fewer bytes of samples than this are counted on
 * the CPU even once the worker's GPU is up. For a small image the GPU's path
 * (a copy into pinned memory, a launch, a wait among many workers) costs the
 * worker more than counting it: on two H100s, 36,000 gray 640x480 tiles ran
 * at 61,200 images/s on the CPU backend and 40,700 with auto on the GPUs,
 * while 12 MP JPEGs ran faster with the GPUs (784 against 728 images/s;
 * README). The CPU counts 8-bit samples at several GB/s a core.
 */
#define IH_GPU_MIN_BYTES ((size_t)4 << 20)

/* The context that counts an image of the worker's: its CPU one (an auto
 * run) until its GPU one is ready, and for small images. */
static imghist_ctx *counting_ctx(worker *w, const imghist_view *v)
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

static void process(worker *w, const ih_cli_args *a, const ih_file *f, result *r)
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
    char why[600];
    r->status = ih_measure(ctx, a, &img->view, NULL, a->equalize_out ? &img->view : NULL,
                           &r->hist, why, sizeof why); /* equalized in place */
    if (r->status != IMGHIST_OK) {
        snprintf(r->msg, sizeof r->msg, "%s: %s", f->path, why);
    } else {
        if (a->equalize_out != NULL) {
            write_png(ctx, f, &img->view, r);
        }
        if (a->plot_dir != NULL && r->status == IMGHIST_OK) {
            write_plot_file(a, f, r);
        }
    }
    imghist_image_free(img);
}

/* Add one image's counts into the run's total (64-bit). An image whose
 * binning differs from the first one's is an error for that image. */
static int add_to_total(ih_hist_out *total, const ih_hist_out *h, const char *path,
                        ih_progress *progress)
{
    if (total->counts == NULL) {
        if (ih_hist_out_copy(total, h) != 0) {
            ih_progress_clear(progress);
            ih_say("%s: out of memory for the total", path);
            return -1;
        }
        return 0;
    }
    if (h->bins != total->bins || h->lo != total->lo || h->hi != total->hi ||
        h->channels != total->channels) {
        ih_progress_clear(progress);
        ih_say("%s: its bins differ from the first image's, so it is not in --total (give "
               "--bins and --range)", path);
        return -1;
    }
    const size_t n = ih_hist_stride(h) * h->channels;
    for (size_t v = 0; v < n; v++) {
        total->counts[v] += h->counts[v];
    }
    total->has_data_range = 0;
    return 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    batch *b = w->b;
    result r;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        while (!b->stop && b->next_take < b->files->count &&
               b->next_take >= b->next_emit + b->window) {
            pthread_cond_wait(&b->space_cv, &b->mu);
        }
        if (b->stop || ih_stop_signal() != 0 || b->next_take >= b->files->count) {
            pthread_mutex_unlock(&b->mu);
            break;
        }
        const size_t k = b->next_take++;
        pthread_mutex_unlock(&b->mu);

        memset(&r, 0, sizeof r);
        process(w, b->a, &b->files->files[k], &r);
        r.done = 1;
        pthread_mutex_lock(&b->mu);
        b->slots[k % b->window] = r;
        pthread_cond_signal(&b->done_cv);
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

static void say_skipped(const char *path, const char *why)
{
    if (ih_verbosity > 0) {
        ih_say("skipped %s (%s)", path, why);
    }
}

/* Waits for image e's result, keeping the progress bar and the stop flag
 * current; returns 0 when the run stopped before e was taken. */
static int wait_for(batch *b, size_t e, ih_progress *progress)
{
    while (!b->slots[e % b->window].done) {
        if (ih_stop_signal() != 0 && !b->stop) {
            b->stop = 1;
            pthread_cond_broadcast(&b->space_cv);
        }
        if (b->stop && e >= b->next_take) {
            return 0;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&b->done_cv, &b->mu, &until);
        ih_progress_update(progress, e, b->files->count, 0);
    }
    return 1;
}

/* The per-image CSV and JSON Lines records of one image. */
static int write_records(FILE *csv, FILE *json, const char *path, uint32_t width,
                         uint32_t height, const ih_hist_out *h, int channels)
{
    return (csv != NULL && ih_write_csv_rows_with_file(csv, path, h, channels) != 0) ||
           (json != NULL && ih_write_json_line(json, path, width, height, h) != 0);
}

/* What a rank sends rank 0 for one image under MPI: runs under mpirun take
 * the default 8-bit histogram only (ih_run_batch refuses the other options),
 * so a record has a fixed size. */
#define IH_WIRE_COUNTS (IH_CLI_BINS + 3)
typedef struct wire_record {
    imghist_status status;
    uint32_t width, height;
    uint64_t counts[IH_WIRE_COUNTS];
} wire_record;

/* The default binning of the CLI's 8-bit histograms, around counts. */
static ih_hist_out default_hist(uint64_t *counts)
{
    ih_hist_out h;
    memset(&h, 0, sizeof h);
    h.bins = IH_CLI_BINS;
    h.channels = 1;
    h.lo = 0.0;
    h.hi = IH_CLI_BINS;
    h.natural = 1;
    h.names = "l";
    h.counts = counts;
    return h;
}

typedef struct merged_out {
    FILE *csv, *json;
    const ih_file_list *part;
    int failed;
} merged_out;

/* Rank 0: one record of the whole run, in the order of the whole list. */
static void emit_merged(void *user, size_t e, const void *record)
{
    merged_out *m = user;
    wire_record w;
    memcpy(&w, record, sizeof w);
    const ih_hist_out h = default_hist(w.counts);
    if (w.status == IMGHIST_OK &&
        write_records(m->csv, m->json, m->part->files[e].path, w.width, w.height, &h, 0)) {
        m->failed = 1;
    }
}

/* The workers' contexts; with several GPU slots, each slot's in a thread of
 * its own, so that the GPUs start up together (a GPU's first context takes a
 * few hundred milliseconds, and a short run on two GPUs measured slower than
 * on one when they started one after the other). In an auto run on GPUs the
 * makers run in the background while the workers count on the CPU
 * (makers_finish joins them). */
typedef struct ctx_maker {
    const ih_cli_args *a;
    worker *workers;
    unsigned n_workers, step, first, threads_each;
    int rc;
} ctx_maker;

typedef struct ctx_makers {
    ctx_maker m[IH_MAX_GPU_SLOTS];
    pthread_t tid[IH_MAX_GPU_SLOTS];
    int started[IH_MAX_GPU_SLOTS];
    unsigned n;
} ctx_makers;

static void *make_slot_contexts(void *arg)
{
    ctx_maker *m = arg;
    for (unsigned i = m->first; i < m->n_workers && m->rc == IH_EXIT_OK; i += m->step) {
        m->rc = ih_make_context_on(m->a, m->threads_each, m->workers[i].device,
                                   &m->workers[i].ctx);
        if (m->rc == IH_EXIT_OK) {
            __atomic_store_n(&m->workers[i].ready, 1, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

/* Waits for the makers; the first failure's exit status, or IH_EXIT_OK. */
static int makers_finish(ctx_makers *mk)
{
    int rc = IH_EXIT_OK;
    for (unsigned j = 0; j < mk->n; j++) {
        if (mk->started[j]) {
            pthread_join(mk->tid[j], NULL);
            mk->started[j] = 0;
        }
        if (rc == IH_EXIT_OK) {
            rc = mk->m[j].rc;
        }
    }
    mk->n = 0;
    return rc;
}

/* Starts making the contexts; without `background`, returns when they are made. */
static int makers_start(ctx_makers *mk, const ih_cli_args *a, worker *workers,
                        unsigned n_workers, unsigned threads_each, const int *slots,
                        unsigned n_slots, int background)
{
    memset(mk, 0, sizeof *mk);
    mk->n = n_slots > 1 ? (n_slots < n_workers ? n_slots : n_workers) : 1;
    for (unsigned i = 0; i < n_workers; i++) {
        workers[i].device = n_slots > 0 ? slots[i % n_slots] : -1;
    }
    for (unsigned j = 0; j < mk->n; j++) {
        mk->m[j] = (ctx_maker){.a = a, .workers = workers, .n_workers = n_workers,
                               .step = mk->n, .first = j, .threads_each = threads_each,
                               .rc = IH_EXIT_OK};
        mk->started[j] = (background || mk->n > 1) &&
                         pthread_create(&mk->tid[j], NULL, make_slot_contexts, &mk->m[j]) == 0;
        if (!mk->started[j]) {
            make_slot_contexts(&mk->m[j]);
        }
    }
    return background ? IH_EXIT_OK : makers_finish(mk);
}

/*
 * An auto run without --gpus: which GPUs there are (CUDA's start, a quarter
 * of a second or more for each GPU) and their contexts, found and made in
 * the background while the workers count on the CPU; and only once the run
 * has gone on for IH_GPU_START_DELAY_S. CUDA's start takes a core for its
 * length, and a process that has begun it takes tens of milliseconds more
 * to end; the GPUs only pay off in a long run (an H100 host of 16 cores:
 * 64 PNGs 0.02 s on the CPU backend, 0.08-0.09 s with CUDA started and left
 * behind; 152 JPEGs 1.02-1.07 s against 1.23-1.32 s).
 */
#define IH_GPU_START_DELAY_S 1
#define IH_STR_(x) #x
#define IH_STR(x) IH_STR_(x)
#define START_DELAY_TEXT IH_STR(IH_GPU_START_DELAY_S) " s" /* as messages say it */

typedef struct gpu_starter {
    const ih_cli_args *a;
    worker *workers;
    unsigned n_workers, threads_each;
    int slots[IH_MAX_GPU_SLOTS];
    unsigned n_slots;
    ctx_makers makers;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished; /* under mu: the run is over, CUDA is not wanted */
    int begun;    /* under mu: start_gpus went on to start CUDA */
    int waited;   /* start_gpus found the run over before the delay */
    int done;     /* atomic: start_gpus has returned */
} gpu_starter;

int ih_batch_left_running;

/* Waits up to IH_GPU_START_DELAY_S for the run to finish; whether it goes
 * on. The tests set another delay through IMGHIST_TEST_GPU_START_DELAY_MS (0:
 * CUDA starts at once, so that a short run ends while it is starting). */
static int still_running_after_delay(gpu_starter *g)
{
    long ms = IH_GPU_START_DELAY_S * 1000L;
    const char *env = getenv("IMGHIST_TEST_GPU_START_DELAY_MS");
    if (env != NULL && *env >= '0' && *env <= '9') {
        ms = strtol(env, NULL, 10) % 100000;
    }
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&g->mu);
    while (!g->finished && pthread_cond_timedwait(&g->cv, &g->mu, &until) == 0) {
    }
    const int go = !g->finished;
    g->begun = go;
    pthread_mutex_unlock(&g->mu);
    return go;
}

static void *start_gpus(void *arg)
{
    gpu_starter *g = arg;
    char err[256];
    if (!still_running_after_delay(g)) {
        g->waited = 1;
    } else if (ih_device_slots(&g->a->scale, 0, ih_mpi.local_rank, ih_mpi.local_size,
                               g->slots, &g->n_slots, err, sizeof err) != 0) {
        g->n_slots = 0; /* not without --gpus; the workers stay on the CPU */
    }
    if (!g->waited && g->n_slots > 0) {
        (void)makers_start(&g->makers, g->a, g->workers, g->n_workers, g->threads_each,
                           g->slots, g->n_slots, 0);
    }
    __atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Tells the starter (if any) that the run is over; whether it had begun
 * CUDA's start. */
static int starter_stop(gpu_starter *g)
{
    if (g == NULL || !g->started) {
        return 0;
    }
    pthread_mutex_lock(&g->mu);
    g->finished = 1;
    const int begun = g->begun;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return begun;
}

/* Stops and waits for the starter (if any) and its makers (which have
 * finished when it has); whether it returned without starting CUDA (the run
 * was over before the delay). */
static int starter_join(gpu_starter *g)
{
    if (g == NULL || !g->started) {
        return 0;
    }
    (void)starter_stop(g);
    pthread_join(g->tid, NULL);
    g->started = 0;
    return g->waited;
}

/* starter_join, then frees it. */
static void starter_free(gpu_starter *g)
{
    if (g == NULL) {
        return;
    }
    (void)starter_join(g);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* "<lead>0,1": the first n slots' GPUs as the user numbers them (nothing
 * when n is 0). */
static void gpu_list(const ih_cli_args *a, const int *slots, unsigned n, const char *lead,
                     char *out, size_t len)
{
    out[0] = '\0';
    for (unsigned i = 0; i < n; i++) {
        const size_t at = strlen(out);
        snprintf(out + at, len - at, "%s%d", i ? "," : lead, ih_gpu_shown(&a->scale, slots[i]));
    }
}

/* An auto run on GPUs: every worker's CPU context, made now. */
static int make_cpu_contexts(const ih_cli_args *a, worker *workers, unsigned n_workers,
                             unsigned threads_each)
{
    ih_cli_args cpu = *a; /* read only, for the backend */
    cpu.backend = IMGHIST_BACKEND_CPU;
    for (unsigned i = 0; i < n_workers; i++) {
        const int rc = ih_make_context_on(&cpu, threads_each, -1, &workers[i].cpu);
        if (rc != IH_EXIT_OK) {
            return rc;
        }
    }
    return IH_EXIT_OK;
}

int ih_run_batch(const ih_cli_args *a)
{
    if (ih_mpi.active && (a->bins || a->has_range || a->native_depth || a->channels)) {
        if (ih_mpi.rank == 0) {
            ih_say("--bins, --range, --depth native and --channels do not run under mpirun yet "
                   "(use --shard and imghist merge)");
        }
        return IH_EXIT_USAGE;
    }
    ih_file_plan plan;
    char err[1024];
    if (ih_plan_files(a->inputs, a->n_inputs, a->recursive, a->equalize_out, &a->scale,
                      say_skipped, &plan) != 0) {
        ih_plan_free(&plan);
        return IH_EXIT_USAGE;
    }
    /* Under MPI, rank 0 writes the run's outputs for every rank. */
    const int root = ih_mpi.rank == 0;
    ih_file_list files = plan.mine;
    int slots[IH_MAX_GPU_SLOTS];
    unsigned n_slots = 0;
    /* auto: the workers count on the CPU while the GPUs start. Without
     * --gpus even finding them (CUDA's start) happens in the background;
     * --gpus is checked first, as a usage error must stop the run. */
    const int early_cpu = a->backend == IMGHIST_BACKEND_AUTO;
    const int find_late = early_cpu && a->scale.n_gpus == 0;
    const int bad_slots = !find_late &&
                          ih_device_slots(&a->scale, a->backend == IMGHIST_BACKEND_CPU,
                                          ih_mpi.local_rank, ih_mpi.local_size, slots, &n_slots,
                                          err, sizeof err) != 0;
    if (bad_slots) {
        ih_say("%s (see imghist --help)", err);
    }
    if (ih_mpi_max(bad_slots)) {
        ih_plan_free(&plan);
        return IH_EXIT_USAGE;
    }
    const unsigned cores = ih_cores() / (unsigned)ih_mpi.local_size;
    const unsigned jobs = a->jobs ? a->jobs : (cores > 0 ? cores : 1);
    const unsigned n_workers =
        files.count < jobs ? (files.count > 0 ? (unsigned)files.count : 1) : jobs;
    /* Fewer images than threads: the spare threads count within images. */
    const unsigned threads_each = jobs / n_workers > 0 ? jobs / n_workers : 1;

    worker *workers = calloc(n_workers, sizeof *workers);
    ih_gather *gather = NULL;
    batch b;
    memset(&b, 0, sizeof b);
    b.a = a;
    b.files = &files;
    b.window = 4 * (size_t)n_workers + 16;
    b.slots = calloc(b.window, sizeof *b.slots);
    /* The run's own outputs (CSV, JSON Lines, total): all or nothing. */
    ih_outputs outs = {0};
    FILE *csv = NULL, *json = NULL, *total_fp = NULL;
    int rc = IH_EXIT_OK;
    if (workers == NULL || b.slots == NULL) {
        ih_say("out of memory");
        rc = IH_EXIT_FILE;
    }
    /* The results are the same bits on the CPU and on a GPU. */
    const int early = early_cpu && (find_late || n_slots > 0);
    ctx_makers makers;
    memset(&makers, 0, sizeof makers);
    /* On the heap: a run done before CUDA has started leaves it running. */
    gpu_starter *starter = NULL;
    if (rc == IH_EXIT_OK && early) {
        rc = make_cpu_contexts(a, workers, n_workers, threads_each);
    }
    if (rc == IH_EXIT_OK && find_late) {
        /* Without the memory or the thread the run stays on the CPU, as with
         * no GPU. */
        if ((starter = malloc(sizeof *starter)) != NULL) {
            *starter = (gpu_starter){.a = a, .workers = workers, .n_workers = n_workers,
                                     .threads_each = threads_each};
            pthread_mutex_init(&starter->mu, NULL);
            pthread_cond_init(&starter->cv, NULL);
            starter->started = pthread_create(&starter->tid, NULL, start_gpus, starter) == 0;
        }
    } else if (rc == IH_EXIT_OK) {
        rc = makers_start(&makers, a, workers, n_workers, threads_each, slots, n_slots, early);
    }
    if (rc == IH_EXIT_OK && ih_verbosity > 0) {
        char where[160] = "", ranks[64] = "";
        int dev = -1;
        if (!early) {
            imghist_get_device(workers[0].ctx, &dev);
        }
        if (early || dev >= 0) {
            gpu_list(a, slots, n_slots < n_workers ? n_slots : n_workers, " on GPU ", where,
                     sizeof where);
        }
        if (ih_mpi.active) {
            snprintf(ranks, sizeof ranks, "rank %d of %d: ", ih_mpi.rank, ih_mpi.size);
        }
        ih_say("%sbackend: %s%s%s, %u threads, %zu images, %zu files skipped", ranks,
               early ? "auto" : imghist_backend_name(imghist_get_backend(workers[0].ctx)),
               where,
               find_late ? " (the CPU; from " START_DELAY_TEXT " on, any usable GPU too)"
               : early   ? " (the CPU until it is up)"
                         : "",
               n_workers, files.count, files.skipped);
    }
    /* Under MPI every rank keeps its records for rank 0. */
    if (rc == IH_EXIT_OK && ih_mpi.active && (a->csv_out != NULL || a->json_out != NULL) &&
        (gather = ih_gather_new(sizeof(wire_record))) == NULL) {
        rc = IH_EXIT_FILE;
    }
    FILE **files_for[3] = {&csv, &json, &total_fp};
    const char *paths_for[3] = {a->csv_out, a->json_out, a->total_out};
    for (int i = 0; i < 3 && rc == IH_EXIT_OK && root; i++) {
        if (paths_for[i] != NULL &&
            (*files_for[i] = ih_outputs_open(&outs, paths_for[i], err, sizeof err)) == NULL) {
            ih_say("%s", err);
            rc = IH_EXIT_FILE;
        }
    }
    rc = ih_mpi_max(rc); /* every rank sets out, or none */
    if (rc != IH_EXIT_OK) {
        ih_outputs_abort(&outs);
        starter_free(starter);
        makers_finish(&makers);
        for (unsigned i = 0; workers != NULL && i < n_workers; i++) {
            imghist_destroy(workers[i].ctx);
            imghist_destroy(workers[i].cpu);
        }
        free(workers);
        free(b.slots);
        ih_gather_free(gather);
        ih_plan_free(&plan);
        return rc;
    }
    if (csv != NULL) {
        ih_write_csv_header_with_file(csv, a->channels);
    }

    ih_progress progress;
    ih_progress_start(&progress, ih_verbosity >= 0 && !ih_mpi.active);
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.done_cv, NULL);
    pthread_cond_init(&b.space_cv, NULL);
    for (unsigned i = 0; i < n_workers; i++) {
        workers[i].b = &b;
        workers[i].started = pthread_create(&workers[i].tid, NULL, work, &workers[i]) == 0;
    }
    unsigned started = 0;
    for (unsigned i = 0; i < n_workers; i++) {
        started += workers[i].started != 0;
    }
    if (started == 0) {
        /* Nothing would take the images; the output files are not created. */
        ih_say("cannot start a worker thread: %s", strerror(EAGAIN));
        b.stop = 1;
    }

    ih_hist_out total = {0}; /* the first image's binning; every later one must match */
    size_t processed = 0, failed = 0, emitted = 0;
    int write_failed = 0;
    for (size_t e = 0; e < files.count; e++) {
        pthread_mutex_lock(&b.mu);
        if (!wait_for(&b, e, &progress)) {
            pthread_mutex_unlock(&b.mu);
            break;
        }
        result r = b.slots[e % b.window];
        b.slots[e % b.window].done = 0;
        b.slots[e % b.window].hist.counts = NULL; /* now r's */
        b.next_emit = e + 1;
        pthread_cond_broadcast(&b.space_cv);
        pthread_mutex_unlock(&b.mu);

        emitted++;
        const char *path = files.files[e].path;
        if (r.status != IMGHIST_OK) {
            failed++;
            ih_progress_clear(&progress);
            ih_say("%s", r.msg);
        } else {
            processed++;
            if (r.truncated && ih_verbosity >= 0) {
                ih_progress_clear(&progress);
                ih_say("warning: %s: %s", path, IH_TRUNCATED_WARNING);
            }
            if (a->total_out != NULL && add_to_total(&total, &r.hist, path, &progress) != 0) {
                failed++;
            }
            if (gather == NULL && write_records(csv, json, path, r.width, r.height, &r.hist,
                                                a->channels)) {
                write_failed = 1;
            }
        }
        if (gather != NULL) {
            wire_record w;
            memset(&w, 0, sizeof w);
            w.status = r.status;
            w.width = r.width;
            w.height = r.height;
            if (r.status == IMGHIST_OK) {
                memcpy(w.counts, r.hist.counts, sizeof w.counts);
            }
            if (ih_gather_put(gather, &w) != 0) {
                write_failed = 1;
            }
        }
        ih_hist_out_free(&r.hist);
        ih_progress_update(&progress, emitted, files.count, 0);
    }
    size_t on_cpu = 0, on_ctx = 0;
    for (unsigned i = 0; i < n_workers; i++) {
        if (workers[i].started) {
            pthread_join(workers[i].tid, NULL);
        }
        on_cpu += workers[i].on_cpu;
        on_ctx += workers[i].on_ctx;
    }
    /* Every image done before CUDA has started (a small folder, on the CPU):
     * the run ends without waiting for it. The starter keeps the workers and
     * the arguments; ih_batch_left_running tells main to end the process
     * without freeing them (batch.h). Under MPI every rank finishes in step. */
    const int leave = starter_stop(starter) && !ih_mpi.active &&
                      !__atomic_load_n(&starter->done, __ATOMIC_ACQUIRE);
    /* over before the delay: CUDA never started */
    const int cuda_skipped = !leave && starter_join(starter);
    /* A maker that failed left its workers on the CPU. */
    (void)makers_finish(&makers);
    if (starter != NULL && !leave) {
        n_slots = starter->n_slots;
        memcpy(slots, starter->slots, sizeof slots);
    }
    int gpu_ran = 0; /* an auto context on a GPU that failed is a CPU one */
    for (unsigned i = 0; i < n_workers; i++) {
        if (!leave) { /* leaving: the makers may still be making them */
            gpu_ran |= workers[i].ctx != NULL &&
                       imghist_get_backend(workers[i].ctx) == IMGHIST_BACKEND_CUDA;
            imghist_destroy(workers[i].ctx);
        }
        imghist_destroy(workers[i].cpu);
    }
    ih_progress_update(&progress, emitted, files.count, 1);
    ih_progress_clear(&progress);

    int sig = ih_stop_signal();
    size_t all_count = files.count;
    if (ih_mpi.active) {
        /* Every rank's counts into rank 0; the records when every rank has
         * all of its own (none stopped early, none failed to keep them). */
        sig = ih_mpi_max(sig);
        const int complete = ih_mpi_max(emitted != files.count || write_failed) == 0;
        uint64_t counts[3] = {processed, failed, emitted};
        if (total.counts == NULL) { /* a rank with no image adds zeros */
            uint64_t *zeros = calloc(IH_WIRE_COUNTS, sizeof *zeros);
            if (zeros == NULL) {
                write_failed = 1;
            } else {
                total = default_hist(zeros);
            }
        }
        if (total.counts != NULL) {
            ih_mpi_sum_to_root(total.counts, IH_WIRE_COUNTS);
        }
        ih_mpi_sum_to_root(counts, 3);
        processed = (size_t)counts[0];
        failed = (size_t)counts[1];
        emitted = (size_t)counts[2];
        all_count = plan.part.count;
        if (gather != NULL && complete && sig == 0) {
            merged_out m = {csv, json, &plan.part, 0};
            if (ih_gather_run(gather, plan.owner, plan.part.count, emit_merged, &m) != 0 ||
                m.failed) {
                write_failed = 1;
            }
        } else if (!complete) {
            write_failed = 1;
        }
    }
    if (total_fp != NULL && total.counts != NULL && ih_write_csv(total_fp, &total) != 0) {
        write_failed = 1;
    }
    /* --plot with --total: the total's picture, one of the run's outputs. */
    ih_plot total_plot = {"total of the run", &total, NULL, a->log_scale, 0};
    if (root && a->plot != NULL && total.counts != NULL && !write_failed && sig == 0) {
        (void)ih_plot_kind(a->plot, &total_plot.svg, err, sizeof err); /* checked with the options */
        if (ih_outputs_stage(&outs, a->plot, ih_write_plot, &total_plot, err, sizeof err) != 0) {
            ih_say("%s", err);
            write_failed = 1;
        }
    }
    ih_hist_out_free(&total);
    if (sig != 0) {
        ih_outputs_abort(&outs); /* a CSV of part of the run would look complete */
        rc = 128 + sig;
    } else if (write_failed) {
        if (root) ih_say("a write to the CSV, JSON or total output failed");
        ih_outputs_abort(&outs);
        rc = IH_EXIT_FILE;
    } else if (ih_outputs_commit(&outs, err, sizeof err) != 0) {
        ih_say("%s", err);
        rc = IH_EXIT_FILE;
    } else if (failed > 0) {
        rc = IH_EXIT_FILE;
    }
    if (ih_mpi.active) {
        rc = ih_mpi_max(rc); /* exit status 1 on any failure anywhere */
    }
    if (ih_verbosity >= 0 && root) {
        const double secs = ih_now() - progress.start;
        char stopped[96] = "";
        if (sig != 0) {
            snprintf(stopped, sizeof stopped, "; interrupted after %zu of %zu images", emitted,
                     all_count);
        }
        char shard[96] = "";
        if (a->scale.shard_n > 0) {
            snprintf(shard, sizeof shard, " (shard %u of %u)", a->scale.shard_k, a->scale.shard_n);
        }
        if (ih_mpi.active) {
            const size_t at = strlen(shard);
            snprintf(shard + at, sizeof shard - at, " (%d MPI ranks)", ih_mpi.size);
        }
        ih_say("%zu images%s in %.2f s (%.1f images/s): %zu processed, %zu failed, %zu skipped%s",
               all_count, shard, secs, secs > 0 ? (double)emitted / secs : 0.0, processed, failed,
               files.skipped, stopped);
    }
    if (cuda_skipped && ih_verbosity > 0) {
        ih_say("every image ran on the CPU: the run was over before auto starts the GPUs "
               "(after " START_DELAY_TEXT ")");
    } else if (leave && ih_verbosity > 0) {
        ih_say("%zu images counted on the CPU and %zu on a GPU; done before CUDA had started "
               "the rest, without waiting for it", on_cpu, on_ctx);
    } else if (early && gpu_ran && ih_verbosity > 0) {
        char where[160] = "";
        gpu_list(a, slots, n_slots < n_workers ? n_slots : n_workers, "", where, sizeof where);
        ih_say("%s%zu images counted on the CPU (while the GPUs started, or smaller than %zu "
               "MiB), %zu on GPU %s", ih_mpi.active ? "this rank: " : "", on_cpu,
               IH_GPU_MIN_BYTES >> 20, on_ctx, where);
    } else if (early && ih_verbosity > 0) {
        ih_say("%sno usable GPU: every image ran on the CPU", ih_mpi.active ? "this rank: " : "");
    }
    pthread_cond_destroy(&b.done_cv);
    pthread_cond_destroy(&b.space_cv);
    pthread_mutex_destroy(&b.mu);
    if (leave) {
        ih_batch_left_running = 1; /* workers and starter stay theirs */
    } else {
        free(workers);
        starter_free(starter);
    }
    free(b.slots);
    ih_gather_free(gather);
    ih_plan_free(&plan);
    return rc;
}
