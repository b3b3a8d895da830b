#define _POSIX_C_SOURCE 200809L
#include "walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imghist.h"

static char *join(const char *a, const char *b)
{
    const size_t la = strlen(a), lb = strlen(b);
    const int slash = la > 0 && a[la - 1] != '/';
    char *p = malloc(la + slash + lb + 1);
    if (p != NULL) {
        memcpy(p, a, la);
        if (slash) p[la] = '/';
        memcpy(p + la + slash, b, lb + 1);
    }
    return p;
}

/* Whether a file is an image, from its first bytes: 1 yes, 0 no, -1 it
 * cannot be read (errno says why). */
static int sniff(const char *path)
{
    unsigned char head[64];
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    const ssize_t n = read(fd, head, sizeof head);
    const int saved = errno;
    close(fd);
    errno = saved;
    if (n < 0) {
        return -1;
    }
    return n > 0 && imghist_detect_format(head, (size_t)n) != NULL;
}

/* An entry the walk cannot read or enter: said, and a failure of the run. */
static void unreadable(ih_file_list *list, const char *path, int err, ih_skip_fn skip)
{
    list->unreadable++;
    if (skip != NULL) skip(path, strerror(err), 1);
}

static int add(ih_file_list *list, char *path, size_t rel, const struct stat *st)
{
    if (list->count == list->cap) {
        const size_t cap = list->cap ? list->cap * 2 : 256;
        ih_file *bigger = realloc(list->files, cap * sizeof *bigger);
        if (bigger == NULL) {
            return -1;
        }
        list->files = bigger;
        list->cap = cap;
    }
    ih_file *f = &list->files[list->count++];
    memset(f, 0, sizeof *f);
    f->path = path;
    f->rel = rel;
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size > 0 ? (uint64_t)st->st_size : 0;
    return 0;
}

/* A regular file found at path: kept when it is an image. */
static int take_file(ih_file_list *list, char *path, size_t rel, const struct stat *st,
                     ih_skip_fn skip)
{
    const int image = sniff(path);
    if (image <= 0) {
        if (image < 0) {
            unreadable(list, path, errno, skip);
        } else {
            list->skipped++;
            if (skip != NULL) skip(path, "not an image", 0);
        }
        free(path);
        return 0;
    }
    if (add(list, path, rel, st) != 0) {
        free(path);
        return -1;
    }
    return 0;
}

/* A folder's entry names (without . and ..), read whole; NULL with errno
 * set when the folder cannot be opened or read. */
static char **read_names(const char *dir, size_t *n)
{
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL) {
        return NULL;
    }
    char **names = NULL;
    size_t cap = 0;
    int err = 0;
    for (;;) {
        errno = 0;
        const struct dirent *e = readdir(d);
        if (e == NULL) {
            err = errno; /* 0 at the end of the folder */
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            char **more = realloc(names, cap * sizeof *more);
            if (more == NULL) {
                err = ENOMEM;
                break;
            }
            names = more;
        }
        if ((names[*n] = strdup(e->d_name)) == NULL) {
            err = ENOMEM;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (err != 0) {
        for (size_t i = 0; i < *n; i++) free(names[i]);
        free(names);
        *n = 0;
        errno = err;
        return NULL;
    }
    return names != NULL ? names : calloc(1, sizeof *names);
}

static int walk(ih_file_list *list, const char *dir, size_t rel, int recursive, ih_skip_fn skip,
                char *err, size_t errlen)
{
    size_t n = 0;
    char **names = read_names(dir, &n);
    if (names == NULL) {
        if (errno == ENOMEM) {
            snprintf(err, errlen, "out of memory listing %s", dir);
            return -1;
        }
        /* An unreadable folder: its images would be missing from the run. */
        unreadable(list, dir, errno, skip);
        return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char *path = rc == 0 ? join(dir, names[i]) : NULL;
        free(names[i]);
        if (rc != 0) {
            continue;
        }
        if (path == NULL) {
            rc = -1;
            continue;
        }
        struct stat lst, st;
        if (lstat(path, &lst) != 0) {
            unreadable(list, path, errno, skip);
            free(path);
            continue;
        }
        if (stat(path, &st) != 0) {
            if (S_ISLNK(lst.st_mode) && errno == ENOENT) {
                list->skipped++; /* a dangling link names nothing to read */
                if (skip != NULL) skip(path, "a link to nothing", 0);
            } else {
                unreadable(list, path, errno, skip);
            }
            free(path);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (recursive && !S_ISLNK(lst.st_mode)) {
                rc = walk(list, path, rel, recursive, skip, err, errlen);
            } else if (skip != NULL) {
                skip(path, recursive ? "a link to a folder" : "a folder (use -r)", 0);
            }
            free(path);
        } else if (S_ISREG(st.st_mode)) {
            rc = take_file(list, path, rel, &st, skip);
        } else {
            list->skipped++;
            if (skip != NULL) skip(path, "not a regular file", 0);
            free(path);
        }
    }
    free(names);
    if (rc != 0 && err[0] == '\0') {
        snprintf(err, errlen, "out of memory listing %s", dir);
    }
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const ih_file *)a)->path, ((const ih_file *)b)->path);
}

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
    char *p = join(out_dir, with_png);
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

int ih_collect_files(const char *const *inputs, size_t n_inputs, int recursive,
                     const char *out_dir, ih_skip_fn skip, ih_file_list *list, char *err,
                     size_t errlen)
{
    memset(list, 0, sizeof *list);
    err[0] = '\0';
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat st;
        if (stat(inputs[i], &st) != 0) {
            snprintf(err, errlen, "%s: %s", inputs[i], strerror(errno));
            return -1;
        }
        int rc = 0;
        if (S_ISDIR(st.st_mode)) {
            /* Below a folder, paths are relative to it. */
            const size_t len = strlen(inputs[i]);
            const size_t rel = len + (len > 0 && inputs[i][len - 1] != '/');
            rc = walk(list, inputs[i], rel, recursive, skip, err, errlen);
        } else {
            char *path = strdup(inputs[i]);
            if (path == NULL) {
                rc = -1;
            } else {
                /* A file given by name maps to its own name in the output folder. */
                const char *slash = strrchr(path, '/');
                rc = take_file(list, path, slash ? (size_t)(slash - path) + 1 : 0, &st, skip);
            }
        }
        if (rc != 0) {
            if (err[0] == '\0') snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    qsort(list->files, list->count, sizeof *list->files, by_path);
    /* The same file given twice (or found twice) is processed once. */
    size_t kept = 0;
    for (size_t i = 0; i < list->count; i++) {
        if (kept > 0 && strcmp(list->files[kept - 1].path, list->files[i].path) == 0) {
            free(list->files[i].path);
            continue;
        }
        list->files[kept++] = list->files[i];
    }
    list->count = kept;
    return out_dir != NULL ? map_outputs(list, out_dir, err, errlen) : 0;
}

void ih_free_file_list(ih_file_list *list)
{
    for (size_t i = 0; i < list->count; i++) {
        free(list->files[i].path);
        free(list->files[i].out);
    }
    free(list->files);
    memset(list, 0, sizeof *list);
}
