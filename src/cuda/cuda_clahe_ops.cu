/*
 * CLAHE on the CUDA backend (kernels/clahe.cu). Device images of one shape
 * laid out as a tensor (one image, a tensor, or a list whose views lie at
 * one stride) run in one set of launches on the context's stream; other
 * device lists image by image. Host images are copied to the GPU side by
 * side, processed there in one set of launches and copied back, the stream
 * synchronised before the call returns. Batches whose workspace would pass
 * kWorkspaceCap go in groups of images. The workspaces grow stream-ordered
 * and stay with the context.
 */
#include "clahe.cuh"
#include "cuda_state.h"

namespace {

/* Device bytes a set of launches may use for its tables (and, for host
 * images, its copies), unless one image needs more. */
constexpr size_t kWorkspaceCap = (size_t)256 << 20;

/* Images of one set of launches: up to `left`, within the cap when more
 * than one (per_image: staging bytes an image besides the tables); 0 when
 * not even one image's tables can be addressed. */
size_t group_of(const ih_clahe_geom *g, size_t left, size_t per_image, int sm_count)
{
    size_t k = left;
    const size_t most = ih_clahe_max_images(g);
    if (k > most) {
        k = most;
    }
    while (k > 0) {
        const size_t ws = ih_clahe_workspace(g, k, sm_count);
        if (ws != 0 && ws <= kWorkspaceCap && per_image <= (kWorkspaceCap - ws) / k) {
            return k;
        }
        if (k == 1) {
            return ws != 0 ? 1 : 0;
        }
        k /= 2;
    }
    return 0;
}

/* The workspaces for groups of k images (the last one count % k): grown
 * before the first launch, so that running out of GPU memory (for host
 * images: IH_E_GPU_OOM, the core then runs them all on the CPU) happens
 * before any image is written. */
imghist_status reserve(imghist_ctx *ctx, const ih_clahe_geom *g, size_t count, size_t k,
                       size_t staging, bool host)
{
    ih_cuda_state *s = ih_cuda(ctx);
    size_t ws = ih_clahe_workspace(g, k, s->sm_count);
    const size_t last = count % k != 0 ? ih_clahe_workspace(g, count % k, s->sm_count) : 0;
    ws = last > ws ? last : ws;
    imghist_status st = ih_cuda_grow_async(ctx, &s->clahe_ws, &s->clahe_ws_cap, ws, host);
    if (st == IMGHIST_OK && staging != 0) {
        st = ih_cuda_grow_async(ctx, &s->clahe_img, &s->clahe_img_cap, staging, 1);
    }
    return st;
}

imghist_status too_many_tiles(imghist_ctx *ctx, const ih_clahe_geom *g, bool host)
{
    if (host) {
        return IH_E_GPU_OOM;
    }
    return ih_fail(ctx, IMGHIST_E_LIMIT, "CLAHE's %ux%u tiles an image are more than the GPU "
                   "kernels take", g->used_x, g->used_y);
}

/* count device images at src + i * ss and dst + i * ds, in groups. */
imghist_status device_tensor(imghist_ctx *ctx, const imghist_view *src, ptrdiff_t ss,
                             const imghist_view *dst, ptrdiff_t ds, size_t count,
                             const ih_clahe_geom *g)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t k = group_of(g, count, 0, s->sm_count);
    if (k == 0) {
        return too_many_tiles(ctx, g, false);
    }
    const imghist_status st = reserve(ctx, g, count, k, 0, false);
    if (st != IMGHIST_OK) {
        return st;
    }
    for (size_t i = 0; i < count; i += k) {
        const size_t n = count - i < k ? count - i : k;
        const ih_clahe_images im = {(const uint8_t *)src->data + (ptrdiff_t)i * ss, src->pitch, ss,
                                    (uint8_t *)dst->data + (ptrdiff_t)i * ds, dst->pitch, ds, n};
        IH_CUDA_TRY(ctx, "CLAHE launch",
                    ih_clahe_launch(&im, g, s->clahe_ws, s->sm_count, s->stream));
    }
    return IMGHIST_OK;
}

/* Host images: each group copied into the staging buffer packed, one set of
 * launches in place there, copied back. */
imghist_status host_images(imghist_ctx *ctx, const ih_batch *b, const ih_clahe_geom *g)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t row = (size_t)g->width * (g->levels == 256 ? 1 : 2);
    const size_t bytes = row * g->height;
    const size_t k = group_of(g, b->count, bytes, s->sm_count);
    if (k == 0) {
        return too_many_tiles(ctx, g, true);
    }
    imghist_status st = reserve(ctx, g, b->count, k, k * bytes, true);
    for (size_t i = 0; i < b->count && st == IMGHIST_OK; i += k) {
        const size_t n = b->count - i < k ? b->count - i : k;
        for (size_t j = 0; j < n && st == IMGHIST_OK; j++) {
            imghist_view src, dst;
            ih_clahe_batch_image(b, i + j, &src, &dst);
            st = ih_cuda_upload_2d(ctx, "CLAHE upload", (uint8_t *)s->clahe_img + j * bytes, row,
                                   src.data, src.pitch, row, g->height);
        }
        const ih_clahe_images im = {s->clahe_img, row, (ptrdiff_t)bytes,
                                    s->clahe_img, row, (ptrdiff_t)bytes, n};
        if (st == IMGHIST_OK) {
            const cudaError_t e = ih_clahe_launch(&im, g, s->clahe_ws, s->sm_count, s->stream);
            if (e != cudaSuccess) {
                st = ih_cuda_error(ctx, "CLAHE launch", e);
            }
        }
        for (size_t j = 0; j < n && st == IMGHIST_OK; j++) {
            imghist_view src, dst;
            ih_clahe_batch_image(b, i + j, &src, &dst);
            st = ih_cuda_download_2d(ctx, "CLAHE download", dst.data, dst.pitch,
                                     (const uint8_t *)s->clahe_img + j * bytes, row, row,
                                     g->height);
        }
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_CUDA_TRY(ctx, "CLAHE synchronisation", cudaStreamSynchronize(s->stream));
    return IMGHIST_OK;
}

} // namespace

imghist_status ih_cuda_clahe(imghist_ctx *ctx, const ih_batch *b, const ih_clahe_geom *g)
{
    if (b->src[0].mem == IMGHIST_MEM_HOST) {
        return host_images(ctx, b, g);
    }
    if (b->kind == IH_TENSOR) {
        return device_tensor(ctx, &b->src[0], b->src_stride, &b->dst[0], b->dst_stride, b->count,
                             g);
    }
    uintptr_t ss = 0, ds = 0;
    if (b->kind == IH_ONE || (ih_views_progression(b->src, b->count, &ss) &&
                              ih_views_progression(b->dst, b->count, &ds))) {
        return device_tensor(ctx, &b->src[0], (ptrdiff_t)ss, &b->dst[0], (ptrdiff_t)ds,
                             b->count, g);
    }
    for (size_t i = 0; i < b->count; i++) {
        const imghist_status st = device_tensor(ctx, &b->src[i], 0, &b->dst[i], 0, 1, g);
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    return IMGHIST_OK;
}
