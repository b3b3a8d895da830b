/*
 * --plot: the histogram as a picture (cairo): bars with labelled axes and
 * ticks, the cumulative distribution over them with its own axis, a linear or
 * log count axis, and with --equalize the equalized image's histogram beside
 * the original's. PNG or SVG by the file's extension.
 */
#ifndef IMGHIST_CLI_PLOT_H
#define IMGHIST_CLI_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"

#define IH_PLOT_PANEL_W 900 /* pixels (PNG) or points (SVG) per panel */
#define IH_PLOT_PANEL_H 500

typedef struct ih_plot {
    const char *title;         /* shown above the first panel */
    const ih_hist_out *before; /* the image's histogram */
    const ih_hist_out *after;  /* NULL, or the equalized image's: a second panel */
    int log_scale;             /* counts on a log axis */
    int svg;                   /* SVG, else PNG */
} ih_plot;

/* 1 when this build can draw (it has cairo). */
int ih_plot_available(void);
/* Whether path names an SVG (.svg) or a PNG (.png), case-blind; -1 with a
 * one-line reason in err for another extension. */
int ih_plot_kind(const char *path, int *svg, char *err, size_t errlen);
/* Draws p (an ih_plot) into fp: an ih_outputs_stage writer. 0, or -1. */
int ih_write_plot(FILE *fp, const void *p);

#endif
