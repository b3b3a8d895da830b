#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_context.h"
#include "imghist.h"
#include "log.h"
#include "outputs.h"
#include "report.h"

const char ih_compare_usage_text[] =
    "Usage: imghist compare REF INPUT... [options]\n"
    "\n"
    "Prints each input's similarity to REF, d(REF, INPUT), by one of OpenCV's\n"
    "compareHist methods (the same numbers as cv2.compareHist). REF and the\n"
    "inputs are images (their 8-bit gray histograms) or histogram CSVs that\n"
    "imghist writes (--csv of one image, --total).\n"
    "  --metric M        correlation (default), chisqr, intersect, bhattacharyya\n"
    "                    (hellinger), chisqr_alt, kl_div, emd\n"
    "  --sort            most similar first (highest correlation or intersection,\n"
    "                    lowest distance)\n"
    "  --csv FILE        file,metric,value rows; FILE may be -\n"
    "  --json FILE       JSON Lines {\"file\", \"metric\", \"value\"}; FILE may be -\n"
    "  --bins N, --range LO:HI   the images' histograms, as for one image\n"
    "  --normalize       each histogram divided by its sum first\n"
    "  -q                no lines on standard output\n"
    "\n"
    "Example:\n"
    "  imghist compare ref.png a.png b.png --metric bhattacharyya --sort\n"
    "\n"
    "Exit status: 0 success, 1 an input could not be read or its bins differ\n"
    "from REF's, 2 usage error.\n";

const char ih_similar_usage_text[] =
    "Usage: imghist similar DIR... --threshold T [options]\n"
    "\n"
    "Lists the pairs of images of the folders whose histograms are within T of\n"
    "each other (correlation and intersection: at least T; the distances: at\n"
    "most T), most similar first, one \"VALUE<TAB>A<TAB>B\" line each. Every pair\n"
    "is compared on the GPU where there is one, else on every core.\n"
    "  --metric M        as for imghist compare (default correlation)\n"
    "  --threshold T     required\n"
    "  -r, --recursive   sub-folders too\n"
    "  --csv FILE, --json FILE   a,b,metric,value records; FILE may be -\n"
    "  --bins N, --range LO:HI, --normalize   as for imghist compare\n"
    "  --backend B       auto (default), cpu or cuda\n"
    "\n"
    "Example:\n"
    "  imghist similar photos/ -r --metric bhattacharyya --threshold 0.05\n"
    "\n"
    "Exit status: 0 success, 1 a file could not be read, 2 usage error.\n";

typedef struct cmp_args {
    imghist_compare_method metric;
    int sort, normalize, quiet, recursive, has_threshold;
    double threshold;
    const char *csv, *json;
    imghist_histspec spec;
    imghist_backend backend;
    char **inputs;
    size_t n_inputs;
} cmp_args;

static int usage(const char *what, const char *cmd)
{
    ih_say("%s (see imghist %s --help)", what, cmd);
    return IH_EXIT_USAGE;
}

static int parse_range(const char *v, imghist_histspec *s)
{
    char *end;
    errno = 0;
    s->lo = strtod(v, &end);
    if (end == v || *end != ':') return -1;
    const char *h = end + 1;
    s->hi = strtod(h, &end);
    return (end == h || *end != '\0' || errno != 0 || !(s->lo < s->hi) || !isfinite(s->lo) ||
            !isfinite(s->hi))
               ? -1
               : 0;
}

/* The options; 0, -1 after --help (printed), or IH_EXIT_USAGE. */
static int parse(int argc, char **argv, int similar, cmp_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->metric = IMGHIST_CMP_CORREL;
    a->backend = similar ? IMGHIST_BACKEND_AUTO : IMGHIST_BACKEND_CPU;
    a->inputs = calloc((size_t)argc, sizeof *a->inputs);
    if (a->inputs == NULL) {
        ih_say("out of memory");
        return IH_EXIT_FILE;
    }
    char msg[160];
    int only_inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (only_inputs || o[0] != '-' || strcmp(o, "-") == 0) {
            a->inputs[a->n_inputs++] = argv[i];
            continue;
        }
        if (strcmp(o, "--") == 0) {
            only_inputs = 1;
        } else if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            fputs(similar ? ih_similar_usage_text : ih_compare_usage_text, stdout);
            return -1;
        } else if (strcmp(o, "--sort") == 0 && !similar) {
            a->sort = 1;
        } else if (strcmp(o, "--normalize") == 0) {
            a->normalize = 1;
        } else if (strcmp(o, "-q") == 0 && !similar) {
            a->quiet = 1;
        } else if ((strcmp(o, "-r") == 0 || strcmp(o, "--recursive") == 0) && similar) {
            a->recursive = 1;
        } else if (v == NULL && (strcmp(o, "--metric") == 0 || strcmp(o, "--csv") == 0 ||
                                 strcmp(o, "--json") == 0 || strcmp(o, "--bins") == 0 ||
                                 strcmp(o, "--range") == 0 || strcmp(o, "--threshold") == 0 ||
                                 strcmp(o, "--backend") == 0)) {
            snprintf(msg, sizeof msg, "%s needs a value", o);
            return usage(msg, cmd);
        } else if (strcmp(o, "--metric") == 0) {
            if (imghist_compare_method_from_name(v, &a->metric) != IMGHIST_OK) {
                snprintf(msg, sizeof msg, "--metric %.40s: not a comparison method", v);
                return usage(msg, cmd);
            }
            i++;
        } else if (strcmp(o, "--csv") == 0 || strcmp(o, "--json") == 0) {
            *(o[2] == 'c' ? &a->csv : &a->json) = v;
            i++;
        } else if (strcmp(o, "--bins") == 0) {
            char *end;
            errno = 0;
            const unsigned long n = strtoul(v, &end, 10);
            if (end == v || *end != '\0' || errno != 0 || v[0] == '-' || n == 0 ||
                n > IMGHIST_MAX_BINS) {
                snprintf(msg, sizeof msg, "--bins %.40s: want 1 to %u", v, IMGHIST_MAX_BINS);
                return usage(msg, cmd);
            }
            a->spec.bins = (uint32_t)n;
            i++;
        } else if (strcmp(o, "--range") == 0) {
            if (parse_range(v, &a->spec) != 0) {
                snprintf(msg, sizeof msg, "--range needs LO:HI, LO below HI, not '%.40s'", v);
                return usage(msg, cmd);
            }
            i++;
        } else if (strcmp(o, "--threshold") == 0 && similar) {
            char *end;
            a->threshold = strtod(v, &end);
            if (end == v || *end != '\0' || isnan(a->threshold)) {
                snprintf(msg, sizeof msg, "--threshold %.40s: not a number", v);
                return usage(msg, cmd);
            }
            a->has_threshold = 1;
            i++;
        } else if (strcmp(o, "--backend") == 0 && similar) {
            if (imghist_backend_from_name(v, &a->backend) != IMGHIST_OK) {
                snprintf(msg, sizeof msg, "--backend %.40s: want auto, cpu or cuda", v);
                return usage(msg, cmd);
            }
            i++;
        } else {
            snprintf(msg, sizeof msg, "unknown option %.60s", o);
            return usage(msg, cmd);
        }
    }
    if (a->spec.bins != 0 && a->spec.lo == 0 && a->spec.hi == 0) {
        a->spec.hi = 256; /* --bins alone: over the 8-bit levels */
    }
    if (a->spec.bins == 0 && a->spec.hi != 0) {
        return usage("--range needs --bins", cmd);
    }
    if (a->csv != NULL && a->json != NULL && strcmp(a->csv, "-") == 0 &&
        strcmp(a->json, "-") == 0) {
        return usage("--csv - and --json - both on standard output", cmd);
    }
    if (similar) {
        if (a->n_inputs == 0) return usage("no folder given", cmd);
        if (!a->has_threshold) return usage("--threshold T is required", cmd);
    } else if (a->n_inputs < 2) {
        return usage("want REF and at least one INPUT", cmd);
    }
    return 0;
}

/* Higher is more similar for correlation and intersection, lower for the rest. */
static int higher_is_closer(imghist_compare_method m)
{
    return m == IMGHIST_CMP_CORREL || m == IMGHIST_CMP_INTERSECT;
}

/* ---- A histogram from an image or a CSV ---- */

typedef struct hist {
    uint64_t *counts;
    size_t bins;
} hist;

/* The counts of a CSV imghist wrote for one image or a --total: a header
 * "bin,lower,upper,..." then one row a bin, channels' columns after upper,
 * read channel after channel. 0, or -1 after saying why. */
static int read_csv(const char *path, FILE *fp, hist *h)
{
    char *line = NULL;
    size_t cap = 0, rows = 0, chans = 0, room = 0;
    long lineno = 0;
    uint64_t *v = NULL;
    int rc = -1;
    while (getline(&line, &cap, fp) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1) {
            if (strncmp(line, "bin,lower,upper,", 16) != 0) {
                ih_say("%s: neither an image nor a histogram CSV of imghist", path);
                goto out;
            }
            chans = 1;
            for (const char *p = line + 16; *p; p++) chans += *p == ',';
            continue;
        }
        if (line[0] == '\0') continue;
        if (rows == room) {
            room = room ? 2 * room : 256;
            uint64_t *nv = realloc(v, room * chans * sizeof *v);
            if (nv == NULL) {
                ih_say("%s: out of memory", path);
                goto out;
            }
            v = nv;
        }
        char *f = line;
        for (int skip = 0; skip < 3 && f != NULL; skip++) {
            f = strchr(f, ',');
            f = f != NULL ? f + 1 : NULL;
        }
        for (size_t c = 0; c < chans; c++) {
            char *end;
            errno = 0;
            const unsigned long long n = f != NULL ? strtoull(f, &end, 10) : 0;
            if (f == NULL || end == f || *f == '-' || errno != 0 ||
                (*end != ',' && *end != '\0') || (c + 1 < chans) != (*end == ',')) {
                ih_say("%s:%ld: not a row of counts", path, lineno);
                goto out;
            }
            v[rows * chans + c] = n;
            f = *end == ',' ? end + 1 : NULL;
        }
        rows++;
    }
    if (ferror(fp)) {
        ih_say("%s: cannot read: %s", path, strerror(errno ? errno : EIO));
        goto out;
    }
    if (rows == 0) {
        ih_say("%s: a histogram CSV without bins", path);
        goto out;
    }
    h->bins = rows * chans;
    h->counts = malloc(h->bins * sizeof *h->counts);
    if (h->counts == NULL) {
        ih_say("%s: out of memory", path);
        goto out;
    }
    for (size_t c = 0; c < chans; c++) {
        for (size_t r = 0; r < rows; r++) {
            h->counts[c * rows + r] = v[r * chans + c];
        }
    }
    rc = 0;
out:
    free(v);
    free(line);
    return rc;
}

static int hist_of(imghist_ctx *ctx, const cmp_args *a, const char *path, hist *h)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        ih_say("%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    unsigned char head[64];
    const size_t got = fread(head, 1, sizeof head, fp);
    if (imghist_detect_format(head, got) == NULL) {
        rewind(fp);
        const int rc = read_csv(path, fp, h);
        fclose(fp);
        return rc;
    }
    fclose(fp);
    imghist_image *img = NULL;
    imghist_status st = imghist_load_file(ctx, path, &img);
    if (st == IMGHIST_OK) {
        h->bins = imghist_bins(a->spec.bins ? &a->spec : NULL, img->view.dtype);
        h->counts = malloc(h->bins * sizeof *h->counts);
        const imghist_counts out = {h->counts, h->bins, IMGHIST_MEM_HOST};
        st = h->counts == NULL ? IMGHIST_E_NOMEM
                               : imghist_histogram(ctx, &img->view,
                                                   a->spec.bins ? &a->spec : NULL, &out);
    }
    imghist_image_free(img);
    if (st != IMGHIST_OK) {
        const char *msg = imghist_last_error(ctx);
        ih_say("%s: %s", path, *msg ? msg : imghist_strerror(st));
        return -1;
    }
    return 0;
}

/* n histograms of `bins` bins, packed, as the library compares them:
 * counts, or with --normalize each divided by its sum. NULL: out of memory. */
static void *packed_set(const cmp_args *a, const uint64_t *counts, size_t n, size_t bins,
                        imghist_hists *set)
{
    set->type = IMGHIST_HIST_U64;
    set->mem = IMGHIST_MEM_HOST;
    set->bins = bins;
    set->count = n;
    set->stride = 0;
    set->data = counts;
    if (!a->normalize) {
        return (void *)counts;
    }
    double *v = malloc(n * bins * sizeof *v);
    if (v == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t b = 0; b < bins; b++) s += (double)counts[i * bins + b];
        for (size_t b = 0; b < bins; b++) {
            v[i * bins + b] = s > 0 ? (double)counts[i * bins + b] / s : 0.0;
        }
    }
    set->type = IMGHIST_HIST_F64;
    set->data = v;
    return v;
}

/* ---- Results ---- */

typedef struct record {
    const char *a, *b; /* b NULL for compare */
    double value;
} record;

static int closer_first_higher(const void *x, const void *y)
{
    const double p = ((const record *)x)->value, q = ((const record *)y)->value;
    return (q > p) - (q < p) + (isnan(p) - isnan(q));
}

static int closer_first_lower(const void *x, const void *y)
{
    const double p = ((const record *)x)->value, q = ((const record *)y)->value;
    return (p > q) - (p < q) + (isnan(p) - isnan(q));
}

static void sort_records(record *r, size_t n, imghist_compare_method m)
{
    qsort(r, n, sizeof *r, higher_is_closer(m) ? closer_first_higher : closer_first_lower);
}

typedef struct records_out {
    const record *r;
    size_t n;
    const char *metric;
    int pairs; /* a and b: imghist similar's */
} records_out;

static int write_csv_records(FILE *fp, const void *arg)
{
    const records_out *o = arg;
    fputs(o->pairs ? "a,b,metric,value\n" : "file,metric,value\n", fp);
    for (size_t i = 0; i < o->n; i++) {
        ih_write_csv_field(fp, o->r[i].a);
        if (o->r[i].b != NULL) {
            fputc(',', fp);
            ih_write_csv_field(fp, o->r[i].b);
        }
        fprintf(fp, ",%s,%.17g\n", o->metric, o->r[i].value);
    }
    return ferror(fp) ? -1 : 0;
}

static int write_json_records(FILE *fp, const void *arg)
{
    const records_out *o = arg;
    for (size_t i = 0; i < o->n; i++) {
        fputs(o->r[i].b != NULL ? "{\"a\": " : "{\"file\": ", fp);
        ih_write_json_string(fp, o->r[i].a);
        if (o->r[i].b != NULL) {
            fputs(", \"b\": ", fp);
            ih_write_json_string(fp, o->r[i].b);
        }
        if (isfinite(o->r[i].value)) {
            fprintf(fp, ", \"metric\": \"%s\", \"value\": %.17g}\n", o->metric, o->r[i].value);
        } else {
            fprintf(fp, ", \"metric\": \"%s\", \"value\": null}\n", o->metric);
        }
    }
    return ferror(fp) ? -1 : 0;
}

/* The CSV and JSON outputs: files all or nothing, then "-" on standard output. */
static int write_outputs(const cmp_args *a, const record *r, size_t n, int pairs)
{
    const records_out o = {r, n, imghist_compare_method_name(a->metric), pairs};
    const char *paths[2] = {a->csv, a->json};
    int (*const writers[2])(FILE *, const void *) = {write_csv_records, write_json_records};
    ih_outputs outs;
    memset(&outs, 0, sizeof outs);
    char err[512];
    int bad = 0;
    for (int k = 0; k < 2 && !bad; k++) {
        bad = paths[k] != NULL && strcmp(paths[k], "-") != 0 &&
              ih_outputs_stage(&outs, paths[k], writers[k], &o, err, sizeof err) != 0;
    }
    if (bad || ih_outputs_commit(&outs, err, sizeof err) != 0) {
        ih_outputs_abort(&outs);
        ih_say("%s", err);
        return IH_EXIT_FILE;
    }
    for (int k = 0; k < 2; k++) {
        if (paths[k] != NULL && strcmp(paths[k], "-") == 0 &&
            (writers[k](stdout, &o) != 0 || fflush(stdout) != 0)) {
            ih_say("standard output: cannot write: %s", strerror(errno ? errno : EIO));
            return IH_EXIT_FILE;
        }
    }
    return IH_EXIT_OK;
}

static int on_stdout(const cmp_args *a)
{
    return (a->csv != NULL && strcmp(a->csv, "-") == 0) ||
           (a->json != NULL && strcmp(a->json, "-") == 0);
}

static int new_context(imghist_backend backend, imghist_ctx **ctx)
{
    const imghist_status st = imghist_create(backend, -1, ctx);
    if (st != IMGHIST_OK) {
        ih_say("%s", *ctx != NULL ? imghist_last_error(*ctx) : imghist_strerror(st));
        imghist_destroy(*ctx);
        *ctx = NULL;
        return st == IMGHIST_E_NO_GPU || st == IMGHIST_E_UNSUPPORTED ? IH_EXIT_USAGE
                                                                     : IH_EXIT_FILE;
    }
    if (imghist_get_backend(*ctx) == IMGHIST_BACKEND_CPU) {
        imghist_set_param(*ctx, IMGHIST_P_CPU_THREADS, (int64_t)ih_cores());
    }
    return IH_EXIT_OK;
}

/* The options and the context: IH_EXIT_OK, -1 after --help, or the exit
 * status of a failure (said; nothing left to free). */
static int start(int argc, char **argv, int similar, cmp_args *a, imghist_ctx **ctx)
{
    int rc = parse(argc, argv, similar, a);
    if (rc == 0) {
        rc = new_context(a->backend, ctx);
    }
    if (rc != IH_EXIT_OK) {
        free(a->inputs);
        a->inputs = NULL;
    }
    return rc;
}

/* ---- imghist compare ---- */

int ih_compare_main(int argc, char **argv)
{
    cmp_args a;
    imghist_ctx *ctx = NULL;
    int rc = start(argc, argv, 0, &a, &ctx);
    if (rc != IH_EXIT_OK) {
        return rc < 0 ? IH_EXIT_OK : rc; /* -1: --help */
    }
    const size_t n = a.n_inputs; /* REF and the inputs */
    hist *h = calloc(n, sizeof *h);
    uint64_t *counts = NULL;
    record *r = calloc(n, sizeof *r);
    double *values = calloc(n, sizeof *values);
    void *normalized = NULL;
    if (rc == IH_EXIT_OK && (h == NULL || r == NULL || values == NULL)) {
        ih_say("out of memory");
        rc = IH_EXIT_FILE;
    }
    for (size_t i = 0; rc == IH_EXIT_OK && i < n; i++) {
        if (hist_of(ctx, &a, a.inputs[i], &h[i]) != 0) {
            rc = IH_EXIT_FILE;
        } else if (h[i].bins != h[0].bins) {
            ih_say("%s: %zu bins, and %s %zu", a.inputs[i], h[i].bins, a.inputs[0], h[0].bins);
            rc = IH_EXIT_FILE;
        }
    }
    const size_t bins = rc == IH_EXIT_OK ? h[0].bins : 0;
    if (rc == IH_EXIT_OK && (counts = malloc(n * bins * sizeof *counts)) == NULL) {
        ih_say("out of memory");
        rc = IH_EXIT_FILE;
    }
    imghist_hists set;
    if (rc == IH_EXIT_OK) {
        for (size_t i = 0; i < n; i++) {
            memcpy(counts + i * bins, h[i].counts, bins * sizeof *counts);
        }
        normalized = packed_set(&a, counts, n, bins, &set);
        if (normalized == NULL) {
            ih_say("out of memory");
            rc = IH_EXIT_FILE;
        }
    }
    if (rc == IH_EXIT_OK) {
        imghist_hists query = set;
        query.count = 1;
        const imghist_status st =
            imghist_compare_many(ctx, &query, &set, a.metric, values, IMGHIST_MEM_HOST);
        if (st != IMGHIST_OK) {
            ih_say("%s", imghist_last_error(ctx));
            rc = IH_EXIT_FILE;
        }
    }
    if (rc == IH_EXIT_OK) {
        for (size_t i = 1; i < n; i++) {
            r[i - 1].a = a.inputs[i];
            r[i - 1].value = values[i];
        }
        if (a.sort) {
            sort_records(r, n - 1, a.metric);
        }
        rc = write_outputs(&a, r, n - 1, 0);
    }
    if (rc == IH_EXIT_OK && !a.quiet && !on_stdout(&a)) {
        for (size_t i = 0; i + 1 < n; i++) {
            printf("%.9g\t%s\n", r[i].value, r[i].a);
        }
    }
    if (normalized != counts) free(normalized);
    for (size_t i = 0; h != NULL && i < n; i++) free(h[i].counts);
    free(h);
    free(counts);
    free(r);
    free(values);
    free(a.inputs);
    imghist_destroy(ctx);
    return rc;
}

/* ---- imghist similar ---- */

/* Rows of the matrix at a time when all of it would take more than this. */
#define MAX_MATRIX_BYTES ((size_t)1 << 30)

static int within(const cmp_args *a, double v)
{
    return higher_is_closer(a->metric) ? v >= a->threshold : v <= a->threshold;
}

/* The pairs i < j within the threshold, appended to *r (grown as needed). */
static int collect(const cmp_args *a, const imghist_file_list *fl, const size_t *ok, size_t row,
                   const double *d, size_t n, record **r, size_t *nr, size_t *cap)
{
    for (size_t j = row + 1; j < n; j++) {
        if (!within(a, d[j])) continue;
        if (*nr == *cap) {
            *cap = *cap ? 2 * *cap : 256;
            record *g = realloc(*r, *cap * sizeof **r);
            if (g == NULL) return -1;
            *r = g;
        }
        (*r)[(*nr)++] = (record){fl->paths[ok[row]], fl->paths[ok[j]], d[j]};
    }
    return 0;
}

int ih_similar_main(int argc, char **argv)
{
    cmp_args a;
    imghist_ctx *ctx = NULL;
    int rc = start(argc, argv, 1, &a, &ctx);
    if (rc != IH_EXIT_OK) {
        return rc < 0 ? IH_EXIT_OK : rc; /* -1: --help */
    }
    imghist_file_list *fl = NULL;
    if (rc == IH_EXIT_OK &&
        imghist_list_files(ctx, (const char *const *)a.inputs, a.n_inputs, a.recursive, &fl) !=
            IMGHIST_OK) {
        ih_say("%s", imghist_last_error(ctx));
        rc = IH_EXIT_FILE;
    }
    for (size_t i = 0; fl != NULL && i < fl->n_unreadable; i++) {
        ih_say("%s", fl->unreadable[i].message);
        rc = IH_EXIT_FILE;
    }
    const imghist_histspec *spec = a.spec.bins ? &a.spec : NULL;
    const size_t len = ctx != NULL ? imghist_files_counts_len(ctx, spec) : 0;
    const size_t nf = fl != NULL ? fl->count : 0;
    uint64_t *counts = nf ? calloc(nf, len * sizeof *counts) : NULL;
    imghist_file_result *res = nf ? calloc(nf, sizeof *res) : NULL;
    size_t *ok = nf ? calloc(nf, sizeof *ok) : NULL;
    size_t n = 0;
    if (nf && (counts == NULL || res == NULL || ok == NULL)) {
        ih_say("out of memory for %zu histograms", nf);
        rc = IH_EXIT_FILE;
    } else if (nf) {
        const imghist_counts out = {counts, nf * len, IMGHIST_MEM_HOST};
        imghist_histogram_files(ctx, (const char *const *)fl->paths, nf, 0, spec, &out, res,
                                NULL, NULL);
        for (size_t i = 0; i < nf; i++) {
            if (res[i].status == IMGHIST_OK) {
                ok[n] = i;
                memmove(counts + n * len, counts + i * len, len * sizeof *counts);
                n++;
            } else {
                ih_say("%s", res[i].message != NULL ? res[i].message : fl->paths[i]);
                rc = IH_EXIT_FILE;
            }
            imghist_free(res[i].message);
        }
    }
    record *r = NULL;
    size_t nr = 0, cap = 0;
    imghist_hists set;
    void *values = n > 1 ? packed_set(&a, counts, n, len, &set) : counts;
    if (n > 1 && values == NULL) {
        ih_say("out of memory");
        rc = IH_EXIT_FILE;
    } else if (n > 1) {
        /* The whole matrix in one call where it fits, else a row a call. */
        const int whole = n <= MAX_MATRIX_BYTES / sizeof(double) / n;
        double *d = malloc((whole ? n * n : n) * sizeof *d);
        imghist_status st = d == NULL ? IMGHIST_E_NOMEM : IMGHIST_OK;
        if (st == IMGHIST_OK && whole) {
            st = imghist_compare_all(ctx, &set, a.metric, d, IMGHIST_MEM_HOST);
        }
        for (size_t i = 0; st == IMGHIST_OK && i < n; i++) {
            const double *row = d + (whole ? i * n : 0);
            if (!whole) {
                imghist_hists q = set;
                const size_t size = set.type == IMGHIST_HIST_F64 ? sizeof(double) : sizeof(uint64_t);
                q.data = (const unsigned char *)set.data + i * len * size;
                q.count = 1;
                st = imghist_compare_many(ctx, &q, &set, a.metric, d, IMGHIST_MEM_HOST);
            }
            if (st == IMGHIST_OK && collect(&a, fl, ok, i, row, n, &r, &nr, &cap) != 0) {
                st = IMGHIST_E_NOMEM;
            }
        }
        if (st != IMGHIST_OK) {
            ih_say("%s", st == IMGHIST_E_NOMEM ? "out of memory" : imghist_last_error(ctx));
            rc = IH_EXIT_FILE;
        }
        free(d);
    }
    if (nr > 0) {
        sort_records(r, nr, a.metric);
    }
    const int orc = write_outputs(&a, r, nr, 1);
    if (orc == IH_EXIT_OK && !on_stdout(&a)) {
        for (size_t i = 0; i < nr; i++) {
            printf("%.9g\t%s\t%s\n", r[i].value, r[i].a, r[i].b);
        }
    }
    if (values != counts) free(values);
    free(r);
    free(counts);
    free(res);
    free(ok);
    imghist_file_list_free(fl);
    free(a.inputs);
    imghist_destroy(ctx);
    return rc != IH_EXIT_OK ? rc : orc;
}
