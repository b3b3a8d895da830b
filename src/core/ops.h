/*
 * The operations behind the public calls (core/ops.c: counting;
 * core/ops_equalize.c: equalization, CLAHE, lookups), each on the forms the
 * backends take: one image with its mask, a list of views with their masks,
 * a tensor of images `stride` bytes apart. core/api.c maps the public views
 * onto them. Every one checks its arguments in full before it dispatches.
 * Masks NULL: none.
 */
#ifndef IMGHIST_OPS_H
#define IMGHIST_OPS_H

#include <stdbool.h>

#include "core.h"

/* Shared by the operation files (core/ops.c, inline where a list's pass
 * calls them a view: a call each costs more than the check). */
/* Device memory needs a backend that takes it (role names it). */
imghist_status ih_check_memory(imghist_ctx *ctx, imghist_mem mem, const char *role);
/* Whether v has v0's fields but for its data, which is not NULL: then it
 * passes every check v0 passed. */
static inline bool ih_same_shape(const imghist_view *v, const imghist_view *v0)
{
    return v->data != NULL && v->dtype == v0->dtype && v->mem == v0->mem &&
           v->width == v0->width && v->height == v0->height && v->pitch == v0->pitch &&
           v->channels == v0->channels;
}
/* ih_begin, then what every batch call refuses: no views (given: whether
 * they are there), no images, or more than 2^32 - 1. */
imghist_status ih_begin_batch(imghist_ctx *ctx, bool given, size_t count);
/* count images of first's shape `stride` bytes apart lie in the address
 * space (role names them). */
imghist_status ih_check_stride(imghist_ctx *ctx, const imghist_view *first, size_t count,
                               ptrdiff_t stride, const char *role);
/* A list's source view i in the checks' one pass over it: one image a view,
 * and a mask on every view or on none (masked: whether view 0 has one). */
static inline imghist_status ih_list_view_rules(imghist_ctx *ctx, const imghist_view *v, size_t i,
                                                 bool masked)
{
    if (v->count > 1) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "list view %zu holds %zu images: a list takes one image a view", i,
                       v->count);
    }
    if (!masked && v->mask != NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                       "list view %zu has a mask where view 0 has none: all or none must", i);
    }
    return IMGHIST_OK;
}
/* The layout of one array of a list, learnt view by view in the checks'
 * pass (ih_layout_step), then recorded in ctx->layout (ih_set_layout). */
typedef struct ih_layout_scan {
    uintptr_t base, stride;
    bool uniform, one_shape;
} ih_layout_scan;
void ih_layout_begin(ih_layout_scan *l, const imghist_view *v, size_t count);
/* View i (same: whether it has view 0's shape). */
static inline void ih_layout_step(ih_layout_scan *l, const imghist_view *v, size_t i, bool same)
{
    const uintptr_t at = (uintptr_t)v[i].data;
    l->uniform = l->uniform && same && at == l->base + i * l->stride;
    l->one_shape = l->one_shape && same && ((at - l->base) & 15) == 0;
}
/*
 * Where the common list ends: from view 1, the first view that is not view
 * 0's shape with view 0's count and mask at view 0's data + i * l->stride
 * (count when all are). Such views need no check beyond this comparison.
 * With IMGHIST_P_CPU_THREADS above 1, a list of thousands of views is
 * compared on that many threads.
 */
size_t ih_tensor_run(const imghist_ctx *ctx, const ih_layout_scan *l, const imghist_view *v,
                     size_t count);
/* Views 1 to end - 1 as ih_tensor_run_end found them, stepped at once. */
static inline void ih_layout_take(ih_layout_scan *l, size_t end)
{
    l->one_shape = l->one_shape && (end <= 1 || (l->stride & 15) == 0);
}
/* Record what the pass saw of src (and dst: NULL for counting). */
void ih_set_layout(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                   size_t count, const ih_layout_scan *s, const ih_layout_scan *d);
/* Mask i of a batch against its image (ih_check_mask's checks, the image's
 * number in the message). */
imghist_status ih_check_batch_mask(imghist_ctx *ctx, const imghist_view *masks,
                                   const imghist_view *src, size_t i);
/* The bytes a view spans, as an address range [*lo, *hi). Inline: the
 * overlap checks of a list take it several times a view. */
static inline void ih_view_span(const imghist_view *v, uintptr_t *lo, uintptr_t *hi)
{
    const size_t ch = v->channels > 1 ? v->channels : 1;
    *lo = (uintptr_t)v->data;
    *hi = *lo + (size_t)(v->height - 1) * v->pitch +
          (size_t)v->width * ch * ih_dtype_size(v->dtype);
}

/* The operations behind the public calls, each checking its arguments and
 * then dispatching: one image, a list of views, or a tensor of count images
 * `stride` bytes apart (masks alike). */
imghist_status ih_op_histogram_one(imghist_ctx *ctx, const imghist_view *src,
                                   const imghist_view *mask, const imghist_histspec *spec,
                                   const imghist_counts *out);
/* The finite samples' minimum and maximum where mask (if any) is set. */
imghist_status ih_op_range(imghist_ctx *ctx, const imghist_view *src, const imghist_view *mask,
                           double *lo, double *hi);
/* count views; image i's counters follow image i - 1's in out. */
imghist_status ih_op_histogram_views(imghist_ctx *ctx, const imghist_view *src,
                                     const imghist_view *masks, size_t count,
                                     const imghist_histspec *spec, const imghist_counts *out);
imghist_status ih_op_histogram_tensor(imghist_ctx *ctx, const imghist_view *first, size_t count,
                                      ptrdiff_t stride, const imghist_view *mask,
                                      ptrdiff_t mask_stride, const imghist_histspec *spec,
                                      const imghist_counts *out);
imghist_status ih_op_histogram2d(imghist_ctx *ctx, const imghist_view *a, const imghist_view *b,
                                 const imghist_view *mask, const imghist_histspec *spec_a,
                                 const imghist_histspec *spec_b, const imghist_counts *out);
/* The equalizations use ctx->eq_method, which the caller sets. */
imghist_status ih_op_equalize_one(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *mask, const imghist_view *dst,
                                  const imghist_counts *hist);
imghist_status ih_op_equalize_views(imghist_ctx *ctx, const imghist_view *src,
                                    const imghist_view *masks, const imghist_view *dst,
                                    size_t count, const imghist_counts *hists);
imghist_status ih_op_equalize_tensor(imghist_ctx *ctx, const imghist_view *src,
                                     ptrdiff_t src_stride, const imghist_view *mask,
                                     ptrdiff_t mask_stride, const imghist_view *dst,
                                     ptrdiff_t dst_stride, size_t count,
                                     const imghist_counts *hists);
imghist_status ih_op_clahe(imghist_ctx *ctx, const imghist_view *src, const imghist_view *dst,
                           double clip_limit, uint32_t tiles_x, uint32_t tiles_y);
imghist_status ih_op_clahe_views(imghist_ctx *ctx, const imghist_view *src,
                                 const imghist_view *dst, size_t count, double clip_limit,
                                 uint32_t tiles_x, uint32_t tiles_y);
/* src->count and dst->count images, image_stride apart (count > 1). */
imghist_status ih_op_clahe_tensor(imghist_ctx *ctx, const imghist_view *src,
                                  const imghist_view *dst, double clip_limit, uint32_t tiles_x,
                                  uint32_t tiles_y);
imghist_status ih_op_apply_lut(imghist_ctx *ctx, const imghist_view *src,
                               const imghist_view *dst, const uint8_t lut[256]);
imghist_status ih_op_apply_lut_tensor(imghist_ctx *ctx, const imghist_view *src,
                                      const imghist_view *dst, const uint8_t lut[256]);

#endif
