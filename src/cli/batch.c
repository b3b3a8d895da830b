/*
 * A batch run: the main thread lists the images (walk.c, scale.c), plans the
 * workers and their contexts (batch_plan.c), opens the run's outputs
 * (batch_records.c) and runs the workers (batch_workers.c), which write the
 * records in list order whatever the scheduling.
 */
#define _POSIX_C_SOURCE 200809L
#include "batch.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_run.h"
#include "cli_context.h"
#include "stats.h"

int ih_is_batch(const ih_cli_args *a)
{
    if (a->scale.shard_n > 0 || ih_mpi.size > 1) {
        return 1; /* a share of the inputs is a batch, even of one file */
    }
    if (a->n_inputs != 1) {
        return a->n_inputs > 1;
    }
    struct stat st;
    return strcmp(a->input, "-") != 0 && stat(a->input, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Entries that are not images are said under -v; one that cannot be read
 * or entered always, as a failed image is. */
static void say_skipped(const char *path, const char *why, int error)
{
    if (error) {
        ih_say("%s: cannot be read: %s", path, why);
    } else if (ih_verbosity > 0) {
        ih_say("skipped %s (%s)", path, why);
    }
}

/* Whether the folder at path holds a sub-folder. */
static int has_subfolder(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        return 0;
    }
    int found = 0;
    char sub[4096];
    for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        found = snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) < (int)sizeof sub &&
                stat(sub, &st) == 0 && S_ISDIR(st.st_mode);
    }
    closedir(d);
    return found;
}

/* A run that found no image: an empty CSV or total would read as a result. */
static void say_no_image(const ih_cli_args *a)
{
    int subfolders = 0;
    for (size_t k = 0; k < a->n_inputs && !a->recursive && !subfolders; k++) {
        subfolders = has_subfolder(a->inputs[k]);
    }
    char more[64] = "";
    if (a->n_inputs == 2) {
        snprintf(more, sizeof more, " (nor in the other input)");
    } else if (a->n_inputs > 2) {
        snprintf(more, sizeof more, " (nor in the %zu other inputs)", a->n_inputs - 1);
    }
    ih_say("%s: no image found%s%s", a->inputs[0], more,
           subfolders ? "; its sub-folders were not searched (add -r)" : "");
}

int ih_batch_has_outputs(const ih_cli_args *a)
{
    return a->equalize_out != NULL || a->csv_out != NULL || a->json_out != NULL ||
           a->total_out != NULL || a->plot != NULL || a->plot_dir != NULL;
}

/* --stats: every worker's contexts and writing. A context still being made
 * (a run left before CUDA was up) is not read. */
static void add_stats(ih_stage_tally *s, const ih_batch_plan *p)
{
    for (unsigned i = 0; p->workers != NULL && i < p->n_workers; i++) {
        const ih_worker *w = &p->workers[i];
        if (!p->early || __atomic_load_n(&w->ready, __ATOMIC_ACQUIRE)) {
            ih_tally_add(s, w->ctx);
        }
        ih_tally_add(s, w->cpu);
        s->write_ns += w->write_ns;
    }
}

int ih_run_batch(const ih_cli_args *a)
{
    if (ih_mpi.active && !ih_batch_has_outputs(a)) {
        if (ih_mpi.rank == 0) {
            ih_say("under mpirun give an output: --csv, --json, --total, --equalize or "
                   "--plot-dir (see imghist --help)");
        }
        return IH_EXIT_USAGE;
    }
    ih_stage_tally stats;
    ih_tally_start(&stats);
    if (ih_mpi.active && (a->bins || a->has_range || a->native_depth || a->channels)) {
        if (ih_mpi.rank == 0) {
            ih_say("--bins, --range, --depth native and --channels do not run under mpirun yet "
                   "(use --shard and imghist merge)");
        }
        return IH_EXIT_USAGE;
    }
    ih_file_plan files;
    if (ih_plan_files(a->inputs, a->n_inputs, a->recursive, a->equalize_out, &a->scale,
                      say_skipped, &files) != 0) {
        ih_plan_free(&files);
        return IH_EXIT_USAGE;
    }
    if (files.all.count == 0 && files.all.unreadable == 0) {
        if (ih_mpi.rank == 0) {
            say_no_image(a);
        }
        ih_plan_free(&files);
        return IH_EXIT_FILE;
    }
    ih_batch_plan plan;
    ih_records records;
    int rc = ih_plan_workers(&plan, a, &files.mine);
    if (rc == IH_EXIT_OK) {
        ih_plan_say_backend(&plan, files.mine.count, files.mine.skipped);
        rc = ih_records_open(&records, a, &files.mine);
    }
    if (rc != IH_EXIT_OK) {
        ih_plan_abort(&plan);
        ih_plan_free(&files);
        return rc;
    }
    ih_run_workers(&plan, &files.mine, &records);
    int cuda_skipped = 0;
    const int leave = ih_plan_finish(&plan, &cuda_skipped);
    if (a->stats) {
        add_stats(&stats, &plan);
    }
    const int gpu_ran = ih_plan_destroy_contexts(&plan, leave);
    int sig = 0;
    rc = ih_records_finish(&records, &files, &sig);
    ih_records_say_summary(&records, &files, sig);
    ih_plan_say_devices(&plan, leave, cuda_skipped, gpu_ran);
    if (a->stats) {
        ih_tally_say(&stats, files.mine.count, plan.n_workers);
    }
    ih_plan_free_workers(&plan, leave);
    ih_records_free(&records);
    ih_plan_free(&files);
    return rc;
}
