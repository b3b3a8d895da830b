#define _GNU_SOURCE /* O_TMPFILE */
#include "output_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ih_output_sync = 1;

/*
 * Named temporaries are `.NAME.imghist-tmp.PID.HOST.SUFFIX`: the process
 * and machine that write them, so that a later run on the same machine can
 * tell one left by a process that no longer exists (killed, or stopped by
 * a crash) from one still being written, here or by another machine
 * sharing the folder. HOST keeps [A-Za-z0-9-] of the host name.
 */
#define TEMP_MARK "imghist-tmp"
/* A leftover younger than this is kept even when its process is gone: a
 * process of the same number in another PID namespace may still write it. */
#define STALE_AGE_S 60

/* This machine's tag ([A-Za-z0-9-] of the host name, at most 32), read
 * once a process. */
static char host[33];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void read_host(void)
{
    char name[256] = "";
    if (gethostname(name, sizeof name - 1) != 0) {
        name[0] = '\0';
    }
    size_t k = 0;
    for (const char *c = name; *c != '\0' && k < sizeof host - 1; c++) {
        const int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                       (*c >= '0' && *c <= '9') || *c == '-';
        host[k++] = ok ? *c : '-';
    }
    if (k == 0) {
        host[k++] = '-';
    }
    host[k] = '\0';
}

static const char *host_tag(void)
{
    pthread_once(&host_once, read_host);
    return host;
}

/* The temporary name of path (dirlen bytes of folder) with `suffix`, in a
 * new malloc'd string, or NULL when out of memory. */
static char *temp_name(const char *path, size_t dirlen, const char *suffix)
{
    const size_t n = strlen(path) + sizeof TEMP_MARK + sizeof host + strlen(suffix) + 32;
    char *name = malloc(n);
    if (name != NULL) {
        snprintf(name, n, "%.*s.%s." TEMP_MARK ".%ld.%s.%s", (int)dirlen, path, path + dirlen,
                 (long)getpid(), host_tag(), suffix);
    }
    return name;
}

/* Whether entry `name` of an open folder is a temporary of this machine's
 * whose process is gone, and old enough to remove. */
static int stale_temp(int dirfd, const char *name, const char *tag, time_t now)
{
    if (name[0] != '.') {
        return 0;
    }
    /* From the end: SUFFIX, HOST, PID, then the mark. */
    const char *dots[4];
    int found = 0;
    for (const char *c = name + strlen(name); c > name && found < 4; c--) {
        if (c[-1] == '.') {
            dots[found++] = c - 1;
        }
    }
    if (found < 4 || dots[3] == name) {
        return 0;
    }
    const char *mark = dots[3] + 1, *pid_at = dots[2] + 1, *host_at = dots[1] + 1;
    const size_t mark_len = (size_t)(dots[2] - mark), host_len = (size_t)(dots[0] - host_at);
    if (mark_len != strlen(TEMP_MARK) || memcmp(mark, TEMP_MARK, mark_len) != 0 ||
        host_len != strlen(tag) || memcmp(host_at, tag, host_len) != 0 || dots[0][1] == '\0') {
        return 0;
    }
    uint64_t pid = 0;
    const char *c = pid_at;
    for (; c < dots[1] && *c >= '0' && *c <= '9' && pid < INT32_MAX; c++) {
        pid = pid * 10 + (uint64_t)(*c - '0');
    }
    if (c != dots[1] || pid == 0 || pid > INT32_MAX || (pid_t)pid == getpid()) {
        return 0;
    }
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
        return 0; /* running, or not ours to know */
    }
    struct stat st;
    return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
           now - st.st_mtime >= STALE_AGE_S;
}

/* Removes the stale temporaries of folder dir (stale_temp). */
static void sweep(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return;
    }
    const time_t now = time(NULL);
    const int fd = dirfd(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (stale_temp(fd, e->d_name, host_tag(), now)) {
            (void)unlinkat(fd, e->d_name, 0);
        }
    }
    closedir(d);
}

/* The folders this process has swept, so that each is read once. */
static struct {
    pthread_mutex_t lock;
    char **slot; /* open addressing by FNV-1a; NULL: empty */
    size_t cap, used;
} swept = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static size_t hash_of(const char *s)
{
    uint64_t h = 14695981039346656037u;
    for (; *s != '\0'; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    }
    return (size_t)h;
}

/* Whether dir is new to the set, which then holds it (1: sweep it now). An
 * out-of-memory set sweeps again rather than never. */
static int first_visit(const char *dir)
{
    if (swept.used * 2 >= swept.cap) {
        const size_t cap = swept.cap ? swept.cap * 2 : 64;
        char **slot = calloc(cap, sizeof *slot);
        if (slot == NULL) {
            return 1;
        }
        for (size_t i = 0; i < swept.cap; i++) {
            if (swept.slot[i] != NULL) {
                size_t k = hash_of(swept.slot[i]) & (cap - 1);
                while (slot[k] != NULL) {
                    k = (k + 1) & (cap - 1);
                }
                slot[k] = swept.slot[i];
            }
        }
        free(swept.slot);
        swept.slot = slot;
        swept.cap = cap;
    }
    size_t k = hash_of(dir) & (swept.cap - 1);
    for (; swept.slot[k] != NULL; k = (k + 1) & (swept.cap - 1)) {
        if (strcmp(swept.slot[k], dir) == 0) {
            return 0;
        }
    }
    swept.slot[k] = strdup(dir);
    swept.used += swept.slot[k] != NULL;
    return 1;
}

/* Sweeps the folder of path (dirlen bytes of it) the first time this
 * process writes there. */
static void sweep_once(const char *path, size_t dirlen)
{
    char *dir = dirlen > 0 ? strndup(path, dirlen) : strdup(".");
    if (dir == NULL) {
        return;
    }
    pthread_mutex_lock(&swept.lock);
    const int first = first_visit(dir);
    pthread_mutex_unlock(&swept.lock);
    if (first) {
        sweep(dir);
    }
    free(dir);
}

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
        char *tmp = NULL;
        for (unsigned k = 0; k <= 1000; k++) {
            char suffix[16];
            snprintf(suffix, sizeof suffix, "%u", k);
            free(tmp);
            tmp = temp_name(path, dirlen, suffix);
            if (tmp == NULL) {
                errno = ENOMEM;
                rc = -1;
                break;
            }
            rc = linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW);
            if (rc == 0 || errno != EEXIST) {
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
    out->final_path = strdup(path);
    if (out->final_path != NULL) {
        sweep_once(path, dirlen);
        if (open_unnamed(out, path, dirlen) == 0) {
            return 0;
        }
        out->tmp_path = temp_name(path, dirlen, "XXXXXX");
    }
    if (out->tmp_path == NULL) {
        clear(out);
        snprintf(err, errlen, "out of memory");
        errno = ENOMEM;
        return -1;
    }
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
