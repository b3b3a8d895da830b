/*
 * Statistics of a histogram on the host (imghist.h): Shannon entropy,
 * percentiles by the inverted empirical CDF, and Otsu's threshold computed
 * as OpenCV's THRESH_OTSU computes it for 8-bit images.
 */
#include <float.h>
#include <math.h>

#include "core.h"

/* The sum of hist[0..bins); 0 when hist is NULL or bins is 0. */
static uint64_t total_of(const uint64_t *hist, size_t bins)
{
    uint64_t n = 0;
    for (size_t b = 0; hist != NULL && b < bins; b++) {
        n += hist[b];
    }
    return n;
}

imghist_status imghist_entropy(const uint64_t *hist, size_t bins, double *bits)
{
    const uint64_t n = total_of(hist, bins);
    if (n == 0 || bits == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    /* H = log2(n) - sum(c log2 c) / n, summed in long double. */
    long double s = 0;
    for (size_t b = 0; b < bins; b++) {
        if (hist[b] != 0) {
            s += (long double)hist[b] * log2l((long double)hist[b]);
        }
    }
    const double h = (double)(log2l((long double)n) - s / (long double)n);
    *bits = h > 0 ? h : 0.0; /* -0 and rounding below 0 for one full bin */
    return IMGHIST_OK;
}

imghist_status imghist_percentile(const uint64_t *hist, size_t bins, double p, size_t *bin)
{
    const uint64_t n = total_of(hist, bins);
    if (n == 0 || bin == NULL || !(p >= 0.0 && p <= 100.0)) {
        return IMGHIST_E_INVALID_ARG;
    }
    /* NumPy's method="inverted_cdf": the k-th smallest sample with
     * k = ceil(n * (p / 100)), at least 1, in double precision as NumPy
     * computes it. */
    double k = ceil((double)n * (p / 100.0));
    if (k < 1.0) {
        k = 1.0;
    }
    const uint64_t rank = k >= (double)n ? n : (uint64_t)k;
    uint64_t cum = 0;
    for (size_t b = 0; b < bins; b++) {
        cum += hist[b];
        if (cum >= rank) {
            *bin = b;
            return IMGHIST_OK;
        }
    }
    *bin = bins - 1; /* not reached: cum ends at n >= rank */
    return IMGHIST_OK;
}

imghist_status imghist_otsu(const uint64_t *hist, size_t bins, size_t *bin)
{
    const uint64_t n = total_of(hist, bins);
    if (n == 0 || bin == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    /* OpenCV's sequence of double operations: the mean from the bin indices,
     * then one pass carrying the lower class's weight w and mean m; bins
     * where either class weighs less than FLT_EPSILON are passed over (the
     * running mean is still rescaled there), and only a strictly larger
     * between-class variance moves the threshold. */
    const double scale = 1.0 / (double)n;
    double mean = 0;
    for (size_t b = 0; b < bins; b++) {
        mean += (double)b * (double)hist[b];
    }
    mean *= scale;
    double w = 0, m = 0, best = 0;
    size_t at = 0;
    for (size_t b = 0; b < bins; b++) {
        const double p = (double)hist[b] * scale;
        m *= w;
        w += p;
        const double w2 = 1.0 - w;
        if (fmin(w, w2) < FLT_EPSILON || fmax(w, w2) > 1.0 - FLT_EPSILON) {
            continue;
        }
        m = (m + (double)b * p) / w;
        const double m2 = (mean - w * m) / w2;
        const double between = w * w2 * (m - m2) * (m - m2);
        if (between > best) {
            best = between;
            at = b;
        }
    }
    *bin = at;
    return IMGHIST_OK;
}
