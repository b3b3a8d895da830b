/*
 * A main() for a fuzz target without libFuzzer: feeds every regular file of
 * each folder given on the command line (not recursively; files named
 * README.md and names starting with '.' are skipped), or each file given, to
 * LLVMFuzzerTestOneInput, in name order. This makes every target a plain
 * program that a test can run over the seed corpus and the saved crashers.
 *
 * usage: replay_xxx [-v] PATH...
 * Exits 0 after "replayed N files", 1 when a path is missing or unreadable or
 * when no file at all was replayed (so a test cannot pass vacuously), and a
 * target's broken invariant ends the program with a trap (SIGILL).
 * Arguments starting with '-' other than -v are ignored (libFuzzer flags).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int verbose = 0;

/* Returns 0 and runs the file, or -1 after printing why not. */
static int replay_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fprintf(stderr, "replay: %s: out of memory\n", path);
            fclose(fp);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, fp);
        if (len < cap) {
            break;
        }
        uint8_t *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* An exactly-sized copy, so that a sanitizer sees reads past the end. */
    uint8_t *exact = malloc(len > 0 ? len : 1);
    if (exact == NULL) {
        free(buf);
        fprintf(stderr, "replay: %s: out of memory\n", path);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    if (verbose) {
        fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    }
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int skipped_name(const char *name)
{
    return name[0] == '.' || strcmp(name, "README.md") == 0;
}

/* Replays a folder's regular files; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (skipped_name(e->d_name)) {
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **bigger = realloc(names, cap * sizeof *names);
            if (bigger == NULL) {
                fprintf(stderr, "replay: out of memory\n");
                exit(1);
            }
            names = bigger;
        }
        size_t len = strlen(dir) + 1 + strlen(e->d_name) + 1;
        names[n] = malloc(len);
        if (names[n] == NULL) {
            fprintf(stderr, "replay: out of memory\n");
            exit(1);
        }
        snprintf(names[n], len, "%s/%s", dir, e->d_name);
        n++;
    }
    closedir(d);
    if (n > 0) {
        qsort(names, n, sizeof *names, by_name);
    }
    long count = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) != 0) {
                count = -1;
            } else if (count >= 0) {
                count++;
            }
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    long total = 0;
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        const char *path = argv[i];
        if (strcmp(path, "-v") == 0) {
            verbose = 1;
            continue;
        }
        if (path[0] == '-') {
            continue;
        }
        struct stat st;
        if (stat(path, &st) != 0) {
            fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
            failed = 1;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            long n = replay_dir(path);
            if (n < 0) {
                failed = 1;
            } else {
                printf("%s: %ld files\n", path, n);
                total += n;
            }
        } else if (replay_file(path) == 0) {
            total++;
        } else {
            failed = 1;
        }
    }
    printf("replayed %ld files\n", total);
    if (total == 0) {
        fprintf(stderr, "replay: no input files: give a non-empty folder or a file\n");
        return 1;
    }
    return failed ? 1 : 0;
}
