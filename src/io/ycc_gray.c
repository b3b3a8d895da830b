/* The CPU reference of the YCbCr planes to BGR2GRAY conversion. */
#include "ycc_gray.h"

#include <string.h>

#include "ycc_gray_rules.h"

int ih_jpeg_color_exact(int components, const int h[], const int v[])
{
    if (components == 1) {
        return 1;
    }
    if (components != 3) {
        return 0;
    }
    int mh = 0, mv = 0;
    for (int c = 0; c < 3; c++) {
        if (h[c] < 1 || h[c] > 4 || v[c] < 1 || v[c] > 4) {
            return 0;
        }
        mh = h[c] > mh ? h[c] : mh;
        mv = v[c] > mv ? v[c] : mv;
    }
    for (int c = 0; c < 3; c++) {
        if (mh % h[c] != 0 || mv % v[c] != 0) {
            return 0;
        }
    }
    return 1;
}

int ih_nvjpeg_yuv_exact(int components, const int h[], const int v[])
{
    if (components == 1) {
        return h[0] == 1 && v[0] == 1;
    }
    if (components != 3 || h[1] != h[2] || v[1] != v[2]) {
        return 0;
    }
    static const int measured[][4] = {{1, 1, 1, 1}, {2, 1, 1, 1}, {2, 2, 1, 1}, {1, 2, 1, 1},
                                      {2, 1, 2, 1}, {2, 2, 1, 2}, {2, 2, 2, 1}};
    for (size_t k = 0; k < sizeof measured / sizeof measured[0]; k++) {
        if (h[0] == measured[k][0] && v[0] == measured[k][1] && h[1] == measured[k][2] &&
            v[1] == measured[k][3]) {
            return 1;
        }
    }
    return 0;
}

/* Component c's plane description for an image of width x height. */
static ih_ycc_comp comp_of(const uint8_t *plane, size_t pitch, int h, int v, int mh, int mv,
                           uint32_t width, uint32_t height)
{
    ih_ycc_comp c;
    c.data = plane;
    c.pitch = pitch;
    c.width = (uint32_t)(((uint64_t)width * (uint32_t)h + (uint32_t)mh - 1) / (uint32_t)mh);
    c.height = (uint32_t)(((uint64_t)height * (uint32_t)v + (uint32_t)mv - 1) / (uint32_t)mv);
    c.rh = (uint8_t)(mh / h);
    c.rv = (uint8_t)(mv / v);
    return c;
}

int ih_ycc_planes_to_gray(const uint8_t *const planes[], const size_t pitches[], const int h[],
                          const int v[], int components, uint32_t width, uint32_t height,
                          uint8_t *gray, size_t gray_pitch)
{
    if (!ih_jpeg_color_exact(components, h, v)) {
        return -1;
    }
    if (components == 1) {
        for (uint32_t y = 0; y < height; y++) {
            memcpy(gray + (size_t)y * gray_pitch, planes[0] + (size_t)y * pitches[0], width);
        }
        return 0;
    }
    const int mh = h[0] > h[1] ? (h[0] > h[2] ? h[0] : h[2]) : (h[1] > h[2] ? h[1] : h[2]);
    const int mv = v[0] > v[1] ? (v[0] > v[2] ? v[0] : v[2]) : (v[1] > v[2] ? v[1] : v[2]);
    ih_ycc_comp comp[3];
    int method[3];
    for (int c = 0; c < 3; c++) {
        comp[c] = comp_of(planes[c], pitches[c], h[c], v[c], mh, mv, width, height);
        method[c] = ih_ycc_up_method(comp[c].rh, comp[c].rv, comp[c].width);
    }
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *row = gray + (size_t)y * gray_pitch;
        for (uint32_t x = 0; x < width; x++) {
            row[x] = ih_ycc_gray(ih_ycc_upsampled(&comp[0], method[0], x, y),
                                 ih_ycc_upsampled(&comp[1], method[1], x, y),
                                 ih_ycc_upsampled(&comp[2], method[2], x, y));
        }
    }
    return 0;
}
