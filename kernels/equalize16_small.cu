/*
 * The whole 16-bit equalization of small images, a block an image, and its
 * launchers (equalize_wide.cuh).
 */
#include <math.h>
#include <stdint.h>

#include "equalize16.cuh"
#include "equalize_wide.cuh"
#include "granules.cuh"

namespace {

/*
 * The whole 16-bit equalization of small images, a block an image:
 * the image's natural histogram as 16-bit counts in shared memory (65536
 * levels in 128 KiB, two a word), scanned there into its LUT, which the
 * block then applies. Nothing but the pixels goes through global memory,
 * where the batch path writes and reads 65536 64-bit counts an image and a
 * 128 KiB LUT. At most 65536 samples an image: every count but that of the
 * first sample counted (kept aside when its mask keeps it) fits 16 bits.
 * Image img's source, mask (NULL: none) and destination at their strides
 * from src, mask and dst, or as views[img] says (views of shapes of their
 * own). Bits as the LUT kernels' (ih_lut_opencv; an empty mask gives a
 * copy).
 */
constexpr int EQ16_SMALL_THREADS = LUT_THREADS; /* block_levels' block */
constexpr int EQ16_SMALL_UNROLL = 8; /* samples a thread has in flight */

/* OpenCV's entry for level v (as ih_lut_opencv) in 32-bit integers, the
 * image's scale computed once: top / (total - hf) as ih_lut_opencv rounds
 * it (every count below 2^24 converts exactly either way). */
__device__ __forceinline__ uint32_t lut16_entry(uint32_t v, uint32_t cdf, uint32_t first,
                                                uint32_t hf, bool one, float scale)
{
    if (one) {
        return v; /* one value counted: the identity (core/equalize_lut.c) */
    }
    if (v <= first) {
        return 0;
    }
    const float x = rintf(__fmul_rn(__uint2float_rn(cdf - hf), scale));
    return x > 65535.0f ? 65535u : (uint32_t)x;
}

__global__ void __launch_bounds__(EQ16_SMALL_THREADS, 1)
    eq16_small_kernel(const uint8_t *src, long long src_stride, size_t src_pitch0,
                      const uint8_t *mask, long long mask_stride, size_t mask_pitch0,
                      uint8_t *dst, long long dst_stride, size_t dst_pitch0, uint32_t width0,
                      uint32_t samples0, ih_fastdiv row_div0, uint32_t count,
                      const ih_eq16_view *__restrict__ views)
{
    extern __shared__ __align__(16) uint32_t h[]; /* level v's count: half v & 1 of word v / 2 */
    __shared__ uint32_t s_sum[EQ16_SMALL_THREADS / 32], s_min[EQ16_SMALL_THREADS / 32];
    __shared__ uint32_t s_aside; /* sample 0's value where its mask keeps it, else 65536 */
    const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    constexpr uint32_t WARP_WORDS = 32768 / (EQ16_SMALL_THREADS / 32);
    for (uint32_t img = blockIdx.x; img < count; img += gridDim.x) {
        const uint8_t *s = src;
        uint8_t *d = dst;
        const uint8_t *m;
        uint32_t width = width0, samples = samples0;
        size_t src_pitch = src_pitch0, dst_pitch = dst_pitch0, mask_pitch = mask_pitch0;
        ih_fastdiv row_div = row_div0;
        if (views != nullptr) {
            /* views of shapes of their own (ih_eq16_describe) */
            const ih_eq16_view e = views[img];
            s = reinterpret_cast<const uint8_t *>(e.src);
            d = reinterpret_cast<uint8_t *>(e.dst);
            m = reinterpret_cast<const uint8_t *>(e.mask);
            src_pitch = e.src_pitch;
            dst_pitch = e.dst_pitch;
            mask_pitch = e.mask_pitch;
            width = e.width;
            samples = e.samples;
            row_div.d = e.width;
            row_div.mul = e.div_mul;
            row_div.shift = e.div_shift;
        } else {
            image_at(nullptr, img, s, src_stride, d, dst_stride);
            m = mask != nullptr ? mask + (long long)img * mask_stride : nullptr;
        }
        const bool sa = (((uintptr_t)s | src_pitch) & 1) == 0;
        const bool da = (((uintptr_t)d | dst_pitch) & 1) == 0;
        __syncthreads(); /* the previous image's lookups are done */
        uint4 *h4 = reinterpret_cast<uint4 *>(h);
        for (uint32_t i = threadIdx.x; i < 32768 / 4; i += EQ16_SMALL_THREADS) {
            h4[i] = make_uint4(0, 0, 0, 0);
        }
        if (threadIdx.x == 0) {
            s_aside = (m == nullptr || m[0] != 0) ? load16(s, sa) : IH_LEVELS16;
        }
        __syncthreads();
        /* the counts (sample 0 aside); lanes with one value add once */
        constexpr uint32_t STEP = EQ16_SMALL_THREADS * EQ16_SMALL_UNROLL;
        for (uint32_t k0 = 1 + (threadIdx.x & ~31u) * EQ16_SMALL_UNROLL; k0 < samples;
             k0 += STEP) {
            uint32_t v[EQ16_SMALL_UNROLL];
            bool in[EQ16_SMALL_UNROLL];
#pragma unroll
            for (int j = 0; j < EQ16_SMALL_UNROLL; j++) {
                const uint32_t k = k0 + (uint32_t)j * 32u + lane;
                in[j] = k < samples;
                v[j] = 0;
                if (in[j]) {
                    const uint32_t r = ih_div(row_div, k), x = k - r * width;
                    v[j] = load16(s + (size_t)r * src_pitch + (size_t)x * 2, sa);
                    in[j] = m == nullptr || m[(size_t)r * mask_pitch + x] != 0;
                }
            }
#pragma unroll
            for (int j = 0; j < EQ16_SMALL_UNROLL; j++) {
                /* a warp of one value (flat regions) adds once; others a
                 * sample at a time (shared atomics on one address cost
                 * less than __match_any_sync to merge equal lanes) */
                const uint32_t key = in[j] ? v[j] : 0x10000u;
                const uint32_t k0v = __shfl_sync(0xffffffffu, key, 0);
                if (__all_sync(0xffffffffu, key == k0v)) {
                    if (lane == 0 && k0v < 0x10000u) {
                        atomicAdd(&h[k0v >> 1], 32u << ((k0v & 1u) << 4));
                    }
                } else if (in[j]) {
                    atomicAdd(&h[v[j] >> 1], 1u << ((v[j] & 1u) << 4));
                }
            }
        }
        __syncthreads();
        const uint32_t aside = s_aside;
        /* each warp's levels: lane reads words base + 32 j + lane */
        const uint32_t base = warp * WARP_WORDS + lane;
        uint32_t sum = 0, first = IH_LEVELS16;
        for (uint32_t j = 0; j < WARP_WORDS / 32; j++) {
            const uint32_t w = h[base + 32 * j], lv = 2 * (base + 32 * j);
            const uint32_t lo = (w & 0xffffu) + (lv == aside), hi = (w >> 16) + (lv + 1 == aside);
            sum += lo + hi;
            first = min(first, lo != 0 ? lv : hi != 0 ? lv + 1 : IH_LEVELS16);
        }
        uint32_t total = 0, run = 0;
        block_levels(sum, first, s_sum, s_min, total, run);
        uint32_t hf = 0;
        if (total != 0) {
            hf = ((h[first >> 1] >> ((first & 1u) << 4)) & 0xffffu) + (first == aside);
        }
        const bool one = hf == total;
        const float scale = one ? 0.0f : __fdiv_rn(65535.0f, __uint2float_rn(total - hf));
        __syncthreads(); /* hf read before the words turn into LUT entries */
        if (total != 0) {
            for (uint32_t j = 0; j < WARP_WORDS / 32; j++) {
                const uint32_t at = base + 32 * j, w = h[at], lv = 2 * at;
                const uint32_t hi = (w >> 16) + (lv + 1 == aside);
                uint32_t inc = (w & 0xffffu) + (lv == aside) + hi;
#pragma unroll
                for (int o = 1; o < 32; o <<= 1) {
                    const uint32_t up = __shfl_up_sync(0xffffffffu, inc, o);
                    inc += lane >= (uint32_t)o ? up : 0u;
                }
                const uint32_t cum_hi = run + inc, cum_lo = cum_hi - hi;
                h[at] = lut16_entry(lv, cum_lo, first, hf, one, scale) |
                        (lut16_entry(lv + 1, cum_hi, first, hf, one, scale) << 16);
                run += __shfl_sync(0xffffffffu, inc, 31);
            }
        }
        __syncthreads();
        /* the lookups, UNROLL samples a thread loaded before any is stored
         * (dst may be src: each sample is read and written by one thread) */
        const uint16_t *lut = reinterpret_cast<const uint16_t *>(h);
        for (uint32_t k0 = threadIdx.x; k0 < samples; k0 += STEP) {
            uint32_t v[EQ16_SMALL_UNROLL];
#pragma unroll
            for (int j = 0; j < EQ16_SMALL_UNROLL; j++) {
                const uint32_t k = k0 + (uint32_t)j * EQ16_SMALL_THREADS;
                if (k < samples) {
                    const uint32_t r = ih_div(row_div, k), x = k - r * width;
                    v[j] = load16(s + (size_t)r * src_pitch + (size_t)x * 2, sa);
                }
            }
#pragma unroll
            for (int j = 0; j < EQ16_SMALL_UNROLL; j++) {
                const uint32_t k = k0 + (uint32_t)j * EQ16_SMALL_THREADS;
                if (k < samples) {
                    const uint32_t r = ih_div(row_div, k), x = k - r * width;
                    const uint32_t o = total != 0 ? lut[v[j]] : v[j];
                    uint8_t *q = d + (size_t)r * dst_pitch + (size_t)x * 2;
                    if (da) {
                        *reinterpret_cast<uint16_t *>(q) = (uint16_t)o;
                    } else {
                        q[0] = (uint8_t)o;
                        q[1] = (uint8_t)(o >> 8);
                    }
                }
            }
        }
    }
}

} // namespace

namespace {

/* The one-block kernel's shared memory, and its grid for count images: a
 * block an SM (128 KiB each), each taking images in turn. */
cudaError_t eq16_grid(uint32_t count, int sm_count, unsigned &grid)
{
    static_assert(IH_EQ16_SMALL_MAX <= 65536, "16-bit counts with one sample aside");
    grid = (unsigned)(count < (uint32_t)sm_count ? count : (uint32_t)sm_count);
    return count == 0 ? cudaErrorInvalidValue
                      : cudaFuncSetAttribute(eq16_small_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)LUT16_BYTES);
}

} // namespace

cudaError_t ih_launch_equalize16_small(const uint8_t *src, ptrdiff_t src_stride, size_t src_pitch,
                                       const uint8_t *mask, ptrdiff_t mask_stride,
                                       size_t mask_pitch, uint8_t *dst, ptrdiff_t dst_stride,
                                       size_t dst_pitch, uint32_t width, uint32_t height,
                                       uint32_t count, int sm_count, cudaStream_t stream)
{
    const uint64_t samples = (uint64_t)width * height;
    unsigned grid = 0;
    if (samples == 0 || samples > IH_EQ16_SMALL_MAX) {
        return cudaErrorInvalidValue;
    }
    cudaError_t e = eq16_grid(count, sm_count, grid);
    if (e != cudaSuccess) {
        return e;
    }
    eq16_small_kernel<<<grid, EQ16_SMALL_THREADS, LUT16_BYTES, stream>>>(
        src, src_stride, src_pitch, mask, mask_stride, mask_pitch, dst, dst_stride, dst_pitch,
        width, (uint32_t)samples, ih_make_fastdiv(width), count, nullptr);
    return cudaGetLastError();
}

void ih_eq16_describe(ih_eq16_view *v, const void *src, size_t src_pitch, const void *mask,
                      size_t mask_pitch, void *dst, size_t dst_pitch, uint32_t width,
                      uint32_t height)
{
    const ih_fastdiv f = ih_make_fastdiv(width);
    v->src = (unsigned long long)(uintptr_t)src;
    v->dst = (unsigned long long)(uintptr_t)dst;
    v->mask = (unsigned long long)(uintptr_t)mask;
    v->src_pitch = src_pitch;
    v->dst_pitch = dst_pitch;
    v->mask_pitch = mask_pitch;
    v->width = width;
    v->samples = width * height; /* at most IH_EQ16_SMALL_MAX (checked) */
    v->div_mul = f.mul;
    v->div_shift = f.shift;
}

cudaError_t ih_launch_equalize16_views(const ih_eq16_view *views, uint32_t count, int sm_count,
                                       cudaStream_t stream)
{
    unsigned grid = 0;
    cudaError_t e = eq16_grid(count, sm_count, grid);
    if (e != cudaSuccess) {
        return e;
    }
    eq16_small_kernel<<<grid, EQ16_SMALL_THREADS, LUT16_BYTES, stream>>>(
        nullptr, 0, 0, nullptr, 0, 0, nullptr, 0, 0, 0, 0, ih_fastdiv{1, 0, 0}, count, views);
    return cudaGetLastError();
}

bool ih_equalize16_small_fits(uint64_t width, uint64_t height)
{
    int dev = 0, optin = 0;
    /* the counts, and the kernel's few words of its own */
    return width * height <= IH_EQ16_SMALL_MAX && cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) ==
               cudaSuccess &&
           (size_t)optin >= LUT16_BYTES + 1024;
}
