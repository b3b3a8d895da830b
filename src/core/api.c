/*
 * The public calls on views: a view of one image, a view of many (a tensor,
 * images image_stride bytes apart), or a list of views, each image with the
 * mask its view carries. They map onto the forms of core/ops.c, which check
 * and dispatch.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"

/* Images a view holds; a NULL view counts as one, for the checks of the
 * one-image calls to refuse. */
static size_t images_of(const imghist_view *v)
{
    return v != NULL && v->count > 1 ? v->count : 1;
}

/* ih_begin for a call on several images, whose route the CUDA backend
 * records anew. */
static imghist_status begin_batch_call(imghist_ctx *ctx)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) {
        ctx->batch_route = IH_ROUTE_NONE;
    }
    return st;
}

/* The mask of a view of n images: one for all (count 0 or 1: stride 0) or
 * one an image (count n: the mask's image_stride). */
static imghist_status mask_stride(imghist_ctx *ctx, const imghist_view *v, ptrdiff_t *stride)
{
    *stride = 0;
    if (v->mask == NULL) {
        return IMGHIST_OK;
    }
    const size_t masks = images_of(v->mask);
    if (masks == 1) {
        return IMGHIST_OK;
    }
    if (masks != images_of(v)) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "the mask view holds %zu masks for %zu images (1 or one an image)", masks,
                       images_of(v));
    }
    *stride = v->mask->image_stride;
    return IMGHIST_OK;
}

/* ih_begin, then: dst holds as many images as src. */
static imghist_status begin_pair(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst)
{
    imghist_status st = images_of(src) > 1 ? begin_batch_call(ctx) : ih_begin(ctx);
    if (st == IMGHIST_OK && images_of(src) != images_of(dst)) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the destination holds %zu images, the source %zu",
                     images_of(dst), images_of(src));
    }
    return st;
}

/* A list's masks, when view 0 has one: then every view must, each of one
 * image, and *masks is a new array of them (free it). Without, *masks is
 * NULL and the checks' pass over the views refuses a mask on any other. */
static imghist_status list_masks(imghist_ctx *ctx, const imghist_view *v, size_t n,
                                 imghist_view **masks)
{
    *masks = NULL;
    if (n == 0 || v[0].mask == NULL) {
        return IMGHIST_OK;
    }
    *masks = malloc(n * sizeof **masks);
    if (*masks == NULL) {
        return ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu masks", n);
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].mask == NULL) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "list view %zu has no mask where view 0 has one: all or none must",
                           i);
        }
        if (v[i].mask->count > 1) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "list view %zu has a mask of %zu images",
                           i, v[i].mask->count);
        }
        (*masks)[i] = *v[i].mask;
    }
    return IMGHIST_OK;
}

/* ih_begin, then a method imghist_method names, kept for the call. */
static imghist_status begin_method(imghist_ctx *ctx, imghist_method method)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK && method != IMGHIST_EQ_OPENCV && method != IMGHIST_EQ_PIL) {
        st = ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown equalization method %d", (int)method);
    }
    if (st == IMGHIST_OK) {
        ctx->eq_method = method;
    }
    return st;
}

/* A call on views of one image: refuse more. */
static imghist_status one_image(imghist_ctx *ctx, const imghist_view *v, const char *call)
{
    if (v != NULL && v->count > 1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s takes a view of one image, not %zu", call,
                       v->count);
    }
    if (v != NULL && v->mask != NULL && v->mask->count > 1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the mask view holds %zu masks for one image",
                       v->mask->count);
    }
    return IMGHIST_OK;
}

imghist_status imghist_histogram(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_histspec *spec, const imghist_counts *out)
{
    if (src == NULL || images_of(src) == 1) {
        imghist_status st = ih_begin(ctx);
        if (st == IMGHIST_OK) st = one_image(ctx, src, "imghist_histogram");
        return st != IMGHIST_OK ? st
                                : ih_op_histogram_one(ctx, src, src ? src->mask : NULL, spec, out);
    }
    ptrdiff_t ms;
    imghist_status st = begin_batch_call(ctx);
    if (st == IMGHIST_OK) st = mask_stride(ctx, src, &ms);
    if (st != IMGHIST_OK) {
        return st;
    }
    return ih_op_histogram_tensor(ctx, src, src->count, src->image_stride, src->mask, ms, spec,
                                  out);
}

imghist_status imghist_histogram_list(imghist_ctx *ctx, const imghist_view *srcs, size_t n,
                                      const imghist_histspec *spec, const imghist_counts *out)
{
    imghist_view *masks = NULL;
    imghist_status st = begin_batch_call(ctx);
    if (st == IMGHIST_OK && srcs != NULL) st = list_masks(ctx, srcs, n, &masks);
    if (st == IMGHIST_OK) st = ih_op_histogram_views(ctx, srcs, masks, n, spec, out);
    free(masks);
    return st;
}

imghist_status imghist_range(imghist_ctx *ctx, const imghist_view *src, double *lo, double *hi)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = one_image(ctx, src, "imghist_range");
    return st != IMGHIST_OK ? st : ih_op_range(ctx, src, src ? src->mask : NULL, lo, hi);
}

imghist_status imghist_histogram2d(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                                   const imghist_histspec *spec_a,
                                   const imghist_histspec *spec_b, const imghist_counts *out)
{
    imghist_status st = ih_begin(ctx);
    if (st == IMGHIST_OK) st = one_image(ctx, a, "imghist_histogram2d");
    if (st == IMGHIST_OK) st = one_image(ctx, b, "imghist_histogram2d");
    if (st != IMGHIST_OK) {
        return st;
    }
    return ih_op_histogram2d(ctx, a, b, a ? a->mask : NULL, spec_a, spec_b, out);
}

imghist_status imghist_equalize(imghist_ctx *ctx, const imghist_view *src,
                                const imghist_view *dst, imghist_method method,
                                const imghist_counts *hists)
{
    imghist_status st = begin_method(ctx, method);
    if (st == IMGHIST_OK) st = begin_pair(ctx, src, dst);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (images_of(src) == 1) {
        st = one_image(ctx, src, "imghist_equalize");
        return st != IMGHIST_OK ? st
                                : ih_op_equalize_one(ctx, src, src ? src->mask : NULL, dst, hists);
    }
    ptrdiff_t ms;
    st = mask_stride(ctx, src, &ms);
    if (st != IMGHIST_OK) {
        return st;
    }
    return ih_op_equalize_tensor(ctx, src, src->image_stride, src->mask, ms, dst,
                                 dst->image_stride, src->count, hists);
}

imghist_status imghist_equalize_list(imghist_ctx *ctx, const imghist_view *srcs,
                                     const imghist_view *dsts, size_t n, imghist_method method,
                                     const imghist_counts *hists)
{
    imghist_view *masks = NULL;
    imghist_status st = begin_method(ctx, method);
    if (st == IMGHIST_OK) st = begin_batch_call(ctx);
    if (st == IMGHIST_OK && srcs != NULL) st = list_masks(ctx, srcs, n, &masks);
    if (st == IMGHIST_OK) st = ih_op_equalize_views(ctx, srcs, masks, dsts, n, hists);
    free(masks);
    return st;
}

imghist_status imghist_clahe(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                             double clip_limit, uint32_t tiles_x, uint32_t tiles_y)
{
    imghist_status st = begin_pair(ctx, src, dst);
    if (st != IMGHIST_OK) {
        return st;
    }
    return images_of(src) == 1 ? ih_op_clahe(ctx, src, dst, clip_limit, tiles_x, tiles_y)
                               : ih_op_clahe_tensor(ctx, src, dst, clip_limit, tiles_x, tiles_y);
}

imghist_status imghist_clahe_list(imghist_ctx *ctx, const imghist_view *srcs,
                                  const imghist_view *dsts, size_t n, double clip_limit,
                                  uint32_t tiles_x, uint32_t tiles_y)
{
    imghist_status st = ih_begin(ctx);
    for (size_t i = 0; st == IMGHIST_OK && srcs != NULL && dsts != NULL && i < n; i++) {
        if (srcs[i].count > 1 || dsts[i].count > 1) {
            st = ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                         "list view %zu holds several images: one image a view", i);
        }
    }
    return st != IMGHIST_OK ? st
                            : ih_op_clahe_views(ctx, srcs, dsts, n, clip_limit, tiles_x, tiles_y);
}

imghist_status imghist_apply_lut(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst, const uint8_t lut[256])
{
    imghist_status st = begin_pair(ctx, src, dst);
    if (st != IMGHIST_OK) {
        return st;
    }
    return images_of(src) == 1 ? ih_op_apply_lut(ctx, src, dst, lut)
                               : ih_op_apply_lut_tensor(ctx, src, dst, lut);
}

imghist_route imghist_exp_last_route(const imghist_ctx *ctx)
{
    return ctx != NULL ? (imghist_route)ctx->batch_route : IMGHIST_ROUTE_NONE;
}

void imghist_exp_stage_ns(const imghist_ctx *ctx, uint64_t ns[IMGHIST_STAGES])
{
    if (ctx != NULL) {
        memcpy(ns, ctx->stage_ns, sizeof ctx->stage_ns);
    } else {
        memset(ns, 0, sizeof ctx->stage_ns);
    }
}

uint64_t ih_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
