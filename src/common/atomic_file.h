/* Write-then-rename output files, shared by the library and the CLI. */
#ifndef IMGHIST_ATOMIC_FILE_H
#define IMGHIST_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct ih_outfile {
    FILE *fp;
    char *final_path; /* NULL when writing straight to the target */
    char *tmp_path;   /* NULL when writing straight to the target */
    int is_stdout;
} ih_outfile;

/*
 * Open `path` for writing. A regular file (existing or not) is written to a
 * temporary file beside it that ih_outfile_commit() renames into place; a
 * path naming something else that exists (a device such as /dev/null or
 * /dev/full, a FIFO) is written directly; "-" is standard output when
 * allow_stdout is set. On failure returns -1 with errno set and writes a reason
 * into err.
 */
int ih_outfile_open(ih_outfile *out, const char *path, int allow_stdout, char *err, size_t errlen);
/* Flush, close and rename into place. Returns 0, or -1 with a reason in err;
 * the temporary file is removed on failure. */
int ih_outfile_commit(ih_outfile *out, char *err, size_t errlen);
/* Give up: close and remove the temporary file. Safe on a closed outfile. */
void ih_outfile_abort(ih_outfile *out);

#endif
