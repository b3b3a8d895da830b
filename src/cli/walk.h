/* The file list of a batch run: inputs expanded (folders walked, images told
 * by content, sorted: common/walk.h), and each mapped to its output. */
#ifndef IMGHIST_CLI_WALK_H
#define IMGHIST_CLI_WALK_H

#include "../common/walk.h"

/* Called for every entry that is skipped: not an image (error 0), or one that
 * could not be read or entered (error 1: a failure of the run). */
typedef void (*ih_skip_fn)(const char *path, const char *why, int error);

/* out_dir/rel with the extension replaced by .png (malloc'd; NULL when out of
 * memory). */
char *ih_output_path(const char *out_dir, const char *rel);

/*
 * ih_walk_inputs with imghist_detect_format telling images; then maps
 * outputs into out_dir (NULL: no image outputs) and refuses two images
 * mapping to one output, or an output that is one of the inputs. Returns 0;
 * -1 with a reason in err for a usage error (a collision, an input that
 * does not exist), in which case nothing has been written.
 */
int ih_collect_files(const char *const *inputs, size_t n_inputs, int recursive,
                     const char *out_dir, ih_skip_fn skip, ih_file_list *list, char *err,
                     size_t errlen);

#endif
