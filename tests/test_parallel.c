/* ih_parallel_for: every task runs exactly once, whatever the thread count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <stdatomic.h>

#include "parallel.h"

typedef struct {
    atomic_uint *runs;
} tally;

static void count_task(void *arg, size_t task)
{
    tally *t = arg;
    atomic_fetch_add(&t->runs[task], 1);
}

static void check(size_t tasks, unsigned threads)
{
    atomic_uint *runs = calloc(tasks ? tasks : 1, sizeof *runs);
    assert_non_null(runs);
    tally t = {runs};
    const unsigned used = ih_parallel_for(tasks, threads, count_task, &t);
    for (size_t i = 0; i < tasks; i++) {
        assert_int_equal(atomic_load(&runs[i]), 1);
    }
    if (tasks == 0) {
        assert_int_equal(used, 0);
    } else {
        assert_true(used >= 1);
        assert_true(used <= (threads ? threads : 1));
        assert_true(used <= tasks);
    }
    free(runs);
}

static void test_every_task_once(void **state)
{
    (void)state;
    const size_t tasks[] = {0, 1, 2, 3, 7, 64, 1000, 100000};
    const unsigned threads[] = {0, 1, 2, 4, 17, 256, 1000};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++) {
        for (size_t j = 0; j < sizeof threads / sizeof threads[0]; j++) {
            check(tasks[i], threads[j]);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_task_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
