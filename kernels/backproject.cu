/*
 * Back-projection: every pixel becomes hist[cell] * scale, 0 in no cell.
 *
 * A warp takes a chunk of 128 pixels of a row at a time, a lane every 32nd
 * pixel of it, its four loads issued before any store, so that enough
 * bytes are in flight; rows of any width and batches of small images keep
 * the warps busy alike. Integer samples find
 * their cell as a sum of table entries (one table per channel read, built
 * by the host with the CPU's rule); float samples are binned on the device
 * with the CPU's double-precision operations, each rounded on its own.
 * The 8-bit tables and the model, when it fits (30 x 32 floats does),
 * live in shared memory; a larger model is read from global memory.
 *
 * The value follows the CPU reference operation for operation: one
 * single-precision product rounded to nearest (__fmul_rn: no contraction
 * into a neighbouring add), then for integer outputs a clamp to [0, top]
 * and a round half to even, NaN giving 0. A NaN in the model comes out
 * as x86's product gives it: the model's NaN, quieted.
 */
#include <stdint.h>

#include "backproject.cuh"

#define BP_THREADS 256
#define BP_WARPS (BP_THREADS / 32)
#define BP_UNROLL 4                /* pixels a lane takes from one chunk of a row */
#define BP_CHUNK (32 * BP_UNROLL)  /* pixels of a row a warp takes at a time */
#define BP_SHARED_HIST (32 * 1024) /* bytes: models up to this size go to shared memory */

/* ih_nd_bin (core/ndhist.h) on the device: the bin of v, or bins for none. */
__device__ __forceinline__ uint32_t bp_bin(const ih_bp_axis &a, double v)
{
    if (a.opencv) {
        return ih_opencv_bin(a.lo, a.hi, a.t, a.u, a.bins, v);
    }
    if (a.edges == NULL) {
        const uint32_t i = ih_bin_of_double(&a.bin, v);
        return i < a.bins ? i : a.bins;
    }
    return ih_edges_bin(a.edges, a.bins, a.closed, v);
}

/* The cell of pixel x of row, or a negative number. NR: channels read
 * (0: job.nread, at run time). */
template <int MODE, int NR>
__device__ __forceinline__ int bp_cell(const ih_bp_kjob &j, const uint8_t *row, uint32_t x,
                                       const int32_t *lut)
{
    const uint32_t nr = NR > 0 ? (uint32_t)NR : j.nread;
    int cell = 0;
    if constexpr (MODE == IH_BP_FLOAT) {
        const float *p = (const float *)(const void *)row + (size_t)x * j.channels;
        for (uint32_t d = 0; d < j.dims; d++) {
            const ih_bp_axis &a = j.ax[d];
            const uint32_t b = bp_bin(a, (double)p[a.channel]);
            if (b >= a.bins) {
                return -1;
            }
            cell += (int)(b * a.stride);
        }
    } else if constexpr (MODE == IH_BP_TABLES_U16) {
        const uint16_t *p = (const uint16_t *)(const void *)row + (size_t)x * j.channels;
#pragma unroll
        for (uint32_t k = 0; k < 4; k++) {
            if (k < nr) {
                cell += __ldg(&lut[k * 65536u + p[j.chan[k]]]);
            }
        }
    } else if constexpr (MODE == IH_BP_CONVERTED) {
        /* the converted pixel packed in a register: no local array */
        uint8_t q[3];
        ih_convert_pixel(j.tables, j.space, row + (size_t)x * j.channels, q);
        const uint32_t packed = q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16;
#pragma unroll
        for (uint32_t k = 0; k < (NR > 0 ? NR : 3); k++) {
            if (NR > 0 || k < nr) {
                cell += lut[k * 256u + ((packed >> (8 * j.chan[k])) & 255u)];
            }
        }
    } else {
        const uint8_t *p = row + (size_t)x * j.channels;
#pragma unroll
        for (uint32_t k = 0; k < (NR > 0 ? NR : 4); k++) {
            if (NR > 0 || k < nr) {
                cell += lut[k * 256u + p[j.chan[k]]];
            }
        }
    }
    return cell;
}

/* hist[cell] * scale as the CPU computes it; 0 in no cell. */
__device__ __forceinline__ float bp_value(int cell, const float *hist, float scale)
{
    if (cell < 0) {
        return 0.0f;
    }
    const float m = hist[cell];
    if (isnan(m)) {
        return __int_as_float(__float_as_int(m) | 0x00400000);
    }
    return __fmul_rn(m, scale);
}

template <int MODE>
__device__ __forceinline__ void bp_store(uint8_t *row, uint32_t x, float v)
{
    if constexpr (MODE == IH_BP_FLOAT) {
        ((float *)(void *)row)[x] = v;
    } else if constexpr (MODE == IH_BP_TABLES_U16) {
        ((uint16_t *)(void *)row)[x] = (uint16_t)__float2int_rn(fminf(fmaxf(v, 0.0f), 65535.0f));
    } else {
        row[x] = (uint8_t)__float2int_rn(fminf(fmaxf(v, 0.0f), 255.0f));
    }
}

/* SH: the model in shared memory; the 8-bit tables go there always. */
template <int MODE, int NR, bool SH>
__global__ void __launch_bounds__(BP_THREADS) bp_kernel(ih_bp_kjob j, uint32_t nlut)
{
    extern __shared__ int32_t bp_sm[];
    float *shist = (float *)(bp_sm + nlut);
    for (uint32_t i = threadIdx.x; i < nlut; i += BP_THREADS) {
        bp_sm[i] = j.lut[i];
    }
    if (SH) {
        for (uint32_t i = threadIdx.x; i < j.cells; i += BP_THREADS) {
            shist[i] = j.hist[i];
        }
    }
    __syncthreads();
    const int32_t *lut = nlut > 0 ? bp_sm : j.lut;
    const float *hist = SH ? shist : j.hist;
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t chunks = (j.width + BP_CHUNK - 1) / BP_CHUNK;
    const size_t items = (size_t)j.count * j.height * chunks;
    const size_t warps = (size_t)gridDim.x * BP_WARPS;
    for (size_t it = (size_t)blockIdx.x * BP_WARPS + threadIdx.x / 32; it < items; it += warps) {
        const size_t r = it / chunks;
        const uint32_t x0 = (uint32_t)(it - r * chunks) * BP_CHUNK;
        const size_t img = r / j.height;
        const size_t y = r - img * j.height;
        const uint8_t *row = j.src + (ptrdiff_t)img * j.image_stride + y * j.pitch;
        uint8_t *orow = j.dst + (ptrdiff_t)img * j.dst_stride + y * j.dst_pitch;
        /* every load of the chunk before the first store: they overlap */
        int cell[BP_UNROLL];
#pragma unroll
        for (int k = 0; k < BP_UNROLL; k++) {
            const uint32_t x = x0 + k * 32u + lane;
            cell[k] = x < j.width ? bp_cell<MODE, NR>(j, row, x, lut) : -1;
        }
#pragma unroll
        for (int k = 0; k < BP_UNROLL; k++) {
            const uint32_t x = x0 + k * 32u + lane;
            if (x < j.width) {
                bp_store<MODE>(orow, x, bp_value(cell[k], hist, j.scale));
            }
        }
    }
}

/* A grid of as many blocks as the SMs hold at once, or fewer for small jobs. */
template <int MODE, int NR, bool SH>
static cudaError_t bp_go(const ih_bp_kjob &j, uint32_t nlut, size_t shmem, size_t want,
                         int sm_count, cudaStream_t stream)
{
    int per_sm = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, bp_kernel<MODE, NR, SH>, BP_THREADS, shmem);
    if (e != cudaSuccess) {
        return e;
    }
    const size_t most = (size_t)(sm_count > 0 ? sm_count : 1) * (per_sm > 0 ? per_sm : 1);
    const uint32_t blocks = (uint32_t)(want < most ? want : most);
    bp_kernel<MODE, NR, SH><<<blocks, BP_THREADS, shmem, stream>>>(j, nlut);
    return cudaGetLastError();
}

template <int MODE, bool SH>
static cudaError_t bp_by_reads(const ih_bp_kjob &j, uint32_t nlut, size_t shmem, size_t want,
                               int sms, cudaStream_t stream)
{
    if constexpr (MODE == IH_BP_FLOAT || MODE == IH_BP_TABLES_U16) {
        return bp_go<MODE, 0, SH>(j, nlut, shmem, want, sms, stream);
    } else {
        switch (j.nread) {
        case 1: return bp_go<MODE, 1, SH>(j, nlut, shmem, want, sms, stream);
        case 2: return bp_go<MODE, 2, SH>(j, nlut, shmem, want, sms, stream);
        case 3: return bp_go<MODE, 3, SH>(j, nlut, shmem, want, sms, stream);
        default: return bp_go<MODE, 0, SH>(j, nlut, shmem, want, sms, stream);
        }
    }
}

template <int MODE>
static cudaError_t bp_by_model(const ih_bp_kjob &j, bool shared_hist, uint32_t nlut,
                               size_t shmem, size_t want, int sms, cudaStream_t stream)
{
    return shared_hist ? bp_by_reads<MODE, true>(j, nlut, shmem, want, sms, stream)
                       : bp_by_reads<MODE, false>(j, nlut, shmem, want, sms, stream);
}

cudaError_t ih_launch_backproject(const ih_bp_kjob &j, int sm_count, cudaStream_t stream)
{
    const size_t rows = (size_t)j.count * j.height;
    if (rows == 0 || j.width == 0) {
        return cudaSuccess;
    }
    const size_t items = rows * ((j.width + BP_CHUNK - 1) / BP_CHUNK);
    const size_t want = (items + BP_WARPS - 1) / BP_WARPS;
    const bool byte_tables = j.mode == IH_BP_TABLES_U8 || j.mode == IH_BP_CONVERTED;
    const uint32_t nlut = byte_tables ? j.nread * 256u : 0u;
    const bool shared_hist = (size_t)j.cells * sizeof(float) <= BP_SHARED_HIST;
    const size_t shmem = nlut * sizeof(int32_t) + (shared_hist ? j.cells * sizeof(float) : 0);
    switch (j.mode) {
    case IH_BP_TABLES_U8:
        return bp_by_model<IH_BP_TABLES_U8>(j, shared_hist, nlut, shmem, want, sm_count, stream);
    case IH_BP_TABLES_U16:
        return bp_by_model<IH_BP_TABLES_U16>(j, shared_hist, nlut, shmem, want, sm_count,
                                             stream);
    case IH_BP_CONVERTED:
        return bp_by_model<IH_BP_CONVERTED>(j, shared_hist, nlut, shmem, want, sm_count, stream);
    default:
        return bp_by_model<IH_BP_FLOAT>(j, shared_hist, nlut, shmem, want, sm_count, stream);
    }
}

/*
 * Counting: a warp takes 32 pixels of a row, each lane adds its pixel's
 * cell to the image's counters with one global atomic. 16-bit and float
 * images have too many distinct values for the 8-bit kernels' tables in
 * shared memory; this path gives the CPU's counts, not the 8-bit path's
 * speed.
 */
template <int MODE>
__global__ void __launch_bounds__(BP_THREADS) nd_count_kernel(ih_bp_kjob j, ih_bp_count c)
{
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t chunks = (j.width + 31u) / 32u;
    const size_t items = (size_t)j.count * j.height * chunks;
    const size_t warps = (size_t)gridDim.x * BP_WARPS;
    for (size_t it = (size_t)blockIdx.x * BP_WARPS + threadIdx.x / 32; it < items; it += warps) {
        const size_t r = it / chunks;
        const uint32_t x = (uint32_t)(it - r * chunks) * 32u + lane;
        const size_t img = r / j.height;
        const size_t y = r - img * j.height;
        if (x >= j.width ||
            (c.mask != NULL && c.mask[(ptrdiff_t)img * c.mask_stride + y * c.mask_pitch + x] == 0)) {
            continue;
        }
        const uint8_t *row = j.src + (ptrdiff_t)img * j.image_stride + y * j.pitch;
        const int cell = bp_cell<MODE, 0>(j, row, x, j.lut);
        unsigned long long *o = c.out + img * c.len;
        if (cell >= 0) {
            atomicAdd(&o[cell], 1ull);
        } else if (c.outliers) {
            atomicAdd(&o[j.cells], 1ull);
        }
    }
}

template <int MODE>
static cudaError_t nd_count_go(const ih_bp_kjob &j, const ih_bp_count &c, size_t want,
                               int sm_count, cudaStream_t stream)
{
    int per_sm = 0;
    const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, nd_count_kernel<MODE>, BP_THREADS, 0);
    if (e != cudaSuccess) {
        return e;
    }
    const size_t most = (size_t)(sm_count > 0 ? sm_count : 1) * (per_sm > 0 ? per_sm : 1);
    const uint32_t blocks = (uint32_t)(want < most ? want : most);
    nd_count_kernel<MODE><<<blocks, BP_THREADS, 0, stream>>>(j, c);
    return cudaGetLastError();
}

cudaError_t ih_launch_nd_count(const ih_bp_kjob &j, const ih_bp_count &c, int sm_count,
                               cudaStream_t stream)
{
    const size_t rows = (size_t)j.count * j.height;
    if (rows == 0 || j.width == 0) {
        return cudaSuccess;
    }
    const size_t items = rows * ((j.width + 31u) / 32u);
    const size_t want = (items + BP_WARPS - 1) / BP_WARPS;
    if (j.mode == IH_BP_TABLES_U16) {
        return nd_count_go<IH_BP_TABLES_U16>(j, c, want, sm_count, stream);
    }
    if (j.mode == IH_BP_FLOAT) {
        return nd_count_go<IH_BP_FLOAT>(j, c, want, sm_count, stream);
    }
    return cudaErrorInvalidValue;
}
