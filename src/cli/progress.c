#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double ih_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ih_progress_start(ih_progress *p, int enabled)
{
    p->on = enabled && isatty(STDERR_FILENO);
    p->shown = 0;
    p->start = ih_now();
    p->last = 0;
}

void ih_progress_update(ih_progress *p, size_t done, size_t total, int force)
{
    if (!p->on) {
        return;
    }
    const double now = ih_now();
    if (!force && now - p->last < 0.1) {
        return;
    }
    p->last = now;
    enum { WIDTH = 30 };
    const double elapsed = now - p->start;
    const double rate = elapsed > 0 ? (double)done / elapsed : 0;
    const size_t fill = total ? done * WIDTH / total : WIDTH;
    char bar[WIDTH + 1];
    for (size_t i = 0; i < WIDTH; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    bar[WIDTH] = '\0';
    char eta[32] = "--:--";
    if (rate > 0 && done < total) {
        const long s = (long)((double)(total - done) / rate + 0.5);
        snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
    fprintf(stderr, "\r[%s] %zu/%zu images  %.1f images/s  ETA %s \033[K", bar, done, total,
            rate, eta);
    fflush(stderr);
    p->shown = 1;
}

void ih_progress_clear(ih_progress *p)
{
    if (p->on && p->shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->shown = 0;
    }
}
