/*
 * The harness of the suites by operation (include after <cmocka.h> and
 * "imghist.h"). One program runs one operation's tests on the backend named
 * by its first argument, `cpu` or `cuda`: tests for both backends, tests for
 * device memory (cuda only) and tests of the CPU backend itself (cpu only).
 * The cuda run exits 77 (meson's skip) where no usable GPU exists.
 *
 * A program's tests come in parts, one per source file, each a cmocka group
 * with its own setup, so a file keeps its own state (seeds, contexts).
 */
#ifndef IMGHIST_BACKEND_SUITE_H
#define IMGHIST_BACKEND_SUITE_H

#include <stddef.h>

enum bs_where { BS_BOTH = 0, BS_CUDA_ONLY, BS_CPU_ONLY };

typedef struct bs_test {
    struct CMUnitTest test;
    enum bs_where where;
} bs_test;

typedef struct bs_part {
    const char *name;
    const bs_test *tests;
    size_t count;
    CMFixtureFunction setup, teardown; /* the group's; NULL: none */
} bs_part;

#define BS_TEST(f) {cmocka_unit_test(f), BS_BOTH}
/* Device memory, streams, routes, faults: the CUDA backend alone has them. */
#define BS_CUDA_TEST(f) {cmocka_unit_test(f), BS_CUDA_ONLY}
#define BS_CUDA_TEST_TEARDOWN(f, t) {cmocka_unit_test_teardown(f, t), BS_CUDA_ONLY}
/* What only the CPU backend has: its threads, its refusal of streams. */
#define BS_CPU_TEST(f) {cmocka_unit_test(f), BS_CPU_ONLY}
#define BS_PART(name, tests, setup, teardown) \
    {(name), (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown)}
#define BS_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The backend under test: IMGHIST_BACKEND_CPU or IMGHIST_BACKEND_CUDA. */
extern imghist_backend bs_backend;
/* Contexts the harness holds for the whole run: one on the backend under
 * test, and a CPU one, the reference a cuda run compares with (on a cpu run
 * a second CPU context). */
extern imghist_ctx *bs_ctx, *bs_cpu;

static inline int bs_on_cuda(void)
{
    return bs_backend == IMGHIST_BACKEND_CUDA;
}

/* In the group setup of a part that compares the CUDA backend with the CPU
 * (whose file has the statics gpu, cpu, quick and rng): the harness's
 * contexts, IMGHIST_TEST_QUICK, the part's seed, printed by `who`. */
#define BS_GPU_PART_STATE(who)                \
    do {                                      \
        gpu = bs_ctx;                         \
        cpu = bs_cpu;                         \
        quick = su_quick();                   \
        tu_seed(&rng, tu_fresh_seed(who));    \
    } while (0)

/* A fresh context on the backend under test (the test destroys it); fails the
 * test when it cannot be made. */
imghist_ctx *bs_new_ctx(void);

/* The same with IMGHIST_P_CPU_THREADS set to `threads`. */
imghist_ctx *bs_new_ctx_threads(int threads);

/* A fresh CPU context (the test destroys it). */
imghist_ctx *bs_new_cpu_ctx(void);

/*
 * The program's main: argv[1] is `cpu` or `cuda`; the arguments after it move
 * down one (argv[1] is then the first of them), as the parts' setups read
 * them through bs_argc and bs_argv. Returns the exit status: 0, 1 on a
 * failure, 77 for a cuda run without a usable GPU or CUDA in the build.
 */
int bs_main(int argc, char **argv, const char *suite, const bs_part *const *parts,
            size_t nparts);
extern int bs_argc;
extern char **bs_argv;

#endif
