/* The images of a batch run's inputs: folders walked, files told by their
 * first bytes, the list sorted (walk.h). */
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

char *ih_path_join(const char *a, const char *b)
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

/* One walk's fixed arguments. */
typedef struct walker {
    ih_file_list *list;
    int recursive;
    ih_detect_fn detect;
    ih_walk_skip_fn skip;
    void *user;
} walker;

/* Whether a file is an image, from its first bytes: 1 yes, 0 no, -1 it
 * cannot be read (errno says why). */
static int sniff(const char *path, ih_detect_fn detect)
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
    return n > 0 && detect(head, (size_t)n) != NULL;
}

/* An entry the walk cannot read or enter: said, and a failure of the run. */
static void unreadable(const walker *w, const char *path, int err)
{
    w->list->unreadable++;
    if (w->skip != NULL) w->skip(w->user, path, strerror(err), 1);
}

/* An entry that is no image: counted, and said when `counted`. */
static void skipped(const walker *w, const char *path, const char *why, int counted)
{
    w->list->skipped += counted != 0;
    if (w->skip != NULL) w->skip(w->user, path, why, 0);
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
static int take_file(const walker *w, char *path, size_t rel, const struct stat *st)
{
    const int image = sniff(path, w->detect);
    if (image <= 0) {
        if (image < 0) {
            unreadable(w, path, errno);
        } else {
            skipped(w, path, "not an image", 1);
        }
        free(path);
        return 0;
    }
    if (add(w->list, path, rel, st) != 0) {
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

static int walk(const walker *w, const char *dir, size_t rel, char *err, size_t errlen)
{
    size_t n = 0;
    char **names = read_names(dir, &n);
    if (names == NULL) {
        if (errno == ENOMEM) {
            snprintf(err, errlen, "out of memory listing %s", dir);
            return -1;
        }
        /* An unreadable folder: its images would be missing from the run. */
        unreadable(w, dir, errno);
        return 0;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char *path = rc == 0 ? ih_path_join(dir, names[i]) : NULL;
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
            unreadable(w, path, errno);
            free(path);
            continue;
        }
        if (stat(path, &st) != 0) {
            if (S_ISLNK(lst.st_mode) && errno == ENOENT) {
                skipped(w, path, "a link to nothing", 1); /* it names nothing to read */
            } else {
                unreadable(w, path, errno);
            }
            free(path);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (w->recursive && !S_ISLNK(lst.st_mode)) {
                rc = walk(w, path, rel, err, errlen);
            } else {
                skipped(w, path, w->recursive ? "a link to a folder" : "a folder (use -r)", 0);
            }
            free(path);
        } else if (S_ISREG(st.st_mode)) {
            rc = take_file(w, path, rel, &st);
        } else {
            skipped(w, path, "not a regular file", 1);
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

int ih_walk_inputs(const char *const *inputs, size_t n_inputs, int recursive, ih_detect_fn detect,
                   ih_walk_skip_fn skip, void *user, ih_file_list *list, char *err,
                   size_t errlen)
{
    memset(list, 0, sizeof *list);
    const walker w = {list, recursive, detect, skip, user};
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
            rc = walk(&w, inputs[i], rel, err, errlen);
        } else {
            char *path = strdup(inputs[i]);
            if (path == NULL) {
                rc = -1;
            } else {
                /* A file given by name maps to its own name in the output folder. */
                const char *slash = strrchr(path, '/');
                rc = take_file(&w, path, slash ? (size_t)(slash - path) + 1 : 0, &st);
            }
        }
        if (rc != 0) {
            if (err[0] == '\0') snprintf(err, errlen, "out of memory");
            return -2;
        }
    }
    if (list->count > 1) { /* an empty list has no array to sort (NULL) */
        qsort(list->files, list->count, sizeof *list->files, by_path);
    }
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
    return 0;
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
