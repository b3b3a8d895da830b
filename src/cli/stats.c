#define _POSIX_C_SOURCE 200809L
#include "stats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "mpi_run.h"

uint64_t ih_stats_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void ih_tally_start(ih_stage_tally *s)
{
    memset(s, 0, sizeof *s);
    s->start_ns = ih_stats_now();
}

void ih_tally_add(ih_stage_tally *s, const imghist_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    uint64_t ns[IMGHIST_STAGES];
    imghist_exp_stage_ns(ctx, ns);
    for (int i = 0; i < IMGHIST_STAGES; i++) {
        s->ns[i] += ns[i];
    }
}

void ih_tally_say(const ih_stage_tally *s, size_t images, unsigned workers)
{
    /* In the order an image goes through them; the GPU's line only where a
     * GPU ran (it stands for count and LUT there). */
    static const struct {
        const char *name;
        int stage; /* -1: the CLI's writing */
    } rows[] = {{"read", IMGHIST_STAGE_READ},       {"decode", IMGHIST_STAGE_DECODE},
                {"gray", IMGHIST_STAGE_GRAY},       {"count", IMGHIST_STAGE_COUNT},
                {"LUT", IMGHIST_STAGE_LUT},         {"GPU", IMGHIST_STAGE_GPU},
                {"filter", IMGHIST_STAGE_FILTER},   {"deflate", IMGHIST_STAGE_DEFLATE},
                {"write", -1}};
    const double wall = (double)(ih_stats_now() - s->start_ns) * 1e-9;
    const double budget = wall * (workers > 0 ? workers : 1);
    char rank[48] = "";
    if (ih_mpi.active) {
        snprintf(rank, sizeof rank, "rank %d: ", ih_mpi.rank);
    }
    ih_say("stats: %s%zu images, %u threads, %.3f s wall; seconds per stage, summed over "
           "threads (%% of threads x wall):", rank, images, workers, wall);
    double sum = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const uint64_t ns = rows[i].stage < 0 ? s->write_ns : s->ns[rows[i].stage];
        if (rows[i].stage == IMGHIST_STAGE_GPU && ns == 0) {
            continue;
        }
        const double sec = (double)ns * 1e-9;
        sum += sec;
        ih_say("stats: %s  %-8s %9.3f s %5.1f %%", rank, rows[i].name, sec,
               budget > 0 ? 100.0 * sec / budget : 0.0);
    }
    const double rest = budget > sum ? budget - sum : 0.0;
    ih_say("stats: %s  %-8s %9.3f s %5.1f %% (listing, start-up, waiting, the records)", rank,
           "other", rest, budget > 0 ? 100.0 * rest / budget : 0.0);
}
