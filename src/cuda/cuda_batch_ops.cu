/*
 * 8-bit equalization of a list of device views without masks: the descriptors (one per image,
 * small images first, then the large ones and their chunk numbering; built
 * and uploaded through cuda_desc.cu, not at all when the GPU already holds
 * them), the context's workspaces grown on the stream, and the one or two
 * launches of kernels/equalize_batch.cu. Only queues work.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_state.h"
#include "equalize_batch.cuh"
#include "hist_u8.cuh"

void ih_cuda_batch_close(ih_cuda_state *s)
{
    ih_desc_close(&s->eqb_desc);
    cudaFree(s->eqb_ws);
}

/* Image i of a batch, src v into dst d, one row when both are packed
 * (ih_flat); granules checked by the caller. */
static ih_eq_image eq_image(const imghist_view *v, const imghist_view *d, uint32_t i)
{
    ih_eq_image e;
    memset(&e, 0, sizeof e); /* no uninitialised bytes go to the GPU */
    const uint8_t *base = (const uint8_t *)v->data;
    ih_dev_image img = {base, v->pitch, v->width, v->height};
    img = ih_flat(img, d->pitch);
    ih_set_geom(&e.src, base, img.pitch, img.width, img.height);
    e.dst = (uint8_t *)d->data;
    e.dst_pitch = d->pitch;
    e.index = i;
    e.same_phase = (((uintptr_t)base ^ (uintptr_t)d->data) & 15) == 0 &&
                   (img.height == 1 || ((img.pitch ^ d->pitch) & 15) == 0);
    return e;
}

/* The most granule bytes of an image equalized by one block. */
static uint64_t small_limit(const imghist_ctx *ctx, const ih_cuda_state *s)
{
    const uint64_t small_max = s->eqb_small_max;
    const int64_t knob = ctx->params.eq_batch_small;
    return knob > 0 && (uint64_t)knob < small_max ? (uint64_t)knob : small_max;
}

typedef struct batch_plan {
    uint32_t n_small, n_large;
    uint32_t small_bytes; /* granule bytes of the largest small image */
    uint32_t chunks;      /* of the large images */
    uint32_t per_image;   /* chunks of each large image of a uniform batch */
    size_t bytes;         /* images, then n_large + 1 chunk starts */
} batch_plan;

/* The descriptors into buf (room for count images and count + 1 chunk
 * starts): small images from the front, large ones from the back (their
 * order does not matter), then the chunk starts. */
static imghist_status build(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                            size_t count, uint64_t small_max, uint8_t *buf, batch_plan *p)
{
    ih_eq_image *img = (ih_eq_image *)buf;
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < count; i++) {
        const imghist_view *v = &src[i], *d = &dst[i];
        const uint8_t *base = (const uint8_t *)v->data;
        const uint32_t per_row = ih_granules_per_row(base, v->pitch, v->width, v->height);
        if ((uint64_t)per_row * v->height >= IH_MAX_GRANULES) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "batch image %zu is over 32 GiB; give it to imghist_equalize", i);
        }
        const ih_eq_image e = eq_image(v, d, (uint32_t)i);
        const uint64_t bytes = (uint64_t)e.src.total * 16;
        if (bytes <= small_max) {
            img[p->n_small++] = e;
            p->small_bytes = bytes > p->small_bytes ? (uint32_t)bytes : p->small_bytes;
        } else {
            img[count - 1 - p->n_large++] = e;
        }
    }
    uint32_t *chunk_start = (uint32_t *)(img + count);
    uint64_t chunks = 0;
    for (uint32_t k = 0; k < p->n_large; k++) {
        chunk_start[k] = (uint32_t)chunks;
        chunks += (img[p->n_small + k].src.total + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
        if (chunks > UINT32_MAX) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch too large for one call");
        }
    }
    chunk_start[p->n_large] = (uint32_t)chunks;
    p->chunks = (uint32_t)chunks;
    p->bytes = count * sizeof(ih_eq_image) + (p->n_large + 1) * sizeof(uint32_t);
    return IMGHIST_OK;
}

/* The plan of a uniform batch (ih_uniform_views): all its images small or
 * all large; *one gets image 0. */
static imghist_status uniform_plan(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_view *dst, size_t count, uint64_t small_max,
                                   ih_eq_image *one, batch_plan *p)
{
    memset(p, 0, sizeof *p);
    const uint32_t per_row =
        ih_granules_per_row((const uint8_t *)src->data, src->pitch, src->width, src->height);
    if ((uint64_t)per_row * src->height >= IH_MAX_GRANULES) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "batch image 0 is over 32 GiB; give it to imghist_equalize");
    }
    *one = eq_image(src, dst, 0);
    const uint64_t bytes = (uint64_t)one->src.total * 16;
    if (bytes <= small_max) {
        p->n_small = (uint32_t)count;
        p->small_bytes = (uint32_t)bytes;
        return IMGHIST_OK;
    }
    const uint64_t per_image = (one->src.total + IH_HIST_CHUNK - 1) / IH_HIST_CHUNK;
    if (per_image * count > UINT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch too large for one call");
    }
    p->n_large = (uint32_t)count;
    p->chunks = (uint32_t)(per_image * count);
    p->per_image = (uint32_t)per_image;
    return IMGHIST_OK;
}

/* The workspace for `images` large images: their counters, tickets, LUTs. */
static size_t ws_tickets_at(size_t images)
{
    return images * 256 * sizeof(unsigned long long);
}

static size_t ws_luts_at(size_t images)
{
    return ws_tickets_at(images) + ((images * sizeof(unsigned int) + 15) & ~(size_t)15);
}

static size_t ws_bytes(size_t images)
{
    return ws_luts_at(images) + images * 256;
}

/* Runs of a persistent grid of `resident` blocks over `chunks` chunks, one
 * run per block. */
static void runs_for(uint32_t chunks, int resident, uint32_t *run, int *grid)
{
    const uint64_t r = ((uint64_t)chunks + (uint64_t)resident - 1) / (uint64_t)resident;
    *run = (uint32_t)(r > 0 ? r : 1);
    const uint64_t runs = ((uint64_t)chunks + *run - 1) / *run;
    *grid = runs < (uint64_t)resident ? (int)(runs > 0 ? runs : 1) : resident;
}

static imghist_status run_eq_batch(imghist_ctx *ctx, const ih_eq_batch_launch *lp,
                                   const batch_plan *pp, size_t count,
                                   const imghist_counts *hists);

imghist_status ih_cuda_equalize_batch_device(imghist_ctx *ctx, const imghist_view *src,
                                             const imghist_view *dst, size_t count,
                                             const imghist_counts *hists)
{
    ih_cuda_state *s = ih_cuda(ctx);
    batch_plan p;
    imghist_status st = IMGHIST_OK;
    const uint64_t small = small_limit(ctx, s);
    ih_eq_batch_launch l;
    memset(&l, 0, sizeof l);
    l.uniform = ih_list_uniform(ctx, src, dst, count, &l.src_stride, &l.dst_stride);
    if (l.uniform) {
        /* A batch tensor's images: image 0 and the strides travel in the launch. */
        st = uniform_plan(ctx, src, dst, count, small, &l.one, &p);
        return st != IMGHIST_OK ? st : run_eq_batch(ctx, &l, &p, count, hists);
    }
    if (!ih_desc_cached(&s->eqb_desc, src, dst, count, small, &p, sizeof p)) {
        uint8_t *buf = NULL;
        st = ih_desc_buffer(ctx, &s->eqb_desc,
                            count * sizeof(ih_eq_image) + (count + 1) * sizeof(uint32_t), &buf);
        if (st == IMGHIST_OK) st = build(ctx, src, dst, count, small, buf, &p);
        if (st == IMGHIST_OK) {
            st = ih_desc_upload(ctx, &s->eqb_desc, p.bytes, src, dst, count, small, &p, sizeof p);
        }
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    const ih_eq_image *d_img = (const ih_eq_image *)s->eqb_desc.dev;
    l.small = d_img;
    l.large = d_img + p.n_small;
    l.chunk_start = (const uint32_t *)(d_img + count);
    return run_eq_batch(ctx, &l, &p, count, hists);
}

imghist_status ih_cuda_equalize_strided(imghist_ctx *ctx, const imghist_view *src,
                                        ptrdiff_t src_stride, const imghist_view *dst,
                                        ptrdiff_t dst_stride, size_t count,
                                        const imghist_counts *hists)
{
    if (src_stride % 16 == 0 && dst_stride % 16 == 0) {
        ih_eq_batch_launch l;
        memset(&l, 0, sizeof l);
        l.uniform = true;
        l.src_stride = src_stride;
        l.dst_stride = dst_stride;
        batch_plan p;
        const imghist_status st =
            uniform_plan(ctx, src, dst, count, small_limit(ctx, ih_cuda(ctx)), &l.one, &p);
        return st != IMGHIST_OK ? st : run_eq_batch(ctx, &l, &p, count, hists);
    }
    /* Images of other phases: as views. */
    imghist_view *v = ih_strided_views(src, count, src_stride);
    imghist_view *d = ih_strided_views(dst, count, dst_stride);
    const imghist_status st =
        v == NULL || d == NULL
            ? ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", 2 * count)
            : ih_cuda_equalize_batch_device(ctx, v, d, count, hists);
    free(v);
    free(d);
    return st;
}

/* The launches of a planned batch (l: its images; p: their plan): the
 * workspace of the large images, the histograms' target, then the tiny-image
 * kernel or the batch kernels. */
static imghist_status run_eq_batch(imghist_ctx *ctx, const ih_eq_batch_launch *lp,
                                   const batch_plan *pp, size_t count,
                                   const imghist_counts *hists)
{
    ih_cuda_state *s = ih_cuda(ctx);
    ih_eq_batch_launch l = *lp;
    const batch_plan p = *pp;
    imghist_status st = IMGHIST_OK;
    l.n_small = p.n_small;
    l.small_bytes = p.small_bytes;
    l.n_large = p.n_large;
    l.per_image = p.per_image;
    l.pil = ctx->eq_method == IMGHIST_EQ_PIL;
    /* A tensor of tiny images: one warp an image (kernels/batch_tiny.cu). */
    const bool tiny = l.uniform && (uint64_t)l.one.src.total * 16 <= ih_tiny_limit(ctx);
    if (p.n_large > 0 && !tiny) {
        /* Counters and tickets are zero between launches (the last block of
         * each image leaves them so); a grown workspace starts zeroed. The
         * layout follows the capacity, not this batch, so that one batch's
         * LUTs never lie where a larger one's counters go. */
        if (p.n_large > s->eqb_ws_images) {
            const size_t need = ws_bytes(p.n_large);
            s->eqb_ws_images = 0; /* until it has grown */
            st = ih_cuda_grow_async(ctx, &s->eqb_ws, &s->eqb_ws_cap, need, 0);
            if (st != IMGHIST_OK) {
                return st;
            }
            IH_CUDA_TRY(ctx, "memset", cudaMemsetAsync(s->eqb_ws, 0, need, s->stream));
            s->eqb_ws_images = p.n_large;
        }
        const size_t cap = s->eqb_ws_images;
        l.ws = (unsigned long long *)s->eqb_ws;
        l.tickets = (unsigned int *)((uint8_t *)s->eqb_ws + ws_tickets_at(cap));
        l.luts = (unsigned char *)s->eqb_ws + ws_luts_at(cap);
        runs_for(p.chunks, s->sm_count * (s->eqb_count_bps > 0 ? s->eqb_count_bps : 1),
                 &l.count_run, &l.count_grid);
        runs_for(p.chunks, s->sm_count * (s->eqb_apply_bps > 0 ? s->eqb_apply_bps : 1),
                 &l.apply_run, &l.apply_grid);
    }
    const size_t n = count * 256;
    if (hists != NULL && hists->mem == IMGHIST_MEM_DEVICE) {
        l.hists = (unsigned long long *)hists->data;
    } else if (hists != NULL) {
        st = ih_cuda_grow_async(ctx, (void **)&s->batch_hist, &s->batch_hist_cap,
                                n * sizeof(uint64_t), 0);
        if (st != IMGHIST_OK) {
            return st;
        }
        l.hists = s->batch_hist;
    }
    if (tiny) {
        ih_tiny_launch t;
        memset(&t, 0, sizeof t);
        t.g0 = l.one.src;
        t.stride = l.src_stride;
        t.count = (uint32_t)count;
        t.hists = l.hists;
        t.equalize = true;
        t.pil = l.pil;
        t.dst0 = l.one.dst;
        t.dst_pitch = l.one.dst_pitch;
        t.dst_stride = l.dst_stride;
        t.same_phase = l.one.same_phase != 0;
        t.grid = ih_tiny_grid(s, count);
        IH_CUDA_TRY(ctx, "batch equalization launch", ih_launch_batch_tiny(t, s->stream));
    } else {
        IH_CUDA_TRY(ctx, "batch equalization launch", ih_launch_equalize_batch(l, s->stream));
    }
    return hists != NULL ? ih_cuda_deliver(ctx, hists, n, l.hists) : IMGHIST_OK;
}

imghist_status ih_cuda_equalize_one_small(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *dst, unsigned long long *hist,
                                          int *done)
{
    ih_cuda_state *s = ih_cuda(ctx);
    *done = 0;
    const uint8_t *base = (const uint8_t *)src->data;
    const uint64_t granules =
        (uint64_t)ih_granules_per_row(base, src->pitch, src->width, src->height) * src->height;
    if (granules * 16 > small_limit(ctx, s)) { /* the flat count is never larger */
        return IMGHIST_OK;
    }
    ih_eq_batch_launch l;
    memset(&l, 0, sizeof l);
    l.uniform = true; /* of one image, strides 0 */
    l.one = eq_image(src, dst, 0);
    l.n_small = 1;
    l.small_bytes = l.one.src.total * 16;
    l.hists = hist;
    l.pil = ctx->eq_method == IMGHIST_EQ_PIL;
    IH_CUDA_TRY(ctx, "equalization launch", ih_launch_equalize_batch(l, s->stream));
    *done = 1;
    return IMGHIST_OK;
}
