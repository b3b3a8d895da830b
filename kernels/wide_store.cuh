/*
 * Wide histograms: where a block keeps its counts (ih_wide_store): 32-bit
 * counters in `copies` replicas, 16-bit counters in pairs with their wraps
 * settled in the 64-bit target, or the target itself; a block's start
 * (tables, zeroed counters) and its end (counters into the target).
 */
#ifndef IMGHIST_WIDE_STORE_CUH
#define IMGHIST_WIDE_STORE_CUH

#include <math.h>
#include <stdint.h>

#include "s16_pairs.cuh"
#include "wide_common.cuh"

namespace {

/* Add n to a slot in the block's store. */
template <int STORE>
__device__ __forceinline__ void add_n(uint32_t *cnt, const Args &a, uint32_t slot, uint32_t n,
                                      uint32_t lane)
{
    if constexpr (STORE == IH_WIDE_S32) {
        atomicAdd(cnt + swz(slot) * a.copies + (lane & (a.copies - 1)), n);
    } else if constexpr (STORE == IH_WIDE_S16) {
        ih_s16_settle(a, slot, n, atomicAdd(cnt + swz(slot >> 1), (slot & 1u) ? n << 16 : n));
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
         * was at 0xffff before the add may have wrapped (ih_s16_settle). */
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
                    ih_s16_settle(a, sl[j], 1u, old[j]);
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
 * stores 16 bytes apart a lane, would run at about half the speed of a
 * memset of the target.) */
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

} // namespace

#endif
