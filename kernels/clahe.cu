/*
 * CLAHE kernels. Three launches on the context's stream:
 *  1. tile histograms: blocks of 256 threads, each on a band of one tile's
 *     rows (the reflected extension of core/clahe.c included); 8-bit counts
 *     go to shared memory and then to the tile's global counters, 16-bit ones
 *     straight to the global counters;
 *  2. per tile, one block clips, redistributes and scans the histogram into
 *     the tile's LUT (the arithmetic of ih_clahe_clip_lut, in the same single
 *     precision, with round-to-nearest intrinsics so nothing is fused);
 *  3. the blend: one thread per pixel reads the four LUTs around it.
 */
#include "clahe.cuh"

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ uint32_t reflect101(int64_t p, int64_t len)
{
    if (len == 1) {
        return 0;
    }
    while (p < 0 || p >= len) {
        p = p < 0 ? -p : 2 * (len - 1) - p;
    }
    return (uint32_t)p;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tile_hist(const uint8_t *src, size_t pitch, ih_clahe_geom g, uint32_t rows_per_block,
              int32_t *hist)
{
    __shared__ int32_t sh[256];
    constexpr bool narrow = sizeof(T) == 1;
    const uint32_t tile = blockIdx.x;
    const uint32_t tx = tile % g.tiles_x, ty = tile / g.tiles_x;
    int32_t *th = hist + (size_t)tile * g.levels;
    if (narrow) {
        sh[threadIdx.x] = 0;
        __syncthreads();
    }
    const uint32_t r0 = blockIdx.y * rows_per_block;
    const uint32_t r1 = min(r0 + rows_per_block, g.tile_h);
    const uint32_t x0 = tx * g.tile_w;
    for (uint32_t r = r0; r < r1; r++) {
        const uint32_t y = reflect101((int64_t)ty * g.tile_h + r, g.height);
        const T *row = (const T *)(src + (size_t)y * pitch);
        for (uint32_t c = threadIdx.x; c < g.tile_w; c += kThreads) {
            const uint32_t x = x0 + c < g.width ? x0 + c : reflect101((int64_t)x0 + c, g.width);
            const uint32_t v = row[x];
            if (narrow) {
                atomicAdd(&sh[v], 1);
            } else {
                atomicAdd(&th[v], 1);
            }
        }
    }
    if (narrow) {
        __syncthreads();
        const int32_t n = sh[threadIdx.x];
        if (n != 0) {
            atomicAdd(&th[threadIdx.x], n);
        }
    }
}

/* Clip, redistribute, scan: one block of kThreads per tile, each thread on
 * levels / kThreads consecutive bins. */
template <typename T>
__global__ void __launch_bounds__(kThreads) tile_lut(ih_clahe_geom g, int32_t *hist, T *lut)
{
    __shared__ long long part[kThreads];
    __shared__ int32_t offs[kThreads];
    const uint32_t tile = blockIdx.x;
    int32_t *h = hist + (size_t)tile * g.levels;
    T *out = lut + (size_t)tile * g.levels;
    const uint32_t per = g.levels / kThreads;
    const uint32_t b0 = threadIdx.x * per;
    if (g.clip > 0) {
        long long excess = 0;
        for (uint32_t i = b0; i < b0 + per; i++) {
            if (h[i] > g.clip) {
                excess += h[i] - g.clip;
                h[i] = g.clip;
            }
        }
        part[threadIdx.x] = excess;
        __syncthreads();
        for (int s = kThreads / 2; s > 0; s >>= 1) {
            if ((int)threadIdx.x < s) {
                part[threadIdx.x] += part[threadIdx.x + s];
            }
            __syncthreads();
        }
        const long long clipped = part[0];
        const long long batch = clipped / g.levels;
        const long long residual = clipped - batch * g.levels;
        const long long step = residual != 0 && (long long)g.levels / residual > 1
                                   ? (long long)g.levels / residual
                                   : 1;
        for (uint32_t i = b0; i < b0 + per; i++) {
            int32_t v = h[i] + (int32_t)batch;
            if (residual != 0 && (long long)i % step == 0 && (long long)i / step < residual) {
                v++;
            }
            h[i] = v;
        }
    }
    /* Exclusive offsets of each thread's bins, then the running sums. */
    int32_t local = 0;
    for (uint32_t i = b0; i < b0 + per; i++) {
        local += h[i];
    }
    offs[threadIdx.x] = local;
    __syncthreads();
    for (int s = 1; s < kThreads; s <<= 1) {
        const int32_t add = (int)threadIdx.x >= s ? offs[threadIdx.x - s] : 0;
        __syncthreads();
        offs[threadIdx.x] += add;
        __syncthreads();
    }
    int32_t sum = offs[threadIdx.x] - local;
    const float max = (float)(g.levels - 1);
    for (uint32_t i = b0; i < b0 + per; i++) {
        sum += h[i];
        float v = rintf(__fmul_rn((float)sum, g.lut_scale));
        v = fminf(fmaxf(v, 0.0f), max);
        out[i] = (T)v;
    }
}

template <typename T>
__device__ __forceinline__ void blend_one(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                          size_t dst_pitch, const ih_clahe_geom &g, const T *lut,
                                          uint32_t x, uint32_t y);

template <typename T>
__global__ void blend(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                      ih_clahe_geom g, const T *lut)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= g.width) {
        return;
    }
    for (uint32_t y = blockIdx.y; y < g.height; y += gridDim.y) {
        blend_one<T>(src, src_pitch, dst, dst_pitch, g, lut, x, y);
    }
}

template <typename T>
__device__ __forceinline__ void blend_one(const uint8_t *src, size_t src_pitch, uint8_t *dst,
                                          size_t dst_pitch, const ih_clahe_geom &g, const T *lut,
                                          uint32_t x, uint32_t y)
{
    const float fx = __fsub_rn(__fmul_rn((float)x, __frcp_rn((float)g.tile_w)), 0.5f);
    const float fy = __fsub_rn(__fmul_rn((float)y, __frcp_rn((float)g.tile_h)), 0.5f);
    const int32_t c1 = (int32_t)floorf(fx), r1 = (int32_t)floorf(fy);
    const float a = __fsub_rn(fx, (float)c1), b = __fsub_rn(fy, (float)r1);
    const float a1 = __fsub_rn(1.0f, a), b1 = __fsub_rn(1.0f, b);
    const int32_t last_x = (int32_t)g.tiles_x - 1, last_y = (int32_t)g.tiles_y - 1;
    const uint32_t tx1 = c1 < 0 ? 0 : c1, tx2 = c1 + 1 > last_x ? last_x : c1 + 1;
    const uint32_t ty1 = r1 < 0 ? 0 : r1, ty2 = r1 + 1 > last_y ? last_y : r1 + 1;
    const uint32_t v = ((const T *)(src + (size_t)y * src_pitch))[x];
    const size_t L = g.levels;
    const T *p1 = lut + (size_t)ty1 * g.tiles_x * L, *p2 = lut + (size_t)ty2 * g.tiles_x * L;
    const size_t i1 = tx1 * L + v, i2 = tx2 * L + v;
    const float top = __fadd_rn(__fmul_rn((float)p1[i1], a1), __fmul_rn((float)p1[i2], a));
    const float bot = __fadd_rn(__fmul_rn((float)p2[i1], a1), __fmul_rn((float)p2[i2], a));
    const float res = __fadd_rn(__fmul_rn(top, b1), __fmul_rn(bot, b));
    const float r = fminf(fmaxf(rintf(res), 0.0f), (float)(L - 1));
    ((T *)(dst + (size_t)y * dst_pitch))[x] = (T)r;
}

template <typename T>
cudaError_t launch(const void *src, size_t src_pitch, void *dst, size_t dst_pitch,
                   const ih_clahe_geom *g, int32_t *hist, void *lut, int sm_count,
                   cudaStream_t stream)
{
    const uint32_t tiles = g->tiles_x * g->tiles_y;
    cudaError_t e = cudaMemsetAsync(hist, 0, (size_t)tiles * g->levels * sizeof(int32_t), stream);
    if (e != cudaSuccess) {
        return e;
    }
    /* Enough blocks to fill the GPU a few times over: split each tile's rows. */
    uint32_t splits = (uint32_t)(4 * sm_count) / tiles + 1;
    if (splits > g->tile_h) {
        splits = g->tile_h;
    }
    if (splits > 65535) {
        splits = 65535;
    }
    const uint32_t rows = (g->tile_h + splits - 1) / splits;
    splits = (g->tile_h + rows - 1) / rows;
    tile_hist<T><<<dim3(tiles, splits), kThreads, 0, stream>>>((const uint8_t *)src, src_pitch,
                                                               *g, rows, hist);
    tile_lut<T><<<tiles, kThreads, 0, stream>>>(*g, hist, (T *)lut);
    const uint32_t bx = 256;
    const uint32_t gy = g->height < 65535 ? g->height : 65535;
    blend<T><<<dim3((g->width + bx - 1) / bx, gy), bx, 0, stream>>>(
        (const uint8_t *)src, src_pitch, (uint8_t *)dst, dst_pitch, *g, (const T *)lut);
    return cudaGetLastError();
}

} // namespace

cudaError_t ih_clahe_launch(const void *src, size_t src_pitch, void *dst, size_t dst_pitch,
                            const ih_clahe_geom *g, int32_t *hist, void *lut, int sm_count,
                            cudaStream_t stream)
{
    if (g->levels == 256) {
        return launch<uint8_t>(src, src_pitch, dst, dst_pitch, g, hist, lut, sm_count, stream);
    }
    return launch<uint16_t>(src, src_pitch, dst, dst_pitch, g, hist, lut, sm_count, stream);
}
