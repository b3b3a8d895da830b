/*
 * Memory amplification: no input of the fuzz corpus or the crasher folder may
 * make the decoders ask for a large block. The libraries behind the loader
 * (libpng, libjpeg-turbo, libexif, stb_image) allocate from what a file
 * declares; imghist's header checks and chunk skipping must keep a small
 * file from asking for much (a 116-byte PNG once made libpng ask for 842 MB,
 * tests/crashers/png_exif_chunk_length_malloc_bomb.png).
 *
 * malloc, calloc and realloc are wrapped here around glibc's own entry points
 * to record the largest request, so this test is built only without
 * sanitizers (which wrap them themselves). Every file goes through both gray
 * modes: the luma mode has libpng read the colour chunks (iCCP among them)
 * that the other skips.
 * usage: test_alloc_limits DIR...   (exit 0: every file stayed under the bound)
 */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imghist.h"
#include "test_util.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static size_t largest;

static void note(size_t n)
{
    if (n > largest) {
        largest = n;
    }
}

void *malloc(size_t n)
{
    note(n);
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    note(size != 0 && n > SIZE_MAX / size ? SIZE_MAX : n * size);
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    note(n);
    return __libc_realloc(p, n);
}

/* The corpus decodes to at most a few megapixels; 64 MB leaves room for any
 * of them and is far under what a declared size can ask for. */
#define BOUND ((size_t)64 << 20)

/* Load every file of dir from memory and from the file; returns how many
 * loads asked for more than BOUND (-1: the folder cannot be read). */
static int replay(imghist_ctx *ctx, const char *dir, const char *mode_name, int *files)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "test_alloc_limits: cannot open %s\n", dir);
        return -1;
    }
    int bad = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) {
            continue;
        }
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size = 0;
        uint8_t *data = tu_read_file(path, &size);
        if (data == NULL) {
            continue; /* a folder */
        }
        largest = 0;
        imghist_image *img = NULL;
        if (imghist_load_memory(ctx, data, size, path, &img) == IMGHIST_OK) {
            imghist_image_free(img);
        }
        free(data);
        (*files)++;
        if (largest > BOUND) {
            printf("%s (%zu bytes, %s): imghist_load_memory asked for a block of %zu bytes\n",
                   path, size, mode_name, largest);
            bad++;
        }
        /* The file loader reads the file itself (sized by the file and
         * IMGHIST_P_MAX_INPUT_BYTES), then decodes: the same bound. */
        largest = 0;
        img = NULL;
        if (imghist_load_file(ctx, path, &img) == IMGHIST_OK) {
            imghist_image_free(img);
        }
        if (largest > BOUND) {
            printf("%s (%zu bytes, %s): imghist_load_file asked for a block of %zu bytes\n",
                   path, size, mode_name, largest);
            bad++;
        }
    }
    closedir(d);
    return bad;
}

int main(int argc, char **argv)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx) != IMGHIST_OK) {
        return 1;
    }
    static const struct {
        imghist_gray_mode mode;
        const char *name;
    } modes[] = {{IMGHIST_GRAY_BGR2GRAY, "bgr2gray"}, {IMGHIST_GRAY_LUMA, "luma"}};
    int files = 0, bad = 0;
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        if (imghist_set_param(ctx, IMGHIST_P_LOAD_GRAY, modes[m].mode) != IMGHIST_OK) {
            return 1;
        }
        for (int a = 1; a < argc; a++) {
            const int b = replay(ctx, argv[a], modes[m].name, &files);
            if (b < 0) {
                return 1;
            }
            bad += b;
        }
    }
    imghist_destroy(ctx);
    printf("%d loads of files, %d over the %zu-byte bound\n", files, bad, BOUND);
    return bad == 0 && files > 0 ? 0 : 1;
}
