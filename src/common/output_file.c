#define _GNU_SOURCE /* O_TMPFILE */
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ih_output_sync = 1;

static void clear(ih_output_file *out)
{
    free(out->final_path);
    free(out->tmp_path);
    memset(out, 0, sizeof *out);
}

/* An unnamed file in the target's folder (dirlen bytes of path), or -1 where
 * the system has none (no O_TMPFILE, a file system without it, no /proc to
 * link it by). */
static int open_unnamed(ih_output_file *out, const char *path, size_t dirlen)
{
#ifdef O_TMPFILE
    if (access("/proc/self/fd", X_OK) != 0) {
        return -1;
    }
    char *dir = dirlen > 0 ? strndup(path, dirlen) : strdup(".");
    if (dir == NULL) {
        return -1;
    }
    const int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* umask applies */
    free(dir);
    if (fd < 0) {
        return -1;
    }
    out->fp = fdopen(fd, "wb");
    if (out->fp == NULL) {
        close(fd);
        return -1;
    }
    out->anon = 1;
    return 0;
#else
    (void)out;
    (void)path;
    (void)dirlen;
    return -1;
#endif
}

/* Give the unnamed file its target's name: linked in under a temporary name
 * beside it and renamed over the target (link cannot replace a file), or
 * linked straight in where no target exists yet. */
static int link_in(ih_output_file *out, char *err, size_t errlen)
{
    char proc[48];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(out->fp));
    const char *path = out->final_path;
    int rc = linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
    if (rc != 0 && errno == EEXIST) {
        const char *slash = strrchr(path, '/');
        const size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
        const size_t n = strlen(path) + 48;
        char *tmp = malloc(n);
        if (tmp == NULL) {
            errno = ENOMEM;
        }
        for (unsigned k = 0; tmp != NULL; k++) {
            snprintf(tmp, n, "%.*s.%s.%ld.%u", (int)dirlen, path, path + dirlen, (long)getpid(),
                     k);
            rc = linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW);
            if (rc == 0 || errno != EEXIST || k == 1000) {
                break;
            }
        }
        if (rc == 0 && rename(tmp, path) != 0) {
            const int e = errno;
            unlink(tmp);
            errno = e;
            rc = -1;
        }
        free(tmp);
    }
    const int e = errno;
    fclose(out->fp);
    out->fp = NULL;
    if (rc != 0) {
        snprintf(err, errlen, "%s", strerror(e ? e : EIO));
        clear(out);
        return -1;
    }
    clear(out);
    return 0;
}

int ih_output_open(ih_output_file *out, const char *path, int allow_stdout, char *err,
                   size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (allow_stdout && strcmp(path, "-") == 0) {
        out->fp = stdout;
        out->is_stdout = 1;
        return 0;
    }

    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "is a directory");
            errno = EISDIR;
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            out->fp = fopen(path, "wb");
            if (out->fp == NULL) {
                snprintf(err, errlen, "%s", strerror(errno));
                return -1;
            }
            out->direct = 1;
            return 0;
        }
    }

    /* Temporary file in the target's own folder, so the rename is atomic. */
    const char *slash = strrchr(path, '/');
    size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = dirlen + strlen(base) + 16;
    out->tmp_path = malloc(n);
    out->final_path = strdup(path);
    if (out->tmp_path == NULL || out->final_path == NULL) {
        clear(out);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return -1;
    }
    if (open_unnamed(out, path, dirlen) == 0) {
        free(out->tmp_path);
        out->tmp_path = NULL;
        return 0;
    }
    snprintf(out->tmp_path, n, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
    int fd = mkstemp(out->tmp_path);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s", strerror(e));
        clear(out);
        errno = e;
        return -1;
    }
    /* mkstemp makes the file 0600; give it the permissions open() would. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    out->fp = fdopen(fd, "wb");
    if (out->fp == NULL) {
        int e = errno;
        close(fd);
        unlink(out->tmp_path);
        snprintf(err, errlen, "%s", strerror(e));
        clear(out);
        errno = e;
        return -1;
    }
    return 0;
}

int ih_output_close(ih_output_file *out, char *err, size_t errlen)
{
    if (out->fp == NULL || out->flushed) {
        return 0; /* closed already */
    }
    if (out->is_stdout) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        out->fp = NULL;
        if (bad) {
            snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
            return -1;
        }
        return 0;
    }
    int bad = ferror(out->fp);
    int e = errno;
    if (fflush(out->fp) != 0) {
        bad = 1;
        e = errno;
    }
    /* On the disk before the rename puts it in place: after a crash the
     * target is the old file or the whole new one, never an empty one.
     * (EINVAL: a file system or device that cannot sync has nothing to.) */
    const int temporary = out->tmp_path != NULL || out->anon;
    if (!bad && ih_output_sync && temporary && fsync(fileno(out->fp)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
    }
    if (out->anon && !bad) {
        out->flushed = 1; /* the file stays open: ih_output_commit links it in */
        return 0;
    }
    if (fclose(out->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    out->fp = NULL;
    if (bad) {
        snprintf(err, errlen, "%s", strerror(e ? e : EIO));
        ih_output_abort(out);
        return -1;
    }
    return 0;
}

int ih_output_commit(ih_output_file *out, char *err, size_t errlen)
{
    if (out->direct && out->fp == NULL) {
        clear(out); /* written and closed: nothing to put in place */
        return 0;
    }
    if (out->fp == NULL && out->tmp_path == NULL && !out->is_stdout) {
        snprintf(err, errlen, "output is not open");
        return -1;
    }
    if (ih_output_close(out, err, errlen) != 0) {
        return -1;
    }
    if (out->anon) {
        return link_in(out, err, errlen);
    }
    if (out->tmp_path != NULL && rename(out->tmp_path, out->final_path) != 0) {
        snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
        ih_output_abort(out);
        return -1;
    }
    clear(out);
    return 0;
}

void ih_output_abort(ih_output_file *out)
{
    if (out->fp != NULL && !out->is_stdout) {
        fclose(out->fp);
    }
    if (out->tmp_path != NULL) {
        unlink(out->tmp_path);
    }
    clear(out);
}
