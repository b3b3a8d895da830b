/*
 * The composition root: the one place that knows which backends this build
 * has and picks one for a new context. The core below knows none by name.
 */
#include <stdlib.h>

#include "backend.h"

/* Set by meson: 1 when the CUDA backend is compiled in. */
#ifndef IH_HAVE_CUDA
#define IH_HAVE_CUDA 0
#endif

imghist_status imghist_device_count(int *count)
{
    if (count == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
#if IH_HAVE_CUDA
    *count = ih_cuda_device_count();
#else
    *count = 0;
#endif
    return IMGHIST_OK;
}

/* device: -1 for the calling thread's current GPU. */
static imghist_status create(imghist_backend backend, int device, imghist_ctx **out)
{
    if (out == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    *out = ih_ctx_new(&ih_cpu_backend);
    imghist_ctx *ctx = *out;
    if (ctx == NULL) {
        return IMGHIST_E_NOMEM;
    }
    if (backend != IMGHIST_BACKEND_AUTO && backend != IMGHIST_BACKEND_CPU &&
        backend != IMGHIST_BACKEND_CUDA) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "unknown backend %d", (int)backend);
    }
    if (backend == IMGHIST_BACKEND_AUTO) {
        const char *env = getenv("IMGHIST_BACKEND");
        if (env != NULL && *env != '\0' &&
            imghist_backend_from_name(env, &backend) != IMGHIST_OK) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG,
                           "IMGHIST_BACKEND=%s is not one of auto, cpu, cuda", env);
        }
    }
    if (backend == IMGHIST_BACKEND_CPU) {
        return IMGHIST_OK;
    }
#if IH_HAVE_CUDA
    if (device >= 0) {
        const int count = ih_cuda_device_count();
        if (device >= count && count > 0) {
            return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "no GPU %d: %d GPU%s visible", device,
                           count, count == 1 ? " is" : "s are");
        }
    }
    ctx->device = device;
    ctx->ops = &ih_cuda_backend;
    ctx->backend = IMGHIST_BACKEND_CUDA;
    imghist_status st = ih_cuda_backend.open(ctx);
    if (st == IMGHIST_OK) {
        ctx->fallback = &ih_cpu_backend;
        return IMGHIST_OK;
    }
    ctx->ops = &ih_cpu_backend;
    ctx->backend = IMGHIST_BACKEND_CPU;
    ctx->device = -1;
#else
    (void)device; /* no GPU to pick */
    imghist_status st = ih_fail(ctx, IMGHIST_E_UNSUPPORTED,
                                "no usable GPU: this build of imghist has no CUDA backend");
#endif
    if (backend == IMGHIST_BACKEND_AUTO) {
        ctx->err[0] = '\0'; /* quiet fallback: the CPU gives the same bits */
        return IMGHIST_OK;
    }
    return st;
}

imghist_status imghist_create(imghist_backend backend, int device, imghist_ctx **out)
{
    if (device < -1) {
        imghist_status st = create(IMGHIST_BACKEND_CPU, -1, out);
        return st != IMGHIST_OK ? st
                                : ih_fail(*out, IMGHIST_E_INVALID_ARG,
                                          "device %d: a GPU index is 0 or more, or -1 for "
                                          "the current one",
                                          device);
    }
    return create(backend, device, out);
}
