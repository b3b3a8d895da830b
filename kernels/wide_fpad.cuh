/*
 * Wide histograms: F32 samples in the padded layout.
 */
#ifndef IMGHIST_WIDE_FPAD_CUH
#define IMGHIST_WIDE_FPAD_CUH

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "wide_bin.cuh"
#include "wide_store.cuh"
#include "wide_u8_channels.cuh"

namespace {

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
 * a table load for every sample would spend about half the shared-memory
 * wavefronts on those loads, which bound the count.
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

} // namespace

#endif
