/*
 * Pieces of the 16-bit equalization that the LUT kernels (equalize_wide.cu)
 * and the one-block equalization of small images (equalize16_small.cu)
 * share: the block shape of a 16-bit LUT pass, its levels' totals, a
 * 16-bit sample at any alignment, the LUT's size and where an image of a
 * batch lies.
 */
#ifndef IMGHIST_EQUALIZE16_CUH
#define IMGHIST_EQUALIZE16_CUH

#include <stdint.h>

#include "limits.cuh"

namespace {

constexpr int LUT_THREADS = 1024;

/* A block of LUT_THREADS threads, each warp's lanes holding their levels'
 * count (sum) and first non-empty level: the warps' totals and firsts
 * through s_sum and s_min (one barrier), then in every thread the block's
 * total, the counts of the warps before its own (before), and its first
 * non-empty level (65536: none). */
template <typename T>
__device__ __forceinline__ void block_levels(T sum, uint32_t &first, T *s_sum, uint32_t *s_min,
                                             T &total, T &before)
{
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_xor_sync(0xffffffffu, sum, d);
        first = min(first, __shfl_xor_sync(0xffffffffu, first, d));
    }
    if (lane == 0) {
        s_sum[warp] = sum;
        s_min[warp] = first;
    }
    __syncthreads();
    total = 0;
    before = 0;
    first = IH_LEVELS16;
    for (uint32_t w = 0; w < LUT_THREADS / 32; w++) {
        before += w < warp ? s_sum[w] : (T)0;
        total += s_sum[w];
        first = min(first, s_min[w]);
    }
}

__device__ __forceinline__ uint32_t load16(const uint8_t *p, bool aligned)
{
    return aligned ? *reinterpret_cast<const uint16_t *>(p) : (uint32_t)p[0] | ((uint32_t)p[1] << 8);
}

constexpr size_t LUT16_BYTES = IH_LEVELS16 * 2;

/* Image img's source and destination: at src + img * src_stride and dst +
 * img * dst_stride, or, with ptrs (device; views anywhere), at ptrs[2 img]
 * and ptrs[2 img + 1]. */
__device__ __forceinline__ void image_at(const unsigned long long *ptrs, uint32_t img,
                                         const uint8_t *&src, long long src_stride, uint8_t *&dst,
                                         long long dst_stride)
{
    if (ptrs != nullptr) {
        src = reinterpret_cast<const uint8_t *>(ptrs[2 * (size_t)img]);
        dst = reinterpret_cast<uint8_t *>(ptrs[2 * (size_t)img + 1]);
    } else {
        src += (long long)img * src_stride;
        dst += (long long)img * dst_stride;
    }
}

} // namespace

#endif
