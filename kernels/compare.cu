/*
 * Histogram comparison kernels (compare.cuh). Every product, sum, quotient
 * and root is an explicitly rounded intrinsic, so nvcc fuses nothing and
 * each pair follows core/compare.c step for step: the two lanes of OpenCV's
 * vector part over bins [0, nv), nv the bins rounded down to a multiple of
 * 4, then the last bins one by one. A pair's sums are a thread's own, in
 * that order; the tiles only share the loads. The histograms are kept bin
 * major (bin j of histogram i at j * n + i), so that the threads of a warp,
 * each on its own histogram, read neighbouring doubles.
 */
#include <cfloat>
#include <cmath>

#include "compare.cuh"

namespace {

constexpr int TILE = 64;   /* histograms a side of a block's tile of pairs */
constexpr int CHUNK = 16;  /* bins staged in shared memory at a time (a multiple of 4) */
constexpr int THREADS = 256;
constexpr int MICRO = 4;   /* a thread's pairs: 4 rows x 4 columns of the tile */

struct acc {
    double l0, l1, r;
};

__device__ __forceinline__ double dmul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double dadd(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double dsub(double a, double b) { return __dsub_rn(a, b); }

/* r + sqrt(p). A zero product adds nothing (r is never -0, so r + 0 is r),
 * and takes the square root's slow path: it is left out. */
__device__ __forceinline__ double add_root(double r, double p)
{
    return p == 0.0 ? r : dadd(r, __dsqrt_rn(p));
}

/* SSE's minps and std::min, each on its operands' order (they differ on NaN). */
__device__ __forceinline__ double min_vector(double a, double b) { return a < b ? a : b; }
__device__ __forceinline__ double min_scalar(double a, double b) { return b < a ? b : a; }

/* One bin of the methods summed bin after bin, from the first to the last. */
template <int M>
__device__ __forceinline__ void one_bin(double &r, double a, double b, size_t bin, size_t bins,
                                        bool float_steps)
{
    if (M == IMGHIST_CMP_CHISQR || M == IMGHIST_CMP_CHISQR_ALT) {
        double d = dsub(a, b);
        double den = M == IMGHIST_CMP_CHISQR_ALT ? dadd(a, b) : a;
        if (float_steps) {
            d = (double)__double2float_rn(d);
            den = (double)__double2float_rn(den);
        }
        if (fabs(den) > DBL_EPSILON) {
            r = dadd(r, __ddiv_rn(dmul(d, d), den));
        }
    } else if (M == IMGHIST_CMP_KL_DIV) {
        if (fabs(a) <= DBL_EPSILON) {
            return;
        }
        const double q = fabs(b) <= DBL_EPSILON ? 1e-10 : b;
        r = dadd(r, dmul(a, log(__ddiv_rn(a, q))));
    } else if (M == IMGHIST_CMP_EMD) {
        /* a and b are the cumulative sums over the totals; the last are 1. */
        if (bin + 1 < bins) {
            r = dadd(r, fabs(dsub(a, b)));
        }
    }
}

/* Bins [bin, bin + 4) of a pair, a and b pointing at those bins' values. */
template <int M>
__device__ __forceinline__ void group(acc &s, const double *a, const double *b, size_t bs,
                                      size_t bin, size_t nv, size_t bins, bool float_steps)
{
    if (M == IMGHIST_CMP_CORREL || M == IMGHIST_CMP_BHATTACHARYYA ||
        M == IMGHIST_CMP_INTERSECT) {
        if (bin == nv) { /* the lanes end: r = 0 + (lane 0 + lane 1) */
            s.r = dadd(0.0, dadd(s.l0, s.l1));
        }
        if (bin < nv) {
            if (M == IMGHIST_CMP_CORREL) {
                s.l0 = dadd(dmul(a[0], b[0]), s.l0);
                s.l1 = dadd(dmul(a[1], b[bs]), s.l1);
                s.l0 = dadd(dmul(a[2], b[2 * bs]), s.l0);
                s.l1 = dadd(dmul(a[3], b[3 * bs]), s.l1);
            } else if (M == IMGHIST_CMP_BHATTACHARYYA) {
                s.l0 = add_root(s.l0, dmul(a[0], b[0]));
                s.l1 = add_root(s.l1, dmul(a[1], b[bs]));
                s.l0 = add_root(s.l0, dmul(a[2], b[2 * bs]));
                s.l1 = add_root(s.l1, dmul(a[3], b[3 * bs]));
            } else {
                s.l0 = dadd(s.l0, dadd(min_vector(a[0], b[0]), min_vector(a[2], b[2 * bs])));
                s.l1 = dadd(s.l1, dadd(min_vector(a[1], b[bs]), min_vector(a[3], b[3 * bs])));
            }
            return;
        }
        for (int k = 0; k < 4 && bin + k < bins; k++) {
            if (M == IMGHIST_CMP_CORREL) {
                s.r = dadd(s.r, dmul(a[k], b[k * bs]));
            } else if (M == IMGHIST_CMP_BHATTACHARYYA) {
                s.r = add_root(s.r, dmul(a[k], b[k * bs]));
            } else {
                s.r = dadd(s.r, min_scalar(a[k], b[k * bs]));
            }
        }
    } else {
        for (int k = 0; k < 4 && bin + k < bins; k++) {
            one_bin<M>(s.r, a[k], b[k * bs], bin + k, bins, float_steps);
        }
    }
}

template <int M>
__device__ __forceinline__ double finish_pair(acc s, ih_cmp_dev_row ra, ih_cmp_dev_row rb,
                                              size_t nv, size_t bins)
{
    if ((M == IMGHIST_CMP_CORREL || M == IMGHIST_CMP_BHATTACHARYYA ||
         M == IMGHIST_CMP_INTERSECT) &&
        nv == bins) {
        s.r = dadd(0.0, dadd(s.l0, s.l1));
    }
    if (M == IMGHIST_CMP_CORREL) {
        const double s1 = ra.s1, s2 = rb.s1;
        const double scale = __ddiv_rn(1.0, (double)bins);
        const double num = dsub(s.r, dmul(dmul(s1, s2), scale));
        const double denom2 = dmul(dsub(ra.s11, dmul(dmul(s1, s1), scale)),
                                   dsub(rb.s11, dmul(dmul(s2, s2), scale)));
        return fabs(denom2) > DBL_EPSILON ? __ddiv_rn(num, __dsqrt_rn(denom2)) : 1.0;
    }
    if (M == IMGHIST_CMP_BHATTACHARYYA) {
        double k = dmul(ra.s1, rb.s1);
        k = fabs(k) > FLT_EPSILON ? __ddiv_rn(1.0, __dsqrt_rn(k)) : 1.0;
        const double d = dsub(1.0, dmul(s.r, k));
        return __dsqrt_rn(d < 0.0 ? 0.0 : d);
    }
    if (M == IMGHIST_CMP_CHISQR_ALT) {
        return dmul(s.r, 2.0);
    }
    if (M == IMGHIST_CMP_EMD) {
        return !(ra.s1 > 0.0) || !(rb.s1 > 0.0) ? (double)NAN : s.r;
    }
    return s.r;
}

__global__ void convert_kernel(const unsigned char *src, int type, size_t stride, size_t n,
                               size_t bins, double *dst)
{
    const size_t total = n * bins;
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t i = e / bins, j = e % bins;
        const unsigned char *p = src + i * stride;
        double v;
        if (type == IMGHIST_HIST_U64) {
            v = (double)__ull2float_rn(((const unsigned long long *)p)[j]);
        } else if (type == IMGHIST_HIST_F32) {
            v = (double)((const float *)p)[j];
        } else {
            v = ((const double *)p)[j];
        }
        dst[j * n + i] = v;
    }
}

__global__ void rows_kernel(double *v, size_t n, size_t bins, int method, ih_cmp_dev_row *rows)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    double *a = v + i; /* bin j at a[j * n] */
    ih_cmp_dev_row r = {0.0, 0.0};
    const size_t nv = bins - bins % 4;
    if (method == IMGHIST_CMP_CORREL || method == IMGHIST_CMP_BHATTACHARYYA) {
        double s1[2] = {0.0, 0.0}, s11[2] = {0.0, 0.0};
        for (size_t j = 0; j < nv; j += 2) {
            for (int l = 0; l < 2; l++) {
                const double x = a[(j + l) * n];
                s11[l] = dadd(dmul(x, x), s11[l]);
                s1[l] = dadd(s1[l], x);
            }
        }
        r.s1 = dadd(r.s1, dadd(s1[0], s1[1]));
        r.s11 = dadd(r.s11, dadd(s11[0], s11[1]));
        for (size_t j = nv; j < bins; j++) {
            const double x = a[j * n];
            r.s1 = dadd(r.s1, x);
            r.s11 = dadd(r.s11, dmul(x, x));
        }
    } else if (method == IMGHIST_CMP_EMD) {
        for (size_t j = 0; j < bins; j++) {
            r.s1 = dadd(r.s1, a[j * n]);
        }
        double c = 0.0;
        for (size_t j = 0; j < bins; j++) {
            c = dadd(c, a[j * n]);
            a[j * n] = __ddiv_rn(c, r.s1);
        }
    }
    rows[i] = r;
}

template <int M>
__global__ void many_kernel(const double *q, const ih_cmp_dev_row *qrow, const double *v,
                            const ih_cmp_dev_row *rows, size_t n, size_t bins,
                            bool float_steps, double *out)
{
    const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    const size_t nv = bins - bins % 4;
    const double *b = v + i;
    acc s = {0.0, 0.0, 0.0};
    for (size_t bin = 0; bin < bins; bin += 4) {
        group<M>(s, q + bin, b + bin * n, n, bin, nv, bins, float_steps);
    }
    out[i] = finish_pair<M>(s, *qrow, rows[i], nv, bins);
}

/*
 * A 64 x 64 tile of pairs a block: CHUNK bins of its 64 row and 64 column
 * histograms at a time in shared memory, each thread summing its 4 x 4
 * pairs. A symmetric method computes the tiles on and above the diagonal
 * and writes each also transposed, through shared memory so that the
 * mirrored rows are written whole.
 */
template <int M>
__global__ void __launch_bounds__(THREADS)
    all_kernel(const double *v, const ih_cmp_dev_row *rows, size_t n, size_t bins,
               bool float_steps, bool symmetric, double *out)
{
    const unsigned ti = blockIdx.y, tj = blockIdx.x;
    if (symmetric && tj < ti) {
        return;
    }
    __shared__ double sm[TILE * (TILE + 1)];
    double *as = sm, *bs = sm + TILE * (CHUNK + 1);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const size_t i0 = (size_t)ti * TILE, j0 = (size_t)tj * TILE;
    const size_t nv = bins - bins % 4;
    acc s[MICRO][MICRO];
    for (int r = 0; r < MICRO; r++) {
        for (int c = 0; c < MICRO; c++) {
            s[r][c] = {0.0, 0.0, 0.0};
        }
    }
    for (size_t c0 = 0; c0 < bins; c0 += CHUNK) {
        for (int e = threadIdx.x; e < TILE * CHUNK; e += THREADS) {
            const int row = e % TILE, k = e / TILE;
            const size_t bin = c0 + k, gi = i0 + row, gj = j0 + row;
            as[row * (CHUNK + 1) + k] = gi < n && bin < bins ? v[bin * n + gi] : 0.0;
            bs[row * (CHUNK + 1) + k] = gj < n && bin < bins ? v[bin * n + gj] : 0.0;
        }
        __syncthreads();
        for (int g = 0; g < CHUNK && c0 + g < bins; g += 4) {
#pragma unroll
            for (int r = 0; r < MICRO; r++) {
#pragma unroll
                for (int c = 0; c < MICRO; c++) {
                    group<M>(s[r][c], &as[(ty + 16 * r) * (CHUNK + 1) + g],
                             &bs[(tx + 16 * c) * (CHUNK + 1) + g], 1, c0 + g, nv, bins,
                             float_steps);
                }
            }
        }
        __syncthreads();
    }
    double val[MICRO][MICRO];
#pragma unroll
    for (int r = 0; r < MICRO; r++) {
#pragma unroll
        for (int c = 0; c < MICRO; c++) {
            const size_t i = i0 + ty + 16 * r, j = j0 + tx + 16 * c;
            val[r][c] = 0.0;
            if (i < n && j < n) {
                val[r][c] = finish_pair<M>(s[r][c], rows[i], rows[j], nv, bins);
                out[i * n + j] = val[r][c];
            }
        }
    }
    if (!symmetric || ti == tj) {
        return;
    }
    for (int r = 0; r < MICRO; r++) {
        for (int c = 0; c < MICRO; c++) {
            sm[(tx + 16 * c) * (TILE + 1) + ty + 16 * r] = val[r][c];
        }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < TILE * TILE; e += THREADS) {
        const int jj = e / TILE, ii = e % TILE;
        const size_t i = i0 + ii, j = j0 + jj;
        if (i < n && j < n) {
            out[j * n + i] = sm[jj * (TILE + 1) + ii];
        }
    }
}

bool symmetric(imghist_compare_method m)
{
    return m == IMGHIST_CMP_CORREL || m == IMGHIST_CMP_INTERSECT ||
           m == IMGHIST_CMP_BHATTACHARYYA || m == IMGHIST_CMP_EMD;
}

template <int M>
void launch_all(const double *v, const ih_cmp_dev_row *rows, size_t n, size_t bins,
                bool float_steps, double *out, cudaStream_t stream)
{
    const unsigned tiles = (unsigned)((n + TILE - 1) / TILE);
    all_kernel<M><<<dim3(tiles, tiles), THREADS, 0, stream>>>(
        v, rows, n, bins, float_steps, symmetric((imghist_compare_method)M), out);
}

template <int M>
void launch_many(const double *q, const ih_cmp_dev_row *qrow, const double *v,
                 const ih_cmp_dev_row *rows, size_t n, size_t bins, bool float_steps,
                 double *out, cudaStream_t stream)
{
    many_kernel<M><<<(unsigned)((n + 127) / 128), 128, 0, stream>>>(q, qrow, v, rows, n, bins,
                                                                  float_steps, out);
}

} // namespace

cudaError_t ih_launch_cmp_convert(const void *src, imghist_hist_type type, size_t stride,
                                  size_t n, size_t bins, double *dst, cudaStream_t stream)
{
    const size_t total = n * bins;
    const unsigned blocks = (unsigned)(total / 256 + 1 < 65536 ? total / 256 + 1 : 65536);
    convert_kernel<<<blocks, 256, 0, stream>>>((const unsigned char *)src, (int)type, stride, n,
                                               bins, dst);
    return cudaGetLastError();
}

cudaError_t ih_launch_cmp_rows(double *v, size_t n, size_t bins, imghist_compare_method method,
                               ih_cmp_dev_row *rows, cudaStream_t stream)
{
    rows_kernel<<<(unsigned)((n + 127) / 128), 128, 0, stream>>>(v, n, bins, (int)method, rows);
    return cudaGetLastError();
}

#define IH_CMP_DISPATCH(launch, ...)                                              \
    switch (method) {                                                             \
    case IMGHIST_CMP_CORREL: launch<IMGHIST_CMP_CORREL>(__VA_ARGS__); break;      \
    case IMGHIST_CMP_CHISQR: launch<IMGHIST_CMP_CHISQR>(__VA_ARGS__); break;      \
    case IMGHIST_CMP_INTERSECT: launch<IMGHIST_CMP_INTERSECT>(__VA_ARGS__); break; \
    case IMGHIST_CMP_BHATTACHARYYA:                                               \
        launch<IMGHIST_CMP_BHATTACHARYYA>(__VA_ARGS__);                           \
        break;                                                                    \
    case IMGHIST_CMP_CHISQR_ALT: launch<IMGHIST_CMP_CHISQR_ALT>(__VA_ARGS__); break; \
    case IMGHIST_CMP_KL_DIV: launch<IMGHIST_CMP_KL_DIV>(__VA_ARGS__); break;      \
    case IMGHIST_CMP_EMD: launch<IMGHIST_CMP_EMD>(__VA_ARGS__); break;            \
    }

cudaError_t ih_launch_cmp_many(const double *q, const ih_cmp_dev_row *qrow, const double *v,
                               const ih_cmp_dev_row *rows, size_t n, size_t bins,
                               imghist_compare_method method, bool float_steps, double *out,
                               cudaStream_t stream)
{
    IH_CMP_DISPATCH(launch_many, q, qrow, v, rows, n, bins, float_steps, out, stream)
    return cudaGetLastError();
}

cudaError_t ih_launch_cmp_all(const double *v, const ih_cmp_dev_row *rows, size_t n, size_t bins,
                              imghist_compare_method method, bool float_steps, double *out,
                              cudaStream_t stream)
{
    IH_CMP_DISPATCH(launch_all, v, rows, n, bins, float_steps, out, stream)
    return cudaGetLastError();
}
