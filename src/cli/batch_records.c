/*
 * The records of a batch run: the CSV, JSON Lines and total, written in the
 * order of the file list; under MPI every rank keeps its records for rank 0,
 * which writes the run's outputs for every rank.
 */
#define _POSIX_C_SOURCE 200809L
#include "batch_run.h"

#include <stdlib.h>
#include <string.h>

#include "cli_context.h"
#include "plot.h"
#include "sanitize.h"
#include "signals.h"

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

int ih_records_open(ih_records *r, const ih_cli_args *a, const ih_file_list *files)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->files = files;
    int rc = IH_EXIT_OK;
    if (ih_mpi.active && (a->csv_out != NULL || a->json_out != NULL) &&
        (r->gather = ih_gather_new(sizeof(wire_record))) == NULL) {
        rc = IH_EXIT_FILE;
    }
    FILE **files_for[3] = {&r->csv, &r->json, &r->total_fp};
    const char *paths_for[3] = {a->csv_out, a->json_out, a->total_out};
    char err[1024];
    for (int i = 0; i < 3 && rc == IH_EXIT_OK && ih_mpi.rank == 0; i++) {
        if (paths_for[i] != NULL &&
            (*files_for[i] = ih_outputs_open(&r->outs, paths_for[i], err, sizeof err)) == NULL) {
            ih_say("%s", err);
            rc = IH_EXIT_FILE;
        }
    }
    rc = ih_mpi_max(rc); /* every rank sets out, or none */
    if (rc != IH_EXIT_OK) {
        ih_outputs_abort(&r->outs);
        return rc;
    }
    if (r->csv != NULL) {
        ih_write_csv_header_with_file(r->csv, a->channels);
    }
    /* No output asked for: each image's summary, as for one image. */
    r->summaries = !ih_mpi.active && ih_verbosity >= 0 && !ih_batch_has_outputs(a);
    ih_progress_start(&r->progress, ih_verbosity >= 0 && !ih_mpi.active);
    return IH_EXIT_OK;
}

void ih_records_put(ih_records *r, size_t e, ih_result *res)
{
    const ih_cli_args *a = r->a;
    r->emitted++;
    const char *path = r->files->files[e].path;
    if (res->status != IMGHIST_OK) {
        r->failed++;
        ih_progress_clear(&r->progress);
        ih_say("%s", res->msg);
    } else {
        r->processed++;
        if (res->truncated && ih_verbosity >= 0) {
            ih_progress_clear(&r->progress);
            ih_say("warning: %s: %s", path, IH_TRUNCATED_WARNING);
        }
        if (res->reduced && ih_verbosity >= 0) {
            ih_progress_clear(&r->progress);
            ih_say("warning: %s: %s", path, IH_REDUCED_WARNING);
        }
        if (a->total_out != NULL && add_to_total(&r->total, &res->hist, path, &r->progress) != 0) {
            r->failed++;
        }
        if (r->summaries) {
            char shown[1024];
            snprintf(shown, sizeof shown, "%s", path);
            ih_sanitize_line(shown);
            ih_progress_clear(&r->progress);
            ih_print_summary(stdout, shown, res->width, res->height, &res->hist);
            if (fflush(stdout) != 0) {
                r->write_failed = 1;
            }
        }
        if (r->gather == NULL && write_records(r->csv, r->json, path, res->width, res->height,
                                               &res->hist, a->channels)) {
            r->write_failed = 1;
        }
    }
    if (r->gather != NULL) {
        wire_record w;
        memset(&w, 0, sizeof w);
        w.status = res->status;
        w.width = res->width;
        w.height = res->height;
        if (res->status == IMGHIST_OK) {
            memcpy(w.counts, res->hist.counts, sizeof w.counts);
        }
        if (ih_gather_put(r->gather, &w) != 0) {
            r->write_failed = 1;
        }
    }
    ih_hist_out_free(&res->hist);
    ih_progress_update(&r->progress, r->emitted, r->files->count, 0);
}

/* Under MPI: every rank's counts into rank 0; the records when every rank
 * has all of its own (none stopped early, none failed to keep them). */
static void gather_to_root(ih_records *r, const ih_file_plan *plan, int sig)
{
    const int complete = ih_mpi_max(r->emitted != r->files->count || r->write_failed) == 0;
    uint64_t counts[3] = {r->processed, r->failed, r->emitted};
    if (r->total.counts == NULL) { /* a rank with no image adds zeros */
        uint64_t *zeros = calloc(IH_WIRE_COUNTS, sizeof *zeros);
        if (zeros == NULL) {
            r->write_failed = 1;
        } else {
            r->total = default_hist(zeros);
        }
    }
    if (r->total.counts != NULL) {
        ih_mpi_sum_to_root(r->total.counts, IH_WIRE_COUNTS);
    }
    ih_mpi_sum_to_root(counts, 3);
    r->processed = (size_t)counts[0];
    r->failed = (size_t)counts[1];
    r->emitted = (size_t)counts[2];
    if (r->gather != NULL && complete && sig == 0) {
        merged_out m = {r->csv, r->json, &plan->part, 0};
        if (ih_gather_run(r->gather, plan->owner, plan->part.count, emit_merged, &m) != 0 ||
            m.failed) {
            r->write_failed = 1;
        }
    } else if (!complete) {
        r->write_failed = 1;
    }
}

int ih_records_finish(ih_records *r, const ih_file_plan *plan, int *sig)
{
    const ih_cli_args *a = r->a;
    char err[1024];
    ih_progress_update(&r->progress, r->emitted, r->files->count, 1);
    ih_progress_clear(&r->progress);
    *sig = ih_stop_signal();
    if (ih_mpi.active) {
        *sig = ih_mpi_max(*sig);
        gather_to_root(r, plan, *sig);
    }
    if (r->total_fp != NULL && r->total.counts != NULL && ih_write_csv(r->total_fp, &r->total)) {
        r->write_failed = 1;
    }
    /* --plot with --total: the total's picture, one of the run's outputs. */
    ih_plot total_plot = {"total of the run", &r->total, NULL, a->log_scale, 0};
    if (ih_mpi.rank == 0 && a->plot != NULL && r->total.counts != NULL && !r->write_failed &&
        *sig == 0) {
        /* Checked with the options. */
        (void)ih_plot_kind(a->plot, &total_plot.svg, err, sizeof err);
        if (ih_outputs_stage(&r->outs, a->plot, ih_write_plot, &total_plot, err, sizeof err)) {
            ih_say("%s", err);
            r->write_failed = 1;
        }
    }
    ih_hist_out_free(&r->total);
    int rc = IH_EXIT_OK;
    if (*sig != 0) {
        ih_outputs_abort(&r->outs); /* a CSV of part of the run would look complete */
        rc = 128 + *sig;
    } else if (r->write_failed) {
        if (ih_mpi.rank == 0) ih_say("a write to the CSV, JSON or total output failed");
        ih_outputs_abort(&r->outs);
        rc = IH_EXIT_FILE;
    } else if (ih_outputs_commit(&r->outs, err, sizeof err) != 0) {
        ih_say("%s", err);
        rc = IH_EXIT_FILE;
    } else if (r->failed > 0 || r->files->unreadable > 0) {
        rc = IH_EXIT_FILE; /* an entry that could not be read is an image missing */
    }
    if (ih_mpi.active) {
        rc = ih_mpi_max(rc); /* exit status 1 on any failure anywhere */
    }
    return rc;
}

void ih_records_say_summary(const ih_records *r, const ih_file_plan *plan, int sig)
{
    const ih_cli_args *a = r->a;
    if (ih_verbosity < 0 || ih_mpi.rank != 0) {
        return;
    }
    const size_t all_count = ih_mpi.active ? plan->part.count : r->files->count;
    const double secs = ih_now() - r->progress.start;
    char stopped[96] = "";
    if (sig != 0) {
        snprintf(stopped, sizeof stopped, "; interrupted after %zu of %zu images", r->emitted,
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
           all_count, shard, secs, secs > 0 ? (double)r->emitted / secs : 0.0, r->processed,
           r->failed + r->files->unreadable, r->files->skipped, stopped);
}

void ih_records_free(ih_records *r)
{
    ih_hist_out_free(&r->total);
    ih_gather_free(r->gather);
    r->gather = NULL;
}
