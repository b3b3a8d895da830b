/*
 * Histogram matching (imghist.h): the lookup table that maps an 8-bit
 * image's levels onto a reference histogram as scikit-image's
 * match_histograms does for unsigned images, then rounds to a level.
 */
#include <math.h>

#include "core.h"

/*
 * np.interp(x, xp, fp) for increasing xp[0..n), as NumPy computes it
 * (numpy/core/src/multiarray/compiled_base.c): fp[0] left of xp[0], fp[n-1]
 * from xp[n-1] on, fp[j] at x == xp[j], else
 * slope * (x - xp[j]) + fp[j] with slope = (fp[j+1] - fp[j]) / (xp[j+1] - xp[j])
 * for xp[j] < x < xp[j+1]. ISO C: no fused multiply-add.
 */
static double interp(double x, const double *xp, const double *fp, int n)
{
    if (x < xp[0]) {
        return fp[0];
    }
    if (x >= xp[n - 1]) {
        return fp[n - 1];
    }
    int lo = 0, hi = n - 1; /* xp[lo] <= x < xp[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (xp[mid] <= x) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if (xp[lo] == x) {
        return fp[lo];
    }
    const double slope = (fp[lo + 1] - fp[lo]) / (xp[lo + 1] - xp[lo]);
    return slope * (x - xp[lo]) + fp[lo];
}

imghist_status imghist_match_lut(const uint64_t src[256], const uint64_t ref[256],
                                 uint8_t lut[256])
{
    if (src == NULL || ref == NULL || lut == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    uint64_t ns = 0, nr = 0;
    for (int v = 0; v < 256; v++) {
        ns += src[v];
        nr += ref[v];
    }
    if (ns == 0 || nr == 0) {
        return IMGHIST_E_INVALID_ARG;
    }
    /* The reference's levels present and their cumulative quantiles. */
    double xp[256], fp[256];
    int n = 0;
    uint64_t c = 0;
    for (int v = 0; v < 256; v++) {
        if (ref[v] != 0) {
            c += ref[v];
            xp[n] = (double)c / (double)nr;
            fp[n] = (double)v;
            n++;
        }
    }
    uint64_t cs = 0;
    for (int v = 0; v < 256; v++) {
        cs += src[v];
        const double y = interp((double)cs / (double)ns, xp, fp, n);
        lut[v] = (uint8_t)nearbyint(y); /* halves to even (the default rounding) */
    }
    return IMGHIST_OK;
}
