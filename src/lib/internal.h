/* Private declarations shared by the library's C units and the CUDA backend. */
#ifndef IMGHIST_INTERNAL_H
#define IMGHIST_INTERNAL_H

#include "imghist.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IH_DEFAULT_MAX_PIXELS (UINT64_C(1) << 30)

struct ih_cuda_state; /* defined by the CUDA backend */

struct imghist_ctx {
    imghist_backend backend;      /* CPU or CUDA, never AUTO */
    uint64_t max_pixels;
    struct ih_cuda_state *cuda;   /* non-NULL only on the CUDA backend */
    char err[512];
    char note[256];               /* how the last call ran, when noteworthy */
};

/* Record a formatted message on ctx (if any) and return status. */
imghist_status ih_fail(imghist_ctx *ctx, imghist_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Argument checks common to every image entry point. */
imghist_status ih_check_image(imghist_ctx *ctx, const void *pixels, size_t pitch,
                              uint32_t width, uint32_t height);

/* ---- CPU reference (cpu_hist.c) ---- */
void ih_cpu_histogram(const uint8_t *pixels, size_t pitch, uint32_t width, uint32_t height,
                      uint64_t hist[IMGHIST_BINS]);
void ih_cpu_apply_lut(const uint8_t *src, size_t src_pitch, uint8_t *dst, size_t dst_pitch,
                      uint32_t width, uint32_t height, const uint8_t lut[IMGHIST_BINS]);
/* OpenCV's BGR2GRAY on one RGB triple. */
static inline uint8_t ih_gray_from_rgb(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((9798u * r + 19235u * g + 3735u * b + 16384u) >> 15);
}

/* ---- CUDA backend (kernels/cuda_backend.cu, or cuda_stub.c without CUDA) ---- */
/* Probe for a usable GPU and set up ctx->cuda. Returns IMGHIST_E_NO_GPU,
 * IMGHIST_E_UNSUPPORTED or IMGHIST_E_CUDA with a message on ctx otherwise. */
imghist_status ih_cuda_open(imghist_ctx *ctx);
void ih_cuda_close(imghist_ctx *ctx);
imghist_status ih_cuda_host_histogram(imghist_ctx *ctx, const uint8_t *pixels, size_t pitch,
                                      uint32_t width, uint32_t height,
                                      uint64_t hist[IMGHIST_BINS]);
imghist_status ih_cuda_host_equalize(imghist_ctx *ctx, const uint8_t *src, size_t src_pitch,
                                     uint8_t *dst, size_t dst_pitch, uint32_t width,
                                     uint32_t height, uint64_t hist[IMGHIST_BINS]);

#ifdef __cplusplus
}
#endif

#endif
