/* What every run of the tool needs: one-line messages and a library context
 * set up from the options. */
#ifndef IMGHIST_CLI_CONTEXT_H
#define IMGHIST_CLI_CONTEXT_H

#include "args.h"
#include "imghist.h"

enum { IH_EXIT_OK = 0, IH_EXIT_FILE = 1, IH_EXIT_USAGE = 2 };

/* -1 quiet, 0 normal, 1 verbose. */
extern int ih_verbosity;

/* What --read-truncated says of a JPEG that ended early. */
#define IH_TRUNCATED_WARNING \
    "JPEG data ends early; read as OpenCV reads it, the rest of the picture made up"

/* One line on stderr, "imghist: " first; control characters that came with a
 * file name or an argument are shown as '?'. */
void ih_say(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

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
 * long before CUDA has started (0.3 s or more on an H100 host; a 12 MP photo's
 * histogram on the CPU: 0.12-0.17 s in all, bench/RESULTS.md).
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
