/*
 * Views the suites build from views they already have (include after
 * "imghist.h"): a tensor of `count` images of one view's shape, a view with a
 * mask, and masks attached to a list. They only fill in imghist_view's fields,
 * so each call under test stays visible at the call site.
 */
#ifndef IMGHIST_TEST_VIEWS_H
#define IMGHIST_TEST_VIEWS_H

#include <stddef.h>

/* `count` images of first's shape, image i at first.data + i * stride. */
static inline imghist_view vw_tensor(imghist_view first, size_t count, ptrdiff_t stride)
{
    first.count = count;
    first.image_stride = stride;
    return first;
}

/* v with mask (NULL: none). */
static inline imghist_view vw_masked(imghist_view v, const imghist_view *mask)
{
    v.mask = mask;
    return v;
}

/* A tensor with a tensor of masks: image i's mask at mask.data + i *
 * mask_stride (mask_count 1: one mask for every image). *m receives the mask
 * view, which the returned view points to. */
static inline imghist_view vw_tensor_masked(imghist_view first, size_t count, ptrdiff_t stride,
                                            imghist_view mask, size_t mask_count,
                                            ptrdiff_t mask_stride, imghist_view *m)
{
    *m = vw_tensor(mask, mask_count, mask_stride);
    return vw_masked(vw_tensor(first, count, stride), m);
}

/* dst[i] = src[i] with masks[i] (masks NULL: no masks). */
static inline void vw_list_masked(imghist_view *dst, const imghist_view *src,
                                  const imghist_view *masks, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        dst[i] = vw_masked(src[i], masks != NULL ? &masks[i] : NULL);
    }
}

#endif
