/*
 * Batched 8-bit equalization: many images of any sizes, each with its own
 * histogram and LUT (OpenCV's or PIL's rule), in one or two launches.
 *
 * An image whose granules fit in shared memory (with the counters) is read
 * from global memory once: one block copies it into shared memory while it
 * counts it, folds and scans the histogram, makes the LUT and writes the
 * looked-up image from its copy (counting a cp.async copy once it has all
 * landed would be slower). The other images
 * go the two-pass way: a persistent grid counts their chunks, numbered back to back as in the
 * histogram batch; the last block to fold into an image (a ticket per image)
 * turns its counts into its histogram and LUT; a second launch looks them up.
 * That second launch also carries the small images, one block each, so a
 * batch is one launch (all small) or two (any large).
 */
#include <stdint.h>

#include "equalize_batch.cuh"
#include "hist_u8_block.cuh"

namespace {

using namespace ih_u8;

/* Where byte col of row r goes in a block's copy of g: granule by granule,
 * granule i at byte 16 i, as they are read. */
__device__ __forceinline__ size_t copy_offset(const ih_geom &g, uint32_t r, uint32_t col)
{
    const uintptr_t row = (uintptr_t)(g.base + (size_t)r * g.pitch);
    return (size_t)r * g.per_row.d * 16 + (row & 15) + col;
}

/* 16 looked-up bytes to dst: one store when dst is 16-byte aligned. */
__device__ __forceinline__ void store16(uint8_t *dst, uint4 o, bool aligned)
{
    if (aligned) {
        __stcs(reinterpret_cast<uint4 *>(dst), o);
        return;
    }
    const uint32_t w[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
    for (int k = 0; k < 16; k++) {
        dst[k] = (uint8_t)(w[k >> 2] >> ((k & 3) * 8));
    }
}

/* Image i of a list of the batch (l.small or l.large; of a uniform batch:
 * computed). */
template <bool UNIFORM>
__device__ __forceinline__ ih_eq_image image_at(const ih_eq_batch_launch &l,
                                                const ih_eq_image *list, uint32_t i)
{
    if constexpr (UNIFORM) {
        ih_eq_image e = l.one;
        e.src = ih_geom_at(e.src, l.src_stride, i);
        e.dst += (long long)i * l.dst_stride;
        e.index = i;
        return e;
    } else {
        return list[i];
    }
}

/* The large images' chunk numbering. */
template <bool UNIFORM>
__device__ __forceinline__ auto chunk_map(const ih_eq_batch_launch &l)
{
    if constexpr (UNIFORM) {
        return ih_chunk_uniform{l.per_image};
    } else {
        return ih_chunk_array{l.chunk_start};
    }
}

/* A small image (image_at(l, l.small, blockIdx.x)), read once: copied into
 * shared memory after the counters while it is counted; the LUT; the lookups
 * from the copy. */
template <bool UNIFORM> __device__ void equalize_small(const ih_eq_batch_launch &l, uint32_t *sh)
{
    __shared__ ih_eq_image s_d;
    __shared__ uint32_t s_lut8[64];
    const uint32_t t = threadIdx.x;
    if (t == 0) {
        s_d = image_at<UNIFORM>(l, l.small, blockIdx.x);
    }
    zero_counters(sh); /* its barrier publishes s_d */
    const ih_geom g = s_d.src;
    uint8_t *copy = reinterpret_cast<uint8_t *>(sh + SH_WORDS);
    const uint32_t lane_col = lane_column(sh);
    walk_granules(
        g, 0, 1, UINT32_MAX,
        [&](uint4 v, uint32_t r, uint32_t col) {
            count_vec(lane_col, v);
            *reinterpret_cast<uint4 *>(copy + copy_offset(g, r, col)) = v;
        },
        [&](uint32_t b, uint32_t r, uint32_t col) {
            inc_shared(lane_col + (b << 7), 1u);
            copy[copy_offset(g, r, col)] = (uint8_t)b;
        });
    const unsigned long long h = replica_sum(sh);
    const uint32_t lut = block_lut_u8(h, l.pil); /* its barriers end the counters' reads */
    if (t < 256) {
        reinterpret_cast<uint8_t *>(s_lut8)[t] = (uint8_t)lut;
        if (l.hists != nullptr) {
            l.hists[(size_t)s_d.index * 256 + t] = h;
        }
    }
    __syncthreads();
    load_lut(sh, reinterpret_cast<const unsigned char *>(s_lut8)); /* over the counters */
    const uint8_t *lutl = lane_lut(sh);
    uint8_t *dst = s_d.dst;
    const size_t dst_pitch = s_d.dst_pitch;
    const bool aligned = s_d.same_phase != 0;
    for (uint32_t i = t; i < g.total; i += THREADS) {
        const ih_granule q = ih_granule_at(g, i);
        const uint8_t *c = copy + (size_t)i * 16;
        uint8_t *drow = dst + (size_t)q.r * dst_pitch;
        if (q.full) {
            store16(drow + (q.gp - q.row), map_vec(lutl, *reinterpret_cast<const uint4 *>(c)),
                    aligned);
        } else {
            /* A granule shared with padding or a neighbour row. */
            for (const uint8_t *p = q.lo(), *e = q.hi(); p < e; p++) {
                drow[p - q.row] = (uint8_t)map_byte(lutl, c[p - q.gp]);
            }
        }
    }
}

/* The large images' lookups, block `block` of `blocks`, with the LUTs the
 * count launch made. */
template <bool UNIFORM>
__device__ void apply_large(const ih_eq_batch_launch &l, uint32_t block, uint32_t blocks,
                            uint32_t *sh)
{
    __shared__ ih_eq_image s_d;
    const uint8_t *lutl = lane_lut(sh);
    for_each_segment(chunk_map<UNIFORM>(l), l.n_large, l.apply_run, block, blocks,
                     [&](uint32_t img, uint32_t c0, uint32_t c1) {
                         __syncthreads(); /* the last piece's lookups are done */
                         if (threadIdx.x == 0) {
                             s_d = image_at<UNIFORM>(l, l.large, img);
                         }
                         load_lut(sh, l.luts + (size_t)img * 256); /* publishes s_d */
                         uint8_t *dst = s_d.dst;
                         const size_t dst_pitch = s_d.dst_pitch;
                         const bool aligned = s_d.same_phase != 0;
                         walk_granules(
                             s_d.src, c0, 1, c1,
                             [&](uint4 v, uint32_t r, uint32_t col) {
                                 store16(dst + (size_t)r * dst_pitch + col, map_vec(lutl, v),
                                         aligned);
                             },
                             [&](uint32_t b, uint32_t r, uint32_t col) {
                                 dst[(size_t)r * dst_pitch + col] = (uint8_t)map_byte(lutl, b);
                             });
                     });
}

/* Blocks [0, n_small): one small image each; the rest: the large images'
 * lookups. UNIFORM: l is a uniform batch (as in hist_u8_batch_kernel). */
template <bool UNIFORM>
__global__ void __launch_bounds__(THREADS) eq_batch_kernel(ih_eq_batch_launch l)
{
    extern __shared__ __align__(16) uint32_t dyn[];
    if (blockIdx.x < l.n_small) {
        equalize_small<UNIFORM>(l, dyn);
    } else {
        apply_large<UNIFORM>(l, blockIdx.x - l.n_small, gridDim.x - l.n_small, dyn);
    }
}

/* The large images' histograms, as the histogram batch counts them; the last
 * block to fold into an image makes its histogram and LUT. */
template <bool UNIFORM>
__global__ void __launch_bounds__(THREADS, IH_BATCH_MIN_BLOCKS)
    eq_count_kernel(ih_eq_batch_launch l)
{
    __shared__ __align__(16) uint32_t sh[SH_WORDS];
    __shared__ ih_geom s_geom;
    __shared__ bool s_last;
    const uint32_t col = lane_column(sh);
    uint32_t seen = 0; /* fold_since's record of the thread's bin */
    zero_counters(sh);
    for_each_segment(
        chunk_map<UNIFORM>(l), l.n_large, l.count_run, blockIdx.x, gridDim.x,
        [&](uint32_t img, uint32_t c0, uint32_t c1) {
            if (threadIdx.x == 0) {
                if constexpr (UNIFORM) {
                    s_geom = ih_geom_at(l.one.src, l.src_stride, img);
                } else {
                    s_geom = l.large[img].src;
                }
            }
            __syncthreads(); /* s_geom published; the last fold's reads done */
            count_granules(col, s_geom, c0, 1, c1);
            unsigned long long *ws = l.ws + (size_t)img * 256;
            fold_since(sh, ws, seen);
            /* Release the fold, take the image's ticket: one per run that
             * touches the image (hist_u8_kernel explains the one fence). */
            __syncthreads();
            if (threadIdx.x == 0) {
                const uint32_t base = chunk_map<UNIFORM>(l).at(img);
                const uint32_t next = chunk_map<UNIFORM>(l).at(img + 1);
                const uint32_t pieces = (next - 1) / l.count_run - base / l.count_run + 1;
                __threadfence();
                s_last = atomicAdd(l.tickets + img, 1u) == pieces - 1;
                if (s_last) {
                    __threadfence();
                    l.tickets[img] = 0;
                }
            }
            __syncthreads();
            if (s_last) {
                unsigned long long h = 0;
                if (threadIdx.x < 256) {
                    h = atomicExch(ws + threadIdx.x, 0ull); /* read at L2 and leave zero */
                }
                const uint32_t lut = block_lut_u8(h, l.pil);
                if (threadIdx.x < 256) {
                    l.luts[(size_t)img * 256 + threadIdx.x] = (unsigned char)lut;
                    if (l.hists != nullptr) {
                        const uint32_t index = UNIFORM ? img : l.large[img].index;
                        l.hists[(size_t)index * 256 + threadIdx.x] = h;
                    }
                }
            }
        });
}

} // namespace

cudaError_t ih_launch_equalize_batch(const ih_eq_batch_launch &l, cudaStream_t stream)
{
    if (l.n_large > 0) {
        auto count = l.uniform ? eq_count_kernel<true> : eq_count_kernel<false>;
        count<<<l.count_grid, THREADS, 0, stream>>>(l);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) {
            return e;
        }
    }
    const uint32_t blocks = l.n_small + (l.n_large > 0 ? (uint32_t)l.apply_grid : 0u);
    const size_t smem = l.n_small > 0 ? SH_WORDS * sizeof(uint32_t) + l.small_bytes
                                      : LUT_WORDS * sizeof(uint32_t);
    auto kernel = l.uniform ? eq_batch_kernel<true> : eq_batch_kernel<false>;
    kernel<<<blocks, THREADS, smem, stream>>>(l);
    return cudaGetLastError();
}

cudaError_t ih_equalize_batch_setup(uint32_t *small_max, int *count_bps, int *apply_bps)
{
    int dev = 0, optin = 0, per_sm = 0, reserved = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev);
    cudaFuncAttributes fa;
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, eq_batch_kernel<false>);
    cudaFuncAttributes fu;
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&fu, eq_batch_kernel<true>);
    if (e != cudaSuccess) {
        return e;
    }
    /* Two blocks per SM, so that one block's loads overlap another's scan and
     * stores; one where two leave too
     * little. */
    const long counters = SH_WORDS * (long)sizeof(uint32_t);
    const long fixed = (long)(fa.sharedSizeBytes > fu.sharedSizeBytes ? fa.sharedSizeBytes
                                                                      : fu.sharedSizeBytes);
    const long two = per_sm / 2 - reserved - fixed - counters;
    const long one = optin - fixed - counters;
    long most = two >= 16384 ? two : one;
    most = most > 0 ? most & ~15L : 0;
    e = cudaFuncSetAttribute(eq_batch_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)(counters + most));
    if (e == cudaSuccess) {
        e = cudaFuncSetAttribute(eq_batch_kernel<true>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)(counters + most));
    }
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(count_bps, eq_count_kernel<false>,
                                                          THREADS, 0);
    }
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(apply_bps, eq_batch_kernel<false>,
                                                          THREADS, LUT_WORDS * sizeof(uint32_t));
    }
    *small_max = (uint32_t)most;
    return e;
}
