/* The CLI's histogram of one image under its options (--bins, --range,
 * --channels, --mask, --equalize), for single runs and batch workers alike. */
#ifndef IMGHIST_CLI_MEASURE_H
#define IMGHIST_CLI_MEASURE_H

#include <stddef.h>

#include "args.h"
#include "imghist.h"
#include "report.h"

/* The histogram of img (where mask, NULL or a U8 view of its size, is not 0)
 * into *out (free with ih_hist_out_free); with eq non-NULL, also the
 * equalized image into eq (which may be img itself: the histogram is taken
 * first). On failure a one-line reason in msg. */
imghist_status ih_measure(imghist_ctx *ctx, const ih_cli_args *a, const imghist_view *img,
                          const imghist_view *mask, const imghist_view *eq, ih_hist_out *out,
                          char *msg, size_t msglen);

/* The spec ih_measure uses for one axis: bins/range from the options, the
 * type's levels for integers, the data's finite extremes for float (then
 * *closed). Fills h's binning fields. */
imghist_status ih_cli_spec(imghist_ctx *ctx, const ih_cli_args *a, uint32_t default_bins,
                           const imghist_view *img, const imghist_view *mask,
                           imghist_histspec *spec, ih_hist_out *h, char *msg, size_t msglen);

#endif
