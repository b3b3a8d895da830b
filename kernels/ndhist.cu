/*
 * N-dimensional histograms of 8-bit channels, colour conversion fused in.
 *
 * A pixel's cell is a sum of table entries, one table of 256 offsets per
 * channel of the (converted) pixel, in shared memory: the host folds the
 * axes' tables into them (an axis adds its bin times its stride to the
 * table of the channel it reads; a byte in no bin adds a large negative
 * number), so the inner loop has no dependence on which channel an axis
 * reads. Counters are privatised in shared memory, in several copies
 * (warps take copies in turn, so fewer collide on a popular cell) when the
 * cells fit, and merged into the 64-bit output with one atomic add per
 * non-empty cell and block; otherwise every pixel adds into global memory.
 *
 * Packed images of 3 or 4 channels with no mask take the fast path:
 * each thread loads 16 pixels as 3 or 4 aligned 16-byte words, which keeps
 * the loads full-width whatever the pixel size, and adds runs of pixels of
 * one cell with one atomic (photographs have long runs: an 8x8x8 count
 * of one spent most of its time on colliding atomics without). When every
 * table is a shift and a multiply (power-of-two bins over [0, 256)), the
 * cell is computed without them.
 */
#include <stdint.h>

#include "ndhist.cuh"

#define ND_THREADS 512
#define ND_BLOCKS_PER_SM 4
#define ND_SHARED_BUDGET (48 * 1024)
#define ND_MAX_COPIES 8
#define ND_MAX_GRID_Y 65535u

/* The cell of one pixel (bytes p, `pc` channels after conversion), or a
 * negative number. */
template <int PC>
__device__ __forceinline__ int nd_cell(const uint8_t *p, const int32_t *lut, int pc,
                                      imghist_space space, const ih_color_tables *t)
{
    if (space != IMGHIST_SPACE_NONE) {
        uint8_t q[3];
        ih_convert_pixel(t, space, p, q);
        return lut[q[0]] + lut[256 + q[1]] + lut[512 + q[2]];
    }
    if (PC > 0) {
        int c = 0;
#pragma unroll
        for (int k = 0; k < PC; k++) {
            c += lut[k * 256 + p[k]];
        }
        return c;
    }
    int c = 0;
    for (int k = 0; k < pc; k++) {
        c += lut[k * 256 + p[k]];
    }
    return c;
}

template <bool SHARED>
__device__ __forceinline__ void nd_add(int cell, uint32_t *mine, unsigned long long *gout,
                                       uint32_t &none)
{
    if (cell < 0) {
        none++;
    } else if (SHARED) {
        atomicAdd(&mine[cell], 1u);
    } else {
        atomicAdd(&gout[cell], 1ull);
    }
}

/* Add a run of n pixels of one cell: neighbouring pixels often share a cell,
 * and one atomic for the run spares the collisions of many. */
template <bool SHARED>
__device__ __forceinline__ void nd_add_run(int cell, uint32_t n, uint32_t *mine,
                                           unsigned long long *gout, uint32_t &none)
{
    if (n == 0) {
        return;
    }
    if (cell < 0) {
        none += n;
    } else if (SHARED) {
        atomicAdd(&mine[cell], n);
    } else {
        atomicAdd(&gout[cell], (unsigned long long)n);
    }
}

/* The cell by shifts: when every channel's table is (v >> shift) * mult
 * (power-of-two bins over [0, 256), the host checks the tables), a pixel
 * costs no table loads. */
template <int C>
__device__ __forceinline__ int nd_shift_cell(const uint8_t *p, const ih_nd_kjob &j)
{
    int c = 0;
#pragma unroll
    for (int k = 0; k < C; k++) {
        c += (int)((p[k] >> j.shift[k]) * j.mult[k]);
    }
    return c;
}

/* C: source channels of the fast path (3 or 4), 0 for the general one.
 * SHIFT: nd_shift_cell instead of the tables (fast path, no conversion). */
template <bool SHARED, int C, bool SHIFT>
__global__ void __launch_bounds__(ND_THREADS)
    nd_count(ih_nd_kjob j, uint32_t img0, uint32_t pc, uint32_t copies)
{
    extern __shared__ uint32_t sm[];
    int32_t *lut = (int32_t *)sm;
    uint32_t *cnt = sm + pc * 256;
    for (uint32_t i = threadIdx.x; i < pc * 256; i += blockDim.x) {
        lut[i] = j.lut[i];
    }
    if (SHARED) {
        for (uint32_t i = threadIdx.x; i < copies * j.cells; i += blockDim.x) {
            cnt[i] = 0;
        }
    }
    __syncthreads();
    const uint32_t img = img0 + blockIdx.y;
    const uint8_t *base = j.data + (ptrdiff_t)img * j.image_stride;
    unsigned long long *gout = j.out + (size_t)img * j.len;
    uint32_t *mine = cnt + ((threadIdx.x / 32) % copies) * j.cells;
    uint32_t none = 0;
    if (C > 0) {
        const size_t px = (size_t)j.width * j.height;
        const size_t units = px / 16;
        const size_t step = (size_t)gridDim.x * blockDim.x;
        const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        for (size_t u = first; u < units; u += step) {
            const uint4 *q = (const uint4 *)(base + u * 16 * C);
            uint4 w[C > 0 ? C : 1];
#pragma unroll
            for (int k = 0; k < C; k++) {
                w[k] = __ldg(q + k);
            }
            const uint8_t *b = (const uint8_t *)w;
            int run_cell = SHIFT ? nd_shift_cell<C>(b, j)
                                 : nd_cell<C>(b, lut, C, j.space, j.tables);
            uint32_t run = 1;
#pragma unroll
            for (int i = 1; i < 16; i++) {
                const int cell = SHIFT ? nd_shift_cell<C>(b + i * C, j)
                                       : nd_cell<C>(b + i * C, lut, C, j.space, j.tables);
                if (cell == run_cell) {
                    run++;
                } else {
                    nd_add_run<SHARED>(run_cell, run, mine, gout, none);
                    run_cell = cell;
                    run = 1;
                }
            }
            nd_add_run<SHARED>(run_cell, run, mine, gout, none);
        }
        for (size_t p = units * 16 + first; p < px; p += step) {
            nd_add<SHARED>(nd_cell<C>(base + p * C, lut, C, j.space, j.tables), mine, gout, none);
        }
    } else {
        const uint8_t *mbase = j.mask ? j.mask + (ptrdiff_t)img * j.mask_stride : NULL;
        for (uint32_t y = blockIdx.x; y < j.height; y += gridDim.x) {
            const uint8_t *row = base + (size_t)y * j.pitch;
            const uint8_t *mrow = mbase ? mbase + (size_t)y * j.mask_pitch : NULL;
            for (uint32_t x = threadIdx.x; x < j.width; x += blockDim.x) {
                if (mrow && mrow[x] == 0) {
                    continue;
                }
                const int cell = nd_cell<0>(row + (size_t)x * j.channels, lut,
                                            (int)pc, j.space, j.tables);
                nd_add<SHARED>(cell, mine, gout, none);
            }
        }
    }
    if (j.outliers && none) {
        atomicAdd(&gout[j.cells], (unsigned long long)none);
    }
    if (SHARED) {
        __syncthreads();
        for (uint32_t c = threadIdx.x; c < j.cells; c += blockDim.x) {
            uint32_t s = 0;
            for (uint32_t k = 0; k < copies; k++) {
                s += cnt[k * j.cells + c];
            }
            if (s) {
                atomicAdd(&gout[c], (unsigned long long)s);
            }
        }
    }
}

template <bool SHARED, int C, bool SHIFT = false>
static cudaError_t launch(const ih_nd_kjob &j, uint32_t pc, uint32_t copies, size_t shmem,
                          int sm_count, cudaStream_t stream)
{
    static bool configured = false;
    if (!configured) {
        const cudaError_t e = cudaFuncSetAttribute(
            nd_count<SHARED, C, SHIFT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
            ND_SHARED_BUDGET + 4096);
        if (e != cudaSuccess) {
            return e;
        }
        configured = true;
    }
    const uint32_t slots = (uint32_t)sm_count * ND_BLOCKS_PER_SM;
    for (uint32_t i0 = 0; i0 < j.count; i0 += ND_MAX_GRID_Y) {
        const uint32_t n = j.count - i0 < ND_MAX_GRID_Y ? j.count - i0 : ND_MAX_GRID_Y;
        uint32_t gx = slots / n;
        gx = gx < 1 ? 1 : gx;
        if (C == 0 && gx > j.height) {
            gx = j.height;
        }
        nd_count<SHARED, C, SHIFT><<<dim3(gx, n), ND_THREADS, shmem, stream>>>(j, i0, pc, copies);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaSuccess;
}

cudaError_t ih_launch_ndhist(const ih_nd_kjob &j, int sm_count, cudaStream_t stream)
{
    const uint32_t pc = j.space != IMGHIST_SPACE_NONE ? 3 : j.channels;
    const size_t lut_bytes = (size_t)pc * 256 * sizeof(int32_t);
    const size_t per_copy = (size_t)j.cells * sizeof(uint32_t);
    uint32_t copies = 0;
    if (lut_bytes + per_copy <= ND_SHARED_BUDGET) {
        copies = (uint32_t)((ND_SHARED_BUDGET - lut_bytes) / per_copy);
        copies = copies > ND_MAX_COPIES ? ND_MAX_COPIES : copies;
    }
    const bool shared = copies > 0;
    const size_t shmem = lut_bytes + (shared ? copies * per_copy : 0);
    copies = shared ? copies : 1;
    const bool packed = j.mask == NULL && (j.channels == 3 || j.channels == 4) &&
                        j.pitch == (size_t)j.width * j.channels &&
                        ((uintptr_t)j.data % 16) == 0 &&
                        (j.count <= 1 || j.image_stride % 16 == 0);
    const bool shift = packed && j.shift_ok && j.space == IMGHIST_SPACE_NONE;
    if (shift && j.channels == 3) {
        return shared ? launch<true, 3, true>(j, pc, copies, shmem, sm_count, stream)
                      : launch<false, 3, true>(j, pc, copies, shmem, sm_count, stream);
    }
    if (shift) {
        return shared ? launch<true, 4, true>(j, pc, copies, shmem, sm_count, stream)
                      : launch<false, 4, true>(j, pc, copies, shmem, sm_count, stream);
    }
    if (packed && j.channels == 3) {
        return shared ? launch<true, 3>(j, pc, copies, shmem, sm_count, stream)
                      : launch<false, 3>(j, pc, copies, shmem, sm_count, stream);
    }
    if (packed) {
        return shared ? launch<true, 4>(j, pc, copies, shmem, sm_count, stream)
                      : launch<false, 4>(j, pc, copies, shmem, sm_count, stream);
    }
    return shared ? launch<true, 0>(j, pc, copies, shmem, sm_count, stream)
                  : launch<false, 0>(j, pc, copies, shmem, sm_count, stream);
}

__global__ void cvt_kernel(const uint8_t *src, size_t src_pitch, ptrdiff_t src_stride,
                           uint32_t channels, uint8_t *dst, size_t dst_pitch,
                           ptrdiff_t dst_stride, uint32_t width, uint32_t height,
                           uint32_t img0, imghist_space space, const ih_color_tables *t)
{
    const uint32_t img = img0 + blockIdx.z;
    const uint32_t y = blockIdx.y;
    const uint8_t *row = src + (ptrdiff_t)img * src_stride + (size_t)y * src_pitch;
    uint8_t *orow = dst + (ptrdiff_t)img * dst_stride + (size_t)y * dst_pitch;
    for (uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < width;
         x += gridDim.x * blockDim.x) {
        uint8_t q[3];
        ih_convert_pixel(t, space, row + (size_t)x * channels, q);
        orow[(size_t)x * 3] = q[0];
        orow[(size_t)x * 3 + 1] = q[1];
        orow[(size_t)x * 3 + 2] = q[2];
    }
}

cudaError_t ih_launch_cvt_color(const uint8_t *src, size_t src_pitch, ptrdiff_t src_stride,
                                uint32_t channels, uint8_t *dst, size_t dst_pitch,
                                ptrdiff_t dst_stride, uint32_t width, uint32_t height,
                                uint32_t count, imghist_space space,
                                const ih_color_tables *tables, cudaStream_t stream)
{
    const uint32_t gx = (width + 255) / 256 < 8 ? (width + 255) / 256 : 8;
    for (uint32_t y0 = 0; y0 < height; y0 += ND_MAX_GRID_Y) {
        const uint32_t h = height - y0 < ND_MAX_GRID_Y ? height - y0 : ND_MAX_GRID_Y;
        for (uint32_t i0 = 0; i0 < count; i0 += ND_MAX_GRID_Y) {
            const uint32_t n = count - i0 < ND_MAX_GRID_Y ? count - i0 : ND_MAX_GRID_Y;
            cvt_kernel<<<dim3(gx, h, n), 256, 0, stream>>>(
                src + (size_t)y0 * src_pitch, src_pitch, src_stride, channels,
                dst + (size_t)y0 * dst_pitch, dst_pitch, dst_stride, width, h, i0, space, tables);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                return e;
            }
        }
    }
    return cudaSuccess;
}
