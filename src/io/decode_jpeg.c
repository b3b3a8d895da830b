/*
 * JPEG through libjpeg-turbo with its default settings (integer slow DCT,
 * fancy upsampling), the decoder OpenCV uses, so the decoded pixels are the
 * same as cv::imread's. A file that ends early is an error here unless
 * IMGHIST_P_LOAD_TRUNCATED asks to read it: then, as in cv::imread,
 * libjpeg-turbo ends the data with a made-up end-of-image marker and the
 * blocks it does not reach keep no coefficients (gray, or for a progressive
 * file what the scans read so far show). The EXIF orientation is reported
 * for the caller to apply, as cv::imread applies it.
 *
 * Gray, as OpenCV 4.6's JPEG decoder makes it (grfmt_jpeg.cpp, readData):
 * for cvtColor(BGR2GRAY) the colour is decoded and each row reduced with
 * gray.c's weights (ih_gray_from_rgb_row) as it comes, so that the colour
 * image is never held whole (held whole, it costs more in page faults than
 * the reduction itself); for IMREAD_GRAYSCALE (IMGHIST_GRAY_LUMA) a 1- or
 * 3-component file is decoded straight to JCS_GRAYSCALE, which for YCbCr is the Y plane as stored: the
 * chroma is neither decoded nor upsampled, and no colour is converted, so it
 * is also the fast way; a 4-component (CMYK, YCCK) file is decoded to CMYK
 * and reduced with OpenCV's 14-bit weights (utils.cpp,
 * icvCvt_CMYK2Gray_8u_C4C1R).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "decode.h"
#include "gray.h"
#include "orient.h"

struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    int truncated; /* pixels were made up: the data ended early or is corrupt */
    int corrupt;   /* ... and of those, corrupt (msg: libjpeg's words) */
    char msg[JMSG_LENGTH_MAX];
};

static void error_exit(j_common_ptr cinfo)
{
    struct jerr *e = (struct jerr *)cinfo->err;
    longjmp(e->jump, 1);
}

/*
 * libjpeg's warnings that mean it made up pixels: the data ends (EOF), a
 * marker comes where scan data should (an EOI written after a cut: "premature
 * end of data segment"), or the data is corrupt (a bad Huffman code, a lost
 * restart marker, a progression with holes). Not these: bytes
 * skipped before a marker (JWRN_EXTRANEOUS_DATA, which many cameras write and
 * which lose no pixel) and the header warnings.
 */
static void emit_message(j_common_ptr cinfo, int level)
{
    struct jerr *e = (struct jerr *)cinfo->err;
    if (level >= 0) {
        return;
    }
    switch (e->mgr.msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
        e->truncated = 1;
        break;
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_BOGUS_PROGRESSION:
    case JWRN_NOT_SEQUENTIAL:
        if (!e->corrupt) {
            e->mgr.format_message(cinfo, e->msg);
        }
        e->truncated = e->corrupt = 1;
        break;
    default:
        break;
    }
}

/* The refusal of a file whose pixels the decoder had to make up. */
static imghist_status made_up(imghist_ctx *ctx, const struct jerr *e, const char *name)
{
    if (e->corrupt) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: invalid JPEG (%s)", name, e->msg);
    }
    return ih_fail(ctx, IMGHIST_E_DECODE, "%s: invalid JPEG (file is truncated)", name);
}

static void output_message(j_common_ptr cinfo)
{
    (void)cinfo; /* the library never prints */
}

/* Adobe CMYK (stored inverted) to RGB, as OpenCV converts it. */
static void cmyk_to_rgb(const uint8_t *cmyk, uint8_t *rgb, size_t n)
{
    for (size_t i = 0; i < n; i++, cmyk += 4, rgb += 3) {
        const int k = cmyk[3];
        rgb[0] = (uint8_t)(k - ((255 - cmyk[0]) * k >> 8));
        rgb[1] = (uint8_t)(k - ((255 - cmyk[1]) * k >> 8));
        rgb[2] = (uint8_t)(k - ((255 - cmyk[2]) * k >> 8));
    }
}

/* The same, then OpenCV's 14-bit gray (icvCvt_CMYK2Gray_8u_C4C1R: C, M, Y
 * play R, G, B). */
static void cmyk_to_luma(const uint8_t *cmyk, uint8_t *gray, size_t n)
{
    for (size_t i = 0; i < n; i++, cmyk += 4) {
        const int k = cmyk[3];
        const int r = k - ((255 - cmyk[0]) * k >> 8);
        const int g = k - ((255 - cmyk[1]) * k >> 8);
        const int b = k - ((255 - cmyk[2]) * k >> 8);
        gray[i] = ih_luma14_from_rgb((uint32_t)r, (uint32_t)g, (uint32_t)b);
    }
}

/* The orientation from the first APP1 marker, as OpenCV 4.6's JPEG decoder
 * takes it. */
static int exif_orientation(const struct jpeg_decompress_struct *cinfo)
{
    jpeg_saved_marker_ptr app1 = cinfo->marker_list;
    while (app1 != NULL && app1->marker != JPEG_APP0 + 1) {
        app1 = app1->next;
    }
    return app1 != NULL ? ih_exif_orientation(app1->data, app1->data_length) : 0;
}

/*
 * libjpeg keeps every coefficient of a progressive file (128 bytes a block)
 * before its data proves the size, so a few kilobytes declaring 16000x16000
 * cost gigabytes. Baseline files keep no coefficients and are not bounded.
 *
 * Huffman coding: the DC scan codes every block of every component in at
 * least one bit (no Huffman code is shorter); with half a bit a block as the
 * bound, no complete file, however flat, falls under it.
 *
 * Arithmetic coding has no such floor: a flat 4000x3000 file is 0.009 bits
 * a block, as dense as a forged header. Up to 2^20 blocks (128 MiB of
 * coefficients) such files are taken; beyond, the Huffman bound holds for
 * them too (pictures carry two or more bits a block; only nearly flat ones
 * that large are lost, and arithmetic-coded files are rare).
 */
#define IH_ARITH_FREE_BLOCKS ((uint64_t)1 << 20)

static uint64_t coefficient_blocks(const struct jpeg_decompress_struct *cinfo)
{
    uint64_t blocks = 0;
    for (int c = 0; c < cinfo->num_components; c++) {
        blocks += (uint64_t)cinfo->comp_info[c].width_in_blocks *
                  cinfo->comp_info[c].height_in_blocks;
    }
    return blocks;
}

/* IMGHIST_OK, or the refusal (on ctx) of a progressive file whose `size`
 * bytes are too few for its blocks. */
static imghist_status check_progressive_size(imghist_ctx *ctx, const char *name,
                                             const struct jpeg_decompress_struct *cinfo,
                                             size_t size)
{
    if (!cinfo->progressive_mode) {
        return IMGHIST_OK;
    }
    const uint64_t blocks = coefficient_blocks(cinfo);
    const unsigned w = cinfo->image_width, h = cinfo->image_height;
    if (!cinfo->arith_code && (uint64_t)size * 16 < blocks) {
        return ih_fail(ctx, IMGHIST_E_DECODE,
                       "%s: invalid JPEG (file is truncated: %zu bytes cannot hold the first "
                       "scan of a %ux%u progressive image)",
                       name, size, w, h);
    }
    if (cinfo->arith_code && blocks > IH_ARITH_FREE_BLOCKS && (uint64_t)size * 16 < blocks) {
        return ih_fail(ctx, IMGHIST_E_DECODE,
                       "%s: refused: %zu bytes are under half a bit a block of an "
                       "arithmetic-coded %ux%u progressive image (nearly flat, or a forged "
                       "size), whose %" PRIu64 " MiB of coefficients would come first",
                       name, size, w, h, blocks * 128 >> 20);
    }
    return IMGHIST_OK;
}

/* IMGHIST_OK, or the refusal (on ctx) of what the header declares: a size
 * over the limits (IMGHIST_E_LIMIT), or a progressive file too short for it. */
static imghist_status check_declared(imghist_ctx *ctx, const char *name,
                                     const struct jpeg_decompress_struct *cinfo,
                                     const ih_load_opts *opts, size_t size)
{
    if (ih_check_image_size(ctx, &opts->limits, name, cinfo->image_width, cinfo->image_height) !=
        IMGHIST_OK) {
        return IMGHIST_E_LIMIT;
    }
    return check_progressive_size(ctx, name, cinfo, size);
}

/*
 * Whether a progressive file's scans stopped before every coefficient of
 * every component reached full precision (libjpeg's coef_bits: -1 never
 * sent, else the last scan's low bit). Arithmetic-coded data that ends is
 * taken as zeros by design, so a file cut short and closed with an EOI gives
 * libjpeg nothing to warn about; the scans it lacks show here. Huffman files
 * cut at a scan's end show here too.
 */
static int progression_incomplete(const struct jpeg_decompress_struct *cinfo)
{
    if (!cinfo->progressive_mode || cinfo->coef_bits == NULL) {
        return 0;
    }
    for (int c = 0; c < cinfo->num_components; c++) {
        for (int k = 0; k < DCTSIZE2; k++) {
            if (cinfo->coef_bits[c][k] != 0) {
                return 1;
            }
        }
    }
    return 0;
}

imghist_status ih_decode_jpeg(imghist_ctx *ctx, const uint8_t *data, size_t size,
                              const char *name, const ih_load_opts *opts, ih_raw *out)
{
    struct jpeg_decompress_struct cinfo;
    struct jerr err;
    uint8_t *volatile samples = NULL;
    uint8_t *volatile cmyk_row = NULL;
    uint8_t *volatile rgb_row = NULL; /* bgr2gray: one decoded row */
    volatile imghist_status st = IMGHIST_E_DECODE;
    volatile int said = 0; /* the error is already on ctx */

    memset(&cinfo, 0, sizeof cinfo);
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = error_exit;
    err.mgr.emit_message = emit_message;
    err.mgr.output_message = output_message;
    err.truncated = err.corrupt = 0;
    err.msg[0] = '\0';
    if (setjmp(err.jump)) {
        char why[JMSG_LENGTH_MAX] = "";
        if (!said) {
            err.mgr.format_message((j_common_ptr)&cinfo, why);
        }
        jpeg_destroy_decompress(&cinfo);
        free(samples);
        free(cmyk_row);
        free(rgb_row);
        if (!said) {
            return ih_fail(ctx, st, "%s: invalid JPEG (%s)", name, why);
        }
        return st;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xffff);
    jpeg_read_header(&cinfo, TRUE);
    const int orientation = exif_orientation(&cinfo);
    st = check_declared(ctx, name, &cinfo, opts, size);
    if (st != IMGHIST_OK) {
        said = 1;
        longjmp(err.jump, 1);
    }
    st = IMGHIST_E_DECODE;
    const int cmyk = cinfo.num_components == 4;
    /* IMGHIST_P_LOAD_CHANNELS = 1: gray files as gray, the rest as RGB. */
    const int luma = opts->mode == IMGHIST_GRAY_LUMA && !opts->keep_channels;
    cinfo.out_color_space = cmyk                                ? JCS_CMYK
                            : cinfo.num_components == 1 || luma ? JCS_GRAYSCALE
                                                                : JCS_RGB;
    jpeg_start_decompress(&cinfo); /* a progressive file's scans are all read here */
    if (progression_incomplete(&cinfo)) {
        err.truncated = 1;
    }
    const uint32_t w = cinfo.output_width, h = cinfo.output_height;
    /* BGR2GRAY: colour decoded row by row and reduced at once. */
    const int row_gray = !luma && !opts->keep_channels && cinfo.out_color_space != JCS_GRAYSCALE;
    const int channels = cinfo.out_color_space == JCS_GRAYSCALE || (cmyk && luma) || row_gray
                             ? 1
                             : 3;
    samples = malloc((size_t)w * h * channels);
    if (cmyk) {
        cmyk_row = malloc((size_t)w * 4);
    }
    if (row_gray) {
        rgb_row = malloc((size_t)w * 3);
    }
    const int components = cmyk ? 4 : cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3;
    if (samples == NULL || (cmyk && cmyk_row == NULL) || (row_gray && rgb_row == NULL) ||
        cinfo.output_components != components) {
        st = samples == NULL ? ih_fail(ctx, IMGHIST_E_NOMEM, "%s: out of memory", name)
                             : ih_fail(ctx, IMGHIST_E_DECODE, "%s: unsupported JPEG colour layout",
                                       name);
        said = 1;
        longjmp(err.jump, 1);
    }
    while (cinfo.output_scanline < h) {
        uint8_t *dst = samples + (size_t)cinfo.output_scanline * w * channels;
        JSAMPROW row = cmyk ? cmyk_row : row_gray ? rgb_row : dst;
        if (jpeg_read_scanlines(&cinfo, &row, 1) != 1) {
            break;
        }
        if (cmyk) {
            if (luma) {
                cmyk_to_luma(cmyk_row, dst, w);
            } else {
                cmyk_to_rgb(cmyk_row, row_gray ? rgb_row : dst, w);
            }
        }
        if (row_gray) {
            ih_gray_from_rgb_row(rgb_row, dst, w);
        }
        if (err.truncated && !opts->read_truncated) {
            break;
        }
    }
    if ((err.truncated && !opts->read_truncated) || cinfo.output_scanline < h) {
        st = made_up(ctx, &err, name);
        said = 1;
        longjmp(err.jump, 1);
    }
    jpeg_finish_decompress(&cinfo);
    if (err.truncated && !opts->read_truncated) { /* the end-of-image marker is missing */
        st = made_up(ctx, &err, name);
        said = 1;
        longjmp(err.jump, 1);
    }
    jpeg_destroy_decompress(&cinfo);
    free(cmyk_row);
    free(rgb_row);
    out->width = w;
    out->height = h;
    out->channels = channels;
    out->samples = samples;
    out->orientation = orientation;
    out->truncated = err.truncated;
    return IMGHIST_OK;
}
