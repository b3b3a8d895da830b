/*
 * imghist_equalize_batch on device views: the descriptors (one per image,
 * small images first, then the large ones and their chunk numbering), their
 * upload through pinned buffers taken in turn, skipped when the GPU already
 * holds the same, the context's workspaces grown on the stream, and the one
 * or two launches of kernels/equalize_batch.cu. Only queues work.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_state.h"
#include "equalize_batch.cuh"
#include "hist_u8.cuh"

void ih_cuda_batch_close(ih_cuda_state *s)
{
    cudaFree(s->eqb_desc);
    cudaFree(s->eqb_ws);
    free(s->eqb_last);
    free(s->eqb_build);
    free(s->eqb_cache);
    for (int k = 0; k < IH_EQB_SLOTS; k++) {
        cudaFreeHost(s->eqb_slot[k].host);
        if (s->eqb_slot[k].done != NULL) {
            cudaEventDestroy(s->eqb_slot[k].done);
        }
    }
}

/* *buf holds at least `need` bytes (contents lost). */
static imghist_status grow_host(imghist_ctx *ctx, uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return IMGHIST_OK;
    }
    free(*buf);
    *cap = 0;
    *buf = (uint8_t *)malloc(need);
    if (*buf == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu bytes of descriptors", need);
    }
    *cap = need;
    return IMGHIST_OK;
}

/* The layout of a batch's descriptors. */
/* Image i of a batch, src v into dst d, one row when both are packed
 * (ih_flat); granules checked by the caller. */
static ih_eq_image eq_image(const imghist_view *v, const imghist_view *d, uint32_t i)
{
    ih_eq_image e;
    memset(&e, 0, sizeof e); /* padding too: the descriptors are compared bytewise */
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
    size_t bytes;         /* images, then n_large + 1 chunk starts */
} batch_plan;

/* Descriptors into s->eqb_build: small images from the front, large ones
 * from the back (their order does not matter), then the chunk starts. */
static imghist_status build(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                            size_t count, batch_plan *p)
{
    ih_cuda_state *s = ih_cuda(ctx);
    const size_t most = count * sizeof(ih_eq_image) + (count + 1) * sizeof(uint32_t);
    imghist_status st = grow_host(ctx, &s->eqb_build, &s->eqb_build_cap, most);
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_eq_image *img = (ih_eq_image *)s->eqb_build;
    memset(p, 0, sizeof *p);
    const uint64_t small_max = small_limit(ctx, s);
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

/*
 * s->eqb_build's first `bytes` to the device, unless the device already holds
 * them (a pipeline that passes the same frames again). The copy goes through
 * the next pinned slot, so that it is a real asynchronous copy; the slot's
 * event says when its previous upload has read it.
 */
static imghist_status upload(imghist_ctx *ctx, size_t bytes)
{
    ih_cuda_state *s = ih_cuda(ctx);
    if (s->eqb_last_bytes == bytes && memcmp(s->eqb_last, s->eqb_build, bytes) == 0) {
        return IMGHIST_OK;
    }
    s->eqb_last_bytes = 0; /* until the copy below is queued */
    imghist_status st = ih_cuda_grow_async(ctx, &s->eqb_desc, &s->eqb_desc_cap, bytes, 0);
    if (st != IMGHIST_OK) {
        return st;
    }
    auto *slot = &s->eqb_slot[s->eqb_next_slot];
    s->eqb_next_slot = (s->eqb_next_slot + 1) % IH_EQB_SLOTS;
    if (slot->done == NULL) {
        IH_CUDA_TRY(ctx, "event creation",
                    cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming));
    }
    IH_CUDA_TRY(ctx, "descriptor upload wait", cudaEventSynchronize(slot->done));
    if (slot->cap < bytes) {
        const size_t want = bytes + bytes / 4;
        const cudaError_t freed = cudaFreeHost(slot->host);
        slot->host = NULL;
        slot->cap = 0;
        IH_CUDA_TRY(ctx, "pinned free", freed);
        IH_CUDA_TRY(ctx, "pinned allocation",
                    cudaHostAlloc((void **)&slot->host, want, cudaHostAllocDefault));
        slot->cap = want;
    }
    memcpy(slot->host, s->eqb_build, bytes);
    IH_CUDA_TRY(ctx, "descriptor upload",
                cudaMemcpyAsync(s->eqb_desc, slot->host, bytes, cudaMemcpyHostToDevice,
                                s->stream));
    IH_CUDA_TRY(ctx, "event record", cudaEventRecord(slot->done, s->stream));
    /* eqb_build becomes the record of what the device holds. */
    uint8_t *t = s->eqb_last;
    const size_t cap = s->eqb_last_cap;
    s->eqb_last = s->eqb_build;
    s->eqb_last_cap = s->eqb_build_cap;
    s->eqb_last_bytes = bytes;
    s->eqb_build = t;
    s->eqb_build_cap = cap;
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

/* The views and plan of the descriptors on the GPU (s->eqb_cache): the same
 * views again (a pipeline's frames) skip building and comparing them. */
typedef struct eq_cache {
    batch_plan plan;
    uint64_t small;      /* small_limit when built */
    size_t count;
    imghist_view views[]; /* count sources, then count destinations */
} eq_cache;

static bool cached_plan(const ih_cuda_state *s, const imghist_view *src,
                        const imghist_view *dst, size_t count, uint64_t small, batch_plan *p)
{
    const eq_cache *c = (const eq_cache *)s->eqb_cache;
    if (c == NULL || c->count != count || c->small != small ||
        s->eqb_last_bytes != c->plan.bytes || !ih_same_views(c->views, src, count) ||
        !ih_same_views(c->views + count, dst, count)) {
        return false;
    }
    *p = c->plan;
    return true;
}

/* After an upload: what the GPU's descriptors are of (no record without the
 * memory: the next call builds them again). */
static void remember_plan(ih_cuda_state *s, const imghist_view *src, const imghist_view *dst,
                          size_t count, uint64_t small, const batch_plan *p)
{
    free(s->eqb_cache);
    eq_cache *c = (eq_cache *)malloc(sizeof *c + 2 * count * sizeof(imghist_view));
    s->eqb_cache = c;
    if (c != NULL) {
        c->plan = *p;
        c->small = small;
        c->count = count;
        memcpy(c->views, src, count * sizeof *src);
        memcpy(c->views + count, dst, count * sizeof *dst);
    }
}

imghist_status ih_cuda_equalize_batch_device(imghist_ctx *ctx, const imghist_view *src,
                                             const imghist_view *dst, size_t count,
                                             const imghist_counts *hists)
{
    ih_cuda_state *s = ih_cuda(ctx);
    batch_plan p;
    imghist_status st = IMGHIST_OK;
    const uint64_t small = small_limit(ctx, s);
    if (!cached_plan(s, src, dst, count, small, &p)) {
        free(s->eqb_cache);
        s->eqb_cache = NULL;
        st = build(ctx, src, dst, count, &p);
        if (st == IMGHIST_OK) st = upload(ctx, p.bytes);
        if (st == IMGHIST_OK) remember_plan(s, src, dst, count, small, &p);
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    ih_eq_batch_launch l;
    memset(&l, 0, sizeof l);
    const ih_eq_image *d_img = (const ih_eq_image *)s->eqb_desc;
    l.small = d_img;
    l.n_small = p.n_small;
    l.small_bytes = p.small_bytes;
    l.large = d_img + p.n_small;
    l.chunk_start = (const uint32_t *)(d_img + count);
    l.n_large = p.n_large;
    l.pil = ctx->params.equalize_method == IMGHIST_EQ_PIL;
    if (p.n_large > 0) {
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
    IH_CUDA_TRY(ctx, "batch equalization launch", ih_launch_equalize_batch(l, s->stream));
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
    l.one = eq_image(src, dst, 0);
    l.n_small = 1;
    l.small_bytes = l.one.src.total * 16;
    l.hists = hist;
    l.pil = ctx->params.equalize_method == IMGHIST_EQ_PIL;
    IH_CUDA_TRY(ctx, "equalization launch", ih_launch_equalize_batch(l, s->stream));
    *done = 1;
    return IMGHIST_OK;
}
