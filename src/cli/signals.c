#define _POSIX_C_SOURCE 200809L
#include "signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;
static int err_is_tty; /* a progress line there is cleared first */

/* Ends the process for the signal that asked it to stop, saying so. */
static void end_now(void)
{
    static const char clear[] = "\r\033[K";
    static const char said[] = "imghist: interrupted; what was in progress is not written\n";
    if (err_is_tty) {
        (void)!write(STDERR_FILENO, clear, sizeof clear - 1);
    }
    (void)!write(STDERR_FILENO, said, sizeof said - 1);
    _exit(128 + stop_signal);
}

/* The first SIGINT or SIGTERM asks the work to stop at its next check and
 * starts a grace period; a second signal, or the end of the grace period
 * while a decode or a count that has no check runs on, ends the process at
 * once. Nothing is lost by that: outputs are unnamed until complete (on
 * Linux) or named temporaries that a later run removes (output_file.c). */
static void on_signal(int sig)
{
    if (stop_signal != 0) {
        end_now();
    }
    stop_signal = sig;
    alarm(IH_STOP_GRACE_S);
}

static void on_alarm(int sig)
{
    (void)sig;
    if (stop_signal != 0) {
        end_now();
    }
}

void ih_catch_signals(void)
{
    err_is_tty = isatty(STDERR_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    /* No SA_RESTART: a blocking read of standard input returns, and the run
     * sees the flag. */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
}

int ih_stop_signal(void)
{
    return stop_signal;
}
