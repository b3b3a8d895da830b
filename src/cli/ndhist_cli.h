/* imghist --space: N-d histograms of converted colour channels and their
 * back-projection (cli/ndhist_cli.c, docs/ndhist.md). */
#ifndef IMGHIST_NDHIST_CLI_H
#define IMGHIST_NDHIST_CLI_H

/* Whether the command line asks for --space (before any "--"). */
int ih_is_space_call(int argc, char *const argv[]);
/* The whole run of such a command line; returns the exit status. */
int ih_ndhist_main(int argc, char *const argv[]);

#endif
