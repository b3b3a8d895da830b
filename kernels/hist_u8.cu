/*
 * 8-bit, 256-bin histograms.
 *
 * Each block keeps a private histogram in shared memory with 32 replicas of
 * every bin, laid out so that lane L of any warp only touches bank L:
 * counter(bin, L) lives at word bin*32 + L. A warp's 32 increments therefore
 * never conflict, whatever the data (constant images, values that are all
 * multiples of 32, noise all run at the same speed), and the only cost per byte
 * is one shared-memory atomic. Blocks read 16-byte granules (granules.cuh),
 * several loads in flight per thread, over a persistent grid; at the end each
 * block folds its 32 replicas and adds them to a 64-bit global workspace.
 *
 * The last block to finish (a ticket counter) turns the workspace (IH_WS_COPIES
 * copies, to spread the merges' atomics over L2) into the
 * result: it moves the counts to the output, zeroes the workspace for the next
 * launch, and, for equalization, scans the histogram into the CDF and the LUT,
 * so that histogram -> CDF -> LUT is one launch with no host round trip.
 */
#include <stdint.h>

#include "hist_u8.cuh"

namespace {

constexpr int THREADS = IH_HIST_THREADS;
constexpr int LANES = 32;
constexpr int UNROLL = 4;                 /* 16-byte loads in flight per thread */
constexpr int CHUNK = IH_HIST_CHUNK;      /* granules per block per step */
static_assert(CHUNK == THREADS * UNROLL, "IH_HIST_CHUNK must match the unrolling");
constexpr int SH_WORDS = 256 * LANES;     /* 32 KiB of counters */

static_assert(THREADS == 512, "fold_replicas assumes 512 threads");

__device__ __forceinline__ void count_word(uint32_t *shl, uint32_t w)
{
    atomicAdd(shl + ((w & 0xffu) << 5), 1u);
    atomicAdd(shl + (((w >> 8) & 0xffu) << 5), 1u);
    atomicAdd(shl + (((w >> 16) & 0xffu) << 5), 1u);
    atomicAdd(shl + ((w >> 24) << 5), 1u);
}

__device__ __forceinline__ void count_vec(uint32_t *shl, uint4 v)
{
    count_word(shl, v.x);
    count_word(shl, v.y);
    count_word(shl, v.z);
    count_word(shl, v.w);
}

__device__ __forceinline__ void zero_counters(uint32_t *sh)
{
    uint4 *s4 = reinterpret_cast<uint4 *>(sh);
    for (int i = threadIdx.x; i < SH_WORDS / 4; i += THREADS) {
        s4[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
}

/*
 * Walk chunks first, first + step, ... (below end) of g's granules. Whole granules are loaded UNROLL at a time,
 * all loads in flight before the first use, then handed to
 * on_vec(v, row, col); the bytes of granules at a row's edges go one by one to
 * on_byte(value, row, col). row is the row index, col the byte offset in it.
 */
template <class OnVec, class OnByte>
__device__ __forceinline__ void walk_granules(const ih_geom &g, uint32_t first, uint32_t step,
                                              uint32_t end, OnVec on_vec, OnByte on_byte)
{
    const uint32_t stop = end < (g.total + CHUNK - 1) / CHUNK ? end : (g.total + CHUNK - 1) / CHUNK;
    for (uint32_t c = first; c < stop; c += step) {
        const uint32_t c0 = c * CHUNK;
        uint4 v[UNROLL];
        uint32_t row_of[UNROLL], col_of[UNROLL];
        bool full[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const uint32_t i = c0 + k * THREADS + threadIdx.x;
            full[k] = false;
            if (i < g.total) {
                uint32_t r;
                const uint8_t *row, *gp;
                ih_locate(g, i, r, row, gp);
                const uint8_t *end = row + g.width;
                if (gp >= row && gp + 16 <= end) {
                    v[k] = __ldcs(reinterpret_cast<const uint4 *>(gp));
                    row_of[k] = r;
                    col_of[k] = (uint32_t)(gp - row);
                    full[k] = true;
                } else {
                    /* A granule shared with padding or a neighbour row. */
                    const uint8_t *p = gp < row ? row : gp;
                    const uint8_t *q = gp + 16 < end ? gp + 16 : end;
                    for (; p < q; p++) {
                        on_byte((uint32_t)*p, r, (uint32_t)(p - row));
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            if (full[k]) {
                on_vec(v[k], row_of[k], col_of[k]);
            }
        }
    }
}

/* Count chunks first, first + step, ... (below end) of g into the lane's replicas. */
__device__ __forceinline__ void count_granules(uint32_t *shl, const ih_geom &g, uint32_t first,
                                               uint32_t step, uint32_t end)
{
    walk_granules(
        g, first, step, end, [shl](uint4 v, uint32_t, uint32_t) { count_vec(shl, v); },
        [shl](uint32_t b, uint32_t, uint32_t) { atomicAdd(shl + (b << 5), 1u); });
}

/* Fold the 32 replicas of every bin and add them to dst[0..255]. Two threads
 * per bin, each summing 16 replicas in a rotated order so that a warp reads 32
 * different banks. */
__device__ __forceinline__ void fold_replicas(const uint32_t *sh, unsigned long long *dst)
{
    __syncthreads();
    const uint32_t bin = threadIdx.x >> 1;
    const uint32_t half = threadIdx.x & 1;
    uint32_t s = 0;
#pragma unroll
    for (uint32_t j = 0; j < 16; j++) {
        s += sh[bin * LANES + half * 16 + ((j + bin) & 15)];
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    if (half == 0 && s != 0) {
        atomicAdd(dst + bin, (unsigned long long)s);
    }
}

/* Inclusive scan of one value per thread over threads 0..255 (all threads of
 * the block must call it). */
__device__ __forceinline__ unsigned long long scan256(unsigned long long v,
                                                      unsigned long long *warp_tot)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        unsigned long long up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) {
            v += up;
        }
    }
    if (lane == 31 && warp < 8) {
        warp_tot[warp] = v;
    }
    __syncthreads();
    if (threadIdx.x < 256) {
        for (int w = 0; w < warp; w++) {
            v += warp_tot[w];
        }
    }
    return v;
}

/* Run by the last block: workspace -> histogram (and LUT); workspace re-zeroed. */
__device__ void finalize(const ih_hist_launch &l)
{
    __shared__ unsigned long long s_hist[256];
    __shared__ unsigned long long s_warp[8];
    __shared__ unsigned long long s_total;
    __shared__ int s_first;

    const int t = threadIdx.x;
    unsigned long long h = 0;
    if (t == 0) {
        s_first = 256;
    }
    __syncthreads();
    if (t < 256) {
        for (int k = 0; k < IH_WS_COPIES; k++) {
            h += atomicExch(l.ws + k * 256 + t, 0ull); /* read at L2 and leave zero */
        }
        l.hist_out[t] = l.accumulate ? l.hist_out[t] + h : h;
        s_hist[t] = h;
        if (h != 0) {
            atomicMin(&s_first, t);
        }
    }
    if (t == 0) {
        *l.counter = 0;
    }
    if (l.lut_out == nullptr) {
        return;
    }
    const unsigned long long cdf = scan256(h, s_warp);
    if (t == 255) {
        s_total = cdf;
    }
    __syncthreads();
    if (t >= 256) {
        return;
    }
    /* cv::equalizeHist, in the same single-precision steps as the CPU path. */
    const int first = s_first;
    const unsigned long long total = s_total;
    const unsigned long long hf = s_hist[first];
    unsigned int out;
    if (hf == total) {
        out = (unsigned int)first;
    } else if (t <= first) {
        out = 0;
    } else {
        const float scale = __fdiv_rn(255.0f, __ll2float_rn((long long)(total - hf)));
        const int r = __float2int_rn(__fmul_rn(__ll2float_rn((long long)(cdf - hf)), scale));
        out = r > 255 ? 255u : (unsigned int)r;
    }
    l.lut_out[t] = (unsigned char)out;
}

__global__ void __launch_bounds__(THREADS) hist_u8_kernel(ih_geom g, ih_hist_launch l)
{
    __shared__ __align__(16) uint32_t sh[SH_WORDS];
    __shared__ unsigned int s_ticket;

    zero_counters(sh);
    count_granules(sh + (threadIdx.x & 31), g, blockIdx.x, gridDim.x, UINT32_MAX);
    fold_replicas(sh, l.ws + (blockIdx.x % IH_WS_COPIES) * 256);
    if (!l.finalize) {
        return;
    }
    /* Release the block's merges and take a ticket; the last block acquires
     * everyone's. One thread fences, after the barrier, as cooperative groups'
     * grid sync does: the barrier orders the other threads' merges before its
     * fence, and the fence is cumulative. (With a fence in every thread, the
     * fences held a fifth of the stall samples of a 12 MP call.) */
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_ticket = atomicAdd(l.counter, 1u);
        if (s_ticket == gridDim.x - 1) {
            __threadfence();
        }
    }
    __syncthreads();
    if (s_ticket != gridDim.x - 1) {
        return;
    }
    finalize(l);
}

/*
 * The batch: the images' chunks are numbered back to back and cut into runs of
 * `run` chunks; a persistent grid takes the runs in turn (block b: runs b,
 * b + grid, ...), so that no image size leaves blocks idle at the end. The
 * library makes it one run per block (bench/RESULTS.md). A block folds its
 * counters into an image's histogram each time a run leaves that image.
 * Three blocks per SM measured faster than two without the few bytes of
 * spills (80-82 % of the read ceiling against 74-76 %, before the geometry
 * moved to shared memory).
 */
/* Three 512-thread blocks per SM where an SM holds 1536 threads (sm_80 and
 * later; sm_75 holds 1024). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define IH_BATCH_MIN_BLOCKS 2
#else
#define IH_BATCH_MIN_BLOCKS 3
#endif

__global__ void __launch_bounds__(THREADS, IH_BATCH_MIN_BLOCKS)
    hist_u8_batch_kernel(const ih_geom *geoms, const uint32_t *chunk_start, uint32_t count,
                         uint32_t run, unsigned long long *hists)
{
    __shared__ __align__(16) uint32_t sh[SH_WORDS];
    /* The current image's geometry. Read through a pointer into global
     * memory, the compiler loaded it again at every step (ncu: 8.5 M global
     * loads where the pixels need 1.2 M, each in front of a step's
     * addresses): 78-81 % of the read ceiling; from shared memory 83-87 %.
     * A copy in registers measured 77-80 %. */
    __shared__ ih_geom s_geom;
    uint32_t *shl = sh + (threadIdx.x & 31);
    const uint32_t total = chunk_start[count];
    for (uint64_t lo64 = (uint64_t)blockIdx.x * run; lo64 < total;
         lo64 += (uint64_t)gridDim.x * run) {
        const uint32_t lo = (uint32_t)lo64;
        const uint32_t hi = total - lo < run ? total : lo + run;
        /* The image holding chunk lo: the last i with chunk_start[i] <= lo. */
        uint32_t a = 0, b = count - 1;
        while (a < b) {
            const uint32_t m = (a + b + 1) / 2;
            if (chunk_start[m] <= lo) {
                a = m;
            } else {
                b = m - 1;
            }
        }
        for (uint32_t img = a, at = lo; at < hi; img++) {
            const uint32_t base = chunk_start[img], next = chunk_start[img + 1];
            const uint32_t end = next < hi ? next : hi;
            if (threadIdx.x == 0) {
                s_geom = geoms[img];
            }
            zero_counters(sh); /* its barrier publishes s_geom */
            count_granules(shl, s_geom, at - base, 1, end - base);
            fold_replicas(sh, hists + (size_t)img * 256);
            __syncthreads(); /* the fold's reads before the next zeroing */
            at = end;
        }
    }
}

/* LUT lookups from a table replicated per lane (bank = lane, no conflicts):
 * entry v of lane L is byte v&3 of word (v>>2)*32 + L. */
__device__ __forceinline__ uint32_t map_byte(const uint32_t *lutl, uint32_t v)
{
    return (lutl[(v >> 2) << 5] >> ((v & 3) << 3)) & 0xffu;
}

__device__ __forceinline__ uint32_t map_word(const uint32_t *lutl, uint32_t w)
{
    return map_byte(lutl, w & 0xffu) | (map_byte(lutl, (w >> 8) & 0xffu) << 8) |
           (map_byte(lutl, (w >> 16) & 0xffu) << 16) | (map_byte(lutl, w >> 24) << 24);
}

__device__ __forceinline__ void load_lut(uint32_t *s_lut, const unsigned char *lut)
{
    const uint32_t *lut32 = reinterpret_cast<const uint32_t *>(lut);
    for (int i = threadIdx.x; i < 64 * LANES; i += blockDim.x) {
        s_lut[i] = lut32[i >> 5];
    }
    __syncthreads();
}

/* Source and destination share their alignment within 16 bytes on every row,
 * so whole granules map to whole granules. */
__global__ void __launch_bounds__(THREADS) apply_lut_kernel(ih_geom g, uint8_t *dst,
                                                            size_t dst_pitch,
                                                            const unsigned char *lut)
{
    __shared__ uint32_t s_lut[64 * LANES];
    load_lut(s_lut, lut);
    const uint32_t *lutl = s_lut + (threadIdx.x & 31);
    walk_granules(
        g, blockIdx.x, gridDim.x, UINT32_MAX,
        [=](uint4 v, uint32_t r, uint32_t col) {
            uint4 o;
            o.x = map_word(lutl, v.x);
            o.y = map_word(lutl, v.y);
            o.z = map_word(lutl, v.z);
            o.w = map_word(lutl, v.w);
            __stcs(reinterpret_cast<uint4 *>(dst + (size_t)r * dst_pitch + col), o);
        },
        [=](uint32_t b, uint32_t r, uint32_t col) {
            dst[(size_t)r * dst_pitch + col] = (uint8_t)map_byte(lutl, b);
        });
}

/* Any alignments: one byte per thread and step. */
__global__ void __launch_bounds__(THREADS) apply_lut_bytes_kernel(const uint8_t *src,
                                                                  size_t src_pitch, uint8_t *dst,
                                                                  size_t dst_pitch, uint32_t width,
                                                                  uint32_t height,
                                                                  const unsigned char *lut)
{
    __shared__ uint32_t s_lut[64 * LANES];
    load_lut(s_lut, lut);
    const uint32_t *lutl = s_lut + (threadIdx.x & 31);
    for (uint32_t y = blockIdx.y; y < height; y += gridDim.y) {
        const uint8_t *s = src + (size_t)y * src_pitch;
        uint8_t *d = dst + (size_t)y * dst_pitch;
        for (uint32_t x = blockIdx.x * THREADS + threadIdx.x; x < width; x += gridDim.x * THREADS) {
            d[x] = (uint8_t)map_byte(lutl, s[x]);
        }
    }
}

} // namespace

cudaError_t ih_launch_hist_u8(const ih_geom &g, const ih_hist_launch &l, cudaStream_t stream)
{
    hist_u8_kernel<<<l.grid, THREADS, 0, stream>>>(g, l);
    return cudaGetLastError();
}

cudaError_t ih_launch_hist_u8_batch(const ih_geom *geoms, const uint32_t *chunk_start,
                                    uint32_t count, uint32_t run, int grid,
                                    unsigned long long *hists, cudaStream_t stream)
{
    hist_u8_batch_kernel<<<grid, THREADS, 0, stream>>>(geoms, chunk_start, count, run, hists);
    return cudaGetLastError();
}

cudaError_t ih_launch_apply_lut(const ih_geom &src, uint8_t *dst, size_t dst_pitch,
                                const unsigned char *lut, int grid, cudaStream_t stream)
{
    const uint32_t rows = src.total / src.per_row.d;
    const bool same_phase = (((uintptr_t)src.base ^ (uintptr_t)dst) & 15) == 0 &&
                            (rows == 1 || ((src.pitch ^ dst_pitch) & 15) == 0);
    if (same_phase) {
        apply_lut_kernel<<<grid, THREADS, 0, stream>>>(src, dst, dst_pitch, lut);
    } else {
        const uint32_t bx = (src.width + THREADS - 1) / THREADS;
        dim3 g2(bx < 64 ? bx : 64, rows < 65535 ? rows : 65535);
        apply_lut_bytes_kernel<<<g2, THREADS, 0, stream>>>(src.base, src.pitch, dst, dst_pitch,
                                                           src.width, rows, lut);
    }
    return cudaGetLastError();
}

cudaError_t ih_hist_blocks_per_sm(int *hist, int *batch, int *apply)
{
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(hist, hist_u8_kernel, THREADS, 0);
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(batch, hist_u8_batch_kernel, THREADS, 0);
    }
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(apply, apply_lut_kernel, THREADS, 0);
    }
    return e;
}
