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
 * sanitizers (which wrap them themselves).
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

int main(int argc, char **argv)
{
    imghist_ctx *ctx = NULL;
    if (imghist_create(IMGHIST_BACKEND_CPU, &ctx) != IMGHIST_OK) {
        return 1;
    }
    int files = 0, bad = 0;
    for (int a = 1; a < argc; a++) {
        DIR *d = opendir(argv[a]);
        if (d == NULL) {
            fprintf(stderr, "test_alloc_limits: cannot open %s\n", argv[a]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) {
                continue;
            }
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", argv[a], e->d_name);
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
            files++;
            if (largest > BOUND) {
                printf("%s (%zu bytes): imghist_load_memory asked for a block of %zu bytes\n",
                       path, size, largest);
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
                printf("%s (%zu bytes): imghist_load_file asked for a block of %zu bytes\n", path,
                       size, largest);
                bad++;
            }
        }
        closedir(d);
    }
    imghist_destroy(ctx);
    printf("%d files, %d over the %zu-byte bound\n", files, bad, BOUND);
    return bad == 0 && files > 0 ? 0 : 1;
}
