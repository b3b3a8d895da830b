/* --stats: where a run's time went, stage by stage, summed over its
 * workers, so that a user sees the bottleneck. */
#ifndef IMGHIST_CLI_STATS_H
#define IMGHIST_CLI_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "imghist.h"
#include "imghist_experimental.h"

typedef struct ih_stage_tally {
    uint64_t start_ns;
    uint64_t ns[IMGHIST_STAGES]; /* the library's stages */
    uint64_t write_ns;           /* the CLI's: output files created, written, renamed */
} ih_stage_tally;

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ih_stats_now(void);

/* A new tally, its wall clock started now. */
void ih_tally_start(ih_stage_tally *s);

/* Adds a context's stage times (NULL: nothing). */
void ih_tally_add(ih_stage_tally *s, const imghist_ctx *ctx);

/* The lines on stderr: images, workers and wall time, then each stage's
 * seconds and share of workers x wall, and what is left of it. */
void ih_tally_say(const ih_stage_tally *s, size_t images, unsigned workers);

#endif
