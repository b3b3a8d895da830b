/*
 * One entry of an equalization LUT, on the device, in the same operations
 * and precision as core/equalize_lut.c (imghist.h states the rules). Shared
 * by every kernel that makes a LUT: the 8-bit histogram's last block, the
 * LUT kernel of histograms already counted, and the batch kernels.
 */
#ifndef IMGHIST_EQUALIZE_RULES_CUH
#define IMGHIST_EQUALIZE_RULES_CUH

#include <stdint.h>

/* OpenCV's cv::equalizeHist for levels top + 1: entry v, with cdf the
 * inclusive cumulative count at v, first the first non-empty level and hf its
 * count, total the pixel count (> 0). */
__device__ __forceinline__ uint32_t ih_lut_opencv(uint32_t v, unsigned long long cdf,
                                                  unsigned long long total, uint32_t first,
                                                  unsigned long long hf, uint32_t top)
{
    if (hf == total) {
        return v; /* one value counted: the identity (core/equalize_lut.c) */
    }
    if (v <= first) {
        return 0;
    }
    /* c(v) = hist[first+1] + ... + hist[v] = cdf - hf (bins below first are 0). */
    const float topf = (float)top;
    const float scale = __fdiv_rn(topf, __ll2float_rn((long long)(total - hf)));
    const float x = rintf(__fmul_rn(__ll2float_rn((long long)(cdf - hf)), scale));
    return x > topf ? top : (uint32_t)x;
}

/* PIL's ImageOps.equalize (8-bit): step = (total - count of the largest value
 * present) / 255; entry v, with below the count of values under v. */
__device__ __forceinline__ uint32_t ih_lut_pil(uint32_t v, unsigned long long below,
                                               unsigned long long step)
{
    if (step == 0) {
        return v;
    }
    const unsigned long long x = (step / 2 + below) / step;
    return x < 255 ? (uint32_t)x : 255u;
}

#endif
