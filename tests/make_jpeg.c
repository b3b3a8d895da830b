/*
 * Writes JPEGs the OpenCV reference test cannot make with OpenCV itself:
 * four-component CMYK or YCCK (libjpeg converts CMYK to YCCK, and adds the
 * Adobe marker Photoshop files have), RGB with an EXIF orientation, and
 * arithmetic-coded progressive gray files: "arith" (the samples below) and
 * "arith-flat" (every sample 128; up to 16384 a side); and, for the GPU
 * decoder's tests, Huffman-coded YCbCr at a chosen subsampling ("444",
 * "422", "420", "440", "411"), the same progressive ("p420"), with restart
 * markers every 3 MCUs ("r420") or at quality 60 ("q420"), and gray ("gray").
 * usage: make_jpeg OUT.jpg KIND WIDTH HEIGHT SEED [ORIENTATION]
 * ORIENTATION (0..65535) goes into an APP1 Exif block, IFD 0, as a SHORT;
 * big-endian ("MM") when it is odd, little-endian ("II") when even, so that
 * both byte orders are exercised. The samples mix gradients and noise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

/* An n-byte unsigned integer, big- or little-endian. */
static void put(unsigned char *p, unsigned long v, int n, int big_endian)
{
    for (int i = 0; i < n; i++) {
        p[big_endian ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
    }
}

int main(int argc, char **argv)
{
    const char *kind = argc > 2 ? argv[2] : "";
    const int rgb = strcmp(kind, "rgb") == 0;
    const int flat = strcmp(kind, "arith-flat") == 0;
    const int arith = flat || strcmp(kind, "arith") == 0;
    const int gray = strcmp(kind, "gray") == 0;
    /* YCbCr: the luma's sampling factors (chroma 1x1), then p, r or q. */
    static const struct {
        const char *name;
        int h, v;
    } ycc_kinds[] = {{"444", 1, 1}, {"422", 2, 1}, {"420", 2, 2}, {"440", 1, 2}, {"411", 4, 1},
                     {"p420", 2, 2}, {"r420", 2, 2}, {"q420", 2, 2}};
    int ycc = -1;
    for (int k = 0; k < (int)(sizeof ycc_kinds / sizeof ycc_kinds[0]); k++) {
        if (strcmp(kind, ycc_kinds[k].name) == 0) {
            ycc = k;
        }
    }
    if ((argc != 6 && argc != 7) || (!rgb && !arith && !gray && ycc < 0 &&
                                     strcmp(kind, "cmyk") != 0 && strcmp(kind, "ycck") != 0)) {
        fprintf(stderr, "usage: make_jpeg OUT.jpg rgb|cmyk|ycck|arith|arith-flat|gray|444|422|"
                        "420|440|411|p420|r420|q420 WIDTH HEIGHT SEED [ORIENTATION]\n");
        return 2;
    }
    const int channels = rgb || ycc >= 0 ? 3 : arith || gray ? 1 : 4;
    const int w = atoi(argv[3]), h = atoi(argv[4]);
    const int most = flat ? 16384 : 4096;
    uint32_t state = (uint32_t)strtoul(argv[5], NULL, 10) | 1u;
    if (w <= 0 || h <= 0 || w > most || h > most) {
        fprintf(stderr, "make_jpeg: bad size\n");
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
    c.input_components = channels;
    c.in_color_space = rgb || ycc >= 0 ? JCS_RGB : arith || gray ? JCS_GRAYSCALE : JCS_CMYK;
    jpeg_set_defaults(&c);
    if (ycc >= 0) {
        c.comp_info[0].h_samp_factor = ycc_kinds[ycc].h;
        c.comp_info[0].v_samp_factor = ycc_kinds[ycc].v;
        if (kind[0] == 'p') {
            jpeg_simple_progression(&c);
        }
        if (kind[0] == 'r') {
            c.restart_in_rows = 0;
            c.restart_interval = 3;
        }
    } else if (arith) {
        jpeg_simple_progression(&c);
        c.arith_code = TRUE;
    } else if (!rgb && !gray) {
        jpeg_set_colorspace(&c, strcmp(kind, "ycck") == 0 ? JCS_YCCK : JCS_CMYK);
    }
    jpeg_set_quality(&c, kind[0] == 'q' ? 60 : 92, TRUE);
    jpeg_start_compress(&c, TRUE);
    if (argc == 7) {
        const unsigned o = (unsigned)strtoul(argv[6], NULL, 10) & 0xffffu;
        const int be = o & 1;
        /* "Exif\0\0", then TIFF: byte order, 42, IFD 0 at offset 8 with one
         * entry (Orientation, SHORT, count 1, the value), no next IFD. */
        unsigned char app1[6 + 26] = "Exif";
        unsigned char *t = app1 + 6;
        t[0] = t[1] = be ? 'M' : 'I';
        put(t + 2, 42, 2, be);
        put(t + 4, 8, 4, be);
        put(t + 8, 1, 2, be);
        put(t + 10, 0x0112, 2, be);
        put(t + 12, 3, 2, be);
        put(t + 14, 1, 4, be);
        put(t + 18, o, 2, be);
        put(t + 20, 0, 2, be);
        put(t + 22, 0, 4, be);
        jpeg_write_marker(&c, JPEG_APP0 + 1, app1, sizeof app1);
    }
    unsigned char *row = malloc((size_t)w * channels);
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
            for (int k = 0; k < channels; k++) {
                const int s = v[k] + noise;
                row[channels * x + k] = flat ? 128 : (unsigned char)(s < 0 ? 0 : s > 255 ? 255 : s);
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
