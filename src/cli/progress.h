/* A progress bar on stderr for batch runs, only when stderr is a terminal. */
#ifndef IMGHIST_CLI_PROGRESS_H
#define IMGHIST_CLI_PROGRESS_H

#include <stddef.h>

typedef struct ih_progress {
    int on;          /* stderr is a terminal and not -q */
    int shown;       /* a bar is on the screen */
    double start;    /* seconds (monotonic) */
    double last;     /* when the bar was last drawn */
} ih_progress;

/* Seconds on a monotonic clock. */
double ih_now(void);
void ih_progress_start(ih_progress *p, int enabled);
/* Redraw (at most ten times a second, or when force is set). */
void ih_progress_update(ih_progress *p, size_t done, size_t total, int force);
/* Erase the bar, so that a message can take its line. */
void ih_progress_clear(ih_progress *p);

#endif
