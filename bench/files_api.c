/*
 * imghist_histogram_files on a folder, as a whole process (list, decode,
 * count), for the A/B against the CLI's batch run (files_api.sh).
 *
 *   files_api DIR THREADS [cpu|cuda]
 *
 * prints "N images, F failed, S s, R images/s" for the call alone, and
 * exits 1 when a file failed. Build against a build folder B:
 *   cc -O2 bench/files_api.c -IB/include -LB/src -limghist -Wl,-rpath,B/src -o files_api
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "imghist.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR THREADS [cpu|cuda]\n", argv[0]);
        return 2;
    }
    imghist_backend backend = IMGHIST_BACKEND_CPU;
    if (argc > 3 && imghist_backend_from_name(argv[3], &backend) != IMGHIST_OK) {
        fprintf(stderr, "%s: not a backend\n", argv[3]);
        return 2;
    }
    imghist_ctx *ctx = NULL;
    imghist_status st = imghist_create(backend, -1, &ctx);
    imghist_file_list *list = NULL;
    const char *inputs[] = {argv[1]};
    if (st == IMGHIST_OK) {
        st = imghist_list_files(ctx, inputs, 1, 0, &list);
    }
    if (st != IMGHIST_OK || list->count == 0) {
        fprintf(stderr, "%s\n", st != IMGHIST_OK ? imghist_last_error(ctx) : "no images");
        imghist_destroy(ctx);
        return 1;
    }
    const size_t n = list->count, len = imghist_files_counts_len(ctx, NULL);
    uint64_t *counts = malloc(n * len * sizeof *counts);
    imghist_file_result *res = malloc(n * sizeof *res);
    if (counts == NULL || res == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    const imghist_counts out = {counts, n * len, IMGHIST_MEM_HOST};
    const double t0 = now();
    st = imghist_histogram_files(ctx, (const char *const *)list->paths, n,
                                 (unsigned)atoi(argv[2]), NULL, &out, res, NULL, NULL);
    const double secs = now() - t0;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += res[i].status != IMGHIST_OK;
        imghist_free(res[i].message);
    }
    printf("%zu images, %zu failed, %.3f s, %.2f images/s\n", n, failed, secs, (double)n / secs);
    if (st != IMGHIST_OK) {
        fprintf(stderr, "%s\n", imghist_last_error(ctx));
    }
    free(counts);
    free(res);
    imghist_file_list_free(list);
    imghist_destroy(ctx);
    return st == IMGHIST_OK ? 0 : 1;
}
