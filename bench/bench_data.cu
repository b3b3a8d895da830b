/* Test images and CPU references; see bench_data.h. (Host code only.) */
#include "bench_data.h"

#include <math.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

const char *pattern_name(Pattern p)
{
    switch (p) {
    case Pattern::Uniform: return "uniform";
    case Pattern::Normal: return "normal";
    case Pattern::Constant: return "constant";
    case Pattern::Distinct8: return "8 x32";
    case Pattern::Distinct64: return "64 x4";
    case Pattern::Runs: return "runs64";
    case Pattern::Photo: return "photo";
    default: return "?";
    }
}

void parallel_for(size_t n, const std::function<void(size_t)> &f)
{
    const size_t hw = std::max(1u, std::thread::hardware_concurrency());
    const size_t nthreads = std::min(hw, n);
    if (nthreads <= 1) {
        for (size_t i = 0; i < n; i++) {
            f(i);
        }
        return;
    }
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (size_t t = 0; t < nthreads; t++) {
        pool.emplace_back([&] {
            for (size_t i; (i = next.fetch_add(1)) < n;) {
                f(i);
            }
        });
    }
    for (auto &th : pool) {
        th.join();
    }
}

namespace {

/* The i-th output of SplitMix64 seeded with `seed`: a counter-based generator,
 * so any byte can be produced without producing the ones before it. */
inline uint64_t random_at(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* One fixed seed per pattern, so that the patterns are independent. */
inline uint64_t seed_of(Pattern p)
{
    return UINT64_C(0x1d8e4e27c47d124f) * (uint64_t)((int)p + 1);
}

/* Inverse CDF of the rounded, clamped N(128, 20^2), sampled at 65536 evenly
 * spaced probabilities: a 16-bit uniform number indexes it. */
struct NormalTable {
    uint8_t v[65536];
    NormalTable()
    {
        double cdf[256];
        for (int b = 0; b < 256; b++) {
            /* P(X < b + 0.5); the last bin takes the upper tail (clamping). */
            cdf[b] = b == 255 ? 1.0 : 0.5 * erfc(-((b + 0.5 - 128.0) / 20.0) / sqrt(2.0));
        }
        int b = 0;
        for (int k = 0; k < 65536; k++) {
            const double u = (k + 0.5) / 65536.0;
            while (cdf[b] < u) {
                b++;
            }
            v[k] = (uint8_t)b;
        }
    }
};

constexpr size_t FILL_CHUNK = (size_t)1 << 20; /* a multiple of every group size used */

/* Bytes [b, e) of a flat pattern (b is a multiple of FILL_CHUNK). */
void fill_flat_range(Pattern p, uint8_t *dst, size_t b, size_t e)
{
    static const NormalTable normal;
    const uint64_t seed = seed_of(p);
    switch (p) {
    case Pattern::Uniform:
        for (size_t i = b; i < e; i += 8) {
            const uint64_t r = random_at(seed, i / 8);
            memcpy(dst + i, &r, std::min<size_t>(8, e - i)); /* little-endian byte order */
        }
        break;
    case Pattern::Normal:
        for (size_t i = b; i < e; i += 4) {
            const uint64_t r = random_at(seed, i / 4);
            for (size_t j = 0; j < 4 && i + j < e; j++) {
                dst[i + j] = normal.v[(r >> (16 * j)) & 0xffff];
            }
        }
        break;
    case Pattern::Constant:
        memset(dst + b, 127, e - b);
        break;
    case Pattern::Distinct8:
    case Pattern::Distinct64: {
        const unsigned mask = p == Pattern::Distinct8 ? 7 : 63;
        const unsigned shift = p == Pattern::Distinct8 ? 5 : 2;
        for (size_t i = b; i < e; i += 8) {
            const uint64_t r = random_at(seed, i / 8);
            for (size_t j = 0; j < 8 && i + j < e; j++) {
                dst[i + j] = (uint8_t)(((r >> (8 * j)) & mask) << shift);
            }
        }
        break;
    }
    case Pattern::Runs:
        for (size_t i = b; i < e; i += 64) {
            memset(dst + i, (int)(random_at(seed, i / 64) & 0xff), std::min<size_t>(64, e - i));
        }
        break;
    default:
        break;
    }
}

} // namespace

void fill_pattern(Pattern p, uint8_t *dst, size_t width, size_t height, const Photo &photo)
{
    if (p == Pattern::Photo) {
        constexpr size_t ROWS = 64;
        parallel_for((height + ROWS - 1) / ROWS, [&](size_t t) {
            for (size_t y = t * ROWS; y < std::min(height, (t + 1) * ROWS); y++) {
                const uint8_t *src = photo.pixels + (y % photo.height) * photo.pitch;
                uint8_t *row = dst + y * width;
                for (size_t x = 0; x < width; x += photo.width) {
                    memcpy(row + x, src, std::min<size_t>(photo.width, width - x));
                }
            }
        });
        return;
    }
    const size_t n = width * height;
    parallel_for((n + FILL_CHUNK - 1) / FILL_CHUNK, [&](size_t c) {
        fill_flat_range(p, dst, c * FILL_CHUNK, std::min(n, (c + 1) * FILL_CHUNK));
    });
}

namespace {

/* Add the counts of n <= 2^32-1 bytes to hist. Four sub-histograms, so that a
 * run of one value does not serialise on one counter's store-to-load
 * forwarding. */
void add_counts(const uint8_t *p, size_t n, uint64_t hist[256])
{
    static thread_local uint32_t h[4][256];
    memset(h, 0, sizeof h);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h[0][p[i]]++;
        h[1][p[i + 1]]++;
        h[2][p[i + 2]]++;
        h[3][p[i + 3]]++;
    }
    for (; i < n; i++) {
        h[0][p[i]]++;
    }
    for (int b = 0; b < 256; b++) {
        hist[b] += (uint64_t)h[0][b] + h[1][b] + h[2][b] + h[3][b];
    }
}

} // namespace

void cpu_histogram(const uint8_t *data, size_t n, uint64_t hist[256])
{
    constexpr size_t CHUNK = (size_t)16 << 20;
    std::mutex mu;
    memset(hist, 0, 256 * sizeof hist[0]);
    parallel_for((n + CHUNK - 1) / CHUNK, [&](size_t c) {
        uint64_t local[256] = {};
        add_counts(data + c * CHUNK, std::min(CHUNK, n - c * CHUNK), local);
        std::lock_guard<std::mutex> lock(mu);
        for (int b = 0; b < 256; b++) {
            hist[b] += local[b];
        }
    });
}

void cpu_histogram_1t(const uint8_t *data, size_t n, uint64_t hist[256])
{
    constexpr size_t CHUNK = (size_t)1 << 31;
    memset(hist, 0, 256 * sizeof hist[0]);
    for (size_t off = 0; off < n; off += CHUNK) {
        add_counts(data + off, std::min(CHUNK, n - off), hist);
    }
}

bool compare_hist(const uint64_t *ref, const void *got, int count_bytes, size_t bins,
                  std::string *why)
{
    size_t bad = 0, first = 0;
    uint64_t first_got = 0;
    for (size_t b = 0; b < bins; b++) {
        const uint64_t g = count_bytes == 4 ? (uint64_t)static_cast<const uint32_t *>(got)[b]
                                            : static_cast<const uint64_t *>(got)[b];
        if (g != ref[b]) {
            if (bad == 0) {
                first = b;
                first_got = g;
            }
            bad++;
        }
    }
    if (bad != 0 && why != nullptr) {
        char buf[160];
        snprintf(buf, sizeof buf, "%zu of %zu bins differ; first: hist %zu bin %zu = %llu, want %llu",
                 bad, bins, first / 256, first % 256, (unsigned long long)first_got,
                 (unsigned long long)ref[first]);
        *why = buf;
    }
    return bad == 0;
}

bool compare_lut_applied(const uint8_t *src, const uint8_t *dst, size_t n, const uint8_t lut[256],
                         std::string *why)
{
    constexpr size_t CHUNK = (size_t)16 << 20;
    std::atomic<size_t> bad{0};
    std::atomic<size_t> first{SIZE_MAX};
    parallel_for((n + CHUNK - 1) / CHUNK, [&](size_t c) {
        const size_t b = c * CHUNK, e = std::min(n, b + CHUNK);
        size_t local_bad = 0, local_first = SIZE_MAX;
        for (size_t i = b; i < e; i++) {
            if (dst[i] != lut[src[i]]) {
                local_first = std::min(local_first, i);
                local_bad++;
            }
        }
        bad += local_bad;
        size_t f = first.load();
        while (local_first < f && !first.compare_exchange_weak(f, local_first)) {
        }
    });
    if (bad != 0 && why != nullptr) {
        const size_t f = first.load();
        char buf[160];
        snprintf(buf, sizeof buf, "%zu of %zu bytes differ; first at %zu: %u, want lut[%u] = %u",
                 bad.load(), n, f, dst[f], src[f], lut[src[f]]);
        *why = buf;
    }
    return bad == 0;
}
