/*
 * imghist --space: the N-dimensional histogram of an image's colour
 * channels converted as OpenCV converts them (docs/ndhist.md), written as
 * CSV, and the back-projection of such a CSV as an 8-bit PNG.
 *
 *   imghist --space hsv|hsv-full|lab [--channels 0,1] [--bins 30,32]
 *           [--csv OUT.csv|-] [--backproject MODEL.csv OUT.png]
 *           [--backend B] IMAGE
 *
 * The image is read in colour (RGB, as the loaders give it) and converted
 * with the RGB rules, which give what cv2.imread + BGR2* give. Bins follow
 * cv2.calcHist: H over [0, 180) for hsv, every other channel over [0, 256).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imghist.h"
#include "log.h"
#include "ndhist_cli.h"
#include "output_file.h"

typedef struct nd_cli {
    const char *space_name, *input, *csv, *model, *png;
    imghist_space space;
    uint32_t n;                      /* axes */
    uint32_t ch[IMGHIST_MAX_DIMS];
    uint32_t bins[IMGHIST_MAX_DIMS];
    int has_ch, n_bins;
    imghist_backend backend;
} nd_cli;

static const char *const names_hsv[3] = {"h", "s", "v"};
static const char *const names_lab[3] = {"l", "a", "b"};

int ih_is_space_call(int argc, char *const argv[])
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            return 0;
        }
        if (strcmp(argv[i], "--space") == 0 || strncmp(argv[i], "--space=", 8) == 0) {
            return 1;
        }
    }
    return 0;
}

static int usage(const char *fmt, const char *v)
{
    char msg[256];
    snprintf(msg, sizeof msg, fmt, v);
    ih_say("%s (see docs/ndhist.md)", msg);
    return IH_EXIT_USAGE;
}

/* "a,b,c": 1 to 4 numbers each at most `max`. */
static int parse_list(const char *v, uint32_t *out, uint32_t max, int *n)
{
    *n = 0;
    const char *p = v;
    while (*n < IMGHIST_MAX_DIMS) {
        char *end = NULL;
        errno = 0;
        const unsigned long x = strtoul(p, &end, 10);
        if (end == p || *p == '-' || errno != 0 || x > max) {
            return -1;
        }
        out[(*n)++] = (uint32_t)x;
        if (*end == '\0') {
            return 0;
        }
        if (*end != ',') {
            return -1;
        }
        p = end + 1;
    }
    return -1;
}

static int parse(int argc, char *const argv[], nd_cli *c)
{
    memset(c, 0, sizeof *c);
    c->backend = IMGHIST_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *eq = strchr(a, '=');
        const size_t klen = a[0] == '-' && a[1] == '-' && eq ? (size_t)(eq - a) : strlen(a);
        const char *keys[] = {"--space", "--channels", "--bins", "--csv", "--backproject",
                              "--backend"};
        int k = -1;
        for (int j = 0; j < 6; j++) {
            if (strlen(keys[j]) == klen && strncmp(a, keys[j], klen) == 0) {
                k = j;
            }
        }
        if (k < 0) {
            if (a[0] == '-' && a[1] != '\0') {
                return usage("--space takes --channels, --bins, --csv, --backproject and "
                             "--backend, not '%s'",
                             a);
            }
            if (c->input != NULL) {
                return usage("--space takes one input image; '%s' is a second", a);
            }
            c->input = a;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (v == NULL || *v == '\0') {
            return usage("%s needs a value", keys[k]);
        }
        switch (k) {
        case 0:
            c->space_name = v;
            if (strcmp(v, "hsv") == 0) c->space = IMGHIST_SPACE_RGB2HSV;
            else if (strcmp(v, "hsv-full") == 0) c->space = IMGHIST_SPACE_RGB2HSV_FULL;
            else if (strcmp(v, "lab") == 0) c->space = IMGHIST_SPACE_RGB2LAB;
            else return usage("--space is hsv, hsv-full or lab, not '%s'", v);
            break;
        case 1: {
            int n = 0;
            if (parse_list(v, c->ch, 2, &n) != 0) {
                return usage("--channels needs 1 to 4 channel numbers 0 to 2 (e.g. 0,1), not "
                             "'%s'",
                             v);
            }
            c->n = (uint32_t)n;
            c->has_ch = 1;
            break;
        }
        case 2:
            if (parse_list(v, c->bins, 256, &c->n_bins) != 0) {
                return usage("--bins needs 1 to 4 bin counts 1 to 256 (e.g. 30,32), not '%s'", v);
            }
            for (int j = 0; j < c->n_bins; j++) {
                if (c->bins[j] == 0) return usage("--bins %s: a count of 0", v);
            }
            break;
        case 3: c->csv = v; break;
        case 4:
            c->model = v;
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                return usage("--backproject needs MODEL.csv and OUT.png, not '%s' alone", v);
            }
            c->png = argv[++i];
            break;
        default:
            if (imghist_backend_from_name(v, &c->backend) != IMGHIST_OK) {
                return usage("unknown backend '%s' (use auto, cpu or cuda)", v);
            }
        }
    }
    if (c->input == NULL) {
        return usage("%s", "--space needs an input image");
    }
    if (!c->has_ch) {
        c->n = c->n_bins > 0 ? (uint32_t)c->n_bins : 3;
        for (uint32_t d = 0; d < c->n; d++) c->ch[d] = d;
    }
    if (c->n_bins == 0) {
        for (uint32_t d = 0; d < c->n; d++) c->bins[d] = 32;
        c->n_bins = (int)c->n;
    }
    if ((uint32_t)c->n_bins != c->n) {
        return usage("--bins gives a count for each of the --channels (%s)", "one each");
    }
    if (c->csv == NULL && c->model == NULL) {
        c->csv = "-";
    }
    return IH_EXIT_OK;
}

static void axes_of(const nd_cli *c, imghist_ndaxes *ax)
{
    memset(ax, 0, sizeof *ax);
    ax->dims = c->n;
    ax->space = c->space;
    for (uint32_t d = 0; d < c->n; d++) {
        ax->channel[d] = c->ch[d];
        const double hi = c->space == IMGHIST_SPACE_RGB2HSV && c->ch[d] == 0 ? 180 : 256;
        ax->spec[d] = (imghist_histspec){c->bins[d], 0, hi, IMGHIST_OPENCV_BINS};
    }
}

static const char *axis_name(const nd_cli *c, uint32_t d)
{
    return (c->space == IMGHIST_SPACE_RGB2LAB ? names_lab : names_hsv)[c->ch[d]];
}

static void write_header(FILE *fp, const nd_cli *c)
{
    for (uint32_t d = 0; d < c->n; d++) {
        fprintf(fp, "%s,", axis_name(c, d));
    }
    fputs("count\n", fp);
}

static int write_csv(const nd_cli *c, const uint64_t *h, size_t cells)
{
    ih_output_file f;
    char err[512];
    if (ih_output_open(&f, c->csv, 1, err, sizeof err) != 0) {
        ih_say("%s", err);
        return IH_EXIT_FILE;
    }
    write_header(f.fp, c);
    for (size_t i = 0; i < cells; i++) {
        size_t rest = i, div = cells;
        for (uint32_t d = 0; d < c->n; d++) {
            div /= c->bins[d];
            fprintf(f.fp, "%zu,", rest / div);
            rest %= div;
        }
        fprintf(f.fp, "%llu\n", (unsigned long long)h[i]);
    }
    if (ih_output_commit(&f, err, sizeof err) != 0) {
        ih_say("%s", err);
        return IH_EXIT_FILE;
    }
    return IH_EXIT_OK;
}

/* The model CSV: the header this call would write, then every cell in
 * order; counts scaled so that the largest is 255 (cv2.normalize's
 * NORM_MINMAX to [0, 255], the usual model of calcBackProject). */
static int read_model(const nd_cli *c, float *model, size_t cells)
{
    FILE *fp = fopen(c->model, "r");
    if (fp == NULL) {
        ih_say("%s: cannot be read: %s", c->model, strerror(errno));
        return IH_EXIT_FILE;
    }
    char want[64] = "", line[256];
    size_t off = 0;
    for (uint32_t d = 0; d < c->n; d++) {
        off += (size_t)snprintf(want + off, sizeof want - off, "%s,", axis_name(c, d));
    }
    snprintf(want + off, sizeof want - off, "count\n");
    int rc = IH_EXIT_OK;
    if (fgets(line, sizeof line, fp) == NULL || strcmp(line, want) != 0) {
        want[strlen(want) - 1] = '\0';
        ih_say("%s: not a model of these axes: the first line is not '%s'", c->model, want);
        rc = IH_EXIT_FILE;
    }
    double top = 0;
    for (size_t i = 0; rc == IH_EXIT_OK && i < cells; i++) {
        if (fgets(line, sizeof line, fp) == NULL) {
            ih_say("%s: %zu cells where the axes have %zu", c->model, i, cells);
            rc = IH_EXIT_FILE;
            break;
        }
        const char *last = strrchr(line, ',');
        char *end = NULL;
        const double v = last ? strtod(last + 1, &end) : -1;
        if (last == NULL || end == last + 1 || !(v >= 0)) {
            ih_say("%s: line %zu has no count", c->model, i + 2);
            rc = IH_EXIT_FILE;
            break;
        }
        model[i] = (float)v;
        top = v > top ? v : top;
    }
    fclose(fp);
    for (size_t i = 0; rc == IH_EXIT_OK && top > 0 && i < cells; i++) {
        model[i] = (float)(model[i] * (255.0 / top));
    }
    return rc;
}

/* The library's message, which names the file where there is one. */
static int fail_lib(const imghist_ctx *ctx, const char *what)
{
    if (what != NULL) {
        ih_say("%s: %s", what, imghist_last_error(ctx));
    } else {
        ih_say("%s", imghist_last_error(ctx));
    }
    return IH_EXIT_FILE;
}

int ih_ndhist_main(int argc, char *const argv[])
{
    nd_cli c;
    int rc = parse(argc, argv, &c);
    if (rc != IH_EXIT_OK) {
        return rc;
    }
    imghist_ctx *ctx = NULL;
    if (imghist_create(c.backend, -1, &ctx) != IMGHIST_OK) {
        rc = fail_lib(ctx, "imghist");
        imghist_destroy(ctx);
        return rc;
    }
    imghist_image *img = NULL;
    imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 1);
    if (imghist_load_file(ctx, c.input, &img) != IMGHIST_OK) {
        rc = fail_lib(ctx, NULL);
        imghist_destroy(ctx);
        return rc;
    }
    imghist_ndaxes ax;
    axes_of(&c, &ax);
    const size_t cells = imghist_ndcounts_len(&ax, IMGHIST_U8);
    uint64_t *h = malloc(cells * sizeof *h);
    float *model = malloc(cells * sizeof *model);
    uint8_t *out = malloc((size_t)img->view.width * img->view.height);
    if (img->view.channels < 3) {
        ih_say("%s: --space needs a colour image; this one has %u channel(s)", c.input,
               img->view.channels);
        rc = IH_EXIT_FILE;
    } else if (h == NULL || model == NULL || out == NULL) {
        ih_say("%s: out of memory", c.input);
        rc = IH_EXIT_FILE;
    } else if (c.csv != NULL) {
        const imghist_counts oc = {h, cells, IMGHIST_MEM_HOST};
        rc = imghist_histogramdd(ctx, &img->view, &ax, &oc) == IMGHIST_OK ? write_csv(&c, h, cells)
                                                                          : fail_lib(ctx, c.input);
    }
    if (rc == IH_EXIT_OK && c.model != NULL) {
        rc = read_model(&c, model, cells);
        const imghist_view dst = {.data = out, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                                  .width = img->view.width, .height = img->view.height,
                                  .pitch = img->view.width, .channels = 1};
        if (rc == IH_EXIT_OK &&
            (imghist_backproject(ctx, &img->view, &ax, model, 1.0, &dst) != IMGHIST_OK ||
             imghist_write_png(ctx, c.png, &dst) != IMGHIST_OK)) {
            rc = fail_lib(ctx, c.png);
        }
    }
    free(h);
    free(model);
    free(out);
    imghist_image_free(img);
    imghist_destroy(ctx);
    return rc;
}
