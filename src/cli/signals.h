/* SIGINT and SIGTERM end a run cleanly: they set a flag, which the work
 * checks before it commits an output and in its long loops; work that does
 * not reach a check within IH_STOP_GRACE_S seconds (a decode, a count) is
 * ended there, leaving no output behind (signals.c). */
#ifndef IMGHIST_CLI_SIGNALS_H
#define IMGHIST_CLI_SIGNALS_H

#define IH_STOP_GRACE_S 1

void ih_catch_signals(void);
/* 0, or the signal that asked the run to stop. */
int ih_stop_signal(void);

#endif
