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
 *    65536 to the 64-bit target directly, so nothing is lost (see ih_s16_settle);
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
 *
 * The pieces, one concern a file: wide_common.cuh (kinds, walks, block
 * shapes, launch arguments), wide_bin.cuh (a sample's counter),
 * wide_store.cuh (the S32, S16 and global stores), wide_u8_channels.cuh,
 * wide_lean.cuh (the flat walk), wide_split.cuh and wide_fpad.cuh (layouts
 * of the natural 16-bit and the F32 histograms), wide_plan.cuh and
 * wide_plan.cu (host side: the plan of a job and its launches' arguments),
 * wide_range.cu (a band's min / max). This file holds the kernels, which
 * pick among those, and their launchers.
 */
#include <stdint.h>

#include "hist_wide.cuh"
#include "wide_bin.cuh"
#include "wide_common.cuh"
#include "wide_fpad.cuh"
#include "wide_lean.cuh"
#include "wide_plan.cuh"
#include "wide_split.cuh"
#include "wide_store.cuh"
#include "wide_u8_channels.cuh"

namespace {

/* Rows of any view (W_GENERAL: masks and channels, a sample's pixel and
 * channel from its place) or of one unmasked channel (W_SIMPLE). */
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
            const ih_granule q = ih_granule_at(g, i);
            if (q.full) {
                v[k] = __ldcs(reinterpret_cast<const uint4 *>(q.gp));
                row_of[k] = q.r;
                col_of[k] = (uint32_t)(q.gp - q.row);
                full[k] = true;
            } else {
                /* Row edges: whole samples only (rows start on a sample). */
                for (const uint8_t *p = q.lo(), *e = q.hi(); p < e; p += sizeof(T)) {
                    const T s = *reinterpret_cast<const T *>(p);
                    const uint32_t sl = slot_at<KIND, WALK, T>(
                        a, lut, tab, s, q.r, (uint32_t)(p - q.row) / (uint32_t)sizeof(T));
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
