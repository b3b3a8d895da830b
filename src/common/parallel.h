/* The one place threads are started but for the file pool's workers
 * (file_pool.c, whose calling thread watches them): a fork-join over
 * numbered tasks, used by the CPU backend, CLAHE, a long list's checks and
 * the PNG writer's bands. The threads are kept for the next call. */
#ifndef IMGHIST_PARALLEL_H
#define IMGHIST_PARALLEL_H

#include <stddef.h>

/* Most threads one call starts (IMGHIST_P_CPU_THREADS is at most this). */
#define IH_PARALLEL_MAX_THREADS 256u

/*
 * Calls fn(arg, task) once for every task in [0, tasks), on up to `threads`
 * threads, the calling thread among them; threads take the next task as they
 * finish one. A thread that cannot be started leaves its tasks to the others,
 * so every task runs even when none can start. Returns when all tasks have
 * returned, with the number of threads that took part (at least 1 when
 * tasks > 0). Any thread may call it, a task too: a call made while another
 * holds the kept threads starts threads of its own.
 */
unsigned ih_parallel_for(size_t tasks, unsigned threads, void (*fn)(void *arg, size_t task),
                         void *arg);

#endif
