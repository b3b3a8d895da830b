/*
 * Writes a four-component JPEG for the OpenCV reference test, which cannot
 * make one with OpenCV itself: CMYK or YCCK (libjpeg converts CMYK to YCCK),
 * with the Adobe marker libjpeg adds for both, as Photoshop files have.
 * usage: make_cmyk_jpeg OUT.jpg cmyk|ycck WIDTH HEIGHT SEED
 * The samples mix gradients and noise, so that every channel matters.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[2], "cmyk") != 0 && strcmp(argv[2], "ycck") != 0)) {
        fprintf(stderr, "usage: make_cmyk_jpeg OUT.jpg cmyk|ycck WIDTH HEIGHT SEED\n");
        return 2;
    }
    const int w = atoi(argv[3]), h = atoi(argv[4]);
    uint32_t state = (uint32_t)strtoul(argv[5], NULL, 10) | 1u;
    if (w <= 0 || h <= 0 || w > 4096 || h > 4096) {
        fprintf(stderr, "make_cmyk_jpeg: bad size\n");
        return 2;
    }
    FILE *fp = fopen(argv[1], "wb");
    if (fp == NULL) {
        perror(argv[1]);
        return 1;
    }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err); /* libjpeg's default handler exits on error */
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, fp);
    c.image_width = (JDIMENSION)w;
    c.image_height = (JDIMENSION)h;
    c.input_components = 4;
    c.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&c);
    jpeg_set_colorspace(&c, strcmp(argv[2], "ycck") == 0 ? JCS_YCCK : JCS_CMYK);
    jpeg_set_quality(&c, 92, TRUE);
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)w * 4);
    if (row == NULL) {
        return 1;
    }
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            const int noise = (int)(state & 31) - 16;
            const int v[4] = {x * 255 / w, y * 255 / h, (x + y) * 127 / (w + h) + 64,
                              ((x / 7 + y / 5) & 1) ? 40 : 200};
            for (int k = 0; k < 4; k++) {
                const int s = v[k] + noise;
                row[4 * x + k] = (unsigned char)(s < 0 ? 0 : s > 255 ? 255 : s);
            }
        }
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(&c, rows, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    free(row);
    if (fclose(fp) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
