/*
 * The CLI's output files, all or nothing: each is written to a temporary file
 * beside its target and closed; only when every one was written completely are
 * they renamed into place. A run that fails replaces none of its outputs.
 */
#ifndef IMGHIST_CLI_OUTPUTS_H
#define IMGHIST_CLI_OUTPUTS_H

#include <stddef.h>
#include <stdio.h>

#include "output_file.h"

#define IH_MAX_OUTPUTS 5

typedef struct ih_outputs {
    ih_output_file files[IH_MAX_OUTPUTS];
    const char *paths[IH_MAX_OUTPUTS];
    size_t count;
} ih_outputs;

/* Writes what `write` produces (0 on success) for `path` into a closed
 * temporary file. Returns 0, or -1 with "PATH: reason" in err; earlier staged
 * files are then left for ih_outputs_abort. */
int ih_outputs_stage(ih_outputs *o, const char *path, int (*write)(FILE *, const void *),
                     const void *arg, char *err, size_t errlen);
/* Opens path ("-": standard output) to be written piece by piece; it is
 * closed and renamed with the staged files. NULL with "PATH: reason" in err. */
FILE *ih_outputs_open(ih_outputs *o, const char *path, char *err, size_t errlen);
/* Closes every file, then renames each into place. Returns 0, or -1 with "PATH: reason". */
int ih_outputs_commit(ih_outputs *o, char *err, size_t errlen);
/* Removes every staged file. */
void ih_outputs_abort(ih_outputs *o);

#endif
