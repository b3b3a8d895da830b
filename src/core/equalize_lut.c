/* The equalization lookup table, bit-exact with OpenCV's cv::equalizeHist. */
#include <math.h>

#include "core.h"

imghist_status imghist_equalize_lut(const uint64_t hist[256], uint8_t lut[256])
{
    if (hist == NULL || lut == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    uint64_t total = 0;
    for (int b = 0; b < IH_U8_BINS; b++) {
        total += hist[b];
    }
    if (total == 0) {
        return IMGHIST_E_INVALID_ARG;
    }

    int first = 0;
    while (hist[first] == 0) {
        first++;
    }
    if (hist[first] == total) {
        /* One value everywhere: OpenCV maps the image onto itself. */
        for (int b = 0; b < IH_U8_BINS; b++) {
            lut[b] = (uint8_t)first;
        }
        return IMGHIST_OK;
    }

    /* Same operations, in the same precision, as OpenCV (and as the CUDA kernel):
     * the count converts to float, one float product, round half to even. */
    const float scale = 255.0f / (float)(int64_t)(total - hist[first]);
    uint64_t sum = 0;
    for (int b = 0; b <= first; b++) {
        lut[b] = 0;
    }
    for (int b = first + 1; b < IH_U8_BINS; b++) {
        sum += hist[b];
        const float v = rintf((float)(int64_t)sum * scale);
        lut[b] = (uint8_t)(v > 255.0f ? 255.0f : v);
    }
    return IMGHIST_OK;
}
