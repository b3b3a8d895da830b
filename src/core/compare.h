/*
 * Histogram comparison: the host definitions (core/compare.c) that the CPU
 * runs and the CUDA kernels follow. OpenCV 4.6's compareHist on x86-64
 * sums in two double lanes of 128-bit vectors (bins 4k, 4k + 2 in lane 0;
 * 4k + 1, 4k + 3 in lane 1) over the bins up to a multiple of 4, adds lane 0
 * to lane 1, then the last bins one by one; the same order gives its bits.
 */
#ifndef IMGHIST_COMPARE_H
#define IMGHIST_COMPARE_H

#include <stdbool.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one histogram contributes alone to a comparison: correlation's sum
 * and sum of squares, Bhattacharyya's sum, EMD's total (s1 only). */
typedef struct ih_cmp_row {
    double s1, s11;
} ih_cmp_row;

/* A histogram's values as the comparison reads them: U64 counts rounded to
 * float, F32 as they are, F64 as they are. */
void ih_cmp_load(const imghist_hists *h, size_t i, double *dst);
/* Whether the comparison of a and b takes OpenCV's float steps (no F64). */
bool ih_cmp_float_steps(const imghist_hists *a, const imghist_hists *b);
/* Whether d(a, b) == d(b, a) bit for bit, so that all pairs take half. */
bool ih_cmp_symmetric(imghist_compare_method m);
void ih_cmp_row_of(imghist_compare_method m, const double *a, size_t bins, ih_cmp_row *r);
/* d(a, b) of bins values each, ra and rb their ih_cmp_row_of. */
double ih_cmp_pair(imghist_compare_method m, const double *a, const ih_cmp_row *ra,
                   const double *b, const ih_cmp_row *rb, size_t bins, bool float_steps);
/* Value size of a histogram type, 0 for an unknown one. */
size_t ih_cmp_value_size(imghist_hist_type t);

#ifdef __cplusplus
}
#endif

#endif
