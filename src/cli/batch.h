/* Batch runs: every image of the inputs (files and folders) on a pool of
 * worker threads, results written in sorted order. */
#ifndef IMGHIST_CLI_BATCH_H
#define IMGHIST_CLI_BATCH_H

#include "args.h"

/* True when the inputs make a batch run: several of them, or a folder. */
int ih_is_batch(const ih_cli_args *a);
/* Runs it; returns the exit status (0, 1 if any image failed, 2 usage,
 * 128 + the signal when interrupted). */
int ih_run_batch(const ih_cli_args *a);

/* Set by an auto run that finished before CUDA had started: a thread still
 * starting it uses the arguments, so the caller ends the process (its
 * outputs complete) without waiting for it or freeing them: fflush, _exit. */
extern int ih_batch_left_running;

#endif
