/*
 * CLAHE on the CUDA backend (kernels/clahe.cu): device views in place on the
 * context's stream; host views copied to the GPU, processed there and copied
 * back, the stream synchronised before the call returns. The workspaces grow
 * stream-ordered and stay with the context.
 */
#include "clahe.cuh"
#include "cuda_state.h"

imghist_status ih_cuda_clahe(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                             const ih_clahe_geom *g)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t es = g->levels == 256 ? 1 : 2;
    const size_t tiles = (size_t)g->tiles_x * g->tiles_y;
    const size_t hist_bytes = tiles * g->levels * sizeof(int32_t);
    const bool host = src->mem == IMGHIST_MEM_HOST;
    imghist_status st = ih_cuda_grow_async(ctx, &s->clahe_ws, &s->clahe_ws_cap,
                                           hist_bytes + tiles * g->levels * es, host);
    if (st != IMGHIST_OK) {
        return st;
    }
    int32_t *hist = (int32_t *)s->clahe_ws;
    void *lut = (uint8_t *)s->clahe_ws + hist_bytes;
    const size_t row = (size_t)g->width * es;
    if (!host) {
        IH_CUDA_TRY(ctx, "CLAHE launch",
                    ih_clahe_launch(src->data, src->pitch, dst->data, dst->pitch, g, hist, lut,
                                    s->sm_count, s->stream));
        return IMGHIST_OK;
    }
    st = ih_cuda_grow_async(ctx, &s->clahe_img, &s->clahe_img_cap, row * g->height, 1);
    if (st != IMGHIST_OK) {
        return st;
    }
    st = ih_cuda_upload_2d(ctx, "CLAHE upload", s->clahe_img, row, src->data, src->pitch, row,
                           g->height);
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_CUDA_TRY(ctx, "CLAHE launch",
                ih_clahe_launch(s->clahe_img, row, s->clahe_img, row, g, hist, lut, s->sm_count,
                                s->stream));
    st = ih_cuda_download_2d(ctx, "CLAHE download", dst->data, dst->pitch, s->clahe_img, row, row,
                             g->height);
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_CUDA_TRY(ctx, "CLAHE synchronisation", cudaStreamSynchronize(s->stream));
    return IMGHIST_OK;
}
