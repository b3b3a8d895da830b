/*
 * 8-bit, 256-bin histograms.
 *
 * Each block keeps a private histogram in shared memory with 32 replicas of
 * every bin, laid out so that lane L of any warp only touches bank L:
 * counter(bin, L) lives at word bin*32 + L. A warp's 32 increments therefore
 * never conflict, whatever the data (constant images, values that are all
 * multiples of 32, noise all run at the same speed). The SM runs such atomics
 * at about one warp instruction per clock, so the integer work around them
 * is what bounds the kernel: one PRMT and one address a byte, and warps
 * whose granules are each one
 * repeated byte add 16 at once. Blocks read 16-byte granules (granules.cuh),
 * several loads in flight per thread, over a persistent grid; at the end each
 * block folds its 32 replicas and adds them to a 64-bit global workspace.
 *
 * The last block to finish (a ticket counter) turns the workspace (IH_WS_COPIES
 * copies, to spread the merges' atomics over L2) into the
 * result: it moves the counts to the output, zeroes the workspace for the next
 * launch, and, for equalization, scans the histogram into the CDF and the LUT,
 * so that histogram -> CDF -> LUT is one launch with no host round trip.
 */
#include <stdint.h>

#include "hist_u8_block.cuh"

namespace {

using namespace ih_u8;

/* Run by the last block: workspace -> histogram (and LUT); workspace re-zeroed. */
__device__ void finalize(const ih_hist_launch &l)
{
    const int t = threadIdx.x;
    unsigned long long h = 0;
    if (t < 256) {
        for (int k = 0; k < IH_WS_COPIES; k++) {
            h += atomicExch(l.ws + k * 256 + t, 0ull); /* read at L2 and leave zero */
        }
        l.hist_out[t] = l.accumulate ? l.hist_out[t] + h : h;
    }
    if (t == 0) {
        *l.counter = 0;
    }
    if (l.lut_out == nullptr) {
        return;
    }
    const uint32_t out = block_lut_u8(h, l.pil);
    if (t < 256) {
        l.lut_out[t] = (unsigned char)out;
    }
}

__global__ void __launch_bounds__(THREADS) hist_u8_kernel(ih_geom g, ih_hist_launch l)
{
    __shared__ __align__(16) uint32_t sh[SH_WORDS];
    __shared__ unsigned int s_ticket;

    zero_counters(sh);
    count_granules(lane_column(sh), g, blockIdx.x, gridDim.x, UINT32_MAX);
    fold_replicas(sh, l.ws + (blockIdx.x % IH_WS_COPIES) * 256);
    if (!l.finalize) {
        return;
    }
    /* Release the block's merges and take a ticket; the last block acquires
     * everyone's. One thread fences, after the barrier, as cooperative groups'
     * grid sync does: the barrier orders the other threads' merges before its
     * fence, and the fence is cumulative. (With a fence in every thread, the
     * fences held a fifth of the stall samples of a 12 MP call.) */
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        s_ticket = atomicAdd(l.counter, 1u);
        if (s_ticket == gridDim.x - 1) {
            __threadfence();
        }
    }
    __syncthreads();
    if (s_ticket != gridDim.x - 1) {
        return;
    }
    finalize(l);
}

/*
 * The batch: the images' chunks are numbered back to back and cut into runs of
 * `run` chunks; a persistent grid takes the runs in turn (block b: runs b,
 * b + grid, ...), so that no image size leaves blocks idle at the end. The
 * library makes it one run per block. A block folds its
 * counters into an image's histogram each time a run leaves that image,
 * adding what they gained since the last fold instead of zeroing them: a
 * fold reads the 32 KiB of counters once, and nothing writes them again.
 * With a workspace (ws, tickets: zero, and left zero), the counts are
 * written, not added, so that the caller need not clear them first (which
 * is faster than a memset in front):
 * an image that one run holds whole is stored by its block; the pieces of
 * an image split over runs are added into ws, and the last piece's block
 * (a ticket per image) stores the sum and leaves ws zero. Without ws, the
 * blocks add into hists (IMGHIST_ACCUMULATE, or counts already zeroed).
 * Three blocks per SM: their overlap is worth more than the few bytes of
 * spills that two blocks would avoid.
 */
/* WRITE: through ws and tickets, else adding into hists; UNIFORM: imgs is a
 * uniform batch (two kernels, so that neither carries the other's registers). */
template <bool WRITE, bool UNIFORM>
__global__ void __launch_bounds__(THREADS, IH_BATCH_MIN_BLOCKS)
    hist_u8_batch_kernel(ih_batch_images imgs, uint32_t count, uint32_t run,
                         unsigned long long *hists, unsigned long long *ws, unsigned int *tickets)
{
    /* The chunk numbering, made where it is used from the parameters (held
     * in a register for the whole kernel, it cost spills on sm_80). */
    const auto map = [&] {
        if constexpr (UNIFORM) {
            return ih_chunk_uniform{imgs.per_image};
        } else {
            return ih_chunk_array{imgs.chunk_start};
        }
    };
    __shared__ __align__(16) uint32_t sh[SH_WORDS];
    /* The current image's geometry, in shared memory: read through a
     * pointer into global memory, the compiler loads it again at every step
     * (in front of each step's addresses), and a copy in registers costs
     * more than the shared loads. */
    __shared__ ih_geom s_geom;
    __shared__ bool s_last;
    const uint32_t col = lane_column(sh);
    uint32_t seen = 0; /* the thread's bin's sum at the last fold (fold_since) */
    zero_counters(sh);
    for_each_segment(
        map(), count, run, blockIdx.x, gridDim.x, [&](uint32_t img, uint32_t c0, uint32_t c1) {
            if (threadIdx.x == 0) {
                if constexpr (UNIFORM) {
                    s_geom = ih_geom_at(imgs.g0, imgs.stride, img);
                } else {
                    s_geom = imgs.geoms[img];
                }
            }
            __syncthreads(); /* s_geom published; the last fold's reads done */
            /* Read before the fold's barrier: thread 0 may write s_geom again
             * once past it. */
            const bool whole = c0 == 0 && c1 == (s_geom.total + CHUNK - 1) / CHUNK;
            count_granules(col, s_geom, c0, 1, c1);
            unsigned long long *dst = hists + (size_t)img * 256;
            if (!WRITE) {
                fold_since(sh, dst, seen);
                return;
            }
            const uint32_t s = pair_bin_sum(sh);
            const uint32_t gained = s - seen;
            seen = s;
            const bool lead = (threadIdx.x & 1) == 0;
            const uint32_t bin = threadIdx.x >> 1;
            if (whole) {
                if (lead) {
                    dst[bin] = gained; /* the whole image */
                }
                return;
            }
            unsigned long long *w = ws + (size_t)img * 256;
            if (lead && gained != 0) {
                atomicAdd(w + bin, (unsigned long long)gained);
            }
            /* Release the piece, take the image's ticket: one per run that
             * touches the image (hist_u8_kernel explains the one fence). */
            __syncthreads();
            if (threadIdx.x == 0) {
                const uint32_t base = map().at(img), next = map().at(img + 1);
                const uint32_t pieces = (next - 1) / run - base / run + 1;
                __threadfence();
                s_last = atomicAdd(tickets + img, 1u) == pieces - 1;
                if (s_last) {
                    __threadfence();
                    tickets[img] = 0;
                }
            }
            __syncthreads();
            if (s_last && lead) {
                dst[bin] = atomicExch(w + bin, 0ull); /* read at L2 and leave zero */
            }
        });
}

/* Source and destination share their alignment within 16 bytes on every row,
 * so whole granules map to whole granules. */
__global__ void __launch_bounds__(THREADS) apply_lut_kernel(ih_geom g, uint8_t *dst,
                                                            size_t dst_pitch,
                                                            const unsigned char *lut)
{
    __shared__ uint32_t s_lut[LUT_WORDS];
    load_lut(s_lut, lut);
    const uint8_t *lutl = lane_lut(s_lut);
    walk_granules(
        g, blockIdx.x, gridDim.x, UINT32_MAX,
        [=](uint4 v, uint32_t r, uint32_t col) {
            __stcs(reinterpret_cast<uint4 *>(dst + (size_t)r * dst_pitch + col),
                   map_vec(lutl, v));
        },
        [=](uint32_t b, uint32_t r, uint32_t col) {
            dst[(size_t)r * dst_pitch + col] = (uint8_t)map_byte(lutl, b);
        });
}

/* Any alignments: one byte per thread and step. */
__global__ void __launch_bounds__(THREADS) apply_lut_bytes_kernel(const uint8_t *src,
                                                                  size_t src_pitch, uint8_t *dst,
                                                                  size_t dst_pitch, uint32_t width,
                                                                  uint32_t height,
                                                                  const unsigned char *lut)
{
    __shared__ uint32_t s_lut[LUT_WORDS];
    load_lut(s_lut, lut);
    const uint8_t *lutl = lane_lut(s_lut);
    for (uint32_t y = blockIdx.y; y < height; y += gridDim.y) {
        const uint8_t *s = src + (size_t)y * src_pitch;
        uint8_t *d = dst + (size_t)y * dst_pitch;
        for (uint32_t x = blockIdx.x * THREADS + threadIdx.x; x < width; x += gridDim.x * THREADS) {
            d[x] = (uint8_t)map_byte(lutl, s[x]);
        }
    }
}

} // namespace

cudaError_t ih_launch_hist_u8(const ih_geom &g, const ih_hist_launch &l, cudaStream_t stream)
{
    hist_u8_kernel<<<l.grid, THREADS, 0, stream>>>(g, l);
    return cudaGetLastError();
}

cudaError_t ih_launch_hist_u8_batch(const ih_batch_images &imgs, uint32_t count, uint32_t run,
                                    int grid, unsigned long long *hists, unsigned long long *ws,
                                    unsigned int *tickets, cudaStream_t stream)
{
    auto kernel = hist_u8_batch_kernel<false, false>;
    if (imgs.geoms == nullptr) {
        kernel = ws != nullptr ? hist_u8_batch_kernel<true, true>
                               : hist_u8_batch_kernel<false, true>;
    } else if (ws != nullptr) {
        kernel = hist_u8_batch_kernel<true, false>;
    }
    kernel<<<grid, THREADS, 0, stream>>>(imgs, count, run, hists, ws, tickets);
    return cudaGetLastError();
}

cudaError_t ih_launch_apply_lut(const ih_geom &src, uint8_t *dst, size_t dst_pitch,
                                const unsigned char *lut, int grid, cudaStream_t stream)
{
    const uint32_t rows = src.total / src.per_row.d;
    const bool same_phase = (((uintptr_t)src.base ^ (uintptr_t)dst) & 15) == 0 &&
                            (rows == 1 || ((src.pitch ^ dst_pitch) & 15) == 0);
    if (same_phase) {
        apply_lut_kernel<<<grid, THREADS, 0, stream>>>(src, dst, dst_pitch, lut);
    } else {
        const uint32_t bx = (src.width + THREADS - 1) / THREADS;
        dim3 g2(bx < 64 ? bx : 64, rows < 65535 ? rows : 65535);
        apply_lut_bytes_kernel<<<g2, THREADS, 0, stream>>>(src.base, src.pitch, dst, dst_pitch,
                                                           src.width, rows, lut);
    }
    return cudaGetLastError();
}

cudaError_t ih_batch_kernels(bool *writes, bool *uniform)
{
    cudaFuncAttributes w, wu, au;
    cudaError_t e = cudaFuncGetAttributes(&w, hist_u8_batch_kernel<true, false>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&wu, hist_u8_batch_kernel<true, true>);
    if (e == cudaSuccess) e = cudaFuncGetAttributes(&au, hist_u8_batch_kernel<false, true>);
    /* Each choice on its own: a uniform kernel that spills costs the
     * descriptor batches nothing. */
    *writes = e == cudaSuccess && w.localSizeBytes == 0;
    *uniform = e == cudaSuccess && (*writes ? wu : au).localSizeBytes == 0;
    return e;
}

cudaError_t ih_hist_blocks_per_sm(int *hist, int *batch, int *apply)
{
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(hist, hist_u8_kernel, THREADS, 0);
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            batch, hist_u8_batch_kernel<true, false>, THREADS, 0);
    }
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(apply, apply_lut_kernel, THREADS, 0);
    }
    return e;
}
