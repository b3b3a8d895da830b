/* Stand-in for the CUDA backend in builds without CUDA. */
#include "internal.h"

imghist_status ih_cuda_open(imghist_ctx *ctx)
{
    return ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                   "no usable GPU: this build of imghist has no CUDA backend");
}

void ih_cuda_close(imghist_ctx *ctx)
{
    (void)ctx;
}

imghist_status ih_cuda_host_histogram(imghist_ctx *ctx, const uint8_t *pixels, size_t pitch,
                                      uint32_t width, uint32_t height,
                                      uint64_t hist[IMGHIST_BINS])
{
    (void)pixels; (void)pitch; (void)width; (void)height; (void)hist;
    return ih_cuda_open(ctx);
}

imghist_status ih_cuda_host_equalize(imghist_ctx *ctx, const uint8_t *src, size_t src_pitch,
                                     uint8_t *dst, size_t dst_pitch, uint32_t width,
                                     uint32_t height, uint64_t hist[IMGHIST_BINS])
{
    (void)src; (void)src_pitch; (void)dst; (void)dst_pitch; (void)width; (void)height;
    (void)hist;
    return ih_cuda_open(ctx);
}
