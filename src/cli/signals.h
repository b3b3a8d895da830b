/* SIGINT and SIGTERM end a run cleanly: they only set a flag, which the work
 * checks before it commits an output. */
#ifndef IMGHIST_CLI_SIGNALS_H
#define IMGHIST_CLI_SIGNALS_H

void ih_catch_signals(void);
/* 0, or the signal that asked the run to stop. */
int ih_stop_signal(void);

#endif
