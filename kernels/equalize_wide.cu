/*
 * The equalization LUT from a histogram in device memory (the counts scanned,
 * then OpenCV's or PIL's rule as core/equalize_lut.c computes it,
 * equalize_rules.cuh: one block for 256 levels, 64 blocks in two launches for
 * 65536, a block an image for batches of 48 such histograms and more), and
 * the 16-bit lookup: the 65536-entry LUT (128 KiB) in shared memory, one
 * block per SM, 16-byte granules of 8 samples. The whole equalization of
 * small 16-bit images, a block an image, is equalize16_small.cu's.
 */
#include <stdint.h>

#include "equalize16.cuh"
#include "equalize_rules.cuh"
#include "equalize_wide.cuh"
#include "granules.cuh"

namespace {

constexpr int APPLY_THREADS = 1024;
constexpr int UNROLL = 2;
constexpr int CHUNK = APPLY_THREADS * UNROLL;

/* Exclusive scan of one 64-bit value per thread over the block; *total gets
 * the sum. */
__device__ unsigned long long scan_exclusive(unsigned long long v, unsigned long long *warp_tot,
                                             unsigned long long *total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    unsigned long long inc = v;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned long long up = __shfl_up_sync(0xffffffffu, inc, d);
        if (lane >= d) {
            inc += up;
        }
    }
    if (lane == 31) {
        warp_tot[warp] = inc;
    }
    __syncthreads();
    if (threadIdx.x == 0) { /* the warp totals into their exclusive prefix */
        unsigned long long run = 0;
        for (int w = 0; w < LUT_THREADS / 32; w++) {
            const unsigned long long t = warp_tot[w];
            warp_tot[w] = run;
            run += t;
        }
        *total = run;
    }
    __syncthreads();
    return warp_tot[warp] + inc - v;
}

/* The 8-bit LUT: one block, each thread a run of levels. */
__global__ void __launch_bounds__(LUT_THREADS) lut_kernel(const unsigned long long *hist,
                                                          uint32_t levels, uint8_t *lut,
                                                          int *empty, bool pil)
{
    __shared__ unsigned long long s_warp[LUT_THREADS / 32];
    __shared__ unsigned long long s_total;
    __shared__ uint32_t s_first, s_last;
    hist += (size_t)blockIdx.y * levels; /* a batch: image blockIdx.y's */
    lut += (size_t)blockIdx.y * levels;
    const uint32_t per = (levels + LUT_THREADS - 1) / LUT_THREADS;
    const uint32_t v0 = threadIdx.x * per;
    const uint32_t v1 = v0 + per < levels ? v0 + per : levels;
    if (threadIdx.x == 0) {
        s_first = levels;
        s_last = 0;
    }
    unsigned long long mine = 0;
    uint32_t first = levels, last = 0;
    bool any = false;
    for (uint32_t v = v0; v < v1; v++) {
        const unsigned long long h = hist[v];
        mine += h;
        if (h != 0) {
            first = any ? first : v;
            last = v;
            any = true;
        }
    }
    __syncthreads();
    if (any) {
        atomicMin(&s_first, first);
        atomicMax(&s_last, last);
    }
    unsigned long long cum = scan_exclusive(mine, s_warp, &s_total); /* also a barrier */
    const unsigned long long total = s_total;
    const uint32_t f = s_first;
    if (empty != nullptr && threadIdx.x == 0) {
        *empty = total == 0;
    }
    if (total == 0) {
        for (uint32_t v = v0; v < v1; v++) {
            lut[v] = (uint8_t)v; /* identity: the image is copied */
        }
        return;
    }
    const unsigned long long hf = hist[f];
    const unsigned long long step = (total - hist[s_last]) / 255; /* PIL's, 8-bit only */
    for (uint32_t v = v0; v < v1; v++) {
        const unsigned long long below = cum;
        cum += hist[v];
        lut[v] = (uint8_t)(pil ? ih_lut_pil(v, below, step)
                               : ih_lut_opencv(v, cum, total, f, hf, levels - 1));
    }
}

/*
 * The 16-bit LUT (65536 levels, OpenCV's rule) over 64 blocks of 1024
 * levels, in two launches: lut16_sums writes each block's count and first
 * non-empty level to `scratch`; lut16_entries reads those 64 pairs (the
 * total, the first level and the block's offset), scans its block's counts
 * and writes its entries. A single block (as lut_kernel does 256 levels)
 * would put all of the reads and scans on one SM.
 */
constexpr uint32_t LUT16_BLOCKS = IH_LEVELS16 / LUT_THREADS;

/* Sum and min over the block (lut16_sums; every thread calls it; a barrier at the start). */
__device__ __forceinline__ void block_sum_min(unsigned long long &sum, uint32_t &least,
                                              unsigned long long *s_sum, uint32_t *s_min)
{
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, d);
        least = min(least, __shfl_xor_sync(0xffffffffu, least, d));
    }
    __syncthreads();
    if (lane == 0) {
        s_sum[warp] = sum;
        s_min[warp] = least;
    }
    __syncthreads();
    sum = s_sum[lane];
    least = s_min[lane];
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, d);
        least = min(least, __shfl_xor_sync(0xffffffffu, least, d));
    }
}

__global__ void __launch_bounds__(LUT_THREADS) lut16_sums(const unsigned long long *hist,
                                                           unsigned long long *scratch)
{
    __shared__ unsigned long long s_sum[32];
    __shared__ uint32_t s_min[32];
    hist += (size_t)blockIdx.y * IH_LEVELS16; /* a batch: image blockIdx.y's */
    scratch += (size_t)blockIdx.y * 2 * LUT16_BLOCKS;
    const uint32_t v = blockIdx.x * LUT_THREADS + threadIdx.x;
    unsigned long long sum = hist[v];
    uint32_t least = sum != 0 ? v : IH_LEVELS16;
    block_sum_min(sum, least, s_sum, s_min);
    if (threadIdx.x == 0) {
        scratch[blockIdx.x] = sum;
        scratch[LUT16_BLOCKS + blockIdx.x] = least;
    }
}

__global__ void __launch_bounds__(LUT_THREADS) lut16_entries(const unsigned long long *hist,
                                                              const unsigned long long *scratch,
                                                              uint16_t *lut, int *empty)
{
    constexpr uint32_t W = LUT16_BLOCKS / 32; /* the warps that read the pairs */
    static_assert(LUT16_BLOCKS % 32 == 0 && W <= LUT_THREADS / 32, "whole warps read the pairs");
    __shared__ unsigned long long s_total[W], s_before[W];
    __shared__ uint32_t s_first[W];
    __shared__ unsigned long long s_warp[LUT_THREADS / 32];
    __shared__ unsigned long long s_block;
    hist += (size_t)blockIdx.y * IH_LEVELS16; /* a batch: image blockIdx.y's */
    scratch += (size_t)blockIdx.y * 2 * LUT16_BLOCKS;
    lut += (size_t)blockIdx.y * IH_LEVELS16;
    const uint32_t v = blockIdx.x * LUT_THREADS + threadIdx.x;
    const unsigned long long h = hist[v];
    /* The total, the first level and this block's offset from the 64 pairs,
     * which the first W warps reduce; one barrier hands them to the rest. */
    if (threadIdx.x < LUT16_BLOCKS) {
        unsigned long long total = scratch[threadIdx.x];
        uint32_t first = (uint32_t)scratch[LUT16_BLOCKS + threadIdx.x];
        unsigned long long before = threadIdx.x < blockIdx.x ? total : 0;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) {
            total += __shfl_xor_sync(0xffffffffu, total, d);
            before += __shfl_xor_sync(0xffffffffu, before, d);
            first = min(first, __shfl_xor_sync(0xffffffffu, first, d));
        }
        if ((threadIdx.x & 31u) == 0) {
            s_total[threadIdx.x >> 5] = total;
            s_before[threadIdx.x >> 5] = before;
            s_first[threadIdx.x >> 5] = first;
        }
    }
    __syncthreads();
    unsigned long long total = 0, mine = 0;
    uint32_t first = IH_LEVELS16;
#pragma unroll
    for (uint32_t w = 0; w < W; w++) {
        total += s_total[w];
        mine += s_before[w];
        first = min(first, s_first[w]);
    }
    if (empty != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
        *empty = total == 0;
    }
    if (total == 0) {
        lut[v] = (uint16_t)v; /* identity: the image is copied */
        return;
    }
    const unsigned long long hf = hist[first];
    const unsigned long long cum = mine + scan_exclusive(h, s_warp, &s_block) + h;
    lut[v] = (uint16_t)ih_lut_opencv(v, cum, total, first, hf, 65535);
}

/*
 * The 16-bit LUTs of a batch, one block an image (lut16_sums and
 * lut16_entries take 64 blocks an image and read every count twice from
 * memory): warp w owns levels [2048 w, 2048 w + 2048), read as pairs, 512
 * bytes a warp and a load. The first pass sums each warp's levels and finds
 * the first non-empty one; the second, right after (the image's 512 KiB of
 * counts still in L2), scans each warp's levels from its offset with no
 * barrier and writes their entries. Entries as lut16_entries makes them.
 */
constexpr uint32_t LUT16_WARP_LEVELS = IH_LEVELS16 / (LUT_THREADS / 32);
constexpr int LUT16_PAIRS_IN_FLIGHT = 8;

/* f(v, pair) for the lane's pairs of levels v, v + 1 in its warp's range
 * (pairs: the lane's first; base: its level), in order, loads in flight. */
template <typename F>
__device__ __forceinline__ void warp_pairs(const ulonglong2 *pairs, uint32_t base, F &&f)
{
    constexpr uint32_t STEPS = LUT16_WARP_LEVELS / 64; /* a warp's loads */
    for (uint32_t k0 = 0; k0 < STEPS; k0 += LUT16_PAIRS_IN_FLIGHT) {
        ulonglong2 q[LUT16_PAIRS_IN_FLIGHT];
#pragma unroll
        for (int j = 0; j < LUT16_PAIRS_IN_FLIGHT; j++) {
            q[j] = pairs[(k0 + j) * 32];
        }
#pragma unroll
        for (int j = 0; j < LUT16_PAIRS_IN_FLIGHT; j++) {
            f(base + (k0 + j) * 64, q[j]);
        }
    }
}

__global__ void __launch_bounds__(LUT_THREADS) lut16_image_kernel(const unsigned long long *hists,
                                                                  uint16_t *luts)
{
    __shared__ unsigned long long s_sum[LUT_THREADS / 32];
    __shared__ uint32_t s_min[LUT_THREADS / 32];
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const unsigned long long *hist = hists + (size_t)blockIdx.x * IH_LEVELS16;
    uint16_t *lut = luts + (size_t)blockIdx.x * IH_LEVELS16;
    const uint32_t base = warp * LUT16_WARP_LEVELS + 2 * lane;
    const ulonglong2 *pairs = reinterpret_cast<const ulonglong2 *>(hist + base);
    unsigned long long sum = 0;
    uint32_t first = IH_LEVELS16;
    warp_pairs(pairs, base, [&](uint32_t v, const ulonglong2 &q) {
        sum += q.x + q.y;
        first = min(first, q.x != 0 ? v : q.y != 0 ? v + 1 : IH_LEVELS16);
    });
    unsigned long long total = 0, before = 0;
    block_levels(sum, first, s_sum, s_min, total, before);
    if (total == 0) { /* identity: the image is copied */
        for (uint32_t v = threadIdx.x; v < IH_LEVELS16; v += LUT_THREADS) {
            lut[v] = (uint16_t)v;
        }
        return;
    }
    const unsigned long long hf = hist[first];
    unsigned long long run = before; /* the counts of the warp's levels so far */
    warp_pairs(pairs, base, [&](uint32_t v, const ulonglong2 &q) {
        unsigned long long inc = q.x + q.y;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned long long up = __shfl_up_sync(0xffffffffu, inc, d);
            inc += lane >= (uint32_t)d ? up : 0ull;
        }
        const unsigned long long cum_y = run + inc, cum_x = cum_y - q.y;
        const uint32_t ex = ih_lut_opencv(v, cum_x, total, first, hf, 65535);
        const uint32_t ey = ih_lut_opencv(v + 1, cum_y, total, first, hf, 65535);
        *reinterpret_cast<uint32_t *>(lut + v) = ex | (ey << 16);
        run += __shfl_sync(0xffffffffu, inc, 31);
    });
}

/* Images a LUT batch from which lut16_image_kernel takes it: one kernel a
 * batch saves a launch and a pass over the counts where many images keep
 * the SMs busy; a few images (a few SMs busy) are no faster in it, and the
 * two kernels keep them. */
constexpr uint32_t LUT16_IMAGE_MIN = 48;

__device__ __forceinline__ void load_lut16(uint16_t *s_lut, const uint16_t *lut)
{
    const uint4 *src = reinterpret_cast<const uint4 *>(lut);
    uint4 *dst = reinterpret_cast<uint4 *>(s_lut);
    for (int i = threadIdx.x; i < IH_LEVELS16 * 2 / 16; i += blockDim.x) {
        dst[i] = src[i];
    }
    __syncthreads();
}

__device__ __forceinline__ uint32_t map2(const uint16_t *s_lut, uint32_t w)
{
    return (uint32_t)s_lut[w & 0xffffu] | ((uint32_t)s_lut[w >> 16] << 16);
}

/* The lookups of a block's share of g's granules into dst, the LUT in
 * shared memory (src and dst share their 16-byte phase on every row; src is
 * 2-byte aligned). */
__device__ __forceinline__ void apply16_vec_run(const ih_geom &g, uint8_t *dst, size_t dst_pitch,
                                                const uint16_t *s_lut)
{
    const uint32_t chunks = (g.total + CHUNK - 1) / CHUNK;
    for (uint32_t ch = blockIdx.x; ch < chunks; ch += gridDim.x) {
        uint4 v[UNROLL];
        uint8_t *to[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const uint32_t i = ch * CHUNK + k * APPLY_THREADS + threadIdx.x;
            to[k] = nullptr;
            if (i >= g.total) {
                continue;
            }
            const ih_granule q = ih_granule_at(g, i);
            uint8_t *drow = dst + (size_t)q.r * dst_pitch;
            if (q.full) {
                v[k] = __ldcs(reinterpret_cast<const uint4 *>(q.gp));
                to[k] = drow + (q.gp - q.row);
            } else {
                for (const uint8_t *p = q.lo(), *e = q.hi(); p < e; p += 2) {
                    *reinterpret_cast<uint16_t *>(drow + (p - q.row)) =
                        s_lut[*reinterpret_cast<const uint16_t *>(p)];
                }
            }
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            if (to[k] != nullptr) {
                uint4 o;
                o.x = map2(s_lut, v[k].x);
                o.y = map2(s_lut, v[k].y);
                o.z = map2(s_lut, v[k].z);
                o.w = map2(s_lut, v[k].w);
                __stcs(reinterpret_cast<uint4 *>(to[k]), o);
            }
        }
    }
}

__global__ void __launch_bounds__(APPLY_THREADS, 1)
    apply16_vec_kernel(ih_geom g, uint8_t *dst, size_t dst_pitch, const uint16_t *lut)
{
    extern __shared__ __align__(16) uint16_t s_lut[];
    load_lut16(s_lut, lut);
    apply16_vec_run(g, dst, dst_pitch, s_lut);
}

/* A tensor of 16-bit images (image i at g.base + i * src_stride, dst + i *
 * dst_stride, or where ptrs says, its LUT at luts + i * 65536): blocks
 * blockIdx.y, + gridDim.y, ... take images, gridDim.x blocks an image, each
 * with the image's LUT in shared memory as apply16_vec_kernel. */
__global__ void __launch_bounds__(APPLY_THREADS, 1)
    apply16_vec_batch_kernel(ih_geom g, long long src_stride, uint8_t *dst, size_t dst_pitch,
                             long long dst_stride, const uint16_t *luts, uint32_t count,
                             const unsigned long long *ptrs)
{
    extern __shared__ __align__(16) uint16_t s_lut[];
    for (uint32_t img = blockIdx.y; img < count; img += gridDim.y) {
        __syncthreads(); /* the previous image's lookups are done */
        load_lut16(s_lut, luts + (size_t)img * IH_LEVELS16);
        ih_geom gi = g;
        uint8_t *d = dst;
        image_at(ptrs, img, gi.base, src_stride, d, dst_stride);
        apply16_vec_run(gi, d, dst_pitch, s_lut);
    }
}

/* Any alignment: a sample per thread and step, rows cut into segments. */
__global__ void __launch_bounds__(APPLY_THREADS, 1)
    apply16_scalar_kernel(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                          uint32_t width, uint32_t seg_per_row, ih_fastdiv seg_div,
                          uint32_t segments, const uint16_t *lut)
{
    extern __shared__ __align__(16) uint16_t s_lut[];
    load_lut16(s_lut, lut);
    const bool sa = ((uintptr_t)src & 1) == 0, da = ((uintptr_t)dst & 1) == 0;
    for (uint32_t s = blockIdx.x; s < segments; s += gridDim.x) {
        const uint32_t r = ih_div(seg_div, s);
        const uint32_t x = (s - r * seg_per_row) * APPLY_THREADS + threadIdx.x;
        if (x >= width) {
            continue;
        }
        const uint32_t v = s_lut[load16(src + (size_t)r * src_pitch + (size_t)x * 2, sa)];
        uint8_t *d = dst + (size_t)r * dst_pitch + (size_t)x * 2;
        if (da) {
            *reinterpret_cast<uint16_t *>(d) = (uint16_t)v;
        } else {
            d[0] = (uint8_t)v;
            d[1] = (uint8_t)(v >> 8);
        }
    }
}

/* Whether a block of the current device holds a 16-bit LUT in shared memory
 * (128 KiB: sm_80 and sm_90; not sm_75, sm_86 or sm_89, whose lookups gather
 * from the LUT in L2 instead). */
cudaError_t lut16_fits(bool &fits)
{
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) {
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    }
    fits = e == cudaSuccess && (size_t)optin >= LUT16_BYTES;
    return e;
}

/*
 * The lookups of a batch laid out as a tensor: image i at src + i * src_stride
 * (dst likewise), its LUT at luts + i * 65536 (or 256) entries. Blocks
 * blockIdx.y, + gridDim.y, ... take whole images; within one, sample k of the
 * image (row k / width, fast division: below 2^31 samples) per thread and
 * step, so that narrow images keep the warps full. 8-bit: the image's LUT in
 * shared memory; 16-bit: gathered from its LUT in global memory (L2), which
 * a block of a small image would otherwise spend longer loading than using.
 */
template <typename T>
__global__ void __launch_bounds__(256)
    apply_batch_kernel(const uint8_t *src, long long src_stride, size_t src_pitch, uint8_t *dst,
                       long long dst_stride, size_t dst_pitch, uint32_t width, uint32_t samples,
                       ih_fastdiv row_div, const T *luts, uint32_t count,
                       const unsigned long long *ptrs)
{
    __shared__ uint8_t s_lut8[256];
    for (uint32_t img = blockIdx.y; img < count; img += gridDim.y) {
        const T *lut = luts + (size_t)img * (sizeof(T) == 1 ? 256 : IH_LEVELS16);
        if constexpr (sizeof(T) == 1) {
            __syncthreads(); /* the previous image's lookups are done */
            if (threadIdx.x < 256) {
                s_lut8[threadIdx.x] = lut[threadIdx.x];
            }
            __syncthreads();
        }
        const uint8_t *s = src;
        uint8_t *d = dst;
        image_at(ptrs, img, s, src_stride, d, dst_stride);
        const bool sa = (((uintptr_t)s | src_pitch) & (sizeof(T) - 1)) == 0;
        const bool da = (((uintptr_t)d | dst_pitch) & (sizeof(T) - 1)) == 0;
        for (uint32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < samples;
             k += gridDim.x * blockDim.x) {
            const uint32_t r = ih_div(row_div, k), x = k - r * width;
            const uint8_t *p = s + (size_t)r * src_pitch + (size_t)x * sizeof(T);
            uint8_t *q = d + (size_t)r * dst_pitch + (size_t)x * sizeof(T);
            if constexpr (sizeof(T) == 1) {
                *q = s_lut8[*p];
            } else {
                const uint32_t v = __ldg(lut + load16(p, sa));
                if (da) {
                    *reinterpret_cast<uint16_t *>(q) = (uint16_t)v;
                } else {
                    q[0] = (uint8_t)v;
                    q[1] = (uint8_t)(v >> 8);
                }
            }
        }
    }
}

/*
 * Natural 16-bit histograms of a batch of small images added straight to
 * their 65536 global counters each (image i's at counts + i * 65536): a
 * block's private copy of 65536 counters cost more to clear and fold than
 * a small image takes to count. Tensors try the S16 batch kernels first;
 * this takes those they do not and single images of up to 2^20 samples.
 * Lanes of a warp with the same sample add once (__match_any_sync), so that
 * flat regions do not queue on one address of global memory, where such a
 * queue costs far more than the match (the one-block kernel of
 * equalize16_small.cu, whose atomics are in shared memory, is the other way
 * round). mask: NULL, or image i's at
 * mask + i * mask_stride, a sample counted where its byte is not 0; with
 * ptrs, image i and its mask at ptrs[2 i] and ptrs[2 i + 1].
 */
__global__ void __launch_bounds__(256)
    hist16_global_kernel(const uint8_t *src, long long src_stride, size_t src_pitch,
                         const uint8_t *mask, long long mask_stride, size_t mask_pitch,
                         uint32_t width, uint32_t samples, ih_fastdiv row_div,
                         unsigned long long *counts, uint32_t count,
                         const unsigned long long *__restrict__ ptrs)
{
    const uint32_t lane = threadIdx.x & 31u;
    for (uint32_t img = blockIdx.y; img < count; img += gridDim.y) {
        const uint8_t *s = ptrs != nullptr ? (const uint8_t *)(uintptr_t)ptrs[2 * (size_t)img]
                                           : src + (long long)img * src_stride;
        const uint8_t *m =
            mask == nullptr ? nullptr
            : ptrs != nullptr ? (const uint8_t *)(uintptr_t)ptrs[2 * (size_t)img + 1]
                              : mask + (long long)img * mask_stride;
        unsigned long long *h = counts + (size_t)img * IH_LEVELS16;
        const bool sa = (((uintptr_t)s | src_pitch) & 1) == 0;
        /* whole warps step together (the vote needs every lane) */
        for (uint32_t k0 = blockIdx.x * blockDim.x + (threadIdx.x & ~31u); k0 < samples;
             k0 += gridDim.x * blockDim.x) {
            const uint32_t k = k0 + lane;
            bool in = k < samples;
            uint32_t v = 0;
            if (in) {
                const uint32_t r = ih_div(row_div, k), x = k - r * width;
                v = load16(s + (size_t)r * src_pitch + (size_t)x * 2, sa);
                in = m == nullptr || m[(size_t)r * mask_pitch + x] != 0;
            }
            const uint32_t peers = __match_any_sync(0xffffffffu, in ? v : 0x10000u + lane);
            if (in && lane == (uint32_t)(__ffs(peers) - 1)) {
                atomicAdd(h + v, (unsigned long long)__popc(peers));
            }
        }
    }
}

} // namespace

cudaError_t ih_launch_hist16_batch(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                   const uint8_t *mask, ptrdiff_t mask_stride, size_t mask_pitch,
                                   uint32_t width, uint32_t height, unsigned long long *counts,
                                   uint32_t count, const unsigned long long *ptrs, int sm_count,
                                   cudaStream_t stream)
{
    const uint64_t samples = (uint64_t)width * height;
    if (samples >= IH_MAX_GRANULES || width == 0) {
        return cudaErrorInvalidValue;
    }
    uint64_t gx = (samples + 1023) / 1024; /* about 4 samples a thread */
    const uint64_t cap = (uint64_t)sm_count * 16;
    gx = gx < cap ? gx : cap;
    uint64_t gy = cap / gx;
    gy = gy < count ? gy : count;
    gy = gy < 65535 ? (gy > 0 ? gy : 1) : 65535;
    hist16_global_kernel<<<dim3((unsigned)gx, (unsigned)gy), 256, 0, stream>>>(
        src, src_stride, src_pitch, mask, mask_stride, mask_pitch, width, (uint32_t)samples,
        ih_make_fastdiv(width), counts, count, ptrs);
    return cudaGetLastError();
}

cudaError_t ih_launch_equalize_lut(const unsigned long long *hist, uint32_t levels, void *lut,
                                   int *empty, bool pil, unsigned long long *scratch,
                                   cudaStream_t stream)
{
    if (levels == IH_LEVELS16 && !pil && scratch != nullptr) {
        lut16_sums<<<LUT16_BLOCKS, LUT_THREADS, 0, stream>>>(hist, scratch);
        lut16_entries<<<LUT16_BLOCKS, LUT_THREADS, 0, stream>>>(hist, scratch, (uint16_t *)lut,
                                                                 empty);
    } else if (levels == 256) {
        lut_kernel<<<1, LUT_THREADS, 0, stream>>>(hist, levels, (uint8_t *)lut, empty, pil);
    } else {
        return cudaErrorInvalidValue; /* no PIL rule for 65536 levels; scratch is needed */
    }
    return cudaGetLastError();
}

cudaError_t ih_launch_apply_lut16(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                  size_t dst_pitch, uint32_t width, uint32_t height,
                                  const uint16_t *lut, int sm_count, cudaStream_t stream)
{
    bool fits = false;
    cudaError_t e = lut16_fits(fits);
    if (e != cudaSuccess) {
        return e;
    }
    if (!fits) {
        /* the batch's gather, one image, in bands below 2^31 samples */
        const uint64_t band = ((uint64_t)IH_MAX_GRANULES - 1) / (width > 0 ? width : 1);
        for (uint64_t row0 = 0; row0 < height; row0 += band) {
            const uint32_t rows = (uint32_t)(height - row0 < band ? height - row0 : band);
            e = ih_launch_apply_lut_batch(src + row0 * src_pitch, 0, src_pitch,
                                          dst + row0 * dst_pitch, 0, dst_pitch, width, rows,
                                          IH_LEVELS16, lut, 1, nullptr, sm_count, stream);
            if (e != cudaSuccess) {
                return e;
            }
        }
        return cudaSuccess;
    }
    const bool vec = width < (1u << 30) && ((uintptr_t)src & 1) == 0 && (((uintptr_t)src ^ (uintptr_t)dst) & 15) == 0 &&
                     (height == 1 || ((src_pitch ^ dst_pitch) & 15) == 0);
    e = vec ? cudaFuncSetAttribute(apply16_vec_kernel,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)LUT16_BYTES)
                        : cudaFuncSetAttribute(apply16_scalar_kernel,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)LUT16_BYTES);
    if (e != cudaSuccess) {
        return e;
    }
    const uint64_t row_units = vec ? ih_granules_per_row(src, src_pitch, width * 2, height)
                                   : (width + APPLY_THREADS - 1) / APPLY_THREADS;
    uint64_t band = ((uint64_t)IH_MAX_GRANULES - 1) / row_units;
    band = band < 1 ? 1 : band;
    /* Loading the LUT costs a block 128 KiB of reads: few blocks for small images. */
    const uint64_t pixels = (uint64_t)width * height;
    uint64_t grid = pixels / 65536 + 1;
    grid = grid < (uint64_t)sm_count ? grid : (uint64_t)sm_count;
    for (uint64_t row0 = 0; row0 < height; row0 += band) {
        const uint32_t rows = (uint32_t)(height - row0 < band ? height - row0 : band);
        const uint8_t *s = src + row0 * src_pitch;
        uint8_t *d = dst + row0 * dst_pitch;
        if (vec) {
            ih_geom g;
            g.base = s;
            g.pitch = src_pitch;
            g.width = width * 2;
            const uint32_t pr = ih_granules_per_row(s, src_pitch, width * 2, rows);
            g.total = rows * pr;
            g.per_row = ih_make_fastdiv(pr);
            const uint64_t chunks = (g.total + CHUNK - 1) / CHUNK;
            const int gr = (int)(chunks < grid ? (chunks > 0 ? chunks : 1) : grid);
            apply16_vec_kernel<<<gr, APPLY_THREADS, LUT16_BYTES, stream>>>(g, d, dst_pitch, lut);
        } else {
            const uint32_t spr = (uint32_t)row_units;
            const uint32_t segs = rows * spr;
            const int gr = (int)(segs < grid ? segs : grid);
            apply16_scalar_kernel<<<gr, APPLY_THREADS, LUT16_BYTES, stream>>>(
                s, src_pitch, d, dst_pitch, width, spr, ih_make_fastdiv(spr), segs, lut);
        }
        e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

cudaError_t ih_launch_equalize_lut_batch(const unsigned long long *hists, uint32_t levels,
                                         void *luts, uint32_t count, bool pil,
                                         unsigned long long *scratch, cudaStream_t stream)
{
    for (uint32_t i0 = 0; i0 < count; i0 += 65535) {
        const uint32_t n = count - i0 < 65535 ? count - i0 : 65535;
        const unsigned long long *h = hists + (size_t)i0 * levels;
        if (levels == IH_LEVELS16 && !pil && scratch != nullptr) {
            uint16_t *l = (uint16_t *)luts + (size_t)i0 * IH_LEVELS16;
            unsigned long long *sc = scratch + (size_t)i0 * 2 * LUT16_BLOCKS;
            if (n >= LUT16_IMAGE_MIN) {
                lut16_image_kernel<<<n, LUT_THREADS, 0, stream>>>(h, l);
            } else {
                lut16_sums<<<dim3(LUT16_BLOCKS, n), LUT_THREADS, 0, stream>>>(h, sc);
                lut16_entries<<<dim3(LUT16_BLOCKS, n), LUT_THREADS, 0, stream>>>(h, sc, l,
                                                                                 nullptr);
            }
        } else if (levels == 256) {
            lut_kernel<<<dim3(1, n), LUT_THREADS, 0, stream>>>(h, levels,
                                                              (uint8_t *)luts + (size_t)i0 * 256,
                                                              nullptr, pil);
        } else {
            return cudaErrorInvalidValue;
        }
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

cudaError_t ih_launch_apply_lut_batch(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                      uint8_t *dst, ptrdiff_t dst_stride, size_t dst_pitch,
                                      uint32_t width, uint32_t height, uint32_t levels,
                                      const void *luts, uint32_t count,
                                      const unsigned long long *ptrs, int sm_count,
                                      cudaStream_t stream)
{
    const uint64_t samples = (uint64_t)width * height;
    if (samples >= IH_MAX_GRANULES || width == 0 || (levels != 256 && levels != IH_LEVELS16)) {
        return cudaErrorInvalidValue;
    }
    /* 16-bit images of 2^16 samples and more whose sources and destinations
     * keep one 16-byte phase (rows and images alike): each block with its
     * image's LUT in shared memory and whole granules, as a single image's
     * lookup (the gather below reads large images well under the memory's
     * speed); a block per 65536 samples, the batch's blocks at most an SM
     * each. From 2^16 samples: below it a block would load a 128 KiB LUT
     * for fewer bytes of pixels. */
    bool fits = false;
    if (levels == IH_LEVELS16) {
        const cudaError_t e = lut16_fits(fits);
        if (e != cudaSuccess) {
            return e;
        }
    }
    const bool vec = fits && samples >= (UINT64_C(1) << 16) &&
                     ((uintptr_t)src & 1) == 0 && (((uintptr_t)src ^ (uintptr_t)dst) & 15) == 0 &&
                     (height == 1 || ((src_pitch ^ dst_pitch) & 15) == 0) && src_stride % 16 == 0 &&
                     dst_stride % 16 == 0;
    if (vec) {
        const uint32_t per_row = ih_granules_per_row(src, src_pitch, width * 2, height);
        if ((uint64_t)per_row * height < IH_MAX_GRANULES) {
            cudaError_t e = cudaFuncSetAttribute(apply16_vec_batch_kernel,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)LUT16_BYTES);
            if (e != cudaSuccess) {
                return e;
            }
            ih_geom g;
            g.base = src;
            g.pitch = src_pitch;
            g.width = width * 2;
            g.total = per_row * height;
            g.per_row = ih_make_fastdiv(per_row);
            const uint64_t share = (uint64_t)(sm_count > 0 ? sm_count : 1) / count;
            uint64_t gx = samples / 65536 + 1;
            gx = gx < share ? gx : share;
            gx = gx > 0 ? gx : 1;
            const uint32_t gy = count < 65535 ? count : 65535;
            apply16_vec_batch_kernel<<<dim3((unsigned)gx, gy), APPLY_THREADS, LUT16_BYTES,
                                       stream>>>(g, (long long)src_stride, dst, dst_pitch,
                                                 (long long)dst_stride,
                                                 (const uint16_t *)luts, count, ptrs);
            return cudaGetLastError();
        }
    }
    /* about 8 samples a thread, at most 16 blocks an SM in all */
    uint64_t gx = (samples + 2047) / 2048;
    const uint64_t cap = (uint64_t)sm_count * 16;
    gx = gx < cap ? gx : cap;
    uint64_t gy = cap / gx;
    gy = gy < count ? gy : count;
    gy = gy < 65535 ? (gy > 0 ? gy : 1) : 65535;
    const dim3 grid((unsigned)gx, (unsigned)gy);
    if (levels == 256) {
        apply_batch_kernel<uint8_t><<<grid, 256, 0, stream>>>(
            src, src_stride, src_pitch, dst, dst_stride, dst_pitch, width, (uint32_t)samples,
            ih_make_fastdiv(width), (const uint8_t *)luts, count, ptrs);
    } else {
        apply_batch_kernel<uint16_t><<<grid, 256, 0, stream>>>(
            src, src_stride, src_pitch, dst, dst_stride, dst_pitch, width, (uint32_t)samples,
            ih_make_fastdiv(width), (const uint16_t *)luts, count, ptrs);
    }
    return cudaGetLastError();
}
