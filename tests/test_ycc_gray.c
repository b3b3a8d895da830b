/*
 * The YCbCr planes to gray conversion (src/io/ycc_gray.c) against imghist's
 * own bgr2gray JPEG decode, byte for byte: made JPEGs of every sampling
 * layout (sizes from 1x1 up, restart markers, gray) and every *.jpg in the
 * folders given as arguments; the planes come from libjpeg's raw data
 * output. Layouts ih_jpeg_color_exact refuses are counted, not compared.
 * usage: test_ycc_gray [DIR...]
 */
#include <stdio.h>
#include <stdlib.h>

#include "ycc_cases.h"
#include "ycc_gray.h"

/* The layouts nvJPEG's planes are trusted for: the measured ones only. */
static int check_nvjpeg_layouts(void)
{
    static const struct {
        int components, h[3], v[3], want;
    } cases[] = {
        {1, {1}, {1}, 1},           {1, {2}, {2}, 0},           {3, {1, 1, 1}, {1, 1, 1}, 1},
        {3, {2, 1, 1}, {1, 1, 1}, 1}, {3, {2, 1, 1}, {2, 1, 1}, 1}, {3, {1, 1, 1}, {2, 1, 1}, 1},
        {3, {2, 2, 2}, {1, 1, 1}, 1}, {3, {2, 1, 1}, {2, 2, 2}, 1}, {3, {2, 2, 2}, {2, 1, 1}, 1},
        {3, {4, 1, 1}, {1, 1, 1}, 0}, {3, {4, 1, 1}, {2, 1, 1}, 0}, {3, {2, 1, 2}, {2, 1, 2}, 0},
        {3, {1, 2, 2}, {1, 2, 2}, 0}, {3, {3, 1, 1}, {1, 1, 1}, 0}, {4, {1, 1, 1}, {1, 1, 1}, 0},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (ih_nvjpeg_yuv_exact(cases[i].components, cases[i].h, cases[i].v) != cases[i].want) {
            printf("FAIL ih_nvjpeg_yuv_exact case %zu\n", i);
            bad = 1;
        }
    }
    const int frac_h[3] = {3, 2, 2}, frac_v[3] = {1, 1, 1};
    if (ih_jpeg_color_exact(3, frac_h, frac_v)) {
        printf("FAIL ih_jpeg_color_exact takes factors 3 and 2\n");
        bad = 1;
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (check_nvjpeg_layouts() != 0) {
        return 1;
    }
    ycc_case *cases;
    size_t n;
    if (ycc_inputs(argv + 1, argc - 1, &cases, &n) != 0) {
        return 1;
    }
    size_t same = 0, differ = 0, declined = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        ycc_raw raw;
        uint32_t w = 0, h = 0;
        if (ycc_raw_read(cases[i].data, cases[i].size, &raw) != 0) {
            printf("skip %s: not a 1- or 3-component JPEG libjpeg reads raw\n", cases[i].name);
            skipped++;
            continue;
        }
        if (raw.components == 3 && !raw.ycc) {
            printf("skip %s: not YCbCr\n", cases[i].name);
            skipped++;
            ycc_raw_free(&raw);
            continue;
        }
        uint8_t *want = ycc_cpu_gray(cases[i].data, cases[i].size, &w, &h);
        uint8_t *got = malloc((size_t)raw.width * raw.height);
        if (want == NULL || got == NULL || w != raw.width || h != raw.height) {
            printf("FAIL %s: decode failed or sizes differ\n", cases[i].name);
            differ++;
        } else if (ih_ycc_planes_to_gray((const uint8_t *const *)raw.planes, raw.pitches, raw.h,
                                         raw.v, raw.components, w, h, got, w) != 0) {
            printf("declined %s (%s)\n", cases[i].name, raw.layout);
            declined++;
        } else {
            size_t bad = 0, first = 0;
            for (size_t p = 0; p < (size_t)w * h; p++) {
                if (got[p] != want[p] && bad++ == 0) {
                    first = p;
                }
            }
            if (bad == 0) {
                same++;
            } else {
                printf("FAIL %s (%s, %ux%u): %zu pixels differ, first at (%zu, %zu): %u, want %u\n",
                       cases[i].name, raw.layout, w, h, bad, first % w, first / w, got[first],
                       want[first]);
                differ++;
            }
        }
        free(want);
        free(got);
        ycc_raw_free(&raw);
    }
    printf("%zu identical, %zu differ, %zu declined, %zu skipped\n", same, differ, declined,
           skipped);
    ycc_inputs_free(cases, n);
    return differ == 0 && same > 0 ? 0 : 1;
}
