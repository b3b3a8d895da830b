/* The file list of a batch run: inputs expanded (folders walked), images told
 * by content, sorted, and each mapped to its output. */
#ifndef IMGHIST_CLI_WALK_H
#define IMGHIST_CLI_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct ih_file {
    char *path;   /* as found: the input joined with the path below it */
    size_t rel;   /* offset in path of the part below the input folder */
    char *out;    /* --equalize DIR/rel with .png, or NULL */
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
typedef void (*ih_skip_fn)(const char *path, const char *why, int error);

/*
 * Expand the inputs: a file is taken as it is, a folder's files are taken
 * (and its sub-folders' with `recursive`); files are read for their first
 * bytes and kept when they are images. Symbolic links to files are followed,
 * to folders not (no loops). A folder is read whole and closed before its
 * sub-folders are walked, so any depth holds one folder open at a time; an
 * entry that cannot be read or entered is counted in `unreadable` and given
 * to skip with error 1. Then sorts, maps outputs into out_dir (NULL: no
 * image outputs) and refuses two images mapping to one output, or an output
 * that is one of the inputs. Returns 0; -1 with a reason in err for a usage
 * error (a collision, an input that does not exist), in which case nothing
 * has been written.
 */
/* out_dir/rel with the extension replaced by .png (malloc'd; NULL when out of
 * memory). */
char *ih_output_path(const char *out_dir, const char *rel);

int ih_collect_files(const char *const *inputs, size_t n_inputs, int recursive,
                     const char *out_dir, ih_skip_fn skip, ih_file_list *list, char *err,
                     size_t errlen);
void ih_free_file_list(ih_file_list *list);

#endif
