/*
 * JPEG decoding on the GPUs' hardware decoders (nvJPEG, opened at run time)
 * for batch runs that count or equalize gray images: workers hand their JPEG
 * files to a queue that one thread per GPU takes batches from; each decodes
 * its batch into device memory (the luma plane, or for bgr2gray the Y, Cb
 * and Cr planes made into gray there with libjpeg-turbo's rules) and counts
 * (and equalizes) the gray planes there; only the counts (and the equalized
 * planes) come back. A file the
 * hardware does not take (progressive, CMYK, 12-bit, an RGB-coded JPEG,
 * anything nvJPEG fails on) is declined and the worker decodes it on the
 * CPU, so every file is counted once, with libjpeg-turbo's bits either way
 * (docs/gpu-decode.md).
 */
#ifndef IMGHIST_CLI_GPU_DECODE_H
#define IMGHIST_CLI_GPU_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "args.h"
#include "report.h"
#include "walk.h"

enum { IH_DECODE_AUTO = 0, IH_DECODE_CPU = 1, IH_DECODE_GPU = 2 };

typedef struct ih_gpu_decoder ih_gpu_decoder;

/* Whether this build has the GPU decoder (nvJPEG's header was found). */
int ih_gpu_decode_built(void);

/* Whether the run's options let the GPU decode (the modes where its output
 * is libjpeg-turbo's); when not, why, for --decode gpu's usage error. */
int ih_gpu_decode_fits(const ih_cli_args *a, const char **why);

/*
 * Whether data is a JPEG the GPU may decode to libjpeg-turbo's luma: SOF0 or
 * SOF1 (Huffman, sequential), 8-bit, 1 or 3 components that libjpeg takes as
 * gray (sampling factors 1x1) or YCbCr (not RGB: its gray is then
 * converted), and whole: every
 * segment inside the file, the scans ending in a marker, an EOI at the end.
 * libjpeg-turbo refuses a file that ends early; nvJPEG may not, so such
 * files go to the CPU, which says why.
 */
int ih_jpeg_fits_gpu(const uint8_t *data, size_t size);

/*
 * The decoder of a batch run over n_files files, or NULL (the CPU decodes
 * everything): --decode gpu opens nvJPEG now and fails (-1, reason in err)
 * without it; auto opens it in the background when the run is long enough
 * and the options fit, the workers decoding on the CPU meanwhile. cpu_jobs:
 * how many workers may decode on the CPU at once.
 */
int ih_gpu_decoder_start(const ih_cli_args *a, size_t n_files, unsigned cpu_jobs,
                         ih_gpu_decoder **out, char *err, size_t errlen);
/* Workers beyond cpu_jobs that wait on the GPU's batches (0: none). */
unsigned ih_gpu_extra_workers(const ih_gpu_decoder *d);

/*
 * Whether a JPEG whose first APP1 segment is app1 (NULL: none) is upright
 * for the CPU's decoder, which turns images by their EXIF orientation: 1
 * when provably so (no EXIF, or an orientation of 1 or none), 0 otherwise.
 */
int ih_exif_upright(const uint8_t *app1, size_t len);

/*
 * One file on the GPU: 1 when it was decoded and counted there (*w, *h and
 * hist set, hist's counts malloc'd; with --equalize *pixels is the equalized
 * plane, w x h, malloc'd), 0 when the worker is to decode it on the CPU as
 * usual, having first called ih_gpu_cpu_enter.
 */
int ih_gpu_decode_file(ih_gpu_decoder *d, const ih_file *f, uint32_t *w, uint32_t *h,
                       ih_hist_out *hist, uint8_t **pixels);
/* CPU decoding: at most cpu_jobs workers at once; no-ops for NULL. */
void ih_gpu_cpu_enter(ih_gpu_decoder *d);
void ih_gpu_cpu_leave(ih_gpu_decoder *d);

/* Ends the decoder thread and frees everything; -v: how many images each
 * side decoded. NULL: no-op. */
void ih_gpu_decoder_stop(ih_gpu_decoder *d);

#endif
