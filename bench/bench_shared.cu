/*
 * imghist_bench_shared: microbenchmarks of the SM's shared-memory increment
 * rates, the limit under the 8-bit kernel and the wide kernels on
 * Hopper.
 *
 *   imghist_bench_shared [--runs N]
 *
 * Each test runs a persistent grid (every SM full) for a few milliseconds.
 * Thread 0 of every block reads the SM clock (clock64) at its block's start
 * and end; the longest span over the blocks counts the clocks of the test
 * (the blocks of an SM do not finish together), and with the CUDA-event time
 * it gives the clock the SMs ran at (MHz; nvidia-smi agrees within a few per
 * cent), so each rate is per SM per clock, not per nominal clock. Reported: the increments per clock per SM (a warp's
 * instruction counts 32), and for the streaming tests the input bytes per
 * clock per SM, to compare with what DRAM delivers per SM per clock (the read
 * ceiling, measured in the same run).
 *
 * Increment sources: "reg" tests make their bins in registers (a 32-bit LCG,
 * four bins a word), so nothing else uses the SM's data path; "L2" tests
 * stream a 32 MiB buffer that stays in L2 (the 8-bit kernel's loop without
 * DRAM's limit); "DRAM" tests stream 1 GiB.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime.h>

#include "hist_u8_block.cuh" /* the 8-bit kernels' own counting */

namespace {

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                            \
        }                                                                                       \
    } while (0)

constexpr int THREADS = 512;
constexpr int LANES = 32;

/* Per block: its clock span (thread 0), and a sink that keeps results live. */
struct Probe {
    unsigned long long *span;
    unsigned long long *sink;  /* [0], [1]: sinks; [2..33]: 16-byte vectors read */
};

__device__ __forceinline__ void probe_begin(unsigned long long &t0)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        t0 = clock64();
    }
}

__device__ __forceinline__ void probe_end(const Probe &p, unsigned long long t0, uint32_t keep)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        p.span[blockIdx.x] = clock64() - t0;
    }
    if (keep == 0x9e3779b9u) {
        p.sink[0] = keep; /* practically never; keeps the work */
    }
}

__device__ __forceinline__ uint32_t lcg(uint32_t x)
{
    return x * 1664525u + 1013904223u;
}

/* The 8-bit kernel's layout: counter(bin, lane) at word bin*32 + lane. */
__device__ __forceinline__ void lane_word(uint32_t *shl, uint32_t w)
{
    atomicAdd(shl + ((w & 0xffu) << 5), 1u);
    atomicAdd(shl + (((w >> 8) & 0xffu) << 5), 1u);
    atomicAdd(shl + (((w >> 16) & 0xffu) << 5), 1u);
    atomicAdd(shl + ((w >> 24) << 5), 1u);
}

/* The same with an added value the compiler cannot see (ATOMS.ADD rather
 * than ATOMS.POPC.INC). */
__device__ __forceinline__ void lane_word_add(uint32_t *shl, uint32_t w, uint32_t one)
{
    atomicAdd(shl + ((w & 0xffu) << 5), one);
    atomicAdd(shl + (((w >> 8) & 0xffu) << 5), one);
    atomicAdd(shl + (((w >> 16) & 0xffu) << 5), one);
    atomicAdd(shl + ((w >> 24) << 5), one);
}

/* A granule: V_PLAIN / V_VOTE the lane layout as the library counted before
 * 2026-11-24 (four integer instructions a byte), V_PRMT / V_PRMT_VOTE the
 * library's count_word / count_vec (hist_u8_block.cuh: one PRMT a byte); the
 * _VOTE variants add 16 at once where every lane's granule is one repeated
 * byte. */
enum Variant { V_PLAIN, V_VOTE, V_PRMT, V_PRMT_VOTE };

template <int V>
__device__ __forceinline__ void count_granule(uint32_t *shl, uint32_t col, uint4 v)
{
    if constexpr (V == V_PRMT_VOTE) {
        ih_u8::count_vec(col, v); /* what the library runs */
        return;
    }
    if constexpr (V == V_VOTE) {
        const uint32_t r = __byte_perm(v.x, 0, 0);
        const bool flat = ((v.x ^ r) | (v.y ^ r) | (v.z ^ r) | (v.w ^ r)) == 0;
        if (__all_sync(__activemask(), flat)) {
            atomicAdd(shl + ((r & 0xffu) << 5), 16u);
            return;
        }
    }
    if constexpr (V == V_PLAIN || V == V_VOTE) {
        lane_word(shl, v.x);
        lane_word(shl, v.y);
        lane_word(shl, v.z);
        lane_word(shl, v.w);
    } else {
        ih_u8::count_word(col, v.x);
        ih_u8::count_word(col, v.y);
        ih_u8::count_word(col, v.z);
        ih_u8::count_word(col, v.w);
    }
}

/* Per-thread counters without atomics: thread t's 16-bit counter of bin b in
 * half b&1 of word (b>>1)*blockDim + t (bank = lane, no conflicts), read,
 * added to and written back. */
__device__ __forceinline__ void private_word(uint32_t *sht, uint32_t w)
{
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t b = (w >> (8 * k)) & 0xffu;
        uint32_t *p = sht + (b >> 1) * 128;
        *p += 1u << ((b & 1) << 4);
    }
}

enum Test {
    T_ATOMS_LANE_REG,      /* lane layout, uniform bins from registers */
    T_ATOMS_ADD_REG,       /* the same with a runtime value */
    T_ATOMS_SHARED_CONST,  /* one copy of 256 bins, every lane the same bin */
    T_ATOMS_SHARED_REG,    /* one copy of 256 bins, uniform bins */
    T_PRMT_REG,            /* lane layout, one PRMT a byte, uniform bins */
    T_PRIVATE_REG,         /* per-thread counters, LDS + STS (128 threads) */
    T_ATOMS_U16_REG,       /* 65536 16-bit counters (128 KiB), uniform bins */
    T_LAST_REG = T_ATOMS_U16_REG,
    T_LDG_L2,              /* 16-byte loads from an L2-resident buffer */
    T_L2_PLAIN,            /* the same + a granule variant's counting */
    T_L2_PRMT,
    T_LDG_L2_PRIVATE,      /* the same + per-thread counters (128 threads) */
    T_LDG_DRAM,            /* 16-byte loads of 1 GiB */
    T_DRAM_PLAIN,          /* the same + each granule variant, uniform bytes */
    T_DRAM_VOTE,
    T_DRAM_PRMT,
    T_DRAM_PRMT_VOTE,
    T_DRAM_PLAIN_CONST,    /* the same on a constant 1 GiB */
    T_DRAM_VOTE_CONST,
    T_DRAM_PRMT_CONST,
    T_DRAM_PRMT_VOTE_CONST,
    T_COUNT
};

const char *test_name(int t)
{
    static const char *n[T_COUNT] = {
        "ATOMS +1, 8-bit lane layout, reg bins",
        "ATOMS +v, 8-bit lane layout, reg bins",
        "ATOMS +1, one 256-bin copy, all lanes one bin",
        "ATOMS +1, one 256-bin copy, reg bins",
        "RED +1, lane layout, PRMT a byte, reg bins",
        "LDS+STS per-thread 16-bit counters, reg bins",
        "ATOMS +1, 65536 16-bit counters, reg bins",
        "L2: LDG.128 only",
        "L2: + lane layout, 4 ALU a byte",
        "L2: + lane layout, PRMT a byte",
        "L2: + per-thread LDS+STS",
        "DRAM: LDG.128 only (read ceiling)",
        "DRAM uniform: 4 ALU a byte",
        "DRAM uniform: 4 ALU a byte + vote",
        "DRAM uniform: PRMT a byte",
        "DRAM uniform: PRMT a byte + vote",
        "DRAM constant: 4 ALU a byte",
        "DRAM constant: 4 ALU a byte + vote",
        "DRAM constant: PRMT a byte",
        "DRAM constant: PRMT a byte + vote",
    };
    return n[t];
}

__host__ __device__ constexpr bool is_private(int t)
{
    return t == T_PRIVATE_REG || t == T_LDG_L2_PRIVATE;
}

__host__ __device__ constexpr bool is_dram(int t)
{
    return t >= T_LDG_DRAM;
}

__host__ __device__ constexpr bool is_const(int t)
{
    return t >= T_DRAM_PLAIN_CONST;
}

__host__ __device__ constexpr int variant_of(int t)
{
    return t == T_DRAM_VOTE || t == T_DRAM_VOTE_CONST                ? V_VOTE
           : t == T_DRAM_PRMT || t == T_DRAM_PRMT_CONST || t == T_L2_PRMT ? V_PRMT
           : t == T_DRAM_PRMT_VOTE || t == T_DRAM_PRMT_VOTE_CONST       ? V_PRMT_VOTE
                                                                       : V_PLAIN;
}

struct Params {
    int test;
    uint32_t iters;            /* reg tests: 32-bit words per thread */
    const uint4 *src;          /* streaming tests */
    size_t src_vecs;           /* 16-byte vectors in src */
    uint32_t passes;           /* L2 tests: passes over src per block */
    uint32_t one;              /* 1, hidden from the compiler */
};

template <int TEST>
__global__ void __launch_bounds__(THREADS) bench_kernel(Params q, Probe p)
{
    extern __shared__ __align__(16) uint32_t sh[];
    unsigned long long t0 = 0;
    const uint32_t nthreads = blockDim.x;
    const uint32_t words = TEST == T_ATOMS_U16_REG ? 32768u
                           : is_private(TEST)      ? 128u * 128u
                                                   : 256u * LANES;
    for (uint32_t i = threadIdx.x; i < words; i += nthreads) {
        sh[i] = 0;
    }
    uint32_t *shl = sh + (threadIdx.x & 31);
    uint32_t *sht = sh + threadIdx.x;
    const uint32_t col = (uint32_t)__cvta_generic_to_shared(shl);
    uint32_t x = (blockIdx.x * nthreads + threadIdx.x) * 2654435761u + 12345u;
    uint32_t acc = 0;
    probe_begin(t0);
    if constexpr (TEST <= T_LAST_REG) {
        for (uint32_t i = 0; i < q.iters; i++) {
            x = lcg(x);
            if constexpr (TEST == T_ATOMS_LANE_REG) {
                lane_word(shl, x);
            } else if constexpr (TEST == T_ATOMS_ADD_REG) {
                lane_word_add(shl, x, q.one);
            } else if constexpr (TEST == T_ATOMS_SHARED_CONST) {
                const uint32_t b = (x & 0u) + 17u * q.one;
                atomicAdd(sh + b, 1u);
                atomicAdd(sh + b, 1u);
                atomicAdd(sh + b, 1u);
                atomicAdd(sh + b, 1u);
            } else if constexpr (TEST == T_ATOMS_SHARED_REG) {
                atomicAdd(sh + (x & 0xffu), 1u);
                atomicAdd(sh + ((x >> 8) & 0xffu), 1u);
                atomicAdd(sh + ((x >> 16) & 0xffu), 1u);
                atomicAdd(sh + (x >> 24), 1u);
            } else if constexpr (TEST == T_PRMT_REG) {
                ih_u8::count_word(col, x);
            } else if constexpr (TEST == T_PRIVATE_REG) {
                private_word(sht, x);
            } else {
                /* two 16-bit samples a word, each its own counter half */
                const uint32_t a = x & 0xffffu, b = x >> 16;
                atomicAdd(sh + (a >> 1), 1u << ((a & 1) << 4));
                atomicAdd(sh + (b >> 1), 1u << ((b & 1) << 4));
            }
        }
    } else {
        const bool l2 = !is_dram(TEST);
        const size_t stride = (size_t)gridDim.x * nthreads;
        const uint32_t passes = l2 ? q.passes : 1;
        unsigned long long vecs = 0;
        for (uint32_t pass = 0; pass < passes; pass++) {
            /* each block starts at another place in L2 each pass */
            const size_t start = l2 ? ((size_t)blockIdx.x + pass * 7u) % gridDim.x : blockIdx.x;
            size_t i = start * nthreads + threadIdx.x;
            for (; i + 3 * stride < q.src_vecs; i += 4 * stride) {
                uint4 v[4];
                vecs += 4;
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    v[k] = __ldcs(q.src + i + k * stride);
                }
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    if constexpr (TEST == T_LDG_L2 || TEST == T_LDG_DRAM) {
                        acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
                    } else if constexpr (TEST == T_LDG_L2_PRIVATE) {
                        private_word(sht, v[k].x);
                        private_word(sht, v[k].y);
                        private_word(sht, v[k].z);
                        private_word(sht, v[k].w);
                    } else {
                        count_granule<variant_of(TEST)>(shl, col, v[k]);
                    }
                }
            }
        }
        /* a warp's sum, spread over 32 counters (one address for every
         * thread took longer than the reads) */
#if __CUDA_ARCH__ >= 800
        const uint32_t warp_vecs = __reduce_add_sync(0xffffffffu, (uint32_t)vecs);
#else /* sm_75: no redux.sync */
        uint32_t warp_vecs = (uint32_t)vecs;
        for (int o = 16; o > 0; o >>= 1) {
            warp_vecs += __shfl_xor_sync(0xffffffffu, warp_vecs, o);
        }
#endif
        if ((threadIdx.x & 31) == 0) {
            atomicAdd(p.sink + 2 + ((blockIdx.x * 16 + threadIdx.x / 32) & 31),
                      (unsigned long long)warp_vecs);
        }
    }
    probe_end(p, t0, acc ^ x);
    if (threadIdx.x < 32 && sh[threadIdx.x * 7] == 0x9e3779b9u) {
        p.sink[1] = 1;
    }
}

struct Setup {
    void (*kernel)(Params, Probe);
    int threads;
    size_t shmem;
};

template <int T> Setup setup_of()
{
    const size_t shmem = T == T_ATOMS_U16_REG ? 32768 * 4 : is_private(T) ? 128 * 128 * 4 : 256 * LANES * 4;
    return Setup{bench_kernel<T>, is_private(T) ? 128 : THREADS, shmem};
}

template <int T> Setup setup_at(int t)
{
    if constexpr (T + 1 < T_COUNT) {
        if (t != T) {
            return setup_at<T + 1>(t);
        }
    }
    return setup_of<T>();
}

Setup setup(int t)
{
    return setup_at<0>(t);
}

/* Keeps every SM busy for about `ms` milliseconds, so that the clocks have
 * risen from idle before the first test. */
__global__ void warm(unsigned long long cycles, unsigned long long *sink)
{
    const unsigned long long t0 = clock64();
    uint32_t x = threadIdx.x;
    while (clock64() - t0 < cycles) {
        x = x * 1664525u + 1013904223u;
    }
    if (x == 0x9e3779b9u) {
        sink[0] = x;
    }
}

__global__ void fill(uint32_t *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 2654435761u;
        x ^= x >> 15;
        x *= 0x2c1b3c6du;
        x ^= x >> 12;
        p[i] = x;
    }
}

} // namespace

int main(int argc, char **argv)
{
    int runs = 7;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--runs N]\n", argv[0]);
            return 2;
        }
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device: %s, %d SMs\n", prop.name, sms);

    const size_t dram_bytes = (size_t)1 << 30, l2_bytes = (size_t)32 << 20;
    uint32_t *dram = nullptr, *dram_const = nullptr, *l2buf = nullptr;
    CK(cudaMalloc(&dram, dram_bytes));
    CK(cudaMalloc(&dram_const, dram_bytes));
    CK(cudaMalloc(&l2buf, l2_bytes));
    fill<<<1024, 256>>>(dram, dram_bytes / 4);
    fill<<<1024, 256>>>(l2buf, l2_bytes / 4);
    CK(cudaMemset(dram_const, 127, dram_bytes));
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    unsigned long long *span = nullptr, *sink = nullptr;
    const int max_blocks = sms * 16;
    CK(cudaMalloc(&span, max_blocks * sizeof *span));
    CK(cudaMalloc(&sink, 34 * sizeof *sink));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));

    /* about half a second of work first (at 1.5 GHz) */
    warm<<<sms * 4, 256>>>(750000000ull, sink);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("%-50s %9s %7s %10s %10s\n", "test", "ms", "MHz", "incr/clk", "B/clk");
    printf("%-50s %9s %7s %10s %10s\n", "", "", "", "per SM", "per SM");
    for (int t = 0; t < T_COUNT; t++) {
        const Setup s = setup(t);
        CK(cudaFuncSetAttribute(s.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)s.shmem));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s.kernel, s.threads, s.shmem));
        const int blocks = std::min(per_sm * sms, max_blocks);
        Params q{};
        q.test = t;
        q.one = 1;
        q.iters = 1u << 14;
        q.passes = 64;
        const bool dram_test = is_dram(t);
        q.src = reinterpret_cast<const uint4 *>(!dram_test ? l2buf : is_const(t) ? dram_const : dram);
        q.src_vecs = (dram_test ? dram_bytes : l2_bytes) / 16;
        std::vector<float> ms;
        std::vector<double> clk;
        unsigned long long vecs_read = 0;
        for (int r = -2; r < runs; r++) {
            CK(cudaMemset(sink + 2, 0, 32 * sizeof *sink));
            CK(cudaEventRecord(e0));
            s.kernel<<<blocks, s.threads, s.shmem>>>(q, Probe{span, sink});
            CK(cudaGetLastError());
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float m = 0;
            CK(cudaEventElapsedTime(&m, e0, e1));
            std::vector<unsigned long long> h(blocks);
            CK(cudaMemcpy(h.data(), span, blocks * sizeof(unsigned long long),
                          cudaMemcpyDeviceToHost));
            double longest = 0;
            for (unsigned long long v : h) {
                longest = std::max(longest, (double)v);
            }
            if (r >= 0) {
                ms.push_back(m);
                clk.push_back(longest);
            }
            unsigned long long part[32];
            CK(cudaMemcpy(part, sink + 2, sizeof part, cudaMemcpyDeviceToHost));
            vecs_read = 0;
            for (unsigned long long v : part) {
                vecs_read += v;
            }
        }
        std::vector<float> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        const float med = sorted[sorted.size() / 2];
        const size_t at = std::find(ms.begin(), ms.end(), med) - ms.begin();
        const double cycles = clk[at];
        const double mhz = cycles / (med * 1e3);
        /* increments and bytes per SM per clock */
        double incr = 0, bytes = 0;
        const double threads_total = (double)blocks * s.threads;
        if (t <= T_LAST_REG) {
            const double per_word = t == T_ATOMS_U16_REG ? 2 : 4;
            incr = threads_total * q.iters * per_word;
            bytes = t == T_ATOMS_U16_REG ? incr * 2 : incr;
        } else {
            bytes = (double)vecs_read * 16;
            incr = (t == T_LDG_L2 || t == T_LDG_DRAM) ? 0 : bytes;
        }
        printf("%-50s %9.3f %7.0f %10.2f %10.2f   (%d blocks x %d)\n", test_name(t), med, mhz,
               incr / (sms * cycles), bytes / (sms * cycles), blocks, s.threads);
        fflush(stdout);
    }
    return 0;
}
