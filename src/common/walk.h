/* The images of a list of files and folders, as a batch run takes them:
 * folders walked, files told by content, the list sorted. The CLI's batch
 * runs and the library's imghist_list_files share it. */
#ifndef IMGHIST_WALK_H
#define IMGHIST_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ih_file {
    char *path;   /* as found: the input joined with the path below it */
    size_t rel;   /* offset in path of the part below the input folder */
    char *out;    /* the CLI's output for it (--equalize DIR/rel.png), or NULL */
    dev_t dev;
    ino_t ino;
    uint64_t size; /* bytes, as listed: what shards are balanced by */
} ih_file;

typedef struct ih_file_list {
    ih_file *files; /* images, sorted by path */
    size_t count, cap;
    size_t skipped;    /* files that are not images */
    size_t unreadable; /* files and folders that could not be read or entered */
} ih_file_list;

/* Called for every entry that is skipped: not an image (error 0), or one that
 * could not be read or entered (error 1: a failure of the run). */
typedef void (*ih_walk_skip_fn)(void *user, const char *path, const char *why, int error);

/* The format a file's first bytes (up to 64) show, NULL for none:
 * imghist_detect_format, given by the caller. */
typedef const char *(*ih_detect_fn)(const void *head, size_t size);

/*
 * Expand the inputs: a file is taken as it is, a folder's files are taken
 * (and its sub-folders' with `recursive`); files are read for their first
 * bytes and kept when detect names a format. Hidden files are taken like any
 * other. Symbolic links to files are followed, to folders not (no loops). A
 * folder is read whole and closed before its sub-folders are walked, so any
 * depth holds one folder open at a time; an entry that cannot be read or
 * entered is counted in `unreadable` and given to skip with error 1. The
 * list is sorted by path (strcmp), each path once. Returns 0; -1 with a
 * reason in err when an input does not exist, -2 when memory runs out.
 */
int ih_walk_inputs(const char *const *inputs, size_t n_inputs, int recursive, ih_detect_fn detect,
                   ih_walk_skip_fn skip, void *user, ih_file_list *list, char *err,
                   size_t errlen);
void ih_free_file_list(ih_file_list *list);

/* a + "/" + b, without doubling a trailing slash of a (malloc'd; NULL when
 * out of memory). */
char *ih_path_join(const char *a, const char *b);

#endif
