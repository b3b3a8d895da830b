/* CLI argument parsing, without running the tool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"

static int parse(ih_cli_args *a, char *err, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, err);
    argv[argc++] = "imghist";
    for (char *s; (s = va_arg(ap, char *)) != NULL;) {
        argv[argc++] = s;
    }
    va_end(ap);
    argv[argc] = NULL;
    const int rc = ih_parse_args(argc, argv, a, err, 256);
    /* The tests read the fields that point into argv; the input list is
     * checked by test_batch_options, which keeps it. */
    ih_free_args(a);
    return rc;
}

static void test_minimal_and_full(void **state)
{
    (void)state;
    ih_cli_args a;
    char err[256];
    assert_int_equal(parse(&a, err, "in.png", NULL), 0);
    assert_string_equal(a.input, "in.png");
    assert_null(a.equalize_out);
    assert_null(a.csv_out);
    assert_int_equal(a.backend, IMGHIST_BACKEND_AUTO);
    assert_int_equal(a.verbosity, 0);

    assert_int_equal(parse(&a, err, "--equalize", "o.png", "in.png", "--csv=-", "--backend", "cpu",
                           "-v", "--max-pixels=1000", NULL),
                     0);
    assert_string_equal(a.input, "in.png");
    assert_string_equal(a.equalize_out, "o.png");
    assert_string_equal(a.csv_out, "-");
    assert_int_equal(a.backend, IMGHIST_BACKEND_CPU);
    assert_int_equal(a.verbosity, 1);
    assert_int_equal(a.max_pixels, 1000);

    assert_int_equal(parse(&a, err, "-", "-q", "--backend=cuda", NULL), 0);
    assert_string_equal(a.input, "-");
    assert_int_equal(a.verbosity, -1);
    assert_int_equal(a.backend, IMGHIST_BACKEND_CUDA);

    /* Backend names in any case: the library's parser. */
    assert_int_equal(parse(&a, err, "in.png", "--backend", "CPU", NULL), 0);
    assert_int_equal(a.backend, IMGHIST_BACKEND_CPU);
    assert_int_equal(parse(&a, err, "in.png", "--backend=Cuda", NULL), 0);
    assert_int_equal(a.backend, IMGHIST_BACKEND_CUDA);
    assert_int_equal(parse(&a, err, "in.png", "--backend", "cpu", "--backend", "AUTO", NULL), 0);
    assert_int_equal(a.backend, IMGHIST_BACKEND_AUTO);

    /* --max-bytes takes a positive whole number, both spellings. */
    assert_int_equal(parse(&a, err, "in.png", NULL), 0);
    assert_int_equal(a.max_bytes, 0); /* the library's default */
    assert_int_equal(parse(&a, err, "in.png", "--max-bytes", "1000000", NULL), 0);
    assert_int_equal(a.max_bytes, 1000000);
    assert_int_equal(parse(&a, err, "in.png", "--max-bytes=2147483647", NULL), 0);
    assert_int_equal(a.max_bytes, 2147483647);

    /* After --, a name that looks like an option is the input. */
    assert_int_equal(parse(&a, err, "--", "-weird.png", NULL), 0);
    assert_string_equal(a.input, "-weird.png");
}

static void test_help_version_need_no_input(void **state)
{
    (void)state;
    ih_cli_args a;
    char err[256];
    assert_int_equal(parse(&a, err, "--help", NULL), 0);
    assert_true(a.help);
    assert_int_equal(parse(&a, err, "-h", NULL), 0);
    assert_true(a.help);
    assert_int_equal(parse(&a, err, "--version", NULL), 0);
    assert_true(a.version);
}

static void expect_usage_error(const char *why_contains, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, why_contains);
    argv[argc++] = "imghist";
    for (char *s; (s = va_arg(ap, char *)) != NULL;) {
        argv[argc++] = s;
    }
    va_end(ap);
    ih_cli_args a;
    char err[256];
    assert_int_equal(ih_parse_args(argc, argv, &a, err, sizeof err), -1);
    ih_free_args(&a);
    assert_non_null(strstr(err, why_contains));
    assert_null(strchr(err, '\n')); /* one line */
}

static void test_usage_errors(void **state)
{
    (void)state;
    expect_usage_error("no input", NULL);
    expect_usage_error("no input", "-v", NULL);
    expect_usage_error("unknown option", "in.png", "--frobnicate", NULL);
    expect_usage_error("unknown option", "in.png", "-x", NULL);
    expect_usage_error("needs a value", "in.png", "--equalize", NULL);
    expect_usage_error("needs a value", "in.png", "--csv=", NULL);
    expect_usage_error("needs a value", "in.png", "--backend", NULL);
    expect_usage_error("unknown backend", "in.png", "--backend", "opencl", NULL);
    expect_usage_error("unknown backend", "in.png", "--backend", "cpux", NULL);
    expect_usage_error("needs a value", "in.png", "--max-bytes", NULL);
    expect_usage_error("--max-bytes", "a.png", "--max-bytes", "-5", NULL);
    expect_usage_error("--max-bytes", "a.png", "--max-bytes", "12x", NULL);
    expect_usage_error("--max-bytes", "a.png", "--max-bytes", "abc", NULL);
    expect_usage_error("standard input", "a.png", "-", NULL);
    expect_usage_error("same file", "in", "--json", "x", "--total", "x", NULL);
    expect_usage_error("--gray", "in", "--gray", "average", NULL);
    expect_usage_error("-j", "in", "-j", "0", NULL);
    expect_usage_error("-j", "in", "-j", "two", NULL);
    expect_usage_error("needs a value", "in", "-j", NULL);
    expect_usage_error("at most 1024", "in", "--jobs=5000", NULL);
    expect_usage_error("positive whole number", "a.png", "--max-pixels", "0", NULL);
    expect_usage_error("positive whole number", "a.png", "--max-pixels", "-5", NULL);
    expect_usage_error("positive whole number", "a.png", "--max-pixels", "12x", NULL);
    expect_usage_error("contradict", "a.png", "-q", "-v", NULL);
    expect_usage_error("same file", "a.png", "--csv", "o", "--equalize", "o", NULL);
    expect_usage_error("file name", "a.png", "--equalize", "-", NULL);
    expect_usage_error("empty input", "", NULL);
}

/* Several inputs, folders and the batch options. */
static void test_batch_options(void **state)
{
    (void)state;
    char *argv[] = {"imghist", "a.png", "-r", "dir", "--json", "s.jsonl", "--total=t.csv",
                    "-j", "3", "--gray", "LUMA", "--", "-odd.png", NULL};
    ih_cli_args a;
    char err[256];
    assert_int_equal(ih_parse_args(13, argv, &a, err, sizeof err), 0);
    assert_int_equal(a.n_inputs, 3);
    assert_string_equal(a.inputs[0], "a.png");
    assert_string_equal(a.inputs[1], "dir");
    assert_string_equal(a.inputs[2], "-odd.png");
    assert_string_equal(a.input, "a.png");
    assert_int_equal(a.recursive, 1);
    assert_string_equal(a.json_out, "s.jsonl");
    assert_string_equal(a.total_out, "t.csv");
    assert_int_equal(a.jobs, 3);
    assert_int_equal(a.gray, IMGHIST_GRAY_LUMA);
    ih_free_args(&a);
    assert_null(a.inputs);

    char *argv2[] = {"imghist", "in", "--jobs=2", "--gray=bgr2gray", NULL};
    assert_int_equal(ih_parse_args(4, argv2, &a, err, sizeof err), 0);
    assert_int_equal(a.jobs, 2);
    assert_int_equal(a.gray, IMGHIST_GRAY_BGR2GRAY);
    assert_int_equal(a.recursive, 0);
    ih_free_args(&a);
}

/* 0.3's histogram options and the combinations that make no sense. */
static void test_histogram_options(void **state)
{
    (void)state;
    ih_cli_args a;
    char err[256];
    assert_int_equal(parse(&a, err, "in.tif", "--bins", "4096", "--range", "0:65536", "--depth",
                           "native", "--channels", NULL),
                     0);
    assert_int_equal(a.bins, 4096);
    assert_true(a.has_range && a.lo == 0.0 && a.hi == 65536.0);
    assert_true(a.native_depth && a.channels);
    assert_int_equal(parse(&a, err, "in.tif", "--range=-0.5:1e3", "--depth=8", NULL), 0);
    assert_true(a.lo == -0.5 && a.hi == 1000.0 && !a.native_depth);
    assert_int_equal(parse(&a, err, "a.png", "--joint", "b.png", "--mask", "m.png", NULL), 0);
    assert_string_equal(a.joint, "b.png");
    assert_string_equal(a.mask, "m.png");

    struct {
        const char *args[8];
        const char *says;
    } bad[] = {
        {{"in.png", "--bins", "0"}, "--bins"},
        {{"in.png", "--bins", "16777217"}, "at most"},
        {{"in.png", "--range", "1"}, "LO:HI"},
        {{"in.png", "--range", "5:1"}, "below"},
        {{"in.png", "--range", "0:inf"}, "finite"},
        {{"in.png", "--range", "nan:1"}, "finite"},
        {{"in.png", "--range", "0:1x"}, "LO:HI"},
        {{"in.png", "--depth", "16"}, "--depth"},
        {{"a.png", "b.png", "--mask", "m.png"}, "one input"},
        {{"a.png", "b.png", "--joint", "c.png"}, "one input"},
        {{"a.png", "--joint", "c.png", "--equalize", "o.png"}, "--joint"},
        {{"a.png", "--channels", "--equalize", "o.png"}, "--channels"},
        {{"a.png", "--channels", "--total", "t.csv"}, "--channels"},
        {{"a.png", "--depth", "native", "--total", "t.csv"}, "--bins and --range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[10] = {"imghist"};
        int argc = 1;
        for (int k = 0; k < 8 && bad[i].args[k] != NULL; k++) {
            argv[argc++] = (char *)bad[i].args[k];
        }
        argv[argc] = NULL;
        const int rc = ih_parse_args(argc, argv, &a, err, sizeof err);
        ih_free_args(&a);
        if (rc != -1 || strstr(err, bad[i].says) == NULL) {
            fail_msg("case %zu: rc %d, message \"%s\" (wanted one naming %s)", i, rc, err,
                     bad[i].says);
        }
    }
    /* With both, --total of native images is fine. */
    assert_int_equal(parse(&a, err, "dir", "--depth", "native", "--bins", "100", "--range",
                           "0:1", "--total", "t.csv", NULL),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal_and_full),
        cmocka_unit_test(test_batch_options),
        cmocka_unit_test(test_help_version_need_no_input),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_histogram_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
