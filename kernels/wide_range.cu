/*
 * The finite range (min / max) of a band where its mask is set, as
 * order-preserving keys (ih_wide_range_launch).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "hist_wide.cuh"
#include "wide_common.cuh"

namespace {

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

} // namespace

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
