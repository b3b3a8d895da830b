#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "signals.h"

void ih_hist_out_free(ih_hist_out *h)
{
    free(h->counts);
    h->counts = NULL;
}

int ih_hist_out_copy(ih_hist_out *dst, const ih_hist_out *src)
{
    *dst = *src;
    const size_t n = ih_hist_stride(src) * src->channels;
    dst->counts = malloc(n * sizeof *dst->counts);
    if (dst->counts == NULL) {
        return -1;
    }
    memcpy(dst->counts, src->counts, n * sizeof *dst->counts);
    return 0;
}

double ih_hist_edge(const ih_hist_out *h, uint32_t i)
{
    if (i >= h->bins) {
        return h->hi;
    }
    const double w = (h->hi - h->lo) / h->bins;
    volatile double step = (double)i * w; /* as the library: no fused multiply-add */
    return h->lo + step;
}

void ih_format_number(char *buf, size_t len, double v)
{
    if (v == 0.0) {
        snprintf(buf, len, "0"); /* not "-0" */
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, len, "%.0f", v); /* whole numbers as such: 4096, not 4.096e+03 */
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) {
            return;
        }
    }
}

/* Where a bin's samples are taken to be for statistics: the level itself
 * when bins are levels, else the bin's midpoint. */
static double bin_value(const ih_hist_out *h, uint32_t i)
{
    if (h->natural) {
        return h->lo + i;
    }
    return 0.5 * (ih_hist_edge(h, i) + ih_hist_edge(h, i + 1));
}

const int ih_percentiles[IH_N_PERCENTILES] = {1, 5, 50, 95, 99};

/* Entropy, percentiles and Otsu's threshold through the library's calls;
 * values as bin_value gives them. */
static void shape_stats(const ih_hist_out *h, const uint64_t *hist, ih_stats *st)
{
    size_t b = 0;
    (void)imghist_entropy(hist, h->bins, &st->entropy);
    for (int k = 0; k < IH_N_PERCENTILES; k++) {
        (void)imghist_percentile(hist, h->bins, ih_percentiles[k], &b);
        st->percentile[k] = bin_value(h, (uint32_t)b);
    }
    (void)imghist_otsu(hist, h->bins, &b);
    st->otsu = bin_value(h, (uint32_t)b);
}

int ih_stats_of(const ih_hist_out *h, uint32_t c, ih_stats *st)
{
    const uint64_t *hist = h->counts + (size_t)c * ih_hist_stride(h);
    uint64_t n = 0;
    long double sum = 0;
    int64_t first = -1, last = -1;
    for (uint32_t b = 0; b < h->bins; b++) {
        if (hist[b] == 0) {
            continue;
        }
        if (first < 0) {
            first = b;
        }
        last = b;
        n += hist[b];
        sum += (long double)hist[b] * bin_value(h, b);
    }
    memset(st, 0, sizeof *st);
    st->below = hist[h->bins];
    st->above = hist[h->bins + 1];
    st->nan = hist[h->bins + 2];
    if (n == 0) {
        return -1;
    }
    const long double mean = sum / (long double)n;
    long double var = 0;
    uint64_t cum = 0;
    const uint64_t half = (n + 1) / 2; /* the lower median's rank */
    int64_t median = -1;
    for (uint32_t b = 0; b < h->bins; b++) {
        const long double d = bin_value(h, b) - mean;
        var += (long double)hist[b] * d * d;
        cum += hist[b];
        if (median < 0 && cum >= half) {
            median = b;
        }
    }
    st->count = n;
    st->exact = h->natural;
    /* The extremes: exact from the data when it was looked at, else the
     * first and last non-empty bins' values. */
    if (h->has_data_range && h->channels == 1 && st->below == 0 && st->above == 0) {
        st->min = h->data_min;
        st->max = h->data_max;
    } else {
        st->min = h->natural ? bin_value(h, (uint32_t)first) : ih_hist_edge(h, (uint32_t)first);
        st->max = h->natural ? bin_value(h, (uint32_t)last) : ih_hist_edge(h, (uint32_t)last + 1);
    }
    st->median = bin_value(h, (uint32_t)median);
    st->mean = (double)mean;
    st->stddev = sqrt((double)(var / (long double)n));
    shape_stats(h, hist, st);
    return 0;
}

static const char *channel_name(const ih_hist_out *h, uint32_t c)
{
    switch (h->names[c]) {
    case 'r': return "r";
    case 'g': return "g";
    case 'b': return "b";
    case 'a': return "a";
    default: return "gray";
    }
}

/* lower,upper of bin b. */
static void write_edges(FILE *fp, const ih_hist_out *h, uint32_t b)
{
    char lo[40], hi[40];
    ih_format_number(lo, sizeof lo, ih_hist_edge(h, b));
    ih_format_number(hi, sizeof hi, ih_hist_edge(h, b + 1));
    fprintf(fp, "%u,%s,%s", b, lo, hi);
}

/* SIGINT or SIGTERM during a long write (millions of bins): the write
 * stops, with errno EINTR for the caller's message. */
static int stopped(void)
{
    if (ih_stop_signal() == 0) {
        return 0;
    }
    errno = EINTR;
    return 1;
}

int ih_write_csv(FILE *fp, const ih_hist_out *h)
{
    fputs("bin,lower,upper", fp);
    if (h->channels == 1) {
        fputs(",count", fp);
    } else {
        for (uint32_t c = 0; c < h->channels; c++) {
            fprintf(fp, ",%s", channel_name(h, c));
        }
    }
    fputc('\n', fp);
    const size_t stride = ih_hist_stride(h);
    for (uint32_t b = 0; b < h->bins; b++) {
        if ((b & 0xffffu) == 0 && stopped()) {
            return -1;
        }
        write_edges(fp, h, b);
        for (uint32_t c = 0; c < h->channels; c++) {
            fprintf(fp, ",%llu", (unsigned long long)h->counts[c * stride + b]);
        }
        fputc('\n', fp);
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

void ih_write_csv_header_with_file(FILE *fp, int channels)
{
    fputs(channels ? "file,channel,bin,lower,upper,count\n" : "file,bin,lower,upper,count\n", fp);
}

int ih_write_csv_rows_with_file(FILE *fp, const char *file, const ih_hist_out *h, int channels)
{
    const size_t stride = ih_hist_stride(h);
    for (uint32_t c = 0; c < h->channels; c++) {
        for (uint32_t b = 0; b < h->bins; b++) {
            csv_field(fp, file);
            if (channels) {
                fprintf(fp, ",%s", channel_name(h, c));
            }
            fputc(',', fp);
            write_edges(fp, h, b);
            fprintf(fp, ",%llu\n", (unsigned long long)h->counts[c * stride + b]);
        }
    }
    return ferror(fp) ? -1 : 0;
}

/* A JSON string: quotes, backslashes and control characters escaped, UTF-8
 * as it is. A file name is bytes: a byte that starts no well-formed UTF-8
 * sequence is written \udcXX (XX the byte), Python's surrogateescape, so
 * that the line is valid UTF-8 and os.fsencode(name) gives the bytes back. */
static void json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    while (*s != '\0') {
        const unsigned char c = (unsigned char)*s;
        const size_t n = ih_utf8_len(s);
        if (c == '"' || c == '\\') {
            fputc('\\', fp);
            fputc(c, fp);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(fp, "\\u%04x", c);
        } else if (n == 0) {
            fprintf(fp, "\\udc%02x", c);
        } else {
            fwrite(s, 1, n, fp);
            s += n;
            continue;
        }
        s++;
    }
    fputc('"', fp);
}

/* "min": .., ..., "nan": .. of one channel (null statistics when empty). */
static void json_stats(FILE *fp, const ih_hist_out *h, uint32_t c)
{
    ih_stats st;
    char a[40], b[40], m[40];
    if (ih_stats_of(h, c, &st) == 0) {
        ih_format_number(a, sizeof a, st.min);
        ih_format_number(b, sizeof b, st.max);
        ih_format_number(m, sizeof m, st.median);
        fprintf(fp, "\"min\": %s, \"max\": %s, \"mean\": %.6f, \"median\": %s, \"std\": %.6f", a,
                b, st.mean, m, st.stddev);
        fprintf(fp, ", \"entropy\": %.6f, \"percentiles\": {", st.entropy);
        for (int k = 0; k < IH_N_PERCENTILES; k++) {
            ih_format_number(m, sizeof m, st.percentile[k]);
            fprintf(fp, k ? ", \"%d\": %s" : "\"%d\": %s", ih_percentiles[k], m);
        }
        ih_format_number(m, sizeof m, st.otsu);
        fprintf(fp, "}, \"otsu\": %s", m);
    } else {
        fputs("\"min\": null, \"max\": null, \"mean\": null, \"median\": null, \"std\": null, "
              "\"entropy\": null, \"percentiles\": null, \"otsu\": null",
              fp);
    }
    fprintf(fp, ", \"below\": %llu, \"above\": %llu, \"nan\": %llu",
            (unsigned long long)st.below, (unsigned long long)st.above,
            (unsigned long long)st.nan);
}

static void json_counts(FILE *fp, const ih_hist_out *h, uint32_t c)
{
    const uint64_t *hist = h->counts + (size_t)c * ih_hist_stride(h);
    fputc('[', fp);
    for (uint32_t b = 0; b < h->bins; b++) {
        if ((b & 0xffffu) == 0 && stopped()) {
            return; /* the caller's output is abandoned */
        }
        fprintf(fp, b ? ", %llu" : "%llu", (unsigned long long)hist[b]);
    }
    fputc(']', fp);
}

int ih_write_json_line(FILE *fp, const char *file, uint32_t width, uint32_t height,
                       const ih_hist_out *h)
{
    char lo[40], hi[40];
    ih_format_number(lo, sizeof lo, h->lo);
    ih_format_number(hi, sizeof hi, h->hi);
    fputs("{\"file\": ", fp);
    json_string(fp, file);
    fprintf(fp, ", \"width\": %u, \"height\": %u, ", width, height);
    if (h->channels == 1) {
        json_stats(fp, h, 0);
        fprintf(fp, ", \"bins\": %u, \"range\": [%s, %s], \"histogram\": ", h->bins, lo, hi);
        json_counts(fp, h, 0);
    } else {
        fprintf(fp, "\"bins\": %u, \"range\": [%s, %s], \"channels\": {", h->bins, lo, hi);
        for (uint32_t c = 0; c < h->channels; c++) {
            fprintf(fp, c ? ", \"%s\": {" : "\"%s\": {", channel_name(h, c));
            json_stats(fp, h, c);
            fputs(", \"histogram\": ", fp);
            json_counts(fp, h, c);
            fputc('}', fp);
        }
        fputc('}', fp);
    }
    fputs("}\n", fp);
    return ferror(fp) || stopped() ? -1 : 0;
}

/* The integers of an integer image's bins that hold its min and max: the
 * bins' edges may be values no sample can take (256 for an 8-bit image). */
static void integer_extreme(char *buf, size_t len, const ih_hist_out *h, double lower,
                            double upper, int upper_closed)
{
    double a = ceil(lower), b = upper_closed ? floor(upper) : ceil(upper) - 1;
    a = a < 0 ? 0 : a;
    b = b > h->levels_max ? h->levels_max : b;
    if (b <= a) {
        snprintf(buf, len, "%.0f", a);
    } else {
        snprintf(buf, len, "%.0f..%.0f", a, b);
    }
}

/* The extremes of a binned summary: the bins' edges, or for an integer
 * image the values in the first and last non-empty bins. */
static void binned_extremes(const ih_hist_out *h, uint32_t c, const ih_stats *st, char *lo,
                            char *hi, size_t len)
{
    if (h->levels_max == 0 || h->has_data_range) {
        ih_format_number(lo, len, st->min);
        ih_format_number(hi, len, st->max);
        return;
    }
    const uint64_t *hist = h->counts + (size_t)c * ih_hist_stride(h);
    uint32_t first = 0, last = 0;
    for (uint32_t b = 0; b < h->bins; b++) {
        if (hist[b] != 0) {
            last = b;
        }
    }
    while (first < h->bins && hist[first] == 0) {
        first++;
    }
    integer_extreme(lo, len, h, ih_hist_edge(h, first), ih_hist_edge(h, first + 1),
                    h->closed && first + 1 == h->bins);
    integer_extreme(hi, len, h, ih_hist_edge(h, last), ih_hist_edge(h, last + 1),
                    h->closed && last + 1 == h->bins);
}

void ih_print_summary(FILE *fp, const char *name, uint32_t width, uint32_t height,
                      const ih_hist_out *h)
{
    /* Every pixel is counted once (in a bin, or below, above, NaN) unless a
     * mask left some out. */
    uint64_t counted = 0;
    for (size_t b = 0; b < ih_hist_stride(h); b++) {
        counted += h->counts[b];
    }
    const unsigned long long all = (unsigned long long)width * height;
    if (counted != all) {
        fprintf(fp, "%s: %ux%u, %llu of %llu pixels under the mask\n", name, width, height,
                (unsigned long long)counted, all);
    } else {
        fprintf(fp, "%s: %ux%u, %llu pixels\n", name, width, height, all);
    }
    if (!h->natural) {
        char lo[40], hi[40];
        ih_format_number(lo, sizeof lo, h->lo);
        ih_format_number(hi, sizeof hi, h->hi);
        fprintf(fp, "%u bins over [%s, %s%c\n", h->bins, lo, hi, h->closed ? ']' : ')');
    }
    for (uint32_t c = 0; c < h->channels; c++) {
        ih_stats st;
        const int empty = ih_stats_of(h, c, &st) != 0;
        if (h->channels > 1) {
            fprintf(fp, "%s: ", channel_name(h, c));
        }
        if (empty) {
            fputs("no sample in the bins\n", fp);
        } else if (st.exact) {
            fprintf(fp, "min %.0f  max %.0f  mean %.2f  median %.0f  stddev %.2f\n", st.min,
                    st.max, st.mean, st.median, st.stddev);
        } else {
            char a[48], b[48];
            binned_extremes(h, c, &st, a, b, sizeof a);
            fprintf(fp, "min %s  max %s  mean %.6g  median %.6g  stddev %.6g (from bin midpoints)\n",
                    a, b, st.mean, st.median, st.stddev);
        }
        if (!empty) {
            char v[40];
            fprintf(fp, "entropy %.4f bits  otsu ", st.entropy);
            ih_format_number(v, sizeof v, st.otsu);
            fputs(v, fp);
            fputs("  percentiles", fp);
            for (int k = 0; k < IH_N_PERCENTILES; k++) {
                ih_format_number(v, sizeof v, st.percentile[k]);
                fprintf(fp, " %d%%: %s", ih_percentiles[k], v);
            }
            fputc('\n', fp);
        }
        if (st.below || st.above || st.nan) {
            fprintf(fp, "outside the bins: %llu below, %llu above, %llu NaN\n",
                    (unsigned long long)st.below, (unsigned long long)st.above,
                    (unsigned long long)st.nan);
        }
        if (!empty) {
            ih_print_picture(fp, h, c, 8);
        }
    }
}

void ih_print_picture(FILE *fp, const ih_hist_out *h, uint32_t ch, int rows)
{
    enum { COLS = 64 };
    const uint64_t *hist = h->counts + (size_t)ch * ih_hist_stride(h);
    uint64_t col[COLS] = {0}, top = 0;
    /* Column c sums the bins whose index scaled to 64 columns is c. */
    for (uint32_t b = 0; b < h->bins; b++) {
        col[(uint64_t)b * COLS / h->bins] += hist[b];
    }
    for (int c = 0; c < COLS; c++) {
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
            const uint64_t height = top ? (col[c] * (uint64_t)rows * 8 + top - 1) / top : 0;
            const uint64_t floor_r = (uint64_t)(r - 1) * 8;
            char chr = ' ';
            if (height >= floor_r + 8) {
                chr = '#';
            } else if (height > floor_r + 4) {
                chr = '+';
            } else if (height > floor_r) {
                chr = '.';
            }
            line[1 + c] = chr;
        }
        line[COLS + 1] = '|';
        line[COLS + 2] = '\0';
        fprintf(fp, "%s\n", line);
    }
    fprintf(fp, "+%.*s+\n", COLS,
            "----------------------------------------------------------------");
    char lo[40], mid[40], hi[40];
    if (h->natural) { /* the levels: 0, 128, 255 for 8-bit */
        ih_format_number(lo, sizeof lo, h->lo);
        ih_format_number(mid, sizeof mid, h->lo + (h->hi - h->lo) / 2);
        ih_format_number(hi, sizeof hi, h->hi - 1);
    } else {
        snprintf(lo, sizeof lo, "%.4g", h->lo);
        snprintf(mid, sizeof mid, "%.4g", h->lo + (h->hi - h->lo) / 2);
        snprintf(hi, sizeof hi, "%.4g", h->hi);
    }
    const int left = COLS / 2 + 1 - (int)strlen(lo);
    fprintf(fp, "%s%*s%*s\n", lo, left > 0 ? left : 1, mid, COLS / 2 - 1, hi);
}

void ih_write_json_string(FILE *fp, const char *s)
{
    json_string(fp, s);
}

void ih_write_csv_field(FILE *fp, const char *s)
{
    csv_field(fp, s);
}
