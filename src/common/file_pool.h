/*
 * The workers of a run over a list of files, shared by the CLI's batch runs
 * and the library's imghist_histogram_files: each worker thread takes the
 * next item of the list and processes it into a slot of a window; the
 * results are handed on in list order, and a worker runs at most `window`
 * items ahead of the last one handed on, so memory stays bounded (what a
 * worker holds, and a slot per window entry) whatever the list's length.
 * The calling thread starts the workers and watches them: it calls `tick`
 * at a steady rate, and a tick or `stop` that says so ends the run after the
 * items in progress.
 */
#ifndef IMGHIST_FILE_POOL_H
#define IMGHIST_FILE_POOL_H

#include <stddef.h>

/*
 * Images with fewer bytes of samples than this are counted on the CPU by a
 * worker that has a GPU: for a small image the GPU's path (a copy into
 * pinned memory, a launch, a wait among many workers) costs the worker more
 * than counting it, while large images are counted faster on the GPU (bench/
 * has the numbers). Both give the same bits.
 */
#define IH_GPU_MIN_BYTES ((size_t)4 << 20)

typedef struct ih_pool_job {
    size_t items;
    unsigned workers;  /* threads, 1 to IH_PARALLEL_MAX_THREADS */
    size_t window;     /* results held at once, at least 1 */
    size_t slot_size;  /* bytes of one result */
    void *user;
    /* Item k's result into slot (zeroed), on worker thread `worker`. */
    void (*process)(void *user, unsigned worker, size_t item, void *slot);
    /* Each result in list order, one call at a time, on a worker; the slot
     * is reused once it returns. NULL: results are not handed on. */
    void (*emit)(void *user, size_t item, void *slot);
    /* Whether to take no more items; checked before each. NULL: never. */
    int (*stop)(void *user);
    /* On the calling thread every tick_ms while the workers run, with the
     * items done so far; non-zero: take no more items. NULL: no ticks. */
    int (*tick)(void *user, size_t done, size_t items);
    unsigned tick_ms;
} ih_pool_job;

/*
 * Runs the job. Items are taken in list order, so the items processed (and
 * emitted) are [0, *taken): all of them unless the run was stopped. A worker
 * thread that cannot be started leaves its items to the others (the calling
 * thread works when none starts). Returns 0, or -1 when the window's memory
 * cannot be allocated (nothing ran).
 */
int ih_pool_run(const ih_pool_job *job, size_t *taken);

#endif
