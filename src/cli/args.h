/* Command-line parsing for imghist, kept apart from main() so it is testable. */
#ifndef IMGHIST_CLI_ARGS_H
#define IMGHIST_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "imghist.h"
#include "scale.h"

enum { IH_COLOR_GRAY = 0, IH_COLOR_LUMA = 1, IH_COLOR_CHANNELS = 2 };

typedef struct ih_cli_args {
    const char *input;        /* the first input: a path or "-" */
    const char **inputs;      /* every input, in order (malloc'd; ih_free_args) */
    size_t n_inputs;
    const char *equalize_out; /* NULL when not asked for; a folder in batch runs */
    const char *csv_out;      /* NULL, a path, or "-" */
    const char *json_out;     /* NULL, a path, or "-": JSON Lines, one object per image */
    const char *total_out;    /* NULL, a path, or "-": the summed histogram as CSV */
    int recursive;            /* -r: descend into sub-folders */
    unsigned jobs;            /* -j: worker threads; 0: every core */
    imghist_gray_mode gray;
    imghist_backend backend;
    int decode;               /* --decode: IH_DECODE_AUTO, _CPU or _GPU (gpu_decode.h) */
    int verbosity;            /* -1 quiet, 0 normal, 1 verbose */
    uint64_t max_pixels;      /* 0: the library's default */
    uint64_t max_bytes;       /* 0: the library's default */
    uint32_t bins;            /* --bins; 0: the default (one per level; 256 for float) */
    int has_range;            /* --range LO:HI given */
    double lo, hi;
    int native_depth;         /* --depth native: 16-bit and float samples kept */
    int channels;             /* --channels: R, G, B (A) counted separately */
    int read_truncated;       /* --read-truncated: JPEGs that end early are read */
    int no_sync;              /* --no-sync: outputs renamed into place without fsync */
    int stats;                /* --stats: time per stage at the end of the run */
    const char *mask;         /* --mask FILE: count only where it is non-zero */
    const char *joint;        /* --joint FILE: joint histogram with this image */
    const char *match;        /* --match REF: --equalize writes the image matched to REF */
    int clahe;                /* --clahe: --equalize writes CLAHE's result */
    int color;                /* --color: IH_COLOR_GRAY (default), _LUMA, _CHANNELS */
    double clip;              /* --clip (CLAHE's clip limit; default 40) */
    uint32_t tiles_x, tiles_y; /* --tiles WxH (default 8x8) */
    const char *plot;         /* --plot FILE.png|.svg: a picture of the histogram (a batch
                                 run with --total: of the total) */
    const char *plot_dir;     /* --plot-dir DIR: a batch run's plot of each image */
    int log_scale;            /* --log: the plot's counts on a log axis */
    int help;                 /* -h or --help */
    int short_help;           /* -h: the short summary */
    int version;
    ih_scale_opts scale;      /* --shard, --gpus (scale.h) */
} ih_cli_args;

/* Returns 0, or -1 with a one-line reason in err (a usage error). Either way
 * free the result with ih_free_args. */
int ih_parse_args(int argc, char *const argv[], ih_cli_args *out, char *err, size_t errlen);
void ih_free_args(ih_cli_args *a);

extern const char ih_usage_text[];      /* --help */
extern const char ih_short_help_text[]; /* -h */

/* The extensions --equalize FILE may end in (it writes PNG), e.g. ".png". */
int ih_equalize_extension_ok(const char *path);
extern const char ih_equalize_extensions[];

#endif
