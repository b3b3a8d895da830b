/*
 * The one definition of which sample falls in which bin (imghist.h,
 * imghist_histspec), for the CPU backend and, compiled by nvcc, for the
 * kernels: both give the same bin for every sample, bit for bit.
 *
 * Edges: w = (hi - lo) / bins, e(i) = lo + i * w in double precision, each
 * operation rounded on its own (the _rn intrinsics on the device, and no
 * contraction on the host: x86-64 without -mfma has no fused multiply-add,
 * and the product is forced through a volatile-free separate statement),
 * e(bins) = hi. A sample v (exact as a double) is in bin i iff
 * e(i) <= v < e(i+1); the first estimate floor((v - lo) * bins / (hi - lo))
 * may be off by a bin and is corrected against the edges, so how it is
 * rounded does not matter. Kernels may use any equivalent test (a float
 * sample against the smallest float >= each edge, say) as long as the bins
 * are these.
 *
 * With IMGHIST_FLOAT_EDGES every edge, e(0) = lo and e(bins) = hi included,
 * is then rounded to the nearest float, as numpy.histogram's edges of float32
 * data are: lo and hi hold the rounded ends and e0 the range's own start.
 * With IMGHIST_FLOAT_STEP_EDGES the edges are single-precision arithmetic on
 * the ends rounded to floats, as NumPy 2's linspace of float32 ends:
 * s = fl(fl(hi - lo) / bins), e(i) = fl(fl(i * s) + lo), e(bins) = hi.
 */
#ifndef IMGHIST_BINNING_H
#define IMGHIST_BINNING_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#  define IH_HD __host__ __device__ __forceinline__
#else
#  define IH_HD static inline
#endif

/* ih_binning.float_edges */
#define IH_EDGES_DOUBLE 0      /* double precision, as written above */
#define IH_EDGES_ROUNDED 1     /* the double edges rounded to floats */
#define IH_EDGES_FLOAT_STEP 2  /* single-precision arithmetic */

/* Bin codes beyond the bins: where an outlier goes, relative to `bins`. */
#define IH_BIN_BELOW 0u
#define IH_BIN_ABOVE 1u
#define IH_BIN_NAN 2u

/* The binning a kernel or loop needs, with no pointers: copied by value. */
typedef struct ih_binning {
    double lo, hi, w;   /* the range (its ends rounded with float_edges) and the bin width */
    double e0;          /* the range's start, unrounded: the edges' origin */
    double inv;         /* bins / (hi - lo): only for the first estimate */
    uint32_t bins;
    int closed;         /* a sample equal to hi is in the last bin */
    int float_edges;    /* IH_EDGES_*: how the edges are rounded to floats */
    float step_f;       /* IH_EDGES_FLOAT_STEP: s above */
    int shift_ok;       /* integer samples: bin = (v - ilo) >> shift on [ilo, ihi) */
    int64_t ilo, ihi;
    uint32_t shift;
} ih_binning;

/* d rounded to the nearest float, as a double. The host's store through a
 * volatile float keeps the rounding: GCC 12 at -O2 was seen to drop a plain
 * (double)(float) pair. */
IH_HD double ih_round_float(double d)
{
#ifdef __CUDA_ARCH__
    return (double)__double2float_rn(d);
#else
    volatile float f = (float)d;
    return (double)f;
#endif
}

IH_HD double ih_edge(const ih_binning *b, uint32_t i)
{
    if (i >= b->bins) {
        return b->hi;
    }
#ifdef __CUDA_ARCH__
    if (b->float_edges == IH_EDGES_FLOAT_STEP) {
        return (double)__fadd_rn(__fmul_rn((float)i, b->step_f), (float)b->lo);
    }
    const double e = __dadd_rn(b->e0, __dmul_rn((double)i, b->w));
#else
    if (b->float_edges == IH_EDGES_FLOAT_STEP) {
        volatile float product = (float)i * b->step_f; /* rounded: no fused multiply-add */
        return (double)(float)(product + (float)b->lo);
    }
    const double step = (double)i * b->w;
    const double e = b->e0 + step;
#endif
    return b->float_edges ? ih_round_float(e) : e;
}

/* The bin of a sample, or bins + IH_BIN_BELOW / ABOVE / NAN. */
IH_HD uint32_t ih_bin_of_double(const ih_binning *b, double v)
{
    if (v != v) {
        return b->bins + IH_BIN_NAN;
    }
    if (v < b->lo) {
        return b->bins + IH_BIN_BELOW;
    }
    if (v >= b->hi) {
        return (b->closed && v == b->hi) ? b->bins - 1 : b->bins + IH_BIN_ABOVE;
    }
    const double f = (v - b->lo) * b->inv; /* any rounding: corrected below */
    uint32_t i = f >= (double)(b->bins - 1) ? b->bins - 1 : (uint32_t)f;
    while (i > 0 && v < ih_edge(b, i)) {
        i--;
    }
    while (i + 1 < b->bins && v >= ih_edge(b, i + 1)) {
        i++;
    }
    return i;
}

/* The smallest float >= d (-inf below every float, +inf above): for a float
 * v, v >= d <=> v >= ih_float_up(d). */
IH_HD float ih_float_up(double d)
{
    float f = (float)d;
    if ((double)f < d) {
        f = nextafterf(f, INFINITY);
    }
    return f;
}

/*
 * How far, in bins, rounding the edges to floats moves them from binning.h's
 * double edges: 2^-24 mag inv rounded (mag = |lo| + |hi|); computed in
 * floats, the step's two roundings over up to bins steps and two more
 * roundings, within 2^-22 (mag inv + bins), generously.
 */
IH_HD double ih_edges_moved(const ih_binning *b)
{
    const double mag = fabs(b->lo) + fabs(b->hi);
    switch (b->float_edges) {
    case IH_EDGES_ROUNDED: return b->inv * ldexp(mag, -24);
    case IH_EDGES_FLOAT_STEP: return ldexp(mag * b->inv + (double)b->bins, -22);
    default: return 0.0;
    }
}

/*
 * Float samples' single-precision estimate t = fl(fl(v - lo_f) * inv_f) (lo_f,
 * inv_f: lo and inv rounded to float), for the CUDA kernels and the CPU
 * loop: a bound, in bins, on its distance from the exact place of v (in
 * range) among the edges. With u = 2^-24: lo_f is within |lo - lo_f| of lo;
 * the subtraction errs by at most u |v - lo_f| <= u (|lo| + |hi|); inv_f and
 * the product add two roundings of t <= bins (2u bins); the double edges sit
 * within 2^-50 (|lo| + |hi|) of the exact ones, plus what rounding them to
 * floats moves them. Infinite (no bound) where an
 * end is beyond FLT_MAX or the range is wider than 1e38, a third of FLT_MAX,
 * where v - lo_f could overflow.
 */
IH_HD double ih_float_bound(const ih_binning *b)
{
    if (!(fabs(b->lo) <= FLT_MAX && fabs(b->hi) <= FLT_MAX && b->hi - b->lo <= 1e38)) {
        return INFINITY;
    }
    const double mag = fabs(b->lo) + fabs(b->hi);
    return b->inv * (fabs(b->lo - (double)(float)b->lo) + ldexp(mag, -24) + ldexp(mag, -50)) +
           ldexp((double)b->bins, -23) + ih_edges_moved(b);
}

/* The bin of an integer sample (U8, U16). shift_ok is never set with closed
 * when hi is a possible sample. */
IH_HD uint32_t ih_bin_of_int(const ih_binning *b, uint32_t v)
{
    if (b->shift_ok) {
        const int64_t x = (int64_t)v;
        if (x < b->ilo) {
            return b->bins + IH_BIN_BELOW;
        }
        if (x >= b->ihi) {
            return b->bins + IH_BIN_ABOVE;
        }
        return (uint32_t)((x - b->ilo) >> b->shift);
    }
    return ih_bin_of_double(b, (double)v);
}

/* N-d axes (core/ndhist.h), for the CPU and the kernels alike. OpenCV's
 * uniform bins: v in [lo, hi) is in bin floor(v * t + u) clamped to the
 * bins, the product rounded on its own (as OpenCV's build has it); `bins`
 * for a sample in none (NaN included). */
IH_HD uint32_t ih_opencv_bin(double lo, double hi, double t, double u, uint32_t bins, double v)
{
    if (!(v >= lo && v < hi)) {
        return bins;
    }
#ifdef __CUDA_ARCH__
    const double f = floor(__dadd_rn(__dmul_rn(v, t), u));
#else
    volatile double prod = v * t;
    const double f = floor(prod + u);
#endif
    return f < 0.0 ? 0u : f >= (double)(bins - 1) ? bins - 1 : (uint32_t)f;
}

/* Explicit edges e[0..bins]: v is in bin i when e[i] <= v < e[i+1], the
 * last bin holding e[bins] when closed; `bins` for a sample in none. */
IH_HD uint32_t ih_edges_bin(const double *e, uint32_t bins, int closed, double v)
{
    if (!(v >= e[0])) {
        return bins;
    }
    if (v >= e[bins]) {
        return closed && v == e[bins] ? bins - 1 : bins;
    }
    uint32_t lo = 0, hi = bins; /* e[lo] <= v < e[hi] */
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (e[mid] <= v) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

#endif
