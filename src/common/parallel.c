#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    atomic_size_t next;
    size_t tasks;
    void (*fn)(void *arg, size_t task);
    void *arg;
} pool_run;

static void *take_tasks(void *p)
{
    pool_run *run = p;
    for (;;) {
        const size_t t = atomic_fetch_add(&run->next, 1);
        if (t >= run->tasks) {
            return NULL;
        }
        run->fn(run->arg, t);
    }
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
    /* A thread array that cannot be allocated means no extra threads: the
     * tasks still all run here. */
    pthread_t *tid = extra > 0 ? malloc(extra * sizeof *tid) : NULL;
    unsigned started = 0;
    for (size_t i = 0; tid != NULL && i < extra; i++) {
        started += pthread_create(&tid[started], NULL, take_tasks, &run) == 0;
    }
    take_tasks(&run);
    for (unsigned i = 0; i < started; i++) {
        pthread_join(tid[i], NULL);
    }
    free(tid);
    return started + 1;
}
