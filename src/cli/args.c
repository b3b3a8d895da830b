#include "args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char ih_usage_text[] =
    "Usage: imghist INPUT [--equalize OUT.png] [--csv FILE|-] [--backend auto|cpu|cuda]\n"
    "                     [--max-pixels N] [--max-bytes N] [-v|-q] [--help] [--version]\n"
    "\n"
    "Histogram and histogram equalization of an image as 8-bit gray.\n"
    "INPUT is an image file (PNG, JPEG, BMP, TGA, GIF, PNM, PSD, HDR; recognised by\n"
    "its content) or - for standard input. With no --equalize or --csv, prints a\n"
    "summary and a picture of the histogram.\n"
    "\n"
    "  --equalize OUT.png  write the equalized image (same result as OpenCV's\n"
    "                      equalizeHist) as an 8-bit gray PNG\n"
    "  --csv FILE|-        write the histogram as CSV: bin,lower,upper,count\n"
    "  --backend B         auto (CUDA if a usable GPU exists, default), cpu or cuda\n"
    "                      (any case); the environment variable IMGHIST_BACKEND sets\n"
    "                      auto's choice\n"
    "  --max-pixels N      refuse images with more than N pixels (default 1073741824)\n"
    "  --max-bytes N       refuse input files longer than N bytes (default and most\n"
    "                      2147483647)\n"
    "  -v, --verbose       say which backend ran and what was written\n"
    "  -q, --quiet         print nothing but errors and requested data\n"
    "  -h, --help          show this help\n"
    "  --version           show the version\n"
    "\n"
    "Examples:\n"
    "  imghist photo.jpg\n"
    "  imghist photo.png --equalize photo-eq.png --csv hist.csv\n"
    "  imghist --backend cpu --csv - scan.png > hist.csv\n"
    "  cat frame.png | imghist - --equalize frame-eq.png -v\n"
    "\n"
    "Exit status: 0 success, 1 a file could not be read, decoded or written\n"
    "(or no usable GPU for --backend cuda), 2 usage error.\n";

/* "--name=value" or "--name value"; returns the value or NULL. */
static const char *take_value(int argc, char *const argv[], int *i, const char *name,
                              int *matched, char *err, size_t errlen)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    *matched = 0;
    if (strncmp(a, name, n) != 0) {
        return NULL;
    }
    if (a[n] == '=') {
        *matched = 1;
        if (a[n + 1] == '\0') {
            snprintf(err, errlen, "option %s needs a value", name);
            return NULL;
        }
        return a + n + 1;
    }
    if (a[n] != '\0') {
        return NULL;
    }
    *matched = 1;
    if (*i + 1 >= argc || argv[*i + 1][0] == '\0') {
        snprintf(err, errlen, "option %s needs a value", name);
        return NULL;
    }
    return argv[++*i];
}

/* A positive whole number. */
static int parse_count(const char *opt, const char *v, uint64_t *out, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    const unsigned long long n = strtoull(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n == 0 || v[0] == '-') {
        snprintf(err, errlen, "%s needs a positive whole number, not '%s'", opt, v);
        return -1;
    }
    *out = n;
    return 0;
}

int ih_parse_args(int argc, char *const argv[], ih_cli_args *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->backend = IMGHIST_BACKEND_AUTO;
    if (errlen > 0) {
        err[0] = '\0';
    }
    int no_more_options = 0;
    int quiet = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more_options || a[0] != '-' || strcmp(a, "-") == 0) {
            if (out->input != NULL) {
                snprintf(err, errlen, "more than one input given ('%s' and '%s')", out->input, a);
                return -1;
            }
            if (a[0] == '\0') {
                snprintf(err, errlen, "empty input path");
                return -1;
            }
            out->input = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            no_more_options = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            out->help = 1;
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            out->version = 1;
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
            continue;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
            continue;
        }
        int matched = 0;
        const char *v;
        if ((v = take_value(argc, argv, &i, "--equalize", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->equalize_out = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--csv", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->csv_out = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--backend", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            if (imghist_backend_from_name(v, &out->backend) != IMGHIST_OK) {
                snprintf(err, errlen, "unknown backend '%s' (use auto, cpu or cuda)", v);
                return -1;
            }
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--max-pixels", &matched, err, errlen)) || matched) {
            if (v == NULL || parse_count("--max-pixels", v, &out->max_pixels, err, errlen) != 0) {
                return -1;
            }
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--max-bytes", &matched, err, errlen)) || matched) {
            if (v == NULL || parse_count("--max-bytes", v, &out->max_bytes, err, errlen) != 0) {
                return -1;
            }
            continue;
        }
        snprintf(err, errlen, "unknown option '%s'", a);
        return -1;
    }
    if (quiet && verbose) {
        snprintf(err, errlen, "-q and -v contradict each other");
        return -1;
    }
    out->verbosity = verbose ? 1 : (quiet ? -1 : 0);
    if (out->help || out->version) {
        return 0;
    }
    if (out->input == NULL) {
        snprintf(err, errlen, "no input image given");
        return -1;
    }
    if (out->equalize_out != NULL && strcmp(out->equalize_out, "-") == 0) {
        snprintf(err, errlen, "--equalize needs a file name (PNG is not written to stdout)");
        return -1;
    }
    if (out->equalize_out != NULL && out->csv_out != NULL &&
        strcmp(out->equalize_out, out->csv_out) == 0) {
        snprintf(err, errlen, "--equalize and --csv name the same file '%s'", out->csv_out);
        return -1;
    }
    return 0;
}
