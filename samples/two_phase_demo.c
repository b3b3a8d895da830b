/*
 * two_phase_demo: the two-phase histogram, small enough to read.
 *
 * Phase 1 gives each simulated block its share of the data and counts it into
 * a local histogram (here with imghist itself, on whatever backend it picks);
 * phase 2 merges the local histograms into the global one.
 *
 *   two_phase_demo                      the classic 12 values, 4 bins, 2 blocks
 *   two_phase_demo [-b BLOCKS] [-n BINS] [VALUE ...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imghist.h"

static const int default_values[] = {2, 0, 1, 2, 3, 1, 0, 2, 3, 3, 0, 1};

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
        return -1;
    }
    *out = (int)v;
    return 0;
}

static void print_list(const uint8_t *v, int n, const char *sep)
{
    putchar('[');
    for (int i = 0; i < n; i++) {
        printf("%s%d", i ? sep : "", v[i]);
    }
    putchar(']');
}

int main(int argc, char **argv)
{
    int blocks = 2, bins = 4, n = 0;
    uint8_t *data = malloc((size_t)argc + sizeof default_values / sizeof default_values[0]);
    if (data == NULL) {
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-b") == 0 || strcmp(argv[i], "-n") == 0) && i + 1 < argc) {
            const int is_blocks = argv[i][1] == 'b';
            if (parse_int(argv[i + 1], 1, is_blocks ? 1024 : 256, is_blocks ? &blocks : &bins)) {
                fprintf(stderr, "two_phase_demo: bad value for %s: %s\n", argv[i], argv[i + 1]);
                return 2;
            }
            i++;
        } else {
            int v;
            if (parse_int(argv[i], 0, 255, &v) != 0) {
                fprintf(stderr, "two_phase_demo: values are whole numbers 0..255, not '%s'\n",
                        argv[i]);
                return 2;
            }
            data[n++] = (uint8_t)v;
        }
    }
    if (n == 0) {
        n = (int)(sizeof default_values / sizeof default_values[0]);
        for (int i = 0; i < n; i++) {
            data[i] = (uint8_t)default_values[i];
        }
    }
    for (int i = 0; i < n; i++) {
        if (data[i] >= bins) {
            fprintf(stderr, "two_phase_demo: value %d does not fit %d bins\n", data[i], bins);
            return 2;
        }
    }
    if (blocks > n) {
        blocks = n;
    }

    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx) != IMGHIST_OK) {
        fprintf(stderr, "two_phase_demo: %s\n", imghist_last_error(ctx));
        imghist_destroy(ctx);
        return 1;
    }

    printf("=== GPU Histogram (Two-Phase) ===\n");
    printf("Data: ");
    print_list(data, n, ", ");
    printf("\nBins: %d (values ", bins);
    for (int b = 0; b < bins; b++) {
        printf("%s%d", b ? "," : "", b);
    }
    printf(")\n");

    printf("--- Phase 1: Build local (per-simulated-block) histograms ---\n");
    uint64_t *global = calloc((size_t)bins, sizeof *global);
    int rc = global == NULL;
    for (int blk = 0; blk < blocks && rc == 0; blk++) {
        /* Block blk gets an even share; the first n % blocks get one more. */
        const int base = n / blocks, extra = n % blocks;
        const int start = blk * base + (blk < extra ? blk : extra);
        const int len = base + (blk < extra ? 1 : 0);
        /* The block's share as a one-row host image; imghist always counts
         * all 256 values, of which the demo shows the first `bins`. */
        uint64_t local[256];
        const imghist_view share = {.data = data + start, .dtype = IMGHIST_U8,
                                    .mem = IMGHIST_MEM_HOST, .width = (uint32_t)len,
                                    .height = 1, .pitch = (size_t)len};
        const imghist_counts counts = {.data = local, .len = 256, .mem = IMGHIST_MEM_HOST};
        if (imghist_histogram(ctx, &share, NULL, &counts) != IMGHIST_OK) {
            fprintf(stderr, "two_phase_demo: %s\n", imghist_last_error(ctx));
            rc = 1;
            break;
        }
        printf("Block %d processes ", blk);
        print_list(data + start, len, ",");
        printf(" -> local: [");
        for (int b = 0; b < bins; b++) {
            printf("%s%llu", b ? "," : "", (unsigned long long)local[b]);
            global[b] += local[b]; /* phase 2, done as each block finishes */
        }
        printf("]\n");
    }
    if (rc == 0) {
        printf("--- Phase 2: Merge into global histogram ---\n");
        printf("Global histogram:\n");
        uint64_t total = 0;
        for (int b = 0; b < bins; b++) {
            printf("Bin %d: %llu\n", b, (unsigned long long)global[b]);
            total += global[b];
        }
        printf("Verification: ");
        for (int b = 0; b < bins; b++) {
            printf("%s%llu", b ? "+" : "", (unsigned long long)global[b]);
        }
        printf(" = %llu (%s input size)\n", (unsigned long long)total,
               total == (uint64_t)n ? "matches" : "DOES NOT MATCH");
        rc = total == (uint64_t)n ? 0 : 1;
    }
    free(global);
    free(data);
    imghist_destroy(ctx);
    return rc;
}
