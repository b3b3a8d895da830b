#include "report.h"

#include <math.h>
#include <string.h>

int ih_stats_from_hist(const uint64_t hist[IH_CLI_BINS], ih_stats *st)
{
    uint64_t n = 0;
    long double sum = 0;
    int min = -1, max = -1;
    for (int b = 0; b < IH_CLI_BINS; b++) {
        if (hist[b] == 0) {
            continue;
        }
        if (min < 0) {
            min = b;
        }
        max = b;
        n += hist[b];
        sum += (long double)hist[b] * b;
    }
    if (n == 0) {
        return -1;
    }
    const long double mean = sum / (long double)n;
    long double var = 0;
    uint64_t cum = 0;
    const uint64_t half = (n + 1) / 2; /* the lower median's rank */
    int median = -1;
    for (int b = 0; b < IH_CLI_BINS; b++) {
        const long double d = b - mean;
        var += (long double)hist[b] * d * d;
        cum += hist[b];
        if (median < 0 && cum >= half) {
            median = b;
        }
    }
    st->count = n;
    st->min = min;
    st->max = max;
    st->median = median;
    st->mean = (double)mean;
    st->stddev = sqrt((double)(var / (long double)n));
    return 0;
}

int ih_write_csv(FILE *fp, const uint64_t hist[IH_CLI_BINS])
{
    fputs("bin,lower,upper,count\n", fp);
    for (int b = 0; b < IH_CLI_BINS; b++) {
        fprintf(fp, "%d,%d,%d,%llu\n", b, b, b + 1, (unsigned long long)hist[b]);
    }
    return ferror(fp) ? -1 : 0;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *fp, const char *s)
{
    if (strpbrk(s, ",\"\r\n") == NULL) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (; *s != '\0'; s++) {
        if (*s == '"') {
            fputc('"', fp);
        }
        fputc(*s, fp);
    }
    fputc('"', fp);
}

void ih_write_csv_header_with_file(FILE *fp)
{
    fputs("file,bin,lower,upper,count\n", fp);
}

int ih_write_csv_rows_with_file(FILE *fp, const char *file, const uint64_t hist[IH_CLI_BINS])
{
    for (int b = 0; b < IH_CLI_BINS; b++) {
        csv_field(fp, file);
        fprintf(fp, ",%d,%d,%d,%llu\n", b, b, b + 1, (unsigned long long)hist[b]);
    }
    return ferror(fp) ? -1 : 0;
}

/* A JSON string: quotes, backslashes and control characters escaped; other
 * bytes as they are (file names are bytes; UTF-8 ones stay readable). */
static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s != '\0'; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fputc('\\', fp);
            fputc(c, fp);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(fp, "\\u%04x", c);
        } else {
            fputc(c, fp);
        }
    }
    fputc('"', fp);
}

int ih_write_json_line(FILE *fp, const char *file, uint32_t width, uint32_t height,
                       const uint64_t hist[IH_CLI_BINS])
{
    ih_stats st;
    if (ih_stats_from_hist(hist, &st) != 0) {
        return -1;
    }
    fputs("{\"file\": ", fp);
    json_string(fp, file);
    fprintf(fp,
            ", \"width\": %u, \"height\": %u, \"min\": %d, \"max\": %d, \"mean\": %.6f, "
            "\"median\": %d, \"std\": %.6f, \"histogram\": [",
            width, height, st.min, st.max, st.mean, st.median, st.stddev);
    for (int b = 0; b < IH_CLI_BINS; b++) {
        fprintf(fp, b ? ", %llu" : "%llu", (unsigned long long)hist[b]);
    }
    fputs("]}\n", fp);
    return ferror(fp) ? -1 : 0;
}

void ih_print_picture(FILE *fp, const uint64_t hist[IH_CLI_BINS], int rows)
{
    enum { COLS = 64, PER = IH_CLI_BINS / COLS };
    uint64_t col[COLS] = {0}, top = 0;
    for (int c = 0; c < COLS; c++) {
        for (int k = 0; k < PER; k++) {
            col[c] += hist[c * PER + k];
        }
        if (col[c] > top) {
            top = col[c];
        }
    }
    for (int r = rows; r >= 1; r--) {
        char line[COLS + 3];
        line[0] = '|';
        for (int c = 0; c < COLS; c++) {
            /* Column height in eighths of a row, rounded up so that any
             * non-empty column shows. */
            const uint64_t h = top ? (col[c] * (uint64_t)rows * 8 + top - 1) / top : 0;
            const uint64_t floor_r = (uint64_t)(r - 1) * 8;
            char ch = ' ';
            if (h >= floor_r + 8) {
                ch = '#';
            } else if (h > floor_r + 4) {
                ch = '+';
            } else if (h > floor_r) {
                ch = '.';
            }
            line[1 + c] = ch;
        }
        line[COLS + 1] = '|';
        line[COLS + 2] = '\0';
        fprintf(fp, "%s\n", line);
    }
    fprintf(fp, "+%.*s+\n", COLS, "----------------------------------------------------------------");
    fprintf(fp, "0%*s%*s\n", COLS / 2, "128", COLS / 2 - 1, "255");
}
