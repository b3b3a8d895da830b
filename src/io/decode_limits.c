/* The decoders' size check, from the limits load.c reads off the context. */
#include "decode.h"

imghist_status ih_check_image_size(imghist_ctx *ctx, const ih_decode_limits *limits,
                                   const char *name, uint64_t w, uint64_t h)
{
    if (w == 0 || h == 0) {
        return ih_fail(ctx, IMGHIST_E_DECODE, "%s: image has no pixels", name);
    }
    const uint64_t limit = limits->max_pixels;
    if (w > UINT32_MAX || h > UINT32_MAX || w * h > limit) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: %llux%llu is over the limit of %llu pixels",
                       name, (unsigned long long)w, (unsigned long long)h,
                       (unsigned long long)limit);
    }
    if (w * h > SIZE_MAX / 4) {
        return ih_fail(ctx, IMGHIST_E_LIMIT, "%s: image too large for this machine", name);
    }
    return IMGHIST_OK;
}
