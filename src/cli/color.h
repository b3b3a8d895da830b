/* --color luma|channels (color.c). */
#ifndef IMGHIST_CLI_COLOR_H
#define IMGHIST_CLI_COLOR_H

#include "args.h"
#include "imghist.h"

/* The colour image `in` (U8, 1 to 4 channels, host) equalized (or CLAHE'd, as
 * a->clahe says) as a->color says, into *out: w * h RGB triples, malloc'd. */
imghist_status ih_color_equalize(imghist_ctx *ctx, const ih_cli_args *a, const imghist_view *in,
                                 uint8_t **out);

#endif
