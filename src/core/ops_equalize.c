/*
 * Equalization, CLAHE and lookups: check everything (sizes, types, overlaps
 * of sources, masks and destinations), then dispatch to the context's
 * backend, with the one fallback of core/ops.c for host images.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"
#include "clahe.h"
#include "ops.h"

/* U8 or U16, one channel; U8 only for PIL's rule. */
static imghist_status check_levels(imghist_ctx *ctx, const imghist_view *v, const char *role)
{
    imghist_status st = ih_check_view(ctx, v, role);
    if (st == IMGHIST_OK && (v->channels > 1 || v->dtype == IMGHIST_F32)) {
        st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                     "%s: equalization takes one channel of 8- or 16-bit samples", role);
    }
    if (st == IMGHIST_OK && v->dtype == IMGHIST_U16 &&
        ctx->eq_method == IMGHIST_EQ_PIL) {
        st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                     "%s: PIL's equalization (IMGHIST_EQ_PIL) is defined for 8-bit samples "
                     "only; use IMGHIST_EQ_OPENCV for 16-bit images", role);
    }
    return st;
}

/* Source and destination of one size, type and memory, and no overlap but
 * the same view. */
static imghist_status check_pair(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst)
{
    if (dst->width != src->width || dst->height != src->height) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "destination is %ux%u, source %ux%u",
                       dst->width, dst->height, src->width, src->height);
    }
    if (dst->dtype != src->dtype) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "source and destination differ in sample type");
    }
    if (dst->mem != src->mem) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "source and destination must both be in host or both in device memory");
    }
    uintptr_t s0, s1, d0, d1;
    ih_view_span(src, &s0, &s1);
    ih_view_span(dst, &d0, &d1);
    const int in_place = src->data == dst->data && src->pitch == dst->pitch;
    if (!in_place && s0 < d1 && d0 < s1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "source and destination overlap (only the same view is allowed)");
    }
    return IMGHIST_OK;
}

/* One image's equalization, with the fallback of one. */
static imghist_status dispatch_equalize(imghist_ctx *ctx, const imghist_view *src,
                                        const imghist_view *mask, const imghist_view *dst,
                                        const imghist_counts *hist)
{
    const ih_one one = {
        .image = {.kind = IH_ONE, .count = 1, .src = src, .dst = dst, .masks = mask},
        .counts = hist,
        .levels = src->dtype == IMGHIST_U8 ? IH_U8_BINS : IH_U16_LEVELS,
    };
    return ih_dispatch_one(ctx, &one);
}

imghist_status ih_op_equalize_one(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *mask, const imghist_view *dst,
                                  const imghist_counts *hist)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_levels(ctx, src, "source");
    if (st == IMGHIST_OK) st = check_levels(ctx, dst, "destination");
    if (st == IMGHIST_OK) st = ih_check_mask(ctx, mask, src);
    if (st != IMGHIST_OK) {
        return st;
    }
    st = check_pair(ctx, src, dst);
    if (st != IMGHIST_OK) {
        return st;
    }
    const int in_place = src->data == dst->data && src->pitch == dst->pitch;
    uintptr_t s0, s1, d0, d1;
    ih_view_span(dst, &d0, &d1);
    if (mask != NULL && !in_place) {
        ih_view_span(mask, &s0, &s1);
        if (s0 < d1 && d0 < s1) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "mask and destination overlap");
        }
    }
    if (hist != NULL) {
        st = ih_check_counts(ctx, hist, src->dtype == IMGHIST_U8 ? IH_U8_BINS : IH_U16_LEVELS,
                             "histogram counts");
        if (st == IMGHIST_OK) st = ih_check_memory(ctx, hist->mem, "counts");
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    if (st != IMGHIST_OK) {
        return st;
    }
    /* On the CPU the backend adds its count and LUT stages itself. */
    const uint64_t t0 = ih_now_ns();
    st = dispatch_equalize(ctx, src, mask, dst, hist);
    if (ctx->backend == IMGHIST_BACKEND_CUDA) {
        ih_stage_add(ctx, IMGHIST_STAGE_GPU, t0);
    }
    return st;
}


/* Image i of an equalization batch: U8 or U16 of one channel (the first
 * image's type), dst[i] src[i]'s size, in the first image's memory. */
static imghist_status check_batch_pair(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *dst, size_t i)
{
    imghist_status st = check_levels(ctx, &src[i], "batch source");
    if (st == IMGHIST_OK) st = check_levels(ctx, &dst[i], "batch destination");
    if (st == IMGHIST_OK && src[i].dtype != src[0].dtype) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch mixes 8- and 16-bit images");
    }
    if (st == IMGHIST_OK) st = check_pair(ctx, &src[i], &dst[i]);
    if (st == IMGHIST_OK && src[i].mem != src[0].mem) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch mixes host and device views");
    }
    return st;
}

typedef struct batch_span {
    uintptr_t lo, hi;
    size_t i;
} batch_span;

static int by_start(const void *a, const void *b)
{
    const uintptr_t x = ((const batch_span *)a)->lo, y = ((const batch_span *)b)->lo;
    return x < y ? -1 : x > y;
}

bool ih_views_progression(const imghist_view *v, size_t count, uintptr_t *stride)
{
    const uintptr_t v0 = (uintptr_t)v[0].data;
    const uintptr_t st = count > 1 ? (uintptr_t)v[1].data - v0 : 0;
    uintptr_t at = v0;
    for (size_t i = 0; i < count; i++, at += st) {
        if ((uintptr_t)v[i].data != at || !ih_same_shape(&v[i], &v[0])) {
            return false;
        }
    }
    *stride = st;
    return true;
}

/* Whether count images of s0's shape `ss` bytes apart and count of d0's `ds`
 * apart (strides as uintptr_t, either direction) are proved not to
 * overlap as the batch rules want: the destinations apart from each other,
 * and from the sources unless each is its own source. False when it cannot
 * tell (the general check decides). */
static bool strided_apart(const imghist_view *s0, uintptr_t ss, const imghist_view *d0,
                          uintptr_t ds, size_t count)
{
    uintptr_t s_lo, s_hi, d_lo, d_hi;
    ih_view_span(s0, &s_lo, &s_hi);
    ih_view_span(d0, &d_lo, &d_hi);
    const uintptr_t d_len = d_hi - d_lo, s_len = s_hi - s_lo;
    /* Destinations apart from each other: a stride (either way) of at
     * least one image's span. */
    const uintptr_t d_step = ds <= UINTPTR_MAX / 2 ? ds : (uintptr_t)0 - ds;
    if (count > 1 && d_step < d_len) {
        return false;
    }
    if (s0->data == d0->data && ss == ds && s0->pitch == d0->pitch) {
        return true; /* in place, image by image */
    }
    /* Else the two tensors' whole ranges must be apart. */
    const uintptr_t s_step = ss <= UINTPTR_MAX / 2 ? ss : (uintptr_t)0 - ss;
    const uintptr_t s_first = ss <= UINTPTR_MAX / 2 ? s_lo : s_lo - s_step * (count - 1);
    const uintptr_t d_first = ds <= UINTPTR_MAX / 2 ? d_lo : d_lo - d_step * (count - 1);
    const uintptr_t s_end = s_first + s_step * (count - 1) + s_len;
    const uintptr_t d_end = d_first + d_step * (count - 1) + d_len;
    return s_end <= d_first || d_end <= s_first;
}

/* The overlap check of two batch tensors given as views, without a pass per
 * image (strided_apart). */
static bool tensors_apart(const imghist_ctx *ctx, const imghist_view *src,
                          const imghist_view *dst, size_t count)
{
    const ih_list_layout *l = &ctx->layout; /* the checks' pass over these views */
    return l->src_uniform && l->dst_uniform &&
           strided_apart(&src[0], l->src_stride, &dst[0], l->dst_stride, count);
}

/* The address ranges of count views sorted by start (a batch tensor's
 * already are); NULL when out of memory (the failure set on ctx). */
static batch_span *sorted_spans(imghist_ctx *ctx, const imghist_view *v, size_t count)
{
    batch_span *d = malloc(count * sizeof *d);
    if (d == NULL) {
        ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu address ranges", count);
        return NULL;
    }
    int sorted = 1;
    for (size_t i = 0; i < count; i++) {
        ih_view_span(&v[i], &d[i].lo, &d[i].hi);
        d[i].i = i;
        sorted &= i == 0 || d[i - 1].lo <= d[i].lo;
    }
    if (!sorted) {
        qsort(d, count, sizeof *d, by_start);
    }
    return d;
}

/* How many of the sorted ranges d[0..b) start below hi. */
static size_t spans_below(const batch_span *d, size_t b, uintptr_t hi)
{
    size_t a = 0;
    while (a < b) {
        const size_t m = a + (b - a) / 2;
        if (d[m].lo < hi) {
            a = m + 1;
        } else {
            b = m;
        }
    }
    return a;
}

/* No destination overlaps another destination, or a source other than its
 * own (which it may only be, whole). Two batch tensors are checked as wholes
 * (tensors_apart); otherwise the destinations are sorted by address (a batch
 * tensor's already are), then a binary search per source. */
static imghist_status check_batch_overlap(imghist_ctx *ctx, const imghist_view *src,
                                          const imghist_view *dst, size_t count)
{
    if (tensors_apart(ctx, src, dst, count)) {
        return IMGHIST_OK;
    }
    batch_span *d = sorted_spans(ctx, dst, count);
    if (d == NULL) {
        return IMGHIST_E_NOMEM;
    }
    imghist_status st = IMGHIST_OK;
    for (size_t k = 1; k < count && st == IMGHIST_OK; k++) {
        if (d[k].lo < d[k - 1].hi) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch destinations %zu and %zu overlap",
                         d[k - 1].i, d[k].i);
        }
    }
    size_t a = 0;
    uintptr_t prev_hi = 0;
    for (size_t j = 0; j < count && st == IMGHIST_OK; j++) {
        uintptr_t lo, hi;
        ih_view_span(&src[j], &lo, &hi);
        /* a: the destinations starting below the source's end; the last of
         * them, with the destinations disjoint, is the only one that may
         * reach into it. Sources in address order (a batch tensor) move a
         * forward; others are searched for. */
        if (hi >= prev_hi) {
            while (a < count && d[a].lo < hi) {
                a++;
            }
        } else {
            a = spans_below(d, a, hi);
        }
        prev_hi = hi;
        if (a == 0 || d[a - 1].hi <= lo) {
            continue;
        }
        const size_t k = d[a - 1].i;
        if (k != j || src[j].data != dst[j].data || src[j].pitch != dst[j].pitch) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "batch destination %zu overlaps source %zu (only dst[i] == src[i] "
                         "is allowed)", k, j);
        }
    }
    free(d);
    return st;
}

/* Whether any sample of a host mask is not 0. */
static bool mask_has_any(const imghist_view *m)
{
    for (uint32_t r = 0; r < m->height; r++) {
        const uint8_t *p = (const uint8_t *)m->data + (size_t)r * m->pitch;
        for (uint32_t x = 0; x < m->width; x++) {
            if (p[x] != 0) {
                return true;
            }
        }
    }
    return false;
}

/* No mask overlaps a destination (a destination written before a later
 * image's histogram would change that image's mask): the destinations
 * sorted by address, a binary search a mask. */
static imghist_status check_masks_apart(imghist_ctx *ctx, const imghist_view *masks,
                                        const imghist_view *dst, size_t count)
{
    batch_span *d = sorted_spans(ctx, dst, count);
    if (d == NULL) {
        return IMGHIST_E_NOMEM;
    }
    imghist_status st = IMGHIST_OK;
    for (size_t j = 0; j < count && st == IMGHIST_OK; j++) {
        if (j > 0 && masks[j].data == masks[j - 1].data && masks[j].pitch == masks[j - 1].pitch) {
            continue; /* one mask for several images: checked */
        }
        uintptr_t lo, hi;
        ih_view_span(&masks[j], &lo, &hi);
        /* a: the destinations starting below the mask's end; with the
         * destinations disjoint, only the last of them may reach into it */
        const size_t a = spans_below(d, count, hi);
        if (a > 0 && d[a - 1].hi > lo) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch mask %zu overlaps destination %zu", j,
                         d[a - 1].i);
        }
    }
    free(d);
    return st;
}

bool ih_views_one_shape(const imghist_view *v, const imghist_view *masks, size_t count)
{
    const uintptr_t v0 = (uintptr_t)v[0].data;
    for (size_t i = 0; i < count; i++) {
        if (!ih_same_shape(&v[i], &v[0]) || (((uintptr_t)v[i].data - v0) & 15) != 0 ||
            (masks != NULL && masks[i].pitch != masks[0].pitch)) {
            return false;
        }
    }
    return true;
}

/* equalize_views' work, its checks passed: the backend's route for a list. */
static imghist_status run_equalize_views(imghist_ctx *ctx, const imghist_view *src,
                                         const imghist_view *masks, const imghist_view *dst,
                                         size_t count, const imghist_counts *hists,
                                         size_t levels)
{
    const ih_batch list = {.kind = IH_LIST, .count = count, .src = src, .dst = dst,
                           .masks = masks};
    return ctx->ops->equalize(ctx, &list, hists, levels);
}

imghist_status ih_equalize_each(imghist_ctx *ctx, const ih_batch *b, const imghist_counts *hists,
                                size_t levels)
{
    imghist_status st = IMGHIST_OK;
    for (size_t i = 0; i < b->count && st == IMGHIST_OK; i++) {
        imghist_counts one;
        if (hists != NULL) {
            one = *hists;
            one.data = hists->data + i * levels;
            one.len = levels;
        }
        st = dispatch_equalize(ctx, &b->src[i], b->masks != NULL ? &b->masks[i] : NULL,
                               &b->dst[i], hists != NULL ? &one : NULL);
        if (st != IMGHIST_OK) {
            char why[sizeof ctx->err];
            snprintf(why, sizeof why, "%s", ctx->err);
            st = ih_fail(ctx, st, "batch image %zu: %s", i, why);
        }
    }
    ctx->batch_route = IH_ROUTE_EACH;
    return st;
}

/* The checks of equalize_views_plain(_masked) (masks NULL for none): the
 * views, overlaps, counts, and on host views a mask with no non-zero
 * sample; *levels: 256 or 65536. */
static imghist_status check_equalize_views(imghist_ctx *ctx, const imghist_view *src,
                                           const imghist_view *masks, const imghist_view *dst,
                                           size_t count, const imghist_counts *hists,
                                           size_t *levels)
{
    imghist_status st = ih_begin_batch(ctx, src != NULL && dst != NULL, count);
    /* One pass over the views: the rules, and whether sources and
     * destinations each lie as a tensor's images do (the overlap check and
     * the backend's routes ask; a large list is not read again). */
    ih_layout_scan sl, dl;
    ih_layout_begin(&sl, st == IMGHIST_OK ? src : NULL, count);
    ih_layout_begin(&dl, st == IMGHIST_OK ? dst : NULL, count);
    for (size_t i = 0; i < count && st == IMGHIST_OK; i++) {
        st = ih_list_view_rules(ctx, &src[i], i, masks != NULL);
        if (st == IMGHIST_OK && dst[i].count > 1) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "list destination %zu holds %zu images: one image a view", i,
                         dst[i].count);
        }
        if (st == IMGHIST_OK && masks != NULL) st = ih_check_batch_mask(ctx, masks, src, i);
        if (st != IMGHIST_OK) {
            break;
        }
        const bool s_same = i == 0 || ih_same_shape(&src[i], &src[0]);
        const bool d_same = i == 0 || ih_same_shape(&dst[i], &dst[0]);
        ih_layout_step(&sl, src, i, s_same);
        ih_layout_step(&dl, dst, i, d_same);
        if (i > 0 && s_same && d_same) {
            continue;
        }
        st = check_batch_pair(ctx, src, dst, i);
        if (st != IMGHIST_OK) {
            /* The message again, with the image's number (formatted only on
             * failure: for every image of a large batch it costs more than
             * the launch). */
            char why[sizeof ctx->err];
            snprintf(why, sizeof why, "%s", ctx->err);
            st = ih_fail(ctx, st, "batch image %zu: %s", i, why);
        }
        if (st == IMGHIST_OK && i == 0 && masks == NULL) {
            const size_t end_s = ih_tensor_run(ctx, &sl, src, count);
            const size_t end = end_s > 1 ? ih_tensor_run(ctx, &dl, dst, end_s) : 1;
            ih_layout_take(&sl, end);
            ih_layout_take(&dl, end);
            i = end - 1; /* the loop goes on at view end */
        }
    }
    if (st == IMGHIST_OK) {
        ih_set_layout(ctx, src, dst, count, &sl, &dl);
        st = check_batch_overlap(ctx, src, dst, count);
    }
    if (st == IMGHIST_OK && masks != NULL) st = check_masks_apart(ctx, masks, dst, count);
    *levels = st == IMGHIST_OK && src[0].dtype == IMGHIST_U16 ? 65536 : IH_U8_BINS;
    if (st == IMGHIST_OK && hists != NULL) {
        st = count > SIZE_MAX / *levels
                 ? ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch is too large")
                 : ih_check_counts(ctx, hists, count * *levels, "histogram counts");
        if (st == IMGHIST_OK) st = ih_check_memory(ctx, hists->mem, "counts");
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src[0].mem, "images");
    for (size_t i = 0; masks != NULL && src[0].mem == IMGHIST_MEM_HOST && i < count &&
                       st == IMGHIST_OK;
         i++) {
        const bool repeat = i > 0 && masks[i].data == masks[i - 1].data &&
                            masks[i].pitch == masks[i - 1].pitch;
        if (!repeat && !mask_has_any(&masks[i])) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "batch mask %zu has no non-zero sample", i);
        }
    }
    return st;
}

/* ih_op_equalize_views (masks NULL for
 * none), after every check (on host views a mask with no non-zero sample
 * too) has passed: run_equalize_views. */
static imghist_status equalize_views(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *masks, const imghist_view *dst,
                                     size_t count, const imghist_counts *hists)
{
    size_t levels = IH_U8_BINS;
    imghist_status st = check_equalize_views(ctx, src, masks, dst, count, hists, &levels);
    if (st != IMGHIST_OK) {
        return st;
    }
    return run_equalize_views(ctx, src, masks, dst, count, hists, levels);
}


imghist_status ih_op_equalize_views(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *masks, const imghist_view *dst,
                                    size_t count, const imghist_counts *hists)
{
    return equalize_views(ctx, src, masks, dst, count, hists);
}

/* ih_op_equalize_tensor (mask NULL
 * for none). */
static imghist_status equalize_strided(imghist_ctx *ctx, const imghist_view *src,
                                       ptrdiff_t src_stride, const imghist_view *mask,
                                       ptrdiff_t mask_stride, const imghist_view *dst,
                                       ptrdiff_t dst_stride, size_t count,
                                       const imghist_counts *hists)
{
    imghist_status st = ih_begin_batch(ctx, src != NULL && dst != NULL, count);
    if (st == IMGHIST_OK) st = check_batch_pair(ctx, src, dst, 0);
    if (st == IMGHIST_OK) st = ih_check_stride(ctx, src, count, src_stride, "the batch's sources");
    if (st == IMGHIST_OK) {
        st = ih_check_stride(ctx, dst, count, dst_stride, "the batch's destinations");
    }
    if (st == IMGHIST_OK && mask != NULL) {
        st = ih_check_mask(ctx, mask, src);
        if (st == IMGHIST_OK) st = ih_check_stride(ctx, mask, count, mask_stride, "the masks");
    }
    if (st != IMGHIST_OK) {
        return st;
    }
    if (mask != NULL || src->dtype != IMGHIST_U8 ||
        !strided_apart(src, (uintptr_t)src_stride, dst, (uintptr_t)dst_stride, count) ||
        src->mem != IMGHIST_MEM_DEVICE || !ctx->ops->device_memory) {
        /* As views: the image-by-image overlap check (interleaved tensors
         * pass it, overlapping ones get its message), the CPU's batch, the
         * masked and 16-bit batches. */
        imghist_view *v = ih_strided_views(src, count, src_stride);
        imghist_view *d = ih_strided_views(dst, count, dst_stride);
        imghist_view *m = mask != NULL ? ih_strided_views(mask, count, mask_stride) : NULL;
        size_t levels = IH_U8_BINS;
        st = v == NULL || d == NULL || (mask != NULL && m == NULL)
                 ? ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", 3 * count)
                 : check_equalize_views(ctx, v, m, d, count, hists, &levels);
        /* (a device tensor of 16-bit or masked images: run_equalize_views
         * finds the views a progression, the backend's strided launches) */
        if (st == IMGHIST_OK) st = run_equalize_views(ctx, v, m, d, count, hists, levels);
        free(v);
        free(d);
        free(m);
        return st;
    }
    if (hists != NULL) {
        st = count > SIZE_MAX / IH_U8_BINS
                 ? ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the batch is too large")
                 : ih_check_counts(ctx, hists, count * IH_U8_BINS, "histogram counts");
        if (st == IMGHIST_OK) st = ih_check_memory(ctx, hists->mem, "counts");
    }
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    if (st != IMGHIST_OK) {
        return st;
    }
    const ih_batch tensor = {.kind = IH_TENSOR, .count = count, .src = src, .dst = dst,
                             .src_stride = src_stride, .dst_stride = dst_stride};
    return ctx->ops->equalize(ctx, &tensor, hists, IH_U8_BINS);
}


imghist_status ih_op_equalize_tensor(imghist_ctx *ctx, const imghist_view *src,
                                     ptrdiff_t src_stride, const imghist_view *mask,
                                     ptrdiff_t mask_stride, const imghist_view *dst,
                                     ptrdiff_t dst_stride, size_t count,
                                     const imghist_counts *hists)
{
    return equalize_strided(ctx, src, src_stride, mask, mask_stride, dst, dst_stride, count,
                            hists);
}

/* ---- CLAHE (core/clahe.c) ---- */

static imghist_status check_clahe_args(imghist_ctx *ctx, double clip_limit, uint32_t tiles_x,
                                       uint32_t tiles_y)
{
    if (tiles_x < 1 || tiles_y < 1 || tiles_x > INT32_MAX || tiles_y > INT32_MAX) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "CLAHE tile grid %ux%u: each side must be 1 to %d", tiles_x, tiles_y,
                       INT32_MAX);
    }
    if (!(clip_limit == clip_limit)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "CLAHE clip limit is NaN");
    }
    return IMGHIST_OK;
}

/* CLAHE of b's images, all of one size, on the context's backend, or on the
 * fallback when it names one (before any image was written). */
static imghist_status clahe_run(imghist_ctx *ctx, const ih_batch *b, double clip_limit,
                                uint32_t tiles_x, uint32_t tiles_y)
{
    const imghist_view *src = &b->src[0];
    ih_clahe_geom g;
    ih_clahe_geometry(src->width, src->height, tiles_x, tiles_y, clip_limit,
                      src->dtype == IMGHIST_U8 ? IH_U8_BINS : IH_U16_LEVELS, &g);
    imghist_status st = ctx->ops->clahe(ctx, b, &g);
    const ih_backend_ops *cpu = ih_fallback_for(ctx, &st, src, NULL);
    return cpu != NULL ? cpu->clahe(ctx, b, &g) : st;
}

/* Checks of one source / destination pair of a CLAHE call. */
static imghist_status check_clahe_pair(imghist_ctx *ctx, const imghist_view *src,
                                       const imghist_view *dst)
{
    imghist_status st = ih_check_view(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_view(ctx, dst, "destination");
    if (st == IMGHIST_OK && (src->channels > 1 || src->dtype == IMGHIST_F32)) {
        st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "CLAHE takes one channel of 8- or 16-bit samples");
    }
    if (st == IMGHIST_OK) st = check_pair(ctx, src, dst);
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    return st;
}

imghist_status ih_op_clahe(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                           double clip_limit, uint32_t tiles_x, uint32_t tiles_y)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_clahe_args(ctx, clip_limit, tiles_x, tiles_y);
    if (st == IMGHIST_OK) st = check_clahe_pair(ctx, src, dst);
    if (st != IMGHIST_OK) {
        return st;
    }
    const ih_batch one = {.kind = IH_ONE, .count = 1, .src = src, .dst = dst};
    return clahe_run(ctx, &one, clip_limit, tiles_x, tiles_y);
}

/* Every source is read before any destination is written (the backends
 * count all tile histograms of a group of images first), so destinations
 * may be their own sources only. Consecutive images of one size go to the
 * backend together. */
imghist_status ih_op_clahe_views(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst, size_t count, double clip_limit,
                                 uint32_t tiles_x, uint32_t tiles_y)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = check_clahe_args(ctx, clip_limit, tiles_x, tiles_y);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (src == NULL || dst == NULL || count == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "CLAHE batch: no images");
    }
    ih_layout_scan sl, dl;
    ih_layout_begin(&sl, src, count);
    ih_layout_begin(&dl, dst, count);
    for (size_t i = 0; i < count; i++) {
        st = check_clahe_pair(ctx, &src[i], &dst[i]);
        if (st == IMGHIST_OK && (src[i].mem != src[0].mem || src[i].dtype != src[0].dtype)) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "CLAHE batch: image %zu differs from image 0 in memory or type", i);
        }
        if (st != IMGHIST_OK) {
            return st;
        }
        ih_layout_step(&sl, src, i, i == 0 || ih_same_shape(&src[i], &src[0]));
        ih_layout_step(&dl, dst, i, i == 0 || ih_same_shape(&dst[i], &dst[0]));
    }
    ih_set_layout(ctx, src, dst, count, &sl, &dl);
    if (count > 1) {
        st = check_batch_overlap(ctx, src, dst, count);
    }
    for (size_t i = 0, end; i < count && st == IMGHIST_OK; i = end) {
        for (end = i + 1; end < count && src[end].width == src[i].width &&
                          src[end].height == src[i].height;
             end++) {
        }
        const ih_batch run = {.kind = end - i == 1 ? IH_ONE : IH_LIST, .count = end - i,
                              .src = &src[i], .dst = &dst[i]};
        st = clahe_run(ctx, &run, clip_limit, tiles_x, tiles_y);
    }
    return st;
}

imghist_status ih_op_apply_lut(imghist_ctx *ctx, const imghist_view *src,
                               const imghist_view *dst, const uint8_t lut[256])
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_view(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_view(ctx, dst, "destination");
    if (st == IMGHIST_OK && (src->dtype != IMGHIST_U8 || src->channels > 1)) {
        st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "imghist_apply_lut takes one channel of 8-bit "
                                                 "samples");
    }
    if (st == IMGHIST_OK && lut == NULL) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "NULL lookup table");
    }
    if (st == IMGHIST_OK) st = check_pair(ctx, src, dst);
    if (st == IMGHIST_OK) st = ih_check_memory(ctx, src->mem, "images");
    if (st != IMGHIST_OK) {
        return st;
    }
    return ctx->ops->apply_lut(ctx, src, dst, lut);
}

/* A tensor's images as views (*out, to be freed), after checking that they
 * lie in the address space (role names them in the message). */
static imghist_status tensor_views(imghist_ctx *ctx, const imghist_view *v, const char *role,
                                   imghist_view **out)
{
    *out = NULL;
    imghist_status st = ih_check_stride(ctx, v, v->count, v->image_stride, role);
    if (st == IMGHIST_OK) {
        *out = ih_strided_views(v, v->count, v->image_stride);
        if (*out == NULL) {
            st = ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu views", v->count);
        }
    }
    return st;
}

/* A source and a destination tensor as views, checked as views first. */
static imghist_status tensor_pair(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *dst, imghist_view **s, imghist_view **d)
{
    *s = *d = NULL;
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = ih_check_view(ctx, src, "source");
    if (st == IMGHIST_OK) st = ih_check_view(ctx, dst, "destination");
    if (st == IMGHIST_OK) st = tensor_views(ctx, src, "the sources", s);
    if (st == IMGHIST_OK) st = tensor_views(ctx, dst, "the destinations", d);
    return st;
}

imghist_status ih_op_clahe_tensor(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *dst, double clip_limit, uint32_t tiles_x,
                                  uint32_t tiles_y)
{
    imghist_view *s, *d;
    imghist_status st = tensor_pair(ctx, src, dst, &s, &d);
    if (st == IMGHIST_OK) {
        st = ih_op_clahe_views(ctx, s, d, src->count, clip_limit, tiles_x, tiles_y);
    }
    free(s);
    free(d);
    return st;
}

imghist_status ih_op_apply_lut_tensor(imghist_ctx *ctx, const imghist_view *src,
                                      const imghist_view *dst, const uint8_t lut[256])
{
    imghist_view *s, *d;
    imghist_status st = tensor_pair(ctx, src, dst, &s, &d);
    for (size_t i = 0; st == IMGHIST_OK && i < src->count; i++) {
        st = ih_op_apply_lut(ctx, &s[i], &d[i], lut);
    }
    free(s);
    free(d);
    return st;
}
