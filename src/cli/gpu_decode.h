/*
 * The batch run's side of decoding JPEGs on the GPUs' hardware decoders:
 * which options allow it, and the library's engine
 * (imghist_exp_jpeg_gpu_*, imghist_experimental.h) wrapped for the
 * workers' records. A file the GPUs decline is decoded by its worker on the
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

enum { IH_DECODE_AUTO = IMGHIST_DECODE_AUTO, IH_DECODE_CPU = IMGHIST_DECODE_CPU,
       IH_DECODE_GPU = IMGHIST_DECODE_GPU };

typedef struct ih_gpu_decoder ih_gpu_decoder;

/* Whether this build has the GPU decoder (nvJPEG's header was found). */
int ih_gpu_decode_built(void);

/* Whether the run's options let the GPU decode (the modes where its output
 * is libjpeg-turbo's); when not, why, for --decode gpu's usage error. */
int ih_gpu_decode_fits(const ih_cli_args *a, const char **why);

/*
 * The decoder of a batch run over n_files files of `bytes` in all, or NULL
 * (the CPU decodes everything): --decode gpu opens nvJPEG now and fails
 * (-1, reason in err) without it; auto opens it in the background when the
 * run is long enough and the options fit, the workers decoding on the CPU
 * meanwhile. cpu_jobs: how many workers may decode on the CPU at once.
 */
int ih_gpu_decoder_start(const ih_cli_args *a, size_t n_files, uint64_t bytes,
                         unsigned cpu_jobs, ih_gpu_decoder **out, char *err, size_t errlen);
/* Workers beyond cpu_jobs that wait on the GPU's batches (0: none). */
unsigned ih_gpu_extra_workers(const ih_gpu_decoder *d);

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

/* Ends the decoder's threads and frees everything; -v: how many images each
 * side decoded. 1 when auto left a GPU still opening, which the process
 * must not wait for (main ends with _exit); NULL: no-op, 0. */
int ih_gpu_decoder_stop(ih_gpu_decoder *d);

#endif
