/*
 * Fuzz target: ih_parse_args on an argument list made from the input bytes.
 *
 * The bytes are split on '\n' and '\0' into at most 32 arguments (a trailing
 * separator ends the last argument rather than adding an empty one; two
 * separators in a row make an empty argument), each copied into its own
 * exactly-sized heap buffer so that ASan sees any read past its end. "imghist"
 * is prepended as argv[0] and argv[argc] is NULL, as in main().
 *
 * Invariants (violation: __builtin_trap()):
 *  - the result is 0 or -1;
 *  - on -1, err is one non-empty line;
 *  - on 0, --help or --version was given, or input is set; verbosity is
 *    -1, 0 or 1; the backend is one of the enum's values;
 *  - input, equalize_out and csv_out are NULL or point into one of argv[1..].
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "fuzz_check.h"

#define MAX_ARGS 32
#define ERR_LEN 256

static int points_into_argv(const char *p, int argc, char *const argv[])
{
    if (p == NULL) {
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        if (p >= argv[i] && p <= argv[i] + strlen(argv[i])) {
            return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    static char prog[] = "imghist";
    argv[argc++] = prog;

    size_t start = 0;
    while (start < size && argc < MAX_ARGS + 1) {
        size_t end = start;
        while (end < size && data[end] != '\n' && data[end] != '\0') {
            end++;
        }
        char *a = malloc(end - start + 1);
        CHECK(a != NULL);
        memcpy(a, data + start, end - start);
        a[end - start] = '\0';
        argv[argc++] = a;
        start = end + 1; /* past the separator (or past the end) */
    }
    argv[argc] = NULL;

    /* An exactly-sized error buffer: writes past it are ASan reports. */
    char *err = malloc(ERR_LEN);
    CHECK(err != NULL);
    memset(err, 'X', ERR_LEN);
    ih_cli_args args;
    memset(&args, 0xA5, sizeof args);
    const int rc = ih_parse_args(argc, argv, &args, err, ERR_LEN);

    CHECK(rc == 0 || rc == -1);
    CHECK(memchr(err, '\0', ERR_LEN) != NULL);
    if (rc == -1) {
        CHECK(err[0] != '\0');
        CHECK(strchr(err, '\n') == NULL);
    } else {
        CHECK(args.help || args.version || args.input != NULL);
        CHECK(args.verbosity >= -1 && args.verbosity <= 1);
        CHECK(args.backend == IMGHIST_BACKEND_AUTO || args.backend == IMGHIST_BACKEND_CPU ||
              args.backend == IMGHIST_BACKEND_CUDA);
        CHECK(args.help == 0 || args.help == 1);
        CHECK(args.version == 0 || args.version == 1);
        CHECK(points_into_argv(args.input, argc, argv));
        CHECK(points_into_argv(args.equalize_out, argc, argv));
        CHECK(points_into_argv(args.csv_out, argc, argv));
        CHECK(args.input == NULL || args.input[0] != '\0');
        CHECK(args.n_inputs == 0 || args.inputs[0] == args.input);
        for (size_t k = 0; k < args.n_inputs; k++) {
            CHECK(points_into_argv(args.inputs[k], argc, argv));
        }
        CHECK(points_into_argv(args.json_out, argc, argv));
        CHECK(points_into_argv(args.total_out, argc, argv));
    }
    ih_free_args(&args);

    free(err);
    for (int i = 1; i < argc; i++) {
        free(argv[i]);
    }
    return 0;
}
