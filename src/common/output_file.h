/* Write-then-rename output files, shared by the library and the CLI. */
#ifndef IMGHIST_OUTPUT_FILE_H
#define IMGHIST_OUTPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct ih_output_file {
    FILE *fp;
    char *final_path; /* NULL when writing straight to the target */
    char *tmp_path;   /* NULL when writing straight to the target */
    int is_stdout;
    int direct;       /* writing straight to a device or FIFO that exists */
    int anon;         /* an unnamed file (O_TMPFILE), linked in by ih_output_commit */
    int flushed;      /* anon: written and synced, fp kept for the link */
} ih_output_file;

/*
 * Open `path` for writing. A regular file (existing or not) is written to a
 * temporary file beside it that ih_output_commit() renames into place: on
 * Linux an unnamed one (O_TMPFILE), which a killed process leaves nothing
 * of, linked in under a temporary name only for the rename; elsewhere a
 * hidden `.NAME.imghist-tmp.PID.HOST.XXXXXX`. The first time a process
 * writes into a folder, it removes the temporaries of that form that a
 * process of this machine left there and that are a minute old or more
 * while their process no longer exists. A path naming something else that
 * exists (a device such as /dev/null or /dev/full, a FIFO) is written
 * directly; "-" is standard output when allow_stdout is set. On failure
 * returns -1 with errno set and writes a reason into err.
 */
int ih_output_open(ih_output_file *out, const char *path, int allow_stdout, char *err,
                   size_t errlen);
/* Flush and close, keeping the temporary file for ih_output_commit (so that
 * several outputs can all be written before any is renamed into place).
 * Returns 0, or -1 with a reason in err; the temporary file is then removed. */
int ih_output_close(ih_output_file *out, char *err, size_t errlen);
/* Close if still open, and rename into place. Returns 0, or -1 with a reason in err;
 * the temporary file is removed on failure. */
int ih_output_commit(ih_output_file *out, char *err, size_t errlen);
/* Give up: close and remove the temporary file. Safe on a closed or committed output. */
void ih_output_abort(ih_output_file *out);

/* 1 (default): a temporary file is synced to disk before it is renamed into
 * place; 0 (the CLI's --no-sync): left to the system's writeback. */
extern int ih_output_sync;

#endif
