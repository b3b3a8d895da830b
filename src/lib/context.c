/* Context, errors, versions and backend choice. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "one_line.h"

int imghist_version(void)
{
    return IMGHIST_VERSION_NUMBER;
}

const char *imghist_version_string(void)
{
    return IMGHIST_VERSION_STRING;
}

const char *imghist_strerror(imghist_status status)
{
    switch (status) {
    case IMGHIST_OK: return "success";
    case IMGHIST_E_INVALID_ARG: return "invalid argument";
    case IMGHIST_E_NOMEM: return "out of memory";
    case IMGHIST_E_IO: return "input/output error";
    case IMGHIST_E_DECODE: return "cannot decode image";
    case IMGHIST_E_ENCODE: return "cannot encode image";
    case IMGHIST_E_LIMIT: return "image exceeds the pixel limit";
    case IMGHIST_E_NO_GPU: return "no usable GPU";
    case IMGHIST_E_CUDA: return "CUDA error";
    case IMGHIST_E_UNSUPPORTED: return "not supported by this build";
    }
    return "unknown status";
}

const char *imghist_backend_name(imghist_backend backend)
{
    switch (backend) {
    case IMGHIST_BACKEND_AUTO: return "auto";
    case IMGHIST_BACKEND_CPU: return "cpu";
    case IMGHIST_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

imghist_status ih_fail(imghist_ctx *ctx, imghist_status status, const char *fmt, ...)
{
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
        va_end(ap);
        ih_one_line(ctx->err);
    }
    return status;
}

imghist_status ih_check_image(imghist_ctx *ctx, const void *pixels, size_t pitch,
                              uint32_t width, uint32_t height)
{
    if (ctx == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    ctx->err[0] = '\0';
    ctx->note[0] = '\0';
    if (pixels == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "image pointer is NULL");
    }
    if (width == 0 || height == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "image is empty (%ux%u)", width, height);
    }
    if (pitch < width) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "pitch %zu is smaller than width %u", pitch,
                       width);
    }
    if (height > 1 && (size_t)(height - 1) > (SIZE_MAX - width) / pitch) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "image size overflows the address space");
    }
    return IMGHIST_OK;
}

static int parse_backend(const char *s, imghist_backend *out)
{
    if (strcasecmp(s, "auto") == 0) {
        *out = IMGHIST_BACKEND_AUTO;
    } else if (strcasecmp(s, "cpu") == 0) {
        *out = IMGHIST_BACKEND_CPU;
    } else if (strcasecmp(s, "cuda") == 0) {
        *out = IMGHIST_BACKEND_CUDA;
    } else {
        return 0;
    }
    return 1;
}

imghist_status imghist_create(imghist_backend backend, imghist_ctx **out)
{
    if (out == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    *out = NULL;
    imghist_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return IMGHIST_E_NOMEM;
    }
    ctx->max_pixels = IH_DEFAULT_MAX_PIXELS;
    ctx->backend = IMGHIST_BACKEND_CPU;
    *out = ctx;

    if (backend != IMGHIST_BACKEND_AUTO && backend != IMGHIST_BACKEND_CPU &&
        backend != IMGHIST_BACKEND_CUDA) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown backend %d", (int)backend);
    }
    if (backend == IMGHIST_BACKEND_AUTO) {
        const char *env = getenv("IMGHIST_BACKEND");
        if (env != NULL && *env != '\0' && !parse_backend(env, &backend)) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "IMGHIST_BACKEND=%s is not one of auto, cpu, cuda", env);
        }
    }
    if (backend == IMGHIST_BACKEND_CPU) {
        return IMGHIST_OK;
    }

    imghist_status st = ih_cuda_open(ctx);
    if (st == IMGHIST_OK) {
        ctx->backend = IMGHIST_BACKEND_CUDA;
        return IMGHIST_OK;
    }
    if (backend == IMGHIST_BACKEND_AUTO) {
        /* Quiet fallback: the CPU gives the same bits. */
        ctx->err[0] = '\0';
        return IMGHIST_OK;
    }
    return st;
}

void imghist_destroy(imghist_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    ih_cuda_close(ctx);
    free(ctx);
}

imghist_backend imghist_get_backend(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->backend : IMGHIST_BACKEND_CPU;
}

const char *imghist_last_error(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->err : "no context";
}

const char *imghist_last_note(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->note : "";
}

imghist_status imghist_set_max_pixels(imghist_ctx *ctx, uint64_t max_pixels)
{
    if (ctx == NULL || max_pixels == 0) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "the pixel limit must be at least 1");
    }
    ctx->max_pixels = max_pixels;
    return IMGHIST_OK;
}

imghist_status imghist_histogram(imghist_ctx *ctx, const uint8_t *pixels, size_t pitch,
                                 uint32_t width, uint32_t height, uint64_t hist[IMGHIST_BINS])
{
    imghist_status st = ih_check_image(ctx, pixels, pitch, width, height);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (hist == NULL) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "histogram pointer is NULL");
    }
    if (ctx->backend == IMGHIST_BACKEND_CUDA) {
        return ih_cuda_host_histogram(ctx, pixels, pitch, width, height, hist);
    }
    ih_cpu_histogram(pixels, pitch, width, height, hist);
    return IMGHIST_OK;
}

imghist_status imghist_equalize(imghist_ctx *ctx, const uint8_t *src, size_t src_pitch,
                                uint8_t *dst, size_t dst_pitch, uint32_t width, uint32_t height,
                                uint64_t hist_out[IMGHIST_BINS])
{
    imghist_status st = ih_check_image(ctx, src, src_pitch, width, height);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (dst == NULL || dst_pitch < width) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "destination is NULL or its pitch < width");
    }
    if (ctx->backend == IMGHIST_BACKEND_CUDA) {
        return ih_cuda_host_equalize(ctx, src, src_pitch, dst, dst_pitch, width, height,
                                     hist_out);
    }
    uint64_t hist[IMGHIST_BINS];
    uint8_t lut[IMGHIST_BINS];
    ih_cpu_histogram(src, src_pitch, width, height, hist);
    imghist_equalize_lut(hist, lut); /* cannot fail: the image is not empty */
    ih_cpu_apply_lut(src, src_pitch, dst, dst_pitch, width, height, lut);
    if (hist_out != NULL) {
        memcpy(hist_out, hist, sizeof hist);
    }
    return IMGHIST_OK;
}
