/*
 * The 8-bit kernels' block-level pieces (device code, included by
 * hist_u8.cu and equalize_batch.cu): 512-thread blocks keep a private
 * histogram in shared memory with 32 replicas of every bin, laid out so that
 * lane L of any warp only touches bank L (counter(bin, L) at word bin*32 + L);
 * they walk an image's 16-byte granules (granules.cuh) with several loads in
 * flight, fold the replicas, scan the histogram and build a LUT; and look up
 * through a LUT replicated per lane.
 */
#ifndef IMGHIST_HIST_U8_BLOCK_CUH
#define IMGHIST_HIST_U8_BLOCK_CUH

#include <stdint.h>

#include <type_traits>

#include "equalize_rules.cuh"
#include "hist_u8.cuh"

/* Three 512-thread blocks per SM where an SM holds 1536 threads (sm_80 and
 * later; sm_75 holds 1024): the batch kernels' occupancy. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define IH_BATCH_MIN_BLOCKS 2
#else
#define IH_BATCH_MIN_BLOCKS 3
#endif

namespace ih_u8 {


constexpr int THREADS = IH_HIST_THREADS;
constexpr int LANES = 32;
constexpr int UNROLL = 4;                 /* 16-byte loads in flight per thread */
constexpr int CHUNK = IH_HIST_CHUNK;      /* granules per block per step */
static_assert(CHUNK == THREADS * UNROLL, "IH_HIST_CHUNK must match the unrolling");
constexpr int SH_WORDS = 256 * LANES;     /* 32 KiB of counters */

static_assert(THREADS == 512, "fold_replicas assumes 512 threads");

/*
 * One increment of the counter at shared-memory address a (a 32-bit shared
 * address: the lane's column plus bin * 128).
 */
__device__ __forceinline__ void inc_shared(uint32_t a, uint32_t n)
{
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(a), "r"(n) : "memory");
}

/*
 * The four bytes of w, each to its bin in the lane's column (col: the 32-bit
 * shared address of the lane's counter of bin 0). Each byte costs one PRMT
 * (the byte, zero-extended), one address computation and the atomic: the
 * integer pipe, not the atomics, is what bounds the count.
 */
__device__ __forceinline__ void count_word(uint32_t col, uint32_t w)
{
    inc_shared(col + (__byte_perm(w, 0, 0x4440) << 7), 1u);
    inc_shared(col + (__byte_perm(w, 0, 0x4441) << 7), 1u);
    inc_shared(col + (__byte_perm(w, 0, 0x4442) << 7), 1u);
    inc_shared(col + (__byte_perm(w, 0, 0x4443) << 7), 1u);
}

/*
 * A granule's 16 bytes. Where every lane of the (converged) warp holds a
 * granule of one repeated byte (constant images, flat regions, runs of 16
 * bytes or more), each lane adds 16 at once: one atomic instruction where the
 * bytes would take sixteen, so such data reads at the memory's speed. The
 * test costs a few integer instructions and a vote on other data. A warp
 * whose lanes disagree takes the byte-by-byte path in every lane, so mixed
 * data never pays for both.
 */
__device__ __forceinline__ void count_vec(uint32_t col, uint4 v)
{
    const uint32_t r = __byte_perm(v.x, 0, 0); /* byte 0 in all four places */
    const bool flat = ((v.x ^ r) | (v.y ^ r) | (v.z ^ r) | (v.w ^ r)) == 0;
    if (__all_sync(__activemask(), flat)) {
        inc_shared(col + ((r & 0xffu) << 7), 16u);
        return;
    }
    count_word(col, v.x);
    count_word(col, v.y);
    count_word(col, v.z);
    count_word(col, v.w);
}

/* The 32-bit shared address of the lane's column of sh (the replicas of
 * lane L: words bin*32 + L). */
__device__ __forceinline__ uint32_t lane_column(const uint32_t *sh)
{
    return (uint32_t)__cvta_generic_to_shared(sh + (threadIdx.x & 31));
}

__device__ __forceinline__ void zero_counters(uint32_t *sh)
{
    uint4 *s4 = reinterpret_cast<uint4 *>(sh);
    for (int i = threadIdx.x; i < SH_WORDS / 4; i += THREADS) {
        s4[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
}

/* How walk_granules finds a granule: GENERIC any geometry (a row's edge
 * granules go byte by byte); FULL a 16-byte aligned base, pitch and width, so
 * that every granule lies wholly inside its row; FLAT those rows packed as
 * well (or one row), so that granule i starts at base + 16 i. */
enum WalkMode { WALK_GENERIC, WALK_FULL, WALK_FLAT };

/* walk_as without a load-phase companion (below). */
struct NoAside {
    __device__ uint32_t operator()(uint32_t, uint32_t) const { return 0u; }
};

/* The walk by WIDTH threads (t: this one's index among them) in chunks of
 * WIDTH * UNROLL granules; KEEP loads with the read-only cache (the bytes
 * stay in L1 for a second walk), else evict-first. ASIDE (other than
 * NoAside): aside(row, col) is evaluated beside each whole granule's load,
 * before any granule is used, and its value handed to on_vec as a fourth
 * argument, so that its own loads (a mask's bytes) are in flight with the
 * granules' rather than each waited for after the previous granule's
 * atomics (whose asm is a compiler barrier to memory operations). */
template <int MODE, int WIDTH, bool KEEP, class OnVec, class OnByte, class Aside = NoAside>
__device__ __forceinline__ void walk_as(const ih_geom &g, uint32_t t, uint32_t first, uint32_t step,
                                        uint32_t end, OnVec on_vec, OnByte on_byte,
                                        Aside aside = Aside{})
{
    constexpr bool ASIDE = !std::is_same<Aside, NoAside>::value;
    constexpr uint32_t SPAN = WIDTH * UNROLL;
    const uint32_t stop = end < (g.total + SPAN - 1) / SPAN ? end : (g.total + SPAN - 1) / SPAN;
    for (uint32_t c = first; c < stop; c += step) {
        const uint32_t c0 = c * SPAN;
        uint4 v[UNROLL];
        uint32_t row_of[UNROLL], col_of[UNROLL], aux[UNROLL];
        bool full[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const uint32_t i = c0 + k * WIDTH + t;
            full[k] = false;
            if (i < g.total) {
                uint32_t r;
                const uint8_t *row, *gp;
                if constexpr (MODE == WALK_FLAT) {
                    /* r and the column only where the caller uses them */
                    r = ih_div(g.per_row, i);
                    gp = g.base + (size_t)i * 16;
                    row = g.base + (size_t)r * g.pitch;
                } else {
                    ih_locate(g, i, r, row, gp);
                }
                const uint8_t *end = row + g.width;
                if (MODE != WALK_GENERIC || (gp >= row && gp + 16 <= end)) {
                    const uint4 *p = reinterpret_cast<const uint4 *>(gp);
                    v[k] = KEEP ? __ldg(p) : __ldcs(p);
                    row_of[k] = r;
                    col_of[k] = (uint32_t)(gp - row);
                    full[k] = true;
                    if constexpr (ASIDE) {
                        aux[k] = aside(r, col_of[k]);
                    }
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
                if constexpr (ASIDE) {
                    on_vec(v[k], row_of[k], col_of[k], aux[k]);
                } else {
                    on_vec(v[k], row_of[k], col_of[k]);
                }
            }
        }
    }
}

/*
 * Walk chunks first, first + step, ... (below end) of g's granules, by WIDTH
 * threads (t: this one's index among them; chunks of WIDTH * UNROLL
 * granules). Whole granules are loaded UNROLL at a time, all loads in flight
 * before the first use, then handed to on_vec(v, row, col); the bytes of
 * granules at a row's edges go one by one to on_byte(value, row, col). row is
 * the row index, col the byte offset in it. Aligned geometries skip the edge
 * tests and, packed, the division that finds a granule's row (the integer
 * instructions around the atomics are what bounds the count).
 */
template <int WIDTH, bool KEEP, class OnVec, class OnByte, class Aside = NoAside>
__device__ __forceinline__ void walk_granules_by(const ih_geom &g, uint32_t t, uint32_t first,
                                                 uint32_t step, uint32_t end, OnVec on_vec,
                                                 OnByte on_byte, Aside aside = Aside{})
{
    const bool one_row = g.total == g.per_row.d;
    if ((((uintptr_t)g.base | g.width) & 15) != 0 || (!one_row && (g.pitch & 15) != 0)) {
        walk_as<WALK_GENERIC, WIDTH, KEEP>(g, t, first, step, end, on_vec, on_byte, aside);
    } else if (one_row || g.pitch == (size_t)g.per_row.d * 16) {
        walk_as<WALK_FLAT, WIDTH, KEEP>(g, t, first, step, end, on_vec, on_byte, aside);
    } else {
        walk_as<WALK_FULL, WIDTH, KEEP>(g, t, first, step, end, on_vec, on_byte, aside);
    }
}

/* The block's walk: all THREADS threads, chunks of CHUNK granules (aside:
 * walk_as'). */
template <class OnVec, class OnByte, class Aside = NoAside>
__device__ __forceinline__ void walk_granules(const ih_geom &g, uint32_t first, uint32_t step,
                                              uint32_t end, OnVec on_vec, OnByte on_byte,
                                              Aside aside = Aside{})
{
    walk_granules_by<THREADS, false>(g, threadIdx.x, first, step, end, on_vec, on_byte, aside);
}

/* Count chunks first, first + step, ... (below end) of g into the lane's
 * replicas (col: lane_column). */
__device__ __forceinline__ void count_granules(uint32_t col, const ih_geom &g, uint32_t first,
                                               uint32_t step, uint32_t end)
{
    walk_granules(
        g, first, step, end, [col](uint4 v, uint32_t, uint32_t) { count_vec(col, v); },
        [col](uint32_t b, uint32_t, uint32_t) { inc_shared(col + (b << 7), 1u); });
}

/* After a barrier, the sum (modulo 2^32) of the 32 replicas of bin
 * threadIdx.x / 2, in both threads of the pair: each sums 16 replicas in a
 * rotated order so that a warp reads 32 different banks. */
__device__ __forceinline__ uint32_t pair_bin_sum(const uint32_t *sh)
{
    __syncthreads();
    const uint32_t bin = threadIdx.x >> 1;
    const uint32_t half = threadIdx.x & 1;
    uint32_t s = 0;
#pragma unroll
    for (uint32_t j = 0; j < 16; j++) {
        s += sh[bin * LANES + half * 16 + ((j + bin) & 15)];
    }
    return s + __shfl_xor_sync(0xffffffffu, s, 1);
}

/* Fold the 32 replicas of every bin and add them to dst[0..255]. */
__device__ __forceinline__ void fold_replicas(const uint32_t *sh, unsigned long long *dst)
{
    const uint32_t s = pair_bin_sum(sh);
    if ((threadIdx.x & 1) == 0 && s != 0) {
        atomicAdd(dst + (threadIdx.x >> 1), (unsigned long long)s);
    }
}

/*
 * fold_replicas for counters that are never zeroed: adds to dst[0..255] what
 * every bin gained since the previous call (seen: the bin's sum then, kept by
 * the caller in the thread's register, 0 at first). The sums are modulo 2^32,
 * so the difference is exact while one call's share of a bin stays below 2^32
 * (as fold_replicas' sum of zeroed counters). The caller keeps the counters
 * from changing until every thread has read them (a barrier).
 */
__device__ __forceinline__ void fold_since(const uint32_t *sh, unsigned long long *dst,
                                           uint32_t &seen)
{
    const uint32_t s = pair_bin_sum(sh);
    const uint32_t gained = s - seen;
    seen = s;
    if ((threadIdx.x & 1) == 0 && gained != 0) {
        atomicAdd(dst + (threadIdx.x >> 1), (unsigned long long)gained);
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

/*
 * LUT lookups from a table replicated per lane: entry v of lane L is the low
 * byte of word v*32 + L (bank L: no conflicts, whatever the bytes), 32 KiB.
 * lutl is the lane's byte 0 (lane_lut); a lookup is one byte load at
 * lutl + v*128. Each byte costs one PRMT to take it out of its word, one
 * address computation and the load, and its share of the three PRMT that put
 * four results back together: about a quarter of the integer instructions of
 * a table of packed bytes (shift, mask and shift again), which would hold
 * the lookups below the speed of a copy.
 */
constexpr int LUT_WORDS = 256 * LANES;

__device__ __forceinline__ const uint8_t *lane_lut(const uint32_t *s_lut)
{
    return reinterpret_cast<const uint8_t *>(s_lut + (threadIdx.x & 31));
}

__device__ __forceinline__ uint32_t map_byte(const uint8_t *lutl, uint32_t v)
{
    return lutl[v << 7];
}

__device__ __forceinline__ uint32_t map_word(const uint8_t *lutl, uint32_t w)
{
    const uint32_t b0 = map_byte(lutl, __byte_perm(w, 0, 0x4440));
    const uint32_t b1 = map_byte(lutl, __byte_perm(w, 0, 0x4441));
    const uint32_t b2 = map_byte(lutl, __byte_perm(w, 0, 0x4442));
    const uint32_t b3 = map_byte(lutl, __byte_perm(w, 0, 0x4443));
    /* [b0 b1 . .] and [b2 b3 . .], then their low halves side by side */
    return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

__device__ __forceinline__ uint4 map_vec(const uint8_t *lutl, uint4 v)
{
    uint4 o;
    o.x = map_word(lutl, v.x);
    o.y = map_word(lutl, v.y);
    o.z = map_word(lutl, v.z);
    o.w = map_word(lutl, v.w);
    return o;
}

/* The per-lane table (LUT_WORDS words) of a 256-byte LUT (global or shared);
 * ends with a barrier. */
__device__ __forceinline__ void load_lut(uint32_t *s_lut, const unsigned char *lut)
{
    for (int i = threadIdx.x; i < LUT_WORDS; i += blockDim.x) {
        s_lut[i] = lut[i >> 5];
    }
    __syncthreads();
}

/* The chunk numbering of a batch: image i owns chunks [at(i), at(i + 1)),
 * from a device array of count + 1 entries, */
struct ih_chunk_array {
    const uint32_t *start;
    __device__ __forceinline__ uint32_t at(uint32_t i) const { return start[i]; }
    /* The image holding chunk c: the last i with start[i] <= c. */
    __device__ __forceinline__ uint32_t image_of(uint32_t c, uint32_t count) const
    {
        uint32_t a = 0, b = count - 1;
        while (a < b) {
            const uint32_t m = (a + b + 1) / 2;
            if (start[m] <= c) {
                a = m;
            } else {
                b = m - 1;
            }
        }
        return a;
    }
};

/* or per_image chunks each (a uniform batch). */
struct ih_chunk_uniform {
    uint32_t per_image;
    __device__ __forceinline__ uint32_t at(uint32_t i) const { return i * per_image; }
    __device__ __forceinline__ uint32_t image_of(uint32_t c, uint32_t) const
    {
        return c / per_image;
    }
};

/*
 * The batch kernels' walk: the images' chunks numbered back to back (map, one
 * of the two above) and cut into runs of `run` chunks; block `block` of
 * `blocks` takes runs block, block + blocks, ... and calls seg(image, c0, c1)
 * for each piece of a run within one image, chunks [c0, c1) counted from the
 * image's first.
 */
template <class Map, class OnSegment>
__device__ __forceinline__ void for_each_segment(const Map &map, uint32_t count, uint32_t run,
                                                 uint32_t block, uint32_t blocks, OnSegment seg)
{
    const uint32_t total = map.at(count);
    for (uint64_t lo64 = (uint64_t)block * run; lo64 < total; lo64 += (uint64_t)blocks * run) {
        const uint32_t lo = (uint32_t)lo64;
        const uint32_t hi = total - lo < run ? total : lo + run;
        for (uint32_t img = map.image_of(lo, count), at = lo; at < hi; img++) {
            const uint32_t base = map.at(img), next = map.at(img + 1);
            const uint32_t end = next < hi ? next : hi;
            seg(img, at - base, end - base);
            at = end;
        }
    }
}

/* Sum of the 32 replicas of bin threadIdx.x (< 256; 0 for the other threads),
 * in a rotated order so that a warp reads 32 different banks. */
__device__ __forceinline__ unsigned long long replica_sum(const uint32_t *sh)
{
    __syncthreads();
    const uint32_t t = threadIdx.x;
    unsigned long long s = 0;
    if (t < 256) {
#pragma unroll 8
        for (uint32_t j = 0; j < LANES; j++) {
            s += sh[t * LANES + ((j + t) & 31)];
        }
    }
    return s;
}

/*
 * The equalization LUT of a 256-bin histogram held one bin per thread (h,
 * threads 0..255; the others pass 0): entry threadIdx.x by OpenCV's rule or
 * PIL's (equalize_rules.cuh). Every thread of the block calls it; the other
 * threads get 0. The histogram must not be empty.
 */
static __device__ uint32_t block_lut_u8(unsigned long long h, bool pil)
{
    __shared__ unsigned long long s_warp[8];
    __shared__ unsigned long long s_total, s_hf, s_hl;
    __shared__ int s_first, s_last;
    const int t = threadIdx.x;
    __syncthreads(); /* a previous call's readers are done */
    if (t == 0) {
        s_first = 256;
        s_last = -1;
    }
    __syncthreads();
    if (t < 256 && h != 0) {
        atomicMin(&s_first, t);
        atomicMax(&s_last, t);
    }
    const unsigned long long cdf = scan256(h, s_warp); /* a barrier too */
    if (t == 255) {
        s_total = cdf;
    }
    if (t == s_first) {
        s_hf = h;
    }
    if (t == s_last) {
        s_hl = h;
    }
    __syncthreads();
    if (t >= 256) {
        return 0;
    }
    if (pil) {
        return ih_lut_pil((uint32_t)t, cdf - h, (s_total - s_hl) / 255);
    }
    return ih_lut_opencv((uint32_t)t, cdf, s_total, (uint32_t)s_first, s_hf, 255);
}

} // namespace ih_u8

#endif
