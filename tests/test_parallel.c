/* ih_parallel_for: every task runs exactly once, whatever the thread count,
 * the kept threads reused call after call, by tasks that call it again, by
 * threads that call it at once, and in a forked child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Thousands of short calls in a row: a job handed to the kept threads never
 * loses or repeats a task of the next. */
static void test_calls_in_a_row(void **state)
{
    (void)state;
    for (int k = 0; k < 3000; k++) {
        check((size_t)(k % 9), 1 + (unsigned)(k % 6));
    }
}

static void nested_task(void *arg, size_t task)
{
    (void)task;
    tally *t = arg;
    enum { INNER = 50 };
    atomic_uint inner[INNER];
    for (int i = 0; i < INNER; i++) {
        atomic_init(&inner[i], 0);
    }
    tally it = {inner};
    ih_parallel_for(INNER, 3, count_task, &it);
    for (int i = 0; i < INNER; i++) {
        if (atomic_load(&inner[i]) == 1) {
            atomic_fetch_add(&t->runs[task], 1);
        }
    }
}

/* Tasks that call it again (the kept threads are held: their own threads). */
static void test_nested_calls(void **state)
{
    (void)state;
    enum { OUTER = 12 };
    atomic_uint runs[OUTER];
    for (int i = 0; i < OUTER; i++) {
        atomic_init(&runs[i], 0);
    }
    tally t = {runs};
    ih_parallel_for(OUTER, 4, nested_task, &t);
    for (int i = 0; i < OUTER; i++) {
        assert_int_equal(atomic_load(&runs[i]), 50);
    }
}

static void *caller(void *p)
{
    (void)p;
    for (int k = 0; k < 300; k++) {
        check(1 + (size_t)(k % 40), 1 + (unsigned)(k % 5));
    }
    return NULL;
}

/* Four threads calling at once, the kept threads going to one at a time. */
static void test_callers_at_once(void **state)
{
    (void)state;
    pthread_t tid[4];
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pthread_create(&tid[i], NULL, caller, NULL), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
    }
}

/* A child forked after the parent's threads were kept runs its own. */
static void test_forked_child(void **state)
{
    (void)state;
    check(64, 4);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        atomic_uint runs[64];
        for (int i = 0; i < 64; i++) {
            atomic_init(&runs[i], 0);
        }
        tally t = {runs};
        const unsigned used = ih_parallel_for(64, 4, count_task, &t);
        int ok = used >= 1 && used <= 4;
        for (int i = 0; i < 64; i++) {
            ok = ok && atomic_load(&runs[i]) == 1;
        }
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check(64, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_task_once),
        cmocka_unit_test(test_calls_in_a_row),
        cmocka_unit_test(test_nested_calls),
        cmocka_unit_test(test_callers_at_once),
        cmocka_unit_test(test_forked_child),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
