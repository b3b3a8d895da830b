/*
 * Pieces the cmocka suites share that need cmocka and imghist.h (include this
 * after <cmocka.h> and "imghist.h"; test_util.h has the rest): a check of an
 * imghist call that fails the test with the library's message, a check of a
 * CUDA call, and the start of the suites that compare the CUDA backend with
 * the CPU.
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

#define CUDA_OK(call) assert_int_equal((call), cudaSuccess)

/* IMGHIST_TEST_QUICK=1 asks a suite for a smaller sample (compute-sanitizer). */
static inline int su_quick(void)
{
    const char *q = getenv("IMGHIST_TEST_QUICK");
    return q != NULL && atoi(q) != 0;
}

/*
 * A GPU suite's start: a CUDA context in *gpu and a CPU one in *cpu, and 0;
 * or the exit status to return: 77 (skipped) where no usable GPU exists or
 * the build has no CUDA, 1 on any other failure.
 */
static inline int su_open_gpu_suite(const char *suite, imghist_ctx **gpu, imghist_ctx **cpu)
{
    /* IMGHIST_TEST_ONLY=pattern runs the tests whose names match (cmocka's
     * filter: * and ? wildcards). */
    const char *only = getenv("IMGHIST_TEST_ONLY");
    if (only != NULL && *only != '\0') {
        cmocka_set_test_filter(only);
    }
    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, gpu);
    if (st == IMGHIST_E_NO_GPU || st == IMGHIST_E_UNSUPPORTED) {
        printf("skipping the %s: %s\n", suite, imghist_last_error(*gpu));
        imghist_destroy(*gpu);
        return 77;
    }
    if (st != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CUDA context: %s\n", imghist_last_error(*gpu));
        return 1;
    }
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, cpu) != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CPU context: %s\n", imghist_last_error(*cpu));
        return 1;
    }
    return 0;
}

#endif
