/* What the CLI prints: summary statistics, a text picture, CSV, JSON. */
#ifndef IMGHIST_CLI_REPORT_H
#define IMGHIST_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "imghist.h"

/* The 8-bit histogram of the default mode: one bin per value. */
#define IH_CLI_BINS 256

/*
 * A histogram as the CLI measured it: `channels` blocks of bins + 3 counters
 * (the bins, then below, above, nan), with the binning that made it.
 */
typedef struct ih_hist_out {
    uint32_t bins, channels;
    double lo, hi;         /* bin i covers [lo + i w, lo + (i+1) w), w = (hi - lo) / bins */
    int closed;            /* hi is in the last bin */
    int natural;           /* one bin per integer level: edges and statistics exact */
    int has_data_range;    /* data_min/max hold the exact finite extremes */
    uint32_t levels_max;   /* integer samples: the largest value (255, 65535); 0: float */
    double data_min, data_max;
    uint64_t *counts;      /* malloc'd, channels * (bins + 3) */
    const char *names;     /* channel names, one letter each: "l" gray, "la", "rgb", "rgba" */
} ih_hist_out;

/* Counters per channel. */
static inline size_t ih_hist_stride(const ih_hist_out *h)
{
    return (size_t)h->bins + 3;
}

void ih_hist_out_free(ih_hist_out *h);
/* A deep copy (counts duplicated); -1 when out of memory. */
int ih_hist_out_copy(ih_hist_out *dst, const ih_hist_out *src);
/* The edge e(i) as the library computes it. */
double ih_hist_edge(const ih_hist_out *h, uint32_t i);

/* The percentiles the summary and the JSON report. */
#define IH_N_PERCENTILES 5
extern const int ih_percentiles[IH_N_PERCENTILES]; /* 1, 5, 50, 95, 99 */

typedef struct ih_stats {
    uint64_t count;      /* samples in the bins */
    uint64_t below, above, nan;
    double min, max, median, mean, stddev;
    double entropy;                    /* bits, over the bins */
    double percentile[IH_N_PERCENTILES]; /* imghist_percentile's bins' values */
    double otsu;                       /* imghist_otsu's bin's value */
    int exact;           /* from levels, not from bin midpoints */
} ih_stats;

/* Statistics of channel c; -1 when it has no sample in a bin. */
int ih_stats_of(const ih_hist_out *h, uint32_t c, ih_stats *st);

/* A number as the shortest decimal that reads back as the same double. */
void ih_format_number(char *buf, size_t len, double v);

/* CSV: bin,lower,upper,count (or one column per channel). 0, or -1 on a
 * stream error. */
int ih_write_csv(FILE *fp, const ih_hist_out *h);
/* One string as a JSON string and as a CSV field, escaped as the other
 * outputs escape file names. */
void ih_write_json_string(FILE *fp, const char *s);
void ih_write_csv_field(FILE *fp, const char *s);
/* Batch CSV: the header, then one row per bin (per channel with --channels)
 * with the file name first (quoted when it needs to be). */
void ih_write_csv_header_with_file(FILE *fp, int channels);
int ih_write_csv_rows_with_file(FILE *fp, const char *file, const ih_hist_out *h, int channels);
/* One JSON Lines object. Returns 0 or -1. */
int ih_write_json_line(FILE *fp, const char *file, uint32_t width, uint32_t height,
                       const ih_hist_out *h);
/* The summary: size, statistics, outliers and a picture of each channel. */
void ih_print_summary(FILE *fp, const char *name, uint32_t width, uint32_t height,
                      const ih_hist_out *h);
/* A picture `rows` lines high, 64 columns. */
void ih_print_picture(FILE *fp, const ih_hist_out *h, uint32_t c, int rows);

#endif
