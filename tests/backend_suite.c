/* The harness of the suites by operation: backend_suite.h says what it does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "imghist.h"
#include "backend_suite.h"

imghist_backend bs_backend = IMGHIST_BACKEND_CPU;
imghist_ctx *bs_ctx, *bs_cpu;
int bs_argc;
char **bs_argv;

imghist_ctx *bs_new_ctx(void)
{
    imghist_ctx *ctx = NULL;
    const imghist_status st = imghist_create(bs_backend, -1, &ctx);
    if (st != IMGHIST_OK) {
        fail_msg("imghist_create(%s): %s: %s", imghist_backend_name(bs_backend),
                 imghist_strerror(st), imghist_last_error(ctx));
    }
    assert_non_null(ctx);
    assert_int_equal(imghist_get_backend(ctx), bs_backend);
    return ctx;
}

imghist_ctx *bs_new_ctx_threads(int threads)
{
    imghist_ctx *ctx = bs_new_ctx();
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, threads), IMGHIST_OK);
    return ctx;
}

imghist_ctx *bs_new_cpu_ctx(void)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_non_null(ctx);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    return ctx;
}

/* 0 with bs_ctx on the CUDA backend; else the exit status (77: skipped). */
static int open_cuda(const char *suite)
{
    int devices = 0;
    if (imghist_device_count(&devices) != IMGHIST_OK || devices == 0) {
        printf("skipping the %s suite on cuda: no usable GPU\n", suite);
        return 77;
    }
    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &bs_ctx);
    if (st == IMGHIST_E_NO_GPU || st == IMGHIST_E_UNSUPPORTED) {
        printf("skipping the %s suite on cuda: %s\n", suite, imghist_last_error(bs_ctx));
        imghist_destroy(bs_ctx);
        bs_ctx = NULL;
        return 77;
    }
    if (st != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CUDA context: %s\n", imghist_last_error(bs_ctx));
        return 1;
    }
    return 0;
}

int bs_main(int argc, char **argv, const char *suite, const bs_part *const *parts,
            size_t nparts)
{
    if (argc < 2 || imghist_backend_from_name(argv[1], &bs_backend) != IMGHIST_OK ||
        bs_backend == IMGHIST_BACKEND_AUTO) {
        fprintf(stderr, "usage: %s cpu|cuda [arguments]\n", argv[0]);
        return 2;
    }
    bs_argc = argc - 1;
    bs_argv = argv + 1;
    /* IMGHIST_TEST_ONLY=pattern runs the tests whose names match (cmocka's
     * filter: * and ? wildcards). */
    const char *only = getenv("IMGHIST_TEST_ONLY");
    if (only != NULL && *only != '\0') {
        cmocka_set_test_filter(only);
    }
    if (bs_on_cuda()) {
        const int rc = open_cuda(suite);
        if (rc != 0) {
            return rc;
        }
    } else if (imghist_create(IMGHIST_BACKEND_CPU, -1, &bs_ctx) != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CPU context: %s\n", imghist_last_error(bs_ctx));
        return 1;
    }
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, &bs_cpu) != IMGHIST_OK) {
        fprintf(stderr, "cannot create a CPU context: %s\n", imghist_last_error(bs_cpu));
        return 1;
    }
    const enum bs_where skip = bs_on_cuda() ? BS_CPU_ONLY : BS_CUDA_ONLY;
    int failed = 0;
    for (size_t p = 0; p < nparts; p++) {
        struct CMUnitTest *run = calloc(parts[p]->count, sizeof *run);
        if (run == NULL) {
            return 1;
        }
        size_t n = 0;
        for (size_t i = 0; i < parts[p]->count; i++) {
            if (parts[p]->tests[i].where != skip) {
                run[n++] = parts[p]->tests[i].test;
            }
        }
        if (n > 0) {
            char name[200];
            snprintf(name, sizeof name, "%s on %s", parts[p]->name, argv[1]);
            failed |= _cmocka_run_group_tests(name, run, n, parts[p]->setup, parts[p]->teardown) != 0;
        }
        free(run);
    }
    imghist_destroy(bs_cpu);
    imghist_destroy(bs_ctx);
    return failed ? 1 : 0;
}
