/*
 * pil_equalize OUTDIR IN...: loads every IN (8-bit gray), equalizes them all
 * in one imghist_equalize_list call with PIL's rule and writes OUTDIR/<k>.png
 * for the k-th input; for test_pil_ref.py, which compares them with Pillow's
 * ImageOps.equalize. The backend is the default (CUDA where a GPU is usable).
 */
#include <stdio.h>
#include <stdlib.h>

#include "imghist.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUTDIR IN...\n", argv[0]);
        return 2;
    }
    const int n = argc - 2;
    imghist_ctx *ctx = NULL;
    imghist_status st = imghist_create(IMGHIST_BACKEND_AUTO, -1, &ctx);
    imghist_image **img = calloc((size_t)n, sizeof *img);
    imghist_view *views = calloc((size_t)n, sizeof *views);
    if (img == NULL || views == NULL) {
        st = IMGHIST_E_NOMEM;
    }
    if (st == IMGHIST_OK) st = imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, 4);
    for (int k = 0; k < n && st == IMGHIST_OK; k++) {
        st = imghist_load_file(ctx, argv[k + 2], &img[k]);
        if (st == IMGHIST_OK) {
            views[k] = img[k]->view;
        }
    }
    if (st == IMGHIST_OK) st = imghist_equalize_list(ctx, views, views, (size_t)n, IMGHIST_EQ_PIL,
                                                         NULL);
    for (int k = 0; k < n && st == IMGHIST_OK; k++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%d.png", argv[1], k);
        st = imghist_write_png(ctx, path, &views[k]);
    }
    if (st != IMGHIST_OK) {
        fprintf(stderr, "pil_equalize: %s: %s\n", imghist_strerror(st), imghist_last_error(ctx));
    }
    for (int k = 0; k < n; k++) {
        imghist_image_free(img[k]);
    }
    free(img);
    free(views);
    imghist_destroy(ctx);
    return st == IMGHIST_OK ? 0 : 1;
}
