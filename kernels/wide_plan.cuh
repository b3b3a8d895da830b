/*
 * Wide histograms, host side: how a job is laid out and walked on this
 * device (the store's counter words, the walk of a band, the plain layout,
 * the F32 estimate) and the arguments of its launches. Inline: the
 * launchers (hist_wide.cu) and the plan (wide_plan.cu) both use them.
 */
#ifndef IMGHIST_WIDE_PLAN_CUH
#define IMGHIST_WIDE_PLAN_CUH

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "limits.cuh"
#include "wide_common.cuh"

namespace {

/* Granules per block per step (the host's copy of CHUNK). */
inline uint32_t chunk_of(int store, size_t size)
{
    if (store != IH_WIDE_S16) {
        return Threads<IH_WIDE_S32, 1>::n * Threads<IH_WIDE_S32, 1>::unroll;
    }
    return size == 4 ? Threads<IH_WIDE_S16, 4>::n * Threads<IH_WIDE_S16, 4>::unroll
                     : Threads<IH_WIDE_S16, 1>::n * Threads<IH_WIDE_S16, 1>::unroll;
}

/* The integer fast path in 32 bits: ilo within +-2^30. */
inline bool shift32(const ih_hist_job &job)
{
    return job.bin.shift_ok && job.bin.ilo > -(INT64_C(1) << 30) && job.bin.ilo < (INT64_C(1) << 30);
}

inline size_t round_up(size_t n, size_t m)
{
    return (n + m - 1) / m * m;
}

/* One channel's words in an S32 copy of an F32 job: the padded layout's,
 * code bins + 1's word the last (see fpad_code). */
inline size_t pad_words(const ih_hist_job &job)
{
    return job.stride + 4 + (job.stride + 1) / 32;
}

/* Counter words of one S32 copy: F32 jobs take the padded layout's, the
 * others one word a counter. */
inline size_t s32_words(const ih_hist_job &job)
{
    return job.dtype == IMGHIST_F32 ? round_up(job.channels * pad_words(job), 32)
                                    : round_up(job.len, 32);
}

/* Bytes of an F32 edge table (entries 0..bins) and the guard word below it. */
inline size_t tab_bytes(const ih_hist_job &job)
{
    return TAB_GUARD + round_up(((size_t)job.bin.bins + 1) * 4, 16);
}

inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * F32 binning: the range as floats, and the single-precision estimate
 * t = fl(fl(v - lo_f) * inv_f) with a bound eps on its distance, in bins, from
 * the exact position of v among binning.h's edges: twice ih_float_bound plus
 * 2^-20. A sample whose frac(t) is within eps of 0 or 1 is binned exactly.
 * Where the bound is loose (eps > 1/4) or none (a range wider than 1e38,
 * where v - lo_f could overflow and put such samples in bin 0)
 * or t could reach 2^24, the estimate is not used.
 */
inline void float_estimate(const ih_binning &b, Args &a)
{
    a.lo_ru = ih_float_up(b.lo);
    a.hi_ru = ih_float_up(b.hi);
    a.lo_f = (float)b.lo;
    a.inv_f = (float)b.inv;
    const double mag = fabs(b.lo) + fabs(b.hi);
    const double eps = 2.0 * ih_float_bound(&b) + ldexp(1.0, -20);
    const bool usable = isfinite(eps) && eps <= 0.25 && b.bins <= (1u << 22) &&
                        isfinite(a.lo_f) && isfinite(a.inv_f) && a.inv_f > 0.0f;
    a.eps = usable ? (float)eps : 2.0f; /* 2: frac(t) is never in (2, -1) */
    /* The lean kernel's t = fma(v, inv_f, c_f): its errors are the rounding
     * of c_f (u |lo| inv, inside the subtraction's term u mag inv above), of
     * inv_f (u t) and of the result (u t), so eps bounds it as well. */
    a.c_f = (float)(-(double)a.lo_f * (double)a.inv_f);
    /* The padded layout's t = u S, u = sat(fma(v, inv_s, c_s)), S = bins + 1,
     * against t* + 1 = (v - lo) inv + 1: the rounding of u (S u / 2 once
     * scaled), of inv_s (u |v| inv <= u mag inv), of c_s (u (1 + |lo| inv))
     * and the double edges' and constants' own (2^-48 mag inv), plus what
     * rounding the edges to floats moves them (ih_float_bound's share). near is
     * twice that plus 2^-20; t below 2^22 keeps the rounding by 1.5 2^23
     * exact. */
    const double S = (double)b.bins + 1.0;
    const double inv_s = b.inv / S, c_s = (1.0 - b.lo * b.inv) / S;
    a.inv_s = (float)inv_s;
    a.c_s = (float)c_s;
    a.s_f = (float)S;
    const double bound2 = ldexp(S + 1.0 + mag * b.inv + fabs(b.lo) * b.inv, -24) +
                          ldexp(mag * b.inv, -48) + ih_edges_moved(&b);
    const double near = 2.0 * bound2 + ldexp(1.0, -20);
    const bool fast = isfinite(near) && near <= 0.25 && S < (double)(1u << 22) &&
                      isfinite(a.c_s) && isfinite(a.inv_s) && a.inv_s >= FLT_MIN;
    a.near = fast ? (float)near : 2.0f;
}

/* The arguments every launch of a job shares (the geometry comes later). */
inline void job_args(const ih_wide_band &band, const ih_hist_job &job,
                     const ih_wide_plan_t &plan, unsigned long long *target, Args &a)
{
    memset(&a, 0, sizeof a);
    a.mask = band.mask;
    a.mask_pitch = band.mask_pitch;
    a.channels = job.channels;
    a.stride = (uint32_t)job.stride;
    a.len = (uint32_t)job.len;
    a.bins = job.bin.bins;
    a.outliers = job.outliers;
    a.bin = job.bin;
    if (shift32(job)) {
        a.ilo = (int32_t)job.bin.ilo;
        a.blo = (uint32_t)clamp64(job.bin.ilo, 0, IH_LEVELS16);
        a.bhi = (uint32_t)clamp64(job.bin.ihi, 0, IH_LEVELS16);
        a.shift = job.bin.shift;
        a.span = a.bhi - a.blo;
        a.natural = job.dtype == IMGHIST_U16 && job.channels == 1 && a.ilo == 0 &&
                    a.shift == 0 && a.blo == 0 && a.bhi == IH_LEVELS16 &&
                    job.bin.bins == IH_LEVELS16;
    }
    if (job.dtype == IMGHIST_U8) {
        a.natural = job.natural; /* one bin per value, no outlier counters */
    }
    a.copies = (uint32_t)plan.copies;
    while ((1u << a.copies_log2) < a.copies) {
        a.copies_log2++;
    }
    a.target = target;
    if (job.dtype == IMGHIST_F32) {
        float_estimate(job.bin, a);
        a.pad_words = (uint32_t)pad_words(job);
    }
    const size_t lut = job.dtype == IMGHIST_U8 ? 1024 : 0;
    const size_t tab = plan.table ? tab_bytes(job) : 0;
    a.cnt_off = (uint32_t)(lut + tab);
}

/* Counter words of a block's store (S32, S16; 0 for the global store). */
inline uint32_t phys_of(const ih_hist_job &job, int store, uint32_t copies)
{
    if (store == IH_WIDE_S32) {
        return (uint32_t)s32_words(job) * copies;
    }
    return store == IH_WIDE_S16 ? (uint32_t)round_up((job.len + 1) / 2, 32) : 0u;
}

/* How a band is walked: flat (rows back to back from a 16-byte aligned
 * start, for the kinds the lean kernel bins), simple rows, or the general
 * walk (channels, masks). */
inline int walk_of(const ih_wide_band &band, const ih_hist_job &job,
                   const ih_wide_plan_t &plan, size_t row_bytes)
{
    const bool simple = job.channels == 1 && band.mask == nullptr;
    const bool lean_kind = job.dtype == IMGHIST_U8 || (job.dtype == IMGHIST_U16 && shift32(job)) ||
                           (job.dtype == IMGHIST_F32 && plan.table);
    const bool flat = band.mask == nullptr && lean_kind && !job.outliers &&
                      ((uintptr_t)band.base & 15) == 0 &&
                      (band.rows == 1 || band.pitch == row_bytes);
    if (flat && job.channels == 1) {
        return W_FLAT;
    }
    /* One channel with a mask as packed as the image and aligned with its
     * samples (mask byte i: sample i's pixel), 32-bit counters or the
     * natural 16-bit histogram's pairs. */
    const size_t size = ih_dtype_size(job.dtype);
    const bool masked_store =
        plan.store == IH_WIDE_S32 ||
        (plan.store == IH_WIDE_S16 && job.dtype == IMGHIST_U16 && job.natural && shift32(job));
    if (band.mask != nullptr && job.channels == 1 && lean_kind && !job.outliers &&
        masked_store && ((uintptr_t)band.base & 15) == 0 &&
        (band.rows == 1 || (band.pitch == row_bytes && band.mask_pitch == band.width)) &&
        ((uintptr_t)band.mask & (16 / size - 1)) == 0) {
        return W_FLAT_MASKED;
    }
    /* Channels in the 16-bit pairs (rare: it takes counters too many for
     * the S32 store) walk rows: the lean kernel's S16 form spills with them. */
    if (flat && plan.store != IH_WIDE_S16) {
        return W_FLAT_CHANNELS;
    }
    return simple ? W_SIMPLE : W_GENERAL;
}

/* Whether the natural 16-bit histogram, flat, counts in the split layouts
 * (PAR_WORDS words of shared memory a block) where the device has room for
 * them: 192 KiB on Hopper, not the A100's 163 (+ split_of's static word). */
inline bool split_fits(int walk, const ih_hist_job &job, const ih_wide_plan_t &plan, int optin)
{
    return walk == W_FLAT && job.dtype == IMGHIST_U16 && job.natural &&
           plan.store == IH_WIDE_S16 && (size_t)optin >= (size_t)PAR_WORDS * 4 + 256;
}

/* Whether a launch counts in the plain layout (u8_channels_kernel): 8-bit
 * channels, one bin per value; PLAIN_FLAT for a flat run (walk), PLAIN_ROWS
 * for rows (the general walk), PLAIN_MASKED for rows with a mask, else 0.
 * Such a plan gets all 32
 * copies of the counters where they fit a block, even at one block an SM
 * (four channels take 129 KiB): every lane its own bank is worth more than
 * a second block with 16 copies. */
enum { PLAIN_FLAT = 1, PLAIN_ROWS = 2, PLAIN_MASKED = 3, PLAIN_FLAT_MASKED = 4 };

inline int plain_of(const ih_wide_band &band, const ih_hist_job &job, ih_wide_plan_t &plan,
                    int walk, int optin, long long mask_stride = 0)
{
    if ((walk != W_FLAT_CHANNELS && walk != W_GENERAL) || job.dtype != IMGHIST_U8 ||
        job.channels < 2 || !job.natural || job.stride != 256 || plan.store != IH_WIDE_S32) {
        return 0;
    }
    /* PLAIN_FLAT_MASKED: a mask as packed as the pixels (rows back to back,
     * mask byte i: pixel i): a flat walk with the granule's mask bytes
     * loaded beside it. Two and four channels need the mask aligned with the
     * granules (16 / channels pixels each; a batch's masks each so aligned),
     * three do not. The row walk spends a division and a mask test a
     * sample, which the flat walk does not. */
    const uint32_t ch = job.channels;
    const size_t row_bytes = (size_t)band.width * ch;
    const uint32_t align = ch == 3 ? 1u : 16u / ch;
    const bool flat_masked = band.mask != nullptr && ch <= 4 && ((uintptr_t)band.base & 15) == 0 &&
                             ((uintptr_t)band.mask & (align - 1)) == 0 &&
                             mask_stride % (long long)align == 0 &&
                             (band.rows == 1 ||
                              (band.pitch == row_bytes && band.mask_pitch == band.width));
    const size_t smem = 1024 + round_up(job.len, 32) * 4 * 32; /* the table's room, counters */
    if (plan.copies < 32 && smem <= (size_t)optin) {
        plan.copies = 32;
        plan.smem = smem;
    }
    return plan.copies != 32              ? 0
           : walk == W_FLAT_CHANNELS      ? PLAIN_FLAT
           : band.mask == nullptr         ? PLAIN_ROWS
           : flat_masked                  ? PLAIN_FLAT_MASKED
                                          : PLAIN_MASKED;
}

/* The geometry of `rows` rows from base (flat: one run of bytes). */
inline void set_geom(Args &a, const uint8_t *base, size_t pitch, size_t row_bytes,
                     uint32_t rows, bool flat)
{
    ih_geom &g = a.g;
    g.base = base;
    g.pitch = pitch;
    g.width = (uint32_t)row_bytes;
    const uint32_t pr = ih_granules_per_row(g.base, g.pitch, g.width, rows);
    g.total = rows * pr;
    g.per_row = ih_make_fastdiv(pr);
    if (flat) {
        g.width = (uint32_t)(row_bytes * rows);
        g.total = (uint32_t)(((uint64_t)g.width + 15) / 16);
        a.flat_full = g.width / 16;
    }
}

inline cudaError_t device_facts(int &sms, int &optin)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    return e;
}

/* The walk of a batch's launch (a flat masked walk needs every image's mask
 * in step with its samples). */
inline int batch_walk(const ih_wide_band &band, const ih_hist_job &job,
                      const ih_wide_plan_t &plan, long long mask_stride)
{
    const size_t size = ih_dtype_size(job.dtype);
    const int walk = walk_of(band, job, plan, (size_t)band.width * job.channels * size);
    return walk == W_FLAT_MASKED && mask_stride % (long long)(16 / size) != 0 ? W_GENERAL : walk;
}

/* Whether an S16 job has batch kernels: 16-bit samples binned by a shift,
 * in the flat walks (with a mask: the natural histogram) or the simple one.
 * (The general walk's S16 batch kernel, for other masks, spilled 1 KB a
 * thread under S16's 64 registers: those go a launch an image.) */
inline bool s16_batch_walk(const ih_wide_band &band, const ih_hist_job &job,
                           const ih_wide_plan_t &plan, long long mask_stride)
{
    const int walk = batch_walk(band, job, plan, mask_stride);
    return job.dtype == IMGHIST_U16 && shift32(job) &&
           (walk == W_FLAT || walk == W_FLAT_MASKED || walk == W_SIMPLE);
}

} // namespace

#endif
