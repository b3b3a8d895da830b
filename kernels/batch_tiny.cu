/*
 * Batches of tiny images laid out as a tensor (CIFAR's 32x32, 64x64 crops),
 * one warp per image. The block kernels pay a fixed cost per image that
 * such images cannot hide: 32 KiB of replicated counters cleared or folded,
 * block barriers, a 512-thread scan, which outweighs reading a 1 KB image
 * many times over. Here each
 * warp keeps its image's 256 counters in 1 KiB of shared memory, counts the
 * image's granules with shared atomics (literal increments, which the SM
 * merges across lanes of one address), holds 8 bins a lane to write the
 * histogram and, for equalization, scan it with shuffles and make the LUT by
 * equalize_rules.cuh, then looks the image up (its bytes still in L1) through
 * a 256-byte table. No block barriers: eight warps a block, each on its own
 * images; four blocks an SM (64 registers a thread: left to itself, ptxas
 * took 48 for sm_90 and spilled).
 */
#include <stdint.h>

#include "batch_tiny.cuh"
#include "hist_u8_block.cuh"

namespace {

using ih_u8::walk_granules_by;

constexpr int WARPS = IH_TINY_WARPS;
constexpr int TINY_THREADS = WARPS * 32;
constexpr unsigned FULL = 0xffffffffu;

/* The counter of bin b: the 32 bins of each bank row rotated by the row, so
 * that values a multiple of 32 apart (posterised data) fall in different
 * banks. */
__device__ __forceinline__ uint32_t slot(uint32_t b)
{
    return (b & ~31u) | ((b + (b >> 5)) & 31u);
}

__device__ __forceinline__ void count_byte(uint32_t *cnt, uint32_t b)
{
    atomicAdd(cnt + slot(b), 1u);
}

__device__ __forceinline__ void count_word(uint32_t *cnt, uint32_t w)
{
    count_byte(cnt, w & 0xffu);
    count_byte(cnt, (w >> 8) & 0xffu);
    count_byte(cnt, (w >> 16) & 0xffu);
    count_byte(cnt, w >> 24);
}

/* A granule's 16 bytes; one of a single repeated byte adds 16 at once. */
__device__ __forceinline__ void count_vec(uint32_t *cnt, uint4 v)
{
    const uint32_t r = __byte_perm(v.x, 0, 0);
    if (((v.x ^ r) | (v.y ^ r) | (v.z ^ r) | (v.w ^ r)) == 0) {
        atomicAdd(cnt + slot(r & 0xffu), 16u);
        return;
    }
    count_word(cnt, v.x);
    count_word(cnt, v.y);
    count_word(cnt, v.z);
    count_word(cnt, v.w);
}

__device__ __forceinline__ uint32_t map_word(const uint8_t *lut, uint32_t w)
{
    return (uint32_t)lut[w & 0xffu] | (uint32_t)lut[(w >> 8) & 0xffu] << 8 |
           (uint32_t)lut[(w >> 16) & 0xffu] << 16 | (uint32_t)lut[w >> 24] << 24;
}

/*
 * The equalization LUT of the warp's histogram, lane L holding bins 8L..8L+7
 * (h), into lut[256]: the same entries as block_lut_u8 (the rules of
 * equalize_rules.cuh), from a shuffle scan.
 */
__device__ __forceinline__ void warp_lut(const uint32_t h[8], uint32_t lane, bool pil,
                                         uint8_t *lut)
{
    uint32_t s = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        s += h[k];
    }
    uint32_t incl = s;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const uint32_t up = __shfl_up_sync(FULL, incl, d);
        if (lane >= (uint32_t)d) {
            incl += up;
        }
    }
    const unsigned long long total = __shfl_sync(FULL, incl, 31);
    const uint32_t nz = __ballot_sync(FULL, s != 0); /* never 0: images are not empty */
    unsigned long long below = incl - s;
    uint32_t out[2] = {0, 0};
    if (pil) {
        uint32_t hl = 0;
#pragma unroll
        for (int k = 0; k < 8; k++) {
            hl = h[k] != 0 ? h[k] : hl;
        }
        hl = __shfl_sync(FULL, hl, 31 - __clz(nz));
        const unsigned long long step = (total - hl) / 255;
#pragma unroll
        for (int k = 0; k < 8; k++) {
            out[k >> 2] |= ih_lut_pil(lane * 8 + k, below, step) << ((k & 3) * 8);
            below += h[k];
        }
    } else {
        uint32_t first = 8, hf = 0;
#pragma unroll
        for (int k = 7; k >= 0; k--) {
            if (h[k] != 0) {
                first = (uint32_t)k;
                hf = h[k];
            }
        }
        const int fl = __ffs(nz) - 1;
        first = (uint32_t)fl * 8 + __shfl_sync(FULL, first, fl);
        hf = __shfl_sync(FULL, hf, fl);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            below += h[k]; /* now the inclusive count */
            out[k >> 2] |= ih_lut_opencv(lane * 8 + k, below, total, first, hf, 255)
                           << ((k & 3) * 8);
        }
    }
    *reinterpret_cast<uint2 *>(lut + lane * 8) = make_uint2(out[0], out[1]);
}

__global__ void __launch_bounds__(TINY_THREADS, 4) batch_tiny_kernel(ih_tiny_launch l)
{
    __shared__ __align__(16) uint32_t s_cnt[WARPS][256];
    __shared__ __align__(16) uint8_t s_lut[WARPS][256];
    const uint32_t lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    uint32_t *cnt = s_cnt[w];
    uint8_t *lut = s_lut[w];
    /* 64 bits: with close to 2^32 images the step would wrap. */
    for (uint64_t i = blockIdx.x * WARPS + w; i < l.count; i += gridDim.x * WARPS) {
        const uint32_t img = (uint32_t)i;
        __syncwarp(); /* the last image's reads of cnt and lut are done */
        reinterpret_cast<uint4 *>(cnt)[lane] = make_uint4(0, 0, 0, 0);
        reinterpret_cast<uint4 *>(cnt)[lane + 32] = make_uint4(0, 0, 0, 0);
        __syncwarp();
        const ih_geom g = ih_geom_at(l.g0, l.stride, img);
        /* A warp's walk, loads kept in L1 for the lookups' second one. */
        walk_granules_by<32, true>(
            g, lane, 0, 1, UINT32_MAX, [cnt](uint4 v, uint32_t, uint32_t) { count_vec(cnt, v); },
            [cnt](uint32_t b, uint32_t, uint32_t) { count_byte(cnt, b); });
        __syncwarp();
        uint32_t h[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
            h[k] = cnt[slot(lane * 8 + k)];
        }
        if (l.hists != nullptr) {
            unsigned long long *out = l.hists + (size_t)img * 256 + lane * 8;
            if (l.accumulate) {
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    out[k] += h[k];
                }
            } else {
                ulonglong2 *o2 = reinterpret_cast<ulonglong2 *>(out);
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    o2[k] = make_ulonglong2(h[2 * k], h[2 * k + 1]);
                }
            }
        }
        if (!l.equalize) {
            continue;
        }
        warp_lut(h, lane, l.pil, lut);
        __syncwarp();
        uint8_t *dst = l.dst0 + (long long)img * l.dst_stride;
        const size_t dp = l.dst_pitch;
        const bool aligned = l.same_phase;
        walk_granules_by<32, false>(
            g, lane, 0, 1, UINT32_MAX,
            [=](uint4 v, uint32_t r, uint32_t col) {
                uint8_t *d = dst + (size_t)r * dp + col;
                const uint4 o = make_uint4(map_word(lut, v.x), map_word(lut, v.y),
                                           map_word(lut, v.z), map_word(lut, v.w));
                if (aligned) {
                    __stcs(reinterpret_cast<uint4 *>(d), o);
                } else {
                    const uint32_t o4[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
                    for (int k = 0; k < 16; k++) {
                        d[k] = (uint8_t)(o4[k >> 2] >> ((k & 3) * 8));
                    }
                }
            },
            [=](uint32_t b, uint32_t r, uint32_t col) { dst[(size_t)r * dp + col] = lut[b]; });
    }
}

} // namespace

cudaError_t ih_launch_batch_tiny(const ih_tiny_launch &l, cudaStream_t stream)
{
    batch_tiny_kernel<<<l.grid, TINY_THREADS, 0, stream>>>(l);
    return cudaGetLastError();
}

cudaError_t ih_batch_tiny_blocks_per_sm(int *bps)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(bps, batch_tiny_kernel, TINY_THREADS, 0);
}
