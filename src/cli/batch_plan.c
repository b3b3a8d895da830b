/*
 * A batch run's plan: how many workers, how many threads each, which GPU
 * each takes, and their library contexts. An auto run counts on the CPU at
 * once and moves to the GPUs once their contexts are made in the background.
 */
#define _POSIX_C_SOURCE 200809L
#include "batch_run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_context.h"
#include "parallel.h"

#define IH_STR_(x) #x
#define IH_STR(x) IH_STR_(x)
#define START_DELAY_TEXT IH_STR(IH_GPU_START_DELAY_S) " s" /* as messages say it */

/* The workers' contexts, one task per GPU slot, so that the GPUs start up
 * together (a GPU's first context takes a few hundred milliseconds). */
typedef struct ctx_makers {
    const ih_cli_args *a;
    ih_worker *workers;
    unsigned n_workers, n, threads_each;
    int rc[IH_MAX_GPU_SLOTS];
} ctx_makers;

/* Slot j's workers: j, j + n, ... */
static void make_slot_contexts(void *arg, size_t j)
{
    ctx_makers *m = arg;
    m->rc[j] = IH_EXIT_OK;
    for (size_t i = j; i < m->n_workers && m->rc[j] == IH_EXIT_OK; i += m->n) {
        m->rc[j] = ih_make_context_on(m->a, m->threads_each, m->workers[i].device,
                                      &m->workers[i].ctx);
        if (m->rc[j] == IH_EXIT_OK) {
            __atomic_store_n(&m->workers[i].ready, 1, __ATOMIC_RELEASE);
        }
    }
}

/* Makes every worker's context on its slot's GPU; the first failure's exit
 * status, or IH_EXIT_OK. */
static int make_contexts(const ih_cli_args *a, ih_worker *workers, unsigned n_workers,
                         unsigned threads_each, const int *slots, unsigned n_slots)
{
    ctx_makers m = {.a = a, .workers = workers, .n_workers = n_workers,
                    .threads_each = threads_each};
    m.n = n_slots > 1 ? (n_slots < n_workers ? n_slots : n_workers) : 1;
    for (unsigned i = 0; i < n_workers; i++) {
        workers[i].device = n_slots > 0 ? slots[i % n_slots] : -1;
    }
    (void)ih_parallel_for(m.n, m.n, make_slot_contexts, &m);
    for (unsigned j = 0; j < m.n; j++) {
        if (m.rc[j] != IH_EXIT_OK) {
            return m.rc[j];
        }
    }
    return IH_EXIT_OK;
}

/*
 * An auto run on GPUs: their contexts are made on a thread of their own
 * while the workers count on the CPU. This thread runs beside the workers'
 * fork-join rather than inside it, and a run that is over before CUDA has
 * started leaves it running (the process ends without waiting for CUDA), so
 * it is a thread of its own, not a task.
 *
 * Without --gpus even finding the GPUs (CUDA's start, a quarter of a second
 * or more for each GPU) waits until the run has gone on for
 * IH_GPU_START_DELAY_S: CUDA's start takes a core for its length, and a
 * process that has begun it takes longer to end; the GPUs only pay off in a
 * long run.
 */
struct ih_gpu_starter {
    const ih_cli_args *a;
    ih_worker *workers;
    unsigned n_workers, threads_each;
    int find; /* without --gpus: find the GPUs after the delay */
    int slots[IH_MAX_GPU_SLOTS];
    unsigned n_slots;
    pthread_t tid;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished; /* under mu: the run is over, CUDA is not wanted */
    int begun;    /* under mu: start_gpus went on to start CUDA */
    int waited;   /* start_gpus found the run over before the delay */
    int done;     /* atomic: start_gpus has returned */
};

int ih_batch_left_running;

/* Waits up to the delay for the run to finish; whether it goes on. */
static int still_running_after_delay(ih_gpu_starter *g)
{
    const long ms = ih_gpu_start_delay_ms();
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
    ih_gpu_starter *g = arg;
    char err[256];
    if (g->find && !still_running_after_delay(g)) {
        g->waited = 1;
    } else if (g->find &&
               ih_device_slots(&g->a->scale, 0, ih_mpi.local_rank, ih_mpi.local_size, g->slots,
                               &g->n_slots, err, sizeof err) != 0) {
        g->n_slots = 0; /* not without --gpus; the workers stay on the CPU */
    }
    if (!g->waited && g->n_slots > 0) {
        /* A context that cannot be made leaves its workers on the CPU. */
        (void)make_contexts(g->a, g->workers, g->n_workers, g->threads_each, g->slots,
                            g->n_slots);
    }
    __atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Tells the starter (if any) that the run is over; whether it had begun
 * CUDA's start after the delay. */
static int starter_stop(ih_gpu_starter *g)
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

/* Stops and waits for the starter (if any); whether it returned without
 * starting CUDA (the run was over before the delay). */
static int starter_join(ih_gpu_starter *g)
{
    if (g == NULL || !g->started) {
        return 0;
    }
    (void)starter_stop(g);
    pthread_join(g->tid, NULL);
    g->started = 0;
    return g->waited;
}

static void starter_free(ih_gpu_starter *g)
{
    if (g == NULL) {
        return;
    }
    (void)starter_join(g);
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Starts the starter; without the memory or the thread, the GPUs the run
 * names get their contexts now and a run that would find them stays on the
 * CPU, as with no GPU. */
static void starter_start(ih_batch_plan *p)
{
    ih_gpu_starter *g = malloc(sizeof *g);
    if (g != NULL) {
        *g = (ih_gpu_starter){.a = p->a, .workers = p->workers, .n_workers = p->n_workers,
                              .threads_each = p->threads_each, .find = p->find_late,
                              .n_slots = p->n_slots};
        memcpy(g->slots, p->slots, sizeof g->slots);
        pthread_mutex_init(&g->mu, NULL);
        pthread_cond_init(&g->cv, NULL);
        g->started = pthread_create(&g->tid, NULL, start_gpus, g) == 0;
        if (g->started || p->find_late) {
            p->starter = g;
            return;
        }
        starter_free(g);
    }
    if (!p->find_late) {
        (void)make_contexts(p->a, p->workers, p->n_workers, p->threads_each, p->slots,
                            p->n_slots);
    }
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
static int make_cpu_contexts(const ih_batch_plan *p)
{
    ih_cli_args cpu = *p->a; /* read only, for the backend */
    cpu.backend = IMGHIST_BACKEND_CPU;
    for (unsigned i = 0; i < p->n_workers; i++) {
        const int rc = ih_make_context_on(&cpu, p->threads_each, -1, &p->workers[i].cpu);
        if (rc != IH_EXIT_OK) {
            return rc;
        }
    }
    return IH_EXIT_OK;
}

int ih_plan_workers(ih_batch_plan *p, const ih_cli_args *a, const ih_file_list *files)
{
    const size_t n_files = files->count;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n_files; i++) {
        bytes += files->files[i].size;
    }
    memset(p, 0, sizeof *p);
    p->a = a;
    char err[1024];
    /* auto: the workers count on the CPU while the GPUs start. Without
     * --gpus even finding them (CUDA's start) happens in the background;
     * --gpus is checked first, as a usage error must stop the run. */
    const int early_cpu = a->backend == IMGHIST_BACKEND_AUTO;
    p->find_late = early_cpu && a->scale.n_gpus == 0;
    const int bad_slots = !p->find_late &&
                          ih_device_slots(&a->scale, a->backend == IMGHIST_BACKEND_CPU,
                                          ih_mpi.local_rank, ih_mpi.local_size, p->slots,
                                          &p->n_slots, err, sizeof err) != 0;
    if (bad_slots) {
        ih_say("%s (see imghist --help)", err);
    }
    if (ih_mpi_max(bad_slots)) {
        return IH_EXIT_USAGE;
    }
    const unsigned cores = ih_cores() / (unsigned)ih_mpi.local_size;
    const unsigned jobs = a->jobs ? a->jobs : (cores > 0 ? cores : 1);
    p->n_workers = n_files < jobs ? (n_files > 0 ? (unsigned)n_files : 1) : jobs;
    /* Fewer images than threads: the spare threads count within images. */
    p->threads_each = jobs / p->n_workers > 0 ? jobs / p->n_workers : 1;
    if (ih_gpu_decoder_start(a, n_files, bytes, p->n_workers, &p->gpu, err, sizeof err) != 0) {
        ih_say("%s", err);
        return ih_mpi_max(IH_EXIT_FILE);
    }
    if (p->gpu != NULL) {
        /* JPEGs decoded on the GPU are counted there; the workers count the
         * rest on the CPU, and those beyond -j only wait on the GPU. */
        const size_t more = ih_gpu_extra_workers(p->gpu);
        const size_t all = n_files < p->n_workers + more ? n_files : p->n_workers + more;
        p->n_workers = all > p->n_workers ? (unsigned)all : p->n_workers;
        if (p->n_workers > IH_PARALLEL_MAX_THREADS) {
            p->n_workers = IH_PARALLEL_MAX_THREADS;
        }
        p->find_late = 0;
        p->n_slots = 0;
    }
    p->workers = calloc(p->n_workers, sizeof *p->workers);
    int rc = IH_EXIT_OK;
    if (p->workers == NULL) {
        ih_say("out of memory");
        rc = IH_EXIT_FILE;
    }
    /* The results are the same bits on the CPU and on a GPU. */
    p->early = early_cpu && (p->find_late || p->n_slots > 0);
    ih_cli_args cpu = *a; /* read only, for the backend */
    cpu.backend = IMGHIST_BACKEND_CPU;
    if (rc == IH_EXIT_OK && p->early) {
        rc = make_cpu_contexts(p);
    }
    if (rc == IH_EXIT_OK && p->early) {
        starter_start(p);
    } else if (rc == IH_EXIT_OK) {
        rc = make_contexts(p->gpu != NULL ? &cpu : a, p->workers, p->n_workers, p->threads_each,
                           p->slots, p->n_slots);
    }
    return ih_mpi_max(rc); /* every rank goes on, or none */
}

void ih_plan_say_backend(const ih_batch_plan *p, size_t n_images, size_t skipped)
{
    if (ih_verbosity <= 0) {
        return;
    }
    char where[160] = "", ranks[64] = "";
    int dev = -1;
    if (!p->early) {
        imghist_get_device(p->workers[0].ctx, &dev);
    }
    if (p->early || dev >= 0) {
        gpu_list(p->a, p->slots, p->n_slots < p->n_workers ? p->n_slots : p->n_workers,
                 " on GPU ", where, sizeof where);
    }
    if (ih_mpi.active) {
        snprintf(ranks, sizeof ranks, "rank %d of %d: ", ih_mpi.rank, ih_mpi.size);
    }
    ih_say("%sbackend: %s%s%s, %u threads, %zu images, %zu files skipped", ranks,
           p->early ? "auto" : imghist_backend_name(imghist_get_backend(p->workers[0].ctx)),
           where,
           !IMGHIST_WITH_CUDA ? (p->early ? " (the CPU: this build has no CUDA backend)" : "")
           : p->find_late     ? " (the CPU; from " START_DELAY_TEXT " on, any usable GPU too)"
           : p->early         ? " (the CPU until it is up)"
                              : "",
           p->n_workers, n_images, skipped);
}

int ih_plan_finish(ih_batch_plan *p, int *cuda_skipped)
{
    ih_gpu_starter *g = p->starter;
    /* Every image done before CUDA has started (a small folder, on the CPU):
     * the run ends without waiting for it. The starter keeps the workers and
     * the arguments; ih_batch_left_running tells main to end the process
     * without freeing them (batch.h). Under MPI every rank finishes in step. */
    const int leave =
        starter_stop(g) && !ih_mpi.active && !__atomic_load_n(&g->done, __ATOMIC_ACQUIRE);
    *cuda_skipped = !leave && starter_join(g);
    if (g != NULL && !leave) {
        p->n_slots = g->n_slots;
        memcpy(p->slots, g->slots, sizeof p->slots);
    }
    return leave;
}

int ih_plan_destroy_contexts(ih_batch_plan *p, int leave)
{
    int gpu_ran = 0; /* an auto context on a GPU that failed is a CPU one */
    for (unsigned i = 0; p->workers != NULL && i < p->n_workers; i++) {
        if (!leave) { /* leaving: the starter may still be making them */
            gpu_ran |= p->workers[i].ctx != NULL &&
                       imghist_get_backend(p->workers[i].ctx) == IMGHIST_BACKEND_CUDA;
            imghist_destroy(p->workers[i].ctx);
        }
        imghist_destroy(p->workers[i].cpu);
    }
    return gpu_ran;
}

void ih_plan_say_devices(const ih_batch_plan *p, int leave, int cuda_skipped, int gpu_ran)
{
    if (ih_verbosity <= 0) {
        return;
    }
    size_t on_cpu = 0, on_ctx = 0;
    for (unsigned i = 0; i < p->n_workers; i++) {
        on_cpu += p->workers[i].on_cpu;
        on_ctx += p->workers[i].on_ctx;
    }
    if (!IMGHIST_WITH_CUDA) {
        return; /* the backend line said why: no GPU to speak of */
    }
    if (cuda_skipped) {
        ih_say("every image ran on the CPU: the run was over before auto starts the GPUs "
               "(after " START_DELAY_TEXT ")");
    } else if (leave) {
        ih_say("%zu images counted on the CPU and %zu on a GPU; done before CUDA had started "
               "the rest, without waiting for it", on_cpu, on_ctx);
    } else if (p->early && gpu_ran) {
        char where[160] = "";
        gpu_list(p->a, p->slots, p->n_slots < p->n_workers ? p->n_slots : p->n_workers, "",
                 where, sizeof where);
        ih_say("%s%zu images counted on the CPU (while the GPUs started, or smaller than %zu "
               "MiB), %zu on GPU %s", ih_mpi.active ? "this rank: " : "", on_cpu,
               IH_GPU_MIN_BYTES >> 20, on_ctx, where);
    } else if (p->early) {
        ih_say("%sno usable GPU: every image ran on the CPU", ih_mpi.active ? "this rank: " : "");
    }
}

void ih_plan_free_workers(ih_batch_plan *p, int leave)
{
    if (ih_gpu_decoder_stop(p->gpu)) {
        ih_batch_left_running = 1; /* nvJPEG still opening: main ends with _exit */
    }
    p->gpu = NULL;
    if (leave) {
        ih_batch_left_running = 1; /* the workers and the starter stay theirs */
        return;
    }
    starter_free(p->starter);
    free(p->workers);
    p->starter = NULL;
    p->workers = NULL;
}

void ih_plan_abort(ih_batch_plan *p)
{
    starter_free(p->starter);
    p->starter = NULL;
    (void)ih_plan_destroy_contexts(p, 0);
    ih_plan_free_workers(p, 0);
}
