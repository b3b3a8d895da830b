/* CLI argument parsing, without running the tool; which GPUs CUDA is shown. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"
#include "scale.h"

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
    assert_false(a.short_help);
    assert_int_equal(parse(&a, err, "-h", NULL), 0);
    assert_true(a.help);
    assert_true(a.short_help); /* -h: the short summary */
    assert_int_equal(parse(&a, err, "--version", NULL), 0);
    assert_true(a.version);
    /* -h takes no long form of its own. */
    assert_int_equal(parse(&a, err, "--h", NULL), -1);
}

static void test_equalize_extensions(void **state)
{
    (void)state;
    assert_true(ih_equalize_extension_ok("out.png"));
    assert_true(ih_equalize_extension_ok("dir.d/OUT.PNG"));
    assert_true(ih_equalize_extension_ok("out"));
    assert_true(ih_equalize_extension_ok("dir.jpg/out"));
    assert_true(ih_equalize_extension_ok(".hidden"));
    assert_false(ih_equalize_extension_ok("out.jpg"));
    assert_false(ih_equalize_extension_ok("out.png.tif"));
    assert_false(ih_equalize_extension_ok("out."));
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

/* The CUDA_VISIBLE_DEVICES value for the GPUs a run uses. */
static void test_visible_devices(void **state)
{
    (void)state;
    char out[256], err[256];
    int map[8];
    const int w0[] = {0};
    assert_int_equal(ih_visible_devices(NULL, w0, 1, out, sizeof out, map, err, sizeof err), 0);
    assert_string_equal(out, "0");
    assert_int_equal(map[0], 0);
    /* Each GPU once, in order of first appearance; map says where each went. */
    const int w1[] = {1, 0, 1, 3};
    assert_int_equal(ih_visible_devices(NULL, w1, 4, out, sizeof out, map, err, sizeof err), 0);
    assert_string_equal(out, "1,0,3");
    assert_int_equal(map[0], 0);
    assert_int_equal(map[1], 1);
    assert_int_equal(map[2], 0);
    assert_int_equal(map[3], 2);
    /* Positions in an existing list (indices, UUIDs), blanks trimmed. */
    const int w2[] = {2, 0};
    assert_int_equal(ih_visible_devices("3, 5 ,GPU-1a2b", w2, 2, out, sizeof out, map, err,
                                        sizeof err),
                     0);
    assert_string_equal(out, "GPU-1a2b,3");
    /* Past the list's end: a usage error naming the GPU and the list. */
    const int w3[] = {0, 2};
    assert_int_equal(ih_visible_devices("2,3", w3, 2, out, sizeof out, map, err, sizeof err), -1);
    assert_non_null(strstr(err, "no GPU 2"));
    assert_non_null(strstr(err, "lists 2"));
    /* CUDA reads the list up to an empty entry. */
    const int w4[] = {1};
    assert_int_equal(ih_visible_devices("4,,5", w4, 1, out, sizeof out, map, err, sizeof err), -1);
    /* A list that shows no GPU is left as it is. */
    assert_int_equal(ih_visible_devices("", w0, 1, out, sizeof out, map, err, sizeof err), 1);
    assert_int_equal(ih_visible_devices(" ,1", w0, 1, out, sizeof out, map, err, sizeof err), 1);
    /* A value that does not fit. */
    assert_int_equal(ih_visible_devices(NULL, w1, 4, out, 4, map, err, sizeof err), -1);
}

static ih_scale_opts gpus_opts(const int *gpus, unsigned n)
{
    ih_scale_opts s;
    memset(&s, 0, sizeof s);
    for (unsigned i = 0; i < n; i++) {
        s.gpus[i] = gpus[i];
    }
    s.n_gpus = n;
    return s;
}

static void test_narrow_gpus(void **state)
{
    (void)state;
    char err[256];
    /* One image, no --gpus: GPU 0 only. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    ih_scale_opts s = gpus_opts(NULL, 0);
    assert_int_equal(ih_narrow_gpus(&s, 0, 0, 0, 1, 8, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "0");
    assert_int_equal(s.n_shown, 1);
    assert_int_equal(ih_gpu_shown(&s, 0), 0);
    /* A batch with --gpus 2,1,2 under a scheduler's list: its entries 2 and 1,
     * renumbered 0 and 1; messages keep the user's numbers. */
    setenv("CUDA_VISIBLE_DEVICES", "7,6,5", 1);
    const int g[] = {2, 1, 2};
    s = gpus_opts(g, 3);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 0, 1, 8, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "5,6");
    assert_int_equal(s.gpus[0], 0);
    assert_int_equal(s.gpus[1], 1);
    assert_int_equal(s.gpus[2], 0);
    assert_int_equal(ih_gpu_shown(&s, 0), 2);
    assert_int_equal(ih_gpu_shown(&s, 1), 1);
    assert_int_equal(ih_gpu_shown(&s, 5), 5);
    /* One image with --gpus 1: that GPU. */
    setenv("CUDA_VISIBLE_DEVICES", "7,6,5", 1);
    const int one[] = {1};
    s = gpus_opts(one, 1);
    assert_int_equal(ih_narrow_gpus(&s, 0, 0, 0, 1, 8, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "6");
    assert_int_equal(s.gpus[0], 0);
    /* --gpus past the scheduler's list: a usage error, the list untouched. */
    setenv("CUDA_VISIBLE_DEVICES", "7,6,5", 1);
    const int far[] = {3};
    s = gpus_opts(far, 1);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 0, 1, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "no GPU 3"));
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "7,6,5");
    /* Left alone: a batch on every GPU, the CPU backend, an MPI rank. */
    s = gpus_opts(NULL, 0);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 0, 1, 8, err, sizeof err), 0);
    assert_int_equal(s.n_shown, 0);
    s = gpus_opts(one, 1);
    assert_int_equal(ih_narrow_gpus(&s, 1, 1, 0, 1, 8, err, sizeof err), 0);
    /* ... and anything once CUDA's driver is in the process (gpus_on_host -1). */
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 0, 1, -1, err, sizeof err), 0);
    assert_int_equal(ih_narrow_gpus(&s, 0, 0, 0, 1, -1, err, sizeof err), 0);
    assert_int_equal(s.n_shown, 0);
    assert_int_equal(s.gpus[0], 1);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "7,6,5");

    /* MPI ranks sharing a host: one GPU each. Rank 2 of 4 on a host of 4. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    s = gpus_opts(NULL, 0);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 2, 4, 4, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "2");
    assert_int_equal(ih_gpu_shown(&s, 0), 2);
    assert_int_equal(s.n_gpus, 0);
    /* Rank 5 of 6 on a host of 4: GPU 1. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    s = gpus_opts(NULL, 0);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 5, 6, 4, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "1");
    /* With --gpus 0,3 under a scheduler's list: rank 3 takes entry 3 % 2 = 1
     * of --gpus, GPU 3, the list's fourth entry; every slot is then GPU 0. */
    setenv("CUDA_VISIBLE_DEVICES", "4,5,6,7", 1);
    const int two[] = {0, 3};
    s = gpus_opts(two, 2);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 3, 4, 4, err, sizeof err), 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "7");
    assert_int_equal(s.gpus[0], 0);
    assert_int_equal(s.gpus[1], 0);
    assert_int_equal(ih_gpu_shown(&s, 0), 3);
    /* How many GPUs unknown (0): a rank without --gpus leaves the list. */
    setenv("CUDA_VISIBLE_DEVICES", "4,5", 1);
    s = gpus_opts(NULL, 0);
    assert_int_equal(ih_narrow_gpus(&s, 1, 0, 1, 2, 0, err, sizeof err), 0);
    assert_int_equal(s.n_shown, 0);
    assert_string_equal(getenv("CUDA_VISIBLE_DEVICES"), "4,5");
    unsetenv("CUDA_VISIBLE_DEVICES");
}

/* How many GPUs CUDA will see, before it starts. */
static void test_gpus_before_cuda(void **state)
{
    (void)state;
    setenv("CUDA_VISIBLE_DEVICES", "3,1", 1);
    assert_int_equal(ih_gpus_before_cuda(), 2);
    setenv("CUDA_VISIBLE_DEVICES", "GPU-aa, 2,,5", 1);
    assert_int_equal(ih_gpus_before_cuda(), 2); /* CUDA stops at the empty entry */
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    assert_int_equal(ih_gpus_before_cuda(), 0);
    unsetenv("CUDA_VISIBLE_DEVICES");
    assert_true(ih_gpus_before_cuda() >= 0); /* the /dev/nvidiaN files, 0 without a GPU */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal_and_full),
        cmocka_unit_test(test_batch_options),
        cmocka_unit_test(test_help_version_need_no_input),
        cmocka_unit_test(test_equalize_extensions),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_histogram_options),
        cmocka_unit_test(test_visible_devices),
        cmocka_unit_test(test_narrow_gpus),
        cmocka_unit_test(test_gpus_before_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
