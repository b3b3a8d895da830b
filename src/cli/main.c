/* imghist: the command-line tool. Uses only the public library API; owns
 * standard input, its output files and its own messages. One image runs here;
 * several images or a folder run in batch.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "batch.h"
#include "cli_context.h"
#include "imghist.h"
#include "merge.h"
#include "mpi_run.h"
#include "outputs.h"
#include "read_all.h"
#include "report.h"
#include "sanitize.h"
#include "signals.h"

static int fail(const char *msg)
{
    ih_say("%s", msg);
    return IH_EXIT_FILE;
}

/* A library failure, with the option that moves the limit it hit. */
static int fail_lib(const imghist_ctx *ctx, imghist_status st)
{
    const char *msg = imghist_last_error(ctx);
    if (st == IMGHIST_E_LIMIT) {
        ih_say("%s (see %s)", msg, strstr(msg, " pixels") != NULL ? "--max-pixels" : "--max-bytes");
        return IH_EXIT_FILE;
    }
    return fail(msg[0] != '\0' ? msg : imghist_strerror(st));
}

/* Refuse an output that names the input file (same device and inode). */
static int names_input(const char *input, const char *output)
{
    struct stat si, so;
    if (output == NULL || strcmp(output, "-") == 0 || strcmp(input, "-") == 0) {
        return 0;
    }
    if (stat(input, &si) != 0 || stat(output, &so) != 0) {
        return 0;
    }
    return si.st_dev == so.st_dev && si.st_ino == so.st_ino;
}

/* Under -v, say when the library had to take another route (bands, CPU). */
static void report_note(const imghist_ctx *ctx)
{
    if (ih_verbosity > 0 && imghist_last_note(ctx)[0] != '\0') {
        ih_say("note: %s", imghist_last_note(ctx));
    }
}

static void print_summary(const char *name, const imghist_view *img,
                          const uint64_t hist[IH_CLI_BINS])
{
    ih_stats st;
    if (ih_stats_from_hist(hist, &st) != 0) {
        return;
    }
    char shown[1024];
    snprintf(shown, sizeof shown, "%s", name);
    ih_sanitize_line(shown);
    printf("%s: %ux%u, %llu pixels\n", shown, img->width, img->height,
           (unsigned long long)st.count);
    printf("min %d  max %d  mean %.2f  median %d  stddev %.2f\n", st.min, st.max, st.mean,
           st.median, st.stddev);
    ih_print_picture(stdout, hist, 8);
}

/* The input: a file through the library, or standard input read here. */
static imghist_status load(imghist_ctx *ctx, const char *input, imghist_image **img,
                           int *reported)
{
    *reported = 0;
    if (strcmp(input, "-") != 0) {
        return imghist_load_file(ctx, input, img);
    }
    int64_t limit = 0;
    imghist_get_param(ctx, IMGHIST_P_MAX_INPUT_BYTES, &limit);
    uint8_t *data = NULL;
    size_t size = 0;
    errno = 0;
    switch (ih_read_all(stdin, (uint64_t)limit, 0, &data, &size)) {
    case IH_READ_OK:
        break;
    case IH_READ_OVER_LIMIT:
        ih_say("<stdin>: input is larger than the limit of %lld bytes (see --max-bytes)",
               (long long)limit);
        *reported = 1;
        return IMGHIST_E_LIMIT;
    case IH_READ_ERROR:
        ih_say("<stdin>: read error: %s", strerror(errno ? errno : EIO));
        *reported = 1;
        return IMGHIST_E_IO;
    case IH_READ_NOMEM:
        ih_say("<stdin>: out of memory");
        *reported = 1;
        return IMGHIST_E_NOMEM;
    }
    imghist_status st = imghist_load_memory(ctx, data, size, "<stdin>", img);
    free(data);
    return st;
}

typedef struct blob {
    const void *data;
    size_t size;
} blob;

static int write_blob(FILE *fp, const void *arg)
{
    const blob *b = arg;
    return fwrite(b->data, 1, b->size, fp) == b->size ? 0 : -1;
}

static int write_csv(FILE *fp, const void *hist)
{
    return ih_write_csv(fp, hist);
}

typedef struct json_arg {
    const char *name;
    const imghist_view *img;
    const uint64_t *hist;
} json_arg;

static int write_json(FILE *fp, const void *arg)
{
    const json_arg *j = arg;
    return ih_write_json_line(fp, j->name, j->img->width, j->img->height, j->hist);
}

/* Every output or none: the files are written beside their targets, then
 * renamed; what goes to standard output comes last. */
static int write_outputs(imghist_ctx *ctx, const ih_cli_args *a, const char *name,
                         const imghist_view *img, const imghist_view *eq,
                         const uint64_t hist[IH_CLI_BINS])
{
    ih_outputs outs = {0};
    char msg[1200];
    void *png = NULL;
    size_t png_size = 0;
    if (a->equalize_out != NULL) {
        imghist_status st = imghist_encode_png(ctx, eq, &png, &png_size);
        if (st != IMGHIST_OK) {
            snprintf(msg, sizeof msg, "%s: %s", a->equalize_out, imghist_last_error(ctx));
            return fail(msg);
        }
        const blob b = {png, png_size};
        const int bad = ih_outputs_stage(&outs, a->equalize_out, write_blob, &b, msg, sizeof msg);
        imghist_free(png);
        if (bad) {
            ih_outputs_abort(&outs);
            return fail(msg);
        }
    }
    const json_arg j = {name, img, hist};
    const struct {
        const char *path;
        int (*write)(FILE *, const void *);
        const void *arg;
    } text[3] = {{a->csv_out, write_csv, hist},
                 {a->json_out, write_json, &j},
                 {a->total_out, write_csv, hist}};
    for (int i = 0; i < 3; i++) {
        if (text[i].path != NULL && strcmp(text[i].path, "-") != 0 &&
            ih_outputs_stage(&outs, text[i].path, text[i].write, text[i].arg, msg, sizeof msg)) {
            ih_outputs_abort(&outs);
            return fail(msg);
        }
    }
    if (ih_stop_signal() != 0) {
        ih_outputs_abort(&outs);
        return 128 + ih_stop_signal();
    }
    const char *written[IH_MAX_OUTPUTS];
    const size_t n_written = outs.count;
    memcpy(written, outs.paths, sizeof written);
    if (ih_outputs_commit(&outs, msg, sizeof msg) != 0) {
        return fail(msg);
    }
    for (size_t i = 0; i < n_written && ih_verbosity > 0; i++) {
        ih_say("wrote %s", written[i]);
    }
    for (int i = 0; i < 3; i++) {
        if (text[i].path != NULL && strcmp(text[i].path, "-") == 0 &&
            (text[i].write(stdout, text[i].arg) != 0 || fflush(stdout) != 0)) {
            return fail("<stdout>: write error");
        }
    }
    return IH_EXIT_OK;
}

static int run_one(const ih_cli_args *a)
{
    char msg[1200];
    const char *name = strcmp(a->input, "-") == 0 ? "<stdin>" : a->input;
    const char *outs[4] = {a->equalize_out, a->csv_out, a->json_out, a->total_out};
    for (int i = 0; i < 4; i++) {
        if (names_input(a->input, outs[i])) {
            snprintf(msg, sizeof msg, "%s: refusing to overwrite the input file", outs[i]);
            return fail(msg);
        }
    }

    imghist_ctx *ctx = NULL;
    int rc = ih_make_context(a, a->jobs ? a->jobs : ih_cores(), &ctx);
    if (rc != IH_EXIT_OK) {
        return rc;
    }
    if (ih_verbosity > 0) {
        ih_say("backend: %s", imghist_backend_name(imghist_get_backend(ctx)));
    }
    imghist_image *img = NULL;
    uint8_t *eq_pixels = NULL;
    uint64_t hist[IH_CLI_BINS];
    const imghist_counts counts = {hist, IH_CLI_BINS, IMGHIST_MEM_HOST};
    int reported = 0;
    imghist_status st = load(ctx, a->input, &img, &reported);
    if (st != IMGHIST_OK) {
        rc = ih_stop_signal() ? 128 + ih_stop_signal() : reported ? IH_EXIT_FILE
                                                                    : fail_lib(ctx, st);
        goto done;
    }

    imghist_view eq = img->view;
    if (a->equalize_out != NULL) {
        eq_pixels = malloc((size_t)img->view.width * img->view.height);
        if (eq_pixels == NULL) {
            snprintf(msg, sizeof msg, "%s: out of memory", name);
            rc = fail(msg);
            goto done;
        }
        eq.data = eq_pixels;
        eq.pitch = img->view.width;
        st = imghist_equalize(ctx, &img->view, &eq, &counts);
    } else {
        st = imghist_histogram(ctx, &img->view, NULL, NULL, &counts);
    }
    report_note(ctx);
    if (st != IMGHIST_OK) {
        rc = fail_lib(ctx, st);
        goto done;
    }

    if (a->equalize_out != NULL || a->csv_out != NULL || a->json_out != NULL ||
        a->total_out != NULL) {
        rc = write_outputs(ctx, a, name, &img->view, &eq, hist);
    } else if (ih_verbosity >= 0) {
        print_summary(name, &img->view, hist);
        if (fflush(stdout) != 0) {
            rc = fail("<stdout>: write error");
        }
    }

done:
    free(eq_pixels);
    imghist_image_free(img);
    imghist_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "merge") == 0) {
        return ih_merge_main(argc - 1, argv + 1); /* a file named merge: ./merge */
    }
    if (ih_mpi_start(&argc, &argv) != 0) { /* under mpirun: one rank of a batch run */
        return IH_EXIT_FILE;
    }
    ih_cli_args a;
    char err[512];
    if (ih_parse_args(argc, argv, &a, err, sizeof err) != 0) {
        if (ih_mpi.rank == 0) ih_say("%s (see imghist --help)", err);
        ih_free_args(&a);
        ih_mpi_stop();
        return IH_EXIT_USAGE;
    }
    int rc = IH_EXIT_OK;
    if (ih_mpi.rank != 0 && (a.help || a.version)) {
        /* rank 0 answers */
    } else if (a.help) {
        fputs(ih_usage_text, stdout);
    } else if (a.version) {
        printf("imghist %s\n", imghist_version_string());
        if (imghist_version() != IMGHIST_VERSION_NUMBER) {
            fprintf(stderr, "imghist: warning: built against %s, running with library %s\n",
                    IMGHIST_VERSION_STRING, imghist_version_string());
        }
    } else {
        ih_verbosity = a.verbosity;
        ih_catch_signals();
        rc = ih_is_batch(&a) ? ih_run_batch(&a) : run_one(&a);
    }
    ih_free_args(&a);
    ih_mpi_stop();
    return rc;
}
