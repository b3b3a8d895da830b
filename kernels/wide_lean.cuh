/*
 * Wide histograms: the lean walk, one flat run of whole granules a chunk at
 * a time (lean_run, lean_granule), and a lean block's start.
 */
#ifndef IMGHIST_WIDE_LEAN_CUH
#define IMGHIST_WIDE_LEAN_CUH

#include <stdint.h>

#include "wide_bin.cuh"
#include "wide_store.cuh"
#include "wide_u8_channels.cuh"

namespace {

/* lean_granule's vote (VOTE): true where the warp counted the granule
 * with one add. Every lane calls it. */
template <int KIND, int STORE, bool NAT, typename T>
__device__ __forceinline__ bool lean_vote(uint32_t *cnt, const Args &a, const uint32_t *lut,
                                          const float *tab, const uint4 &v)
{
    constexpr int NPER = 16 / (int)sizeof(T);
    /* A warp whose 32 granules are one sample repeated (constant data)
     * makes one add: ATOMS.ADD, unlike POPC.INC, pays for equal lanes. */
    const uint32_t x0 = __shfl_sync(FULL, v.x, 0); /* every lane, before the test */
    if (__all_sync(FULL, ih_repeats<sizeof(T)>(v) && v.x == x0)) {
        uint32_t b0;
        if ((threadIdx.x & 31u) == 0 && lean_bin<KIND, NAT, T>(a, lut, tab, sample_of<T>(v, 0), b0)) {
            add_n<STORE>(cnt, a, b0, NPER * 32u, 0);
        }
        return true;
    }
    return false;
}

/* The natural 16-bit histogram in S16 (one bin per value): a granule's
 * eight samples into their halves, then the wraps. */
template <typename T, bool MASKED>
__device__ __forceinline__ void lean_natural16(uint32_t *cnt, const Args &a, const uint4 &v,
                                               const uint4 &mk)
{
    /* One bin per 16-bit value: a 32-bit word's two samples go through
     * the counter index swz(s >> 1) together, in the word's halves (about
     * two integer instructions fewer a sample), and a granule looks at
     * its old halves once, through the largest of them (VIMNMX3 on
     * sm_90): 0xffff in either half, incremented or not, sends it to
     * ih_s16_settle, which looks at each sample exactly. */
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
            ih_s16_settle(a, (uint32_t)sample_of<T>(v, j), 1u, old[j]);
        }
    }
}

/* The bins of a granule's NPER samples (b) and whether each is in one (in). */
template <int KIND, bool NAT, typename T, int NPER>
__device__ __forceinline__ void lean_bins(const Args &a, const uint32_t *lut, const float *tab,
                                          const uint4 &v, uint32_t (&b)[NPER], bool (&in)[NPER])
{
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
             * trusts floor(t) away from the edges would send many warps down
             * a second path where eps is a few ulps of t (10000 bins over
             * [0, 1), say). */
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
}

/* The samples of a granule that are in a bin (in) into their counters (b)
 * in the block's store. */
template <int STORE, int NPER>
__device__ __forceinline__ void lean_count(uint32_t *cnt, uint32_t *cnt_lane, const Args &a,
                                           const uint32_t (&b)[NPER], const bool (&in)[NPER])
{
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
                    ih_s16_settle(a, b[j], 1u, old[j]);
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
        if (lean_vote<KIND, STORE, NAT, T>(cnt, a, lut, tab, v)) {
            return;
        }
    }
    if constexpr (KIND == K_SHIFT && STORE == IH_WIDE_S16 && NAT && !MULTI) {
        lean_natural16<T, MASKED>(cnt, a, v, mk);
        return;
    }
    uint32_t b[NPER];
    bool in[NPER];
    lean_bins<KIND, NAT, T, NPER>(a, lut, tab, v, b, in);
    if constexpr (MASKED) {
#pragma unroll
        for (int j = 0; j < NPER; j++) {
            in[j] = in[j] && sample_of<uint8_t>(mk, j) != 0;
        }
    }
    add_channels<MULTI, NPER>(a, gi, b);
    lean_count<STORE, NPER>(cnt, cnt_lane, a, b, in);
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
         * so with one chunk in flight the SMs would wait on memory (F32
         * most). S32 blocks have 512 threads, so the 16 more
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

/* A lean block's shared memory: the table, the counters and the lane's copy. */
struct LeanShared {
    uint32_t *lut;
    float *tab;
    uint32_t *cnt, *cnt_lane;
};

/* A lean block's start: its image (BATCH), its table and zeroed counters
 * (lean_kernel spells this out itself, which keeps its code as tuned). */
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

} // namespace

#endif
