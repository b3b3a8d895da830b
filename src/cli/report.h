/* What the CLI prints: summary statistics, a text picture, CSV. */
#ifndef IMGHIST_CLI_REPORT_H
#define IMGHIST_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "imghist.h"

/* The CLI reports 8-bit histograms: one bin per value. */
#define IH_CLI_BINS 256

typedef struct ih_stats {
    uint64_t count;
    int min, max, median; /* median: the lower median, a pixel value */
    double mean, stddev;  /* population standard deviation */
} ih_stats;

/* Returns -1 for an empty histogram. */
int ih_stats_from_hist(const uint64_t hist[IH_CLI_BINS], ih_stats *st);
/* Writes the CSV; returns 0 or -1 if the stream reports an error. */
int ih_write_csv(FILE *fp, const uint64_t hist[IH_CLI_BINS]);
/* Batch CSV: the header, then 256 rows per image, the file name first
 * (quoted when it needs to be). */
void ih_write_csv_header_with_file(FILE *fp);
int ih_write_csv_rows_with_file(FILE *fp, const char *file, const uint64_t hist[IH_CLI_BINS]);
/* One JSON Lines object: file, width, height, min, max, mean, median, std
 * (population), histogram. Returns 0 or -1. */
int ih_write_json_line(FILE *fp, const char *file, uint32_t width, uint32_t height,
                       const uint64_t hist[IH_CLI_BINS]);
/* A picture `rows` lines high, 64 columns of 4 bins each. */
void ih_print_picture(FILE *fp, const uint64_t hist[IH_CLI_BINS], int rows);

#endif
