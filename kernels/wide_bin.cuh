/*
 * Wide histograms: a sample's counter (its bin, channel and mask), and a
 * thread's granules: their loads and their samples.
 */
#ifndef IMGHIST_WIDE_BIN_CUH
#define IMGHIST_WIDE_BIN_CUH

#include <math.h>
#include <stdint.h>

#include "wide_common.cuh"

namespace {

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
 * the atomic (the general kernel, wide_kernel, spends several times that on
 * per-sample slot codes and row bookkeeping, and is issue-bound).
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

} // namespace

#endif
