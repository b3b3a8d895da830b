/*
 * Wide histograms: U8, U16 and F32 samples, 1..4 interleaved channels, any
 * bins and ranges, masks and outlier counters; every sample lands in the bin
 * binning.h says, bit for bit.
 *
 * Rows are read as 16-byte granules (granules.cuh) with several loads in
 * flight per thread; a row's edge granules go sample by sample. A packed,
 * 16-byte aligned view without mask or outlier counters goes to the lean
 * kernel instead, which walks it as one flat run of granules (interleaved
 * channels by each sample's place in the run; one channel with a mask as
 * packed and aligned, its mask bytes beside each granule: lean_masked_kernel).
 * 8-bit channels with one bin per value go to u8_channels_kernel (every lane
 * its own bank, flat or in rows). Where the
 * counters of a job fit in shared memory a block keeps them there:
 *  - S32: 32-bit counters, `copies` copies (lane L adds into copy L % copies,
 *    so that the lanes of a warp spread over more banks). Every increment is
 *    a literal atomicAdd(p, 1u): the SM merges the lanes of a warp that hit
 *    one address (ATOMS.POPC.INC), about twice the rate of adding a value;
 *  - S16: two 16-bit counters per 32-bit word (65536 bins in 128 KiB). The
 *    thread whose atomic wraps a half (it sees the old value) adds the lost
 *    65536 to the 64-bit target directly, so nothing is lost (see s16_fix);
 *    a thread issues all its atomics of a granule before it looks at any
 *    old value;
 * else every sample is added to the 64-bit target in global memory. In S16
 * and global memory, a warp whose samples all fall in one bin (constant
 * images) makes one atomic. Counter indices are swizzled (swz) so that bins a multiple of 32 or
 * 64 apart do not all sit in one shared-memory bank.
 *
 * F32 samples: a single-precision estimate t = (v - lo) * bins / (hi - lo)
 * whose error the host bounds (eps, in bins) gives the bin floor(t) wherever
 * t's fraction is further than eps from an edge (nearly every sample). The
 * rest are binned exactly: against a table of the smallest float >= each edge
 * (__double2float_ru of the double edge; for a float v, v >= e <=> v >=
 * ceil_f(e), so the table answers as binning.h's double compares do), or,
 * when the table does not fit, by binning.h itself. The lean kernel's S32
 * form rounds its estimate to the nearest edge and reads the table only for
 * samples within a bound of it, and counts in a padded layout whose spare
 * counters take the samples in no bin, so that no sample branches or tests
 * (fpad_code); its S16 and channel forms compare every sample with the table
 * entry of the edge nearest t (eps < 1/2 leaves the bin of that edge or the
 * one below).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "granules.cuh"
#include "hist_u8_block.cuh"
#include "hist_wide.cuh"

namespace {

constexpr uint32_t NONE = 0xffffffffu;
/* Bytes before an F32 edge table (a word the padded layout may read below it). */
constexpr uint32_t TAB_GUARD = 16;
constexpr unsigned FULL = 0xffffffffu;

enum Kind { K_LUT8, K_SHIFT, K_INT, K_FTAB, K_FDBL };

/* How a kernel walks the band: any view (mask, channels: per-sample pixel
 * and channel), one-channel unmasked rows, or one flat run of bytes (of one
 * channel, of interleaved channels, or of one channel with a flat mask). */
enum Walk { W_GENERAL, W_SIMPLE, W_FLAT, W_FLAT_CHANNELS, W_FLAT_MASKED };

/* Threads per block and granules in flight per thread: S16 runs one block
 * of 1024 threads per SM (64 registers each, which holds four granules in
 * flight but for F32's longer binning), the others 512. */
template <int STORE, int SIZE> struct Threads {
    static constexpr int n = STORE == IH_WIDE_S16 ? 1024 : 512;
    static constexpr int unroll = STORE == IH_WIDE_S16 && SIZE == 4 ? 2 : 4;
};

/* Granules per block per step (the host's copy of CHUNK). */
uint32_t chunk_of(int store, size_t size)
{
    if (store != IH_WIDE_S16) {
        return Threads<IH_WIDE_S32, 1>::n * Threads<IH_WIDE_S32, 1>::unroll;
    }
    return size == 4 ? Threads<IH_WIDE_S16, 4>::n * Threads<IH_WIDE_S16, 4>::unroll
                     : Threads<IH_WIDE_S16, 1>::n * Threads<IH_WIDE_S16, 1>::unroll;
}

struct Args {
    ih_geom g;                 /* the band's rows as bytes */
    const uint8_t *mask;       /* NULL or the band's first mask row */
    size_t mask_pitch;
    uint32_t channels, stride, len, bins;
    int outliers;
    ih_binning bin;
    int32_t ilo;               /* K_SHIFT: bin = (v - ilo) >> shift on [blo, bhi) */
    uint32_t blo, bhi, shift;
    uint32_t copies;           /* S32 */
    uint32_t phys;             /* counter words in shared memory (a multiple of 32) */
    uint32_t cnt_off;          /* bytes of table before the counters */
    uint32_t pad_words;        /* F32, S32: one channel's words in a copy (the padded layout) */
    uint32_t flat_full;        /* W_FLAT: granules wholly inside the run */
    uint32_t span;             /* K_SHIFT: bhi - blo */
    int natural;               /* K_SHIFT: U16, one bin per value, all in range; 2: and blocks may
                                * take a split layout (flat, S16, PAR_WORDS words). K_LUT8: one
                                * bin per value, no outlier counters (the flat channel walk
                                * bins without the table) */
    uint32_t copies_log2;      /* S32 */
    /* F32: the range as floats (smallest float >= lo, >= hi) and the estimate
     * t = (v - lo_f) * inv_f, trusted where frac(t) is in (eps, 1 - eps). */
    float lo_ru, hi_ru, lo_f, inv_f, eps;
    float c_f;                 /* -lo_f * inv_f rounded: t = fma(v, inv_f, c_f) in the lean kernel */
    /* F32, the padded layout (fpad_code): u = sat(fma(v, inv_s, c_s)), t = u s_f, an
     * estimate of v's place among the edges plus 1 within `near` / 2 of it; near >= 1/2
     * where no such bound holds. */
    float inv_s, c_s, s_f, near;
    unsigned long long *target;
    /* Batch kernels (BATCH): image blockIdx.y at g.base + y * img_stride,
     * its counts at target + y * len; own: each image has one block, which
     * stores all its counters (added to the target's with `accumulate`). */
    long long img_stride;
    int own, accumulate;
    long long mask_img_stride; /* batch kernels with a mask: image y's at mask + y * this */
    /* Batch kernels: NULL, or views of one shape anywhere: image y's first
     * row at views[2 y] and its mask's at views[2 y + 1] (the strides then
     * unused). */
    const unsigned long long *views;
};

__device__ __forceinline__ uint32_t swz(uint32_t s)
{
    return s ^ ((s >> 5) & 31u);
}

/* A bin code (bins + IH_BIN_*) as the counter it goes to, or NONE. */
__device__ __forceinline__ uint32_t to_slot(const Args &a, uint32_t b)
{
    return b < a.bins || a.outliers ? b : NONE;
}

template <int KIND, typename T>
__device__ __forceinline__ uint32_t slot_of(const Args &a, const uint32_t *lut, const float *tab,
                                            T v)
{
    if constexpr (KIND == K_LUT8) {
        return lut[(uint32_t)v];
    } else if constexpr (KIND == K_SHIFT) {
        const uint32_t x = (uint32_t)v;
        const uint32_t b = x < a.blo   ? a.bins + IH_BIN_BELOW
                           : x >= a.bhi ? a.bins + IH_BIN_ABOVE
                                        : (uint32_t)((int32_t)x - a.ilo) >> a.shift;
        return to_slot(a, b);
    } else if constexpr (KIND == K_INT) {
        return to_slot(a, ih_bin_of_int(&a.bin, (uint32_t)v));
    } else if constexpr (KIND == K_FTAB || KIND == K_FDBL) {
        const float f = (float)v;
        uint32_t b;
        if (f != f) {
            b = a.bins + IH_BIN_NAN;
        } else if (f < a.lo_ru) {
            b = a.bins + IH_BIN_BELOW;
        } else if (f >= a.hi_ru) {
            b = (a.bin.closed && (double)f == a.bin.hi) ? a.bins - 1 : a.bins + IH_BIN_ABOVE;
        } else {
            const float t = __fmul_rn(__fsub_rn(f, a.lo_f), a.inv_f);
            const float fl = floorf(t);
            const float fr = t - fl; /* exact: 0 <= t < 2^24 */
            const uint32_t i = (uint32_t)fl;
            if (fr > a.eps && fr < 1.0f - a.eps && i < a.bins) {
                b = i;
            } else if constexpr (KIND == K_FTAB) {
                uint32_t j = i < a.bins ? i : a.bins - 1;
                while (j > 0 && f < tab[j]) {
                    j--;
                }
                while (j + 1 < a.bins && f >= tab[j + 1]) {
                    j++;
                }
                b = j;
            } else {
                b = ih_bin_of_double(&a.bin, (double)f);
            }
        }
        return to_slot(a, b);
    }
}

/* What an add of n to the low (high == false) or high half of a word that
 * held `old` lost: a carry out of the word (65536 of the high half) and a
 * wrap of the low half (65536 of it, which went into the high half as 1). */
struct S16Lost {
    bool carry, wrap;
};

__device__ __forceinline__ S16Lost s16_lost(uint32_t old, bool high, uint32_t n)
{
    const uint32_t delta = high ? n << 16 : n;
    return {old + delta < old, !high && (old & 0xffffu) + n > 0xffffu};
}

/*
 * Two 16-bit counters per word: slot s is half s & 1 of word s >> 1. The word
 * is the running sum W = L + 65536 H (mod 2^32) of what was added to its low
 * half (L) and high half (H). The low 16 bits of W are L mod 65536, so the
 * thread whose add carries out of the low half knows it: L gained 65536 that W
 * does not show, and the carry went into the high half (-1 there). The thread
 * whose add carries out of the word lost 2^32 = 65536 of H. Adding those into
 * the 64-bit target makes target + decoded halves exact.
 *
 * s16_fix: after an atomic that added n to slot's half and saw `old`, the
 * lost 65536s into the target.
 */
__device__ __forceinline__ void s16_fix(const Args &a, uint32_t slot, uint32_t n, uint32_t old)
{
    const S16Lost l = s16_lost(old, (slot & 1u) != 0, n);
    const bool carry = l.carry, wrap = l.wrap;
    if (carry || wrap) {
        const uint32_t base = slot & ~1u;
        if (wrap) {
            atomicAdd(a.target + base, 65536ull);
            if (base + 1 < a.len) {
                atomicAdd(a.target + base + 1, ~0ull); /* -1 */
            }
        }
        if (carry && base + 1 < a.len) {
            atomicAdd(a.target + base + 1, 65536ull);
        }
    }
}

/* Add n to a slot in the block's store. */
template <int STORE>
__device__ __forceinline__ void add_n(uint32_t *cnt, const Args &a, uint32_t slot, uint32_t n,
                                      uint32_t lane)
{
    if constexpr (STORE == IH_WIDE_S32) {
        atomicAdd(cnt + swz(slot) * a.copies + (lane & (a.copies - 1)), n);
    } else if constexpr (STORE == IH_WIDE_S16) {
        s16_fix(a, slot, n, atomicAdd(cnt + swz(slot >> 1), (slot & 1u) ? n << 16 : n));
    } else {
        atomicAdd(a.target + slot, (unsigned long long)n);
    }
}

/* Count NPER slots per lane; the whole warp calls it. */
template <int STORE, int NPER>
__device__ __forceinline__ void count_slots(uint32_t *cnt, const Args &a, const uint32_t (&sl)[NPER],
                                            uint32_t lane)
{
    if constexpr (STORE == IH_WIDE_S32) {
        /* Literal increments: lanes on one address merge in the SM. */
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            if (sl[j] != NONE) {
                atomicAdd(cnt + swz(sl[j]) * a.copies + (lane & (a.copies - 1)), 1u);
            }
        }
        return;
    }
    bool same = true;
#pragma unroll
    for (int j = 1; j < NPER; j++) {
        same &= sl[j] == sl[0];
    }
    const uint32_t s0 = __shfl_sync(FULL, sl[0], 0);
    if (__all_sync(FULL, same && sl[0] == s0)) {
        if (lane == 0 && s0 != NONE) {
            add_n<STORE>(cnt, a, s0, NPER * 32u, lane);
        }
        return;
    }
    if constexpr (STORE == IH_WIDE_S16) {
        /* Every atomic first, then one look at the old values: a half that
         * was at 0xffff before the add may have wrapped (s16_fix). */
        uint32_t old[NPER];
        bool edge = false;
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            old[j] = 0;
            if (sl[j] != NONE) {
                const bool high = (sl[j] & 1u) != 0;
                old[j] = atomicAdd(cnt + swz(sl[j] >> 1), high ? 65536u : 1u);
                edge |= ((high ? old[j] >> 16 : old[j]) & 0xffffu) == 0xffffu;
            }
        }
        if (edge) {
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                if (sl[j] != NONE) {
                    s16_fix(a, sl[j], 1u, old[j]);
                }
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            if (sl[j] != NONE) {
                atomicAdd(a.target + sl[j], 1ull);
            }
        }
    }
}

/* Channel count as a shift where it is a power of two. */
__device__ __forceinline__ uint32_t div_ch(uint32_t s, uint32_t ch)
{
    return ch == 3 ? s / 3u : s >> (ch >> 1);
}

/* The counter of the sample at byte `off` of row r (any channel, masked or not). */
template <int KIND, int WALK, typename T>
__device__ __forceinline__ uint32_t slot_at(const Args &a, const uint32_t *lut, const float *tab,
                                            T v, uint32_t r, uint32_t sidx)
{
    if constexpr (WALK != W_GENERAL) {
        return slot_of<KIND, T>(a, lut, tab, v);
    } else {
        const uint32_t x = div_ch(sidx, a.channels);
        const uint32_t c = sidx - x * a.channels;
        if (a.mask != nullptr && a.mask[(size_t)r * a.mask_pitch + x] == 0) {
            return NONE;
        }
        const uint32_t s = slot_of<KIND, T>(a, lut, tab, v);
        return s == NONE ? NONE : s + c * a.stride;
    }
}

/* A block's tables and zeroed counters (every thread calls it). */
template <int KIND, int STORE>
__device__ __forceinline__ void block_begin(const Args &a, uint32_t *lut, float *tab, uint32_t *cnt)
{
    if constexpr (KIND == K_LUT8) {
        for (uint32_t v = threadIdx.x; v < 256; v += blockDim.x) {
            lut[v] = to_slot(a, ih_bin_of_int(&a.bin, v));
        }
    } else if constexpr (KIND == K_FTAB) {
        if (threadIdx.x == 0) {
            tab[-1] = 0.0f; /* the guard (fpad_code reads it for NaN and far below lo) */
        }
        for (uint32_t i = threadIdx.x; i <= a.bins; i += blockDim.x) {
            float e = __double2float_ru(ih_edge(&a.bin, i));
            if (i == a.bins && a.bin.closed && (double)e == a.bin.hi) {
                e = nextafterf(e, INFINITY); /* hi itself is in the last bin */
            }
            /* -0, not +0: the padded layout reads v - e's sign bit, and -0 -
             * +0 is -0 (every compare takes the two zeros as equal). */
            tab[i] = e == 0.0f ? -0.0f : e;
        }
    }
    if constexpr (STORE != IH_WIDE_GLOBAL) {
        for (uint32_t i = threadIdx.x; i < a.phys; i += blockDim.x) {
            cnt[i] = 0;
        }
    }
    __syncthreads();
}

/* S32: the copies of counter word p added up (each thread from a
 * different copy first, against bank conflicts). */
__device__ __forceinline__ uint32_t copies_sum(const Args &a, const uint32_t *cnt, uint32_t p)
{
    const uint32_t m = a.copies - 1;
    uint32_t sum = 0;
    for (uint32_t j = 0; j < a.copies; j++) {
        sum += cnt[p * a.copies + ((j + p) & m)];
    }
    return sum;
}

/* An own S16 block's counts stored in bin order, count(v) the block's count
 * of bin v: bins 2t and 2t + 1 a thread, one 16-byte store where the
 * target allows (an even len, 16-byte aligned); with accumulate added to
 * the target's. (A store a counter word in the words' order, two 8-byte
 * stores 16 bytes apart a lane, ran at about half the speed of the memset
 * it replaces.) */
template <class Count> __device__ __forceinline__ void own_store(const Args &a, Count count)
{
    const bool vec = (a.len & 1u) == 0 && ((uintptr_t)a.target & 15u) == 0;
    for (uint32_t t = threadIdx.x; 2 * t < a.len; t += blockDim.x) {
        const uint32_t b = 2 * t;
        unsigned long long lo = count(b), hi = b + 1 < a.len ? count(b + 1) : 0ull;
        if (vec) {
            ulonglong2 *p = reinterpret_cast<ulonglong2 *>(a.target + b);
            if (a.accumulate) {
                const ulonglong2 o = *p;
                lo += o.x;
                hi += o.y;
            }
            *p = make_ulonglong2(lo, hi);
        } else {
            a.target[b] = (a.accumulate ? a.target[b] : 0ull) + lo;
            if (b + 1 < a.len) {
                a.target[b + 1] = (a.accumulate ? a.target[b + 1] : 0ull) + hi;
            }
        }
    }
}

/* A block's shared counters into the 64-bit target (every thread calls it). */
template <int STORE> __device__ __forceinline__ void block_end(const Args &a, uint32_t *cnt)
{
    if constexpr (STORE == IH_WIDE_S32) {
        __syncthreads();
        for (uint32_t p = threadIdx.x; p < a.phys; p += blockDim.x) {
            const uint32_t s = swz(p);
            if (s >= a.len) {
                continue;
            }
            const uint32_t sum = copies_sum(a, cnt, p);
            if (sum != 0) {
                atomicAdd(a.target + s, (unsigned long long)sum);
            }
        }
    } else if constexpr (STORE == IH_WIDE_S16) {
        __syncthreads();
        if (a.own) {
            /* A batch block alone on an image of fewer than 65536 samples,
             * whose halves cannot wrap: every counter stored (or added to
             * the target's with accumulate), none zeroed before. Bin v is
             * a half of word swz(v / 2) (swz is its own inverse). */
            own_store(a, [&](uint32_t v) {
                const uint32_t w = cnt[swz(v >> 1)];
                return (v & 1u) ? w >> 16 : w & 0xffffu;
            });
            return;
        }
        for (uint32_t p = threadIdx.x; p < a.phys; p += blockDim.x) {
            const uint32_t w = cnt[p];
            if (w == 0) {
                continue;
            }
            const uint32_t base = swz(p) * 2u;
            if (base < a.len && (w & 0xffffu) != 0) {
                atomicAdd(a.target + base, (unsigned long long)(w & 0xffffu));
            }
            if (base + 1 < a.len && (w >> 16) != 0) {
                atomicAdd(a.target + base + 1, (unsigned long long)(w >> 16));
            }
        }
    }
}

/* A batch block: its image's data, mask and counts. */
__device__ __forceinline__ void batch_image(Args &a)
{
    a.target += (size_t)blockIdx.y * a.len;
    if (a.views != nullptr) {
        a.g.base = reinterpret_cast<const uint8_t *>(a.views[2 * blockIdx.y]);
        if (a.mask != nullptr) {
            a.mask = reinterpret_cast<const uint8_t *>(a.views[2 * blockIdx.y + 1]);
        }
        return;
    }
    a.g.base += (long long)blockIdx.y * a.img_stride;
    if (a.mask != nullptr) {
        a.mask += (long long)blockIdx.y * a.mask_img_stride;
    }
}

/* A batch block that owns its image: every one of its counters into the
 * target, stored (no atomics, no zeroed target needed). */
__device__ __forceinline__ void batch_own_end(const Args &a, const uint32_t *cnt)
{
    __syncthreads();
    for (uint32_t p = threadIdx.x; p < a.phys / a.copies; p += blockDim.x) {
        const uint32_t s = swz(p);
        if (s < a.len) {
            a.target[s] = (a.accumulate ? a.target[s] : 0ull) + copies_sum(a, cnt, p);
        }
    }
}

template <typename T> __device__ __forceinline__ T sample_of(const uint4 &v, int j)
{
    const uint32_t w = j * (int)sizeof(T) / 4 == 0   ? v.x
                       : j * (int)sizeof(T) / 4 == 1 ? v.y
                       : j * (int)sizeof(T) / 4 == 2 ? v.z
                                                     : v.w;
    if constexpr (sizeof(T) == 1) {
        return (T)((w >> ((j & 3) * 8)) & 0xffu);
    } else if constexpr (sizeof(T) == 2) {
        return (T)((w >> ((j & 1) * 16)) & 0xffffu);
    } else {
        return __uint_as_float(w);
    }
}

template <int KIND, int STORE, int WALK, typename T, bool BATCH>
__global__ void __launch_bounds__(Threads<STORE, sizeof(T)>::n) wide_kernel(Args a)
{
    if constexpr (BATCH) {
        batch_image(a);
    }
    constexpr int THREADS = Threads<STORE, sizeof(T)>::n;
    constexpr int UNROLL = Threads<STORE, sizeof(T)>::unroll;
    constexpr int CHUNK = THREADS * UNROLL;
    constexpr int NPER = 16 / (int)sizeof(T);
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *lut = reinterpret_cast<uint32_t *>(smem);
    float *tab = reinterpret_cast<float *>(smem + TAB_GUARD);
    uint32_t *cnt = reinterpret_cast<uint32_t *>(smem + a.cnt_off);
    const uint32_t lane = threadIdx.x & 31u;
    block_begin<KIND, STORE>(a, lut, tab, cnt);

    const ih_geom &g = a.g;
    const uint32_t chunks = (g.total + CHUNK - 1) / CHUNK;
    for (uint32_t ck = blockIdx.x; ck < chunks; ck += gridDim.x) {
        const uint32_t c0 = ck * CHUNK;
        uint4 v[UNROLL];
        uint32_t row_of[UNROLL], col_of[UNROLL];
        bool full[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            const uint32_t i = c0 + k * THREADS + threadIdx.x;
            full[k] = false;
            row_of[k] = 0;
            col_of[k] = 0;
            if (i >= g.total) {
                continue;
            }
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
                /* Row edges: whole samples only (rows start on a sample). */
                const uint8_t *p = gp < row ? row : gp;
                const uint8_t *q = gp + 16 < end ? gp + 16 : end;
                for (; p < q; p += sizeof(T)) {
                    const T s = *reinterpret_cast<const T *>(p);
                    const uint32_t sl = slot_at<KIND, WALK, T>(
                        a, lut, tab, s, r, (uint32_t)(p - row) / (uint32_t)sizeof(T));
                    if (sl != NONE) {
                        add_n<STORE>(cnt, a, sl, 1u, lane);
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            uint32_t sl[NPER];
            const uint32_t s0 = col_of[k] / (uint32_t)sizeof(T);
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                sl[j] = full[k] ? slot_at<KIND, WALK, T>(a, lut, tab, sample_of<T>(v[k], j),
                                                           row_of[k], s0 + j)
                                : NONE;
            }
            count_slots<STORE, NPER>(cnt, a, sl, lane);
        }
    }

    if constexpr (BATCH && STORE == IH_WIDE_S32) {
        if (a.own) {
            batch_own_end(a, cnt);
            return;
        }
    }
    block_end<STORE>(a, cnt);
}

/* A thread's granules of the chunk at granule c0 (streamed: read once). */
template <int THREADS, int UNROLL>
__device__ __forceinline__ void load_chunk(const uint4 *src, uint32_t c0, uint4 (&v)[UNROLL])
{
#pragma unroll
    for (int k = 0; k < UNROLL; k++) {
        v[k] = __ldcs(src + c0 + k * THREADS + threadIdx.x);
    }
}

/*
 * The lean kernel: one flat run of samples (W_FLAT; W_FLAT_CHANNELS with 2-4
 * interleaved channels), no mask, no outlier counters, and a kind with a
 * cheap bin (K_LUT8, K_SHIFT, K_FTAB). Its
 * blocks take whole chunks of full granules with no test per granule, and a
 * sample costs a handful of instructions: the bin, an in-range predicate and
 * the atomic (the general kernel above spends several times that on
 * per-sample slot codes and row bookkeeping, and was issue-bound).
 */
template <int KIND, bool NAT, typename T>
__device__ __forceinline__ bool lean_bin(const Args &a, const uint32_t *lut, const float *tab, T v,
                                         uint32_t &b)
{
    if constexpr (KIND == K_SHIFT && NAT) {
        b = (uint32_t)v; /* one bin per 16-bit value */
        return true;
    } else if constexpr (KIND == K_SHIFT) {
        const uint32_t x = (uint32_t)v;
        b = (uint32_t)((int32_t)x - a.ilo) >> a.shift;
        return x - a.blo < a.span;
    } else if constexpr (KIND == K_LUT8 && NAT) {
        b = (uint32_t)v; /* one bin per 8-bit value: no table */
        return true;
    } else if constexpr (KIND == K_LUT8) {
        b = lut[(uint32_t)v];
        return b != NONE;
    } else {
        static_assert(KIND == K_FTAB, "the lean kernel bins K_LUT8, K_SHIFT and K_FTAB");
        const float f = (float)v;
        const float t = __fmul_rn(__fsub_rn(f, a.lo_f), a.inv_f);
        const float fl = floorf(t);
        const float fr = t - fl;
        b = (uint32_t)fl;
        const bool in = f >= a.lo_ru && f < a.hi_ru;
        if (in && fr > a.eps && fr < 1.0f - a.eps && b < a.bins) {
            return true;
        }
        if (in && a.eps < 1.0f) {
            /* Within eps of edge j (eps < 1/2): bin j - 1 or j, one compare
             * with the table (edge 0 and edge `bins` are the range). */
            uint32_t j = fr < 0.5f ? b : b + 1;
            j = j < a.bins ? j : a.bins;
            b = j == 0 ? 0 : j == a.bins ? a.bins - 1 : (f >= tab[j] ? j : j - 1);
            return true;
        }
        b = slot_of<KIND, T>(a, lut, tab, v); /* outliers: NONE */
        return b != NONE;
    }
}

/* x mod 3. */
__device__ __forceinline__ uint32_t mod3(uint32_t x)
{
    return x - 3u * (__umulhi(x, 0xaaaaaaabu) >> 1);
}

/* MULTI: interleaved channels (2..4) in a flat run. The sample of granule gi
 * at j is sample gi * NPER + j of the run, of channel (gi * NPER + j) mod
 * channels; its counter is its bin's in that channel's block (bins apart:
 * the lean kernel keeps no outlier counters). */
template <bool MULTI, int NPER>
__device__ __forceinline__ void add_channels(const Args &a, uint32_t gi, uint32_t (&b)[NPER])
{
    if constexpr (MULTI) {
        /* NPER is a multiple of 4: only three channels have a phase. */
        uint32_t c = a.channels == 3 ? mod3(gi * (uint32_t)(NPER % 3)) : 0u;
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            b[j] += c * a.stride;
            c = c + 1 == a.channels ? 0u : c + 1;
        }
    }
}

/*
 * A granule of 8-bit samples of 2-4 interleaved channels, one bin per value,
 * in the plain layout: counter (channel c, value x) of lane L at
 * byte col + c * 32768 + x * 128, where col is the lane's counter of (0, 0),
 * so that every lane keeps to its own bank as in hist_u8's kernel. A byte
 * costs a PRMT, an address and the atomic (lean_granule's form below: the
 * channel's wrap, its offset, the swizzle and the address, about twice the
 * integer work, which bounded 8-bit RGB at 73 % of the H100's read rate).
 * c0: the channel of the granule's first byte (in a flat run, granule gi
 * starts at sample 16 gi: channel 0 for two or four channels, gi mod 3 for
 * three); ROWS: any c0 (a granule anywhere in a row), else 0 for two or
 * four channels.
 */
__device__ __forceinline__ void red_shared(uint32_t addr)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr) : "memory");
}

/* Adds n (0 or 1) to the counter at addr: a masked byte's atomic adds 0
 * rather than sit under an if, which ptxas makes a branch (predicated or
 * not), divergent on a mask's bits. */
__device__ __forceinline__ void red_shared_n(uint32_t addr, uint32_t n)
{
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(n) : "memory");
}

/* The pixel (from the granule's first) of byte j of a granule whose byte 0
 * is of channel c0, for ch channels (3, else 2 or 4). */
__device__ __forceinline__ uint32_t pixel_of(uint32_t c0, uint32_t j, uint32_t ch)
{
    return ch == 3 ? ((c0 + j) * 11u) >> 5 : (c0 + j) >> (ch >> 1); /* (c0 + j) / 3 below 32 */
}

/* The spread tables of channel_keep in shared memory: spread[p] repeats bit
 * k of p over bits ch k .. ch k + ch - 1; 64 entries for three channels
 * (six pixels a granule), then 32 for four (five). */
constexpr uint32_t SPREAD3 = 0, SPREAD4 = 64, SPREAD_WORDS = 96;

__device__ __forceinline__ void spread_tables(uint32_t *t)
{
    for (uint32_t i = threadIdx.x; i < SPREAD_WORDS; i += blockDim.x) {
        const uint32_t ch = i < SPREAD4 ? 3u : 4u, p = i < SPREAD4 ? i : i - SPREAD4;
        uint32_t w = 0;
        for (uint32_t k = 0; k * ch < 32; k++) {
            w |= ((p >> k) & 1u) ? ((1u << ch) - 1u) << (k * ch) : 0u;
        }
        t[i] = w;
    }
}

/* u8_channels_granule's keep from a granule's mask bits (channel_mask_bits):
 * bit j for byte j, the pixel (c0 + j) / ch's bit, each pixel's bit spread
 * over its ch bytes and shifted by the first byte's channel. Two channels by
 * bit interleaving, three and four through the tables (t). */
__device__ __forceinline__ uint32_t channel_keep(const uint32_t *t, uint32_t pix, uint32_t c0,
                                                 uint32_t ch)
{
    uint32_t w;
    if (ch == 2) {
        w = (pix | (pix << 8)) & 0x00ff00ffu;
        w = (w | (w << 4)) & 0x0f0f0f0fu;
        w = (w | (w << 2)) & 0x33333333u;
        w = (w | (w << 1)) & 0x55555555u;
        w |= w << 1;
    } else {
        w = ch == 3 ? t[SPREAD3 + (pix & 63u)] : t[SPREAD4 + (pix & 31u)];
    }
    return w >> c0;
}

/* MASKED: bit k of pix says whether the granule's k-th pixel has a non-zero
 * mask byte (channel_mask_bits; spread: channel_keep's tables), and a byte
 * of a pixel outside the mask adds 0 to its counter. */
template <bool ROWS, bool MASKED = false>
__device__ __forceinline__ void u8_channels_granule(const uint32_t (&col4)[4], const Args &a,
                                                    const uint4 &v, uint32_t c0,
                                                    uint32_t pix = 0,
                                                    const uint32_t *spread = nullptr)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    const uint32_t col = col4[0];
    if (a.channels == 3) {
        const uint32_t c1 = c0 == 2u ? 0u : c0 + 1u;
        const uint32_t c2 = c0 == 0u ? 2u : c0 - 1u;
        const uint32_t base[3] = {col + (c0 << 15), col + (c1 << 15), col + (c2 << 15)};
        /* bit j: byte j's pixel is in the mask */
        const uint32_t keep = MASKED ? channel_keep(spread, pix, c0, 3u) : 0u;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t addr = base[j % 3] + (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7);
            if constexpr (MASKED) {
                red_shared_n(addr, (keep >> j) & 1u);
            } else {
                red_shared(addr);
            }
        }
    } else {
        /* byte j of channel (c0 + j) mod 2 or 4: base[j & 3] */
        uint32_t base[4] = {col4[0], col4[1], col4[2], col4[3]};
        if constexpr (ROWS) {
            const uint32_t m = a.channels - 1u;
#pragma unroll
            for (uint32_t k = 0; k < 4; k++) {
                base[k] = col + (((c0 + k) & m) << 15);
            }
        }
        if constexpr (MASKED) {
            if (c0 == 0u) {
                /* the granule starts a pixel: byte j is of pixel j / ch, and
                 * its add is that pixel's bit (one extraction a pixel) */
                if (a.channels == 4) {
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        red_shared_n(base[j & 3] +
                                         (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7),
                                     (pix >> (j >> 2)) & 1u);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        red_shared_n(base[j & 3] +
                                         (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7),
                                     (pix >> (j >> 1)) & 1u);
                    }
                }
                return;
            }
        }
        /* bit j: byte j's pixel is in the mask */
        const uint32_t keep = MASKED ? channel_keep(spread, pix, c0, a.channels) : 0u;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t addr = base[j & 3] + (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7);
            if constexpr (MASKED) {
                red_shared_n(addr, (keep >> j) & 1u);
            } else {
                red_shared(addr);
            }
        }
    }
}

/* Bit k of the result: byte k of w is not 0 (k < 4). */
__device__ __forceinline__ uint32_t nonzero_bytes(uint32_t w)
{
    const uint32_t h = (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
    return (h * 0x00204081u) >> 28; /* bits 7, 15, 23, 31 to 28..31 */
}

/* Bit k: m[k] is not 0, for n (at most 9) mask bytes from m, byte p of a run
 * of px mask bytes: inside the run, the two aligned 8-byte words that hold
 * them (at most 7 + 9 bytes from the first's start); at the run's ends
 * (the words would reach bytes outside it: other rows' padding, or past the
 * view's end) byte by byte. */
__device__ __forceinline__ uint32_t mask_bits_at(const uint8_t *m, uint32_t p, uint32_t n,
                                                 uint32_t px)
{
    const uint32_t off = (uint32_t)(uintptr_t)m & 7u;
    if (p >= off && p - off + 16u <= px) {
        const uint2 *w = reinterpret_cast<const uint2 *>(m - off);
        const uint2 lo = __ldg(w), hi = __ldg(w + 1);
        const uint32_t z = nonzero_bytes(lo.x) | (nonzero_bytes(lo.y) << 4) |
                           (nonzero_bytes(hi.x) << 8) | (nonzero_bytes(hi.y) << 12);
        return (z >> off) & ((1u << n) - 1u);
    }
    uint32_t pix = 0;
#pragma unroll
    for (uint32_t k = 0; k < 9; k++) {
        if (k < n && __ldg(m + k) != 0) {
            pix |= 1u << k;
        }
    }
    return pix;
}

/* The mask bits of the granule at byte x of row r, whose byte 0 is of
 * channel c0 (bit k: its k-th pixel's mask byte is not 0): the granule
 * touches pixels (x - c0) / ch to that + (c0 + 15) / ch, at most 9, each a
 * byte of the mask row (px: the row's pixels). */
__device__ __forceinline__ uint32_t channel_mask_bits(const Args &a, uint32_t r, uint32_t x,
                                                     uint32_t c0, uint32_t ch, uint32_t px)
{
    /* (x - c0) is a multiple of ch: for 3, exact division by the inverse */
    const uint32_t p = ch == 3 ? (x - c0) * 0xaaaaaaabu : x >> (ch >> 1);
    const uint8_t *row = a.mask + (size_t)r * a.mask_pitch;
    return mask_bits_at(row + p, p, pixel_of(c0, 15u, ch) + 1u, px);
}

/* u8_channels_granule's bases: col4[k] the lane's counter of (channel of
 * byte k of a granule of a flat run, 0) for two or four channels, col4[0]
 * its counter of (0, 0) always. */
__device__ __forceinline__ void u8_channel_bases(uint32_t col, const Args &a, uint32_t (&col4)[4])
{
    const uint32_t m = a.channels == 3 ? 0u : a.channels - 1u;
#pragma unroll
    for (uint32_t k = 0; k < 4; k++) {
        col4[k] = col + ((k & m) << 15);
    }
}

/* MASKED (one channel, S32; or the natural 16-bit histogram in S16): mk
 * holds the mask bytes of the granule's samples (byte j: sample j's pixel),
 * and a sample whose byte is 0 is not counted. */
template <int KIND, int STORE, bool VOTE, bool NAT, typename T, bool MULTI = false,
          bool MASKED = false>
__device__ __forceinline__ void lean_granule(uint32_t *cnt, uint32_t *cnt_lane, const Args &a,
                                             const uint32_t *lut, const float *tab, const uint4 &v,
                                             uint32_t gi = 0, const uint4 &mk = uint4{})
{
    static_assert(!MASKED || (!MULTI && (STORE == IH_WIDE_S32 ||
                                         (STORE == IH_WIDE_S16 && KIND == K_SHIFT && NAT))),
                  "masks: one channel, S32 or the natural 16-bit S16");
    constexpr int NPER = 16 / (int)sizeof(T);
    if constexpr (VOTE && STORE != IH_WIDE_S32 && !MULTI && !MASKED) {
        /* A warp whose 32 granules are one sample repeated (constant data)
         * makes one add: ATOMS.ADD, unlike POPC.INC, pays for equal lanes. */
        const uint32_t x0 = __shfl_sync(FULL, v.x, 0); /* every lane, before the test */
        if (__all_sync(FULL, ih_repeats<sizeof(T)>(v) && v.x == x0)) {
            uint32_t b0;
            if ((threadIdx.x & 31u) == 0 && lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v, 0), b0)) {
                add_n<STORE>(cnt, a, b0, NPER * 32u, 0);
            }
            return;
        }
    }
    if constexpr (KIND == K_SHIFT && STORE == IH_WIDE_S16 && NAT && !MULTI) {
        /* One bin per 16-bit value: a 32-bit word's two samples go through
         * the counter index swz(s >> 1) together, in the word's halves (about
         * two integer instructions fewer a sample), and a granule looks at
         * its old halves once, through the largest of them (VIMNMX3 on
         * sm_90): 0xffff in either half, incremented or not, sends it to
         * s16_fix, which looks at each sample exactly. */
        const uint32_t w4[4] = {v.x, v.y, v.z, v.w};
        uint32_t old[8];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const uint32_t w = w4[i];
            /* swz(s) = s ^ ((s >> 5) & 31) for s = sample >> 1, both halves;
             * bit 15 (the high sample's bit 0) is masked off below. */
            const uint32_t x = (w >> 1) ^ ((w >> 6) & 0x001f001fu);
            const uint32_t dlo = (w & 1u) * 0xffffu + 1u;
            const uint32_t dhi = __umulhi(w & 0x10000u, 0xffff0000u) + 1u; /* 1 or 65536 */
            if constexpr (MASKED) {
                /* a sample left out sees 0: no half of it looks wrapped */
                old[2 * i] = sample_of<uint8_t>(mk, 2 * i) != 0
                                 ? atomicAdd(cnt + (x & 0x7fffu), dlo) : 0u;
                old[2 * i + 1] = sample_of<uint8_t>(mk, 2 * i + 1) != 0
                                     ? atomicAdd(cnt + (x >> 16), dhi) : 0u;
            } else {
                old[2 * i] = atomicAdd(cnt + (x & 0x7fffu), dlo);
                old[2 * i + 1] = atomicAdd(cnt + (x >> 16), dhi);
            }
        }
        uint32_t most = 0;
#pragma unroll
        for (int j = 0; j < 8; j += 2) {
            most = __vimax3_u16x2(most, old[j], old[j + 1]);
        }
        if ((most & 0xffffu) == 0xffffu || (most >> 16) == 0xffffu) {
#pragma unroll
            for (int j = 0; j < 8; j++) {
                s16_fix(a, (uint32_t)sample_of<T>(v, j), 1u, old[j]);
            }
        }
        return;
    }
    uint32_t b[NPER];
    bool in[NPER];
    if constexpr (KIND == K_FTAB) {
        if (a.eps < 0.5f) {
            /* Without a branch: the edge nearest the estimate t, e, and one
             * compare with it. |t - t*| <= eps < 1/2 puts the sample's bin
             * at e or e - 1, and the table's smallest float >= edge e says
             * which (f >= tab[e] <=> f >= edge e), bit for bit as binning.h.
             * Below the range e is 0 and f < tab[0]; at or above it e is
             * `bins` and f >= tab[bins]; NaN gives e = 0 and fails the
             * compare: all three give a code outside [0, bins). Those (and
             * the closed range's end) go through lean_bin. A fast path that
             * trusted floor(t) away from the edges sent 60 % of warps down a
             * second path with 10000 bins over [0, 1), where eps (0.0036) is
             * about seven ulps of t. */
            bool all_in = true;
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                const float f = (float)sample_of<T>(v, j);
                /* One rounding of c_f's (|c_f| u <= |lo| inv u) and one of the
                 * result: within the bound eps holds for (f - lo_f) * inv_f. */
                const float t = __fmaf_rn(f, a.inv_f, a.c_f);
                /* cvt.rni.u32 saturates: t < 0 and NaN give 0. */
                const uint32_t e = min(__float2uint_rn(t), a.bins);
                b[j] = e - 1u + (f >= tab[e] ? 1u : 0u); /* NaN: e - 1 */
                in[j] = b[j] < a.bins;
                all_in = all_in & in[j];
            }
            if (!all_in) {
#pragma unroll
                for (int j = 0; j < NPER; j++) {
                    if (!in[j]) {
                        in[j] = lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v, j), b[j]);
                    }
                }
            }
        } else { /* no usable estimate (eps 2): binning.h's way */
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                in[j] = lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v, j), b[j]);
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            in[j] = lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v, j), b[j]);
        }
    }
    if constexpr (MASKED) {
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            in[j] = in[j] && sample_of<uint8_t>(mk, j) != 0;
        }
    }
    add_channels<MULTI, NPER>(a, gi, b);
    if constexpr (STORE == IH_WIDE_S32) {
        /* Literal increments (ATOMS.POPC.INC merges equal lanes), at byte
         * offsets: one shift and one add to the address. A granule whose
         * samples are all counted (nearly every one) adds without a
         * predicate: a branch around each atomic cost a reconvergence
         * barrier and two more instructions per sample. */
        unsigned char *const base = reinterpret_cast<unsigned char *>(cnt_lane);
        const uint32_t sh = a.copies_log2 + 2u;
        bool all_in = true;
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            all_in = all_in & in[j];
        }
        if (all_in) {
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                atomicAdd(reinterpret_cast<uint32_t *>(base + (swz(b[j]) << sh)), 1u);
            }
        } else {
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                if (in[j]) {
                    atomicAdd(reinterpret_cast<uint32_t *>(base + (swz(b[j]) << sh)), 1u);
                }
            }
        }
        return;
    }
    if constexpr (STORE == IH_WIDE_S16) {
        /* z = the old half inverted, zero where it was 0xffff before the add
         * (it may have wrapped): the smallest z says whether to look. The
         * add (1 or 65536) and the half's mask come from multiply-adds, which
         * run beside the integer pipe that bounds this loop. */
        uint32_t old[NPER];
        uint32_t least = 1;
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            const uint32_t delta = (b[j] & 1u) * 0xffffu + 1u;
            old[j] = 0;
            if (in[j]) {
                old[j] = atomicAdd(cnt + swz(b[j] >> 1), delta);
                least = min(least, ~old[j] & (delta * 0xffffu));
            }
        }
        if (least == 0) {
#pragma unroll
            for (int j = 0; j < NPER; j++) {
                if (in[j]) {
                    s16_fix(a, b[j], 1u, old[j]);
                }
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            if (in[j]) {
                atomicAdd(a.target + b[j], 1ull);
            }
        }
    }
}

/* The counter of the sample at byte `off` of a flat run from base (a partial
 * last granule's samples, one at a time); false when it is in no bin. */
template <int KIND, bool NAT, typename T, bool MULTI>
__device__ __forceinline__ bool tail_slot(const Args &a, const uint32_t *lut, const float *tab,
                                          const uint8_t *base, uint32_t off, uint32_t &b)
{
    if (!lean_bin<KIND, NAT, T>(a, lut, tab, *reinterpret_cast<const T *>(base + off), b)) {
        return false;
    }
    if constexpr (MULTI) {
        b += (off / (uint32_t)sizeof(T)) % a.channels * a.stride;
    }
    return true;
}

/* A block's share of the flat run. NAT: U16 with one bin per value; MULTI:
 * interleaved channels; PLAIN: 8-bit channels in the plain layout
 * (u8_channels_granule); MCH: PLAIN and MASKED, the channels (2, 3 or 4: a
 * copy of the walk each, so that each loads its masks straight). */
template <int KIND, int STORE, bool NAT, typename T, bool MULTI = false, bool PLAIN = false,
          bool MASKED = false, int MCH = 0>
__device__ __forceinline__ void lean_run(uint32_t *cnt, uint32_t *cnt_lane, const Args &a,
                                         const uint32_t *lut, const float *tab)
{
    static_assert(!PLAIN || (KIND == K_LUT8 && NAT && MULTI && STORE == IH_WIDE_S32),
                  "the plain layout is for 8-bit channels with one bin per value");
    const uint32_t col = (uint32_t)__cvta_generic_to_shared(cnt_lane);
    uint32_t col4[4];
    if constexpr (PLAIN) {
        u8_channel_bases(col, a, col4);
    }
    const auto granule = [&](const uint4 &v, uint32_t gi, auto vote, const uint4 &mk) {
        if constexpr (PLAIN) {
            /* MASKED: mk.x the granule's pixels' mask bits; lut: channel_keep's
             * tables (only three channels use them) */
            u8_channels_granule<false, MASKED>(col4, a, v, a.channels == 3 ? mod3(gi) : 0u, mk.x,
                                               lut);
        } else {
            lean_granule<KIND, STORE, decltype(vote)::value, NAT, T, MULTI, MASKED>(
                cnt, cnt_lane, a, lut, tab, v, gi, mk);
        }
    };
    /* MASKED: the mask bytes of granule gi (16 / sizeof(T) of them, from a
     * mask as packed and as aligned as the samples' pixels); PLAIN (a mask
     * as packed as the pixels): the bits of the granule's pixels' mask bytes
     * that are not 0, in m.x (two or four channels: 16 / channels whole
     * pixels, their bytes one aligned word; three: up to 6 pixels from the
     * one byte 0 is of, as the row walk's channel_mask_bits). */
    const auto mask_of = [&](uint32_t gi) {
        uint4 m = uint4{};
        if constexpr (MASKED && PLAIN) {
            static_assert(MCH >= 2 && MCH <= 4, "the masked plain walk's channels");
            if constexpr (MCH == 4) {
                m.x = nonzero_bytes(__ldcs(reinterpret_cast<const unsigned int *>(a.mask) + gi));
            } else if constexpr (MCH == 2) {
                const uint2 h = __ldcs(reinterpret_cast<const uint2 *>(a.mask) + gi);
                m.x = nonzero_bytes(h.x) | (nonzero_bytes(h.y) << 4);
            } else {
                const uint32_t c0 = mod3(gi), p = (16u * gi - c0) * 0xaaaaaaabu;
                m.x = mask_bits_at(a.mask + p, p, pixel_of(c0, 15u, 3u) + 1u, a.g.width / 3u);
            }
        } else if constexpr (MASKED) {
            constexpr uint32_t N = 16 / (uint32_t)sizeof(T);
            const uint8_t *p = a.mask + (size_t)gi * N;
            if constexpr (N == 16) {
                m = __ldcs(reinterpret_cast<const uint4 *>(p));
            } else if constexpr (N == 8) {
                const uint2 h = __ldcs(reinterpret_cast<const uint2 *>(p));
                m.x = h.x;
                m.y = h.y;
            } else {
                m.x = __ldcs(reinterpret_cast<const unsigned int *>(p));
            }
        }
        return m;
    };
    constexpr int THREADS = Threads<STORE, sizeof(T)>::n;
    constexpr int UNROLL = Threads<STORE, sizeof(T)>::unroll;
    constexpr uint32_t CHUNK = THREADS * UNROLL;
    const uint4 *src = reinterpret_cast<const uint4 *>(a.g.base);
    const uint32_t full = a.flat_full;
    const uint32_t whole = full / CHUNK * CHUNK; /* granules in whole chunks */
    if constexpr (STORE == IH_WIDE_S32 && !MASKED) {
        /* The next chunk's loads go out before this one is counted: a warp
         * spends longer counting a chunk (it issues one instruction in ten
         * cycles among its SM's 32 warps) than the memory takes to answer,
         * and with one chunk in flight the H200's SMs sat at 60 % of its
         * read rate on F32. S32 blocks have 512 threads, so the 16 more
         * registers fit; S16's 1024 have none to spare. */
        const uint32_t step = gridDim.x * CHUNK;
        uint32_t c0 = blockIdx.x * CHUNK;
        uint4 v[UNROLL];
        if (c0 < whole) {
            load_chunk<THREADS, UNROLL>(src, c0, v);
        }
        for (; c0 < whole; c0 += step) {
            uint4 nv[UNROLL];
            const uint64_t c1 = (uint64_t)c0 + step;
            if (c1 < whole) {
                load_chunk<THREADS, UNROLL>(src, (uint32_t)c1, nv);
            }
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                granule(v[k], c0 + k * THREADS + threadIdx.x, std::true_type{}, uint4{});
            }
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                v[k] = nv[k];
            }
        }
    } else {
        /* (Masked: one chunk in flight, its masks beside it; both double
         * buffered would take 64 registers of loads.) */
        for (uint32_t c0 = blockIdx.x * CHUNK; c0 < whole; c0 += gridDim.x * CHUNK) {
            uint4 v[UNROLL], mk[UNROLL];
            load_chunk<THREADS, UNROLL>(src, c0, v);
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                mk[k] = mask_of(c0 + k * THREADS + threadIdx.x);
            }
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                granule(v[k], c0 + k * THREADS + threadIdx.x, std::true_type{}, mk[k]);
            }
        }
    }
    /* The last, partial chunk: full granules one by one, then the bytes of a
     * partial last granule, by the last block. */
    if (blockIdx.x == gridDim.x - 1) {
        for (uint32_t i = whole + threadIdx.x; i < full; i += THREADS) {
            granule(__ldcs(src + i), i, std::false_type{}, mask_of(i));
        }
        for (uint32_t off = full * 16u + threadIdx.x * (uint32_t)sizeof(T); off < a.g.width;
             off += THREADS * (uint32_t)sizeof(T)) {
            uint32_t b;
            if (MASKED && a.mask[MULTI ? off / a.channels : off / (uint32_t)sizeof(T)] == 0) {
                continue;
            }
            if (tail_slot<KIND, NAT, T, MULTI>(a, lut, tab, a.g.base, off, b)) {
                if constexpr (PLAIN) {
                    red_shared(col + (b << 7));
                } else {
                    add_n<STORE>(cnt, a, b, 1u, threadIdx.x & 31u);
                }
            }
        }
    }
}

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
 * turns: with 8 values a multiple of 64 a warp's 32 adds went to 8 words,
 * and the H200 counted at 47 % of its read rate (the H100 at 68 %; 96 % in
 * this layout). A block takes a split layout when at most 2 of the 1024
 * granules split_of samples hold a value outside its P, or at most
 * SPLIT_OUTSIDE_MAX (64) where the shared layout's lanes would queue on a
 * few words (crowded). A warp with a value outside P takes every sample
 * through split_add, about twice the shared layout's cost, which pays only
 * where that queueing costs more: a band of 16 values with 1 sample in 256
 * elsewhere (hot pixels or stars on a sky background: 3 % of granules) went
 * from 67 % of an H100's read rate in the shared layout to 86 % in this one
 * (0.3.13), while a band of 1000 values with as many outliers, which the
 * shared layout reads at 96 %, ran at 86 % in it (bench/RESULTS.md, session
 * 26). split_run then folds the block's counters.
 */
constexpr uint32_t PAR_P = 32768, PAR_WORDS = 32768 + 16384;
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
         * indices 2q and 2q + 1: s16_fix's corrections with these targets.
         * (An s16_fix taking its targets as arguments, shared by both, gave
         * the general kernels 24 more bytes of spills.) */
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
     * and only the others through split_add, was slower: a band with 1 in
     * 256 samples elsewhere 77 % of an H100's read rate against 86 %,
     * bench/RESULTS.md, session 26.) */
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

/*
 * F32 samples into 32-bit shared counters, flat (one channel or 2-4
 * interleaved: fpad_run): the padded layout. Every sample goes to a counter,
 * with no test and no branch. The sample's code y is its bin + 1 (-1, 0 and
 * bins + 1 for samples in no bin: the lean kernel keeps no outlier counters,
 * and block ends never read them), and its counter is word y + floor(y / 32)
 * + 2 of its channel's block in its copy: a word of padding every 32, so that
 * bins 32 apart sit in different banks.
 *
 * The code: u = sat(fma(v, inv_s, c_s)) (.sat clamps to [0, 1] and sends NaN
 * to 0), t = u S with S = bins + 1, estimates v's place among the edges plus
 * 1 (t* + 1) within near / 2 for every v in range (the host's bound). Adding
 * 1.5 2^23 rounds t to its nearest integer e in the low bits of the sum (no
 * conversion instruction), and d = t - e, exact in one FMA. Where |d| >= near
 * no edge lies between t and t* + 1, and y = e - [d < 0]; where |d| < near
 * (about one sample in 200 with 10000 bins) d becomes v minus the table's
 * smallest float >= edge e - 1, whose sign bit says the same exactly: v <
 * that float <=> v < the edge (a zero edge is held as -0, since -0 - +0 is
 * -0; v equal to the entry gives +0 otherwise). Out of range, below lo:
 * e <= 1 and y <= 0 (v < tab[0] where e is 1); at or above hi: e = S and
 * v >= tab[bins] (the closed end's entry is the float above hi), y = S; NaN:
 * e = 0. The table's entry -1 (e = 0) is the guard word below it: any value
 * gives y = -1 or 0.
 * The sum's bits are 0x4b400000 + e, a multiple of 32 plus e, so the bits
 * less the sign give y + 0x4b400000 and its word with one LEA.HI and one
 * IMAD, the constants folded into the lane's base. About 12 instructions a
 * sample, half of them on the FMA pipe, and a table load only near an edge:
 * the table-for-every-sample form spent about half its shared-memory
 * wavefronts on those loads, which bound the H200.
 */
constexpr float MAGIC = 12582912.0f; /* 1.5 * 2^23 */
constexpr uint32_t MAGIC_BITS = 0x4b400000u;

/* Word of code y (from MAGIC_BITS + y) in a copy, less the constant
 * MAGIC_BITS + MAGIC_BITS / 32 - 2 that the lane's base takes off. */
__device__ __forceinline__ uint32_t fpad_raw_word(uint32_t x)
{
    return x + (x >> 5);
}

/* Word of bin b in a copy. */
__device__ __forceinline__ uint32_t fpad_word(uint32_t b)
{
    return (b + 1u) + ((b + 1u) >> 5) + 2u;
}

/* MAGIC_BITS + the code of sample f; tab_adj is the table's shared address
 * less 4 (entry -1) less MAGIC_BITS * 4, so that entry e - 1 is at tab_adj +
 * 4 x (the sum's bits). */
__device__ __forceinline__ uint32_t fpad_code(const Args &a, uint32_t tab_adj, float f)
{
    float u;
    asm("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(u) : "f"(f), "f"(a.inv_s), "f"(a.c_s));
    const float v = __fmaf_rn(u, a.s_f, MAGIC);
    float d = __fmaf_rn(u, a.s_f, -__fsub_rn(v, MAGIC));
    const uint32_t bits = __float_as_uint(v);
    if (fabsf(d) < a.near) {
        float edge;
        asm("ld.shared.f32 %0, [%1];" : "=f"(edge) : "r"(tab_adj + bits * 4u));
        d = __fsub_rn(f, edge);
    }
    return bits + (uint32_t)(__float_as_int(d) >> 31);
}

/* One block's share of the flat run into the padded layout. FAST: the
 * estimate's bound holds (else binning.h's way through lean_bin). MULTI:
 * 2-4 interleaved channels, channel c's counters a block of pad_words words
 * after channel c - 1's (in each copy's word units); the sample of granule
 * gi at j is of channel (4 gi + j) mod channels: j mod channels for 2 and 4,
 * (gi + j) mod 3 for 3. */
template <bool FAST, bool MULTI>
__device__ __forceinline__ void fpad_run(uint32_t *cnt_lane, const Args &a, const uint32_t *lut,
                                         const float *tab)
{
    constexpr int THREADS = Threads<IH_WIDE_S32, 4>::n;
    constexpr int UNROLL = Threads<IH_WIDE_S32, 4>::unroll;
    constexpr uint32_t CHUNK = THREADS * UNROLL;
    const uint32_t cstride = a.copies * 4u;
    /* The shared addresses with the codes' constants folded in (opaque to
     * the compiler, which would otherwise add them back one by one). */
    uint32_t col = (uint32_t)__cvta_generic_to_shared(cnt_lane) -
                   (MAGIC_BITS + (MAGIC_BITS >> 5) - 2u) * cstride;
    uint32_t tab_adj = (uint32_t)__cvta_generic_to_shared(tab) - 4u - MAGIC_BITS * 4u;
    asm("mov.b32 %0, %0;" : "+r"(col));
    asm("mov.b32 %0, %0;" : "+r"(tab_adj));
    /* Channel c's base (MULTI), and sample j's for 2 or 4 channels. */
    const uint32_t cb = a.pad_words * cstride;
    const uint32_t cbase[4] = {col, col + cb, col + 2u * cb, col + 3u * cb};
    const uint32_t fixed[4] = {col, cbase[1], a.channels == 4 ? cbase[2] : col,
                               a.channels == 4 ? cbase[3] : cbase[1]};
    const auto add = [&](uint32_t base, uint32_t x) {
        red_shared(base + fpad_raw_word(x) * cstride);
    };
    const auto sample = [&](uint32_t base, float f) {
        if constexpr (FAST) {
            add(base, fpad_code(a, tab_adj, f));
        } else {
            uint32_t b;
            if (lean_bin<K_FTAB, false, float>(a, lut, tab, f, b)) {
                add(base, MAGIC_BITS + b + 1u);
            }
        }
    };
    const auto granule = [&](const uint4 &v, uint32_t gi) {
        uint32_t base[4] = {col, col, col, col};
        if constexpr (MULTI) {
            if (a.channels == 3) {
                const uint32_t k = mod3(gi);
                base[0] = k == 0 ? cbase[0] : k == 1 ? cbase[1] : cbase[2];
                base[1] = k == 0 ? cbase[1] : k == 1 ? cbase[2] : cbase[0];
                base[2] = k == 0 ? cbase[2] : k == 1 ? cbase[0] : cbase[1];
                base[3] = base[0];
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    base[j] = fixed[j];
                }
            }
        }
        if constexpr (FAST) {
            /* All four codes first: the table loads go out together. */
            const uint32_t x0 = fpad_code(a, tab_adj, __uint_as_float(v.x));
            const uint32_t x1 = fpad_code(a, tab_adj, __uint_as_float(v.y));
            const uint32_t x2 = fpad_code(a, tab_adj, __uint_as_float(v.z));
            const uint32_t x3 = fpad_code(a, tab_adj, __uint_as_float(v.w));
            add(base[0], x0);
            add(base[1], x1);
            add(base[2], x2);
            add(base[3], x3);
        } else {
            sample(base[0], __uint_as_float(v.x));
            sample(base[1], __uint_as_float(v.y));
            sample(base[2], __uint_as_float(v.z));
            sample(base[3], __uint_as_float(v.w));
        }
    };
    const uint4 *src = reinterpret_cast<const uint4 *>(a.g.base);
    const uint32_t full = a.flat_full;
    const uint64_t whole = full / CHUNK * CHUNK; /* granules in whole chunks */
    const uint64_t step = (uint64_t)gridDim.x * CHUNK;
    /* Two chunks' registers in turn: the next chunk's loads are in flight
     * while this one is counted, with no copies between them. */
    uint4 v0[UNROLL], v1[UNROLL];
    /* Chunk next's loads into v go out (when it is whole), then chunk c in
     * u is counted. */
    const auto step_to = [&](uint64_t next, uint4 (&v)[UNROLL], uint64_t c,
                             const uint4 (&u)[UNROLL]) {
        if (next < whole) {
            load_chunk<THREADS, UNROLL>(src, (uint32_t)next, v);
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            granule(u[k], (uint32_t)c + k * THREADS + threadIdx.x);
        }
    };
    uint64_t c0 = (uint64_t)blockIdx.x * CHUNK;
    if (c0 < whole) {
        load_chunk<THREADS, UNROLL>(src, (uint32_t)c0, v0);
    }
    while (c0 < whole) {
        const uint64_t c1 = c0 + step;
        step_to(c1, v1, c0, v0);
        if (c1 >= whole) {
            break;
        }
        const uint64_t c2 = c1 + step;
        step_to(c2, v0, c1, v1);
        c0 = c2;
    }
    /* The last, partial chunk: full granules one by one, then the samples
     * of a partial last granule, by the last block. */
    if (blockIdx.x == gridDim.x - 1) {
        for (uint32_t i = (uint32_t)whole + threadIdx.x; i < full; i += THREADS) {
            granule(__ldcs(src + i), i);
        }
        for (uint32_t off = full * 16u + threadIdx.x * 4u; off < a.g.width; off += THREADS * 4u) {
            const uint32_t c = MULTI ? (off / 4u) % a.channels : 0u;
            sample(c == 0 ? cbase[0] : c == 1 ? cbase[1] : c == 2 ? cbase[2] : cbase[3],
                   *reinterpret_cast<const float *>(a.g.base + off));
        }
    }
}

/* The padded layout's counters into the 64-bit target (own: stored, for a
 * batch block alone on its image), every thread: counter i is bin i mod
 * stride of channel i / stride. */
template <bool OWN> __device__ __forceinline__ void fpad_end(const Args &a, const uint32_t *cnt)
{
    __syncthreads();
    for (uint32_t i = threadIdx.x; i < a.len; i += blockDim.x) {
        const uint32_t c = i / a.stride, b = i - c * a.stride;
        const uint32_t sum = copies_sum(a, cnt, c * a.pad_words + fpad_word(b));
        if constexpr (OWN) {
            a.target[i] = (a.accumulate ? a.target[i] : 0ull) + sum;
        } else if (sum != 0) {
            atomicAdd(a.target + i, (unsigned long long)sum);
        }
    }
}

template <int KIND, int STORE, typename T, bool BATCH, bool MULTI>
__global__ void __launch_bounds__(Threads<STORE, sizeof(T)>::n) lean_kernel(Args a)
{
    if constexpr (BATCH) {
        batch_image(a);
    }
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *lut = reinterpret_cast<uint32_t *>(smem);
    float *tab = reinterpret_cast<float *>(smem + TAB_GUARD);
    uint32_t *cnt = reinterpret_cast<uint32_t *>(smem + a.cnt_off);
    uint32_t *cnt_lane = cnt + ((threadIdx.x & 31u) & (a.copies - 1));
    block_begin<KIND, STORE>(a, lut, tab, cnt);

    if constexpr (KIND == K_FTAB && STORE == IH_WIDE_S32) {
        if (a.near < 0.5f) {
            fpad_run<true, MULTI>(cnt_lane, a, lut, tab);
        } else {
            fpad_run<false, MULTI>(cnt_lane, a, lut, tab);
        }
        if (BATCH && a.own) {
            fpad_end<true>(a, cnt);
        } else {
            fpad_end<false>(a, cnt);
        }
        return;
    }
    if constexpr (KIND == K_SHIFT && STORE == IH_WIDE_S16 && sizeof(T) == 2 && !MULTI) {
        if (a.natural == 2) {
            const uint2 k =
                split_of(a, Threads<STORE, sizeof(T)>::n * Threads<STORE, sizeof(T)>::unroll);
            if (k.x == SPLIT_PARITY) {
                split_run(cnt, a, ParityMap{k.y});
                return;
            }
            if (k.x == SPLIT_WINDOW) {
                split_run(cnt, a, WindowMap{k.y});
                return;
            }
        }
    }
    if constexpr (MULTI && KIND == K_LUT8) {
        if (a.natural) {
            lean_run<KIND, STORE, true, T, true>(cnt, cnt_lane, a, lut, tab);
        } else {
            lean_run<KIND, STORE, false, T, true>(cnt, cnt_lane, a, lut, tab);
        }
    } else if constexpr (MULTI) {
        lean_run<KIND, STORE, false, T, true>(cnt, cnt_lane, a, lut, tab);
    } else if constexpr (KIND == K_SHIFT) {
        if (a.natural) {
            lean_run<KIND, STORE, true, T>(cnt, cnt_lane, a, lut, tab);
        } else {
            lean_run<KIND, STORE, false, T>(cnt, cnt_lane, a, lut, tab);
        }
    } else {
        lean_run<KIND, STORE, false, T>(cnt, cnt_lane, a, lut, tab);
    }
    if constexpr (BATCH && STORE == IH_WIDE_S32) {
        if (a.own) {
            batch_own_end(a, cnt);
            return;
        }
    }
    block_end<STORE>(a, cnt);
}

/* A lean block's shared memory: the table, the counters and the lane's copy. */
struct LeanShared {
    uint32_t *lut;
    float *tab;
    uint32_t *cnt, *cnt_lane;
};

/* A lean block's start: its image (BATCH), its table and zeroed counters
 * (lean_kernel spells this out: its measured code stays as it was). */
template <int KIND, int STORE, bool BATCH> __device__ __forceinline__ LeanShared lean_begin(Args &a)
{
    if constexpr (BATCH) {
        batch_image(a);
    }
    extern __shared__ __align__(16) unsigned char smem[];
    LeanShared sh;
    sh.lut = reinterpret_cast<uint32_t *>(smem);
    sh.tab = reinterpret_cast<float *>(smem + TAB_GUARD);
    sh.cnt = reinterpret_cast<uint32_t *>(smem + a.cnt_off);
    sh.cnt_lane = sh.cnt + ((threadIdx.x & 31u) & (a.copies - 1));
    block_begin<KIND, STORE>(a, sh.lut, sh.tab, sh.cnt);
    return sh;
}

/*
 * One channel with a mask (W_FLAT_MASKED): the lean kernel's flat walk of a
 * kind with a cheap bin and 32-bit counters, each granule's mask bytes
 * loaded beside it (the mask as packed as the image, and aligned with it);
 * a sample whose pixel's byte is 0 is not counted. The general walk took a
 * division and a mask test a sample, at about a fifth of the read rate.
 */
template <int KIND, typename T, bool BATCH>
__global__ void __launch_bounds__(Threads<IH_WIDE_S32, sizeof(T)>::n)
    lean_masked_kernel(Args a)
{
    const LeanShared sh = lean_begin<KIND, IH_WIDE_S32, BATCH>(a);
    if (KIND == K_LUT8 && a.natural) {
        lean_run<KIND, IH_WIDE_S32, true, T, false, false, true>(sh.cnt, sh.cnt_lane, a, sh.lut,
                                                                 sh.tab);
    } else {
        lean_run<KIND, IH_WIDE_S32, false, T, false, false, true>(sh.cnt, sh.cnt_lane, a, sh.lut,
                                                                  sh.tab);
    }
    if constexpr (BATCH) {
        if (a.own) {
            batch_own_end(a, sh.cnt);
            return;
        }
    }
    block_end<IH_WIDE_S32>(a, sh.cnt);
}

/* The natural 16-bit histogram of one channel with a mask, flat (as
 * lean_masked_kernel's walk) in S16's pairs: each sample's atomic only
 * where its mask byte is not 0, and no one-value vote. */
template <bool BATCH>
__global__ void __launch_bounds__(Threads<IH_WIDE_S16, 2>::n) lean_masked16_kernel(Args a)
{
    const LeanShared sh = lean_begin<K_SHIFT, IH_WIDE_S16, BATCH>(a);
    lean_run<K_SHIFT, IH_WIDE_S16, true, uint16_t, false, false, true>(sh.cnt, sh.cnt_lane, a,
                                                                       sh.lut, sh.tab);
    block_end<IH_WIDE_S16>(a, sh.cnt);
}

/*
 * 8-bit samples of 2-4 interleaved channels, one bin per value, no mask, in
 * the plain layout (u8_channels_granule): flat, the lean kernel's walk with
 * nothing else in it, so that two 512-thread blocks fit an SM where their
 * counters do (two and three channels; the lean kernel of 8-bit channels,
 * with its table path, takes 82 registers: one block); ROWS, rows of any
 * pitch and alignment (a crop), through hist_u8's walk: a granule's first
 * channel from its place in its row, the bytes at a row's edges one by one
 * (the general walk took a division and a mask test a sample).
 */
template <bool BATCH, bool ROWS, bool MASKED = false>
__global__ void __launch_bounds__(Threads<IH_WIDE_S32, 1>::n, 2) u8_channels_kernel(Args a)
{
    if constexpr (BATCH) {
        batch_image(a);
    }
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *cnt = reinterpret_cast<uint32_t *>(smem + a.cnt_off);
    uint4 *cnt4 = reinterpret_cast<uint4 *>(cnt);
    /* MASKED: channel_keep's tables in the table's room before the counters */
    uint32_t *spread = reinterpret_cast<uint32_t *>(smem);
    static_assert(SPREAD_WORDS * 4 <= 1024, "the tables fit the room job_args leaves");
    if constexpr (MASKED) {
        spread_tables(spread);
    }
    for (uint32_t i = threadIdx.x; i < a.phys / 4; i += blockDim.x) {
        cnt4[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
    if constexpr (ROWS) {
        static_assert(Threads<IH_WIDE_S32, 1>::n == ih_u8::THREADS &&
                          Threads<IH_WIDE_S32, 1>::unroll == ih_u8::UNROLL,
                      "chunk_of's chunks are hist_u8's");
        uint32_t col4[4];
        u8_channel_bases((uint32_t)__cvta_generic_to_shared(cnt + (threadIdx.x & 31u)), a, col4);
        const uint32_t ch = a.channels;
        const auto channel_of = [ch](uint32_t x) { return ch == 3 ? mod3(x) : x & (ch - 1u); };
        const uint32_t px = a.g.width / ch; /* a row's pixels (its mask row's bytes) */
        /* MASKED: pix, the mask bits of the granule's pixels, loaded beside it */
        const auto on_vec = [&](uint4 v, uint32_t, uint32_t x, uint32_t pix) {
            u8_channels_granule<true, MASKED>(col4, a, v, channel_of(x), pix, spread);
        };
        const auto on_byte = [&](uint32_t b, uint32_t r, uint32_t x) {
            const uint32_t c = channel_of(x);
            if (MASKED) {
                const uint32_t p = ch == 3 ? (x - c) * 0xaaaaaaabu : x >> (ch >> 1);
                if (a.mask[(size_t)r * a.mask_pitch + p] == 0) {
                    return;
                }
            }
            red_shared(col4[0] + (c << 15) + (b << 7));
        };
        if constexpr (MASKED) {
            ih_u8::walk_granules(a.g, blockIdx.x, gridDim.x, UINT32_MAX, on_vec, on_byte,
                                 [&](uint32_t r, uint32_t x) {
                                     return channel_mask_bits(a, r, x, channel_of(x), ch, px);
                                 });
        } else {
            ih_u8::walk_granules(
                a.g, blockIdx.x, gridDim.x, UINT32_MAX,
                [&](uint4 v, uint32_t r, uint32_t x) { on_vec(v, r, x, 0u); }, on_byte);
        }
    } else {
        uint32_t *lane = cnt + (threadIdx.x & 31u);
        if constexpr (MASKED) {
            /* the mask as packed as the pixels (for two and four channels
             * aligned with the granules: plain_of) */
            if (a.channels == 3) {
                lean_run<K_LUT8, IH_WIDE_S32, true, uint8_t, true, true, true, 3>(cnt, lane, a,
                                                                                  spread, nullptr);
            } else if (a.channels == 4) {
                lean_run<K_LUT8, IH_WIDE_S32, true, uint8_t, true, true, true, 4>(cnt, lane, a,
                                                                                  spread, nullptr);
            } else {
                lean_run<K_LUT8, IH_WIDE_S32, true, uint8_t, true, true, true, 2>(cnt, lane, a,
                                                                                  spread, nullptr);
            }
        } else {
            lean_run<K_LUT8, IH_WIDE_S32, true, uint8_t, true, true>(cnt, lane, a, nullptr,
                                                                    nullptr);
        }
    }
    __syncthreads();
    /* Counter s: its 32 copies in 8 loads of four, each thread starting at a
     * different quarter-line (8 threads, a phase of 16-byte loads, hit 32
     * different banks). */
    for (uint32_t s = threadIdx.x; s < a.len; s += blockDim.x) {
        uint32_t sum = 0;
#pragma unroll
        for (uint32_t k = 0; k < 8; k++) {
            const uint4 q = cnt4[s * 8 + ((k + s) & 7u)];
            sum += q.x + q.y + q.z + q.w;
        }
        if constexpr (BATCH) {
            if (a.own) {
                a.target[s] = (a.accumulate ? a.target[s] : 0ull) + sum;
                continue;
            }
        }
        if (sum != 0) {
            atomicAdd(a.target + s, (unsigned long long)sum);
        }
    }
}

/*
 * Tiny images of a batch (a tensor of flat images of at most a few KB; lean
 * kinds, no outlier counters, at most TINY_LEN counters an image): one warp
 * an image, with counters of its own in shared memory, so that no image
 * waits on a block-wide barrier and a block's 512 threads are not spent on
 * a few hundred granules. The block makes the table once; then each warp
 * zeroes its counters, counts its image (each lane a granule at a time, a
 * few in flight), and stores all of the image's counters.
 */
constexpr uint32_t TINY_WARPS = 8, TINY_LEN = 2048;

template <int KIND, typename T, bool NAT, bool MULTI>
__global__ void __launch_bounds__(TINY_WARPS * 32) tiny_kernel(Args a, uint32_t count)
{
    constexpr int NPER = 16 / (int)sizeof(T);
    constexpr int UNROLL = 4;
    extern __shared__ __align__(16) unsigned char smem[];
    uint32_t *lut = reinterpret_cast<uint32_t *>(smem);
    float *tab = reinterpret_cast<float *>(smem + TAB_GUARD);
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    const uint32_t words = (a.len + 31u) & ~31u;
    uint32_t *cnt = reinterpret_cast<uint32_t *>(smem + a.cnt_off) + warp * words;
    block_begin<KIND, IH_WIDE_GLOBAL>(a, lut, tab, nullptr); /* tables only */
    const uint32_t full = a.flat_full;
    for (uint32_t img = blockIdx.x * TINY_WARPS + warp; img < count;
         img += gridDim.x * TINY_WARPS) {
        for (uint32_t i = lane; i < words; i += 32) {
            cnt[i] = 0;
        }
        __syncwarp();
        const uint8_t *base = a.g.base + (long long)img * a.img_stride;
        const uint4 *src = reinterpret_cast<const uint4 *>(base);
        for (uint32_t g0 = 0; g0 < full; g0 += 32 * UNROLL) {
            uint4 v[UNROLL];
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                const uint32_t gi = g0 + k * 32 + lane;
                if (gi < full) {
                    v[k] = __ldcs(src + gi);
                }
            }
#pragma unroll
            for (int k = 0; k < UNROLL; k++) {
                const uint32_t gi = g0 + k * 32 + lane;
                if (gi >= full) {
                    continue;
                }
                uint32_t b[NPER];
                bool in[NPER];
#pragma unroll
                for (int j = 0; j < NPER; j++) {
                    in[j] = lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v[k], j), b[j]);
                }
                add_channels<MULTI, NPER>(a, gi, b);
#pragma unroll
                for (int j = 0; j < NPER; j++) {
                    if (in[j]) {
                        atomicAdd(cnt + b[j], 1u);
                    }
                }
            }
        }
        /* The bytes of a partial last granule. */
        for (uint32_t off = full * 16u + lane * (uint32_t)sizeof(T); off < a.g.width;
             off += 32u * (uint32_t)sizeof(T)) {
            uint32_t b;
            if (tail_slot<KIND, NAT, T, MULTI>(a, lut, tab, base, off, b)) {
                atomicAdd(cnt + b, 1u);
            }
        }
        __syncwarp();
        unsigned long long *t = a.target + (size_t)img * a.len;
        for (uint32_t i = lane; i < a.len; i += 32) {
            t[i] = (a.accumulate ? t[i] : 0ull) + cnt[i];
        }
        __syncwarp();
    }
}

/* A sample from any byte address. */
template <typename T> __device__ __forceinline__ T load_any(const uint8_t *p)
{
    if constexpr (sizeof(T) == 1) {
        return (T)*p;
    } else if constexpr (sizeof(T) == 2) {
        return (T)(p[0] | (p[1] << 8));
    } else {
        return __uint_as_float((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                               ((uint32_t)p[3] << 24));
    }
}

/* Views whose rows do not start on a sample boundary (a U16 or F32 view at
 * an odd address): byte loads, straight into the target. Slow and rare. */
template <typename T>
__global__ void __launch_bounds__(256) wide_unaligned_kernel(Args a, const uint8_t *base,
                                                             size_t pitch, uint32_t rows,
                                                             uint32_t samples)
{
    for (uint32_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const uint8_t *row = base + (size_t)r * pitch;
        for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < samples;
             s += gridDim.x * blockDim.x) {
            const uint32_t x = s / a.channels, c = s - x * a.channels;
            if (a.mask != nullptr && a.mask[(size_t)r * a.mask_pitch + x] == 0) {
                continue;
            }
            const T v = load_any<T>(row + (size_t)s * sizeof(T));
            const uint32_t b = sizeof(T) == 4 ? ih_bin_of_double(&a.bin, (double)v)
                                              : ih_bin_of_int(&a.bin, (uint32_t)v);
            const uint32_t sl = to_slot(a, b);
            if (sl != NONE) {
                atomicAdd(a.target + sl + c * a.stride, 1ull);
            }
        }
    }
}

/* Order-preserving key of a float: unsigned compares of keys are float compares. */
__device__ __forceinline__ uint32_t key_of(float f)
{
    const uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

template <typename T>
__global__ void __launch_bounds__(256) range_kernel(const uint8_t *base, size_t pitch,
                                                    uint32_t rows, uint32_t samples,
                                                    uint32_t channels, const uint8_t *mask,
                                                    size_t mask_pitch, bool aligned,
                                                    unsigned int *keys)
{
    uint32_t lo = 0xffffffffu, hi = 0;
    for (uint32_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const uint8_t *row = base + (size_t)r * pitch;
        for (uint32_t s = blockIdx.x * blockDim.x + threadIdx.x; s < samples;
             s += gridDim.x * blockDim.x) {
            if (mask != nullptr && mask[(size_t)r * mask_pitch + s / channels] == 0) {
                continue;
            }
            const uint8_t *p = row + (size_t)s * sizeof(T);
            const T v = aligned ? *reinterpret_cast<const T *>(p) : load_any<T>(p);
            const float f = (float)v;
            if (!isfinite(f)) {
                continue;
            }
            const uint32_t k = key_of(f);
            lo = k < lo ? k : lo;
            hi = k > hi ? k : hi;
        }
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        const uint32_t l2 = __shfl_xor_sync(FULL, lo, d), h2 = __shfl_xor_sync(FULL, hi, d);
        lo = l2 < lo ? l2 : lo;
        hi = h2 > hi ? h2 : hi;
    }
    if ((threadIdx.x & 31) == 0 && lo <= hi) {
        atomicMin(keys, lo);
        atomicMax(keys + 1, hi);
    }
}

__global__ void range_init_kernel(unsigned int *keys)
{
    keys[0] = 0xffffffffu;
    keys[1] = 0;
}

typedef void (*wide_fn)(Args);

/* Flat runs without outlier counters go to the lean kernel where the kind
 * has one (walk W_FLAT is only asked for then); the rest walk rows. */
template <int KIND, int STORE, typename T, bool BATCH> wide_fn pick_walk(int walk)
{
    constexpr bool lean = KIND == K_LUT8 || KIND == K_SHIFT || KIND == K_FTAB;
    if (walk == W_GENERAL) {
        return wide_kernel<KIND, STORE, W_GENERAL, T, BATCH>;
    }
    if constexpr (lean) {
        if (walk == W_FLAT) {
            return lean_kernel<KIND, STORE, T, BATCH, false>;
        }
        if constexpr (STORE == IH_WIDE_S32) {
            if (walk == W_FLAT_MASKED) {
                return lean_masked_kernel<KIND, T, BATCH>;
            }
        }
        if constexpr (STORE == IH_WIDE_S16 && KIND == K_SHIFT) {
            if (walk == W_FLAT_MASKED) { /* walk_of: the natural histogram only */
                return lean_masked16_kernel<BATCH>;
            }
        }
        if constexpr (STORE != IH_WIDE_S16) {
            if (walk == W_FLAT_CHANNELS) {
                return lean_kernel<KIND, STORE, T, BATCH, true>;
            }
        }
    }
    return wide_kernel<KIND, STORE, W_SIMPLE, T, BATCH>;
}

/* Batches (batch != 0) have kernels for the S32 and global stores, and for
 * S16 of 16-bit samples binned by a shift (the natural histogram) in the
 * flat walks and the simple one (s16_batch_walk); nullptr for the rest. */
template <int KIND, typename T> wide_fn pick_store(int store, int walk, int batch)
{
    switch (store) {
    case IH_WIDE_S32:
        return batch ? pick_walk<KIND, IH_WIDE_S32, T, true>(walk)
                     : pick_walk<KIND, IH_WIDE_S32, T, false>(walk);
    case IH_WIDE_S16:
        if constexpr (KIND == K_SHIFT) {
            if (batch) {
                return walk == W_FLAT          ? lean_kernel<KIND, IH_WIDE_S16, T, true, false>
                       : walk == W_FLAT_MASKED ? lean_masked16_kernel<true>
                       : walk == W_SIMPLE      ? wide_kernel<KIND, IH_WIDE_S16, W_SIMPLE, T, true>
                                               : nullptr;
            }
        }
        return batch ? nullptr : pick_walk<KIND, IH_WIDE_S16, T, false>(walk);
    default:
        return batch ? pick_walk<KIND, IH_WIDE_GLOBAL, T, true>(walk)
                     : pick_walk<KIND, IH_WIDE_GLOBAL, T, false>(walk);
    }
}

/* The integer fast path in 32 bits: ilo within +-2^30. */
bool shift32(const ih_hist_job &job)
{
    return job.bin.shift_ok && job.bin.ilo > -(INT64_C(1) << 30) && job.bin.ilo < (INT64_C(1) << 30);
}

wide_fn pick(const ih_hist_job &job, const ih_wide_plan_t &plan, int walk, int batch)
{
    switch (job.dtype) {
    case IMGHIST_U8: return pick_store<K_LUT8, uint8_t>(plan.store, walk, batch);
    case IMGHIST_U16:
        return shift32(job) ? pick_store<K_SHIFT, uint16_t>(plan.store, walk, batch)
                            : pick_store<K_INT, uint16_t>(plan.store, walk, batch);
    default:
        return plan.table ? pick_store<K_FTAB, float>(plan.store, walk, batch)
                          : pick_store<K_FDBL, float>(plan.store, walk, batch);
    }
}

typedef void (*tiny_fn)(Args, uint32_t);

template <int KIND, typename T, bool NAT> tiny_fn tiny_multi(bool multi)
{
    return multi ? tiny_kernel<KIND, T, NAT, true> : tiny_kernel<KIND, T, NAT, false>;
}

/* The tiny-image kernel of a lean kind (nullptr for the others). */
tiny_fn pick_tiny(const ih_hist_job &job, const ih_wide_plan_t &plan, bool natural8)
{
    const bool multi = job.channels > 1;
    switch (job.dtype) {
    case IMGHIST_U8:
        return natural8 ? tiny_multi<K_LUT8, uint8_t, true>(multi)
                        : tiny_multi<K_LUT8, uint8_t, false>(multi);
    case IMGHIST_U16:
        return shift32(job) ? tiny_multi<K_SHIFT, uint16_t, false>(multi) : nullptr;
    default: return plan.table ? tiny_multi<K_FTAB, float, false>(multi) : nullptr;
    }
}

size_t round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* One channel's words in an S32 copy of an F32 job: the padded layout's,
 * code bins + 1's word the last (see fpad_code). */
size_t pad_words(const ih_hist_job &job)
{
    return job.stride + 4 + (job.stride + 1) / 32;
}

/* Counter words of one S32 copy: F32 jobs take the padded layout's, the
 * others one word a counter. */
size_t s32_words(const ih_hist_job &job)
{
    return job.dtype == IMGHIST_F32 ? round_up(job.channels * pad_words(job), 32)
                                    : round_up(job.len, 32);
}

/* Bytes of an F32 edge table (entries 0..bins) and the guard word below it. */
size_t tab_bytes(const ih_hist_job &job)
{
    return TAB_GUARD + round_up(((size_t)job.bin.bins + 1) * 4, 16);
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * F32 binning: the range as floats, and the single-precision estimate
 * t = fl(fl(v - lo_f) * inv_f) with a bound eps on its distance, in bins, from
 * the exact position of v among binning.h's edges: twice ih_float_bound plus
 * 2^-20. A sample whose frac(t) is within eps of 0 or 1 is binned exactly.
 * Where the bound is loose (eps > 1/4) or none (a range wider than 1e38,
 * where v - lo_f could overflow and lean_bin once put such samples in bin 0)
 * or t could reach 2^24, the estimate is not used.
 */
void float_estimate(const ih_binning &b, Args &a)
{
    a.lo_ru = ih_float_up(b.lo);
    a.hi_ru = ih_float_up(b.hi);
    a.lo_f = (float)b.lo;
    a.inv_f = (float)b.inv;
    const double mag = fabs(b.lo) + fabs(b.hi);
    const double eps = 2.0 * ih_float_bound(&b) + ldexp(1.0, -20);
    const bool usable = isfinite(eps) && eps <= 0.25 && b.bins <= (1u << 22) &&
                        isfinite(a.lo_f) && isfinite(a.inv_f) && a.inv_f > 0.0f;
    a.eps = usable ? (float)eps : 2.0f; /* 2: frac(t) is never in (2, -1) */
    /* The lean kernel's t = fma(v, inv_f, c_f): its errors are the rounding
     * of c_f (u |lo| inv, inside the subtraction's term u mag inv above), of
     * inv_f (u t) and of the result (u t), so eps bounds it as well. */
    a.c_f = (float)(-(double)a.lo_f * (double)a.inv_f);
    /* The padded layout's t = u S, u = sat(fma(v, inv_s, c_s)), S = bins + 1,
     * against t* + 1 = (v - lo) inv + 1: the rounding of u (S u / 2 once
     * scaled), of inv_s (u |v| inv <= u mag inv), of c_s (u (1 + |lo| inv))
     * and the double edges' and constants' own (2^-48 mag inv). near is
     * twice that plus 2^-20; t below 2^22 keeps the rounding by 1.5 2^23
     * exact. */
    const double S = (double)b.bins + 1.0;
    const double inv_s = b.inv / S, c_s = (1.0 - b.lo * b.inv) / S;
    a.inv_s = (float)inv_s;
    a.c_s = (float)c_s;
    a.s_f = (float)S;
    const double bound2 = ldexp(S + 1.0 + mag * b.inv + fabs(b.lo) * b.inv, -24) +
                          ldexp(mag * b.inv, -48);
    const double near = 2.0 * bound2 + ldexp(1.0, -20);
    const bool fast = isfinite(near) && near <= 0.25 && S < (double)(1u << 22) &&
                      isfinite(a.c_s) && isfinite(a.inv_s) && a.inv_s >= FLT_MIN;
    a.near = fast ? (float)near : 2.0f;
}

} // namespace

cudaError_t ih_wide_plan(const ih_hist_job *job, int sm_count, int blocks_per_sm,
                         ih_wide_plan_t *plan)
{
    (void)sm_count;
    int dev = 0, optin = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e != cudaSuccess) {
        return e;
    }
    const size_t len = job->len;
    const size_t lut = job->dtype == IMGHIST_U8 ? 1024 : 0;
    const size_t tab = job->dtype == IMGHIST_F32 ? tab_bytes(*job) : 0;
    const size_t len32 = s32_words(*job);
    memset(plan, 0, sizeof *plan);
    plan->copies = 1;
    /* S32: the most copies (up to 32) that leave `bps` blocks per SM. */
    const int want = blocks_per_sm > 0 ? blocks_per_sm : 2;
    for (int bps = want; bps >= 1; bps = bps > 1 ? 1 : 0) {
        size_t per_block = (size_t)per_sm / (size_t)bps;
        per_block = per_block > 1024 ? per_block - 1024 : 0;
        per_block = per_block < (size_t)optin ? per_block : (size_t)optin;
        for (int with_tab = tab > 0 ? 1 : 0; with_tab >= 0; with_tab--) {
            const size_t fixed = lut + (with_tab ? tab : 0);
            if (fixed + len32 * 4 > per_block) {
                continue;
            }
            size_t copies = (per_block - fixed) / (len32 * 4);
            copies = copies > 32 ? 32 : copies;
            size_t c = 1;
            while (c * 2 <= copies) c *= 2;
            plan->store = IH_WIDE_S32;
            plan->copies = (int)c;
            plan->table = with_tab;
            plan->smem = fixed + c * len32 * 4;
            plan->threads = 512;
            return cudaSuccess;
        }
        if (bps == 1) break;
    }
    const size_t words = round_up((len + 1) / 2, 32);
    for (int with_tab = tab > 0 ? 1 : 0; with_tab >= 0; with_tab--) {
        const size_t fixed = lut + (with_tab ? tab : 0);
        if (fixed + words * 4 <= (size_t)optin) {
            plan->store = IH_WIDE_S16;
            plan->table = with_tab;
            plan->smem = fixed + words * 4;
            plan->threads = 1024;
            return cudaSuccess;
        }
    }
    plan->store = IH_WIDE_GLOBAL;
    plan->table = tab > 0 && tab <= (size_t)optin / 2;
    plan->smem = lut + (plan->table ? tab : 0);
    plan->threads = 512;
    return cudaSuccess;
}

namespace {

/* The arguments every launch of a job shares (the geometry comes later). */
void job_args(const ih_wide_band &band, const ih_hist_job &job, const ih_wide_plan_t &plan,
              unsigned long long *target, Args &a)
{
    memset(&a, 0, sizeof a);
    a.mask = band.mask;
    a.mask_pitch = band.mask_pitch;
    a.channels = job.channels;
    a.stride = (uint32_t)job.stride;
    a.len = (uint32_t)job.len;
    a.bins = job.bin.bins;
    a.outliers = job.outliers;
    a.bin = job.bin;
    if (shift32(job)) {
        a.ilo = (int32_t)job.bin.ilo;
        a.blo = (uint32_t)clamp64(job.bin.ilo, 0, 65536);
        a.bhi = (uint32_t)clamp64(job.bin.ihi, 0, 65536);
        a.shift = job.bin.shift;
        a.span = a.bhi - a.blo;
        a.natural = job.dtype == IMGHIST_U16 && job.channels == 1 && a.ilo == 0 &&
                    a.shift == 0 && a.blo == 0 && a.bhi == 65536 && job.bin.bins == 65536;
    }
    if (job.dtype == IMGHIST_U8) {
        a.natural = job.natural; /* one bin per value, no outlier counters */
    }
    a.copies = (uint32_t)plan.copies;
    while ((1u << a.copies_log2) < a.copies) {
        a.copies_log2++;
    }
    a.target = target;
    if (job.dtype == IMGHIST_F32) {
        float_estimate(job.bin, a);
        a.pad_words = (uint32_t)pad_words(job);
    }
    const size_t lut = job.dtype == IMGHIST_U8 ? 1024 : 0;
    const size_t tab = plan.table ? tab_bytes(job) : 0;
    a.cnt_off = (uint32_t)(lut + tab);
}

/* Counter words of a block's store (S32, S16; 0 for the global store). */
uint32_t phys_of(const ih_hist_job &job, int store, uint32_t copies)
{
    if (store == IH_WIDE_S32) {
        return (uint32_t)s32_words(job) * copies;
    }
    return store == IH_WIDE_S16 ? (uint32_t)round_up((job.len + 1) / 2, 32) : 0u;
}

/* How a band is walked: flat (rows back to back from a 16-byte aligned
 * start, for the kinds the lean kernel bins), simple rows, or the general
 * walk (channels, masks). */
int walk_of(const ih_wide_band &band, const ih_hist_job &job, const ih_wide_plan_t &plan,
            size_t row_bytes)
{
    const bool simple = job.channels == 1 && band.mask == nullptr;
    const bool lean_kind = job.dtype == IMGHIST_U8 || (job.dtype == IMGHIST_U16 && shift32(job)) ||
                           (job.dtype == IMGHIST_F32 && plan.table);
    const bool flat = band.mask == nullptr && lean_kind && !job.outliers &&
                      ((uintptr_t)band.base & 15) == 0 &&
                      (band.rows == 1 || band.pitch == row_bytes);
    if (flat && job.channels == 1) {
        return W_FLAT;
    }
    /* One channel with a mask as packed as the image and aligned with its
     * samples (mask byte i: sample i's pixel), 32-bit counters or the
     * natural 16-bit histogram's pairs. */
    const size_t size = ih_dtype_size(job.dtype);
    const bool masked_store =
        plan.store == IH_WIDE_S32 ||
        (plan.store == IH_WIDE_S16 && job.dtype == IMGHIST_U16 && job.natural && shift32(job));
    if (band.mask != nullptr && job.channels == 1 && lean_kind && !job.outliers &&
        masked_store && ((uintptr_t)band.base & 15) == 0 &&
        (band.rows == 1 || (band.pitch == row_bytes && band.mask_pitch == band.width)) &&
        ((uintptr_t)band.mask & (16 / size - 1)) == 0) {
        return W_FLAT_MASKED;
    }
    /* Channels in the 16-bit pairs (rare: over 58000 counters an image on
     * an H100) walk rows: the lean kernel's S16 form spills with them. */
    if (flat && plan.store != IH_WIDE_S16) {
        return W_FLAT_CHANNELS;
    }
    return simple ? W_SIMPLE : W_GENERAL;
}

/* Whether the natural 16-bit histogram, flat, counts in the split layouts
 * (PAR_WORDS words of shared memory a block) where the device has room for
 * them: 192 KiB on Hopper, not the A100's 163 (+ split_of's static word). */
bool split_fits(int walk, const ih_hist_job &job, const ih_wide_plan_t &plan, int optin)
{
    return walk == W_FLAT && job.dtype == IMGHIST_U16 && job.natural &&
           plan.store == IH_WIDE_S16 && (size_t)optin >= (size_t)PAR_WORDS * 4 + 256;
}

/* Whether a launch counts in the plain layout (u8_channels_kernel): 8-bit
 * channels, one bin per value; PLAIN_FLAT for a flat run (walk), PLAIN_ROWS
 * for rows (the general walk), PLAIN_MASKED for rows with a mask, else 0.
 * Such a plan gets all 32
 * copies of the counters where they fit a block, even at one block an SM
 * (four channels, 129 KiB: 92-97 % of an H100's read rate, against 74 % with
 * the 16 copies that leave two blocks; bench/RESULTS.md, session 20). */
enum { PLAIN_FLAT = 1, PLAIN_ROWS = 2, PLAIN_MASKED = 3, PLAIN_FLAT_MASKED = 4 };

int plain_of(const ih_wide_band &band, const ih_hist_job &job, ih_wide_plan_t &plan, int walk,
             int optin, long long mask_stride = 0)
{
    if ((walk != W_FLAT_CHANNELS && walk != W_GENERAL) || job.dtype != IMGHIST_U8 ||
        job.channels < 2 || !job.natural || job.stride != 256 || plan.store != IH_WIDE_S32) {
        return 0;
    }
    /* PLAIN_FLAT_MASKED: a mask as packed as the pixels (rows back to back,
     * mask byte i: pixel i): a flat walk with the granule's mask bytes
     * loaded beside it. Two and four channels need the mask aligned with the
     * granules (16 / channels pixels each; a batch's masks each so aligned),
     * three do not. The row walk read packed RGBA with a mask at 54 % of an
     * H100's read rate, RGB at 74 %. */
    const uint32_t ch = job.channels;
    const size_t row_bytes = (size_t)band.width * ch;
    const uint32_t align = ch == 3 ? 1u : 16u / ch;
    const bool flat_masked = band.mask != nullptr && ch <= 4 && ((uintptr_t)band.base & 15) == 0 &&
                             ((uintptr_t)band.mask & (align - 1)) == 0 &&
                             mask_stride % (long long)align == 0 &&
                             (band.rows == 1 ||
                              (band.pitch == row_bytes && band.mask_pitch == band.width));
    const size_t smem = 1024 + round_up(job.len, 32) * 4 * 32; /* the table's room, counters */
    if (plan.copies < 32 && smem <= (size_t)optin) {
        plan.copies = 32;
        plan.smem = smem;
    }
    return plan.copies != 32              ? 0
           : walk == W_FLAT_CHANNELS      ? PLAIN_FLAT
           : band.mask == nullptr         ? PLAIN_ROWS
           : flat_masked                  ? PLAIN_FLAT_MASKED
                                          : PLAIN_MASKED;
}

/* The plain layout's kernel (plain: plain_of's answer). */
wide_fn plain_kernel(int plain, bool batch)
{
    if (batch) {
        return plain == PLAIN_FLAT          ? u8_channels_kernel<true, false>
               : plain == PLAIN_ROWS        ? u8_channels_kernel<true, true>
               : plain == PLAIN_FLAT_MASKED ? u8_channels_kernel<true, false, true>
                                            : u8_channels_kernel<true, true, true>;
    }
    return plain == PLAIN_FLAT          ? u8_channels_kernel<false, false>
           : plain == PLAIN_ROWS        ? u8_channels_kernel<false, true>
           : plain == PLAIN_FLAT_MASKED ? u8_channels_kernel<false, false, true>
                                        : u8_channels_kernel<false, true, true>;
}

/* The geometry of `rows` rows from base (flat: one run of bytes). */
void set_geom(Args &a, const uint8_t *base, size_t pitch, size_t row_bytes, uint32_t rows,
              bool flat)
{
    ih_geom &g = a.g;
    g.base = base;
    g.pitch = pitch;
    g.width = (uint32_t)row_bytes;
    const uint32_t pr = ih_granules_per_row(g.base, g.pitch, g.width, rows);
    g.total = rows * pr;
    g.per_row = ih_make_fastdiv(pr);
    if (flat) {
        g.width = (uint32_t)(row_bytes * rows);
        g.total = (uint32_t)(((uint64_t)g.width + 15) / 16);
        a.flat_full = g.width / 16;
    }
}

cudaError_t device_facts(int &sms, int &optin)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    return e;
}

/* Blocks of fn per SM with smem bytes each (the attribute set first). */
template <typename Fn> cudaError_t resident_blocks(Fn fn, int threads, size_t smem, int &per_sm)
{
    cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, threads, smem);
    per_sm = per_sm > 0 ? per_sm : 1;
    return e;
}

} // namespace

cudaError_t ih_wide_launch(const ih_wide_band &band, const ih_hist_job &job,
                           const ih_wide_plan_t &plan_in, unsigned long long *target,
                           cudaStream_t stream)
{
    const size_t size = ih_dtype_size(job.dtype);
    ih_wide_plan_t plan = plan_in;
    Args a;
    const size_t row_bytes = (size_t)band.width * job.channels * size;

    if (size > 1 && (((uintptr_t)band.base | band.pitch) & (size - 1)) != 0) {
        job_args(band, job, plan, target, a);
        const uint32_t samples = band.width * job.channels;
        const uint32_t bx = (samples + 255) / 256;
        dim3 grid(bx < 64 ? bx : 64, band.rows < 65535 ? band.rows : 65535);
        if (size == 2) {
            wide_unaligned_kernel<uint16_t><<<grid, 256, 0, stream>>>(a, band.base, band.pitch,
                                                                      band.rows, samples);
        } else {
            wide_unaligned_kernel<float><<<grid, 256, 0, stream>>>(a, band.base, band.pitch,
                                                                   band.rows, samples);
        }
        return cudaGetLastError();
    }

    const int walk = walk_of(band, job, plan, row_bytes);
    int per_sm = 0, sms = 0, optin = 0;
    cudaError_t e = device_facts(sms, optin);
    if (e != cudaSuccess) {
        return e;
    }
    const int plain = plain_of(band, job, plan, walk, optin); /* may change the plan */
    const bool flat = walk == W_FLAT || walk == W_FLAT_CHANNELS || walk == W_FLAT_MASKED ||
                      plain == PLAIN_FLAT_MASKED;
    job_args(band, job, plan, target, a);
    a.phys = phys_of(job, plan.store, a.copies);
    const wide_fn fn = plain ? plain_kernel(plain, false) : pick(job, plan, walk, 0);
    size_t smem = plan.smem;
    if (split_fits(walk, job, plan, optin) && a.natural && a.cnt_off == 0) {
        a.natural = 2;
        a.phys = PAR_WORDS;
        smem = (size_t)PAR_WORDS * 4;
    }
    if ((e = resident_blocks(fn, plan.threads, smem, per_sm)) != cudaSuccess) {
        return e;
    }
    const uint32_t chunk = chunk_of(plan.store, size);
    const uint32_t per_row = ih_granules_per_row(band.base, band.pitch, (uint32_t)row_bytes, band.rows);
    uint32_t rows_per = (uint32_t)((IH_MAX_GRANULES - 1) / per_row);
    if (flat) {
        /* A flat launch's bytes fit in g.width (32 bits), and each launch
         * starts on a 16-byte boundary as the first (the lean kernels load
         * whole granules from it; a mask's rows then keep its alignment):
         * rows a multiple of 16 / gcd(row bytes, 16). */
        const uint64_t most = (UINT64_C(1) << 32) - 64;
        rows_per = (uint32_t)(most / row_bytes < rows_per ? most / row_bytes : rows_per);
        const uint32_t q = 16u >> (__builtin_ctzll((unsigned long long)row_bytes | 16u));
        rows_per = rows_per >= q ? rows_per - rows_per % q : rows_per;
    }
    rows_per = rows_per > 0 ? rows_per : 1;
    for (uint32_t r0 = 0; r0 < band.rows; r0 += rows_per) {
        const uint32_t rows = band.rows - r0 < rows_per ? band.rows - r0 : rows_per;
        set_geom(a, band.base + (size_t)r0 * band.pitch, band.pitch, row_bytes, rows, flat);
        a.mask = band.mask != nullptr ? band.mask + (size_t)r0 * band.mask_pitch : nullptr;
        const uint64_t chunks = ((uint64_t)a.g.total + chunk - 1) / chunk;
        const uint64_t resident = (uint64_t)per_sm * (uint64_t)sms;
        const int grid = (int)(chunks < resident ? (chunks > 0 ? chunks : 1) : resident);
        fn<<<grid, plan.threads, smem, stream>>>(a);
        if ((e = cudaGetLastError()) != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

namespace {

/* The walk of a batch's launch (a flat masked walk needs every image's mask
 * in step with its samples). */
int batch_walk(const ih_wide_band &band, const ih_hist_job &job, const ih_wide_plan_t &plan,
               long long mask_stride)
{
    const size_t size = ih_dtype_size(job.dtype);
    const int walk = walk_of(band, job, plan, (size_t)band.width * job.channels * size);
    return walk == W_FLAT_MASKED && mask_stride % (long long)(16 / size) != 0 ? W_GENERAL : walk;
}

/* Whether an S16 job has batch kernels: 16-bit samples binned by a shift,
 * in the flat walks (with a mask: the natural histogram) or the simple one.
 * (The general walk's S16 batch kernel, for other masks, spilled 1 KB a
 * thread under S16's 64 registers: those go a launch an image.) */
bool s16_batch_walk(const ih_wide_band &band, const ih_hist_job &job, const ih_wide_plan_t &plan,
                    long long mask_stride)
{
    const int walk = batch_walk(band, job, plan, mask_stride);
    return job.dtype == IMGHIST_U16 && shift32(job) &&
           (walk == W_FLAT || walk == W_FLAT_MASKED || walk == W_SIMPLE);
}

} // namespace

bool ih_wide_batchable(const ih_wide_band &band, const ih_hist_job &job,
                       const ih_wide_plan_t &plan, long long img_stride, long long mask_stride)
{
    const size_t size = ih_dtype_size(job.dtype);
    const size_t row_bytes = (size_t)band.width * job.channels * size;
    if ((plan.store == IH_WIDE_S16 && !s16_batch_walk(band, job, plan, mask_stride)) ||
        img_stride % 16 != 0 ||
        (((uintptr_t)band.base | band.pitch) & (size - 1)) != 0 || row_bytes == 0) {
        return false;
    }
    const uint64_t per_row =
        ih_granules_per_row(band.base, band.pitch, (uint32_t)row_bytes, band.rows);
    return per_row * band.rows < IH_MAX_GRANULES && row_bytes * band.rows < (UINT64_C(1) << 32) - 64;
}

namespace {

/* A batch of tiny flat images, one warp each (tiny_kernel), on sms SMs. */
cudaError_t launch_tiny(tiny_fn fn, const Args &a, size_t smem, size_t count, int sms,
                        cudaStream_t stream)
{
    int per_sm = 0;
    const cudaError_t e = resident_blocks(fn, TINY_WARPS * 32, smem, per_sm);
    if (e != cudaSuccess) {
        return e;
    }
    const uint64_t resident = (uint64_t)per_sm * (uint64_t)sms;
    const uint64_t want = (count + TINY_WARPS - 1) / TINY_WARPS;
    fn<<<(unsigned)(want < resident ? want : resident), TINY_WARPS * 32, smem, stream>>>(
        a, (uint32_t)count);
    return cudaGetLastError();
}

} // namespace

cudaError_t ih_wide_launch_batch(const ih_wide_band &band, size_t count, long long img_stride,
                                 long long mask_stride, const ih_hist_job &job,
                                 const ih_wide_plan_t &plan_in, uint64_t tiny_bytes,
                                 unsigned long long *target, cudaStream_t stream,
                                 const unsigned long long *views)
{
    if (views != nullptr) {
        tiny_bytes = 0; /* the tiny kernel takes its images at a stride */
    }
    const size_t size = ih_dtype_size(job.dtype);
    const size_t row_bytes = (size_t)band.width * job.channels * size;
    ih_wide_plan_t plan = plan_in;
    const int walk = batch_walk(band, job, plan, mask_stride);
    bool flat = walk == W_FLAT || walk == W_FLAT_CHANNELS || walk == W_FLAT_MASKED;
    int per_sm = 0, sms = 0, optin = 0;
    cudaError_t e = device_facts(sms, optin);
    if (e != cudaSuccess) {
        return e;
    }
    if (flat && walk != W_FLAT_MASKED && job.len <= TINY_LEN && round_up(row_bytes * band.rows, 16) <= tiny_bytes) {
        Args a;
        job_args(band, job, plan, target, a);
        const size_t smem = a.cnt_off + (size_t)TINY_WARPS * round_up(job.len, 32) * 4;
        const tiny_fn fn = pick_tiny(job, plan, job.dtype == IMGHIST_U8 && a.natural);
        if (fn != nullptr && smem <= (size_t)optin) {
            set_geom(a, band.base, band.pitch, row_bytes, band.rows, true);
            a.img_stride = img_stride;
            a.accumulate = job.accumulate;
            return launch_tiny(fn, a, smem, count, sms, stream);
        }
    }
    const int plain = plain_of(band, job, plan, walk, optin, mask_stride);
    flat = flat || plain == PLAIN_FLAT_MASKED;
    const wide_fn fn = plain ? plain_kernel(plain, true) : pick(job, plan, walk, 1);
    if (fn == nullptr) {
        return cudaErrorInvalidValue; /* not ih_wide_batchable */
    }
    /* room for the split layouts, as ih_wide_launch gives a single image */
    const bool split = split_fits(walk, job, plan, optin);
    if (split) {
        plan.smem = (size_t)PAR_WORDS * 4;
    }
    /* Occupancy at the plan's shared memory; fewer copies below only lower
     * what a block takes (under the attribute this sets). */
    if ((e = resident_blocks(fn, plan.threads, plan.smem, per_sm)) != cudaSuccess) {
        return e;
    }
    /* Blocks per image: enough for two waves of the batch, at most one per
     * chunk; S16 (one block an SM, each folding up to 65536 counters into
     * the target: the fewer blocks an image, the fewer atomics) as many as
     * fit one wave. A block alone on its image stores its counts (own; S16
     * only for images of fewer than 65536 samples: its wrapped halves go
     * into the target as they happen, which needs it zeroed). */
    const uint64_t granules =
        (uint64_t)ih_granules_per_row(band.base, band.pitch, (uint32_t)row_bytes, band.rows) *
        band.rows;
    const uint64_t chunks = (granules + chunk_of(plan.store, size) - 1) / chunk_of(plan.store, size);
    const uint64_t resident = (uint64_t)per_sm * (uint64_t)sms;
    uint64_t gx = plan.store == IH_WIDE_S16 ? resident / count : (2 * resident + count - 1) / count;
    gx = gx < chunks ? gx : chunks;
    gx = gx > 0 ? gx : 1;
    /* Fewer copies of the counters where a block sees few samples: zeroing
     * and folding them must not cost more than an eighth of its counting.
     * (The plain layout needs all 32, and zeroes and folds them four to an
     * instruction.) */
    if (plan.store == IH_WIDE_S32 && !plain) {
        const uint64_t samples = granules * 16 / size / gx;
        const uint64_t len32 = s32_words(job);
        uint32_t c = (uint32_t)plan.copies;
        while (c > 1 && (uint64_t)c * len32 * 8 > samples) {
            c /= 2;
        }
        plan.smem -= ((size_t)plan.copies - c) * len32 * 4;
        plan.copies = (int)c;
    }
    Args a;
    job_args(band, job, plan, target, a);
    a.phys = phys_of(job, plan.store, a.copies);
    if (split && a.natural && a.cnt_off == 0) {
        a.natural = 2;
        a.phys = PAR_WORDS;
    }
    a.img_stride = img_stride;
    a.mask_img_stride = mask_stride;
    /* S16: only where no 16-bit half can wrap (its wraps go into the target
     * as they happen, which needs it zeroed) */
    a.own = gx == 1 && (plan.store == IH_WIDE_S32 ||
                        (plan.store == IH_WIDE_S16 &&
                         (uint64_t)band.width * job.channels * band.rows < 65536));
    a.accumulate = job.accumulate;
    if (!a.own && !job.accumulate) {
        e = cudaMemsetAsync(target, 0, count * job.len * sizeof(unsigned long long), stream);
        if (e != cudaSuccess) {
            return e;
        }
    }
    for (size_t y0 = 0; y0 < count; y0 += 65535) {
        const uint32_t n = count - y0 < 65535 ? (uint32_t)(count - y0) : 65535u;
        set_geom(a, band.base + (long long)y0 * img_stride, band.pitch, row_bytes, band.rows,
                 flat);
        a.target = target + y0 * job.len;
        a.mask = band.mask != nullptr ? band.mask + (long long)y0 * mask_stride : nullptr;
        a.views = views != nullptr ? views + 2 * y0 : nullptr;
        fn<<<dim3((unsigned)gx, n), plan.threads, plan.smem, stream>>>(a);
        if ((e = cudaGetLastError()) != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

cudaError_t ih_wide_range_init(unsigned int *keys, cudaStream_t stream)
{
    range_init_kernel<<<1, 1, 0, stream>>>(keys);
    return cudaGetLastError();
}

cudaError_t ih_wide_range_launch(const ih_wide_band &band, imghist_dtype dtype, uint32_t channels,
                                 unsigned int *keys, int sm_count, cudaStream_t stream)
{
    const size_t size = ih_dtype_size(dtype);
    const uint32_t samples = band.width * channels;
    const bool aligned = (((uintptr_t)band.base | band.pitch) & (size - 1)) == 0;
    const uint32_t bx = (samples + 255) / 256;
    const uint32_t want_y = (uint32_t)(sm_count > 0 ? sm_count : 1) * 8u;
    dim3 grid(bx < 32 ? bx : 32, band.rows < want_y ? band.rows : want_y);
    switch (dtype) {
    case IMGHIST_U8:
        range_kernel<uint8_t><<<grid, 256, 0, stream>>>(band.base, band.pitch, band.rows, samples,
                                                        channels, band.mask, band.mask_pitch,
                                                        aligned, keys);
        break;
    case IMGHIST_U16:
        range_kernel<uint16_t><<<grid, 256, 0, stream>>>(band.base, band.pitch, band.rows, samples,
                                                         channels, band.mask, band.mask_pitch,
                                                         aligned, keys);
        break;
    default:
        range_kernel<float><<<grid, 256, 0, stream>>>(band.base, band.pitch, band.rows, samples,
                                                      channels, band.mask, band.mask_pitch,
                                                      aligned, keys);
        break;
    }
    return cudaGetLastError();
}

int ih_wide_range_decode(const unsigned int keys[2], double *lo, double *hi)
{
    if (keys[0] > keys[1]) {
        return 0;
    }
    for (int i = 0; i < 2; i++) {
        const uint32_t k = keys[i];
        const uint32_t u = (k & 0x80000000u) ? k & 0x7fffffffu : ~k;
        float f;
        memcpy(&f, &u, sizeof f);
        (i == 0 ? *lo : *hi) = (double)f;
    }
    return 1;
}
