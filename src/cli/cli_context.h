/* A library context set up from the options, and the choices that go with
 * it (threads, the one-image backend). */
#ifndef IMGHIST_CLI_CONTEXT_H
#define IMGHIST_CLI_CONTEXT_H

#include "args.h"
#include "imghist.h"
#include "log.h"

/* Bytes of one sample of a view of type t. */
static inline size_t ih_sample_size(imghist_dtype t)
{
    return t == IMGHIST_U16 ? 2 : t == IMGHIST_F32 ? 4 : 1;
}

/* Online processors (at least 1): the default of -j. */
unsigned ih_cores(void);

/*
 * Whether a one-image run takes the CPU for --backend auto: yes unless --gpus
 * names a GPU or IMGHIST_BACKEND names a backend. One image is done on the CPU
 * long before CUDA has started (bench/ has the numbers).
 */
int ih_one_image_on_cpu(const ih_cli_args *a);

/*
 * A context on the chosen backend with the options that are library
 * parameters; cpu_threads for the CPU backend (a one-image auto run: the CPU,
 * as ih_one_image_on_cpu says). Returns IH_EXIT_OK and *ctx, or an exit status
 * after saying why (*ctx NULL).
 */
int ih_make_context(const ih_cli_args *a, unsigned cpu_threads, imghist_ctx **ctx);
/* The same on GPU `device`; -1: the current GPU, as imghist_create takes it.
 * ih_make_context uses the first GPU of --gpus, if given. */
int ih_make_context_on(const ih_cli_args *a, unsigned cpu_threads, int device,
                       imghist_ctx **ctx);

#endif
