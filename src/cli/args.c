#include "args.h"

#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char ih_usage_text[] =
    "Usage: imghist [options] INPUT...\n"
    "\n"
    "Histograms and histogram equalization of images: 8-bit gray by default; 16-bit\n"
    "and float samples with --depth native, colour channels with --channels.\n"
    "Each INPUT is an image file (PNG, JPEG, TIFF, BMP, TGA, GIF, PNM, PSD, HDR; told by\n"
    "its content; see Formats below), a folder of them, or - for standard input (one\n"
    "image only).\n"
    "One file: with no --equalize, --csv, --json or --total, prints a summary and a\n"
    "picture of the histogram. Several inputs or a folder: a batch run over every\n"
    "image found (files that are not images are skipped), on -j threads.\n"
    "\n"
    "  --equalize OUT      write the equalized image (same result as OpenCV's\n"
    "                      equalizeHist; 16-bit images: its formula with 65536\n"
    "                      levels, a 16-bit PNG) as a gray PNG; in a batch run OUT is\n"
    "                      a folder that mirrors the inputs' sub-folders (a.jpg ->\n"
    "                      OUT/a.png)\n"
    "  --csv FILE|-        the histogram as CSV: bin,lower,upper,count (batch runs:\n"
    "                      file,bin,lower,upper,count, files in sorted order)\n"
    "  --json FILE|-       JSON Lines, one object per image: file, width, height,\n"
    "                      min, max, mean, median, std, entropy (bits), percentiles\n"
    "                      (1, 5, 50, 95, 99; numpy's inverted_cdf), otsu (OpenCV's\n"
    "                      THRESH_OTSU), bins, range, below, above, nan, histogram\n"
    "  --total FILE|-      every image's counts added up, as CSV bin,lower,upper,count\n"
    "  --plot FILE         a picture of the histogram (FILE.png or FILE.svg): bars, axes,\n"
    "                      the cumulative distribution; with --equalize the equalized\n"
    "                      image's histogram beside it (one input image only)\n"
    "  --plot-dir DIR      a batch run: DIR/<path below the input>.png, a plot of each\n"
    "                      image's histogram (--plot FILE with --total plots the total)\n"
    "  --log               the plot's count axis on a log scale\n"
    "  -r, --recursive     descend into sub-folders\n"
    "  -j, --jobs N        worker threads for a batch run (default: every core)\n"
    "  --gpus LIST         GPUs for a batch run's workers, in turn: e.g. 0,1 (default:\n"
    "                      every visible GPU; a GPU may be named twice); CUDA is\n"
    "                      shown only these (one image with --gpus: the first)\n"
    "  --shard K/N         process only the K-th of N shards of the file list (split\n"
    "                      by file size, the same everywhere); join the shards'\n"
    "                      outputs with imghist merge\n"
    "  --bins N            N equal bins (default: one per level, 256 for 8-bit and\n"
    "                      65536 for 16-bit images; 256 for float ones)\n"
    "  --range LO:HI       the bins cover [LO, HI); values outside are counted as\n"
    "                      below/above (NaN as nan), in no bin. Default: the type's\n"
    "                      levels; for float images the data's finite min and max,\n"
    "                      the max in the last bin (as numpy.histogram)\n"
    "  --depth 8|native    8 (default): 16-bit samples >> 8, as OpenCV's imread;\n"
    "                      native: keep 16-bit and float samples (16-bit PNG, TIFF,\n"
    "                      PNM; float TIFF and HDR)\n"
    "  --channels          count R, G, B (and A) separately: CSV bin,lower,upper,r,g,b\n"
    "                      (batch CSV: file,channel,bin,lower,upper,count)\n"
    "  --read-truncated    read a JPEG whose data ends early as OpenCV's imread does\n"
    "                      (the part the data does not reach is made up: gray, or a\n"
    "                      progressive file's coarser scans), with a warning; by\n"
    "                      default such a file is refused\n"
    "  --mask FILE         count only pixels where the mask image is not 0; with\n"
    "                      --equalize the LUT comes from those pixels and is applied\n"
    "                      to the whole image (scikit-image's equalize_hist(mask=))\n"
    "  --color MODE        what --equalize (or --clahe) writes for a colour image:\n"
    "                      gray (default: the gray image), luma (a colour PNG: the\n"
    "                      luminance equalized, as OpenCV's BGR2YCrCb, equalize Y,\n"
    "                      YCrCb2BGR) or channels (R, G and B each equalized)\n"
    "  --clahe             --equalize writes CLAHE's result instead (contrast-limited\n"
    "                      adaptive equalization, the same as OpenCV's\n"
    "                      createCLAHE(clip, tiles).apply(); 16-bit with --depth native)\n"
    "  --clip X            CLAHE's clip limit (default 40; 0: no limit)\n"
    "  --tiles CxR         CLAHE's grid of tile columns x rows (default 8x8)\n"
    "  --match REF         --equalize writes INPUT's histogram matched to REF's (an\n"
    "                      image, or a 256-row CSV of this program's): scikit-image's\n"
    "                      match_histograms, rounded to a level (halves to even)\n"
    "  --joint FILE        joint histogram of INPUT and FILE (same size), --bins per\n"
    "                      axis (default 256): CSV a,b,count (non-zero cells), and\n"
    "                      the mutual information in bits and its normalised form\n"
    "  --gray MODE         bgr2gray (default; OpenCV's imread + cvtColor(BGR2GRAY)) or\n"
    "                      luma (OpenCV's imread(IMREAD_GRAYSCALE); faster on JPEG)\n"
    "  --backend B         auto (default), cpu or cuda (any case). auto: a batch run\n"
    "                      counts on the CPU at once and on every usable GPU once\n"
    "                      CUDA is up; one image runs on the CPU, done before CUDA\n"
    "                      would have started, unless --gpus names a GPU. The\n"
    "                      environment variable IMGHIST_BACKEND sets auto's choice\n"
    "  --max-pixels N      refuse images with more than N pixels (default 1073741824)\n"
    "  --max-bytes N       refuse input files longer than N bytes (default and most\n"
    "                      2147483647)\n"
    "  -v, --verbose       say which backend ran, what was written and skipped\n"
    "  -q, --quiet         print nothing but errors and requested data\n"
    "  -h, --help          show this help\n"
    "  --version           show the version\n"
    "\n"
    "Formats (alpha and colour profiles are always ignored; 16-bit samples keep\n"
    "their high byte and float ones are clamped to [0, 1] unless --depth native;\n"
    "a file that ends early is refused):\n"
    "  PNG   1 to 16 bits; gray, RGB, palette, with or without alpha; an animated\n"
    "        PNG's default image (its first frame)\n"
    "  JPEG  8-bit baseline, progressive or arithmetic; gray, YCbCr, CMYK, YCCK; the\n"
    "        EXIF orientation applied; 12-bit JPEG is refused, and so is a file that\n"
    "        ends early unless --read-truncated\n"
    "  TIFF  8/16-bit integer or 32-bit float, gray or RGB, strips or tiles; the\n"
    "        first page\n"
    "  BMP   1/2/4/8-bit palette, 16/24/32-bit with any bit masks (each field\n"
    "        scaled to 255: 5-bit white is 255, not OpenCV's 248), RLE4, RLE8 and\n"
    "        OS/2 RLE24, OS/2 1.x/2.x and Windows headers, embedded JPEG or PNG;\n"
    "        pixels that run-length data skips take palette colour 0; OS/2\n"
    "        Huffman 1D and 64-bit BMP are refused\n"
    "  GIF   the first frame on its logical screen, transparent pixels in their\n"
    "        palette colour, the screen around the frame in the background colour\n"
    "  PNM   PBM, PGM, PPM, plain and raw, 1 to 16 bits\n"
    "  TGA   colour-mapped, truecolour and gray, raw or run-length, any origin\n"
    "  PSD   8/16-bit RGB, the composite image\n"
    "  HDR   Radiance RGBE: float with --depth native, else scaled linearly to\n"
    "        8 bits as OpenCV does (v * 255, saturated)\n"
    "\n"
    "Examples:\n"
    "  imghist photo.jpg\n"
    "  imghist photo.png --equalize photo-eq.png --csv hist.csv\n"
    "  imghist -r photos/ --equalize equalized/ --json stats.jsonl\n"
    "  imghist -r -j 8 --gray luma --total dataset.csv photos/\n"
    "  imghist scan.tif --depth native --bins 4096 --range 0:65536 --csv h.csv\n"
    "  imghist fixed.png --joint moving.png --bins 64 --json mi.json\n"
    "  cat frame.png | imghist - --equalize frame-eq.png -v\n"
    "  imghist -r --shard 2/8 --csv part2.csv photos/   (then: imghist merge --csv ...)\n"
    "  mpirun -n 4 imghist -r --total dataset.csv photos/  (a build with MPI)\n"
    "\n"
    "imghist merge --total|--csv|--json OUT SHARD...   joins --shard outputs: adds\n"
    "--total CSVs, puts --csv and --json records in the order of one whole run.\n"
    "\n"
    "Memory: a batch run holds at most one decoded image and its encoded output\n"
    "per thread (about 3 bytes per pixel of the largest image, times -j), plus\n"
    "the list of file names; not the images of the whole folder.\n"
    "Outputs are written beside their targets and renamed into place when\n"
    "complete. Ctrl-C stops a batch run cleanly (exit status 130; 143 for\n"
    "SIGTERM): images already written stay, no partial file is left.\n"
    "\n"
    "Exit status: 0 success, 1 an image could not be read, decoded or written\n"
    "(the others are still processed), 2 usage error.\n";

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

/* "LO:HI", two finite numbers with LO < HI. */
static int parse_range(const char *v, double *lo, double *hi, char *err, size_t errlen)
{
    char *end = NULL;
    errno = 0;
    *lo = strtod(v, &end);
    if (end == v || *end != ':' || errno != 0) {
        snprintf(err, errlen, "--range needs LO:HI (two numbers), not '%s'", v);
        return -1;
    }
    const char *h = end + 1;
    *hi = strtod(h, &end);
    if (end == h || *end != '\0' || errno != 0) {
        snprintf(err, errlen, "--range needs LO:HI (two numbers), not '%s'", v);
        return -1;
    }
    if (!isfinite(*lo) || !isfinite(*hi) || !(*lo < *hi)) {
        snprintf(err, errlen, "--range %s: LO must be below HI, both finite", v);
        return -1;
    }
    return 0;
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
    out->gray = IMGHIST_GRAY_BGR2GRAY;
    out->clip = 40.0;
    out->tiles_x = out->tiles_y = 8;
    if (errlen > 0) {
        err[0] = '\0';
    }
    out->inputs = calloc(argc > 0 ? (size_t)argc : 1, sizeof *out->inputs);
    if (out->inputs == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int no_more_options = 0;
    int quiet = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (no_more_options || a[0] != '-' || strcmp(a, "-") == 0) {
            if (a[0] == '\0') {
                snprintf(err, errlen, "empty input path");
                return -1;
            }
            if (out->input == NULL) {
                out->input = a;
            }
            out->inputs[out->n_inputs++] = a;
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
        if (strcmp(a, "-r") == 0 || strcmp(a, "--recursive") == 0) {
            out->recursive = 1;
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
        if ((v = take_value(argc, argv, &i, "--json", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->json_out = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--total", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->total_out = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--gray", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            if (strcasecmp(v, "luma") == 0) {
                out->gray = IMGHIST_GRAY_LUMA;
            } else if (strcasecmp(v, "bgr2gray") == 0) {
                out->gray = IMGHIST_GRAY_BGR2GRAY;
            } else {
                snprintf(err, errlen, "unknown --gray mode '%s' (use bgr2gray or luma)", v);
                return -1;
            }
            continue;
        }
        if (strcmp(a, "-j") == 0 || strncmp(a, "--jobs", 6) == 0) {
            if (strcmp(a, "-j") == 0) {
                if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                    snprintf(err, errlen, "option -j needs a value");
                    return -1;
                }
                v = argv[++i];
            } else if ((v = take_value(argc, argv, &i, "--jobs", &matched, err, errlen)) == NULL) {
                if (matched) return -1;
                snprintf(err, errlen, "unknown option '%s'", a);
                return -1;
            }
            uint64_t n = 0;
            if (parse_count("-j", v, &n, err, errlen) != 0) {
                return -1;
            }
            if (n > 1024) {
                snprintf(err, errlen, "-j %s: at most 1024 threads", v);
                return -1;
            }
            out->jobs = (unsigned)n;
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
        if ((v = take_value(argc, argv, &i, "--bins", &matched, err, errlen)) || matched) {
            uint64_t n = 0;
            if (v == NULL || parse_count("--bins", v, &n, err, errlen) != 0) {
                return -1;
            }
            if (n > IMGHIST_MAX_BINS) {
                snprintf(err, errlen, "--bins %s: at most %u bins", v, IMGHIST_MAX_BINS);
                return -1;
            }
            out->bins = (uint32_t)n;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--range", &matched, err, errlen)) || matched) {
            if (v == NULL || parse_range(v, &out->lo, &out->hi, err, errlen) != 0) {
                return -1;
            }
            out->has_range = 1;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--depth", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            if (strcasecmp(v, "native") == 0) {
                out->native_depth = 1;
            } else if (strcmp(v, "8") == 0) {
                out->native_depth = 0;
            } else {
                snprintf(err, errlen, "unknown --depth '%s' (use 8 or native)", v);
                return -1;
            }
            continue;
        }
        if (strcmp(a, "--channels") == 0) {
            out->channels = 1;
            continue;
        }
        if (strcmp(a, "--read-truncated") == 0) {
            out->read_truncated = 1;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--mask", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->mask = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--plot-dir", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->plot_dir = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--plot", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->plot = v;
            continue;
        }
        if (strcmp(a, "--log") == 0) {
            out->log_scale = 1;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--color", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            if (strcmp(v, "gray") == 0) {
                out->color = IH_COLOR_GRAY;
            } else if (strcmp(v, "luma") == 0) {
                out->color = IH_COLOR_LUMA;
            } else if (strcmp(v, "channels") == 0) {
                out->color = IH_COLOR_CHANNELS;
            } else {
                snprintf(err, errlen, "--color is gray, luma or channels, not '%s'", v);
                return -1;
            }
            continue;
        }
        if (strcmp(a, "--clahe") == 0) {
            out->clahe = 1;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--clip", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            char *end = NULL;
            out->clip = strtod(v, &end);
            if (end == v || *end != '\0' || !(out->clip == out->clip)) {
                snprintf(err, errlen, "--clip needs a number (CLAHE's clip limit), not '%s'", v);
                return -1;
            }
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--tiles", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            char *end = NULL;
            const unsigned long tx = strtoul(v, &end, 10);
            unsigned long ty = tx;
            if (end != v && (*end == 'x' || *end == 'X')) {
                const char *h = end + 1;
                ty = strtoul(h, &end, 10);
                if (end == h) {
                    end = (char *)v;
                }
            }
            if (end == v || *end != '\0' || v[0] == '-' || tx < 1 || ty < 1 || tx > 256 ||
                ty > 256) {
                snprintf(err, errlen, "--tiles needs COLSxROWS, each 1 to 256 (e.g. 8x8), not '%s'",
                         v);
                return -1;
            }
            out->tiles_x = (uint32_t)tx;
            out->tiles_y = (uint32_t)ty;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--match", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->match = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--joint", &matched, err, errlen)) || matched) {
            if (v == NULL) return -1;
            out->joint = v;
            continue;
        }
        if ((v = take_value(argc, argv, &i, "--max-bytes", &matched, err, errlen)) || matched) {
            if (v == NULL || parse_count("--max-bytes", v, &out->max_bytes, err, errlen) != 0) {
                return -1;
            }
            continue;
        }
        const int scale = ih_parse_scale_option(argc, argv, &i, &out->scale, err, errlen);
        if (scale != 0) {
            if (scale < 0) return -1;
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
    /* Two outputs naming one file (standard output is one file too). */
    const char *names[] = {"--equalize", "--csv", "--json", "--total", "--plot"};
    const char *paths[] = {out->equalize_out, out->csv_out, out->json_out, out->total_out,
                           out->plot};
    for (int x = 0; x < 5; x++) {
        for (int y = x + 1; y < 5; y++) {
            if (paths[x] != NULL && paths[y] != NULL && strcmp(paths[x], paths[y]) == 0) {
                snprintf(err, errlen, "%s and %s name the same file '%s'", names[x], names[y],
                         paths[y]);
                return -1;
            }
        }
    }
    if (out->plot != NULL) {
        int svg;
        if (ih_plot_kind(out->plot, &svg, err, errlen) != 0) {
            return -1;
        }
        if (!ih_plot_available()) {
            snprintf(err, errlen, "--plot: this imghist was built without cairo "
                                  "(install libcairo2-dev and build again)");
            return -1;
        }
        if (out->joint != NULL || (out->n_inputs > 1 && out->total_out == NULL)) {
            snprintf(err, errlen, "--plot draws the histogram of one input image, or with "
                                  "--total the total of a batch run (not with --joint; for "
                                  "each image of a batch, --plot-dir DIR)");
            return -1;
        }
    }
    if (out->plot_dir != NULL) {
        if (!ih_plot_available()) {
            snprintf(err, errlen, "--plot-dir: this imghist was built without cairo "
                                  "(install libcairo2-dev and build again)");
            return -1;
        }
        if (out->equalize_out != NULL && strcmp(out->equalize_out, out->plot_dir) == 0) {
            snprintf(err, errlen, "--plot-dir and --equalize name the same folder '%s'",
                     out->plot_dir);
            return -1;
        }
        if (out->joint != NULL || out->mask != NULL) {
            snprintf(err, errlen, "--plot-dir plots a batch run's images (not with --joint or "
                                  "--mask)");
            return -1;
        }
    }
    if (out->log_scale && out->plot == NULL && out->plot_dir == NULL) {
        snprintf(err, errlen, "--log sets the count axis of --plot or --plot-dir: give one");
        return -1;
    }
    if (out->scale.n_gpus > 0 && out->backend == IMGHIST_BACKEND_CPU) {
        snprintf(err, errlen, "--gpus and --backend cpu contradict each other");
        return -1;
    }
    if (out->match != NULL &&
        (out->equalize_out == NULL || out->n_inputs > 1 || out->mask != NULL ||
         out->joint != NULL || out->channels || out->native_depth || out->bins != 0 ||
         out->has_range)) {
        snprintf(err, errlen, "--match maps one 8-bit gray image for --equalize OUT (not with "
                              "several inputs, --mask, --joint, --channels, --depth native, "
                              "--bins or --range)");
        return -1;
    }
    if (out->color != IH_COLOR_GRAY &&
        (out->equalize_out == NULL || out->n_inputs > 1 || out->mask != NULL ||
         out->joint != NULL || out->channels || out->match != NULL || out->bins != 0 ||
         out->has_range || out->native_depth || out->plot != NULL ||
         strcmp(out->inputs[0], "-") == 0)) {
        snprintf(err, errlen, "--color equalizes one 8-bit image file for --equalize OUT (not "
                              "with standard input, several inputs, --mask, --joint, "
                              "--channels, --match, --bins, --range, --depth native or --plot)");
        return -1;
    }
    if (out->clahe &&
        (out->equalize_out == NULL || out->n_inputs > 1 || out->mask != NULL ||
         out->joint != NULL || out->channels || out->match != NULL || out->bins != 0 ||
         out->has_range)) {
        snprintf(err, errlen, "--clahe transforms one gray image for --equalize OUT (not with "
                              "several inputs, --mask, --joint, --channels, --match, --bins or "
                              "--range)");
        return -1;
    }
    if ((out->mask != NULL || out->joint != NULL) && out->n_inputs > 1) {
        snprintf(err, errlen, "%s takes one input image", out->mask ? "--mask" : "--joint");
        return -1;
    }
    if (out->joint != NULL && (out->equalize_out != NULL || out->channels || out->total_out)) {
        snprintf(err, errlen, "--joint writes only --csv and --json (not --equalize, "
                              "--channels or --total)");
        return -1;
    }
    if (out->channels && out->equalize_out != NULL) {
        snprintf(err, errlen, "--equalize makes a gray image: not with --channels");
        return -1;
    }
    if (out->channels && out->total_out != NULL) {
        snprintf(err, errlen, "--total adds one-channel histograms: not with --channels");
        return -1;
    }
    if (out->native_depth && out->total_out != NULL && (out->bins == 0 || !out->has_range)) {
        snprintf(err, errlen, "--total with --depth native needs --bins and --range (8-bit, "
                              "16-bit and float images have different default bins)");
        return -1;
    }
    for (size_t k = 0; k < out->n_inputs; k++) {
        if (strcmp(out->inputs[k], "-") == 0 && out->scale.shard_n > 0) {
            snprintf(err, errlen, "--shard needs files or folders, not - (standard input)");
            return -1;
        }
        if (strcmp(out->inputs[k], "-") == 0 && out->n_inputs > 1) {
            snprintf(err, errlen, "- (standard input) can only be the one input");
            return -1;
        }
    }
    return 0;
}

void ih_free_args(ih_cli_args *a)
{
    free(a->inputs);
    a->inputs = NULL;
    a->n_inputs = 0;
}
