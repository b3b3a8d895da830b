/*
 * Many image files in one call: imghist_list_files against the folder it
 * lists (hidden, hostile and unreadable names, links, sub-folders), and
 * imghist_histogram_files against imghist_load_file + imghist_histogram of
 * each file, failures included (a truncated JPEG, text named .png, an empty
 * file, a missing one, a link loop, a folder), with 1 and 4 threads, bins
 * and ranges, native depth and channels, progress, cancelling, and the
 * refusals before any work; IMGHIST_P_DECODE: JPEGs of every sampling
 * layout, progressive, arithmetic-coded, 12-bit and EXIF-turned ones,
 * decoded on the GPU's hardware decoder (where the build and the GPU have
 * one) with the CPU's counts and sizes. Arguments: cpu or cuda (77 without
 * a GPU), and quick (for valgrind: no 4-MiB image, fewer files).
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
#include <jpeglib.h>

#include "imghist.h"
#include "imghist_experimental.h"

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

/* ---- JPEGs on the GPU's decoder (IMGHIST_P_DECODE) ---- */

enum { JPEG_KINDS = 9 };
static const char *const jpeg_kind_names[JPEG_KINDS] = {
    "444", "422", "420", "440", "411", "gray", "progressive", "restart", "quality100"};

/* rgb (w x h x 3) as a JPEG of kind k into the folder. */
static void write_jpeg(const char *name, const uint8_t *rgb, uint32_t w, uint32_t h, int k)
{
    char *p = path_in(name);
    FILE *fp = fopen(p, "wb");
    assert_non_null(fp);
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, fp);
    c.image_width = w;
    c.image_height = h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, k == 8 ? 100 : 85, TRUE);
    static const int hs[] = {1, 2, 2, 1, 4}, vs[] = {1, 1, 2, 2, 1};
    if (k <= 4) {
        c.comp_info[0].h_samp_factor = hs[k];
        c.comp_info[0].v_samp_factor = vs[k];
    } else if (k == 5) {
        jpeg_set_colorspace(&c, JCS_GRAYSCALE);
    } else if (k == 6) {
        jpeg_simple_progression(&c);
    } else if (k == 7) {
        c.restart_interval = 3;
    }
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < h) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)c.next_scanline * w * 3);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    assert_int_equal(fclose(fp), 0);
    free(p);
}

/* The file name with an APP1 EXIF block of orientation o after its SOI. */
static void write_turned(const char *from, const char *name, unsigned o)
{
    char *src = path_in(from);
    size_t n = 0;
    uint8_t *data = read_whole(src, &n);
    static const uint8_t exif[] = {'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0,
                                   0x12, 0x01, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t *out = malloc(n + 4 + sizeof exif);
    assert_non_null(out);
    memcpy(out, data, 2);
    const uint8_t head[4] = {0xFF, 0xE1, 0, (uint8_t)(sizeof exif + 2)};
    memcpy(out + 2, head, 4);
    memcpy(out + 6, exif, sizeof exif);
    out[6 + 24] = (uint8_t)o; /* the entry's value: IFD 0 at 8, its entry at 10, value +8 */
    memcpy(out + 6 + sizeof exif, data + 2, n - 2);
    write_bytes(name, out, n + 4 + sizeof exif);
    free(out);
    free(data);
    free(src);
}

/* The JPEGs of the GPU test into the folder as dec_*.jpg, their paths in
 * paths (malloc'd), repeated to at least `least` files. */
static size_t make_jpegs(char **paths, size_t least)
{
    imghist_ctx *ctx = new_ctx(IMGHIST_BACKEND_CPU);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_CHANNELS, 1), IMGHIST_OK);
    const char *samples = getenv("IMGHIST_SAMPLES");
    char src[1024];
    snprintf(src, sizeof src, "%s/%s", samples != NULL ? samples : "samples", "astronaut.png");
    imghist_image *img = NULL;
    assert_int_equal(imghist_load_file(ctx, src, &img), IMGHIST_OK);
    assert_int_equal(img->view.channels, 3);
    /* An odd size, cropped from the photograph. */
    const uint32_t w = 509, h = 383;
    uint8_t *rgb = malloc((size_t)w * h * 3);
    assert_non_null(rgb);
    for (uint32_t y = 0; y < h; y++) {
        memcpy(rgb + (size_t)y * w * 3, (const uint8_t *)img->view.data + y * img->view.pitch,
               (size_t)w * 3);
    }
    size_t n = 0;
    char name[64];
    for (int k = 0; k < JPEG_KINDS; k++) {
        snprintf(name, sizeof name, "dec_%s.jpg", jpeg_kind_names[k]);
        write_jpeg(name, rgb, w, h, k);
        paths[n++] = path_in(name);
    }
    for (unsigned o = 1; o <= 8; o++) {
        snprintf(name, sizeof name, "dec_turned%u.jpg", o);
        write_turned("dec_420.jpg", name, o);
        paths[n++] = path_in(name);
    }
    const char *conf[] = {"testorig.jpg", "testimgint.jpg", "testimgari.jpg", "monkey12.jpg"};
    for (size_t i = 0; i < sizeof conf / sizeof conf[0]; i++) {
        snprintf(name, sizeof name, "../tests/conformance/libjpeg-turbo/%s", conf[i]);
        snprintf(src, sizeof src, "dec_conf_%s", conf[i]);
        copy_sample(name, src, 1.0);
        paths[n++] = path_in(src);
    }
    copy_sample("hubble_deep_field.jpg", "dec_hubble.jpg", 1.0);
    paths[n++] = path_in("dec_hubble.jpg");
    const size_t distinct = n;
    for (size_t i = 0; n < least; i++) {
        paths[n++] = strdup(paths[i % distinct]);
    }
    free(rgb);
    imghist_image_free(img);
    imghist_destroy(ctx);
    return n;
}

static void remove_jpegs(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink(paths[i]); /* repeats are gone already */
        free(paths[i]);
    }
}

/* The CPU's counts and sizes for each file, on the GPU's decoder or not. */
static void check_decode_mode(imghist_ctx *ctx, char **paths, size_t n, imghist_decode mode)
{
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_DECODE, mode), IMGHIST_OK);
    uint64_t *counts = malloc(n * 256 * sizeof *counts);
    imghist_file_result *res = malloc(n * sizeof *res);
    assert_true(counts != NULL && res != NULL);
    memset(counts, 0xab, n * 256 * sizeof *counts);
    const imghist_counts out = {counts, n * 256, IMGHIST_MEM_HOST};
    const imghist_status st = imghist_histogram_files(ctx, (const char *const *)paths, n, 4,
                                                      NULL, &out, res, NULL, NULL);
    /* The 12-bit JPEG fails on the CPU too (libjpeg-turbo's 8-bit build),
     * and only it. */
    if (st != IMGHIST_OK && strstr(imghist_last_error(ctx), "monkey12") == NULL) {
        fail_msg("decode mode %d: %s", (int)mode, imghist_last_error(ctx));
    }
    check_against_reference(ctx, paths, n, NULL, counts, res, st);
    free_results(res, n);
    free(res);
    free(counts);
}

static void test_decode_param(void **state)
{
    (void)state;
    imghist_ctx *ctx = new_ctx(backend);
    int64_t v = -1, lo = 0, hi = 0;
    assert_int_equal(imghist_get_param(ctx, IMGHIST_P_DECODE, &v), IMGHIST_OK);
    assert_int_equal(v, IMGHIST_DECODE_AUTO);
    assert_int_equal(imghist_param_bounds(IMGHIST_P_DECODE, &lo, &hi), IMGHIST_OK);
    assert_int_equal(lo, IMGHIST_DECODE_AUTO);
    assert_int_equal(hi, IMGHIST_DECODE_GPU);
    assert_int_equal(imghist_set_param(ctx, IMGHIST_P_DECODE, 3), IMGHIST_E_INVALID_ARG);
    char *paths[128];
    const size_t n = make_jpegs(paths, quick ? 22 : 70);
    uint64_t counts[256];
    const imghist_counts out = {counts, 256, IMGHIST_MEM_HOST};
    imghist_file_result res[1];
    if (backend == IMGHIST_BACKEND_CPU) {
        /* A CPU context has no GPU to decode on: refused before any work. */
        assert_int_equal(imghist_set_param(ctx, IMGHIST_P_DECODE, IMGHIST_DECODE_GPU),
                         IMGHIST_OK);
        memset(counts, 0xab, sizeof counts);
        assert_int_equal(imghist_histogram_files(ctx, (const char *const *)paths, 1, 1, NULL,
                                                 &out, res, NULL, NULL),
                         IMGHIST_E_UNSUPPORTED);
        assert_non_null(strstr(imghist_last_error(ctx), "CPU context"));
        assert_int_equal(counts[0], 0xababababababababull);
        /* auto and cpu decode on the CPU, with its counts. */
        check_decode_mode(ctx, paths, n, IMGHIST_DECODE_AUTO);
        check_decode_mode(ctx, paths, n, IMGHIST_DECODE_CPU);
    } else if (!imghist_exp_jpeg_gpu_built()) {
        assert_int_equal(imghist_set_param(ctx, IMGHIST_P_DECODE, IMGHIST_DECODE_GPU),
                         IMGHIST_OK);
        assert_int_equal(imghist_histogram_files(ctx, (const char *const *)paths, 1, 1, NULL,
                                                 &out, res, NULL, NULL),
                         IMGHIST_E_UNSUPPORTED);
        assert_non_null(strstr(imghist_last_error(ctx), "nvJPEG"));
        check_decode_mode(ctx, paths, n, IMGHIST_DECODE_AUTO);
        printf("no nvJPEG in this build: the GPU's decode was not run\n");
    } else {
        for (int gray = 0; gray < 2; gray++) {
            assert_int_equal(imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, gray), IMGHIST_OK);
            /* The engine itself: which of the distinct files the GPU takes. */
            const imghist_exp_jpeg_gpu_opts o = {.mode = IMGHIST_DECODE_GPU, .n_files = n,
                                                 .local_size = 1, .cpu_jobs = 1};
            imghist_exp_jpeg_gpu *eng = NULL;
            if (imghist_exp_jpeg_gpu_start(ctx, &o, &eng) != IMGHIST_OK) {
                fail_msg("the GPU's JPEG decoder: %s", imghist_last_error(ctx));
            }
            size_t taken = 0;
            for (size_t i = 0; i < 22; i++) {
                uint32_t w = 0, h = 0;
                memset(counts, 0, sizeof counts);
                const int on_gpu = imghist_exp_jpeg_gpu_file(eng, paths[i], &w, &h, counts, NULL);
                const char *base = strrchr(paths[i], '/') + 1;
                /* Which ones the GPU must take: baseline 8-bit layouts whose
                 * gray it makes exactly; 4:1:1 never as bgr2gray, and as luma
                 * as the hardware decides (an H200's declines it). */
                const int maybe = gray == 1 && strstr(base, "411") != NULL;
                const int must = strstr(base, "progressive") == NULL &&
                                 strstr(base, "ari") == NULL && strstr(base, "monkey12") == NULL &&
                                 strstr(base, "411") == NULL;
                printf("%s %s: %s\n", gray ? "luma" : "bgr2gray", base,
                       on_gpu ? "GPU" : "CPU");
                if (!maybe && must != on_gpu) {
                    fail_msg("%s: %s on the GPU", base, on_gpu ? "decoded" : "not decoded");
                }
                taken += (size_t)on_gpu;
            }
            imghist_exp_jpeg_gpu_unit units[4];
            size_t declined = 0;
            assert_int_equal(imghist_exp_jpeg_gpu_stop(eng, units, 4, &declined), 1);
            assert_int_equal(units[0].images, taken);
            assert_int_equal(declined, 22 - taken);
            check_decode_mode(ctx, paths, n, IMGHIST_DECODE_GPU);
            /* auto: these small files are the CPU's (under 64 MiB a thread);
             * with the threshold at a byte, the GPU opens for them. */
            imghist_exp_jpeg_gpu_opts a = o;
            a.mode = IMGHIST_DECODE_AUTO;
            a.n_files = 64;
            a.n_bytes = 64 << 20;
            a.cpu_jobs = 4;
            assert_int_equal(imghist_exp_jpeg_gpu_start(ctx, &a, &eng), IMGHIST_OK);
            assert_null(eng);
            assert_int_equal(imghist_set_param(ctx, IMGHIST_P_EXP_AUTO_DECODE_BYTES, 1),
                             IMGHIST_OK);
            assert_int_equal(imghist_exp_jpeg_gpu_start(ctx, &a, &eng), IMGHIST_OK);
            assert_non_null(eng);
            (void)imghist_exp_jpeg_gpu_stop(eng, NULL, 0, NULL);
            check_decode_mode(ctx, paths, n, IMGHIST_DECODE_AUTO);
            assert_int_equal(imghist_set_param(ctx, IMGHIST_P_EXP_AUTO_DECODE_BYTES, 0),
                             IMGHIST_OK);
            check_decode_mode(ctx, paths, n, IMGHIST_DECODE_AUTO);
        }
    }
    remove_jpegs(paths, n);
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
        cmocka_unit_test(test_decode_param),
    };
    return cmocka_run_group_tests(tests, make_folder, remove_folder);
}
