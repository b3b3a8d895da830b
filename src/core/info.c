/* Mutual information of a joint histogram on the host: the definition the
 * device code follows (imghist.h, imghist_mutual_information). */
#include <math.h>
#include <stdlib.h>

#include "backend.h"

/* -sum p log2 p over n counts of total N, as sum n log2 n: H = log2 N - S / N. */
static double entropy_bits(double s, double total)
{
    return log2(total) - s / total;
}

static double nlogn(uint64_t n)
{
    return n > 0 ? (double)n * log2((double)n) : 0.0;
}

int ih_mutual_information_host(const uint64_t *joint, uint32_t bins_a, uint32_t bins_b,
                               double result[2])
{
    double *col = calloc(bins_b, sizeof *col);
    if (col == NULL) {
        return -1;
    }
    uint64_t total = 0;
    double s_ab = 0.0, s_a = 0.0;
    for (uint32_t i = 0; i < bins_a; i++) {
        uint64_t row = 0;
        for (uint32_t j = 0; j < bins_b; j++) {
            const uint64_t n = joint[(size_t)i * bins_b + j];
            row += n;
            col[j] += (double)n;
            s_ab += nlogn(n);
        }
        total += row;
        s_a += nlogn(row);
    }
    double s_b = 0.0;
    for (uint32_t j = 0; j < bins_b; j++) {
        s_b += col[j] > 0.0 ? col[j] * log2(col[j]) : 0.0;
    }
    free(col);
    if (total == 0) {
        return 0;
    }
    const double n = (double)total;
    const double ha = entropy_bits(s_a, n), hb = entropy_bits(s_b, n);
    const double hab = entropy_bits(s_ab, n);
    double mi = ha + hb - hab;
    result[0] = mi < 0.0 ? 0.0 : mi; /* rounding can leave -1e-16 */
    result[1] = hab > 0.0 ? (ha + hb) / hab : 2.0;
    return 1;
}
