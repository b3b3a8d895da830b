/* imghist: the command-line tool. Uses only the public library API; owns
 * standard input, its output files and its own messages. One image runs here;
 * several images or a folder run in batch.c. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "color.h"
#include "batch.h"
#include "cli_context.h"
#include "gpu_decode.h"
#include "imghist.h"
#include "measure.h"
#include "compare.h"
#include "merge.h"
#include "ndhist_cli.h"
#include "mpi_run.h"
#include "outputs.h"
#include "plot.h"
#include "read_all.h"
#include "report.h"
#include "sanitize.h"
#include "signals.h"

static int fail(const char *msg)
{
    ih_say("%s", msg);
    return IH_EXIT_FILE;
}

/* A library failure, after the option that named the file (NULL: the
 * input), with the option that moves the limit it hit. */
static int fail_lib_for(const imghist_ctx *ctx, imghist_status st, const char *option)
{
    const char *msg = imghist_last_error(ctx);
    const char *sep = option != NULL ? " " : "";
    option = option != NULL ? option : "";
    if (st == IMGHIST_E_LIMIT) {
        ih_say("%s%s%s (see %s)", option, sep, msg,
               strstr(msg, " pixels") != NULL ? "--max-pixels" : "--max-bytes");
        return IH_EXIT_FILE;
    }
    ih_say("%s%s%s", option, sep, msg[0] != '\0' ? msg : imghist_strerror(st));
    return IH_EXIT_FILE;
}

static int fail_lib(const imghist_ctx *ctx, imghist_status st)
{
    return fail_lib_for(ctx, st, NULL);
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

/* The input: a file through the library, or standard input read here. */
/* Standard input that starts as no image is refused at once (its decoder
 * says why), not after --max-bytes of it are read. */
static int looks_like_image(const uint8_t *head, size_t n)
{
    return imghist_detect_format(head, n) != NULL;
}

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
    switch (ih_read_all(stdin, (uint64_t)limit, 0, looks_like_image, &data, &size)) {
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
    const ih_hist_out *hist;
} json_arg;

static int write_json(FILE *fp, const void *arg)
{
    const json_arg *j = arg;
    return ih_write_json_line(fp, j->name, j->img->width, j->img->height, j->hist);
}

/* --joint: the joint histogram's non-zero cells and its information. */
typedef struct joint_result {
    const char *name_a, *name_b;
    uint32_t width, height;
    uint32_t bins_a, bins_b;
    const uint64_t *cells; /* bins_a * bins_b, then the pairs outside */
    double mi, nmi;
} joint_result;

static int write_joint_csv(FILE *fp, const void *arg)
{
    const joint_result *j = arg;
    fputs("a,b,count\n", fp);
    for (uint32_t i = 0; i < j->bins_a; i++) {
        for (uint32_t k = 0; k < j->bins_b; k++) {
            const uint64_t n = j->cells[(size_t)i * j->bins_b + k];
            if (n != 0) {
                fprintf(fp, "%u,%u,%llu\n", i, k, (unsigned long long)n);
            }
        }
    }
    return ferror(fp) ? -1 : 0;
}

static void json_name(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fputc('\\', fp), fputc(c, fp);
        else if (c < 0x20 || c == 0x7f) fprintf(fp, "\\u%04x", c);
        else fputc(c, fp);
    }
    fputc('"', fp);
}

static int write_joint_json(FILE *fp, const void *arg)
{
    const joint_result *j = arg;
    fputs("{\"file\": ", fp);
    json_name(fp, j->name_a);
    fputs(", \"joint\": ", fp);
    json_name(fp, j->name_b);
    fprintf(fp,
            ", \"width\": %u, \"height\": %u, \"bins\": [%u, %u], \"outside\": %llu, "
            "\"mutual_information\": %.12g, \"normalized_mutual_information\": %.12g}\n",
            j->width, j->height, j->bins_a, j->bins_b,
            (unsigned long long)j->cells[(size_t)j->bins_a * j->bins_b], j->mi, j->nmi);
    return ferror(fp) ? -1 : 0;
}

/* An output the run may write: a path (NULL: not asked for; "-": standard
 * output) and how to write it. */
typedef struct text_output {
    const char *path;
    int (*write)(FILE *, const void *);
    const void *arg;
} text_output;

/* Every output or none: the files are written beside their targets, then
 * renamed; what goes to standard output comes last. */
static int write_outputs(imghist_ctx *ctx, const char *equalize_out, const imghist_view *eq,
                         const text_output *text, int n_text)
{
    ih_outputs outs = {0};
    char msg[1200];
    void *png = NULL;
    size_t png_size = 0;
    if (equalize_out != NULL) {
        imghist_status st = imghist_encode_png(ctx, eq, &png, &png_size);
        if (st != IMGHIST_OK) {
            snprintf(msg, sizeof msg, "%s: %s", equalize_out, imghist_last_error(ctx));
            return fail(msg);
        }
        const blob b = {png, png_size};
        const int bad = ih_outputs_stage(&outs, equalize_out, write_blob, &b, msg, sizeof msg);
        imghist_free(png);
        if (bad) {
            ih_outputs_abort(&outs);
            return fail(msg);
        }
    }
    for (int i = 0; i < n_text; i++) {
        if (text[i].path != NULL && strcmp(text[i].path, "-") != 0 &&
            ih_outputs_stage(&outs, text[i].path, text[i].write, text[i].arg, msg, sizeof msg)) {
            ih_outputs_abort(&outs);
            return ih_stop_signal() != 0 ? 128 + ih_stop_signal() : fail(msg);
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
    for (int i = 0; i < n_text; i++) {
        if (text[i].path != NULL && strcmp(text[i].path, "-") == 0 &&
            (text[i].write(stdout, text[i].arg) != 0 || fflush(stdout) != 0)) {
            return fail("<stdout>: write error");
        }
    }
    return IH_EXIT_OK;
}

/* Load a second image (--mask, --joint) as one channel: 8-bit gray for a
 * mask, the options' depth for a joint partner. */
static imghist_status load_second(imghist_ctx *ctx, const char *path, int native,
                                  imghist_image **img)
{
    imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, native);
    imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 0);
    return imghist_load_file(ctx, path, img);
}

/* --joint B: the joint histogram of the input and B, and their information. */
static int run_joint(imghist_ctx *ctx, const ih_cli_args *a, const char *name,
                     const imghist_image *img, const imghist_view *mask)
{
    char msg[1200];
    imghist_image *other = NULL;
    uint64_t *cells = NULL;
    int rc = IH_EXIT_OK;
    imghist_status st = load_second(ctx, a->joint, a->native_depth, &other);
    if (st != IMGHIST_OK) {
        return fail_lib_for(ctx, st, "--joint");
    }
    if (other->view.width != img->view.width || other->view.height != img->view.height) {
        snprintf(msg, sizeof msg, "--joint %s: %ux%u, but %s is %ux%u", a->joint,
                 other->view.width, other->view.height, name, img->view.width, img->view.height);
        rc = fail(msg);
        goto done;
    }
    imghist_histspec sa, sb;
    ih_hist_out ha = {0}, hb = {0};
    st = ih_cli_spec(ctx, a, 256, &img->view, mask, &sa, &ha, msg, sizeof msg);
    if (st == IMGHIST_OK) st = ih_cli_spec(ctx, a, 256, &other->view, mask, &sb, &hb, msg, sizeof msg);
    if (st != IMGHIST_OK) {
        rc = fail(msg);
        goto done;
    }
    sa.flags = IMGHIST_OUTLIERS | (ha.closed ? IMGHIST_CLOSED : 0);
    sb.flags = hb.closed ? IMGHIST_CLOSED : 0;
    const uint64_t n_cells = (uint64_t)sa.bins * sb.bins;
    if (n_cells > IMGHIST_MAX_BINS) {
        snprintf(msg, sizeof msg, "--joint: %u x %u bins are more than %u cells", sa.bins, sb.bins,
                 IMGHIST_MAX_BINS);
        rc = fail(msg);
        goto done;
    }
    cells = malloc((n_cells + 1) * sizeof *cells);
    if (cells == NULL) {
        rc = fail("out of memory for the joint histogram");
        goto done;
    }
    const imghist_counts jc = {cells, (size_t)n_cells + 1, IMGHIST_MEM_HOST};
    double r[2] = {0, 0};
    imghist_view a_masked = img->view;
    a_masked.mask = mask;
    st = imghist_histogram2d(ctx, &a_masked, &other->view, &sa, &sb, &jc);
    if (st == IMGHIST_OK) {
        st = imghist_mutual_information(ctx, &jc, sa.bins, sb.bins, r, IMGHIST_MEM_HOST);
    }
    if (st != IMGHIST_OK) {
        snprintf(msg, sizeof msg, "%s: %s", name, imghist_last_error(ctx));
        rc = fail(msg);
        goto done;
    }
    const joint_result j = {name, a->joint, img->view.width, img->view.height, sa.bins, sb.bins,
                            cells, r[0], r[1]};
    if (a->csv_out != NULL || a->json_out != NULL) {
        const text_output text[2] = {{a->csv_out, write_joint_csv, &j},
                                     {a->json_out, write_joint_json, &j}};
        rc = write_outputs(ctx, NULL, NULL, text, 2);
    } else if (ih_verbosity >= 0) {
        char shown[1024], shown_b[1024];
        snprintf(shown, sizeof shown, "%s", name);
        snprintf(shown_b, sizeof shown_b, "%s", a->joint);
        ih_sanitize_line(shown);
        ih_sanitize_line(shown_b);
        printf("%s and %s: %ux%u, %u x %u bins\n", shown, shown_b, img->view.width,
               img->view.height, sa.bins, sb.bins);
        printf("mutual information %.6f bits, normalized %.6f\n", r[0], r[1]);
        if (cells[n_cells] != 0) {
            printf("pixels outside the bins: %llu\n", (unsigned long long)cells[n_cells]);
        }
        if (fflush(stdout) != 0) {
            rc = fail("<stdout>: write error");
        }
    }
done:
    free(cells);
    imghist_image_free(other);
    return rc;
}

/* A histogram CSV of this program's (bin,lower,upper,count, 256 rows) into
 * ref: 0, or -1 with the reason in msg. */
static int read_hist_csv(const char *path, uint64_t ref[256], char *msg, size_t msglen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, msglen, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    int rows = 0, bad = 0;
    memset(ref, 0, 256 * sizeof ref[0]);
    if (fgets(line, sizeof line, f) == NULL || strncmp(line, "bin,", 4) != 0) {
        bad = 1;
    }
    while (!bad && fgets(line, sizeof line, f) != NULL) {
        unsigned bin = 0;
        unsigned long long count = 0;
        double lo = 0, hi = 0;
        char end = 0;
        if (sscanf(line, "%u,%lf,%lf,%llu%c", &bin, &lo, &hi, &count, &end) < 4 ||
            (end != '\n' && end != '\r' && end != 0) || bin != (unsigned)rows || rows >= 256) {
            bad = 1;
            break;
        }
        ref[rows++] = count;
    }
    fclose(f);
    if (bad || rows != 256) {
        snprintf(msg, msglen, "%s: not a 256-row histogram CSV (bin,lower,upper,count) of "
                              "an 8-bit image", path);
        return -1;
    }
    return 0;
}

/* --match REF: REF's gray 256-bin histogram (an image, or a CSV). */
static int match_reference(imghist_ctx *ctx, const char *path, uint64_t ref[256])
{
    char msg[1200];
    const size_t n = strlen(path);
    if (n >= 4 && strcasecmp(path + n - 4, ".csv") == 0) {
        if (read_hist_csv(path, ref, msg, sizeof msg) != 0) {
            ih_say("--match %s", msg);
            return IH_EXIT_FILE;
        }
    } else {
        imghist_image *img = NULL;
        imghist_status st = load_second(ctx, path, 0, &img);
        if (st != IMGHIST_OK) {
            return fail_lib_for(ctx, st, "--match");
        }
        const imghist_counts c = {.data = ref, .len = 256, .mem = IMGHIST_MEM_HOST};
        st = imghist_histogram(ctx, &img->view, NULL, &c);
        imghist_image_free(img);
        if (st != IMGHIST_OK) {
            return fail_lib(ctx, st);
        }
    }
    uint64_t total = 0;
    for (int v = 0; v < 256; v++) {
        total += ref[v];
    }
    if (total == 0) {
        snprintf(msg, sizeof msg, "--match %s: the reference histogram is empty", path);
        return fail(msg);
    }
    return IH_EXIT_OK;
}

/* One image's run: what it loaded and what it made. */
typedef struct one_run {
    const ih_cli_args *a;
    const char *name; /* the input as messages name it */
    imghist_ctx *ctx;
    imghist_image *img, *mask_img;
    const imghist_view *mask;
    imghist_view eq;  /* what --equalize writes */
    void *eq_pixels;
    ih_hist_out hist, after;
} one_run;

/* No output may name an input. */
static int refuse_overwrite(const ih_cli_args *a)
{
    char msg[1200];
    const char *outs[5] = {a->equalize_out, a->csv_out, a->json_out, a->total_out, a->plot};
    for (int i = 0; i < 5; i++) {
        if (names_input(a->input, outs[i]) || (a->match && names_input(a->match, outs[i]))) {
            snprintf(msg, sizeof msg, "%s: refusing to overwrite an input file", outs[i]);
            return fail(msg);
        }
    }
    return IH_EXIT_OK;
}

/* The image and its --mask. */
static int load_inputs(one_run *o)
{
    const ih_cli_args *a = o->a;
    char msg[1200];
    int reported = 0;
    imghist_status st = load(o->ctx, a->input, &o->img, &reported);
    if (st != IMGHIST_OK) {
        return ih_stop_signal() ? 128 + ih_stop_signal() : reported ? IH_EXIT_FILE
                                                                    : fail_lib(o->ctx, st);
    }
    if ((o->img->flags & IMGHIST_IMAGE_TRUNCATED) && ih_verbosity >= 0) {
        ih_say("warning: %s: %s", a->input, IH_TRUNCATED_WARNING);
    }
    if ((o->img->flags & IMGHIST_IMAGE_REDUCED) && a->has_range && ih_verbosity >= 0) {
        ih_say("warning: %s: %s", a->input, IH_REDUCED_WARNING);
    }
    if (a->mask == NULL) {
        return IH_EXIT_OK;
    }
    st = load_second(o->ctx, a->mask, 0, &o->mask_img);
    if (st != IMGHIST_OK) {
        return fail_lib_for(o->ctx, st, "--mask");
    }
    if (o->mask_img->view.width != o->img->view.width ||
        o->mask_img->view.height != o->img->view.height) {
        snprintf(msg, sizeof msg, "--mask %s: the mask is %ux%u, %s is %ux%u", a->mask,
                 o->mask_img->view.width, o->mask_img->view.height, o->name,
                 o->img->view.width, o->img->view.height);
        return fail(msg);
    }
    o->mask = &o->mask_img->view;
    return IH_EXIT_OK;
}

/* --match: the LUT from the two 8-bit gray histograms (the options allow
 * nothing else), applied by the library (the image is in host memory). */
static int apply_match(one_run *o, const uint64_t ref_hist[256])
{
    char msg[1200];
    uint8_t lut[256];
    if (o->img->view.dtype != IMGHIST_U8 || o->hist.bins != 256 ||
        imghist_match_lut(o->hist.counts, ref_hist, lut) != IMGHIST_OK) {
        snprintf(msg, sizeof msg, "%s: --match needs an 8-bit image", o->name);
        return fail(msg);
    }
    const imghist_status st = imghist_apply_lut(o->ctx, &o->img->view, &o->eq, lut);
    return st != IMGHIST_OK ? fail_lib(o->ctx, st) : IH_EXIT_OK;
}

/* --color: the file again with its colour, then the colour result replaces
 * the gray one as what --equalize writes. */
static int apply_color(one_run *o)
{
    char msg[1200];
    uint8_t *color_rgb = NULL;
    imghist_image *colour = NULL;
    imghist_set_param(o->ctx, IMGHIST_P_LOAD_DEPTH, 0);
    imghist_set_param(o->ctx, IMGHIST_P_LOAD_CHANNELS, 1);
    imghist_status st = imghist_load_file(o->ctx, o->a->input, &colour);
    if (st == IMGHIST_OK) {
        st = ih_color_equalize(o->ctx, o->a, &colour->view, &color_rgb);
    }
    imghist_image_free(colour);
    if (st != IMGHIST_OK) {
        snprintf(msg, sizeof msg, "%s: --color: %s", o->name,
                 st == IMGHIST_E_NOMEM ? "out of memory" : imghist_last_error(o->ctx));
        return fail(msg);
    }
    free(o->eq_pixels);
    o->eq_pixels = color_rgb;
    o->eq.data = color_rgb;
    o->eq.channels = 3;
    o->eq.pitch = (size_t)o->img->view.width * 3;
    return IH_EXIT_OK;
}

/* The histogram, and what --equalize writes: the equalized image, or the
 * one --match, --clahe or --color makes. */
static int transform(one_run *o)
{
    const ih_cli_args *a = o->a;
    char msg[1200], why[600];
    o->eq = o->img->view;
    if (a->equalize_out != NULL) {
        const size_t row = (size_t)o->img->view.width * ih_sample_size(o->img->view.dtype);
        o->eq_pixels = malloc(row * o->img->view.height);
        if (o->eq_pixels == NULL) {
            snprintf(msg, sizeof msg, "%s: out of memory", o->name);
            return fail(msg);
        }
        o->eq.data = o->eq_pixels;
        o->eq.pitch = row;
    }
    uint64_t ref_hist[256];
    int rc = a->match != NULL ? match_reference(o->ctx, a->match, ref_hist) : IH_EXIT_OK;
    if (rc != IH_EXIT_OK) {
        return rc;
    }
    imghist_status st = ih_measure(o->ctx, a, &o->img->view, o->mask,
                                   a->equalize_out && !a->match && !a->clahe ? &o->eq : NULL,
                                   &o->hist, why, sizeof why);
    report_note(o->ctx);
    if (st != IMGHIST_OK) {
        snprintf(msg, sizeof msg, "%s: %s", o->name, why);
        return fail(msg);
    }
    if (a->match != NULL && (rc = apply_match(o, ref_hist)) != IH_EXIT_OK) {
        return rc;
    }
    if (a->clahe && a->color == IH_COLOR_GRAY) {
        st = imghist_clahe(o->ctx, &o->img->view, &o->eq, a->clip, a->tiles_x, a->tiles_y);
        report_note(o->ctx);
        if (st != IMGHIST_OK) {
            snprintf(msg, sizeof msg, "%s: CLAHE: %s", o->name, imghist_last_error(o->ctx));
            return fail(msg);
        }
    }
    return a->color != IH_COLOR_GRAY ? apply_color(o) : IH_EXIT_OK;
}

/* The outputs asked for, or the summary on stdout. */
static int write_results(one_run *o)
{
    const ih_cli_args *a = o->a;
    char msg[1200], why[600];
    if (a->equalize_out != NULL && o->mask != NULL && ih_verbosity > 0) {
        ih_say("the LUT comes from the pixels where %s is not 0", a->mask);
    }
    /* With --plot and --equalize, the equalized image's histogram beside the
     * original's, counted with the same options (and mask). */
    if (a->plot != NULL && a->equalize_out != NULL) {
        const imghist_status st = ih_measure(o->ctx, a, &o->eq, o->mask, NULL, &o->after, why,
                                             sizeof why);
        if (st != IMGHIST_OK) {
            snprintf(msg, sizeof msg, "%s: %s", o->name, why);
            return fail(msg);
        }
    }
    if (a->equalize_out != NULL || a->csv_out != NULL || a->json_out != NULL ||
        a->total_out != NULL || a->plot != NULL) {
        const json_arg j = {o->name, &o->img->view, &o->hist};
        ih_plot plot = {o->name, &o->hist, a->equalize_out != NULL ? &o->after : NULL,
                        a->log_scale, 0};
        if (a->plot != NULL) {
            /* Checked with the options. */
            (void)ih_plot_kind(a->plot, &plot.svg, msg, sizeof msg);
        }
        const text_output text[4] = {{a->csv_out, write_csv, &o->hist},
                                     {a->json_out, write_json, &j},
                                     {a->total_out, write_csv, &o->hist},
                                     {a->plot, ih_write_plot, &plot}};
        return write_outputs(o->ctx, a->equalize_out, &o->eq, text, 4);
    }
    if (ih_verbosity >= 0) {
        char shown[1024];
        snprintf(shown, sizeof shown, "%s", o->name);
        ih_sanitize_line(shown);
        ih_print_summary(stdout, shown, o->img->view.width, o->img->view.height, &o->hist);
        if (fflush(stdout) != 0) {
            return fail("<stdout>: write error");
        }
    }
    return IH_EXIT_OK;
}

static int run_one(const ih_cli_args *a)
{
    int rc = refuse_overwrite(a);
    if (rc != IH_EXIT_OK) {
        return rc;
    }
    one_run o;
    memset(&o, 0, sizeof o);
    o.a = a;
    o.name = strcmp(a->input, "-") == 0 ? "<stdin>" : a->input;
    rc = ih_make_context(a, a->jobs ? a->jobs : ih_cores(), &o.ctx);
    if (rc != IH_EXIT_OK) {
        return rc;
    }
    if (ih_verbosity > 0) {
        /* A build without CUDA has no GPU to suggest. */
        ih_say("backend: %s%s", imghist_backend_name(imghist_get_backend(o.ctx)),
               !ih_one_image_on_cpu(a) ? ""
               : IMGHIST_WITH_CUDA     ? " (auto: one image is done before CUDA would have "
                                         "started; --backend cuda or --gpus for a GPU)"
                                       : " (this build has no CUDA backend)");
    }
    rc = load_inputs(&o);
    if (rc == IH_EXIT_OK && a->joint != NULL) {
        rc = run_joint(o.ctx, a, o.name, o.img, o.mask);
    } else if (rc == IH_EXIT_OK && (rc = transform(&o)) == IH_EXIT_OK) {
        rc = write_results(&o);
    }
    ih_hist_out_free(&o.after);
    ih_hist_out_free(&o.hist);
    free(o.eq_pixels);
    imghist_image_free(o.mask_img);
    imghist_image_free(o.img);
    imghist_destroy(o.ctx);
    return rc;
}

/* How the options combine with what the inputs are (a folder or several
 * inputs make a batch run): 0, or -1 with a usage error in err. */
static int check_run(const ih_cli_args *a, char *err, size_t errlen)
{
    const int batch = ih_is_batch(a);
    err[0] = '\0';
    if (batch && a->plot != NULL && a->total_out == NULL) {
        snprintf(err, errlen, "--plot draws the histogram of one image, or of a batch run's "
                              "--total; for each image of a batch, give --plot-dir DIR");
    } else if (!batch && a->plot_dir != NULL) {
        snprintf(err, errlen, "--plot-dir is for a batch run (a folder or several inputs); for "
                              "one image give --plot FILE");
    } else if (batch && a->match != NULL) {
        snprintf(err, errlen, "--match maps one image; a folder is a batch run");
    } else if (batch && a->clahe) {
        snprintf(err, errlen, "--clahe transforms one image; a folder is a batch run (use the "
                              "library's imghist_clahe on a view of several images, or "
                              "imghist.clahe on a stack)");
    } else if (!batch && a->equalize_out != NULL && !ih_equalize_extension_ok(a->equalize_out)) {
        snprintf(err, errlen, "--equalize %s: the image is written as PNG; name it %s",
                 a->equalize_out, ih_equalize_extensions);
    }
    return err[0] != '\0' ? -1 : 0;
}

/* --version: the version and what was built in. */
static void print_version(void)
{
    printf("imghist %s\n", imghist_version_string());
    printf("CUDA backend: %s\n", IMGHIST_WITH_CUDA ? "yes" : "no");
    printf("nvJPEG (--decode gpu): %s\n", ih_gpu_decode_built() ? "yes" : "no");
    printf("MPI (mpirun): %s\n", ih_mpi_built() ? "yes" : "no");
    printf("plots (cairo, --plot): %s\n", ih_plot_available() ? "yes" : "no");
    printf("formats read: PNG JPEG TIFF BMP GIF PNM TGA PSD HDR PFM; written: PNG\n");
    if (imghist_version() != IMGHIST_VERSION_NUMBER) {
        fprintf(stderr, "imghist: warning: built against %s, running with library %s\n",
                IMGHIST_VERSION_STRING, imghist_version_string());
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "merge") == 0) {
        return ih_merge_main(argc - 1, argv + 1); /* a file named merge: ./merge */
    }
    if (ih_is_space_call(argc, argv)) {
        return ih_ndhist_main(argc, argv);
    }
    if (argc > 1 && strcmp(argv[1], "compare") == 0) {
        return ih_compare_main(argc - 1, argv + 1);
    }
    if (argc > 1 && strcmp(argv[1], "similar") == 0) {
        return ih_similar_main(argc - 1, argv + 1);
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
    ih_output_sync = !a.no_sync;
    if (a.bins > (1u << 20) && (a.csv_out != NULL || a.json_out != NULL || a.total_out != NULL) &&
        ih_verbosity >= 0 && ih_mpi.rank == 0) {
        /* tens of bytes a row: hundreds of megabytes, minutes of writing */
        ih_say("warning: --bins %u: each histogram written has %u rows", a.bins, a.bins);
    }
    int rc = IH_EXIT_OK;
    if (ih_mpi.rank != 0 && (a.help || a.version)) {
        /* rank 0 answers */
    } else if (a.help) {
        fputs(a.short_help ? ih_short_help_text : ih_usage_text, stdout);
    } else if (a.version) {
        print_version();
    } else {
        ih_verbosity = a.verbosity;
        ih_catch_signals();
        /* Before anything calls CUDA: it sets up every GPU it is shown. */
        if (ih_narrow_gpus(&a.scale, ih_is_batch(&a), a.backend == IMGHIST_BACKEND_CPU,
                           ih_mpi.local_rank, ih_mpi.local_size,
                           a.backend == IMGHIST_BACKEND_CPU ? 0 : ih_gpus_before_cuda(), err,
                           sizeof err) != 0) {
            ih_say("%s (see imghist --help)", err);
            rc = IH_EXIT_USAGE;
        } else if (check_run(&a, err, sizeof err) != 0) {
            if (ih_mpi.rank == 0) ih_say("%s (see imghist --help)", err);
            rc = IH_EXIT_USAGE;
        } else {
            rc = ih_is_batch(&a) ? ih_run_batch(&a) : run_one(&a);
        }
    }
    if (ih_batch_left_running) {
        /* CUDA is still starting in a thread that reads the arguments. */
        if (fflush(NULL) != 0 && rc == IH_EXIT_OK) {
            rc = IH_EXIT_FILE;
        }
        _exit(rc);
    }
    ih_free_args(&a);
    ih_mpi_stop();
    return rc;
}
