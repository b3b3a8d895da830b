/* The I/O module's entry points in a build without it (-Dio=false): every
 * declaration exists in every build, and answers IMGHIST_E_UNSUPPORTED. */
#include <stdlib.h>

#include "core.h"

static imghist_status no_io(imghist_ctx *ctx)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                   "this build of imghist has no image I/O (-Dio=false)");
}

imghist_status imghist_load_file(imghist_ctx *ctx, const char *path, imghist_image **out)
{
    (void)path;
    if (out != NULL) *out = NULL;
    return no_io(ctx);
}

imghist_status imghist_load_memory(imghist_ctx *ctx, const void *data, size_t size,
                                   const char *name, imghist_image **out)
{
    (void)data; (void)size; (void)name;
    if (out != NULL) *out = NULL;
    return no_io(ctx);
}

void imghist_image_free(imghist_image *img)
{
    if (img != NULL) {
        free(img->view.data);
        free(img);
    }
}

imghist_status imghist_write_png(imghist_ctx *ctx, const char *path, const imghist_view *img)
{
    (void)path; (void)img;
    return no_io(ctx);
}

imghist_status imghist_encode_png(imghist_ctx *ctx, const imghist_view *img, void **png,
                                  size_t *size)
{
    (void)img;
    if (png != NULL) *png = NULL;
    if (size != NULL) *size = 0;
    return no_io(ctx);
}

void imghist_free(void *p)
{
    free(p);
}

const char *imghist_detect_format(const void *head, size_t size)
{
    (void)head;
    (void)size;
    return NULL;
}

imghist_status imghist_list_files(imghist_ctx *ctx, const char *const *inputs, size_t n_inputs,
                                  int recursive, imghist_file_list **out)
{
    (void)inputs; (void)n_inputs; (void)recursive;
    if (out != NULL) *out = NULL;
    return no_io(ctx);
}

void imghist_file_list_free(imghist_file_list *list)
{
    (void)list; /* no call of this build makes one */
}

size_t imghist_files_counts_len(const imghist_ctx *ctx, const imghist_histspec *spec)
{
    (void)ctx; (void)spec;
    return 0;
}

imghist_status imghist_histogram_files(imghist_ctx *ctx, const char *const *paths, size_t n,
                                       unsigned threads, const imghist_histspec *spec,
                                       const imghist_counts *out, imghist_file_result *results,
                                       imghist_progress_fn progress, void *user)
{
    (void)paths; (void)n; (void)threads; (void)spec; (void)out; (void)results;
    (void)progress; (void)user;
    return no_io(ctx);
}
