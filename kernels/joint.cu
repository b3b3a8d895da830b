/*
 * Joint histograms and mutual information.
 *
 * Counting. A pixel becomes a key (a joint cell i * bins_b + j, or the
 * outlier counter past the cells). Up to 65537 keys a block keeps private
 * counters in shared memory as 16-bit halves of 32-bit words (key k is half
 * k & 1 of word k >> 1: 65536 keys in 128 KiB, so a 256 x 256 joint
 * histogram fits one block per SM). What a half cannot hold goes to the
 * global counters as the add that lost it sees it (s16_pairs.cuh, as the
 * wide 16-bit histograms do), and once the block is done the halves are
 * added to them. More keys than that count straight into global memory.
 *
 * U8 x U8 pairs add each pixel on its own (add8_each) but for granules that
 * are one byte repeated in every converged lane (constant images), which one
 * lane adds at once; elsewhere a thread merges runs of equal keys before it
 * adds (a constant image costs one shared atomic per run, not one per pixel:
 * the 32 lanes of a warp would otherwise all queue on one address).
 *
 * U8 x U8 pairs with one bin per value (the fast path) are read as 16-byte
 * granules (granules.cuh) of both images, two in flight per thread;
 * everything else one sample per thread and step, in rows cut into segments
 * of one block's width. (One image's histogram is hist_wide.cu's.)
 */
#include <math.h>
#include <stdint.h>

#include "granules.cuh"
#include "joint.cuh"
#include "s16_pairs.cuh"

namespace {

constexpr int THREADS = IH_JOINT_THREADS;
constexpr int UNROLL = 2;                /* granules of each image in flight per thread */
constexpr int CHUNK = THREADS * UNROLL;  /* granules per block per step */
constexpr uint32_t NO_KEY = 0xffffffffu;
constexpr uint32_t MAX_RUN = 0xffffu;    /* a run is added to a 16-bit half at once */

/* ---- counters ---- */

struct Counters {
    uint32_t *sh;               /* shared words, or NULL: count in global memory */
    unsigned long long *target; /* the output, added to */
    uint32_t len;               /* keys */

    __device__ __forceinline__ void add(uint32_t key, uint32_t n) const
    {
        if (sh == nullptr) {
            atomicAdd(target + key, (unsigned long long)n);
            return;
        }
        ih_s16_settle(*this, key, n, atomicAdd(sh + (key >> 1), n << ((key & 1u) << 4)));
    }
};

/* Merge consecutive equal keys of one thread. */
struct Run {
    uint32_t key = NO_KEY, n = 0;

    __device__ __forceinline__ void push(const Counters &c, uint32_t k)
    {
        if (k == key && n < MAX_RUN) {
            n++;
            return;
        }
        if (key != NO_KEY) {
            c.add(key, n);
        }
        key = k;
        n = 1;
    }

    __device__ __forceinline__ void finish(const Counters &c)
    {
        if (key != NO_KEY) {
            c.add(key, n);
        }
        n = 0;
        key = NO_KEY;
    }
};

__device__ __forceinline__ void zero_shared(uint32_t *sh, uint32_t words)
{
    for (uint32_t w = threadIdx.x; w < words; w += blockDim.x) {
        sh[w] = 0;
    }
    __syncthreads();
}

/* Add the block's halves to the global counters, each block starting at a
 * different word so that the blocks' adds spread over L2. */
__device__ __forceinline__ void flush_shared(const Counters &c)
{
    __syncthreads();
    const uint32_t words = (c.len + 1) / 2;
    const uint32_t start = (uint32_t)(((uint64_t)blockIdx.x * 2654435761u) % words);
    for (uint32_t i = threadIdx.x; i < words; i += blockDim.x) {
        uint32_t w = i + start;
        w = w >= words ? w - words : w;
        const uint32_t v = c.sh[w];
        const uint32_t lo = v & 0xffffu, hi = v >> 16;
        if (lo != 0) {
            atomicAdd(c.target + 2 * w, (unsigned long long)lo);
        }
        if (hi != 0 && 2 * w + 1 < c.len) {
            atomicAdd(c.target + 2 * w + 1, (unsigned long long)hi);
        }
    }
}

/* ---- samples ---- */

template <imghist_dtype T> struct Sample;
template <> struct Sample<IMGHIST_U8> {
    static constexpr int size = 1;
    __device__ static uint32_t load(const uint8_t *p, bool) { return *p; }
};
template <> struct Sample<IMGHIST_U16> {
    static constexpr int size = 2;
    __device__ static uint32_t load(const uint8_t *p, bool aligned)
    {
        if (aligned) {
            return *reinterpret_cast<const uint16_t *>(p);
        }
        return (uint32_t)p[0] | ((uint32_t)p[1] << 8);
    }
};
template <> struct Sample<IMGHIST_F32> {
    static constexpr int size = 4;
    __device__ static float load(const uint8_t *p, bool aligned)
    {
        if (aligned) {
            return *reinterpret_cast<const float *>(p);
        }
        const uint32_t u = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                           ((uint32_t)p[3] << 24);
        return __uint_as_float(u);
    }
};

template <imghist_dtype T>
__device__ __forceinline__ uint32_t bin_at(const ih_binning &b, const uint8_t *p, bool aligned)
{
    if constexpr (T == IMGHIST_F32) {
        return ih_bin_of_double(&b, (double)Sample<T>::load(p, aligned));
    } else {
        return ih_bin_of_int(&b, Sample<T>::load(p, aligned));
    }
}

/* ---- the scalar kernel: any types, masks, bins ---- */

struct ScalarArgs {
    ih_joint_job job;
    unsigned long long *out;
    uint32_t nkeys;
    bool shared;
    uint32_t seg_per_row;   /* segments of THREADS pixels per row */
    ih_fastdiv seg_div;     /* by seg_per_row */
    uint32_t segments;      /* rows * seg_per_row, below 2^31 */
    uint32_t row0;          /* first row of this launch */
};

template <imghist_dtype TA, imghist_dtype TB>
__global__ void __launch_bounds__(THREADS) count_scalar_kernel(ScalarArgs p)
{
    extern __shared__ uint32_t sh[];
    const ih_joint_job &j = p.job;
    Counters c{p.shared ? sh : nullptr, p.out, p.nkeys};
    if (p.shared) {
        zero_shared(sh, (p.nkeys + 1) / 2);
    }
    const bool al_a = ((uintptr_t)j.a.data % Sample<TA>::size) == 0;
    constexpr imghist_dtype tb = TB;
    const bool al_b = ((uintptr_t)j.b.data % Sample<tb>::size) == 0;
    const uint32_t nb = j.bb.bins;
    Run run;
    for (uint32_t s = blockIdx.x; s < p.segments; s += gridDim.x) {
        const uint32_t r = ih_div(p.seg_div, s);
        const uint32_t x = (s - r * p.seg_per_row) * THREADS + threadIdx.x;
        if (x >= j.width) {
            continue;
        }
        const size_t y = (size_t)p.row0 + r;
        if (j.mask.data != nullptr && j.mask.data[y * j.mask.pitch + x] == 0) {
            continue;
        }
        const uint8_t *pa = j.a.data + y * j.a.pitch + (size_t)x * Sample<TA>::size;
        const uint8_t *pb = j.b.data + y * j.b.pitch + (size_t)x * Sample<tb>::size;
        uint32_t key;
        if (TA == IMGHIST_U8 && tb == IMGHIST_U8 && j.natural_u8_pair) {
            key = ((uint32_t)pa[0] << 8) | pb[0];
        } else {
            const uint32_t i = bin_at<TA>(j.ba, pa, al_a);
            const uint32_t k = bin_at<tb>(j.bb, pb, al_b);
            key = i < j.ba.bins && k < nb ? i * nb + k : (j.outliers ? j.cells : NO_KEY);
        }
        run.push(c, key);
    }
    run.finish(c);
    if (p.shared) {
        flush_shared(c);
    }
}

/* ---- the granule kernel: U8 x U8 natural pairs ---- */

struct VecArgs {
    ih_geom g;              /* a's bytes */
    const uint8_t *b_base;  /* b's first row, same 16-byte phase as a's */
    size_t b_pitch;
    unsigned long long *out;
    uint32_t nkeys;
};

/*
 * Eight keys, one add each: every atomic first (a check after each add kept
 * one shared atomic in flight per thread), then one look at the old halves
 * (z = the old half inverted, zero where it was 0xffff and may have wrapped).
 */
__device__ __forceinline__ void add8_each(const Counters &c, const uint32_t (&key)[8])
{
    uint32_t old[8];
    uint32_t least = 1;
#pragma unroll
    for (int p = 0; p < 8; p++) {
        const uint32_t delta = 1u << ((key[p] & 1u) << 4);
        old[p] = atomicAdd(c.sh + (key[p] >> 1), delta);
        least = min(least, ~old[p] & (delta * 0xffffu));
    }
    if (least == 0) {
#pragma unroll
        for (int p = 0; p < 8; p++) {
            ih_s16_settle(c, key[p], 1u, old[p]);
        }
    }
}

/* Keys of one 16-byte granule of each image: 16 pairs. A pair of granules
 * that are one byte repeated, alike in every converged lane (constant
 * images), is one add by one lane. */
__device__ __forceinline__ void push_granule(const Counters &c, uint4 va, uint4 vb)
{
    const uint32_t wa[4] = {va.x, va.y, va.z, va.w};
    const uint32_t wb[4] = {vb.x, vb.y, vb.z, vb.w};
    const unsigned m = __activemask();
    const int lead = __ffs(m) - 1;
    const uint32_t a0 = __shfl_sync(m, va.x, lead), b0 = __shfl_sync(m, vb.x, lead);
    if (__all_sync(m, ih_repeats<1>(va) && ih_repeats<1>(vb) && va.x == a0 && vb.x == b0)) {
        if ((int)(threadIdx.x & 31u) == lead) {
            c.add(((a0 & 0xffu) << 8) | (b0 & 0xffu), 16u * (uint32_t)__popc(m));
        }
        return;
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        uint32_t key[8];
#pragma unroll
        for (int q = 0; q < 2; q++) {
            /* byte k of a above byte k of b */
#pragma unroll
            for (uint32_t k = 0; k < 4; k++) {
                key[q * 4 + k] = __byte_perm(wa[h * 2 + q], wb[h * 2 + q], (k << 4) | (4 + k)) & 0xffffu;
            }
        }
        add8_each(c, key);
    }
}

__global__ void __launch_bounds__(THREADS, 1) count_vec_kernel(VecArgs p)
{
    extern __shared__ uint32_t sh[];
    Counters c{sh, p.out, p.nkeys};
    zero_shared(sh, (p.nkeys + 1) / 2);
    const ih_geom &g = p.g;
    const uint32_t chunks = (g.total + CHUNK - 1) / CHUNK;
    Run run;
    for (uint32_t ch = blockIdx.x; ch < chunks; ch += gridDim.x) {
        uint4 va[UNROLL], vb[UNROLL];
        bool full[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const uint32_t i = ch * CHUNK + k * THREADS + threadIdx.x;
            full[k] = false;
            if (i >= g.total) {
                continue;
            }
            const ih_granule q = ih_granule_at(g, i);
            const uint8_t *brow = p.b_base + (size_t)q.r * p.b_pitch;
            if (q.full) {
                va[k] = __ldcs(reinterpret_cast<const uint4 *>(q.gp));
                vb[k] = __ldcs(reinterpret_cast<const uint4 *>(brow + (q.gp - q.row)));
                full[k] = true;
            } else {
                /* A granule shared with padding or a neighbour row. */
                for (const uint8_t *s = q.lo(), *e = q.hi(); s < e; s++) {
                    run.push(c, ((uint32_t)*s << 8) | brow[s - q.row]);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            if (full[k]) {
                push_granule(c, va[k], vb[k]);
            }
        }
    }
    run.finish(c);
    flush_shared(c);
}

/* ---- mutual information ---- */

constexpr int MI_THREADS = 256;
constexpr int MI_MAX_BLOCKS = 256;
constexpr size_t MI_PART_OFFSET = 256;   /* after the ticket */
constexpr int MI_PART_SLOTS = 8;         /* doubles per block */
constexpr size_t MI_COL_OFFSET = MI_PART_OFFSET + (size_t)MI_MAX_BLOCKS * MI_PART_SLOTS * 8;

/* Neumaier's compensated sum, with no contraction into fused operations. */
struct CSum {
    double s = 0.0, c = 0.0;
    __device__ __forceinline__ void add(double x)
    {
        const double t = __dadd_rn(s, x);
        if (fabs(s) >= fabs(x)) {
            c = __dadd_rn(c, __dadd_rn(__dsub_rn(s, t), x));
        } else {
            c = __dadd_rn(c, __dadd_rn(__dsub_rn(x, t), s));
        }
        s = t;
    }
    __device__ __forceinline__ void add(const CSum &o)
    {
        add(o.s);
        c = __dadd_rn(c, o.c);
    }
    __device__ __forceinline__ double value() const { return __dadd_rn(s, c); }
};

__device__ __forceinline__ double nlogn(unsigned long long n)
{
    return n > 0 ? __dmul_rn((double)n, log2((double)n)) : 0.0;
}

__device__ __forceinline__ CSum warp_sum(CSum v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        CSum o;
        o.s = __shfl_down_sync(0xffffffffu, v.s, d);
        o.c = __shfl_down_sync(0xffffffffu, v.c, d);
        v.add(o);
    }
    return v;
}

/* Sum of one CSum per thread over the block, in a fixed order; thread 0 has it. */
__device__ CSum block_sum(CSum v, CSum *scratch)
{
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    CSum r;
    if (threadIdx.x == 0) {
        for (int w = 0; w < MI_THREADS / 32; w++) {
            r.add(scratch[w]);
        }
    }
    return r;
}

__device__ unsigned long long block_sum_u64(unsigned long long v, unsigned long long *scratch)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, d);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    unsigned long long r = 0;
    if (threadIdx.x == 0) {
        for (int w = 0; w < MI_THREADS / 32; w++) {
            r += scratch[w];
        }
    }
    return r;
}

/*
 * Every block: its share of the rows (cells' n log n, row sums' n log n, the
 * total) and of the column sums (exact, added into the workspace's columns).
 * The last block: the columns' n log n (zeroing them), the blocks' partial
 * sums in block order, and the results.
 */
__global__ void __launch_bounds__(MI_THREADS) mi_kernel(const unsigned long long *joint,
                                                        uint32_t na, uint32_t nb, uint8_t *ws,
                                                        uint32_t rows_per_slice, double *result)
{
    __shared__ CSum s_scratch[MI_THREADS / 32];
    __shared__ unsigned long long s_u64[MI_THREADS / 32];
    __shared__ unsigned int s_ticket;
    unsigned int *ticket = reinterpret_cast<unsigned int *>(ws);
    double *part = reinterpret_cast<double *>(ws + MI_PART_OFFSET);
    unsigned long long *col = reinterpret_cast<unsigned long long *>(ws + MI_COL_OFFSET);

    CSum s_ab, s_a;
    unsigned long long total = 0;
    const int lane = threadIdx.x & 31;
    if (nb >= 32) {
        /* A warp per row. */
        const uint32_t warps = gridDim.x * (MI_THREADS / 32);
        for (uint32_t i = blockIdx.x * (MI_THREADS / 32) + (threadIdx.x >> 5); i < na;
             i += warps) {
            const unsigned long long *row = joint + (size_t)i * nb;
            unsigned long long sum = 0;
            for (uint32_t k = lane; k < nb; k += 32) {
                const unsigned long long n = row[k];
                sum += n;
                s_ab.add(nlogn(n));
            }
#pragma unroll
            for (int d = 16; d > 0; d >>= 1) {
                sum += __shfl_xor_sync(0xffffffffu, sum, d);
            }
            if (lane == 0) {
                s_a.add(nlogn(sum));
                total += sum;
            }
        }
    } else {
        /* A thread per row. */
        for (uint32_t i = blockIdx.x * MI_THREADS + threadIdx.x; i < na;
             i += gridDim.x * MI_THREADS) {
            const unsigned long long *row = joint + (size_t)i * nb;
            unsigned long long sum = 0;
            for (uint32_t k = 0; k < nb; k++) {
                sum += row[k];
                s_ab.add(nlogn(row[k]));
            }
            s_a.add(nlogn(sum));
            total += sum;
        }
    }
    /* Column sums over slices of rows. */
    const uint32_t col_blocks = (nb + MI_THREADS - 1) / MI_THREADS;
    const uint32_t slices = (na + rows_per_slice - 1) / rows_per_slice;
    for (uint64_t item = blockIdx.x; item < (uint64_t)col_blocks * slices; item += gridDim.x) {
        const uint32_t cb = (uint32_t)(item % col_blocks), sl = (uint32_t)(item / col_blocks);
        const uint32_t k = cb * MI_THREADS + threadIdx.x;
        if (k >= nb) {
            continue;
        }
        const uint32_t r0 = sl * rows_per_slice;
        const uint32_t r1 = na - r0 < rows_per_slice ? na : r0 + rows_per_slice;
        unsigned long long sum = 0;
        for (uint32_t i = r0; i < r1; i++) {
            sum += joint[(size_t)i * nb + k];
        }
        if (sum != 0) {
            atomicAdd(col + k, sum);
        }
    }
    const CSum b_ab = block_sum(s_ab, s_scratch);
    const CSum b_a = block_sum(s_a, s_scratch);
    const unsigned long long b_total = block_sum_u64(total, s_u64);
    if (threadIdx.x == 0) {
        double *p = part + (size_t)blockIdx.x * MI_PART_SLOTS;
        p[0] = b_ab.s;
        p[1] = b_ab.c;
        p[2] = b_a.s;
        p[3] = b_a.c;
        reinterpret_cast<unsigned long long *>(p)[4] = b_total;
    }
    /* Publish, and let the last block finish (as hist_u8.cu's ticket). */
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_ticket = atomicAdd(ticket, 1u);
        if (s_ticket == gridDim.x - 1) {
            __threadfence();
        }
    }
    __syncthreads();
    if (s_ticket != gridDim.x - 1) {
        return;
    }
    CSum s_b;
    for (uint32_t k = threadIdx.x; k < nb; k += MI_THREADS) {
        const unsigned long long n = atomicExch(col + k, 0ull); /* read at L2, leave zero */
        s_b.add(nlogn(n));
    }
    const CSum t_b = block_sum(s_b, s_scratch);
    if (threadIdx.x != 0) {
        return;
    }
    CSum t_ab, t_a;
    unsigned long long n_all = 0;
    for (uint32_t b = 0; b < gridDim.x; b++) {
        const double *p = part + (size_t)b * MI_PART_SLOTS;
        t_ab.add(*reinterpret_cast<const volatile double *>(p));
        t_ab.c = __dadd_rn(t_ab.c, *reinterpret_cast<const volatile double *>(p + 1));
        t_a.add(*reinterpret_cast<const volatile double *>(p + 2));
        t_a.c = __dadd_rn(t_a.c, *reinterpret_cast<const volatile double *>(p + 3));
        n_all += *reinterpret_cast<const volatile unsigned long long *>(p + 4);
    }
    *ticket = 0;
    if (n_all == 0) {
        result[0] = nan("");
        result[1] = nan("");
        return;
    }
    /* The host's formulas (core/info.c). */
    const double n = (double)n_all, lg = log2(n);
    const double ha = lg - t_a.value() / n, hb = lg - t_b.value() / n;
    const double hab = lg - t_ab.value() / n;
    const double mi = ha + hb - hab;
    result[0] = mi < 0.0 ? 0.0 : mi;
    result[1] = hab > 0.0 ? (ha + hb) / hab : 2.0;
}

/* ---- host side ---- */

/* Rows per launch: fewer than 2^31 granules (vec) or segments (scalar). */
uint32_t rows_per_launch(uint64_t units_per_row)
{
    const uint64_t rows = ((uint64_t)IH_MAX_GRANULES - 1) / (units_per_row > 0 ? units_per_row : 1);
    return rows == 0 ? 1u : rows > UINT32_MAX ? UINT32_MAX : (uint32_t)rows;
}

template <class K>
cudaError_t shared_grid(K kernel, size_t smem, int sm_count, uint64_t pixels, uint32_t nkeys,
                        int *grid)
{
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem);
    int bps = 0;
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kernel, THREADS, smem);
    }
    if (e != cudaSuccess) {
        return e;
    }
    /* A block's zeroing and merge cost about as much as counting nkeys
     * pixels: no more blocks than keep that small. */
    uint64_t want = pixels / ((uint64_t)nkeys * 4 + THREADS * 16) + 1;
    const uint64_t resident = (uint64_t)sm_count * (bps > 0 ? bps : 1);
    *grid = (int)(want < resident ? want : resident);
    return cudaSuccess;
}

template <imghist_dtype TA, imghist_dtype TB>
cudaError_t launch_scalar(const ih_joint_job &job, unsigned long long *out, uint32_t nkeys,
                          bool shared, int sm_count, cudaStream_t stream)
{
    auto kernel = count_scalar_kernel<TA, TB>;
    const size_t smem = shared ? (size_t)(nkeys + 1) / 2 * 4 : 0;
    int grid = 0;
    const uint64_t pixels = (uint64_t)job.width * job.height;
    cudaError_t e;
    if (shared) {
        e = shared_grid(kernel, smem, sm_count, pixels, nkeys, &grid);
    } else {
        int bps = 0;
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kernel, THREADS, 0);
        grid = sm_count * (bps > 0 ? bps : 1);
    }
    if (e != cudaSuccess) {
        return e;
    }
    ScalarArgs p;
    p.job = job;
    p.out = out;
    p.nkeys = nkeys;
    p.shared = shared;
    p.seg_per_row = (job.width + THREADS - 1) / THREADS;
    p.seg_div = ih_make_fastdiv(p.seg_per_row);
    const uint32_t band = rows_per_launch(p.seg_per_row);
    for (uint32_t row0 = 0; row0 < job.height; row0 += band) {
        const uint32_t rows = job.height - row0 < band ? job.height - row0 : band;
        p.row0 = row0;
        p.segments = rows * p.seg_per_row;
        const uint64_t g64 = (uint64_t)grid < p.segments ? (uint64_t)grid : p.segments;
        count_scalar_kernel<TA, TB><<<(int)g64, THREADS, smem, stream>>>(p);
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

template <imghist_dtype TB>
cudaError_t launch_scalar_a(const ih_joint_job &job, unsigned long long *out, uint32_t nkeys,
                            bool shared, int sm_count, cudaStream_t stream)
{
    switch (job.a.dtype) {
    case IMGHIST_U8: return launch_scalar<IMGHIST_U8, TB>(job, out, nkeys, shared, sm_count, stream);
    case IMGHIST_U16: return launch_scalar<IMGHIST_U16, TB>(job, out, nkeys, shared, sm_count, stream);
    default: return launch_scalar<IMGHIST_F32, TB>(job, out, nkeys, shared, sm_count, stream);
    }
}

cudaError_t launch_vec(const ih_joint_job &job, unsigned long long *out, uint32_t nkeys,
                       int sm_count, cudaStream_t stream)
{
    auto kernel = count_vec_kernel;
    const size_t smem = (size_t)(nkeys + 1) / 2 * 4;
    int grid = 0;
    cudaError_t e = shared_grid(kernel, smem, sm_count, (uint64_t)job.width * job.height, nkeys,
                                &grid);
    if (e != cudaSuccess) {
        return e;
    }
    const uint32_t row_bytes = job.width;
    const uint32_t per_row =
        ih_granules_per_row(job.a.data, job.a.pitch, row_bytes, job.height);
    const uint32_t band = rows_per_launch(per_row);
    for (uint32_t row0 = 0; row0 < job.height; row0 += band) {
        const uint32_t rows = job.height - row0 < band ? job.height - row0 : band;
        VecArgs p;
        p.g.base = job.a.data + (size_t)row0 * job.a.pitch;
        p.g.pitch = job.a.pitch;
        p.g.width = row_bytes;
        const uint32_t pr = ih_granules_per_row(p.g.base, p.g.pitch, row_bytes, rows);
        p.g.total = rows * pr;
        p.g.per_row = ih_make_fastdiv(pr);
        p.b_base = job.b.data + (size_t)row0 * job.b.pitch;
        p.b_pitch = job.b.pitch;
        p.out = out;
        p.nkeys = nkeys;
        const uint32_t chunks = (p.g.total + CHUNK - 1) / CHUNK;
        const int g = chunks < (uint32_t)grid ? (int)(chunks > 0 ? chunks : 1) : grid;
        kernel<<<g, THREADS, smem, stream>>>(p);
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

} // namespace

cudaError_t ih_launch_joint_count(const ih_joint_job &job, unsigned long long *out, int sm_count,
                                  cudaStream_t stream)
{
    if (job.b.data == nullptr) {
        return cudaErrorInvalidValue; /* pairs only: one image is hist_wide.cu's */
    }
    const uint64_t nkeys64 = (uint64_t)job.cells + (job.outliers ? 1 : 0);
    /* Shared counters (16-bit pairs: 128 KiB for 256 x 256) where a block
     * can have them (sm_80, sm_90; not 256 x 256 on sm_75, sm_86 or sm_89,
     * which count in global memory), with 1 KiB to spare for the kernels'
     * own words. */
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) {
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    }
    if (e != cudaSuccess) {
        return e;
    }
    const bool shared =
        nkeys64 <= IH_JOINT_SHARED_KEYS && (nkeys64 + 1) / 2 * 4 + 1024 <= (uint64_t)optin;
    const uint32_t nkeys = (uint32_t)nkeys64;
    const bool no_mask = job.mask.data == nullptr;
    const uintptr_t a = (uintptr_t)job.a.data, b = (uintptr_t)job.b.data;
    if (shared && job.natural_u8_pair && no_mask && ((a ^ b) & 15) == 0 &&
        (job.height == 1 || ((job.a.pitch ^ job.b.pitch) & 15) == 0)) {
        return launch_vec(job, out, nkeys, sm_count, stream);
    }
    switch (job.b.dtype) {
    case IMGHIST_U8: return launch_scalar_a<IMGHIST_U8>(job, out, nkeys, shared, sm_count, stream);
    case IMGHIST_U16: return launch_scalar_a<IMGHIST_U16>(job, out, nkeys, shared, sm_count, stream);
    default: return launch_scalar_a<IMGHIST_F32>(job, out, nkeys, shared, sm_count, stream);
    }
}

size_t ih_mi_workspace_bytes(uint32_t bins_b)
{
    return MI_COL_OFFSET + (size_t)bins_b * sizeof(unsigned long long);
}

cudaError_t ih_launch_mutual_information(const unsigned long long *joint, uint32_t bins_a,
                                         uint32_t bins_b, void *ws, double *result,
                                         int sm_count, cudaStream_t stream)
{
    /* Enough blocks for the rows (8 per block) and no more than the SMs twice. */
    const uint64_t row_units = bins_b >= 32 ? (bins_a + 7) / 8 : (bins_a + MI_THREADS - 1) / MI_THREADS;
    uint64_t grid = row_units < (uint64_t)sm_count * 2 ? row_units : (uint64_t)sm_count * 2;
    grid = grid < 1 ? 1 : grid > MI_MAX_BLOCKS ? MI_MAX_BLOCKS : grid;
    /* Column items: about two per block. */
    const uint64_t col_blocks = (bins_b + MI_THREADS - 1) / MI_THREADS;
    uint64_t slices = grid * 2 / col_blocks;
    slices = slices < 1 ? 1 : slices > bins_a ? bins_a : slices;
    const uint32_t rows_per_slice = (uint32_t)((bins_a + slices - 1) / slices);
    mi_kernel<<<(int)grid, MI_THREADS, 0, stream>>>(joint, bins_a, bins_b, (uint8_t *)ws,
                                                    rows_per_slice, result);
    return cudaGetLastError();
}
