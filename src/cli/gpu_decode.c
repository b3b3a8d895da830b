/*
 * The batch run's GPU decoding (gpu_decode.h): the options' check, the
 * library's engine started with the run's parameters, GPUs and spec, and
 * its answers turned into the workers' records.
 */
#include "gpu_decode.h"

#include <stdio.h>
#include <stdlib.h>

#include "cli_context.h"
#include "imghist_experimental.h"
#include "log.h"
#include "measure.h"
#include "mpi_run.h"

struct ih_gpu_decoder {
    imghist_exp_jpeg_gpu *engine;
    ih_hist_out binning; /* the spec's fields for the records */
    size_t counters_each;
};

int ih_gpu_decode_built(void)
{
    return imghist_exp_jpeg_gpu_built();
}

int ih_gpu_decode_fits(const ih_cli_args *a, const char **why)
{
    /* Both gray modes: --gray luma takes the hardware's luma plane, which is
     * libjpeg-turbo's; bgr2gray makes the gray from its Y, Cb and Cr planes
     * with libjpeg-turbo's upsampling and colour rules, not nvJPEG's.
     * --plot-dir draws on the workers' CPU path. */
    const char *no = a->channels || a->native_depth ? "not with --channels or --depth native"
                     : a->plot_dir != NULL || a->json_out != NULL
                         ? "it writes --csv, --total and --equalize only (not --plot-dir or "
                           "--json)"
                     : a->mask != NULL || a->joint != NULL ? "not with --mask or --joint"
                     : a->read_truncated ? "not with --read-truncated"
                                         : NULL;
    if (why != NULL) {
        *why = no;
    }
    return no == NULL;
}

int ih_gpu_decoder_start(const ih_cli_args *a, size_t n_files, uint64_t bytes,
                         unsigned cpu_jobs, ih_gpu_decoder **out, char *err, size_t errlen)
{
    *out = NULL;
    const int want = a->decode == IH_DECODE_GPU;
    if (a->decode == IH_DECODE_CPU || !ih_gpu_decode_fits(a, NULL) ||
        (!want && a->backend == IMGHIST_BACKEND_CPU)) {
        return 0;
    }
    ih_gpu_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) {
        snprintf(err, errlen, "out of memory");
        return want ? -1 : 0;
    }
    /* Every JPEG here is 8-bit: the spec of an 8-bit image under the options. */
    const imghist_view u8 = {.dtype = IMGHIST_U8, .width = 1, .height = 1, .pitch = 1};
    imghist_histspec spec;
    char msg[256];
    if (ih_cli_spec(NULL, a, 0, &u8, NULL, &spec, &d->binning, msg, sizeof msg) != IMGHIST_OK) {
        free(d);
        return 0; /* the CPU's path says why, for each image */
    }
    d->binning.channels = 1;
    d->binning.names = "l";
    d->counters_each = imghist_counts_len(&spec, IMGHIST_U8, 1);
    /* The engine takes the run's parameters (limits, gray mode) from a
     * context; a CPU one, so that CUDA starts on the engine's threads. */
    ih_cli_args cpu = *a;
    cpu.backend = IMGHIST_BACKEND_CPU;
    imghist_ctx *ctx = NULL;
    if (d->counters_each != ih_hist_stride(&d->binning) ||
        ih_make_context_on(&cpu, 1, -1, &ctx) != IH_EXIT_OK) {
        free(d);
        snprintf(err, errlen, "--decode gpu: no context for the run's parameters");
        return want ? -1 : 0;
    }
    const imghist_exp_jpeg_gpu_opts o = {
        .mode = want ? IMGHIST_DECODE_GPU : IMGHIST_DECODE_AUTO,
        .n_files = n_files,
        .n_bytes = bytes,
        .equalize = a->equalize_out != NULL,
        .spec = &spec,
        .gpus = a->scale.gpus,
        .n_gpus = a->scale.n_gpus,
        .local_rank = ih_mpi.local_rank,
        .local_size = ih_mpi.local_size,
        .cpu_jobs = cpu_jobs,
        /* A run done before the GPU is open ends without waiting for it
         * (main then ends with _exit); not under MPI, whose ranks end in step. */
        .leave_opening = !want && !ih_mpi.active};
    const imghist_status st = imghist_exp_jpeg_gpu_start(ctx, &o, &d->engine);
    if (st != IMGHIST_OK) {
        snprintf(err, errlen, "--decode gpu: %s", imghist_last_error(ctx));
    }
    imghist_destroy(ctx);
    if (st != IMGHIST_OK || d->engine == NULL) {
        free(d);
        return st != IMGHIST_OK && want ? -1 : 0;
    }
    *out = d;
    return 0;
}

unsigned ih_gpu_extra_workers(const ih_gpu_decoder *d)
{
    return d != NULL ? imghist_exp_jpeg_gpu_waiters(d->engine) : 0;
}

int ih_gpu_decode_file(ih_gpu_decoder *d, const ih_file *f, uint32_t *w, uint32_t *h,
                       ih_hist_out *hist, uint8_t **pixels)
{
    *pixels = NULL;
    if (d == NULL) {
        return 0;
    }
    uint64_t *counts = malloc(d->counters_each * sizeof *counts);
    if (counts == NULL || !imghist_exp_jpeg_gpu_file(d->engine, f->path, w, h, counts, pixels)) {
        free(counts);
        return 0;
    }
    *hist = d->binning;
    hist->counts = counts;
    return 1;
}

void ih_gpu_cpu_enter(ih_gpu_decoder *d)
{
    imghist_exp_jpeg_gpu_cpu_enter(d != NULL ? d->engine : NULL);
}

void ih_gpu_cpu_leave(ih_gpu_decoder *d)
{
    imghist_exp_jpeg_gpu_cpu_leave(d != NULL ? d->engine : NULL);
}

int ih_gpu_decoder_stop(ih_gpu_decoder *d)
{
    if (d == NULL) {
        return 0;
    }
    imghist_exp_jpeg_gpu_unit units[16];
    size_t declined = 0;
    size_t n = imghist_exp_jpeg_gpu_stop(d->engine, units, 16, &declined);
    n = n < 16 ? n : 16;
    int left = 0;
    for (size_t k = 0; k < n; k++) {
        const imghist_exp_jpeg_gpu_unit *u = &units[k];
        left |= u->left;
        if (ih_verbosity <= 0) {
            continue;
        }
        if (u->left) {
            ih_say("decode: every file was done before the GPU's decoder had opened; not "
                   "waited for");
        } else if (u->failed) {
            ih_say("decode: not on GPU %d (%s)", u->device, u->why);
        } else {
            ih_say("decode: %zu images on GPU %d's hardware JPEG decoder (its thread: %.2f s "
                   "opening it, of which CUDA %.2f s and nvJPEG %.2f s; %.2f s handing batches "
                   "to nvJPEG, %.2f s waiting for the GPU, %.2f s for files)",
                   u->images, u->device, u->open_s, u->cuda_s, u->nvjpeg_s, u->submit_s,
                   u->wait_s, u->idle_s);
        }
    }
    if (ih_verbosity > 0) {
        ih_say("decode: %zu JPEGs declined by the GPUs, on the CPU", declined);
    }
    free(d);
    return left;
}
