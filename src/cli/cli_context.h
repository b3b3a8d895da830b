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

/* Online processors (at least 1): the default of -j. */
unsigned ih_cores(void);

/*
 * A context on the chosen backend with the options that are library
 * parameters; cpu_threads for the CPU backend. Returns IH_EXIT_OK and *ctx,
 * or an exit status after saying why (*ctx NULL).
 */
int ih_make_context(const ih_cli_args *a, unsigned cpu_threads, imghist_ctx **ctx);
/* The same on GPU `device` (imghist_create_on); -1: imghist_create's choice.
 * ih_make_context uses the first GPU of --gpus, if given. */
int ih_make_context_on(const ih_cli_args *a, unsigned cpu_threads, int device,
                       imghist_ctx **ctx);

#endif
