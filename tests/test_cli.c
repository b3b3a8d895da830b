/*
 * The imghist binary, run as a user would: output formats, exit codes, and the
 * promise that a failure leaves no partial output and never touches the input.
 * argv[1] is the binary, argv[2] the samples folder.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>
#include <zlib.h>

#include "imghist.h"
#include "test_util.h"

static const char *exe;
static const char *samples;
static char *dir; /* per-test scratch folder */

/* Pass as the stdin path to start the tool with standard input closed. */
static const char CLOSED_STDIN[] = "<closed>";
/* Pass as the stdin path to feed the tool `feed_len` bytes of `feed` through
 * a pipe: a stream whose length the tool cannot learn in advance. */
static const char PIPED_STDIN[] = "<pipe>";
static const void *feed;
static size_t feed_len;

typedef struct {
    int code;
    char *out; /* stdout */
    char *err; /* stderr */
} run_result;

static char *slurp(const char *path)
{
    size_t n = 0;
    uint8_t *d = tu_read_file(path, &n);
    char *s = malloc(n + 1);
    if (d != NULL) {
        memcpy(s, d, n);
    }
    s[d ? n : 0] = '\0';
    free(d);
    return s;
}

/* Run imghist with the given arguments (NULL-terminated), stdin from
 * `in_path` (or /dev/null). */
static run_result run_v(const char *in_path, va_list ap)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)exe;
    for (char *s; (s = va_arg(ap, char *)) != NULL;) {
        argv[argc++] = s;
    }
    argv[argc] = NULL;
    char outp[4200], errp[4200];
    snprintf(outp, sizeof outp, "%s/.stdout", dir);
    snprintf(errp, sizeof errp, "%s/.stderr", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int pipefd[2] = {-1, -1};
    if (in_path == CLOSED_STDIN) {
        posix_spawn_file_actions_addclose(&fa, 0);
    } else if (in_path == PIPED_STDIN) {
        assert_int_equal(pipe(pipefd), 0);
        posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
        posix_spawn_file_actions_addclose(&fa, pipefd[0]);
        posix_spawn_file_actions_addclose(&fa, pipefd[1]);
    } else {
        posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path : "/dev/null", O_RDONLY, 0);
    }
    posix_spawn_file_actions_addopen(&fa, 1, outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    extern char **environ;
    assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    pid_t writer = -1;
    if (in_path == PIPED_STDIN) {
        close(pipefd[0]);
        /* A child writes, so that a tool that stops reading early (as it
         * should past a limit) costs the writer a SIGPIPE, not this test. */
        writer = fork();
        assert_true(writer >= 0);
        if (writer == 0) {
            const uint8_t *p = feed;
            size_t left = feed_len;
            while (left > 0) {
                const ssize_t n = write(pipefd[1], p, left);
                if (n <= 0) {
                    _exit(1);
                }
                p += n;
                left -= (size_t)n;
            }
            _exit(0);
        }
        close(pipefd[1]);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (writer > 0) {
        int ws = 0;
        assert_int_equal(waitpid(writer, &ws, 0), writer);
    }
    assert_true(WIFEXITED(status)); /* never a crash */
    run_result r = {WEXITSTATUS(status), slurp(outp), slurp(errp)};
    unlink(outp);
    unlink(errp);
    return r;
}

static run_result run_stdin(const char *in_path, ...)
{
    va_list ap;
    va_start(ap, in_path);
    run_result r = run_v(in_path, ap);
    va_end(ap);
    return r;
}

#define RUN(...) run_stdin(NULL, __VA_ARGS__, NULL)
#define RUN_IN(in, ...) run_stdin(in, __VA_ARGS__, NULL)

static void free_result(run_result *r)
{
    free(r->out);
    free(r->err);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

/* An error is exactly one line, starting "imghist: ", naming `what`. */
static void assert_one_line_error(const run_result *r, const char *what)
{
    assert_int_equal(count_lines(r->err), 1);
    assert_int_equal(strncmp(r->err, "imghist: ", 9), 0);
    if (what != NULL) {
        assert_non_null(strstr(r->err, what));
    }
}

/* Paths live in a ring of buffers large enough for any one test. */
static char *path_in(const char *name)
{
    static char buf[64][4200];
    static int k;
    char *p = buf[k++ & 63];
    snprintf(p, 4200, "%s/%s", dir, name);
    return p;
}

static char *sample(const char *name)
{
    static char buf[64][4200];
    static int k;
    char *p = buf[k++ & 63];
    snprintf(p, 4200, "%s/%s", samples, name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    dir = tu_temp_dir();
    return dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_remove_tree(dir);
    free(dir);
    dir = NULL;
    return 0;
}

static void test_summary(void **state)
{
    (void)state;
    run_result r = RUN(sample("moon.png"), "--backend", "cpu");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "512x512"));
    assert_non_null(strstr(r.out, "262144 pixels"));
    assert_non_null(strstr(r.out, "min 0"));
    assert_non_null(strstr(r.out, "median"));
    assert_non_null(strstr(r.out, "stddev"));
    assert_non_null(strstr(r.out, "#")); /* the picture */
    free_result(&r);

    r = RUN(sample("moon.png"), "-q");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.out, "");
    free_result(&r);

    r = RUN(sample("moon.png"), "-v", "--backend", "cpu");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.err, "backend: cpu"));
    free_result(&r);
}

static void test_help_and_version(void **state)
{
    (void)state;
    run_result r = RUN("--help");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, "Usage: imghist"));
    assert_non_null(strstr(r.out, "Examples:"));
    /* The help names the formats, not the libraries behind them, and shows
     * the input-byte limit. */
    assert_null(strstr(r.out, "stb_image"));
    assert_non_null(strstr(r.out, "--max-bytes"));
    free_result(&r);
    r = RUN("--version");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.out, IMGHIST_VERSION_STRING));
    free_result(&r);
}

static void check_csv(const char *csv, uint64_t want_total)
{
    assert_int_equal(strncmp(csv, "bin,lower,upper,count\n", 22), 0);
    assert_int_equal(count_lines(csv), 257);
    const char *p = strchr(csv, '\n') + 1;
    uint64_t total = 0;
    for (int i = 0; i < 256; i++) {
        int b, lo, hi;
        unsigned long long c;
        int used = 0;
        assert_int_equal(sscanf(p, "%d,%d,%d,%llu\n%n", &b, &lo, &hi, &c, &used), 4);
        assert_int_equal(b, i);
        assert_int_equal(lo, i);
        assert_int_equal(hi, i + 1);
        total += c;
        p = strchr(p, '\n') + 1;
    }
    assert_int_equal(total, want_total);
}

static void test_csv(void **state)
{
    (void)state;
    const char *csv = path_in("h.csv");
    run_result r = RUN(sample("coffee.png"), "--csv", csv);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.out, "");
    free_result(&r);
    char *text = slurp(csv);
    check_csv(text, 600 * 400);

    /* To stdout, identical. */
    r = RUN(sample("coffee.png"), "--csv", "-");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.out, text);
    free_result(&r);
    free(text);

    /* From stdin, identical to reading the file. */
    r = RUN_IN(sample("moon.png"), "-", "--csv", "-");
    run_result f = RUN(sample("moon.png"), "--csv", "-");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.out, f.out);
    free_result(&r);
    free_result(&f);
}

static void test_equalize(void **state)
{
    (void)state;
    const char *out = path_in("eq.png");
    run_result r = RUN(sample("moon.png"), "--equalize", out, "--csv", path_in("h.csv"));
    assert_int_equal(r.code, 0);
    assert_string_equal(r.err, "");
    free_result(&r);

    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    imghist_image *in = NULL, *eq = NULL;
    assert_int_equal(imghist_load_file(ctx, sample("moon.png"), &in), IMGHIST_OK);
    assert_int_equal(imghist_load_file(ctx, out, &eq), IMGHIST_OK);
    assert_int_equal(eq->view.width, in->view.width);
    assert_int_equal(eq->view.height, in->view.height);
    const size_t npix = (size_t)in->view.width * in->view.height;
    uint8_t *want = malloc(npix);
    imghist_view wv = in->view;
    wv.data = want;
    wv.pitch = in->view.width;
    assert_int_equal(imghist_equalize(ctx, &in->view, &wv, IMGHIST_EQ_OPENCV, NULL), IMGHIST_OK);
    assert_memory_equal(eq->view.data, want, npix);
    /* Equalized: the darkest value maps to 0 and the brightest to 255. */
    uint64_t h[256];
    const imghist_counts hc = {.data = h, .len = 256, .mem = IMGHIST_MEM_HOST};
    assert_int_equal(imghist_histogram(ctx, &eq->view, NULL, &hc), IMGHIST_OK);
    assert_true(h[255] > 0);
    free(want);
    imghist_image_free(in);
    imghist_image_free(eq);
    imghist_destroy(ctx);

    /* The written file is a plain 8-bit grayscale PNG. */
    size_t n = 0;
    uint8_t *png = tu_read_file(out, &n);
    assert_true(n > 33);
    assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
    assert_int_equal(png[24], 8); /* bit depth */
    assert_int_equal(png[25], 0); /* colour type gray */
    free(png);
}

static void test_usage_exit_2(void **state)
{
    (void)state;
    const char *cases[][3] = {
        {"--bogus", NULL, NULL},
        {sample("moon.png"), "--backend", "tpu"},
        {sample("moon.png"), "--equalize", NULL},
        {"--csv", "x.csv", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = cases[i][1] == NULL   ? RUN(cases[i][0])
                       : cases[i][2] == NULL ? RUN(cases[i][0], cases[i][1])
                                             : RUN(cases[i][0], cases[i][1], cases[i][2]);
        assert_int_equal(r.code, 2);
        assert_one_line_error(&r, NULL);
        assert_string_equal(r.out, "");
        free_result(&r);
    }
}

/* Names and arguments with control characters still give one line: a
 * newline or an escape is shown as '?'. */
static void test_control_characters_in_names(void **state)
{
    (void)state;
    /* A missing file whose name holds a newline and an escape sequence. */
    const char *missing = path_in("no\nsuch\x1b[2J.png");
    run_result r = RUN(missing);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "no?such?[2J.png");
    assert_null(strchr(r.err, '\x1b'));
    free_result(&r);
    /* A bad file that exists under such a name. */
    const char *bad = path_in("bad\rname.png");
    assert_int_equal(tu_write_file(bad, "not an image", 12), 0);
    r = RUN(bad);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "bad?name.png");
    free_result(&r);
    /* A usage error echoing an argument. */
    r = RUN("--bogus\nsecond line");
    assert_int_equal(r.code, 2);
    assert_one_line_error(&r, "--bogus?second line");
    free_result(&r);
    /* Under -v the names in "wrote ..." lines too. */
    const char *csv = path_in("hist\n.csv");
    r = RUN(sample("moon.png"), "-v", "--csv", csv);
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.err, "wrote "));
    assert_non_null(strstr(r.err, "hist?.csv"));
    assert_true(tu_exists(csv));
    free_result(&r);
}

/* Temporary output files are hidden names in the target's folder: none may
 * be left behind. */
static void assert_no_temporaries(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            fail_msg("temporary file left behind: %s", e->d_name);
        }
    }
    closedir(d);
}

/* Bad inputs: exit 1, one line naming the file, no output created, input intact. */
static void check_bad_input(const char *input)
{
    size_t before_n = 0;
    uint8_t *before = tu_read_file(input, &before_n);
    const char *eq = path_in("out.png"), *csv = path_in("out.csv");
    run_result r = RUN(input, "--equalize", eq, "--csv", csv);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, input);
    assert_false(tu_exists(eq));
    assert_false(tu_exists(csv));
    assert_no_temporaries();
    free_result(&r);
    if (before != NULL) {
        size_t after_n = 0;
        uint8_t *after = tu_read_file(input, &after_n);
        assert_int_equal(after_n, before_n);
        assert_memory_equal(after, before, before_n);
        free(after);
    }
    free(before);
}

static void test_bad_inputs_exit_1(void **state)
{
    (void)state;
    check_bad_input(path_in("missing.png"));

    const char *empty = path_in("empty.png");
    tu_write_file(empty, "", 0);
    check_bad_input(empty);

    const char *text = path_in("notes.png");
    const char msg[] = "this is a text file, not a PNG\n";
    tu_write_file(text, msg, sizeof msg - 1);
    check_bad_input(text);

    size_t n = 0;
    uint8_t *moon = tu_read_file(sample("moon.png"), &n);
    assert_non_null(moon);
    const char *cut = path_in("truncated.png");
    tu_write_file(cut, moon, n / 2);
    check_bad_input(cut);
    tu_write_file(cut, moon, 40); /* header only */
    check_bad_input(cut);
    free(moon);
    /* A folder is not a bad input any more: it is a batch run (test_batch.py). */
}

static void test_failed_write_keeps_old_output(void **state)
{
    (void)state;
    /* An existing output survives a failed run untouched. */
    const char *out = path_in("keep.png");
    tu_write_file(out, "old", 3);
    const char *text = path_in("bad.png");
    tu_write_file(text, "nope", 4);
    run_result r = RUN(text, "--equalize", out);
    assert_int_equal(r.code, 1);
    free_result(&r);
    char *s = slurp(out);
    assert_string_equal(s, "old");
    free(s);
    assert_no_temporaries();

    /* Output folder missing: exit 1, names the output. */
    const char *nowhere = path_in("no/such/dir/eq.png");
    r = RUN(sample("moon.png"), "--equalize", nowhere);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, nowhere);
    free_result(&r);

    /* Disk full. */
    if (tu_exists("/dev/full")) {
        r = RUN(sample("moon.png"), "--csv", "/dev/full");
        assert_int_equal(r.code, 1);
        assert_one_line_error(&r, "/dev/full");
        free_result(&r);
    }

    /* A device that takes the bytes: written directly, and done. */
    if (tu_exists("/dev/null")) {
        const char *opts[] = {"--csv", "--json", "--equalize", "--total"};
        for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
            r = RUN(sample("moon.png"), opts[i], "/dev/null");
            assert_int_equal(r.code, 0);
            assert_string_equal(r.err, "");
            free_result(&r);
        }
    }
}

static void test_output_is_input_refused(void **state)
{
    (void)state;
    size_t n = 0;
    uint8_t *moon = tu_read_file(sample("moon.png"), &n);
    const char *copy = path_in("moon.png");
    tu_write_file(copy, moon, n);
    run_result r = RUN(copy, "--equalize", copy);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, copy);
    free_result(&r);
    /* Also through another spelling of the same path. */
    char other[4300];
    snprintf(other, sizeof other, "%s/./moon.png", dir);
    r = RUN(copy, "--csv", other);
    assert_int_equal(r.code, 1);
    free_result(&r);
    size_t m = 0;
    uint8_t *after = tu_read_file(copy, &m);
    assert_int_equal(m, n);
    assert_memory_equal(after, moon, n);
    free(after);
    free(moon);
}

/* A tiny PNG that declares 100000 x 100000 pixels: refused from its header,
 * with a message, before any large allocation. */
static void test_decompression_bomb(void **state)
{
    (void)state;
    uint8_t px = 0;
    size_t n = 0;
    uint8_t *png = tu_png_encode(1, 1, 0 /* gray */, 8, &px, NULL, 0, &n);
    /* IHDR data sits at bytes 16..28, its CRC at 29..32. */
    const uint32_t big = 100000;
    for (int k = 0; k < 2; k++) {
        png[16 + 4 * k] = (uint8_t)(big >> 24);
        png[17 + 4 * k] = (uint8_t)(big >> 16);
        png[18 + 4 * k] = (uint8_t)(big >> 8);
        png[19 + 4 * k] = (uint8_t)big;
    }
    const uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), png + 12, 17);
    png[29] = (uint8_t)(crc >> 24);
    png[30] = (uint8_t)(crc >> 16);
    png[31] = (uint8_t)(crc >> 8);
    png[32] = (uint8_t)crc;
    const char *bomb = path_in("bomb.png");
    tu_write_file(bomb, png, n);
    free(png);
    run_result r = RUN(bomb, "--equalize", path_in("out.png"));
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, bomb);
    assert_non_null(strstr(r.err, "limit"));
    /* The library says what the limit is; the tool adds how to raise it. */
    assert_non_null(strstr(r.err, "--max-pixels"));
    assert_false(tu_exists(path_in("out.png")));
    free_result(&r);

    r = RUN(sample("moon.png"), "--max-pixels", "10");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "--max-pixels");
    free_result(&r);

    /* --max-pixels lowers the limit; a limit at the image's size admits it. */
    r = RUN(sample("moon.png"), "--max-pixels", "262143");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "262143");
    free_result(&r);
    r = RUN(sample("moon.png"), "--max-pixels", "262144", "-q");
    assert_int_equal(r.code, 0);
    free_result(&r);
}

/* Standard input closed or empty, an output that cannot be created, a full
 * disk for the PNG: each one line, exit 1. */
static void test_stream_and_device_errors(void **state)
{
    (void)state;
    run_result r = RUN_IN(NULL, "-");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "<stdin>");
    free_result(&r);

    r = RUN_IN(CLOSED_STDIN, "-");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "<stdin>");
    free_result(&r);

    r = RUN(sample("moon.png"), "--csv", "/proc/self/imghist.csv");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "/proc/self/imghist.csv");
    free_result(&r);

    if (tu_exists("/dev/full")) {
        r = RUN(sample("moon.png"), "--equalize", "/dev/full");
        assert_int_equal(r.code, 1);
        assert_one_line_error(&r, "No space left");
        free_result(&r);
    }
}

static void test_cuda_backend_without_gpu(void **state)
{
    (void)state;
    imghist_ctx *ctx = NULL;
    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx);
    imghist_destroy(ctx);
    run_result r = RUN(sample("moon.png"), "--backend", "cuda", "-v");
    if (st == IMGHIST_OK) {
        assert_int_equal(r.code, 0);
        assert_non_null(strstr(r.err, "backend: cuda"));
    } else {
        assert_int_equal(r.code, 1);
        assert_one_line_error(&r, "no usable GPU");
    }
    free_result(&r);
    /* auto never fails for want of a GPU. */
    r = RUN(sample("moon.png"), "--backend", "auto", "-q");
    assert_int_equal(r.code, 0);
    assert_string_equal(r.err, "");
    free_result(&r);
}

/* Two outputs are all or nothing: when one cannot be written, the other is
 * not replaced either (nor created). */
static void check_one_output_fails(const char *good_opt, const char *good, const char *bad_opt,
                                   const char *bad, int good_first)
{
    tu_write_file(good, "old content", 11);
    run_result r = good_first ? RUN(sample("moon.png"), good_opt, good, bad_opt, bad)
                              : RUN(sample("moon.png"), bad_opt, bad, good_opt, good);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, bad);
    free_result(&r);
    char *s = slurp(good);
    if (strcmp(s, "old content") != 0) {
        fail_msg("%s %s was replaced although %s %s failed", good_opt, good, bad_opt, bad);
    }
    free(s);
    assert_false(tu_exists(bad));
    assert_no_temporaries();
    /* Nor is a fresh one created. */
    unlink(good);
    r = good_first ? RUN(sample("moon.png"), good_opt, good, bad_opt, bad)
                   : RUN(sample("moon.png"), bad_opt, bad, good_opt, good);
    assert_int_equal(r.code, 1);
    free_result(&r);
    if (tu_exists(good)) {
        fail_msg("%s %s was created although %s %s failed", good_opt, good, bad_opt, bad);
    }
    assert_no_temporaries();
}

static void test_two_outputs_all_or_nothing(void **state)
{
    (void)state;
    const char *png = path_in("keep.png"), *csv = path_in("keep.csv");
    for (int first = 0; first < 2; first++) {
        check_one_output_fails("--equalize", png, "--csv", path_in("missing/h.csv"), first);
        check_one_output_fails("--csv", csv, "--equalize", path_in("missing/eq.png"), first);
    }
    /* A "folder" that is a file: no user can create anything under it. */
    const char *file = path_in("plainfile");
    tu_write_file(file, "x", 1);
    check_one_output_fails("--equalize", png, "--csv", path_in("plainfile/h.csv"), 1);
    check_one_output_fails("--csv", csv, "--equalize", path_in("plainfile/eq.png"), 0);
    /* A folder that exists but cannot be written (root writes anyway). */
    if (geteuid() != 0) {
        const char *ro = path_in("readonly");
        assert_int_equal(mkdir(ro, 0555), 0);
        check_one_output_fails("--equalize", png, "--csv", path_in("readonly/h.csv"), 1);
        check_one_output_fails("--csv", csv, "--equalize", path_in("readonly/eq.png"), 0);
        chmod(ro, 0755);
    }
}

/* --max-bytes: an input longer than N bytes is refused with a message that
 * gives N, from a pipe (read until the limit, not into memory until
 * exhausted), from a regular file on stdin, and from a path. */
static void test_max_bytes(void **state)
{
    (void)state;
    /* A PNG signature, then zeros: a stream that looks like an image (one
     * that does not is refused from its first bytes), too long. */
    static uint8_t zeros[2 << 20];
    memcpy(zeros, "\x89PNG\r\n\x1a\n", 8);
    feed = zeros;
    feed_len = sizeof zeros;
    run_result r = RUN_IN(PIPED_STDIN, "-", "--max-bytes", "1000000");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "1000000");
    assert_null(strstr(r.err, "out of memory"));
    free_result(&r);

    const char *zfile = path_in("zeros.bin");
    assert_int_equal(tu_write_file(zfile, zeros, sizeof zeros), 0);
    r = RUN_IN(zfile, "-", "--max-bytes", "1000000");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "1000000");
    assert_null(strstr(r.err, "out of memory"));
    free_result(&r);
    r = RUN(zfile, "--max-bytes", "1000000");
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, "1000000");
    free_result(&r);

    /* A real image just over and exactly at the limit, every way in. */
    size_t n = 0;
    uint8_t *moon = tu_read_file(sample("moon.png"), &n);
    assert_non_null(moon);
    char at[32], under[32];
    snprintf(at, sizeof at, "%zu", n);
    snprintf(under, sizeof under, "%zu", n - 1);
    const char *out = path_in("eq.png");
    r = RUN(sample("moon.png"), "--max-bytes", under, "--equalize", out);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, under);
    assert_non_null(strstr(r.err, "moon.png"));
    assert_false(tu_exists(out));
    free_result(&r);
    r = RUN(sample("moon.png"), "--max-bytes", at, "-q");
    assert_int_equal(r.code, 0);
    free_result(&r);
    feed = moon;
    feed_len = n;
    r = RUN_IN(PIPED_STDIN, "-", "--max-bytes", under);
    assert_int_equal(r.code, 1);
    assert_one_line_error(&r, under);
    free_result(&r);
    r = RUN_IN(PIPED_STDIN, "-", "--max-bytes", at, "--csv", "-");
    assert_int_equal(r.code, 0);
    check_csv(r.out, 512 * 512);
    free_result(&r);
    free(moon);

    /* Bad values are usage errors, and so are values past the library's
     * bounds (2^31 - 1 bytes; 2^48 pixels). */
    r = RUN(sample("moon.png"), "--max-pixels", "300000000000000");
    assert_int_equal(r.code, 2);
    assert_one_line_error(&r, "--max-pixels");
    free_result(&r);
    const char *bad[] = {"abc", "-5", "12x", "", "2147483648"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = RUN(sample("moon.png"), "--max-bytes", bad[i]);
        assert_int_equal(r.code, 2);
        assert_one_line_error(&r, "--max-bytes");
        free_result(&r);
    }
}

/* Backend names in any case, through the library's one parser. */
static void test_backend_any_case(void **state)
{
    (void)state;
    run_result r = RUN(sample("moon.png"), "--backend", "CPU", "-v");
    assert_int_equal(r.code, 0);
    assert_non_null(strstr(r.err, "backend: cpu"));
    free_result(&r);
    r = RUN(sample("moon.png"), "--backend=Cpu", "-q");
    assert_int_equal(r.code, 0);
    free_result(&r);
    r = RUN(sample("moon.png"), "--backend", "AUTO", "-q");
    assert_int_equal(r.code, 0);
    free_result(&r);
    /* Cuda is a name the tool knows: it runs or says there is no GPU, never
     * a usage error. */
    imghist_ctx *ctx = NULL;
    const imghist_status st = imghist_create(IMGHIST_BACKEND_CUDA, -1, &ctx);
    imghist_destroy(ctx);
    r = RUN(sample("moon.png"), "--backend", "Cuda", "-q");
    if (st == IMGHIST_OK) {
        assert_int_equal(r.code, 0);
    } else {
        assert_int_equal(r.code, 1);
        assert_one_line_error(&r, "no usable GPU");
    }
    free_result(&r);
    r = RUN(sample("moon.png"), "--backend", "nonsense");
    assert_int_equal(r.code, 2);
    assert_one_line_error(&r, "nonsense");
    free_result(&r);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_cli IMGHIST_BINARY SAMPLES_DIR\n");
        return 2;
    }
    exe = argv[1];
    samples = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_help_and_version, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_equalize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_control_characters_in_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_exit_2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_inputs_exit_1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_write_keeps_old_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_is_input_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decompression_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_and_device_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda_backend_without_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_outputs_all_or_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backend_any_case, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
