/*
 * Equalization lookup tables: OpenCV's cv::equalizeHist for 256 levels, bit
 * for bit, and the same formula for 65536 levels; PIL's ImageOps.equalize for
 * 256 levels (imghist.h). The CUDA kernels compute the same operations in the
 * same precision.
 */
#include <math.h>

#include "core.h"

/*
 * min(rintf(x), top) for 0 <= x < 2^23 (sum * scale below is at most about
 * top, 65535): adding and taking away 2^23 rounds x to an integer in the
 * current rounding mode, as rintf does, in two instructions where the
 * baseline x86-64 target (no SSE4.1 roundss) makes rintf about a dozen, in
 * a loop over 65536 levels. Float arithmetic as written (FLT_EVAL_METHOD 0,
 * no -ffast-math) keeps the sum's rounding; every float in [0, 70000] gives
 * rintf's answer (an exhaustive check of the 1.2e9 values).
 */
static inline float round_top(float x, float top)
{
    const float big = 8388608.0f; /* 2^23 */
    const float v = (x + big) - big;
    return v > top ? top : v;
}

/* lut8 or lut16 (one of them non-NULL) from a histogram of `levels` bins. */
static imghist_status make_lut(const uint64_t *hist, uint32_t levels, uint8_t *lut8,
                               uint16_t *lut16)
{
    uint64_t total = 0;
    for (uint32_t b = 0; b < levels; b++) {
        total += hist[b];
    }
    if (total == 0) {
        return IMGHIST_E_INVALID_ARG;
    }
    uint32_t first = 0;
    while (hist[first] == 0) {
        first++;
    }
#define IH_SET(b, v) (lut8 != NULL ? (void)(lut8[b] = (uint8_t)(v)) : (void)(lut16[b] = (uint16_t)(v)))
    if (hist[first] == total) {
        /* One value counted: the identity. OpenCV sets a constant image to
         * its value, which is the same image; under a mask that selects one
         * value, the pixels outside it keep theirs too. */
        for (uint32_t b = 0; b < levels; b++) {
            IH_SET(b, b);
        }
        return IMGHIST_OK;
    }
    /* Same operations, in the same precision, as OpenCV (and as the CUDA
     * kernels): the count converts to float, one float product, round half
     * to even, saturate. */
    const float top = (float)(levels - 1);
    const float scale = top / (float)(int64_t)(total - hist[first]);
    for (uint32_t b = 0; b <= first; b++) {
        IH_SET(b, 0);
    }
#undef IH_SET
    uint64_t sum = 0;
    if (lut8 != NULL) {
        for (uint32_t b = first + 1; b < levels; b++) {
            sum += hist[b];
            lut8[b] = (uint8_t)round_top((float)(int64_t)sum * scale, top);
        }
    } else {
        for (uint32_t b = first + 1; b < levels; b++) {
            sum += hist[b];
            lut16[b] = (uint16_t)round_top((float)(int64_t)sum * scale, top);
        }
    }
    return IMGHIST_OK;
}

imghist_status ih_equalize_lut_u8(const uint64_t hist[256], uint8_t lut[256])
{
    return make_lut(hist, 256, lut, NULL);
}

void ih_equalize_lut_u16_at(const uint16_t *count, const uint16_t *levels, size_t n,
                            uint64_t total, uint16_t *lut)
{
    /* make_lut's operations at the levels present: below them all, between
     * them, no count adds to the sum */
    const uint32_t first = levels[0];
    if (count[first] == total) {
        lut[first] = (uint16_t)first; /* one value counted: the identity */
        return;
    }
    const float top = 65535.0f;
    const float scale = top / (float)(int64_t)(total - count[first]);
    lut[first] = 0;
    uint64_t sum = 0;
    for (size_t k = 1; k < n; k++) {
        sum += count[levels[k]];
        lut[levels[k]] = (uint16_t)round_top((float)(int64_t)sum * scale, top);
    }
}

imghist_status ih_equalize_lut_u16(const uint64_t hist[IH_U16_LEVELS],
                                   uint16_t lut[IH_U16_LEVELS])
{
    return make_lut(hist, IH_U16_LEVELS, NULL, lut);
}

imghist_status ih_equalize_lut_pil(const uint64_t hist[256], uint8_t lut[256])
{
    uint64_t total = 0, top = 0; /* top: the count of the largest value present */
    for (uint32_t b = 0; b < 256; b++) {
        total += hist[b];
        top = hist[b] != 0 ? hist[b] : top;
    }
    if (total == 0) {
        return IMGHIST_E_INVALID_ARG;
    }
    const uint64_t step = (total - top) / 255;
    uint64_t n = step / 2;
    for (uint32_t b = 0; b < 256; b++) {
        if (step == 0) {
            lut[b] = (uint8_t)b;
            continue;
        }
        const uint64_t v = n / step;
        lut[b] = (uint8_t)(v < 255 ? v : 255);
        n += hist[b];
    }
    return IMGHIST_OK;
}

imghist_status imghist_equalize_lut(const uint64_t *hist, uint32_t levels, imghist_method method,
                                    void *lut)
{
    if (hist == NULL || lut == NULL || (levels != 256 && levels != IH_U16_LEVELS) ||
        (method != IMGHIST_EQ_OPENCV && method != IMGHIST_EQ_PIL)) {
        return IMGHIST_E_INVALID_ARG;
    }
    if (levels == IH_U16_LEVELS) {
        return method == IMGHIST_EQ_PIL ? IMGHIST_E_UNSUPPORTED : ih_equalize_lut_u16(hist, lut);
    }
    return method == IMGHIST_EQ_PIL ? ih_equalize_lut_pil(hist, lut)
                                    : ih_equalize_lut_u8(hist, lut);
}
