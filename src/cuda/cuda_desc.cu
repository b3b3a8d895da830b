/*
 * A batch call's descriptors (one per image, built on the host) on their way
 * to the GPU, and not built or uploaded at all when the views are the last
 * call's (a pipeline passing the same frames again).
 *
 * They go up from pageable memory on purpose: the driver copies such a source
 * before the call returns (so one host buffer serves every call), and a copy
 * of descriptors' size then costs the GPU nothing measurable, while the same
 * copy from pinned memory is a DMA on the copy engine that the kernel has to
 * wait for, microseconds in front of each batch kernel (bench_batch shows
 * it).
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_state.h"

void ih_desc_close(ih_desc_cache *c)
{
    cudaFree(c->dev);
    free(c->host);
    free(c->views);
    memset(c, 0, sizeof *c);
}

bool ih_desc_cached(const ih_desc_cache *c, const imghist_view *a, const imghist_view *b,
                    size_t count, uint64_t key, void *plan, size_t plan_bytes)
{
    if (c->views_n == 0 || c->count != count || c->key != key || c->plan_bytes != plan_bytes ||
        c->views_n != (b != NULL ? 2 : 1) * count || !ih_same_views(c->views, a, count) ||
        (b != NULL && !ih_same_views(c->views + count, b, count))) {
        return false;
    }
    memcpy(plan, c->plan, plan_bytes);
    return true;
}

imghist_status ih_desc_buffer(imghist_ctx *ctx, ih_desc_cache *c, size_t bytes, uint8_t **host)
{
    c->views_n = 0; /* from here on dev may change */
    *host = NULL;
    if (c->host_cap < bytes) {
        free(c->host);
        c->host_cap = 0;
        c->host = (uint8_t *)malloc(bytes);
        if (c->host == NULL) {
            return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu bytes of descriptors",
                           bytes);
        }
        c->host_cap = bytes;
    }
    *host = c->host;
    return IMGHIST_OK;
}

imghist_status ih_desc_upload(imghist_ctx *ctx, ih_desc_cache *c, size_t bytes,
                              const imghist_view *a, const imghist_view *b, size_t count,
                              uint64_t key, const void *plan, size_t plan_bytes)
{
    imghist_status st = ih_cuda_grow_async(ctx, &c->dev, &c->dev_cap, bytes, 0);
    if (st != IMGHIST_OK) {
        return st;
    }
    IH_CUDA_TRY(ctx, "descriptor upload",
                cudaMemcpyAsync(c->dev, c->host, bytes, cudaMemcpyHostToDevice,
                                ih_cuda(ctx)->stream));
    /* What dev now holds, for the next call to compare (without the memory
     * for the record, the next call builds them again). */
    const size_t n = (b != NULL ? 2 : 1) * count;
    if (plan_bytes > sizeof c->plan) {
        return IMGHIST_OK;
    }
    if (n > c->views_cap) {
        free(c->views);
        c->views_cap = 0;
        c->views = (imghist_view *)malloc(n * sizeof *c->views);
        if (c->views == NULL) {
            return IMGHIST_OK;
        }
        c->views_cap = n;
    }
    memcpy(c->views, a, count * sizeof *a);
    if (b != NULL) {
        memcpy(c->views + count, b, count * sizeof *b);
    }
    memcpy(c->plan, plan, plan_bytes);
    c->plan_bytes = plan_bytes;
    c->count = count;
    c->key = key;
    c->views_n = n;
    return IMGHIST_OK;
}

imghist_status ih_desc_pointers(imghist_ctx *ctx, ih_desc_cache *c, const imghist_view *a,
                                const imghist_view *b, size_t count,
                                const unsigned long long **dev)
{
    uint64_t plan = 0; /* nothing beyond the views */
    if (!ih_desc_cached(c, a, b, count, 0, &plan, sizeof plan)) {
        const size_t bytes = 2 * count * sizeof(unsigned long long);
        uint8_t *host = NULL;
        imghist_status st = ih_desc_buffer(ctx, c, bytes, &host);
        if (st != IMGHIST_OK) {
            return st;
        }
        unsigned long long *p = (unsigned long long *)host;
        for (size_t i = 0; i < count; i++) {
            p[2 * i] = (unsigned long long)(uintptr_t)a[i].data;
            p[2 * i + 1] = b != NULL ? (unsigned long long)(uintptr_t)b[i].data : 0ull;
        }
        st = ih_desc_upload(ctx, c, bytes, a, b, count, 0, &plan, sizeof plan);
        if (st != IMGHIST_OK) {
            return st;
        }
    }
    *dev = (const unsigned long long *)c->dev;
    return IMGHIST_OK;
}
