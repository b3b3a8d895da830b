/* Command-line parsing for imghist, kept apart from main() so it is testable. */
#ifndef IMGHIST_CLI_ARGS_H
#define IMGHIST_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "imghist.h"

typedef struct ih_cli_args {
    const char *input;        /* path or "-" */
    const char *equalize_out; /* NULL when not asked for */
    const char *csv_out;      /* NULL, a path, or "-" */
    imghist_backend backend;
    int verbosity;            /* -1 quiet, 0 normal, 1 verbose */
    uint64_t max_pixels;      /* 0: the library's default */
    uint64_t max_bytes;       /* 0: the library's default */
    int help;
    int version;
} ih_cli_args;

/* Returns 0, or -1 with a one-line reason in err (a usage error). */
int ih_parse_args(int argc, char *const argv[], ih_cli_args *out, char *err, size_t errlen);

extern const char ih_usage_text[];

#endif
