#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct {
    atomic_size_t next;
    size_t tasks;
    void (*fn)(void *arg, size_t task);
    void *arg;
} pool_run;

static void take_tasks(pool_run *run)
{
    for (;;) {
        const size_t t = atomic_fetch_add(&run->next, 1);
        if (t >= run->tasks) {
            return;
        }
        run->fn(run->arg, t);
    }
}

/*
 * Threads kept between calls: starting a thread costs tens of microseconds,
 * as much as a small image's whole count or the checks of a list of tens of
 * thousands of views. One caller at a time uses them (a call made while
 * they are busy, from a task or another thread, starts its own threads as
 * before). Workers sleep between jobs, and a job's caller returns once every
 * worker that joined it is done: late wakers join no closed job, so no
 * worker holds the caller's run after it returns. The process's exit or the
 * library's unloading stops and joins them (pool_stop); a forked child
 * starts a pool of its own.
 */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    pthread_t tid[IH_PARALLEL_MAX_THREADS - 1];
    unsigned workers;         /* started and running */
    bool in_use;              /* a caller holds the pool */
    bool stopping;
    unsigned long generation; /* one more every job */
    pool_run *run;            /* the open job; NULL when closed */
    unsigned want, joined;    /* workers the job asks for, workers that took it */
    unsigned busy;            /* workers of the job still taking tasks */
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER,
           .wake = PTHREAD_COND_INITIALIZER,
           .done = PTHREAD_COND_INITIALIZER};

static void *worker(void *unused)
{
    (void)unused;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (!pool.stopping &&
               (pool.run == NULL || pool.generation == seen || pool.joined >= pool.want)) {
            pthread_cond_wait(&pool.wake, &pool.lock);
        }
        if (pool.stopping) {
            break;
        }
        seen = pool.generation;
        pool_run *run = pool.run;
        pool.joined++;
        pool.busy++;
        pthread_mutex_unlock(&pool.lock);
        take_tasks(run);
        pthread_mutex_lock(&pool.lock);
        if (--pool.busy == 0) {
            pthread_cond_signal(&pool.done);
        }
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.stopping = true;
    pthread_cond_broadcast(&pool.wake);
    const unsigned n = pool.workers;
    pool.workers = 0;
    pthread_mutex_unlock(&pool.lock);
    for (unsigned i = 0; i < n; i++) {
        pthread_join(pool.tid[i], NULL);
    }
}

/* The child of a fork has none of the parent's workers. */
static void pool_forget(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.workers = 0;
    pool.in_use = false;
    pool.run = NULL;
    pool.want = pool.joined = pool.busy = 0;
}

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_init(void)
{
    (void)pthread_atfork(NULL, NULL, pool_forget);
}

/* Hold the pool with up to `extra` workers; the number it has, 0 when it is
 * in use (or none can start). */
static unsigned pool_hold(unsigned extra)
{
    pthread_once(&pool_once, pool_init);
    pthread_mutex_lock(&pool.lock);
    if (pool.in_use || pool.stopping) {
        pthread_mutex_unlock(&pool.lock);
        return 0;
    }
    pool.in_use = true;
    while (pool.workers < extra &&
           pthread_create(&pool.tid[pool.workers], NULL, worker, NULL) == 0) {
        pool.workers++;
    }
    const unsigned n = pool.workers < extra ? pool.workers : extra;
    if (n == 0) {
        pool.in_use = false;
    }
    pthread_mutex_unlock(&pool.lock);
    return n;
}

/* Run `run` on this thread and n of the pool's; the threads that ran it. */
static unsigned pool_run_job(pool_run *run, unsigned n)
{
    pthread_mutex_lock(&pool.lock);
    pool.generation++;
    pool.run = run;
    pool.want = n;
    pool.joined = pool.busy = 0;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    take_tasks(run);
    pthread_mutex_lock(&pool.lock);
    pool.run = NULL; /* closed: no worker joins it any more */
    while (pool.busy > 0) {
        pthread_cond_wait(&pool.done, &pool.lock);
    }
    const unsigned ran = pool.joined + 1;
    pool.in_use = false;
    pthread_mutex_unlock(&pool.lock);
    return ran;
}

/* Threads of this call's own, for a call made while the pool is held. */
static void *own_thread(void *p)
{
    take_tasks(p);
    return NULL;
}

static unsigned own_threads(pool_run *run, size_t extra)
{
    /* A thread array that cannot be allocated means no extra threads: the
     * tasks still all run here. */
    pthread_t *tid = malloc(extra * sizeof *tid);
    unsigned started = 0;
    for (size_t i = 0; tid != NULL && i < extra; i++) {
        started += pthread_create(&tid[started], NULL, own_thread, run) == 0;
    }
    take_tasks(run);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
    }
    free(tid);
    return started + 1;
}

unsigned ih_parallel_for(size_t tasks, unsigned threads, void (*fn)(void *arg, size_t task),
                         void *arg)
{
    if (tasks == 0) {
        return 0;
    }
    pool_run run = {.tasks = tasks, .fn = fn, .arg = arg};
    atomic_init(&run.next, 0);
    size_t extra = threads > 1 ? threads - 1 : 0;
    if (extra > IH_PARALLEL_MAX_THREADS - 1) {
        extra = IH_PARALLEL_MAX_THREADS - 1;
    }
    if (extra > tasks - 1) {
        extra = tasks - 1;
    }
    if (extra == 0) {
        take_tasks(&run);
        return 1;
    }
    const unsigned held = pool_hold((unsigned)extra);
    return held > 0 ? pool_run_job(&run, held) : own_threads(&run, extra);
}
