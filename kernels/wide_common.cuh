/*
 * What every wide histogram kernel and its host side share: the kinds,
 * walks and block shapes, the arguments of a launch, the counter swizzle
 * and byte-wise sample loads.
 */
#ifndef IMGHIST_WIDE_COMMON_CUH
#define IMGHIST_WIDE_COMMON_CUH

#include <stdint.h>

#include <type_traits>

#include "granules.cuh"
#include "hist_wide.cuh"

namespace {

constexpr uint32_t NONE = 0xffffffffu;
/* Bytes before an F32 edge table (a word the padded layout may read below it). */
constexpr uint32_t TAB_GUARD = 16;
constexpr unsigned FULL = 0xffffffffu;
/* The split layouts' set P of 32768 values and their counter words
 * (wide_split.cuh; the planner sizes a block's shared memory by them). */
constexpr uint32_t PAR_P = 32768, PAR_WORDS = 32768 + 16384;

enum Kind { K_LUT8, K_SHIFT, K_INT, K_FTAB, K_FDBL };

/* How a kernel walks the band: any view (mask, channels: per-sample pixel
 * and channel), one-channel unmasked rows, or one flat run of bytes (of one
 * channel, of interleaved channels, or of one channel with a flat mask). */
enum Walk { W_GENERAL, W_SIMPLE, W_FLAT, W_FLAT_CHANNELS, W_FLAT_MASKED };

/* Threads per block and granules in flight per thread: S16 runs one block
 * of 1024 threads per SM (64 registers each, which holds four granules in
 * flight but for F32's longer binning), the others 512. */
template <int STORE, int SIZE> struct Threads {
    static constexpr int n = STORE == IH_WIDE_S16 ? 1024 : 512;
    static constexpr int unroll = STORE == IH_WIDE_S16 && SIZE == 4 ? 2 : 4;
};


struct Args {
    ih_geom g;                 /* the band's rows as bytes */
    const uint8_t *mask;       /* NULL or the band's first mask row */
    size_t mask_pitch;
    uint32_t channels, stride, len, bins;
    int outliers;
    ih_binning bin;
    int32_t ilo;               /* K_SHIFT: bin = (v - ilo) >> shift on [blo, bhi) */
    uint32_t blo, bhi, shift;
    uint32_t copies;           /* S32 */
    uint32_t phys;             /* counter words in shared memory (a multiple of 32) */
    uint32_t cnt_off;          /* bytes of table before the counters */
    uint32_t pad_words;        /* F32, S32: one channel's words in a copy (the padded layout) */
    uint32_t flat_full;        /* W_FLAT: granules wholly inside the run */
    uint32_t span;             /* K_SHIFT: bhi - blo */
    int natural;               /* K_SHIFT: U16, one bin per value, all in range; 2: and blocks may
                                * take a split layout (flat, S16, PAR_WORDS words). K_LUT8: one
                                * bin per value, no outlier counters (the flat channel walk
                                * bins without the table) */
    uint32_t copies_log2;      /* S32 */
    /* F32: the range as floats (smallest float >= lo, >= hi) and the estimate
     * t = (v - lo_f) * inv_f, trusted where frac(t) is in (eps, 1 - eps). */
    float lo_ru, hi_ru, lo_f, inv_f, eps;
    float c_f;                 /* -lo_f * inv_f rounded: t = fma(v, inv_f, c_f) in the lean kernel */
    /* F32, the padded layout (fpad_code): u = sat(fma(v, inv_s, c_s)), t = u s_f, an
     * estimate of v's place among the edges plus 1 within `near` / 2 of it; near >= 1/2
     * where no such bound holds. */
    float inv_s, c_s, s_f, near;
    unsigned long long *target;
    /* Batch kernels (BATCH): image blockIdx.y at g.base + y * img_stride,
     * its counts at target + y * len; own: each image has one block, which
     * stores all its counters (added to the target's with `accumulate`). */
    long long img_stride;
    int own, accumulate;
    long long mask_img_stride; /* batch kernels with a mask: image y's at mask + y * this */
    /* Batch kernels: NULL, or views of one shape anywhere: image y's first
     * row at views[2 y] and its mask's at views[2 y + 1] (the strides then
     * unused). */
    const unsigned long long *views;
};

__device__ __forceinline__ uint32_t swz(uint32_t s)
{
    return s ^ ((s >> 5) & 31u);
}

/* A bin code (bins + IH_BIN_*) as the counter it goes to, or NONE. */
__device__ __forceinline__ uint32_t to_slot(const Args &a, uint32_t b)
{
    return b < a.bins || a.outliers ? b : NONE;
}

/* A sample from any byte address. */
template <typename T> __device__ __forceinline__ T load_any(const uint8_t *p)
{
    if constexpr (sizeof(T) == 1) {
        return (T)*p;
    } else if constexpr (sizeof(T) == 2) {
        return (T)(p[0] | (p[1] << 8));
    } else {
        return __uint_as_float((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                               ((uint32_t)p[3] << 24));
    }
}

} // namespace

#endif
