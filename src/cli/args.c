#include "args.h"

#include "gpu_decode.h"
#include "plot.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char ih_usage_text[] =
    "Usage: imghist [options] INPUT...\n"
    "       imghist merge --total|--csv|--json OUT SHARD...\n"
    "\n"
    "Histograms and histogram equalization of images: 8-bit gray by default;\n"
    "16-bit and float samples with --depth native, colour channels with --channels.\n"
    "Each INPUT is an image file (PNG, JPEG, TIFF, BMP, TGA, GIF, PNM, PFM, PSD,\n"
    "HDR; told by its content; see Formats below), a folder of them, or - for\n"
    "standard input (one image only).\n"
    "With no output option (--equalize, --csv, --json, --total, --plot,\n"
    "--plot-dir), a summary and a picture of each image's histogram are printed.\n"
    "Several inputs or a folder make a batch run over every image found (files\n"
    "that are not images are skipped), on -j threads; a run that finds no image\n"
    "is an error.\n"
    "\n"
    "Outputs:\n"
    "  --equalize OUT      write the equalized image as a gray PNG (OUT must end\n"
    "                      in .png; same result as OpenCV's equalizeHist; 16-bit\n"
    "                      images: its formula with 65536 levels, a 16-bit PNG);\n"
    "                      in a batch run OUT is a folder that mirrors the inputs'\n"
    "                      sub-folders (a.jpg -> OUT/a.png)\n"
    "  --csv FILE|-        the histogram as CSV: bin,lower,upper,count (batch\n"
    "                      runs: file,bin,lower,upper,count, files in sorted order)\n"
    "  --json FILE|-       JSON Lines, one object per image: file, width, height,\n"
    "                      min, max, mean, median, std, entropy (bits),\n"
    "                      percentiles (1, 5, 50, 95, 99; numpy's inverted_cdf),\n"
    "                      otsu (OpenCV's THRESH_OTSU), bins, range, below, above,\n"
    "                      nan, histogram\n"
    "  --total FILE|-      every image's counts added up, as CSV\n"
    "                      bin,lower,upper,count\n"
    "  --plot FILE         a picture of the histogram (FILE.png or FILE.svg):\n"
    "                      bars, axes, the cumulative distribution; with\n"
    "                      --equalize the equalized image's histogram beside it\n"
    "                      (one input image only; a batch run: with --total, of\n"
    "                      the total)\n"
    "  --plot-dir DIR      a batch run: DIR/<path below the input>.png, a plot of\n"
    "                      each image's histogram\n"
    "  --log               the plot's count axis on a log scale\n"
    "  --no-sync           do not fsync each output before renaming it into place\n"
    "                      (faster on many small images; a crash may then leave\n"
    "                      an empty or partial output)\n"
    "\n"
    "Batch runs:\n"
    "  -r, --recursive     descend into sub-folders\n"
    "  -j, --jobs N        worker threads for a batch run (default: every core)\n"
    "  --gpus LIST         GPUs for a batch run's workers, in turn: e.g. 0,1\n"
    "                      (default: every visible GPU; a GPU may be named twice);\n"
    "                      CUDA is shown only these (one image with --gpus: the\n"
    "                      first)\n"
    "  --shard K/N         process only the K-th of N shards of the file list\n"
    "                      (split by file size, the same everywhere); join the\n"
    "                      shards' outputs with imghist merge\n"
    "\n"
    "Counting:\n"
    "  --bins N            N equal bins (default: one per level, 256 for 8-bit and\n"
    "                      65536 for 16-bit images; 256 for float ones)\n"
    "  --range LO:HI       the bins cover [LO, HI); values outside are counted as\n"
    "                      below/above (NaN as nan), in no bin. Default: the\n"
    "                      type's levels; for float images the data's finite min\n"
    "                      and max, the max in the last bin (as numpy.histogram)\n"
    "  --depth 8|native    8 (default): 16-bit samples >> 8, as OpenCV's imread;\n"
    "                      native: keep 16-bit and float samples (16-bit PNG,\n"
    "                      TIFF, PNM; float TIFF, HDR and PFM)\n"
    "  --channels          count R, G, B (and A) separately: CSV\n"
    "                      bin,lower,upper,r,g,b (batch CSV:\n"
    "                      file,channel,bin,lower,upper,count)\n"
    "  --gray MODE         bgr2gray (default; OpenCV's imread +\n"
    "                      cvtColor(BGR2GRAY)) or luma (OpenCV's\n"
    "                      imread(IMREAD_GRAYSCALE); faster on JPEG)\n"
    "  --mask FILE         count only pixels where the mask image is not 0; with\n"
    "                      --equalize the LUT comes from those pixels and is\n"
    "                      applied to the whole image (scikit-image's\n"
    "                      equalize_hist(mask=))\n"
    "  --joint FILE        joint histogram of INPUT and FILE (same size), --bins\n"
    "                      per axis (default 256): CSV a,b,count (non-zero cells),\n"
    "                      and the mutual information in bits and its normalised\n"
    "                      form\n"
    "  --space S           hsv, hsv-full or lab: INPUT's colours converted as\n"
    "                      OpenCV converts them, counted in an N-d histogram of\n"
    "                      --channels LIST (e.g. 0,1) with --bins LIST (e.g.\n"
    "                      30,32); --csv OUT (default -), --backproject MODEL.csv\n"
    "                      OUT.png (docs/ndhist.md)\n"
    "\n"
    "What --equalize writes:\n"
    "  --color MODE        for a colour image: gray (default: the gray image),\n"
    "                      luma (a colour PNG: the luminance equalized, as\n"
    "                      OpenCV's BGR2YCrCb, equalize Y, YCrCb2BGR) or channels\n"
    "                      (R, G and B each equalized)\n"
    "  --clahe             CLAHE's result instead (contrast-limited adaptive\n"
    "                      equalization, the same as OpenCV's\n"
    "                      createCLAHE(clip, tiles).apply(); 16-bit with --depth\n"
    "                      native)\n"
    "  --clip X            CLAHE's clip limit (default 40; 0: no limit)\n"
    "  --tiles CxR         CLAHE's grid of tile columns x rows (default 8x8)\n"
    "  --match REF         INPUT's histogram matched to REF's (an image, or a\n"
    "                      256-row CSV of this program's): scikit-image's\n"
    "                      match_histograms, rounded to a level (halves to even)\n"
    "\n"
    "Reading and limits:\n"
    "  --read-truncated    read a JPEG whose data ends early as OpenCV's imread\n"
    "                      does (the part the data does not reach is made up:\n"
    "                      gray, or a progressive file's coarser scans), with a\n"
    "                      warning; by default such a file is refused\n"
    "  --max-pixels N      refuse images with more than N pixels (default\n"
    "                      1073741824)\n"
    "  --max-bytes N       refuse input files longer than N bytes (default and\n"
    "                      most 2147483647)\n"
    "  --backend B         auto (default), cpu or cuda (any case). auto: a batch\n"
    "                      run counts on the CPU at once and on every usable GPU\n"
    "                      once CUDA is up; one image runs on the CPU, done before\n"
    "                      CUDA would have started, unless --gpus names a GPU.\n"
    "                      The environment variable IMGHIST_BACKEND sets auto's\n"
    "                      choice\n"
    "  --decode D          auto (default), cpu or gpu: where a batch run decodes\n"
    "                      baseline JPEGs; gpu and auto use\n"
    "                      the hardware decoders of every GPU (or --gpus) through\n"
    "                      nvJPEG (the same bits; docs/gpu-decode.md)\n"
    "\n"
    "Messages:\n"
    "  -v, --verbose       say which backend ran, what was written and skipped\n"
    "  --stats             a batch run ends with its time per stage (read, decode,\n"
    "                      gray, count, LUT, filter, deflate, write; GPU), summed\n"
    "                      over its threads\n"
    "  -q, --quiet         print nothing but errors and requested data\n"
    "  -h                  a short summary of the options\n"
    "  --help              this help\n"
    "  --version           the version and what this build has (CUDA, MPI,\n"
    "                      plots, formats)\n"
    "\n"
    "Formats (alpha and colour profiles are always ignored; 16-bit samples keep\n"
    "their high byte and float TIFF ones are clamped to [0, 1] unless --depth\n"
    "native; a file that ends early is refused):\n"
    "  PNG   1 to 16 bits; gray, RGB, palette, with or without alpha; an animated\n"
    "        PNG's default image (its first frame)\n"
    "  JPEG  8-bit baseline, progressive or arithmetic; gray, YCbCr, CMYK, YCCK;\n"
    "        the EXIF orientation applied; 12-bit JPEG is refused, and so is a\n"
    "        file that ends early unless --read-truncated\n"
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
    "  PFM   portable float map, gray or RGB: float with --depth native, else\n"
    "        rounded to 8 bits as OpenCV does (v, saturated: not scaled by 255)\n"
    "\n"
    "Examples:\n"
    "  imghist photo.jpg\n"
    "  imghist a.png b.png                  (a summary of each)\n"
    "  imghist photo.png --equalize photo-eq.png --csv hist.csv\n"
    "  imghist -r photos/ --equalize equalized/ --json stats.jsonl\n"
    "  imghist -r -j 8 --gray luma --total dataset.csv photos/\n"
    "  imghist scan.tif --depth native --bins 4096 --range 0:65536 --csv h.csv\n"
    "  imghist fixed.png --joint moving.png --bins 64 --json mi.json\n"
    "  cat frame.png | imghist - --equalize frame-eq.png -v\n"
    "  imghist -r --shard 2/8 --csv part2.csv photos/  (then: imghist merge ...)\n"
    "  mpirun -n 4 imghist -r --total dataset.csv photos/  (a build with MPI)\n"
    "\n"
    "imghist merge --total|--csv|--json OUT SHARD... joins --shard outputs: adds\n"
    "--total CSVs, puts --csv and --json records in the order of one whole run;\n"
    "it refuses a shard given twice and per-image CSVs for --total.\n"
    "\n"
    "Memory: a batch run holds at most one decoded image and its encoded output\n"
    "per thread (about 3 bytes per pixel of the largest image, times -j), plus\n"
    "the list of file names; not the images of the whole folder.\n"
    "Outputs are written beside their targets and renamed into place when\n"
    "complete. Ctrl-C stops a run within about a second (exit status 130; 143\n"
    "for SIGTERM): images already written stay, no partial file is left.\n"
    "\n"
    "Exit status: 0 success; 1 an image could not be read, decoded or written\n"
    "(the others are still processed), or no image was found; 2 usage error.\n"
    "See also: man imghist.\n";

/* -h: the options by group, one screen. */
const char ih_short_help_text[] =
    "Usage: imghist [options] INPUT...   (INPUT: an image, a folder, or -)\n"
    "       imghist merge --total|--csv|--json OUT SHARD...\n"
    "No output option: a summary of each image.  --help: every option in full.\n"
    "\n"
    "Outputs:    --equalize OUT.png|DIR  --csv FILE|-  --json FILE|-  --total FILE|-\n"
    "            --plot FILE.png|.svg  --plot-dir DIR  --log  --no-sync\n"
    "Batch:      -r, --recursive  -j, --jobs N  --gpus LIST  --shard K/N\n"
    "Counting:   --bins N  --range LO:HI  --depth 8|native  --channels\n"
    "            --gray bgr2gray|luma  --mask FILE  --joint FILE  --space S\n"
    "Equalize:   --color gray|luma|channels  --clahe  --clip X  --tiles CxR\n"
    "            --match REF\n"
    "Limits:     --read-truncated  --max-pixels N  --max-bytes N\n"
    "            --backend auto|cpu|cuda  --decode auto|cpu|gpu\n"
    "Messages:   -v, --verbose  -q, --quiet  --stats  -h  --help  --version\n"
    "\n"
    "Exit status: 0 success, 1 an image failed or none was found, 2 usage error.\n";

/* --equalize writes PNG only: a name that says another format would hold
 * PNG bytes under a misleading extension. */
const char ih_equalize_extensions[] = ".png";

int ih_equalize_extension_ok(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base) {
        return 1; /* no extension names a format */
    }
    return strcasecmp(dot, ih_equalize_extensions) == 0;
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

/* ---- the options ---- */

/* What the options set, with -q and -v kept apart until both are seen. */
typedef struct parse_state {
    ih_cli_args *out;
    int quiet, verbose;
} parse_state;

/* Sets what an option says from its value (NULL for a flag); 0, or -1 with a
 * usage error in err. */
typedef int (*option_fn)(parse_state *st, const char *v, char *err, size_t errlen);

/* One word an option with a fixed set of values takes, and what it stores. */
typedef struct choice {
    const char *word;
    int value;
} choice;

/* An option with a fixed set of values: its words (ending at a NULL word),
 * whether their case matters, and the usage error for any other value (a
 * format with one %s, the value). */
typedef struct choices {
    const choice *words;
    int any_case;
    const char *error;
} choices;

typedef struct option {
    const char *short_name; /* NULL, or "-x": its value is the next argument */
    const char *long_name;  /* NULL, or "--name": its value is "--name=V" or the next
                               argument */
    int takes_value;
    option_fn set;          /* NULL: the option stores into field */
    size_t field;           /* a flag: an int set to 1; with a value: a const char *,
                               or with one_of the int its word names */
    const choices *one_of;
} option;

static int set_quiet(parse_state *st, const char *v, char *err, size_t errlen)
{
    (void)v, (void)err, (void)errlen;
    st->quiet = 1;
    return 0;
}

static int set_verbose(parse_state *st, const char *v, char *err, size_t errlen)
{
    (void)v, (void)err, (void)errlen;
    st->verbose = 1;
    return 0;
}

static int set_short_help(parse_state *st, const char *v, char *err, size_t errlen)
{
    (void)v, (void)err, (void)errlen;
    st->out->help = 1;
    st->out->short_help = 1;
    return 0;
}

static int set_jobs(parse_state *st, const char *v, char *err, size_t errlen)
{
    uint64_t n = 0;
    if (parse_count("-j", v, &n, err, errlen) != 0) {
        return -1;
    }
    if (n > 1024) {
        snprintf(err, errlen, "-j %s: at most 1024 threads", v);
        return -1;
    }
    st->out->jobs = (unsigned)n;
    return 0;
}

static int set_backend(parse_state *st, const char *v, char *err, size_t errlen)
{
    if (imghist_backend_from_name(v, &st->out->backend) != IMGHIST_OK) {
        snprintf(err, errlen, "unknown backend '%s' (use auto, cpu or cuda)", v);
        return -1;
    }
    return 0;
}

static int set_max_pixels(parse_state *st, const char *v, char *err, size_t errlen)
{
    return parse_count("--max-pixels", v, &st->out->max_pixels, err, errlen);
}

static int set_max_bytes(parse_state *st, const char *v, char *err, size_t errlen)
{
    return parse_count("--max-bytes", v, &st->out->max_bytes, err, errlen);
}

static int set_bins(parse_state *st, const char *v, char *err, size_t errlen)
{
    uint64_t n = 0;
    if (parse_count("--bins", v, &n, err, errlen) != 0) {
        return -1;
    }
    if (n > IMGHIST_MAX_BINS) {
        snprintf(err, errlen, "--bins %s: at most %u bins", v, IMGHIST_MAX_BINS);
        return -1;
    }
    st->out->bins = (uint32_t)n;
    return 0;
}

static int set_range(parse_state *st, const char *v, char *err, size_t errlen)
{
    if (parse_range(v, &st->out->lo, &st->out->hi, err, errlen) != 0) {
        return -1;
    }
    st->out->has_range = 1;
    return 0;
}

static int set_clip(parse_state *st, const char *v, char *err, size_t errlen)
{
    char *end = NULL;
    st->out->clip = strtod(v, &end);
    if (end == v || *end != '\0' || !(st->out->clip == st->out->clip)) {
        snprintf(err, errlen, "--clip needs a number (CLAHE's clip limit), not '%s'", v);
        return -1;
    }
    return 0;
}

/* "C" or "CxR", each 1 to 2^31 - 1 (the library's, as OpenCV's int sides). */
static int set_tiles(parse_state *st, const char *v, char *err, size_t errlen)
{
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
    if (end == v || *end != '\0' || v[0] == '-' || tx < 1 || ty < 1 || tx > INT32_MAX ||
        ty > INT32_MAX) {
        snprintf(err, errlen, "--tiles needs COLSxROWS, each 1 to 2147483647 (e.g. 8x8), not '%s'",
                 v);
        return -1;
    }
    st->out->tiles_x = (uint32_t)tx;
    st->out->tiles_y = (uint32_t)ty;
    return 0;
}

static int set_shard(parse_state *st, const char *v, char *err, size_t errlen)
{
    return ih_parse_shard(v, &st->out->scale, err, errlen);
}

static int set_gpus(parse_state *st, const char *v, char *err, size_t errlen)
{
    return ih_parse_gpus(v, &st->out->scale, err, errlen);
}

#define FLAG(s, l, f) {s, l, 0, NULL, offsetof(ih_cli_args, f), NULL}
#define PATH(l, f) {NULL, l, 1, NULL, offsetof(ih_cli_args, f), NULL}
#define ONE_OF(l, f, c) {NULL, l, 1, NULL, offsetof(ih_cli_args, f), &c}

_Static_assert(sizeof(imghist_gray_mode) == sizeof(int), "--gray stores an int");

static const choices gray_modes = {
    (const choice[]){{"luma", IMGHIST_GRAY_LUMA}, {"bgr2gray", IMGHIST_GRAY_BGR2GRAY}, {NULL, 0}},
    1, "unknown --gray mode '%s' (use bgr2gray or luma)"};
static const choices depths = {(const choice[]){{"native", 1}, {"8", 0}, {NULL, 0}}, 1,
                               "unknown --depth '%s' (use 8 or native)"};
static const choices colors = {(const choice[]){{"gray", IH_COLOR_GRAY},
                                                {"luma", IH_COLOR_LUMA},
                                                {"channels", IH_COLOR_CHANNELS},
                                                {NULL, 0}},
                               0, "--color is gray, luma or channels, not '%s'"};

static const choices decodes = {(const choice[]){{"auto", IH_DECODE_AUTO},
                                                 {"cpu", IH_DECODE_CPU},
                                                 {"gpu", IH_DECODE_GPU},
                                                 {NULL, 0}},
                                0, "--decode is auto, cpu or gpu, not '%s'"};

static const option options[] = {
    {"-h", NULL, 0, set_short_help, 0, NULL},
    FLAG(NULL, "--help", help),
    FLAG(NULL, "--version", version),
    {"-v", "--verbose", 0, set_verbose, 0, NULL},
    {"-q", "--quiet", 0, set_quiet, 0, NULL},
    FLAG("-r", "--recursive", recursive),
    PATH("--equalize", equalize_out),
    PATH("--csv", csv_out),
    PATH("--json", json_out),
    PATH("--total", total_out),
    ONE_OF("--gray", gray, gray_modes),
    {"-j", "--jobs", 1, set_jobs, 0, NULL},
    {NULL, "--backend", 1, set_backend, 0, NULL},
    ONE_OF("--decode", decode, decodes),
    {NULL, "--max-pixels", 1, set_max_pixels, 0, NULL},
    {NULL, "--bins", 1, set_bins, 0, NULL},
    {NULL, "--range", 1, set_range, 0, NULL},
    ONE_OF("--depth", native_depth, depths),
    FLAG(NULL, "--channels", channels),
    FLAG(NULL, "--read-truncated", read_truncated),
    FLAG(NULL, "--no-sync", no_sync),
    FLAG(NULL, "--stats", stats),
    PATH("--mask", mask),
    PATH("--plot-dir", plot_dir),
    PATH("--plot", plot),
    FLAG(NULL, "--log", log_scale),
    ONE_OF("--color", color, colors),
    FLAG(NULL, "--clahe", clahe),
    {NULL, "--clip", 1, set_clip, 0, NULL},
    {NULL, "--tiles", 1, set_tiles, 0, NULL},
    PATH("--match", match),
    PATH("--joint", joint),
    {NULL, "--max-bytes", 1, set_max_bytes, 0, NULL},
    {NULL, "--shard", 1, set_shard, 0, NULL},
    {NULL, "--gpus", 1, set_gpus, 0, NULL},
};

/* Whether a names the option: its short name exactly, its long name exactly
 * or, with a value, "--name=..."; the name matched, or NULL. */
static const char *names(const option *o, const char *a)
{
    if (o->short_name != NULL && strcmp(a, o->short_name) == 0) {
        return o->short_name;
    }
    if (o->long_name == NULL) {
        return NULL;
    }
    const size_t n = strlen(o->long_name);
    if (strncmp(a, o->long_name, n) == 0 && (a[n] == '\0' || (o->takes_value && a[n] == '='))) {
        return o->long_name;
    }
    return NULL;
}

/* The option argv[*i] names, and its value (NULL for a flag), taken from
 * after '=' or from the next argument (*i moves past it). NULL with a usage
 * error in err when it names none or its value is missing or empty. */
static const option *take_option(int argc, char *const argv[], int *i, const char **value,
                                 char *err, size_t errlen)
{
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof options / sizeof options[0]; k++) {
        const char *name = names(&options[k], a);
        if (name == NULL) {
            continue;
        }
        const size_t n = strlen(name);
        *value = NULL;
        if (!options[k].takes_value) {
            return &options[k];
        }
        if (a[n] == '=' && a[n + 1] != '\0') {
            *value = a + n + 1;
        } else if (a[n] == '\0' && *i + 1 < argc && argv[*i + 1][0] != '\0') {
            *value = argv[++*i];
        } else {
            snprintf(err, errlen, "option %s needs a value", name);
            return NULL;
        }
        return &options[k];
    }
    snprintf(err, errlen, "unknown option '%s'", a);
    return NULL;
}

/* Stores the value the word v names into the int at field; 0, or -1 with
 * the option's usage error in err. */
static int store_choice(const choices *c, const char *v, char *field, char *err, size_t errlen)
{
    for (const choice *w = c->words; w->word != NULL; w++) {
        if ((c->any_case ? strcasecmp(v, w->word) : strcmp(v, w->word)) == 0) {
            memcpy(field, &w->value, sizeof w->value);
            return 0;
        }
    }
    snprintf(err, errlen, c->error, v);
    return -1;
}

/* Applies argv[*i], an option; 0, or -1 with a usage error in err. */
static int apply_option(parse_state *st, int argc, char *const argv[], int *i, char *err,
                        size_t errlen)
{
    const char *v = NULL;
    const option *o = take_option(argc, argv, i, &v, err, errlen);
    if (o == NULL) {
        return -1;
    }
    if (o->set != NULL) {
        return o->set(st, v, err, errlen);
    }
    char *field = (char *)st->out + o->field;
    if (o->one_of != NULL) {
        return store_choice(o->one_of, v, field, err, errlen);
    }
    if (o->takes_value) {
        memcpy(field, &v, sizeof v);
    } else {
        const int on = 1;
        memcpy(field, &on, sizeof on);
    }
    return 0;
}

/* The options and inputs of argv, before the checks of how they combine. */
static int read_arguments(int argc, char *const argv[], parse_state *st, char *err,
                          size_t errlen)
{
    ih_cli_args *out = st->out;
    int no_more_options = 0;
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
        } else if (strcmp(a, "--") == 0) {
            no_more_options = 1;
        } else if (apply_option(st, argc, argv, &i, err, errlen) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Two outputs naming one file (standard output is one file too). */
static int check_same_files(const ih_cli_args *out, char *err, size_t errlen)
{
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
    return 0;
}

/* --plot, --plot-dir and --log. */
static int check_plots(const ih_cli_args *out, char *err, size_t errlen)
{
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
    return 0;
}

/* --gpus with the backend; --match, --color and --clahe with the rest. */
static int check_transforms(const ih_cli_args *out, char *err, size_t errlen)
{
    if (out->scale.n_gpus > 0 && out->backend == IMGHIST_BACKEND_CPU) {
        snprintf(err, errlen, "--gpus and --backend cpu contradict each other");
        return -1;
    }
    const char *why = NULL;
    if (out->decode == IH_DECODE_GPU && !ih_gpu_decode_fits(out, &why)) {
        snprintf(err, errlen, "--decode gpu: %s", why);
        return -1;
    }
    if (out->decode == IH_DECODE_GPU && out->backend == IMGHIST_BACKEND_CPU) {
        snprintf(err, errlen, "--decode gpu counts on the GPU: not with --backend cpu");
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
    return 0;
}

/* --mask, --joint, --channels and --total with the inputs and outputs. */
static int check_inputs(const ih_cli_args *out, char *err, size_t errlen)
{
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
    parse_state st = {out, 0, 0};
    if (read_arguments(argc, argv, &st, err, errlen) != 0) {
        return -1;
    }
    if (st.quiet && st.verbose) {
        snprintf(err, errlen, "-q and -v contradict each other");
        return -1;
    }
    out->verbosity = st.verbose ? 1 : (st.quiet ? -1 : 0);
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
    if (check_same_files(out, err, errlen) != 0 || check_plots(out, err, errlen) != 0 ||
        check_transforms(out, err, errlen) != 0 || check_inputs(out, err, errlen) != 0) {
        return -1;
    }
    return 0;
}

void ih_free_args(ih_cli_args *a)
{
    free(a->inputs);
    a->inputs = NULL;
    a->n_inputs = 0;
}
