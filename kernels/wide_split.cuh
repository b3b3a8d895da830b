/*
 * Wide histograms: the split layouts of the natural 16-bit histogram.
 */
#ifndef IMGHIST_WIDE_SPLIT_CUH
#define IMGHIST_WIDE_SPLIT_CUH

#include <stdint.h>

#include "wide_bin.cuh"
#include "wide_store.cuh"

namespace {

/*
 * The split layout of the natural 16-bit histogram (65536 bins, one per
 * value), for blocks whose values nearly all lie in one set P of 32768
 * values: the values of one parity (data in the high bits of 16, such as 10-
 * or 12-bit samples shifted up), or a window of 32768 values around the
 * block's mean (data in the low bits, a narrow band such as an astronomical
 * background). Values in P have 32-bit counters (32768 words, swz of their
 * index in P) that take literal increments, which an SM merges across the
 * lanes of a warp on one word, need no old value and cannot wrap; the other
 * 32768 values have 16-bit counters in pairs (S, 16384 words after P, swz(s
 * >> 1), half s & 1 for their index s) as in the S16 store. The shared layout
 * (S16) returns the old value of every add, so its lanes on one word take
 * turns: with 8 values a multiple of 64 a warp's 32 adds go to 8 words,
 * and the count runs at a fraction of the read rate. A block takes a split
 * layout when at most 2 of the 1024 granules split_of samples hold a value
 * outside its P, or at most
 * SPLIT_OUTSIDE_MAX (64) where the shared layout's lanes would queue on a
 * few words (crowded). A warp with a value outside P takes every sample
 * through split_add, about twice the shared layout's cost, which pays only
 * where that queueing costs more: a narrow band of values with a few
 * samples elsewhere (hot pixels or stars on a sky background) gains, while
 * a wide band, which the shared layout counts near the read rate, would
 * lose; hence the limits. split_run then folds the block's counters.
 */
constexpr int SPLIT_OUTSIDE_MAX = 64;
constexpr uint32_t SPLIT_CROWDED = 16;
enum SplitKind { SPLIT_NONE, SPLIT_PARITY, SPLIT_WINDOW };

/* P: the values of parity `par`, index v >> 1; S: the others, index v >> 1. */
struct ParityMap {
    uint32_t par;
    __device__ __forceinline__ bool in_p(uint32_t v) const { return (v & 1u) == par; }
    __device__ __forceinline__ uint32_t p_index(uint32_t v) const { return v >> 1; }
    __device__ __forceinline__ uint32_t p_value(uint32_t i) const { return 2 * i + par; }
    __device__ __forceinline__ uint32_t s_index(uint32_t v) const { return v >> 1; }
    __device__ __forceinline__ uint32_t s_value(uint32_t i) const { return 2 * i + (par ^ 1u); }
    /* A word's two samples: bits set where one is outside P; their P indices
     * in the halves (bit 15, the high sample's bit 0, to be masked off). */
    __device__ __forceinline__ uint32_t outside(uint32_t w) const
    {
        return (w ^ (par * 0x00010001u)) & 0x00010001u;
    }
    __device__ __forceinline__ uint32_t pair_index(uint32_t w) const { return w >> 1; }
};

/* P: [base, base + 32768) modulo 65536, index v - base; S: the rest, index
 * v - base - 32768. */
struct WindowMap {
    uint32_t base;
    __device__ __forceinline__ bool in_p(uint32_t v) const { return ((v - base) & 0x8000u) == 0; }
    __device__ __forceinline__ uint32_t p_index(uint32_t v) const { return (v - base) & 0x7fffu; }
    __device__ __forceinline__ uint32_t p_value(uint32_t i) const { return (base + i) & 0xffffu; }
    __device__ __forceinline__ uint32_t s_index(uint32_t v) const { return (v - base) & 0x7fffu; }
    __device__ __forceinline__ uint32_t s_value(uint32_t i) const
    {
        return (base + 0x8000u + i) & 0xffffu;
    }
    __device__ __forceinline__ uint32_t outside(uint32_t w) const
    {
        return __vsub2(w, base * 0x00010001u) & 0x80008000u;
    }
    __device__ __forceinline__ uint32_t pair_index(uint32_t w) const
    {
        return __vsub2(w, base * 0x00010001u);
    }
};

/* n more of value b. */
template <class Map>
__device__ __forceinline__ void split_add(uint32_t *cnt, const Args &a, const Map &m, uint32_t b,
                                          uint32_t n)
{
    if (m.in_p(b)) {
        atomicAdd(cnt + swz(m.p_index(b)), n);
    } else {
        /* Half h = s & 1 of S word q = s >> 1, whose values are those of S
         * indices 2q and 2q + 1: ih_s16_settle's corrections with these
         * targets. (A settle taking its targets as arguments, shared by
         * both, gave the general kernels 24 more bytes of spills.) */
        const uint32_t sidx = m.s_index(b), q = sidx >> 1;
        const bool high = (sidx & 1u) != 0;
        const uint32_t old = atomicAdd(cnt + PAR_P + swz(q), high ? n << 16 : n);
        const S16Lost l = s16_lost(old, high, n);
        const bool carry = l.carry, wrap = l.wrap;
        if (wrap) {
            atomicAdd(a.target + m.s_value(2 * q), 65536ull);
            atomicAdd(a.target + m.s_value(2 * q + 1), ~0ull); /* -1 */
        }
        if (carry) {
            atomicAdd(a.target + m.s_value(2 * q + 1), 65536ull);
        }
    }
}

/* A granule of every lane of the warp (its votes need all 32). */
template <class Map>
__device__ __forceinline__ void split_granule(uint32_t *cnt, const Args &a, const Map &m,
                                              const uint4 &v)
{
    const uint32_t x0 = __shfl_sync(FULL, v.x, 0);
    if (__all_sync(FULL, ih_repeats<2>(v) && v.x == x0)) {
        if ((threadIdx.x & 31u) == 0) {
            split_add(cnt, a, m, x0 & 0xffffu, 8u * 32u);
        }
        return;
    }
    const uint32_t out = m.outside(v.x) | m.outside(v.y) | m.outside(v.z) | m.outside(v.w);
    if (!__any_sync(FULL, out != 0)) {
        /* Literal increments (ATOMS.POPC.INC), both samples of a word at
         * once: swz of the two P indices, in the halves. */
        const uint32_t w4[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint32_t d = m.pair_index(w4[i]);
            const uint32_t x = d ^ ((d >> 5) & 0x001f001fu);
            atomicAdd(cnt + (x & 0x7fffu), 1u);
            atomicAdd(cnt + (x >> 16), 1u); /* both halves below 0x8000 */
        }
        return;
    }
    /* Some lane holds a value outside P: every sample through split_add.
     * (Each word's halves apart, those in P by the literal increments above
     * and only the others through split_add, is slower: the warp then
     * takes both paths.) */
#pragma unroll
    for (int j = 0; j < 8; j++) {
        split_add(cnt, a, m, (uint32_t)sample_of<uint16_t>(v, j), 1u);
    }
}

/* Whether the shared layout's adds would queue on few words: among each 32
 * lanes' samples of the block's sampled granules (thread t's v: its first
 * and fifth samples, which lie in different words; MATCH is slow), fewer
 * than SPLIT_CROWDED distinct counter words on average (every thread calls
 * it). A band of 16 values has about 8, one of 1000 values about 31. */
__device__ __forceinline__ bool crowded(const uint4 &v)
{
    const int lane = (int)(threadIdx.x & 31u);
    const uint32_t m0 = __match_any_sync(FULL, (uint32_t)sample_of<uint16_t>(v, 0) >> 1);
    const uint32_t m4 = __match_any_sync(FULL, (uint32_t)sample_of<uint16_t>(v, 4) >> 1);
    const uint32_t total =
        (uint32_t)__syncthreads_count((__ffs((int)m0) - 1) == lane) +
        (uint32_t)__syncthreads_count((__ffs((int)m4) - 1) == lane);
    return total < SPLIT_CROWDED * 2u * (blockDim.x / 32u);
}

/* Whether a block whose sampled granules hold `outside` with values outside
 * P takes a split layout (every thread calls it). */
__device__ __forceinline__ bool split_takes(const uint4 &v, int outside)
{
    if (outside <= 2) {
        return true;
    }
    return outside <= SPLIT_OUTSIDE_MAX && crowded(v);
}

/* The block's split layout (kind, and the parity or the window's base), or
 * SPLIT_NONE (every thread calls it): thread t looks at granule t of the
 * block's chunk t mod (its chunks), a sample spread over all the block will
 * count (black margins at the top of an image say nothing of the rest). The
 * window is centred on the sample's mean. */
__device__ __forceinline__ uint2 split_of(const Args &a, uint32_t chunk)
{
    __shared__ uint32_t s_sum;
    const uint4 *src = reinterpret_cast<const uint4 *>(a.g.base);
    const uint32_t chunks = a.flat_full / chunk;
    if (blockIdx.x >= chunks) {
        return make_uint2(SPLIT_NONE, 0); /* uniform over the block */
    }
    const uint32_t mine = (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x;
    const uint32_t c = blockIdx.x + (threadIdx.x % mine) * gridDim.x;
    const uint4 v = src[c * chunk + threadIdx.x];
    for (uint32_t par = 0; par < 2; par++) {
        const ParityMap pm{par};
        const uint32_t out = pm.outside(v.x) | pm.outside(v.y) | pm.outside(v.z) | pm.outside(v.w);
        if (split_takes(v, __syncthreads_count(out != 0))) {
            return make_uint2(SPLIT_PARITY, par);
        }
    }
    uint32_t sum = 0;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        sum += (uint32_t)sample_of<uint16_t>(v, j);
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_xor_sync(FULL, sum, d);
    }
    if (threadIdx.x == 0) {
        s_sum = 0;
    }
    __syncthreads();
    if ((threadIdx.x & 31u) == 0) {
        atomicAdd(&s_sum, sum); /* 8192 samples below 2^16: below 2^29 */
    }
    __syncthreads();
    const uint32_t mean = s_sum / (8u * blockDim.x);
    const WindowMap wm{(mean - 0x4000u) & 0xffffu};
    const uint32_t out = wm.outside(v.x) | wm.outside(v.y) | wm.outside(v.z) | wm.outside(v.w);
    if (split_takes(v, __syncthreads_count(out != 0))) {
        return make_uint2(SPLIT_WINDOW, wm.base);
    }
    return make_uint2(SPLIT_NONE, 0);
}

/* The block's share of the flat run in a split layout, then its counters
 * into the target. */
template <class Map> __device__ void split_run(uint32_t *cnt, const Args &a, const Map &m)
{
    constexpr int THREADS = Threads<IH_WIDE_S16, 2>::n;
    constexpr int UNROLL = Threads<IH_WIDE_S16, 2>::unroll;
    constexpr uint32_t CHUNK = THREADS * UNROLL;
    const uint4 *src = reinterpret_cast<const uint4 *>(a.g.base);
    const uint32_t full = a.flat_full;
    const uint32_t whole = full / CHUNK * CHUNK;
    for (uint32_t c0 = blockIdx.x * CHUNK; c0 < whole; c0 += gridDim.x * CHUNK) {
        uint4 v[UNROLL];
        load_chunk<THREADS, UNROLL>(src, c0, v);
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            split_granule(cnt, a, m, v[k]);
        }
    }
    if (blockIdx.x == gridDim.x - 1) {
        /* The last, partial chunk sample by sample: its last warp may have
         * fewer lanes in the loop than 32, which split_granule's votes would
         * wait for (a run whose last chunk held a multiple of 32 granules
         * never showed it: every single-image test's did). */
        for (uint32_t i = whole + threadIdx.x; i < full; i += THREADS) {
            const uint4 v = __ldcs(src + i);
#pragma unroll
            for (int j = 0; j < 8; j++) {
                split_add(cnt, a, m, (uint32_t)sample_of<uint16_t>(v, j), 1u);
            }
        }
        for (uint32_t off = full * 16u + threadIdx.x * 2u; off < a.g.width; off += THREADS * 2u) {
            split_add(cnt, a, m, *reinterpret_cast<const uint16_t *>(a.g.base + off), 1u);
        }
    }
    __syncthreads();
    if (a.own) {
        /* as block_end's, each of the 65536 values from P or S */
        own_store(a, [&](uint32_t v) {
            if (m.in_p(v)) {
                return cnt[swz(m.p_index(v))];
            }
            const uint32_t si = m.s_index(v), w = cnt[PAR_P + swz(si >> 1)];
            return (si & 1u) ? w >> 16 : w & 0xffffu;
        });
        return;
    }
    for (uint32_t p = threadIdx.x; p < PAR_P; p += THREADS) {
        const uint32_t c = cnt[p];
        if (c != 0) {
            atomicAdd(a.target + m.p_value(swz(p)), (unsigned long long)c);
        }
    }
    for (uint32_t p = threadIdx.x; p < PAR_WORDS - PAR_P; p += THREADS) {
        const uint32_t w = cnt[PAR_P + p];
        const uint32_t q = swz(p);
        if ((w & 0xffffu) != 0) {
            atomicAdd(a.target + m.s_value(2 * q), (unsigned long long)(w & 0xffffu));
        }
        if ((w >> 16) != 0) {
            atomicAdd(a.target + m.s_value(2 * q + 1), (unsigned long long)(w >> 16));
        }
    }
}

} // namespace

#endif
