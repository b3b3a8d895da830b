/*
 * Pieces the cmocka suites share that need cmocka and imghist.h (include this
 * after <cmocka.h> and "imghist.h"; test_util.h has the rest): a check of an
 * imghist call that fails the test with the library's message, a check of a
 * call that must be refused, a check of a CUDA call, IMGHIST_TEST_QUICK.
 */
#ifndef IMGHIST_SUITE_UTIL_H
#define IMGHIST_SUITE_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#define IH_OK(ctx, call)                                                                  \
    do {                                                                                  \
        const imghist_status st_ = (call);                                                \
        if (st_ != IMGHIST_OK) {                                                          \
            fail_msg("%s: %s: %s", #call, imghist_strerror(st_), imghist_last_error(ctx)); \
        }                                                                                 \
    } while (0)

/* An imghist call that must be refused with `want`, and say why. */
#define IH_REFUSED(ctx, call, want)                                                        \
    do {                                                                                   \
        const imghist_status st_ = (call);                                                 \
        if (st_ != (want)) {                                                               \
            fail_msg("%s: got %s (%s), want %s", #call, imghist_strerror(st_),             \
                     imghist_last_error(ctx), imghist_strerror(want));                     \
        }                                                                                  \
        assert_true(imghist_last_error(ctx)[0] != '\0');                                   \
    } while (0)

#define CUDA_OK(call) assert_int_equal((call), cudaSuccess)

/* IMGHIST_TEST_QUICK=1 asks a suite for a smaller sample (compute-sanitizer). */
static inline int su_quick(void)
{
    const char *q = getenv("IMGHIST_TEST_QUICK");
    return q != NULL && atoi(q) != 0;
}

#endif
