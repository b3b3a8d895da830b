/*
 * Kernels the benchmark measures imghist against, and thin wrappers around
 * CUB. Everything here only enqueues work on `stream`; errors come back as
 * cudaError_t for the caller's check macro.
 */
#ifndef IMGHIST_BENCH_KERNELS_CUH
#define IMGHIST_BENCH_KERNELS_CUH

#include <stddef.h>
#include <stdint.h>

#include <functional>

#include <cuda_runtime_api.h>

/* ---- bandwidth ceilings ---- */

/* Variants of the streaming read kernel; the ceiling is the fastest of them, so
 * that the figure does not hinge on one load flavour. */
enum read_variant {
    READ_LDG_X4,   /* ld.global.nc, 4 loads of 16 bytes in flight per thread */
    READ_LDG_X8,   /* ld.global.nc, 8 in flight */
    READ_LDCS_X8,  /* ld.global.cs (evict-first), 8 in flight */
    READ_VARIANTS
};
const char *read_variant_name(read_variant v);

/* Blocks for a persistent grid of the read / copy kernels (every SM full). */
int stream_grid(int sm_count);

/* XOR-fold `bytes` (a multiple of 16, 16-byte aligned) into *sink. */
cudaError_t launch_read(read_variant v, const void *src, size_t bytes, unsigned int *sink,
                        int grid, cudaStream_t stream);
/* The streaming read in the batch kernel's order: `bytes` (a multiple of 16)
 * cut into chunks of `chunk16` 16-byte words, chunks grouped into runs of
 * `run`; block b reads runs b, b + grid, ... (4 loads in flight per thread). */
cudaError_t launch_read_runs(const void *src, size_t bytes, uint32_t chunk16, uint32_t run,
                             unsigned int *sink, int grid, cudaStream_t stream);
/* A kernel that does nothing: the floor of a timed single launch. */
cudaError_t launch_empty(cudaStream_t stream);
/* Holds `stream` until *release (host-mapped memory) becomes non-zero, so that
 * work enqueued behind it starts back to back with no host launch gaps (the
 * blocking-kernel method of NVBench). Gives up after about `max_ns`
 * nanoseconds and then sets *timed_out. */
cudaError_t launch_hold(const volatile int *release, int *timed_out, long long max_ns,
                        cudaStream_t stream);
/* dst = src, 16-byte loads and stores, 4 of each in flight per thread. */
cudaError_t launch_copy(void *dst, const void *src, size_t bytes, int grid, cudaStream_t stream);

/* ---- the seed kernels (32-bit counts; hist must be zeroed first) ---- */

/* (a) one byte per thread, atomicAdd straight into the global histogram. */
cudaError_t launch_seed_global(const uint8_t *data, size_t n, unsigned int *hist,
                               cudaStream_t stream);
/* (b) per-block shared-memory histogram, one byte per thread and step, grid-stride. */
cudaError_t launch_seed_shared(const uint8_t *data, size_t n, unsigned int *hist, int sm_count,
                               cudaStream_t stream);
/* (c) as (b), but 16 bytes per thread and step through one 16-byte (uint4) load. */
cudaError_t launch_seed_shared_vec(const uint8_t *data, size_t n, unsigned int *hist,
                                   int sm_count, cudaStream_t stream);

/* ---- CUB DeviceHistogram::HistogramEven: 256 bins, levels 0..256, int counters ---- */

/* With temp == NULL only *temp_bytes is set (CUB's size query). */
cudaError_t cub_hist_1d(void *temp, size_t *temp_bytes, const uint8_t *data, int n, int *hist,
                        cudaStream_t stream);
cudaError_t cub_hist_2d(void *temp, size_t *temp_bytes, const uint8_t *data, int width, int rows,
                        size_t pitch, int *hist, cudaStream_t stream);
/* "CCCL x.y.z" */
const char *cub_version_string(void);

/* ---- timing single calls ---- */

/* One stream's timer: CUDA events around each call, the inputs evicted from
 * L2 before it (a read of a buffer twice L2's size), the median of `runs`
 * timed calls after `warmup` untimed ones. A CUDA error ends the program
 * (benchmarks only). */
struct call_timer {
    cudaStream_t stream = nullptr; /* non-blocking, made by call_timer_init */
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    uint8_t *flush = nullptr;
    size_t flush_bytes = 0;
    unsigned int *sink = nullptr;  /* 64 bytes the read kernels may XOR into */
    int grid = 0;                  /* stream_grid() of the device */
    int warmup = 3, runs = 20;
};
void call_timer_init(call_timer &t, const cudaDeviceProp &prop);
double call_timer_ms(call_timer &t, const std::function<void()> &f, bool flush = true);

#endif
