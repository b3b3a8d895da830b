/*
 * CLAHE kernels for a batch of images of one shape. Three launches on the
 * context's stream, each over every image of the batch:
 *  1. tile histograms: blocks of 256 threads, each on a band of one tile's
 *     rows of one image (the reflected extension of core/clahe.c included),
 *     a warp on eight rows at once, so that every lane has eight loads in
 *     flight. 8-bit counts go to one shared histogram a warp, then the
 *     band's sum to its own slot in the workspace (no zeroing, no global
 *     atomics); 16-bit ones straight to the tile's global counters;
 *  2. per tile, one block adds up the bands, clips, redistributes and scans
 *     the histogram into the tile's LUT (the arithmetic of ih_clahe_clip_lut,
 *     in the same single precision, with round-to-nearest intrinsics so
 *     nothing is fused);
 *  3. the blend: a thread on eight pixels of a row (their loads first), the
 *     rows of every image in one flat grid, each pixel reading the four LUTs
 *     around it.
 * Only the used_x x used_y tiles the blend reads exist (core/clahe.c).
 */
#include "clahe.cuh"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRowsAtOnce = 8;       /* rows a histogram warp loads together */
constexpr uint32_t kBlendPixels = 8; /* pixels of a row a blend thread */
constexpr uint32_t kMaxGridY = 65535; /* bands of a tile at most */

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

/* Bands a tile's rows are split into: enough blocks to fill the GPU a few
 * times over. The same for the workspace and the launch. */
uint32_t bands_of(const ih_clahe_geom *g, size_t blocks, int sm_count)
{
    const size_t want = (size_t)(4 * (sm_count > 0 ? sm_count : 1));
    size_t bands = blocks >= want ? 1 : want / blocks + 1;
    if (bands > g->tile_h) {
        bands = g->tile_h;
    }
    if (bands > kMaxGridY) {
        bands = kMaxGridY;
    }
    const uint32_t rows = (uint32_t)((g->tile_h + bands - 1) / bands);
    return (g->tile_h + rows - 1) / rows;
}

uint32_t band_rows(const ih_clahe_geom *g, uint32_t bands)
{
    return (g->tile_h + bands - 1) / bands;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tile_hist(ih_clahe_images im, ih_clahe_geom g, uint32_t tiles, uint32_t rows_per_band,
              int32_t *hist)
{
    constexpr bool narrow = sizeof(T) == 1;
    __shared__ int32_t sh[narrow ? kWarps * 256 : 1];
    const uint32_t image = blockIdx.x / tiles, tile = blockIdx.x % tiles;
    const uint32_t tx = tile % g.used_x, ty = tile / g.used_x;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const uint8_t *src = (const uint8_t *)im.src + (ptrdiff_t)image * im.src_stride;
    int32_t *mine = sh + warp * 256;
    int32_t *th = hist + ((size_t)image * tiles + tile) * g.levels;
    if (narrow) {
        for (int i = threadIdx.x; i < kWarps * 256; i += kThreads) {
            sh[i] = 0;
        }
        __syncthreads();
    }
    const uint32_t r0 = blockIdx.y * rows_per_band;
    const uint32_t r1 = min(r0 + rows_per_band, g.tile_h);
    const uint64_t x0 = (uint64_t)tx * g.tile_w, y0 = (uint64_t)ty * g.tile_h;
    /* A warp on kRowsAtOnce rows together (kWarps apart), its lanes across
     * them: every lane has that many loads in flight before it counts. */
    for (uint32_t rb = r0 + warp; rb < r1; rb += kWarps * kRowsAtOnce) {
        const T *rows[kRowsAtOnce];
#pragma unroll
        for (int k = 0; k < kRowsAtOnce; k++) {
            const uint32_t r = rb + k * kWarps;
            const uint32_t y = reflect101((int64_t)(y0 + (r < r1 ? r : r0)), g.height);
            rows[k] = r < r1 ? (const T *)(src + (size_t)y * im.src_pitch) : nullptr;
        }
        for (uint32_t c = lane; c < g.tile_w; c += 32) {
            const uint64_t xe = x0 + c;
            const uint32_t x = xe < g.width ? (uint32_t)xe : reflect101((int64_t)xe, g.width);
            uint32_t v[kRowsAtOnce];
#pragma unroll
            for (int k = 0; k < kRowsAtOnce; k++) {
                v[k] = rows[k] != nullptr ? rows[k][x] : 0;
            }
#pragma unroll
            for (int k = 0; k < kRowsAtOnce; k++) {
                if (rows[k] != nullptr) {
                    atomicAdd(narrow ? &mine[v[k]] : &th[v[k]], 1);
                }
            }
        }
    }
    if (narrow) {
        __syncthreads();
        int32_t n = 0;
        for (int k = 0; k < kWarps; k++) {
            n += sh[k * 256 + threadIdx.x];
        }
        /* Band b's counts of the tile: slot b of the tile's gridDim.y. */
        hist[(((size_t)image * tiles + tile) * gridDim.y + blockIdx.y) * 256 + threadIdx.x] = n;
    }
}

/* Add up the bands (8-bit), clip, redistribute, scan: one block of kThreads
 * per tile, each thread on levels / kThreads consecutive bins. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    tile_lut(ih_clahe_geom g, uint32_t bands, int32_t *hist, T *lut)
{
    constexpr bool narrow = sizeof(T) == 1;
    __shared__ long long part[kThreads];
    __shared__ int32_t offs[kThreads];
    __shared__ int32_t hs[narrow ? 256 : 1];
    const size_t tile = blockIdx.x;
    int32_t *h;
    if (narrow) {
        const int32_t *b = hist + tile * bands * 256;
        int32_t n = 0;
        for (uint32_t k = 0; k < bands; k++) {
            n += b[k * 256 + threadIdx.x];
        }
        hs[threadIdx.x] = n;
        h = hs;
        __syncthreads();
    } else {
        h = hist + tile * g.levels;
    }
    T *out = lut + tile * g.levels;
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

/* The blend of row y of an image (src and dst rows given) at columns
 * x0 .. x0 + kBlendPixels - 1, lut the image's tables. */
template <typename T>
__device__ __forceinline__ void blend_row(const T *srow, T *drow, const ih_clahe_geom &g,
                                          const T *lut, uint32_t x0, uint32_t y)
{
    const float fy = __fsub_rn(__fmul_rn((float)y, __frcp_rn((float)g.tile_h)), 0.5f);
    const int32_t r1 = (int32_t)floorf(fy);
    const float b = __fsub_rn(fy, (float)r1), b1 = __fsub_rn(1.0f, b);
    const int32_t last_x = (int32_t)g.tiles_x - 1, last_y = (int32_t)g.tiles_y - 1;
    const uint32_t ty1 = r1 < 0 ? 0 : r1, ty2 = r1 + 1 > last_y ? last_y : r1 + 1;
    const size_t L = g.levels;
    const T *p1 = lut + (size_t)ty1 * g.used_x * L, *p2 = lut + (size_t)ty2 * g.used_x * L;
    const float inv = __frcp_rn((float)g.tile_w);
    uint32_t vs[kBlendPixels];
#pragma unroll
    for (uint32_t k = 0; k < kBlendPixels; k++) { /* the loads first, all in flight */
        vs[k] = x0 + k < g.width ? srow[x0 + k] : 0;
    }
#pragma unroll
    for (uint32_t k = 0; k < kBlendPixels; k++) {
        const uint32_t x = x0 + k;
        if (x >= g.width) {
            break;
        }
        const float fx = __fsub_rn(__fmul_rn((float)x, inv), 0.5f);
        const int32_t c1 = (int32_t)floorf(fx);
        const float a = __fsub_rn(fx, (float)c1), a1 = __fsub_rn(1.0f, a);
        const uint32_t tx1 = c1 < 0 ? 0 : c1, tx2 = c1 + 1 > last_x ? last_x : c1 + 1;
        const uint32_t v = vs[k];
        const size_t i1 = tx1 * L + v, i2 = tx2 * L + v;
        const float top = __fadd_rn(__fmul_rn((float)__ldg(&p1[i1]), a1),
                                    __fmul_rn((float)__ldg(&p1[i2]), a));
        const float bot = __fadd_rn(__fmul_rn((float)__ldg(&p2[i1]), a1),
                                    __fmul_rn((float)__ldg(&p2[i2]), a));
        const float res = __fadd_rn(__fmul_rn(top, b1), __fmul_rn(bot, b));
        drow[x] = (T)fminf(fmaxf(rintf(res), 0.0f), (float)(L - 1));
    }
}

/* Threads row_count x per_row (pixel runs of kBlendPixels a row), from row
 * row0 of the batch's count x height rows; index arithmetic in 32 bits. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    blend(ih_clahe_images im, ih_clahe_geom g, size_t tiles, const T *lut, uint64_t row0,
          uint32_t row_count, uint32_t per_row)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t r = t / per_row;
    if (r >= row_count) {
        return;
    }
    const uint32_t x0 = (t - r * per_row) * kBlendPixels;
    const uint64_t row = row0 + r;
    const uint64_t image = row / g.height;
    const uint32_t y = (uint32_t)(row - image * g.height);
    const T *srow = (const T *)((const uint8_t *)im.src + (ptrdiff_t)image * im.src_stride +
                                (size_t)y * im.src_pitch);
    T *drow = (T *)((uint8_t *)im.dst + (ptrdiff_t)image * im.dst_stride +
                    (size_t)y * im.dst_pitch);
    blend_row<T>(srow, drow, g, lut + image * tiles * g.levels, x0, y);
}

/* Bytes of the histograms and of the LUTs of count images. */
bool sizes(const ih_clahe_geom *g, size_t count, int sm_count, size_t *hist_bytes,
           size_t *lut_bytes, uint32_t *bands)
{
    const uint64_t tiles = ih_clahe_used_tiles(g);
    const size_t narrow = g->levels == 256;
    size_t blocks, entries;
    if (tiles == 0 || __builtin_mul_overflow((size_t)tiles, count, &blocks) ||
        blocks > INT32_MAX || __builtin_mul_overflow(blocks, (size_t)g->levels, &entries)) {
        return false;
    }
    *bands = narrow ? bands_of(g, blocks, sm_count) : 1;
    return !__builtin_mul_overflow(entries, (size_t)*bands * sizeof(int32_t), hist_bytes) &&
           !__builtin_mul_overflow(entries, narrow ? (size_t)1 : (size_t)2, lut_bytes) &&
           *hist_bytes <= SIZE_MAX - *lut_bytes;
}

template <typename T>
cudaError_t launch(const ih_clahe_images *im, const ih_clahe_geom *g, void *ws, int sm_count,
                   cudaStream_t stream)
{
    size_t hist_bytes, lut_bytes;
    uint32_t bands;
    if (!sizes(g, im->count, sm_count, &hist_bytes, &lut_bytes, &bands)) {
        return cudaErrorInvalidValue;
    }
    const uint32_t tiles = (uint32_t)ih_clahe_used_tiles(g);
    const uint32_t blocks = (uint32_t)(tiles * im->count);
    int32_t *hist = (int32_t *)ws;
    T *lut = (T *)((uint8_t *)ws + hist_bytes);
    if (sizeof(T) != 1) {
        const cudaError_t e = cudaMemsetAsync(hist, 0, hist_bytes, stream);
        if (e != cudaSuccess) {
            return e;
        }
    }
    tile_hist<T><<<dim3(blocks, bands), kThreads, 0, stream>>>(*im, *g, tiles,
                                                               band_rows(g, bands), hist);
    tile_lut<T><<<blocks, kThreads, 0, stream>>>(*g, bands, hist, lut);
    /* The blend in launches of at most 2^31 threads (one for any batch
     * of fewer than that many pixel runs). */
    const uint32_t per_row = (uint32_t)((g->width + kBlendPixels - 1) / kBlendPixels);
    const uint64_t rows = (uint64_t)im->count * g->height;
    uint64_t step = ((uint64_t)INT32_MAX / per_row) / kThreads * kThreads;
    step = step > 0 ? step : 1;
    for (uint64_t row0 = 0; row0 < rows; row0 += step) {
        const uint32_t n = (uint32_t)(rows - row0 < step ? rows - row0 : step);
        const uint64_t threads = (uint64_t)n * per_row;
        blend<T><<<(uint32_t)((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            *im, *g, tiles, lut, row0, n, per_row);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    return cudaGetLastError();
}

} // namespace

size_t ih_clahe_max_images(const ih_clahe_geom *g)
{
    const uint64_t tiles = ih_clahe_used_tiles(g);
    return tiles == 0 || tiles > INT32_MAX ? 0 : (size_t)(INT32_MAX / tiles);
}

size_t ih_clahe_workspace(const ih_clahe_geom *g, size_t count, int sm_count)
{
    size_t hist_bytes, lut_bytes;
    uint32_t bands;
    if (!sizes(g, count, sm_count, &hist_bytes, &lut_bytes, &bands)) {
        return 0;
    }
    return hist_bytes + lut_bytes;
}

cudaError_t ih_clahe_launch(const ih_clahe_images *im, const ih_clahe_geom *g, void *ws,
                            int sm_count, cudaStream_t stream)
{
    if (g->levels == 256) {
        return launch<uint8_t>(im, g, ws, sm_count, stream);
    }
    return launch<uint16_t>(im, g, ws, sm_count, stream);
}
