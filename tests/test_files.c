/*
 * Many image files in one call: imghist_list_files against the folder it
 * lists (hidden, hostile and unreadable names, links, sub-folders), and
 * imghist_histogram_files against imghist_load_file + imghist_histogram of
 * each file, failures included (a truncated JPEG, text named .png, an empty
 * file, a missing one, a link loop, a folder), with 1 and 4 threads, bins
 * and ranges, native depth and channels, progress, cancelling, and the
 * refusals before any work. Arguments: cpu or cuda (77 without a GPU), and
 * quick (for valgrind: no 4-MiB image, fewer files).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "imghist.h"

static imghist_backend backend = IMGHIST_BACKEND_CPU;
static char dir[64];
/* Names in the folder that are images (and their order, sorted by path). */
static const char *hostile = "-weird name\n with \xff and \"quotes\".png";
static const char *images[] = {"astronaut.png", "camera.png", "coffee.png",
                               "hubble_deep_field.jpg", "moon.png"};
static int root;  /* a chmod 000 file is readable to root */
static int quick; /* under valgrind: no large image, fewer files */

static char *path_in(const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    assert_non_null(p);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void *read_whole(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    const long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    void *data = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, (size_t)n, fp), (size_t)n);
    fclose(fp);
    *size = (size_t)n;
    return data;
}

static void write_bytes(const char *name, const void *data, size_t size)
{
    char *p = path_in(name);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, size, fp), size);
    assert_int_equal(fclose(fp), 0);
    free(p);
}

static void copy_sample(const char *sample, const char *name, double part)
{
    const char *samples = getenv("IMGHIST_SAMPLES");
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", samples != NULL ? samples : "samples", sample);
    size_t size = 0;
    void *data = read_whole(src, &size);
    write_bytes(name, data, (size_t)(size * part));
    free(data);
}

static imghist_ctx *new_ctx(imghist_backend b)
{
    imghist_ctx *ctx = NULL;
    const imghist_status st = imghist_create(b, -1, &ctx);
    if (st != IMGHIST_OK) {
        fail_msg("imghist_create: %s", imghist_last_error(ctx));
    }
    return ctx;
}

/* A colour image of 2048 x 2100 (over 4 MiB of gray samples, so that a CUDA
 * context counts it on the GPU): gradients and a little noise. */
static void write_big(const char *name)
{
    const uint32_t w = 2048, h = 2100;
    uint8_t *px = malloc((size_t)w * h * 3);
    assert_non_null(px);
    uint32_t seed = 12345;
    for (size_t i = 0; i < (size_t)w * h; i++) {
        seed = seed * 1664525u + 1013904223u;
        const uint32_t x = (uint32_t)(i % w), y = (uint32_t)(i / w);
        px[3 * i] = (uint8_t)((x / 8 + (seed >> 29)) & 255);
        px[3 * i + 1] = (uint8_t)((y / 9 + (seed >> 30)) & 255);
        px[3 * i + 2] = (uint8_t)(((x + y) / 16) & 255);
    }
    const imghist_view v = {.data = px, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                            .width = w, .height = h, .pitch = (size_t)w * 3, .channels = 3};
    imghist_ctx *ctx = new_ctx(IMGHIST_BACKEND_CPU);
    char *p = path_in(name);
    assert_int_equal(imghist_write_png(ctx, p, &v), IMGHIST_OK);
    free(p);
    imghist_destroy(ctx);
    free(px);
}

static int make_folder(void **state)
{
    (void)state;
    root = geteuid() == 0;
    strcpy(dir, "/tmp/imghist_files_XXXXXX");
    if (mkdtemp(dir) == NULL) {
        return -1;
    }
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        copy_sample(images[i], images[i], 1.0);
    }
    copy_sample("camera.png", ".hidden.png", 1.0);
    copy_sample("moon.png", hostile, 1.0);
    copy_sample("hubble_deep_field.jpg", "truncated.jpg", 0.6);
    copy_sample("camera.png", "unreadable.png", 1.0);
    if (!quick) write_big("big.png");
    write_bytes("text.png", "this is text, not a PNG\n", 24);
    write_bytes("empty.png", "", 0);
    char *p = path_in("unreadable.png");
    chmod(p, 0);
    free(p);
    char *sub = path_in("sub");
    mkdir(sub, 0777);
    free(sub);
    copy_sample("coffee.png", "sub/deep.png", 1.0);
    char *loop = path_in("loop"), *dangling = path_in("dangling"), *linkdir = path_in("linkdir");
    if (symlink("loop", loop) != 0 || symlink("nothing-here", dangling) != 0 ||
        symlink("sub", linkdir) != 0) {
        return -1;
    }
    free(loop);
    free(dangling);
    free(linkdir);
    return 0;
}

static int remove_folder(void **state)
{
    (void)state;
    const char *names[] = {"astronaut.png", "camera.png", "coffee.png", "hubble_deep_field.jpg",
                           "moon.png", ".hidden.png", "truncated.jpg", "unreadable.png",
                           "big.png", "text.png", "empty.png", "sub/deep.png", "loop",
                           "dangling", "linkdir"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = path_in(names[i]);
        unlink(p);
        free(p);
    }
    char *p = path_in(hostile);
    unlink(p);
    free(p);
    p = path_in("sub");
    rmdir(p);
    free(p);
    rmdir(dir);
    return 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The images the listing must find, sorted as paths. */
static size_t expected_images(int recursive, char **out)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) out[n++] = path_in(images[i]);
    out[n++] = path_in(".hidden.png");
    out[n++] = path_in(hostile);
    out[n++] = path_in("truncated.jpg");
    if (!quick) out[n++] = path_in("big.png");
    if (root) out[n++] = path_in("unreadable.png");
    if (recursive) out[n++] = path_in("sub/deep.png");
    qsort(out, n, sizeof *out, by_str);
    return n;
}

static void check_listing(int recursive)
{
    imghist_ctx *ctx = new_ctx(IMGHIST_BACKEND_CPU);
    imghist_file_list *list = NULL;
    const char *inputs[] = {dir};
    assert_int_equal(imghist_list_files(ctx, inputs, 1, recursive, &list), IMGHIST_OK);
    char *want[16];
    const size_t n = expected_images(recursive, want);
    assert_int_equal(list->count, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(list->paths[i], want[i]);
        free(want[i]);
    }
    assert_int_equal(list->skipped, 3); /* text.png, empty.png, dangling */
    /* The link loop, and to anyone but root the file without permissions. */
    assert_int_equal(list->n_unreadable, root ? 1 : 2);
    char *loop = path_in("loop");
    int saw_loop = 0;
    for (size_t i = 0; i < list->n_unreadable; i++) {
        const imghist_file_failure *f = &list->unreadable[i];
        assert_non_null(strstr(f->message, "cannot be read"));
        assert_int_equal(strncmp(f->message, f->path, strlen(f->path)), 0);
        saw_loop |= strcmp(f->path, loop) == 0;
    }
    assert_true(saw_loop);
    free(loop);
    imghist_file_list_free(list);

    /* A file given by name is taken as it is; given twice, once; a missing
     * input fails the call. */
    char *a = path_in("moon.png"), *b = path_in("camera.png");
    const char *two[] = {a, b, a};
    assert_int_equal(imghist_list_files(ctx, two, 3, recursive, &list), IMGHIST_OK);
    assert_int_equal(list->count, 2);
    assert_string_equal(list->paths[0], b);
    assert_string_equal(list->paths[1], a);
    imghist_file_list_free(list);
    char *missing = path_in("missing");
    const char *gone[] = {a, missing};
    list = (imghist_file_list *)&list;
    assert_int_equal(imghist_list_files(ctx, gone, 2, recursive, &list), IMGHIST_E_IO);
    assert_null(list);
    assert_non_null(strstr(imghist_last_error(ctx), missing));
    free(a);
    free(b);
    free(missing);
    imghist_destroy(ctx);
}

static void test_list_folder(void **state)
{
    (void)state;
    check_listing(0);
}

static void test_list_recursive(void **state)
{
    (void)state;
    check_listing(1);
}

/* The folder's images, then files that fail in every way a path can. */
static size_t test_paths(char **paths)
{
    const size_t n = expected_images(1, paths);
    const char *bad[] = {"text.png", "empty.png", "missing.png", "loop", "sub"};
    size_t k = n;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) paths[k++] = path_in(bad[i]);
    if (!root) paths[k++] = path_in("unreadable.png");
    return k;
}

/* Each file's result and counters against load + histogram on a CPU
 * context with the same parameters. */
static void check_against_reference(const imghist_ctx *ctx, char **paths, size_t n,
                                    const imghist_histspec *spec, const uint64_t *counts,
                                    const imghist_file_result *res, imghist_status ret)
{
    imghist_ctx *ref = new_ctx(IMGHIST_BACKEND_CPU);
    const imghist_param params[] = {IMGHIST_P_LOAD_GRAY, IMGHIST_P_LOAD_DEPTH,
                                    IMGHIST_P_LOAD_CHANNELS, IMGHIST_P_LOAD_TRUNCATED,
                                    IMGHIST_P_MAX_PIXELS};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        int64_t v = 0;
        assert_int_equal(imghist_get_param(ctx, params[i], &v), IMGHIST_OK);
        assert_int_equal(imghist_set_param(ref, params[i], v), IMGHIST_OK);
    }
    const size_t len = imghist_files_counts_len(ctx, spec);
    assert_true(len > 0);
    uint64_t *want = malloc(len * sizeof *want);
    assert_non_null(want);
    size_t failed = 0, first = n;
    for (size_t i = 0; i < n; i++) {
        memset(want, 0, len * sizeof *want);
        imghist_image *img = NULL;
        imghist_status st = imghist_load_file(ref, paths[i], &img);
        if (st == IMGHIST_OK) {
            const uint32_t ch = img->view.channels > 1 ? img->view.channels : 1;
            const imghist_counts c = {want, imghist_counts_len(spec, img->view.dtype, ch),
                                      IMGHIST_MEM_HOST};
            assert_int_equal(imghist_histogram(ref, &img->view, spec, &c), IMGHIST_OK);
            assert_int_equal(res[i].width, img->view.width);
            assert_int_equal(res[i].height, img->view.height);
            assert_int_equal(res[i].channels, ch);
            assert_int_equal(res[i].dtype, img->view.dtype);
            assert_int_equal(res[i].flags, img->flags);
            imghist_image_free(img);
            if (res[i].message != NULL) {
                fail_msg("%s: counted, yet a message: %s", paths[i], res[i].message);
            }
        } else {
            failed++;
            first = first < i ? first : i;
            /* The message the CLI prints for it: the load's, naming the file. */
            assert_non_null(res[i].message);
            assert_string_equal(res[i].message, imghist_last_error(ref));
            assert_int_equal(strncmp(res[i].message, paths[i], strlen(paths[i])), 0);
        }
        assert_int_equal(res[i].status, st);
        if (memcmp(want, counts + i * len, len * sizeof *want) != 0) {
            fail_msg("%s: the counters differ from load + histogram's", paths[i]);
        }
    }
    assert_int_equal(ret, failed ? res[first].status : IMGHIST_OK);
    if (failed) {
        char head[64];
        snprintf(head, sizeof head, "%zu of %zu files failed", failed, n);
        assert_non_null(strstr(imghist_last_error(ctx), head));
    }
    free(want);
    imghist_destroy(ref);
}

static void free_results(imghist_file_result *res, size_t n)
{
    for (size_t i = 0; i < n; i++) imghist_free(res[i].message);
}

/* Runs the call with 1 and 4 threads: the same results, each the
 * reference's. */
static void check_files(imghist_ctx *ctx, const imghist_histspec *spec)
{
    char *paths[32];
    const size_t n = test_paths(paths);
    const size_t len = imghist_files_counts_len(ctx, spec);
    assert_true(len > 0);
    uint64_t *counts[2];
    imghist_file_result res[2][32];
    const unsigned threads[2] = {1, 4};
    imghist_status ret[2];
    for (int t = 0; t < 2; t++) {
        counts[t] = malloc(n * len * sizeof(uint64_t));
        assert_non_null(counts[t]);
        memset(counts[t], 0xab, n * len * sizeof(uint64_t)); /* every counter written */
        const imghist_counts out = {counts[t], n * len, IMGHIST_MEM_HOST};
        ret[t] = imghist_histogram_files(ctx, (const char *const *)paths, n, threads[t], spec,
                                         &out, res[t], NULL, NULL);
        check_against_reference(ctx, paths, n, spec, counts[t], res[t], ret[t]);
    }
    assert_int_equal(ret[0], ret[1]);
    assert_memory_equal(counts[0], counts[1], n * len * sizeof(uint64_t));
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(res[0][i].status, res[1][i].status);
    }
    for (int t = 0; t < 2; t++) {
        free_results(res[t], n);
        free(counts[t]);
    }
    for (size_t i = 0; i < n; i++) free(paths[i]);
}

static void test_files_default(void **state)
{
    (void)state;
    imghist_ctx *ctx = new_ctx(backend);
    assert_int_equal(imghist_files_counts_len(ctx, NULL), 256);
    check_files(ctx, NULL);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, IMGHIST_GRAY_LUMA), IMGHIST_OK);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_TRUNCATED, 1), IMGHIST_OK);
    check_files(ctx, NULL); /* the truncated JPEG is counted now, flagged */
    imghist_destroy(ctx);
}

static void test_files_bins_channels_depth(void **state)
{
    (void)state;
    imghist_ctx *ctx = new_ctx(backend);
    const imghist_histspec spec = {100, 10.0, 250.5, IMGHIST_OUTLIERS};
    assert_int_equal(imghist_files_counts_len(ctx, &spec), 103);
    check_files(ctx, &spec);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 1), IMGHIST_OK);
    assert_int_equal(imghist_files_counts_len(ctx, &spec), 4 * 103);
    assert_int_equal(imghist_files_counts_len(ctx, NULL), 4 * 256);
    check_files(ctx, &spec);
    check_files(ctx, NULL);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, 1), IMGHIST_OK);
    assert_int_equal(imghist_files_counts_len(ctx, NULL), 0); /* no common natural bins */
    const imghist_histspec wide = {64, 0.0, 65536.0, IMGHIST_CLOSED};
    check_files(ctx, &wide);
    imghist_destroy(ctx);
}

typedef struct ticks {
    pthread_t caller;
    size_t calls, last_done, last_total, cancel_at;
    int off_thread, backwards;
} ticks;

static int on_progress(void *user, size_t done, size_t total)
{
    ticks *t = user;
    t->off_thread |= !pthread_equal(pthread_self(), t->caller);
    t->backwards |= done < t->last_done || done > total;
    t->calls++;
    t->last_done = done;
    t->last_total = total;
    return t->cancel_at != 0 && t->calls >= t->cancel_at;
}

static void test_progress_and_cancel(void **state)
{
    (void)state;
    imghist_ctx *ctx = new_ctx(backend);
    /* Many files: long enough for ticks (ten a second) on any machine. */
    const size_t N = quick ? 40 : 400;
    const char **paths = malloc(N * sizeof *paths);
    uint64_t *counts = malloc((size_t)N * 256 * sizeof *counts);
    imghist_file_result *res = malloc(N * sizeof *res);
    assert_true(paths != NULL && counts != NULL && res != NULL);
    char *one = path_in("coffee.png");
    for (size_t i = 0; i < N; i++) paths[i] = one;
    const imghist_counts out = {counts, (size_t)N * 256, IMGHIST_MEM_HOST};

    ticks t = {.caller = pthread_self()};
    assert_int_equal(imghist_histogram_files(ctx, paths, N, 2, NULL, &out, res, on_progress, &t),
                     IMGHIST_OK);
    assert_true(t.calls >= 1);
    assert_false(t.off_thread);
    assert_false(t.backwards);
    assert_int_equal(t.last_done, N); /* the last call says all are done */
    assert_int_equal(t.last_total, N);
    free_results(res, N);

    /* Cancelled at the first tick: the files taken are counted, the rest are
     * not and say so. */
    ticks c = {.caller = pthread_self(), .cancel_at = 1};
    memset(counts, 0xab, (size_t)N * 256 * sizeof *counts);
    assert_int_equal(imghist_histogram_files(ctx, paths, N, 1, NULL, &out, res, on_progress, &c),
                     IMGHIST_E_CANCELED);
    assert_non_null(strstr(imghist_last_error(ctx), "canceled"));
    assert_int_equal(c.calls, 1);
    assert_false(c.off_thread);
    size_t done = 0;
    while (done < N && res[done].status == IMGHIST_OK) done++;
    assert_true(done >= 1 && done < N);
    uint64_t sum = 0;
    for (size_t v = 0; v < 256; v++) sum += counts[v];
    assert_true(sum > 0);
    for (size_t i = done; i < N; i++) {
        assert_int_equal(res[i].status, IMGHIST_E_CANCELED);
        assert_non_null(res[i].message);
        assert_non_null(strstr(res[i].message, "not counted"));
        for (size_t v = 0; v < 256; v++) assert_int_equal(counts[i * 256 + v], 0);
    }
    for (size_t i = 1; i < done; i++) {
        assert_memory_equal(counts, counts + i * 256, 256 * sizeof *counts);
    }
    free_results(res, N);
    free(one);
    free(paths);
    free(counts);
    free(res);
    imghist_destroy(ctx);
}

/* Refusals before any work: nothing written, not even the results. */
static void test_refusals(void **state)
{
    (void)state;
    imghist_ctx *ctx = new_ctx(backend);
    char *p = path_in("moon.png");
    const char *paths[2] = {p, p};
    const char *with_null[2] = {p, NULL};
    uint64_t counts[512];
    imghist_file_result res[2];
    const imghist_counts out = {counts, 512, IMGHIST_MEM_HOST};
    const imghist_counts short_out = {counts, 511, IMGHIST_MEM_HOST};
    const imghist_counts device_out = {counts, 512, IMGHIST_MEM_DEVICE};
    const imghist_counts null_out = {NULL, 512, IMGHIST_MEM_HOST};
    const imghist_histspec acc = {0, 0, 0, IMGHIST_ACCUMULATE};
    const imghist_histspec bad = {16, 5.0, 5.0, 0};
    struct {
        imghist_ctx *ctx;
        const char *const *paths;
        size_t n;
        const imghist_histspec *spec;
        const imghist_counts *out;
        imghist_status want;
    } cases[] = {
        {NULL, paths, 2, NULL, &out, IMGHIST_E_INVALID_ARG},
        {ctx, NULL, 2, NULL, &out, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 0, NULL, &out, IMGHIST_E_INVALID_ARG},
        {ctx, with_null, 2, NULL, &out, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 2, NULL, NULL, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 2, NULL, &null_out, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 2, NULL, &device_out, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 2, NULL, &short_out, IMGHIST_E_BUFSIZE},
        {ctx, paths, 2, &acc, &out, IMGHIST_E_INVALID_ARG},
        {ctx, paths, 2, &bad, &out, IMGHIST_E_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(counts, 0xab, sizeof counts);
        memset(res, 0xcd, sizeof res);
        const imghist_status st = imghist_histogram_files(cases[i].ctx, cases[i].paths,
                                                          cases[i].n, 2, cases[i].spec,
                                                          cases[i].out, res, NULL, NULL);
        if (st != cases[i].want) {
            fail_msg("case %zu: %s, not %s", i, imghist_strerror(st),
                     imghist_strerror(cases[i].want));
        }
        if (cases[i].ctx != NULL) {
            assert_true(imghist_last_error(ctx)[0] != '\0');
        }
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            assert_int_equal(counts[k], 0xababababababababull);
        }
        const unsigned char *b = (const unsigned char *)res;
        for (size_t k = 0; k < sizeof res; k++) assert_int_equal(b[k], 0xcd);
    }
    /* Native depth with no bins: 8-bit, 16-bit and float files share none. */
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_DEPTH, 1), IMGHIST_OK);
    assert_int_equal(imghist_histogram_files(ctx, paths, 2, 1, NULL, &out, res, NULL, NULL),
                     IMGHIST_E_INVALID_ARG);
    assert_non_null(strstr(imghist_last_error(ctx), "bins"));

    imghist_file_list *list = (imghist_file_list *)&list;
    const char *inputs[] = {dir};
    const char *null_input[] = {NULL};
    assert_int_equal(imghist_list_files(ctx, inputs, 1, 0, NULL), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_list_files(ctx, NULL, 1, 0, &list), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_list_files(ctx, inputs, 0, 0, &list), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_list_files(ctx, null_input, 1, 0, &list), IMGHIST_E_INVALID_ARG);
    assert_int_equal(imghist_list_files(NULL, inputs, 1, 0, &list), IMGHIST_E_INVALID_ARG);
    imghist_file_list_free(NULL);
    assert_int_equal(imghist_files_counts_len(NULL, NULL), 0);
    free(p);
    imghist_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "cuda") == 0) {
        int n = 0;
        if (imghist_device_count(&n) != IMGHIST_OK || n == 0) {
            printf("no usable GPU: skipped\n");
            return 77;
        }
        backend = IMGHIST_BACKEND_CUDA;
    }
    quick = argc > 2 && strcmp(argv[2], "quick") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_folder),
        cmocka_unit_test(test_list_recursive),
        cmocka_unit_test(test_files_default),
        cmocka_unit_test(test_files_bins_channels_depth),
        cmocka_unit_test(test_progress_and_cancel),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}
