#define _POSIX_C_SOURCE 200809L
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
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
    if (out->fp == NULL) {
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
    if (!bad && ih_output_sync && out->tmp_path != NULL && fsync(fileno(out->fp)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
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
