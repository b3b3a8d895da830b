/*
 * Reference kernels for the benchmark: the bandwidth ceilings, the three seed
 * histogram kernels (written from their descriptions, kept as plain as the
 * descriptions are, since they are what imghist is compared with), and CUB.
 */
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

#include <cub/cub.cuh>

#include "bench_kernels.cuh"

namespace {

constexpr int RW_THREADS = 256;   /* read / copy kernels */
constexpr int SEED_THREADS = 512; /* seed kernels, as in the seed descriptions */

/* ---- ceilings ---- */

template <bool EVICT_FIRST>
__device__ __forceinline__ uint4 load16(const uint4 *p)
{
    return EVICT_FIRST ? __ldcs(p) : __ldg(p);
}

__device__ __forceinline__ uint32_t fold16(uint4 v)
{
    return v.x ^ v.y ^ v.z ^ v.w;
}

/* Every thread keeps UNROLL independent 16-byte loads in flight, then folds
 * them; the warp's folded value is written once, so that the compiler has to
 * keep every load. */
template <int UNROLL, bool EVICT_FIRST>
__global__ void __launch_bounds__(RW_THREADS) read_kernel(const uint4 *__restrict__ src, size_t n16,
                                                          unsigned int *__restrict__ sink)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t acc = 0;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            v[k] = load16<EVICT_FIRST>(src + i + k * stride);
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            acc ^= fold16(v[k]);
        }
    }
    for (; i < n16; i += stride) {
        acc ^= fold16(load16<EVICT_FIRST>(src + i));
    }
    for (int off = 16; off > 0; off >>= 1) {
        acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicXor(sink, acc);
    }
}

__global__ void __launch_bounds__(RW_THREADS) copy_kernel(uint4 *__restrict__ dst,
                                                          const uint4 *__restrict__ src, size_t n16)
{
    constexpr int UNROLL = 4;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (UNROLL - 1) * stride < n16; i += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            v[k] = __ldcs(src + i + k * stride);
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            __stcs(dst + i + k * stride, v[k]);
        }
    }
    for (; i < n16; i += stride) {
        __stcs(dst + i, __ldcs(src + i));
    }
}

/* ---- seed kernels ---- */

__global__ void seed_global_kernel(const uint8_t *__restrict__ data, size_t n,
                                   unsigned int *__restrict__ hist)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hist[data[i]], 1u);
    }
}

__device__ __forceinline__ void zero_bins(unsigned int *bins)
{
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        bins[b] = 0;
    }
    __syncthreads();
}

/* Add the block's bins to the global histogram, skipping empty ones. */
__device__ __forceinline__ void flush_bins(const unsigned int *bins, unsigned int *hist)
{
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x) {
        if (bins[b] != 0) {
            atomicAdd(&hist[b], bins[b]);
        }
    }
}

__global__ void __launch_bounds__(SEED_THREADS) seed_shared_kernel(const uint8_t *__restrict__ data,
                                                                   size_t n,
                                                                   unsigned int *__restrict__ hist)
{
    __shared__ unsigned int bins[256];
    zero_bins(bins);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(&bins[data[i]], 1u);
    }
    flush_bins(bins, hist);
}

__device__ __forceinline__ void count_word(unsigned int *bins, uint32_t w)
{
    atomicAdd(&bins[w & 0xffu], 1u);
    atomicAdd(&bins[(w >> 8) & 0xffu], 1u);
    atomicAdd(&bins[(w >> 16) & 0xffu], 1u);
    atomicAdd(&bins[w >> 24], 1u);
}

/* `data` is 16-byte aligned; the n % 16 bytes past the last full vector are
 * counted one by one. */
__global__ void __launch_bounds__(SEED_THREADS)
    seed_shared_vec_kernel(const uint8_t *__restrict__ data, size_t n,
                           unsigned int *__restrict__ hist)
{
    __shared__ unsigned int bins[256];
    zero_bins(bins);
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    const size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n16 = n / 16;
    const uint4 *vec = reinterpret_cast<const uint4 *>(data);
    for (size_t i = tid; i < n16; i += stride) {
        const uint4 v = vec[i];
        count_word(bins, v.x);
        count_word(bins, v.y);
        count_word(bins, v.z);
        count_word(bins, v.w);
    }
    for (size_t i = n16 * 16 + tid; i < n; i += stride) {
        atomicAdd(&bins[data[i]], 1u);
    }
    flush_bins(bins, hist);
}

/* Blocks of `kernel` resident on the whole GPU, at most `cap` (>= 1). */
template <typename K>
int resident_grid(K kernel, int threads, int sm_count, size_t cap)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0) != cudaSuccess ||
        per_sm < 1) {
        (void)cudaGetLastError();
        per_sm = 1;
    }
    size_t grid = (size_t)per_sm * (size_t)sm_count;
    if (grid > cap) {
        grid = cap;
    }
    return grid < 1 ? 1 : (int)grid;
}

} // namespace

const char *read_variant_name(read_variant v)
{
    switch (v) {
    case READ_LDG_X4: return "read 16B ldg x4";
    case READ_LDG_X8: return "read 16B ldg x8";
    case READ_LDCS_X8: return "read 16B ldcs x8";
    default: return "?";
    }
}

int stream_grid(int sm_count)
{
    return resident_grid(read_kernel<8, false>, RW_THREADS, sm_count, (size_t)1 << 30);
}

cudaError_t launch_read(read_variant v, const void *src, size_t bytes, unsigned int *sink,
                        int grid, cudaStream_t stream)
{
    const uint4 *s = static_cast<const uint4 *>(src);
    const size_t n16 = bytes / 16;
    switch (v) {
    case READ_LDG_X4:
        read_kernel<4, false><<<grid, RW_THREADS, 0, stream>>>(s, n16, sink);
        break;
    case READ_LDG_X8:
        read_kernel<8, false><<<grid, RW_THREADS, 0, stream>>>(s, n16, sink);
        break;
    case READ_LDCS_X8:
        read_kernel<8, true><<<grid, RW_THREADS, 0, stream>>>(s, n16, sink);
        break;
    default:
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t launch_copy(void *dst, const void *src, size_t bytes, int grid, cudaStream_t stream)
{
    copy_kernel<<<grid, RW_THREADS, 0, stream>>>(static_cast<uint4 *>(dst),
                                                static_cast<const uint4 *>(src), bytes / 16);
    return cudaGetLastError();
}

cudaError_t launch_seed_global(const uint8_t *data, size_t n, unsigned int *hist,
                               cudaStream_t stream)
{
    constexpr int threads = 256;
    const size_t blocks = (n + threads - 1) / threads; /* 2^22 for 1 GiB: within grid.x */
    seed_global_kernel<<<(unsigned int)blocks, threads, 0, stream>>>(data, n, hist);
    return cudaGetLastError();
}

cudaError_t launch_seed_shared(const uint8_t *data, size_t n, unsigned int *hist, int sm_count,
                               cudaStream_t stream)
{
    const int grid = resident_grid(seed_shared_kernel, SEED_THREADS, sm_count,
                                   (n + SEED_THREADS - 1) / SEED_THREADS);
    seed_shared_kernel<<<grid, SEED_THREADS, 0, stream>>>(data, n, hist);
    return cudaGetLastError();
}

cudaError_t launch_seed_shared_vec(const uint8_t *data, size_t n, unsigned int *hist,
                                   int sm_count, cudaStream_t stream)
{
    if (((uintptr_t)data & 15) != 0) {
        return cudaErrorMisalignedAddress;
    }
    const int grid = resident_grid(seed_shared_vec_kernel, SEED_THREADS, sm_count,
                                   (n / 16 + SEED_THREADS - 1) / SEED_THREADS);
    seed_shared_vec_kernel<<<grid, SEED_THREADS, 0, stream>>>(data, n, hist);
    return cudaGetLastError();
}

cudaError_t cub_hist_1d(void *temp, size_t *temp_bytes, const uint8_t *data, int n, int *hist,
                        cudaStream_t stream)
{
    return cub::DeviceHistogram::HistogramEven(temp, *temp_bytes, data, hist, 257, 0, 256, n,
                                               stream);
}

cudaError_t cub_hist_2d(void *temp, size_t *temp_bytes, const uint8_t *data, int width, int rows,
                        size_t pitch, int *hist, cudaStream_t stream)
{
    return cub::DeviceHistogram::HistogramEven(temp, *temp_bytes, data, hist, 257, 0, 256, width,
                                               rows, pitch, stream);
}

const char *cub_version_string(void)
{
    static char buf[48];
    snprintf(buf, sizeof buf, "CCCL %d.%d.%d", CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION,
             CCCL_PATCH_VERSION);
    return buf;
}

__global__ void __launch_bounds__(RW_THREADS) read_runs_kernel(const uint4 *__restrict__ src,
                                                               size_t n16, uint32_t chunk16,
                                                               uint32_t run,
                                                               unsigned int *__restrict__ sink)
{
    const size_t chunks = (n16 + chunk16 - 1) / chunk16;
    uint32_t acc = 0;
    for (size_t lo = (size_t)blockIdx.x * run; lo < chunks; lo += (size_t)gridDim.x * run) {
        const size_t hi = chunks - lo < run ? chunks : lo + run;
        for (size_t c = lo; c < hi; c++) {
            const size_t end = (c + 1) * chunk16 < n16 ? (c + 1) * chunk16 : n16;
            for (size_t i = c * chunk16 + threadIdx.x; i < end; i += 4 * RW_THREADS) {
                uint4 v[4];
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    const size_t j = i + (size_t)k * RW_THREADS;
                    v[k] = j < end ? __ldcs(src + j) : make_uint4(0, 0, 0, 0);
                }
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    acc ^= fold16(v[k]);
                }
            }
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicXor(sink, acc);
    }
}

cudaError_t launch_read_runs(const void *src, size_t bytes, uint32_t chunk16, uint32_t run,
                             unsigned int *sink, int grid, cudaStream_t stream)
{
    if (chunk16 == 0 || run == 0) {
        return cudaErrorInvalidValue;
    }
    read_runs_kernel<<<grid, RW_THREADS, 0, stream>>>(static_cast<const uint4 *>(src), bytes / 16,
                                                       chunk16, run, sink);
    return cudaGetLastError();
}

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void hold_kernel(const volatile int *release, int *timed_out, long long max_ns)
{
    const unsigned long long t0 = global_ns();
    while (*release == 0) {
        __nanosleep(500);
        if ((long long)(global_ns() - t0) > max_ns) {
            *timed_out = 1;
            break;
        }
    }
}

cudaError_t launch_hold(const volatile int *release, int *timed_out, long long max_ns,
                        cudaStream_t stream)
{
    hold_kernel<<<1, 1, 0, stream>>>(release, timed_out, max_ns);
    return cudaGetLastError();
}

__global__ void empty_kernel() {}

cudaError_t launch_empty(cudaStream_t stream)
{
    empty_kernel<<<1, 32, 0, stream>>>();
    return cudaGetLastError();
}

/* ---- timing single calls ---- */

static void timer_check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "call_timer: %s failed: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

void call_timer_init(call_timer &t, const cudaDeviceProp &prop)
{
    timer_check(cudaStreamCreateWithFlags(&t.stream, cudaStreamNonBlocking), "stream");
    timer_check(cudaEventCreate(&t.e0), "event");
    timer_check(cudaEventCreate(&t.e1), "event");
    t.grid = stream_grid(prop.multiProcessorCount);
    t.flush_bytes = ((size_t)prop.l2CacheSize * 2 + 15) / 16 * 16;
    timer_check(cudaMalloc(&t.flush, t.flush_bytes), "flush buffer");
    timer_check(cudaMemset(t.flush, 1, t.flush_bytes), "flush buffer");
    timer_check(cudaMalloc(&t.sink, 64), "sink");
}

double call_timer_ms(call_timer &t, const std::function<void()> &f, bool flush)
{
    std::vector<double> ms;
    for (int i = 0; i < t.warmup + t.runs; i++) {
        if (flush) {
            timer_check(launch_read(READ_LDG_X4, t.flush, t.flush_bytes, t.sink, t.grid, t.stream),
                        "L2 flush");
        }
        timer_check(cudaEventRecord(t.e0, t.stream), "event record");
        f();
        timer_check(cudaEventRecord(t.e1, t.stream), "event record");
        timer_check(cudaEventSynchronize(t.e1), "event wait");
        float one = 0;
        timer_check(cudaEventElapsedTime(&one, t.e0, t.e1), "elapsed time");
        if (i >= t.warmup) {
            ms.push_back(one);
        }
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}
