#define _POSIX_C_SOURCE 200809L
#include "file_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parallel.h"

typedef struct pool {
    const ih_pool_job *job;
    unsigned char *slots;   /* window * slot_size */
    unsigned char *done;    /* window flags: the slot holds a result */
    size_t next_take, next_emit, finished;
    int emitting;           /* a worker is handing results on */
    int stopped;            /* no more items are taken */
    unsigned running;       /* workers not yet returned */
    pthread_mutex_t mu;
    pthread_cond_t space_cv; /* a slot was freed, or the run stopped */
    pthread_cond_t watch_cv; /* a worker returned */
} pool;

typedef struct worker_arg {
    pool *p;
    unsigned index;
} worker_arg;

static void *slot_at(const pool *p, size_t item)
{
    return p->slots + (item % p->job->window) * p->job->slot_size;
}

/* Hands on the done results at the head of the window, unless another
 * worker is at it; called and returns with p->mu held. */
static void emit_ready(pool *p)
{
    const ih_pool_job *job = p->job;
    while (!p->emitting && p->next_emit < p->next_take && p->done[p->next_emit % job->window]) {
        const size_t e = p->next_emit;
        if (job->emit != NULL) {
            p->emitting = 1;
            pthread_mutex_unlock(&p->mu);
            job->emit(job->user, e, slot_at(p, e));
            pthread_mutex_lock(&p->mu);
            p->emitting = 0;
        }
        p->done[e % job->window] = 0;
        p->next_emit = e + 1;
        pthread_cond_broadcast(&p->space_cv);
    }
}

static int stopping(pool *p)
{
    if (!p->stopped && p->job->stop != NULL && p->job->stop(p->job->user)) {
        p->stopped = 1;
    }
    return p->stopped;
}

/* One worker: items in list order until there are none or the run stops. */
static void work(pool *p, unsigned index)
{
    const ih_pool_job *job = p->job;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->next_take < job->items && p->next_take >= p->next_emit + job->window &&
               !stopping(p)) {
            pthread_cond_wait(&p->space_cv, &p->mu);
        }
        if (stopping(p) || p->next_take >= job->items) {
            break;
        }
        const size_t k = p->next_take++;
        void *slot = slot_at(p, k);
        pthread_mutex_unlock(&p->mu);
        memset(slot, 0, job->slot_size);
        job->process(job->user, index, k, slot);
        pthread_mutex_lock(&p->mu);
        p->done[k % job->window] = 1;
        p->finished++;
        emit_ready(p);
    }
    pthread_mutex_unlock(&p->mu);
}

static void *worker_main(void *arg)
{
    const worker_arg *w = arg;
    pool *p = w->p;
    work(p, w->index);
    pthread_mutex_lock(&p->mu);
    p->running--;
    pthread_cond_signal(&p->watch_cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* CLOCK_MONOTONIC plus ms. */
static struct timespec after_ms(unsigned ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

/* The calling thread while the workers run: ticks, and the stop they ask. */
static void watch(pool *p)
{
    const ih_pool_job *job = p->job;
    const unsigned ms = job->tick_ms > 0 ? job->tick_ms : 100;
    pthread_mutex_lock(&p->mu);
    while (p->running > 0) {
        /* After a tick asked to stop, the caller hears nothing more: the
         * workers finish what they hold, unticked. */
        if (job->tick == NULL || p->stopped) {
            pthread_cond_wait(&p->watch_cv, &p->mu);
            continue;
        }
        const struct timespec until = after_ms(ms);
        while (p->running > 0 &&
               pthread_cond_timedwait(&p->watch_cv, &p->mu, &until) != ETIMEDOUT) {
        }
        if (p->running == 0) {
            break;
        }
        const size_t finished = p->finished;
        pthread_mutex_unlock(&p->mu);
        const int stop = job->tick(job->user, finished, job->items);
        pthread_mutex_lock(&p->mu);
        if (stop) {
            p->stopped = 1;
            pthread_cond_broadcast(&p->space_cv);
        }
    }
    pthread_mutex_unlock(&p->mu);
}

int ih_pool_run(const ih_pool_job *job, size_t *taken)
{
    *taken = 0;
    pool p;
    memset(&p, 0, sizeof p);
    p.job = job;
    p.slots = calloc(job->window, job->slot_size);
    p.done = calloc(job->window, 1);
    unsigned n = job->workers > 0 ? job->workers : 1;
    if (n > IH_PARALLEL_MAX_THREADS) {
        n = IH_PARALLEL_MAX_THREADS;
    }
    pthread_t *tid = malloc(n * sizeof *tid);
    worker_arg *args = malloc(n * sizeof *args);
    if (p.slots == NULL || p.done == NULL || tid == NULL || args == NULL) {
        free(p.slots);
        free(p.done);
        free(tid);
        free(args);
        return -1;
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.space_cv, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&p.watch_cv, &attr);
    pthread_condattr_destroy(&attr);
    unsigned started = 0;
    pthread_mutex_lock(&p.mu);
    for (unsigned i = 0; i < n; i++) {
        args[started] = (worker_arg){&p, started};
        if (pthread_create(&tid[started], NULL, worker_main, &args[started]) == 0) {
            started++;
            p.running++;
        }
    }
    pthread_mutex_unlock(&p.mu);
    if (started == 0) {
        work(&p, 0); /* no thread: the items run here */
    } else {
        watch(&p);
    }
    for (unsigned i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
    }
    *taken = p.next_take;
    pthread_cond_destroy(&p.watch_cv);
    pthread_cond_destroy(&p.space_cv);
    pthread_mutex_destroy(&p.mu);
    free(p.slots);
    free(p.done);
    free(tid);
    free(args);
    return 0;
}
