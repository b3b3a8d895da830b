/*
 * The parts of a batch run, which batch.c drives: the plan of workers and
 * their library contexts (batch_plan.c), the workers that take images in
 * order and process them (batch_workers.c), and the records, written in the
 * order of the file list whatever the scheduling (batch_records.c).
 */
#ifndef IMGHIST_CLI_BATCH_RUN_H
#define IMGHIST_CLI_BATCH_RUN_H

#include <stdio.h>

#include "args.h"
#include "file_pool.h" /* IH_GPU_MIN_BYTES */
#include "gpu_decode.h"
#include "mpi_run.h"
#include "outputs.h"
#include "progress.h"
#include "report.h"
#include "scale.h"
#include "walk.h"

/* One image's result, from its worker to the records. */
typedef struct ih_result {
    imghist_status status;
    uint32_t width, height;
    ih_hist_out hist; /* counts malloc'd by the worker, freed once written */
    int truncated;    /* read with --read-truncated though its data ended early */
    int reduced;      /* 16-bit or float samples made 8-bit under a --range */
    char msg[800];
} ih_result;

typedef struct ih_worker {
    imghist_ctx *ctx;
    int device; /* its GPU, -1: the default */
    /* An auto run on GPUs: the worker's CPU context decodes its images and
     * counts them until ctx (made in the background) is ready, and the small
     * ones after (batch_workers.c). */
    imghist_ctx *cpu;
    int ready;             /* ctx is made (atomic: its maker sets it) */
    size_t on_cpu, on_ctx; /* images counted with each */
    uint64_t write_ns;     /* --stats: writing its equalized PNGs */
} ih_worker;

/* An auto run without --gpus starts CUDA only once the run has gone on
 * this long (batch_plan.c says why). */
#define IH_GPU_START_DELAY_S 1

typedef struct ih_gpu_starter ih_gpu_starter;

/* How the run's images are spread over workers and devices. */
typedef struct ih_batch_plan {
    const ih_cli_args *a;
    int early;     /* auto: the workers count on the CPU while the GPUs start */
    int find_late; /* auto without --gpus: the GPUs are found in the background */
    unsigned n_workers, threads_each;
    int slots[IH_MAX_GPU_SLOTS];
    unsigned n_slots;
    ih_worker *workers;
    ih_gpu_starter *starter; /* on the heap: a run done before CUDA has started
                                leaves it running */
    ih_gpu_decoder *gpu;     /* NULL: every image is decoded on the CPU */
} ih_batch_plan;

/* The workers, their GPUs and their contexts (made, or being made in the
 * background). Returns an exit status, the same on every rank. */
int ih_plan_workers(ih_batch_plan *p, const ih_cli_args *a, const ih_file_list *files);
/* -v: the backend line of the run. */
void ih_plan_say_backend(const ih_batch_plan *p, size_t n_images, size_t skipped);
/* The run is over. Returns whether the GPU start is left running (the
 * process then ends without waiting for it); otherwise *cuda_skipped says
 * whether the run was over before the GPUs' start, and p->slots are the
 * GPUs that were used. */
int ih_plan_finish(ih_batch_plan *p, int *cuda_skipped);
/* Destroys the contexts (only the CPU ones when `leave`); whether any
 * worker's context ran on a GPU. */
int ih_plan_destroy_contexts(ih_batch_plan *p, int leave);
/* -v: where the images were counted. */
void ih_plan_say_devices(const ih_batch_plan *p, int leave, int cuda_skipped, int gpu_ran);
/* A run that does not go on: everything freed. */
void ih_plan_abort(ih_batch_plan *p);
/* Frees the plan, unless `leave`: then the starter keeps it. */
void ih_plan_free_workers(ih_batch_plan *p, int leave);

/* The run's own outputs and what it adds up. */
typedef struct ih_records {
    const ih_cli_args *a;
    const ih_file_list *files;
    ih_outputs outs; /* CSV, JSON Lines, total: all or nothing */
    FILE *csv, *json, *total_fp;
    ih_gather *gather; /* under MPI: the records, for rank 0 */
    ih_hist_out total; /* the first image's binning; every later one must match */
    size_t processed, failed, emitted;
    int write_failed;
    int summaries;     /* no output asked for: each image's summary on stdout */
    ih_progress progress;
} ih_records;

/* Whether the run writes an output; with none, each image's summary. */
int ih_batch_has_outputs(const ih_cli_args *a);

/* Opens the outputs (rank 0) and the gather (MPI); an exit status, the
 * same on every rank. */
int ih_records_open(ih_records *r, const ih_cli_args *a, const ih_file_list *files);
/* Image e's result, in order; takes res's counts. */
void ih_records_put(ih_records *r, size_t e, ih_result *res);
/* Every rank's counts and records to rank 0, the total and its plot, the
 * outputs committed; the run's exit status. */
int ih_records_finish(ih_records *r, const ih_file_plan *plan, int *sig);
/* The run's summary line (rank 0). */
void ih_records_say_summary(const ih_records *r, const ih_file_plan *plan, int sig);
void ih_records_free(ih_records *r);

/* Runs the workers over the files (a fork-join); each result goes to
 * ih_records_put in the order of the list. */
void ih_run_workers(ih_batch_plan *p, const ih_file_list *files, ih_records *records);

/* Milliseconds that an auto run without --gpus waits before starting CUDA
 * (the product's value, or the tests' in the test build). */
long ih_gpu_start_delay_ms(void);

#endif
