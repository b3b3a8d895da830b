/* The fuzz targets' invariant check: a violation traps, which libFuzzer
 * reports as a crash and the replay program as a failed test. */
#ifndef IMGHIST_FUZZ_CHECK_H
#define IMGHIST_FUZZ_CHECK_H

#define CHECK(cond)           \
    do {                      \
        if (!(cond)) {        \
            __builtin_trap(); \
        }                     \
    } while (0)

#endif
