/* imghist: the command-line tool. Uses only the public library API (and the
 * shared write-then-rename helper for the CSV). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "atomic_file.h"
#include "imghist.h"
#include "one_line.h"
#include "report.h"

enum { EXIT_OK = 0, EXIT_FILE = 1, EXIT_USAGE = 2 };

static int verbosity;

/* One line on stderr, "imghist: " first; control characters that came with a
 * file name or an argument are shown as '?'. */
static void say(const char *fmt, ...)
{
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ih_one_line(line);
    fprintf(stderr, "imghist: %s\n", line);
}

static int fail(const char *msg)
{
    say("%s", msg);
    return EXIT_FILE;
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

static int write_csv_file(const char *path, const uint64_t hist[IMGHIST_BINS])
{
    ih_outfile out;
    char why[256], msg[1024];
    if (ih_outfile_open(&out, path, 1, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "%s: cannot create: %s", path, why);
        return fail(msg);
    }
    if (ih_write_csv(out.fp, hist) != 0) {
        ih_outfile_abort(&out);
        snprintf(msg, sizeof msg, "%s: write error", path);
        return fail(msg);
    }
    if (ih_outfile_commit(&out, why, sizeof why) != 0) {
        snprintf(msg, sizeof msg, "%s: cannot write: %s", strcmp(path, "-") ? path : "<stdout>",
                 why);
        return fail(msg);
    }
    return EXIT_OK;
}

/* Under -v, say when the library had to take another route (bands, CPU). */
static void report_note(const imghist_ctx *ctx)
{
    if (verbosity > 0 && imghist_last_note(ctx)[0] != '\0') {
        say("note: %s", imghist_last_note(ctx));
    }
}

static void print_summary(const char *name, const imghist_image *img,
                          const uint64_t hist[IMGHIST_BINS])
{
    ih_stats st;
    if (ih_stats_from_hist(hist, &st) != 0) {
        return;
    }
    char shown[1024];
    snprintf(shown, sizeof shown, "%s", name);
    ih_one_line(shown);
    printf("%s: %ux%u, %llu pixels\n", shown, img->width, img->height,
           (unsigned long long)st.count);
    printf("min %d  max %d  mean %.2f  median %d  stddev %.2f\n", st.min, st.max, st.mean,
           st.median, st.stddev);
    ih_print_picture(stdout, hist, 8);
}

static int run(const ih_cli_args *a)
{
    char msg[1024];
    const char *name = strcmp(a->input, "-") == 0 ? "<stdin>" : a->input;
    const char *outs[2] = {a->equalize_out, a->csv_out};
    for (int i = 0; i < 2; i++) {
        if (names_input(a->input, outs[i])) {
            snprintf(msg, sizeof msg, "%s: refusing to overwrite the input file", outs[i]);
            return fail(msg);
        }
    }

    imghist_ctx *ctx = NULL;
    imghist_status st = imghist_create(a->backend, &ctx);
    if (st != IMGHIST_OK) {
        snprintf(msg, sizeof msg, "--backend %s: %s", imghist_backend_name(a->backend),
                 ctx ? imghist_last_error(ctx) : imghist_strerror(st));
        imghist_destroy(ctx);
        return fail(msg);
    }
    if (verbosity > 0) {
        say("backend: %s", imghist_backend_name(imghist_get_backend(ctx)));
    }
    if (a->max_pixels != 0) {
        imghist_set_max_pixels(ctx, a->max_pixels);
    }

    int rc = EXIT_OK;
    imghist_image *img = NULL;
    uint64_t hist[IMGHIST_BINS];
    st = imghist_load_file(ctx, a->input, &img);
    if (st != IMGHIST_OK) {
        rc = fail(imghist_last_error(ctx));
        goto done;
    }

    if (a->equalize_out != NULL) {
        uint8_t *eq = malloc((size_t)img->width * img->height);
        if (eq == NULL) {
            snprintf(msg, sizeof msg, "%s: out of memory", name);
            rc = fail(msg);
            goto done;
        }
        st = imghist_equalize(ctx, img->pixels, img->pitch, eq, img->width, img->width,
                              img->height, hist);
        report_note(ctx);
        if (st == IMGHIST_OK) {
            st = imghist_write_png(ctx, a->equalize_out, eq, img->width, img->width, img->height);
        }
        free(eq);
        if (st != IMGHIST_OK) {
            rc = fail(imghist_last_error(ctx));
            goto done;
        }
        if (verbosity > 0) {
            say("wrote %s", a->equalize_out);
        }
    } else {
        st = imghist_histogram(ctx, img->pixels, img->pitch, img->width, img->height, hist);
        report_note(ctx);
        if (st != IMGHIST_OK) {
            rc = fail(imghist_last_error(ctx));
            goto done;
        }
    }

    if (a->csv_out != NULL) {
        rc = write_csv_file(a->csv_out, hist);
        if (rc != EXIT_OK) {
            goto done;
        }
        if (verbosity > 0 && strcmp(a->csv_out, "-") != 0) {
            say("wrote %s", a->csv_out);
        }
    }
    if (a->equalize_out == NULL && a->csv_out == NULL && verbosity >= 0) {
        print_summary(name, img, hist);
        if (fflush(stdout) != 0) {
            rc = fail("<stdout>: write error");
        }
    }

done:
    imghist_image_free(img);
    imghist_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    ih_cli_args a;
    char err[512];
    if (ih_parse_args(argc, argv, &a, err, sizeof err) != 0) {
        say("%s (see imghist --help)", err);
        return EXIT_USAGE;
    }
    if (a.help) {
        fputs(ih_usage_text, stdout);
        return EXIT_OK;
    }
    if (a.version) {
        printf("imghist %s\n", imghist_version_string());
        if (imghist_version() != IMGHIST_VERSION_NUMBER) {
            fprintf(stderr, "imghist: warning: built against %s, running with library %s\n",
                    IMGHIST_VERSION_STRING, imghist_version_string());
        }
        return EXIT_OK;
    }
    verbosity = a.verbosity;
    return run(&a);
}
