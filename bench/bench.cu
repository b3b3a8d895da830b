/*
 * imghist_bench: imghist's device API against the memory-bandwidth ceiling,
 * the seed kernels, CUB and NPP, on one GPU, in one run.
 *
 *   imghist_bench [--quick] [--runs N] [--only SECTION[,SECTION...]] [--photo PATH] [--no-npp]
 *
 * Sections: ceiling (always run: every percentage refers to it), contig,
 * pitched, batch, latency, equalize. See bench/README.md.
 *
 * Every kernel is first run once on a poisoned output and checked bit for bit
 * against a CPU reference; a mismatch prints FAIL and makes the exit status 1,
 * and the benchmark goes on. Times are the median of CUDA-event timings of
 * single calls, after warm-up calls.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "bench_data.h"
#include "bench_check.h"
#include "bench_kernels.cuh"
#include "bench_npp.h"
#include "imghist.h"
#include "imghist_experimental.h"

/* Any failing CUDA call ends the program: the figures after it would mean nothing. */

namespace {

constexpr size_t GiB = (size_t)1 << 30;
constexpr size_t BATCH_COUNT = 2000;
constexpr uint32_t BATCH_W = 640, BATCH_H = 480;
constexpr uint32_t PITCHED_W = 30000, PITCHED_H = 32768;
constexpr size_t PITCHED_PITCH = 32768;
constexpr uint32_t MP12_W = 4000, MP12_H = 3000;
constexpr uint8_t PAD_BYTE = 0xA5; /* fills pitch padding: counting it shows up as a mismatch */

const char *const SECTIONS[] = {"contig", "pitched", "batch", "latency", "equalize"};

struct Options {
    int runs = 20;
    int warmup = 3;
    int latency_runs = 200;
    bool quick = false;
    bool no_npp = false;
    std::set<std::string> only; /* empty: all sections */
    std::string photo_path = "samples/astronaut.png";
    std::string command; /* the command line, for the log */
};

/* How one kernel is timed. */
struct TimeSpec {
    int warmup;
    int runs;
    bool flush_l2; /* evict the input from L2 before every timed call */
};

/* One implementation under test on the current data. */
struct Impl {
    std::string name;
    /* Enqueue one call on the bench stream; false (with *err) on an API error. */
    std::function<bool(std::string *err)> run;
    /* Correctness: poison the output for pass `pass`, run, then verify.
     * Without verify (the bandwidth kernels) nothing is checked. */
    std::function<void(int pass)> poison;
    std::function<bool(std::string *why)> verify;
    int check_passes = 1;
};

struct Result {
    bool ran = false;     /* the call worked and was timed */
    bool checked = false; /* its output was compared with the CPU's */
    bool correct = false;
    double ms = 0;        /* median */
    int runs = 0;
    std::string note;     /* why it failed, or a remark */
};

/* One summary target of the issue. */
struct Target {
    Target(const char *what_, bool higher_is_better_, double goal_, const char *unit_)
        : what(what_), higher_is_better(higher_is_better_), goal(goal_), unit(unit_)
    {
    }
    const char *what;
    bool higher_is_better;
    double goal;
    const char *unit;
    bool measured = false;
    bool broken = false; /* imghist failed or was wrong on some pattern */
    double worst = 0;
    std::string worst_pattern;
};

enum { T_CONTIG, T_PITCHED, T_BATCH, T_LATENCY, T_EQUALIZE, T_COUNT };

struct Bench {
    Options opt;
    cudaStream_t stream = nullptr;
    cudaEvent_t ev0 = nullptr, ev1 = nullptr;
    cudaDeviceProp prop{};
    int rw_grid = 0;
    /* device buffers */
    uint8_t *d_a = nullptr, *d_b = nullptr; /* 1 GiB each: input, output */
    uint8_t *d_flush = nullptr;
    size_t flush_bytes = 0;
    unsigned int *d_sink = nullptr;
    /* held-stream timing: host-mapped release flag and timeout report */
    volatile int *h_hold = nullptr; /* [0] release, [1] timed out */
    int *d_hold = nullptr;
    unsigned int *d_h32 = nullptr;           /* BATCH_COUNT * 256 32-bit counts */
    unsigned long long *d_h64 = nullptr;     /* BATCH_COUNT * 256 64-bit counts */
    void *d_cub_temp = nullptr;
    size_t cub_temp_bytes = 0;
    uint8_t *d_npp_buf = nullptr;
    size_t npp_buf_bytes = 0;
    /* pinned host buffers, 1 GiB each */
    uint8_t *h_a = nullptr, *h_b = nullptr;
    imghist_ctx *ctx = nullptr;
    imghist_image *photo_img = nullptr;
    Photo photo;
    bool npp = false;
    const char *npp_note = "";
    /* ceilings */
    double read_ms = 0, copy_ms = 0, ceiling_gbs = 0;
    /* bookkeeping */
    int checks = 0, failures = 0;
    std::string imghist_note; /* imghist_last_note() of the last call, if not "" */
    Target targets[T_COUNT] = {
        {"1 GiB contiguous, every pattern", true, 90.0, "% of read ceiling"},
        {"pitched 30000x32768 (pitch 32768)", true, 85.0, "% of read ceiling"},
        {"batch 2000 x 640x480, one call", true, 80.0, "% of read ceiling"},
        {"12 MP latency (median per call)", false, 8.0, "us"},
        {"equalize 1 GiB vs t_read+t_copy", false, 1.08, "x reference"},
    };
};

Bench g;

/* ---------------------------------------------------------------- helpers */

bool section_enabled(const char *name)
{
    return g.opt.only.empty() || g.opt.only.count(name) != 0;
}

std::vector<Pattern> all_patterns()
{
    std::vector<Pattern> v;
    for (int p = 0; p < (int)Pattern::Count; p++) {
        if ((Pattern)p != Pattern::Photo || g.photo.pixels != nullptr) {
            v.push_back((Pattern)p);
        }
    }
    return v;
}

void ensure_cub_temp(size_t bytes)
{
    if (bytes > g.cub_temp_bytes) {
        CUDA_CHECK(cudaFree(g.d_cub_temp));
        CUDA_CHECK(cudaMalloc(&g.d_cub_temp, bytes));
        g.cub_temp_bytes = bytes;
    }
}

/* NPP scratch for a width x height ROI; false (NPP row skipped) if NPP refuses. */
bool ensure_npp_buffer(int width, int height, std::string *why)
{
    size_t bytes = 0;
    const int st = bench_npp_buffer_size(width, height, &bytes, g.stream);
    if (st < 0) {
        *why = "nppiHistogramEvenGetBufferSize failed with status " + std::to_string(st);
        return false;
    }
    if (bytes > g.npp_buf_bytes) {
        CUDA_CHECK(cudaFree(g.d_npp_buf));
        CUDA_CHECK(cudaMalloc((void **)&g.d_npp_buf, bytes));
        g.npp_buf_bytes = bytes;
    }
    return true;
}

/* Read a buffer twice the size of L2, leaving it full of clean lines that do
 * not belong to the next kernel's input (a memset would leave dirty lines,
 * written back inside the next timed call). */
void flush_l2()
{
    CUDA_CHECK(launch_read(READ_LDG_X4, g.d_flush, g.flush_bytes, g.d_sink, g.rw_grid, g.stream));
}

float elapsed_ms()
{
    float ms = 0;
    CUDA_CHECK(cudaEventSynchronize(g.ev1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, g.ev0, g.ev1));
    return ms;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Check once, then time. A kernel whose checked call took long (the global
 * atomics) gets fewer runs, so that a full run stays within minutes. */
Result measure(const Impl &impl, const TimeSpec &ts)
{
    constexpr double BUDGET_MS = 3000; /* per kernel and pattern, roughly */
    Result r;
    std::string err;
    double first_ms = 0;
    bool call_failed = false;
    r.correct = true;
    r.checked = static_cast<bool>(impl.verify);
    g.imghist_note.clear();
    const int passes = r.checked ? impl.check_passes : 1;
    for (int pass = 0; pass < passes; pass++) {
        if (r.checked) {
            impl.poison(pass);
        }
        CUDA_CHECK(cudaEventRecord(g.ev0, g.stream));
        const bool ok = impl.run(&err);
        CUDA_CHECK(cudaEventRecord(g.ev1, g.stream));
        first_ms = elapsed_ms();
        CUDA_CHECK(cudaGetLastError());
        if (!ok) {
            r.correct = false;
            r.note = "ERROR: " + err;
            call_failed = true;
            break;
        }
        std::string why;
        if (r.checked && !impl.verify(&why)) {
            r.correct = false;
            r.note = why;
            break;
        }
    }
    g.checks += r.checked ? 1 : 0;
    if (!g.imghist_note.empty()) {
        /* e.g. the library fell back to banding: the figure is not the normal path's */
        r.note = "imghist note: " + g.imghist_note + (r.note.empty() ? "" : "; " + r.note);
    }
    if (!r.correct) {
        g.failures++;
        if (call_failed) {
            return r; /* nothing to time */
        }
    }
    int warmup = ts.warmup, runs = ts.runs;
    if (first_ms * (warmup + runs) > BUDGET_MS) {
        warmup = first_ms > 100 ? 0 : 1;
        runs = std::max(3, std::min(runs, (int)(BUDGET_MS / first_ms)));
    }
    for (int i = 0; i < warmup; i++) {
        if (!impl.run(&err)) {
            r.note = "ERROR: " + err;
            g.failures++;
            return r;
        }
    }
    std::vector<double> t;
    for (int i = 0; i < runs; i++) {
        if (ts.flush_l2) {
            flush_l2();
        }
        CUDA_CHECK(cudaEventRecord(g.ev0, g.stream));
        if (!impl.run(&err)) {
            r.note = "ERROR: " + err;
            g.failures++;
            return r;
        }
        CUDA_CHECK(cudaEventRecord(g.ev1, g.stream));
        t.push_back(elapsed_ms());
    }
    CUDA_CHECK(cudaGetLastError());
    r.ran = true;
    r.ms = median(t);
    r.runs = runs;
    if (runs != ts.runs) {
        r.note += (r.note.empty() ? "" : "; ") + std::to_string(runs) + " runs (slow)";
    }
    return r;
}

/* Mean time per call of n calls enqueued back to back (launch overheads overlap). */
double back_to_back_ms(const Impl &impl, int n)
{
    std::string err;
    CUDA_CHECK(cudaEventRecord(g.ev0, g.stream));
    for (int i = 0; i < n; i++) {
        if (!impl.run(&err)) {
            return -1;
        }
    }
    CUDA_CHECK(cudaEventRecord(g.ev1, g.stream));
    return elapsed_ms() / n;
}

/*
 * GPU time of one call, without the host's launch overhead: the stream is held
 * by a waiting kernel while the flush (if any), the start event, the call and
 * the stop event are enqueued, then released, so the call's launches reach
 * the GPU back to back (NVBench's blocking-kernel method). Median of `runs`;
 * -1 when a call cannot be timed this way (it waited for the GPU itself).
 */
double held_ms(const Impl &impl, int runs, bool flush)
{
    std::vector<double> t;
    std::string err;
    for (int i = 0; i < runs; i++) {
        g.h_hold[0] = 0;
        g.h_hold[1] = 0;
        __sync_synchronize();
        CUDA_CHECK(launch_hold(g.d_hold, g.d_hold + 1, 200 * 1000 * 1000LL, g.stream));
        if (flush) {
            flush_l2();
        }
        CUDA_CHECK(cudaEventRecord(g.ev0, g.stream));
        const bool ok = impl.run(&err);
        CUDA_CHECK(cudaEventRecord(g.ev1, g.stream));
        __sync_synchronize();
        g.h_hold[0] = 1;
        const double ms = elapsed_ms();
        if (!ok || g.h_hold[1] != 0) {
            CUDA_CHECK(cudaStreamSynchronize(g.stream));
            return -1;
        }
        t.push_back(ms);
    }
    return median(t);
}

void table_row(const std::string &kernel, const char *pattern, const Result &r, double bytes,
               double ratio);

/* A row for a held_ms figure. */
void held_row(const std::string &name, const char *pattern, double ms, double bytes, double ratio)
{
    Result r;
    r.ran = ms > 0;
    r.note = ms > 0 ? "" : "cannot be held (the call waits for the GPU)";
    r.ms = ms;
    table_row(name + " (held)", pattern, r, bytes, ratio);
}

/* A histogram implementation writing `bins` counts of `count_bytes` each to
 * `out`, checked against `ref` (held by the caller until measured). */
Impl hist_impl(std::string name, std::function<bool(std::string *)> run, void *out,
               int count_bytes, size_t bins, const uint64_t *ref)
{
    Impl im;
    im.name = std::move(name);
    im.run = std::move(run);
    const size_t bytes = bins * (size_t)count_bytes;
    im.poison = [out, bytes](int) { CUDA_CHECK(cudaMemsetAsync(out, 0xFF, bytes, g.stream)); };
    im.verify = [out, bytes, count_bytes, bins, ref](std::string *why) {
        std::vector<uint8_t> host(bytes);
        CUDA_CHECK(cudaMemcpy(host.data(), out, bytes, cudaMemcpyDeviceToHost));
        return compare_hist(ref, host.data(), count_bytes, bins, why);
    };
    return im;
}

/* Run-lambda helpers: turn each library's error convention into bool + message. */
bool cuda_ok(cudaError_t e, std::string *err)
{
    if (e != cudaSuccess) {
        *err = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
        return false;
    }
    return true;
}

bool imghist_ok(imghist_status st, std::string *err)
{
    if (st != IMGHIST_OK) {
        *err = std::string(imghist_strerror(st)) + ": " + imghist_last_error(g.ctx);
        return false;
    }
    const char *note = imghist_last_note(g.ctx);
    if (note != nullptr && *note != '\0') {
        g.imghist_note = note;
    }
    return true;
}

bool npp_ok(int st, std::string *err)
{
    if (st < 0) {
        *err = "NPP status " + std::to_string(st);
        return false;
    }
    return true;
}

/* The seed kernels accumulate, so each call zeroes the counts first (timed too). */
Impl seed_impl(const char *name, const uint8_t *data, size_t n, const uint64_t *ref,
               cudaError_t (*launch)(const uint8_t *, size_t, unsigned int *, int, cudaStream_t))
{
    return hist_impl(
        name,
        [=](std::string *err) {
            return cuda_ok(cudaMemsetAsync(g.d_h32, 0, 256 * sizeof(unsigned int), g.stream), err) &&
                   cuda_ok(launch(data, n, g.d_h32, g.prop.multiProcessorCount, g.stream), err);
        },
        g.d_h32, 4, 256, ref);
}

/* The implementations every single-image section compares. */
Impl cub_1d_impl(const uint8_t *d, size_t n, const uint64_t *ref)
{
    return hist_impl(
        "CUB HistogramEven",
        [=](std::string *err) {
            size_t bytes = g.cub_temp_bytes;
            return cuda_ok(cub_hist_1d(g.d_cub_temp, &bytes, d, (int)n, (int *)g.d_h32, g.stream),
                           err);
        },
        g.d_h32, 4, 256, ref);
}

Impl npp_impl(const uint8_t *d, int pitch, int width, int height, const uint64_t *ref)
{
    return hist_impl(
        "NPP HistogramEven",
        [=](std::string *err) {
            return npp_ok(bench_npp_histogram(d, pitch, width, height, (int *)g.d_h32,
                                              g.d_npp_buf, g.stream),
                          err);
        },
        g.d_h32, 4, 256, ref);
}

/* A U8 device view of an image at d (imghist only reads it). */
imghist_view device_view(const uint8_t *d, size_t pitch, uint32_t width, uint32_t height)
{
    imghist_view v{};
    v.data = const_cast<uint8_t *>(d);
    v.dtype = IMGHIST_U8;
    v.mem = IMGHIST_MEM_DEVICE;
    v.width = width;
    v.height = height;
    v.pitch = pitch;
    return v;
}

/* g.d_h64 as device counts for `images` histograms. The context's stream is
 * g.stream (set once in setup()), so the calls enqueue on the bench stream
 * exactly as 0.1's per-call stream argument did. */
imghist_counts device_counts(size_t images)
{
    imghist_counts c{};
    c.data = (uint64_t *)g.d_h64;
    c.len = 256 * images;
    c.mem = IMGHIST_MEM_DEVICE;
    return c;
}

/* The rows keep 0.1's labels (here, batch, equalize) so that logs stay comparable
 * across versions. */
Impl imghist_impl(const imghist_view &img, const uint64_t *ref)
{
    const imghist_counts out = device_counts(1);
    return hist_impl(
        "imghist_cuda_histogram",
        [=](std::string *err) {
            return imghist_ok(imghist_histogram(g.ctx, &img, nullptr, &out), err);
        },
        g.d_h64, 8, 256, ref);
}

cudaError_t seed_global_adapter(const uint8_t *d, size_t n, unsigned int *h, int, cudaStream_t s)
{
    return launch_seed_global(d, n, h, s);
}

/* ---------------------------------------------------------------- output */

std::string fmt_time(double ms)
{
    char buf[32];
    const double us = ms * 1000;
    if (us < 10) {
        snprintf(buf, sizeof buf, "%.2f us", us);
    } else if (us < 1000) {
        snprintf(buf, sizeof buf, "%.1f us", us);
    } else if (ms < 100) {
        snprintf(buf, sizeof buf, "%.3f ms", ms);
    } else {
        snprintf(buf, sizeof buf, "%.1f ms", ms);
    }
    return buf;
}

void table_header(const std::string &title, const char *ratio_label)
{
    printf("\n%s\n", title.c_str());
    printf("%-36s %-9s %10s %9s %7s %7s  %s\n", "kernel", "pattern", "time", "GB/s", "%ceil",
           ratio_label, "check");
    printf("%s\n", std::string(106, '-').c_str());
}

/* ratio: reference time / this time (> 1: faster than the reference); <= 0: "-". */
void table_row(const std::string &kernel, const char *pattern, const Result &r, double bytes,
               double ratio)
{
    std::string check = !r.checked ? "-" : r.correct ? "ok" : "FAIL";
    if (!r.note.empty()) {
        check += "  " + r.note;
    }
    if (!r.ran) {
        printf("%-36s %-9s %10s %9s %7s %7s  %s\n", kernel.c_str(), pattern, "-", "-", "-", "-",
               check.c_str());
        fflush(stdout);
        return;
    }
    const double gbs = bytes / (r.ms * 1e-3) / 1e9;
    char ratio_s[16] = "-";
    if (ratio > 0) {
        snprintf(ratio_s, sizeof ratio_s, "%.2fx", ratio);
    }
    printf("%-36s %-9s %10s %9.1f %6.1f%% %7s  %s\n", kernel.c_str(), pattern,
           fmt_time(r.ms).c_str(), gbs, 100.0 * gbs / g.ceiling_gbs, ratio_s, check.c_str());
    fflush(stdout);
}

/* One row per implementation; the ratio is to the first one (CUB). */
void print_rows(const std::vector<Impl> &impls, const std::vector<Result> &res, Pattern p,
                double bytes)
{
    const double cub_ms = res[0].ran ? res[0].ms : 0;
    for (size_t i = 0; i < impls.size(); i++) {
        table_row(impls[i].name, pattern_name(p), res[i], bytes,
                  cub_ms > 0 && res[i].ran ? cub_ms / res[i].ms : -1);
    }
}

/* Measure every implementation on the current data, then print the rows. */
std::vector<Result> measure_rows(const std::vector<Impl> &impls, const TimeSpec &ts, Pattern p,
                                 double bytes)
{
    std::vector<Result> res;
    for (const Impl &im : impls) {
        res.push_back(measure(im, ts));
    }
    print_rows(impls, res, p, bytes);
    return res;
}

/* Record imghist's figure for a target: value is a percentage, µs or ratio. */
void note_target(int id, const Result &r, double value, Pattern p)
{
    Target &t = g.targets[id];
    if (!r.ran || !r.correct) {
        t.broken = true;
    }
    if (!r.ran) {
        return;
    }
    const bool worse = !t.measured || (t.higher_is_better ? value < t.worst : value > t.worst);
    if (worse) {
        t.worst = value;
        t.worst_pattern = pattern_name(p);
    }
    t.measured = true;
}

double pct_of_ceiling(const Result &r, double bytes)
{
    return 100.0 * (bytes / (r.ms * 1e-3) / 1e9) / g.ceiling_gbs;
}

/* Upload `bytes` packed bytes of h_a to d_a. */
void upload_packed(size_t bytes)
{
    CUDA_CHECK(cudaMemcpyAsync(g.d_a, g.h_a, bytes, cudaMemcpyHostToDevice, g.stream));
    CUDA_CHECK(cudaStreamSynchronize(g.stream));
}

/* ---------------------------------------------------------------- sections */

void section_ceiling()
{
    const TimeSpec ts{g.opt.warmup, g.opt.runs, true};
    table_header("== Bandwidth ceilings, 1 GiB (every % below refers to the fastest read) ==",
                 "-");
    CUDA_CHECK(cudaMemsetAsync(g.d_a, 0x3C, GiB, g.stream));
    CUDA_CHECK(cudaMemsetAsync(g.d_b, 0, GiB, g.stream));
    CUDA_CHECK(cudaStreamSynchronize(g.stream));

    std::vector<std::pair<std::string, Result>> reads;
    double best = 1e30;
    for (int v = 0; v < READ_VARIANTS; v++) {
        Impl im;
        im.name = read_variant_name((read_variant)v);
        im.run = [v](std::string *err) {
            return cuda_ok(launch_read((read_variant)v, g.d_a, GiB, g.d_sink, g.rw_grid, g.stream),
                           err);
        };
        Result r = measure(im, ts);
        reads.emplace_back(im.name, r);
        best = std::min(best, r.ms);
    }
    g.read_ms = best;
    g.ceiling_gbs = (double)GiB / (best * 1e-3) / 1e9;

    Impl copy;
    copy.name = "copy kernel 16B x4";
    copy.run = [](std::string *err) {
        return cuda_ok(launch_copy(g.d_b, g.d_a, GiB, g.rw_grid, g.stream), err);
    };
    Result rc = measure(copy, ts);
    Impl memcpy_d2d;
    memcpy_d2d.name = "cudaMemcpy D2D";
    memcpy_d2d.run = [](std::string *err) {
        return cuda_ok(cudaMemcpyAsync(g.d_b, g.d_a, GiB, cudaMemcpyDeviceToDevice, g.stream), err);
    };
    Result rm = measure(memcpy_d2d, ts);
    g.copy_ms = std::min(rc.ms, rm.ms);

    for (auto &rr : reads) {
        table_row(rr.first, "-", rr.second, (double)GiB, -1);
    }
    char note[96];
    snprintf(note, sizeof note, "read+write %.1f GB/s", 2.0 * GiB / (rc.ms * 1e-3) / 1e9);
    rc.note = note;
    table_row(copy.name, "-", rc, (double)GiB, -1);
    snprintf(note, sizeof note, "read+write %.1f GB/s", 2.0 * GiB / (rm.ms * 1e-3) / 1e9);
    rm.note = note;
    table_row(memcpy_d2d.name, "-", rm, (double)GiB, -1);
    printf("read ceiling: %.1f GB/s (1 GiB in %s); t_copy (faster of the copy kernel and "
           "cudaMemcpy): %s;\nequalization reference t_read + t_copy = %s\n",
           g.ceiling_gbs, fmt_time(g.read_ms).c_str(), fmt_time(g.copy_ms).c_str(),
           fmt_time(g.read_ms + g.copy_ms).c_str());
}

/* Every kernel on n contiguous bytes (a square-ish image for the 2D APIs). */
void section_contig(size_t n)
{
    const uint32_t width = n >= GiB ? 32768 : 1024;
    const uint32_t height = (uint32_t)(n / width);
    const bool resident = n < (size_t)g.prop.l2CacheSize;
    const TimeSpec ts{g.opt.warmup, g.opt.runs, !resident};
    char title[200];
    snprintf(title, sizeof title,
             "== Contiguous %zu bytes (%ux%u for NPP and imghist)%s ==", n, width, height,
             resident ? " -- fits in L2: cache-resident, for reference only" : "");
    table_header(title, "vs CUB");

    size_t tb = 0;
    CUDA_CHECK(cub_hist_1d(nullptr, &tb, g.d_a, (int)n, (int *)g.d_h32, g.stream));
    ensure_cub_temp(tb);
    std::string npp_why;
    const bool npp = g.npp && ensure_npp_buffer((int)width, (int)height, &npp_why);

    uint64_t ref[256];
    for (Pattern p : all_patterns()) {
        fill_pattern(p, g.h_a, width, height, g.photo);
        upload_packed(n);
        cpu_histogram(g.h_a, n, ref);
        const uint8_t *d = g.d_a;
        const imghist_view img = device_view(d, width, width, height);

        std::vector<Impl> impls;
        impls.push_back(cub_1d_impl(d, n, ref));
        impls.push_back(seed_impl("seed: global atomics", d, n, ref, seed_global_adapter));
        impls.push_back(seed_impl("seed: shared atomics", d, n, ref, launch_seed_shared));
        impls.push_back(seed_impl("seed: shared, 16B loads", d, n, ref, launch_seed_shared_vec));
        if (npp) {
            impls.push_back(npp_impl(d, (int)width, (int)width, (int)height, ref));
        }
        impls.push_back(imghist_impl(img, ref));

        const std::vector<Result> res = measure_rows(impls, ts, p, (double)n);
        if (n >= GiB) {
            note_target(T_CONTIG, res.back(), pct_of_ceiling(res.back(), (double)n), p);
        }
    }
    if (g.npp && !npp) {
        printf("NPP skipped: %s\n", npp_why.c_str());
    }
}

void section_pitched()
{
    const size_t valid = (size_t)PITCHED_W * PITCHED_H;
    const TimeSpec ts{g.opt.warmup, g.opt.runs, true};
    char title[200];
    snprintf(title, sizeof title,
             "== Pitched image %ux%u, %zu-byte rows (GB/s counts the %zu valid bytes) ==",
             PITCHED_W, PITCHED_H, PITCHED_PITCH, valid);
    table_header(title, "vs CUB");

    /* The padding is never uploaded over: it keeps PAD_BYTE for every pattern. */
    CUDA_CHECK(cudaMemsetAsync(g.d_a, PAD_BYTE, PITCHED_PITCH * PITCHED_H, g.stream));
    size_t tb = 0;
    CUDA_CHECK(cub_hist_2d(nullptr, &tb, g.d_a, (int)PITCHED_W, (int)PITCHED_H, PITCHED_PITCH,
                           (int *)g.d_h32, g.stream));
    ensure_cub_temp(tb);
    std::string npp_why;
    const bool npp = g.npp && ensure_npp_buffer((int)PITCHED_W, (int)PITCHED_H, &npp_why);

    uint64_t ref[256];
    const uint8_t *d = g.d_a;
    const imghist_view img = device_view(d, PITCHED_PITCH, PITCHED_W, PITCHED_H);
    for (Pattern p : all_patterns()) {
        fill_pattern(p, g.h_a, PITCHED_W, PITCHED_H, g.photo);
        CUDA_CHECK(cudaMemcpy2DAsync(g.d_a, PITCHED_PITCH, g.h_a, PITCHED_W, PITCHED_W, PITCHED_H,
                                     cudaMemcpyHostToDevice, g.stream));
        CUDA_CHECK(cudaStreamSynchronize(g.stream));
        cpu_histogram(g.h_a, valid, ref);

        std::vector<Impl> impls;
        impls.push_back(hist_impl(
            "CUB HistogramEven 2D",
            [=](std::string *err) {
                size_t bytes = g.cub_temp_bytes;
                return cuda_ok(cub_hist_2d(g.d_cub_temp, &bytes, d, (int)PITCHED_W, (int)PITCHED_H,
                                           PITCHED_PITCH, (int *)g.d_h32, g.stream),
                               err);
            },
            g.d_h32, 4, 256, ref));
        if (npp) {
            impls.push_back(npp_impl(d, (int)PITCHED_PITCH, (int)PITCHED_W, (int)PITCHED_H, ref));
        }
        impls.push_back(imghist_impl(img, ref));

        const std::vector<Result> res = measure_rows(impls, ts, p, (double)valid);
        note_target(T_PITCHED, res.back(), pct_of_ceiling(res.back(), (double)valid), p);
    }
    if (g.npp && !npp) {
        printf("NPP skipped: %s\n", npp_why.c_str());
    }
}

void section_batch()
{
    const size_t img_bytes = (size_t)BATCH_W * BATCH_H;
    const size_t total = img_bytes * BATCH_COUNT;
    const size_t bins = 256 * BATCH_COUNT;
    const TimeSpec ts{g.opt.warmup, g.opt.runs, true};
    char title[200];
    snprintf(title, sizeof title, "== Batch of %zu images of %ux%u, packed in one buffer ==",
             BATCH_COUNT, BATCH_W, BATCH_H);
    table_header(title, "vs CUB");

    const uint8_t *d = g.d_a;
    size_t tb = 0;
    CUDA_CHECK(cub_hist_1d(nullptr, &tb, d, (int)img_bytes, (int *)g.d_h32, g.stream));
    ensure_cub_temp(tb);
    std::string npp_why;
    const bool npp = g.npp && ensure_npp_buffer((int)BATCH_W, (int)BATCH_H, &npp_why);

    /* One call per image, in order on one stream: the temp storage can be shared. */
    auto cub_loop = [=](std::string *err) {
        for (size_t i = 0; i < BATCH_COUNT; i++) {
            size_t bytes = g.cub_temp_bytes;
            if (!cuda_ok(cub_hist_1d(g.d_cub_temp, &bytes, d + i * img_bytes, (int)img_bytes,
                                     (int *)g.d_h32 + 256 * i, g.stream),
                         err)) {
                return false;
            }
        }
        return true;
    };
    /* The same calls captured once; the graph reads whatever d holds at launch. */
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t graph_exec = nullptr;
    std::string graph_why; /* why there is no graph row, if there is none */
    {
        CUDA_CHECK(cudaStreamBeginCapture(g.stream, cudaStreamCaptureModeThreadLocal));
        const bool captured = cub_loop(&graph_why);
        const cudaError_t e = cudaStreamEndCapture(g.stream, &graph);
        if (captured && cuda_ok(e, &graph_why)) {
            cuda_ok(cudaGraphInstantiate(&graph_exec, graph, 0), &graph_why);
        }
        (void)cudaGetLastError(); /* a failed capture is reported, not fatal */
    }
    std::vector<imghist_view> imgs(BATCH_COUNT);
    for (size_t i = 0; i < BATCH_COUNT; i++) {
        imgs[i] = device_view(d + i * img_bytes, BATCH_W, BATCH_W, BATCH_H);
    }
    /* The same images in d_b (a copy made per pattern): the row "new views
     * each call" takes its sources from d_a and d_b in turn, as a pipeline
     * passes new tensors, so that each call builds and uploads descriptors. */
    std::vector<imghist_view> imgs_b(imgs);
    for (size_t i = 0; i < BATCH_COUNT; i++) {
        imgs_b[i].data = g.d_b + i * img_bytes;
    }
    /* The same images with the first two swapped: not one tensor, so the
     * call builds descriptors (the views stay the same: they go up once). */
    std::vector<imghist_view> imgs_swapped(imgs);
    std::swap(imgs_swapped[0], imgs_swapped[1]);
    std::vector<uint64_t> ref(bins), ref_swapped(bins);

    /* The read ceiling in the batch kernel's order: blocks take runs of
     * 32 KiB chunks in turn; run 1 is the plain streaming order. */
    for (uint32_t run : {1u, 4u, 16u, 51u}) {
        Impl im;
        im.name = "floor: read in runs of " + std::to_string(run) + " x 32 KiB";
        im.run = [=](std::string *err) {
            return cuda_ok(launch_read_runs(d, total, 2048, run, g.d_sink, g.rw_grid, g.stream),
                           err);
        };
        table_row(im.name, "-", measure(im, ts), (double)total, -1);
    }

    for (Pattern p : all_patterns()) {
        fill_pattern(p, g.h_a, BATCH_W, (size_t)BATCH_H * BATCH_COUNT, g.photo);
        upload_packed(total);
        CUDA_CHECK(cudaMemcpyAsync(g.d_b, g.d_a, total, cudaMemcpyDeviceToDevice, g.stream));
        parallel_for(BATCH_COUNT, [&](size_t i) {
            cpu_histogram_1t(g.h_a + i * img_bytes, img_bytes, &ref[256 * i]);
        });
        ref_swapped = ref;
        std::swap_ranges(ref_swapped.begin(), ref_swapped.begin() + 256,
                         ref_swapped.begin() + 256);

        std::vector<Impl> impls;
        impls.push_back(hist_impl("CUB, one call per image", cub_loop, g.d_h32, 4, bins, ref.data()));
        if (graph_exec != nullptr) {
            impls.push_back(hist_impl(
                "CUB calls in a CUDA graph",
                [=](std::string *err) { return cuda_ok(cudaGraphLaunch(graph_exec, g.stream), err); },
                g.d_h32, 4, bins, ref.data()));
        }
        if (npp) {
            impls.push_back(hist_impl(
                "NPP, one call per image",
                [=](std::string *err) {
                    for (size_t i = 0; i < BATCH_COUNT; i++) {
                        if (!npp_ok(bench_npp_histogram(d + i * img_bytes, (int)BATCH_W, (int)BATCH_W,
                                                        (int)BATCH_H, (int *)g.d_h32 + 256 * i,
                                                        g.d_npp_buf, g.stream),
                                    err)) {
                            return false;
                        }
                    }
                    return true;
                },
                g.d_h32, 4, bins, ref.data()));
        }
        impls.push_back(hist_impl(
            "imghist_cuda_histogram_batch",
            [&imgs, out = device_counts(imgs.size())](std::string *err) {
                return imghist_ok(
                    imghist_histogram_list(g.ctx, imgs.data(), imgs.size(), nullptr, &out), err);
            },
            g.d_h64, 8, bins, ref.data()));
        /* The same call with the blocks taking shorter runs of chunks in
         * turn (IMGHIST_P_EXP_BATCH_RUN), for comparison with the library's
         * choice (the last row, which the targets use, stays that one). */
        for (int64_t run : {4, 8, 16}) {
            impls.insert(impls.end() - 1,
                hist_impl("imghist batch, runs of " + std::to_string(run),
                          [&imgs, run, out = device_counts(imgs.size())](std::string *err) {
                              const bool ok =
                                  imghist_ok(imghist_set_param(g.ctx, IMGHIST_P_EXP_BATCH_RUN, run),
                                             err) &&
                                  imghist_ok(imghist_histogram_list(g.ctx, imgs.data(), imgs.size(),
                                                                    nullptr, &out),
                                             err);
                              imghist_set_param(g.ctx, IMGHIST_P_EXP_BATCH_RUN, 0);
                              return ok;
                          },
                          g.d_h64, 8, bins, ref.data()));
        }
        impls.insert(impls.end() - 1,
            hist_impl("imghist batch, descriptors (2 views swapped)",
                      [&imgs_swapped, out = device_counts(imgs.size())](std::string *err) {
                          return imghist_ok(imghist_histogram_list(g.ctx, imgs_swapped.data(),
                                                                   imgs_swapped.size(), nullptr,
                                                                   &out),
                                            err);
                      },
                      g.d_h64, 8, bins, ref_swapped.data()));
        impls.insert(impls.end() - 1,
            hist_impl("imghist batch, new views each call",
                      [&imgs, &imgs_b, turn = 0u, out = device_counts(imgs.size())](
                          std::string *err) mutable {
                          const std::vector<imghist_view> &v = turn++ & 1 ? imgs_b : imgs;
                          return imghist_ok(
                              imghist_histogram_list(g.ctx, v.data(), v.size(), nullptr, &out),
                              err);
                      },
                      g.d_h64, 8, bins, ref.data()));

        const std::vector<Result> res = measure_rows(impls, ts, p, (double)total);
        for (size_t i = 1; i < impls.size(); i++) {
            if (impls[i].name.rfind("NPP", 0) != 0 && res[i].ran) {
                held_row(impls[i].name, pattern_name(p), held_ms(impls[i], ts.runs, true),
                         (double)total, -1);
            }
        }
        /* What of the held call is the kernel's: the library's call without
         * the L2 flush in front, and the kernel alone (IMGHIST_ACCUMULATE:
         * no memset of the counts first; unchecked, the counts grow) with
         * and without the flush. */
        Impl alone;
        alone.name = "imghist batch, kernel alone (accumulating)";
        alone.run = [&imgs, out = device_counts(imgs.size())](std::string *err) {
            const imghist_histspec spec{256, 0.0, 256.0, IMGHIST_ACCUMULATE};
            return imghist_ok(
                imghist_histogram_list(g.ctx, imgs.data(), imgs.size(), &spec, &out), err);
        };
        held_row(impls.back().name + ", no flush", pattern_name(p),
                 held_ms(impls.back(), ts.runs, false), (double)total, -1);
        held_row(alone.name, pattern_name(p), held_ms(alone, ts.runs, true), (double)total, -1);
        held_row(alone.name + ", no flush", pattern_name(p), held_ms(alone, ts.runs, false),
                 (double)total, -1);
        note_target(T_BATCH, res.back(), pct_of_ceiling(res.back(), (double)total), p);
    }
    if (graph_exec != nullptr) {
        CUDA_CHECK(cudaGraphExecDestroy(graph_exec));
    } else {
        printf("CUB graph skipped: capture failed: %s\n", graph_why.c_str());
    }
    if (graph != nullptr) {
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    if (g.npp && !npp) {
        printf("NPP skipped: %s\n", npp_why.c_str());
    }
}

void section_latency()
{
    const size_t n = (size_t)MP12_W * MP12_H;
    /* 12 MB stays in L2 between calls, as it would for a frame just produced on the GPU. */
    const TimeSpec ts{10, g.opt.latency_runs, false};
    char title[240];
    snprintf(title, sizeof title,
             "== One %ux%u image (12 MP, on the device, L2-warm): median of %d single calls; "
             "'back-to-back' = mean of %d calls enqueued together ==",
             MP12_W, MP12_H, g.opt.latency_runs, g.opt.latency_runs);
    table_header(title, "vs CUB");

    const uint8_t *d = g.d_a;
    size_t tb = 0;
    CUDA_CHECK(cub_hist_1d(nullptr, &tb, d, (int)n, (int *)g.d_h32, g.stream));
    ensure_cub_temp(tb);
    std::string npp_why;
    const bool npp = g.npp && ensure_npp_buffer((int)MP12_W, (int)MP12_H, &npp_why);
    const imghist_view img = device_view(d, MP12_W, MP12_W, MP12_H);

    /* Floors for this size: an empty launch, and the streaming read of the
     * same 12 MB (n is a multiple of 16). */
    {
        std::vector<Impl> floors(2);
        floors[0].name = "floor: empty kernel";
        floors[0].run = [](std::string *err) { return cuda_ok(launch_empty(g.stream), err); };
        floors[1].name = "floor: read kernel, same 12 MB";
        floors[1].run = [=](std::string *err) {
            return cuda_ok(launch_read(READ_LDG_X4, d, n, g.d_sink, g.rw_grid, g.stream), err);
        };
        for (const Impl &im : floors) {
            Result r = measure(im, ts);
            table_row(im.name, "-", r, (double)n, -1);
            Result b;
            b.ran = true;
            b.ms = back_to_back_ms(im, g.opt.latency_runs);
            table_row(im.name + " back-to-back", "-", b, (double)n, -1);
            held_row(im.name, "-", held_ms(im, g.opt.latency_runs, false), (double)n, -1);
        }
    }

    uint64_t ref[256];
    for (Pattern p : all_patterns()) {
        fill_pattern(p, g.h_a, MP12_W, MP12_H, g.photo);
        upload_packed(n);
        cpu_histogram(g.h_a, n, ref);

        std::vector<Impl> impls;
        impls.push_back(cub_1d_impl(d, n, ref));
        if (npp) {
            impls.push_back(npp_impl(d, (int)MP12_W, (int)MP12_W, (int)MP12_H, ref));
        }
        impls.push_back(imghist_impl(img, ref));

        std::vector<Result> res;
        std::vector<double> b2b, held;
        for (const Impl &im : impls) {
            res.push_back(measure(im, ts));
            b2b.push_back(res.back().ran ? back_to_back_ms(im, g.opt.latency_runs) : -1);
            held.push_back(res.back().ran ? held_ms(im, g.opt.latency_runs, false) : -1);
        }
        const double cub_b2b = b2b[0];
        print_rows(impls, res, p, (double)n);
        for (size_t i = 0; i < impls.size(); i++) {
            if (b2b[i] > 0) {
                Result r;
                r.ran = r.checked = r.correct = true;
                r.ms = b2b[i];
                table_row(impls[i].name + " back-to-back", pattern_name(p), r, (double)n,
                          cub_b2b > 0 ? cub_b2b / b2b[i] : -1);
            }
        }
        for (size_t i = 0; i < impls.size(); i++) {
            held_row(impls[i].name, pattern_name(p), held[i], (double)n,
                     held[0] > 0 && held[i] > 0 ? held[0] / held[i] : -1);
        }
        note_target(T_LATENCY, res.back(), res.back().ms * 1000, p);
    }
    if (g.npp && !npp) {
        printf("NPP skipped: %s\n", npp_why.c_str());
    }
}

void section_equalize()
{
    const uint32_t width = 32768, height = 32768;
    const size_t n = (size_t)width * height;
    const double ref_ms = g.read_ms + g.copy_ms;
    const TimeSpec ts{g.opt.warmup, g.opt.runs, true};
    char title[240];
    snprintf(title, sizeof title,
             "== Equalization of 1 GiB on the device (src != dst); 'vs ref' = (t_read + t_copy = "
             "%s) / time, the target is time <= 1.08 x reference ==",
             fmt_time(ref_ms).c_str());
    table_header(title, "vs ref");

    const imghist_view src = device_view(g.d_a, width, width, height);
    const imghist_view dst = device_view(g.d_b, width, width, height);
    uint64_t hist[256];
    uint8_t lut[256];
    for (Pattern p : all_patterns()) {
        fill_pattern(p, g.h_a, width, height, g.photo);
        upload_packed(n);
        cpu_histogram(g.h_a, n, hist);
        if (imghist_equalize_lut(hist, 256, IMGHIST_EQ_OPENCV, lut) != IMGHIST_OK) {
            fprintf(stderr, "imghist_equalize_lut refused a full histogram\n");
            exit(1);
        }

        Impl im;
        im.name = "imghist_cuda_equalize";
        im.run = [&src, &dst](std::string *err) {
            return imghist_ok(imghist_equalize(g.ctx, &src, &dst, IMGHIST_EQ_OPENCV, nullptr),
                              err);
        };
        /* Two passes with opposite poisons: a byte left unwritten cannot match
         * the expected value in both. */
        im.check_passes = 2;
        im.poison = [n](int pass) {
            CUDA_CHECK(cudaMemsetAsync(g.d_b, pass == 0 ? 0x00 : 0xFF, n, g.stream));
        };
        im.verify = [n, &lut](std::string *why) {
            CUDA_CHECK(cudaMemcpy(g.h_b, g.d_b, n, cudaMemcpyDeviceToHost));
            return compare_lut_applied(g.h_a, g.h_b, n, lut, why);
        };
        Result r = measure(im, ts);
        if (r.ran) {
            char note[64];
            snprintf(note, sizeof note, "%.3f x reference", r.ms / ref_ms);
            r.note += (r.note.empty() ? "" : "; ") + std::string(note);
        }
        table_row(im.name, pattern_name(p), r, (double)n, r.ran ? ref_ms / r.ms : -1);
        note_target(T_EQUALIZE, r, r.ms / ref_ms, p);
    }
}

/* ---------------------------------------------------------------- setup, summary */

void usage(FILE *f)
{
    fprintf(f,
            "usage: imghist_bench [--quick] [--runs N] [--only SECTION[,SECTION...]] [--photo PATH]\n"
            "                     [--no-npp]\n"
            "  --quick        5 timed runs (50 for latency), 1 warm-up, no 2^20 case\n"
            "  --runs N       timed runs per kernel (default 20; latency uses 10*N)\n"
            "  --only LIST    sections: contig, pitched, batch, latency, equalize\n"
            "                 (the bandwidth ceiling is always measured)\n"
            "  --photo PATH   photograph for the 'photo' pattern (default samples/astronaut.png)\n"
            "  --no-npp       do not load NPP even where it is installed\n");
}

void parse_args(int argc, char **argv)
{
    bool runs_given = false;
    for (int i = 0; i < argc; i++) {
        g.opt.command += (i ? " " : "") + std::string(argv[i]);
    }
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                fprintf(stderr, "imghist_bench: %s needs a value\n", a.c_str());
                usage(stderr);
                exit(2);
            }
            return argv[++i];
        };
        if (a == "--quick") {
            g.opt.quick = true;
        } else if (a == "--runs") {
            const std::string v = value();
            char *end = nullptr;
            const long r = strtol(v.c_str(), &end, 10);
            if (*end != '\0' || r < 1 || r > 100000) {
                fprintf(stderr, "imghist_bench: --runs wants a positive number, not '%s'\n", v.c_str());
                exit(2);
            }
            g.opt.runs = (int)r;
            runs_given = true;
        } else if (a == "--only") {
            std::string list = value() + ",";
            for (size_t pos; (pos = list.find(',')) != std::string::npos; list.erase(0, pos + 1)) {
                const std::string s = list.substr(0, pos);
                if (s.empty() || s == "ceiling") {
                    continue;
                }
                if (std::find(std::begin(SECTIONS), std::end(SECTIONS), s) == std::end(SECTIONS)) {
                    fprintf(stderr, "imghist_bench: unknown section '%s'\n", s.c_str());
                    usage(stderr);
                    exit(2);
                }
                g.opt.only.insert(s);
            }
        } else if (a == "--no-npp") {
            g.opt.no_npp = true;
        } else if (a == "--photo") {
            g.opt.photo_path = value();
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "imghist_bench: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            exit(2);
        }
    }
    if (g.opt.quick) {
        g.opt.warmup = 1;
        if (!runs_given) {
            g.opt.runs = 5;
        }
    }
    g.opt.latency_runs = 10 * g.opt.runs;
}

void print_header()
{
    char date[64];
    const time_t now = time(nullptr);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    int drv = 0, rt = 0;
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    printf("imghist_bench  %s\n", date);
    printf("command   %s\n", g.opt.command.c_str());
    printf("device    %s, compute capability %d.%d, %d SMs, L2 %.1f MiB, %.1f GiB memory "
           "(%.1f GiB free)\n",
           g.prop.name, g.prop.major, g.prop.minor, g.prop.multiProcessorCount,
           g.prop.l2CacheSize / 1048576.0, total_b / 1073741824.0, free_b / 1073741824.0);
    printf("software  CUDA driver %d.%d, runtime %d.%d (static), imghist %s, %s\n", drv / 1000,
           drv % 1000 / 10, rt / 1000, rt % 1000 / 10, imghist_version_string(),
           cub_version_string());
    printf("npp       %s\n", g.npp_note);
    printf("photo     %s\n", g.photo.pixels != nullptr ? g.opt.photo_path.c_str()
                                                        : "not loaded: pattern 'photo' skipped");
    printf("method    median of %d timed calls after %d warm-up calls (CUDA events around each call;\n"
           "          L2 flushed before each call on inputs larger than L2); every result checked\n"
           "          bit for bit against the CPU once, on a poisoned output, before timing.\n"
           "          GB/s = input bytes / time (1e9); %%ceil = GB/s / read ceiling;\n"
           "          vs CUB = CUB time / time (> 1: faster than CUB).\n",
           g.opt.runs, g.opt.warmup);
    fflush(stdout);
}

void setup()
{
    int dev = 0;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaGetDeviceProperties(&g.prop, dev));
    CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&g.ev0));
    CUDA_CHECK(cudaEventCreate(&g.ev1));
    g.rw_grid = stream_grid(g.prop.multiProcessorCount);

    /* About 2.2 GiB of device memory in all (the H100 has 80). */
    CUDA_CHECK(cudaMalloc((void **)&g.d_a, GiB));
    CUDA_CHECK(cudaMalloc((void **)&g.d_b, GiB));
    g.flush_bytes = ((size_t)g.prop.l2CacheSize * 2 + 15) & ~(size_t)15;
    CUDA_CHECK(cudaMalloc((void **)&g.d_flush, g.flush_bytes));
    CUDA_CHECK(cudaMemset(g.d_flush, 0, g.flush_bytes));
    CUDA_CHECK(cudaMalloc((void **)&g.d_sink, sizeof(unsigned int)));
    int *hold = nullptr;
    CUDA_CHECK(cudaHostAlloc((void **)&hold, 2 * sizeof(int), cudaHostAllocMapped));
    g.h_hold = hold;
    CUDA_CHECK(cudaHostGetDevicePointer((void **)&g.d_hold, hold, 0));
    CUDA_CHECK(cudaMalloc((void **)&g.d_h32, BATCH_COUNT * 256 * sizeof(unsigned int)));
    CUDA_CHECK(cudaMalloc((void **)&g.d_h64, BATCH_COUNT * 256 * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMallocHost((void **)&g.h_a, GiB));
    CUDA_CHECK(cudaMallocHost((void **)&g.h_b, GiB));

    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &g.ctx);
    if (st != IMGHIST_OK) {
        fprintf(stderr, "imghist_bench: imghist_create(CUDA): %s: %s\n", imghist_strerror(st),
                imghist_last_error(g.ctx));
        exit(1);
    }
    /* Every imghist call below runs on the bench stream, like every other
     * kernel here: the CUDA events around a call then time exactly it. */
    if (imghist_set_stream(g.ctx, g.stream) != IMGHIST_OK) {
        fprintf(stderr, "imghist_bench: imghist_set_stream: %s\n", imghist_last_error(g.ctx));
        exit(1);
    }
    if (imghist_load_file(g.ctx, g.opt.photo_path.c_str(), &g.photo_img) == IMGHIST_OK) {
        g.photo.pixels = (const uint8_t *)g.photo_img->view.data;
        g.photo.pitch = g.photo_img->view.pitch;
        g.photo.width = g.photo_img->view.width;
        g.photo.height = g.photo_img->view.height;
    } else {
        fprintf(stderr, "imghist_bench: cannot load the photo %s: %s\n", g.opt.photo_path.c_str(),
                imghist_last_error(g.ctx));
    }
    if (g.opt.no_npp) {
        g.npp_note = "not loaded (--no-npp)";
    } else {
        g.npp = bench_npp_load(&g.npp_note) != 0;
    }
}

void teardown()
{
    imghist_image_free(g.photo_img);
    imghist_destroy(g.ctx);
    CUDA_CHECK(cudaStreamSynchronize(g.stream));
    cudaFree(g.d_a);
    cudaFree(g.d_b);
    cudaFree(g.d_flush);
    cudaFree(g.d_sink);
    cudaFreeHost((void *)g.h_hold);
    cudaFree(g.d_h32);
    cudaFree(g.d_h64);
    cudaFree(g.d_cub_temp);
    cudaFree(g.d_npp_buf);
    cudaFreeHost(g.h_a);
    cudaFreeHost(g.h_b);
    cudaEventDestroy(g.ev0);
    cudaEventDestroy(g.ev1);
    cudaStreamDestroy(g.stream);
}

void print_summary()
{
    printf("\n== Summary: imghist against the issue's targets (worst pattern) ==\n");
    printf("%-36s %-22s %-22s %s\n", "target", "goal", "imghist", "result");
    printf("%s\n", std::string(106, '-').c_str());
    for (const Target &t : g.targets) {
        char goal[48], got[64];
        snprintf(goal, sizeof goal, "%s %g %s", t.higher_is_better ? ">=" : "<=", t.goal, t.unit);
        const char *result;
        if (!t.measured && !t.broken) {
            snprintf(got, sizeof got, "-");
            result = "not run";
        } else {
            if (t.measured) {
                snprintf(got, sizeof got, "%.*f (%s)", t.goal < 2 ? 3 : 1, t.worst,
                         t.worst_pattern.c_str());
            } else {
                snprintf(got, sizeof got, "no result");
            }
            const bool met = t.measured &&
                             (t.higher_is_better ? t.worst >= t.goal : t.worst <= t.goal);
            result = t.broken ? "MISS (imghist failed a check or call)" : met ? "PASS" : "MISS";
        }
        printf("%-36s %-22s %-22s %s\n", t.what, goal, got, result);
    }
    printf("correctness: %d checks, %d failed%s\n", g.checks, g.failures,
           g.failures ? "  <-- FAIL" : "");
}

} // namespace

int main(int argc, char **argv)
{
    parse_args(argc, argv);
    setup();
    print_header();

    section_ceiling();
    if (section_enabled("contig")) {
        if (!g.opt.quick) {
            section_contig((size_t)1 << 20);
        }
        section_contig(GiB);
    }
    if (section_enabled("pitched")) {
        section_pitched();
    }
    if (section_enabled("batch")) {
        section_batch();
    }
    if (section_enabled("latency")) {
        section_latency();
    }
    if (section_enabled("equalize")) {
        section_equalize();
    }
    print_summary();
    teardown();
    return g.failures != 0 ? 1 : 0;
}
