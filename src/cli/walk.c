/* A batch run's file list: the inputs walked (common/walk.c), and each image
 * mapped to its output. */
#define _POSIX_C_SOURCE 200809L
#include "walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "imghist.h"

static int by_out(const void *a, const void *b)
{
    return strcmp((*(ih_file *const *)a)->out, (*(ih_file *const *)b)->out);
}

static int by_inode(const void *a, const void *b)
{
    const ih_file *x = *(ih_file *const *)a, *y = *(ih_file *const *)b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return 0;
}

char *ih_output_path(const char *out_dir, const char *rel)
{
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    const char *dot = strrchr(base, '.');
    const size_t stem = dot != NULL && dot != base ? (size_t)(dot - rel) : strlen(rel);
    char *with_png = malloc(stem + 5);
    if (with_png == NULL) {
        return NULL;
    }
    memcpy(with_png, rel, stem);
    memcpy(with_png + stem, ".png", 5);
    char *p = ih_path_join(out_dir, with_png);
    free(with_png);
    return p;
}

/* Map outputs; refuse collisions and outputs that are inputs. */
static int map_outputs(ih_file_list *list, const char *out_dir, char *err, size_t errlen)
{
    const size_t n = list->count;
    ih_file **order = malloc((n ? n : 1) * sizeof *order);
    if (order == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        ih_file *f = &list->files[i];
        f->out = ih_output_path(out_dir, f->path + f->rel);
        order[i] = f;
        if (f->out == NULL) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) {
        qsort(order, n, sizeof *order, by_out);
        for (size_t i = 1; i < n && rc == 0; i++) {
            if (strcmp(order[i - 1]->out, order[i]->out) == 0) {
                snprintf(err, errlen, "%s and %s would both be written to %s", order[i - 1]->path,
                         order[i]->path, order[i]->out);
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        /* An existing output that is one of the inputs (same device and inode). */
        qsort(order, n, sizeof *order, by_inode);
        for (size_t i = 0; i < n && rc == 0; i++) {
            struct stat st;
            if (stat(list->files[i].out, &st) != 0) {
                continue;
            }
            ih_file key = {0};
            key.dev = st.st_dev;
            key.ino = st.st_ino;
            const ih_file *k = &key;
            ih_file **hit = bsearch(&k, order, n, sizeof *order, by_inode);
            if (hit != NULL) {
                snprintf(err, errlen, "%s would overwrite the input %s", list->files[i].out,
                         (*hit)->path);
                rc = -1;
            }
        }
    }
    free(order);
    return rc;
}

/* The CLI's skip callback behind the walker's. */
typedef struct skip_adapter {
    ih_skip_fn fn;
} skip_adapter;

static void skip_to_cli(void *user, const char *path, const char *why, int error)
{
    const skip_adapter *s = user;
    if (s->fn != NULL) s->fn(path, why, error);
}

int ih_collect_files(const char *const *inputs, size_t n_inputs, int recursive,
                     const char *out_dir, ih_skip_fn skip, ih_file_list *list, char *err,
                     size_t errlen)
{
    skip_adapter s = {skip};
    if (ih_walk_inputs(inputs, n_inputs, recursive, imghist_detect_format, skip_to_cli, &s, list,
                       err, errlen) != 0) {
        return -1;
    }
    return out_dir != NULL ? map_outputs(list, out_dir, err, errlen) : 0;
}
