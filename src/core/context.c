/* Contexts, versions, status names and backend names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend.h"

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
    case IMGHIST_E_LIMIT: return "input exceeds a limit";
    case IMGHIST_E_NO_GPU: return "no usable GPU";
    case IMGHIST_E_CUDA: return "CUDA error";
    case IMGHIST_E_UNSUPPORTED: return "not supported";
    case IMGHIST_E_BUFSIZE: return "output buffer too small";
    case IMGHIST_E_FAULTED: return "the GPU faulted; the context is unusable";
    case IMGHIST_E_CANCELED: return "canceled";
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

imghist_status imghist_backend_from_name(const char *name, imghist_backend *out)
{
    if (name == NULL || out == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    static const imghist_backend all[] = {IMGHIST_BACKEND_AUTO, IMGHIST_BACKEND_CPU,
                                          IMGHIST_BACKEND_CUDA};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcasecmp(name, imghist_backend_name(all[i])) == 0) {
            *out = all[i];
            return IMGHIST_OK;
        }
    }
    return IMGHIST_E_INVALID_ARG;
}

imghist_ctx *ih_ctx_new(const ih_backend_ops *ops)
{
    imghist_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return NULL;
    }
    ctx->ops = ops;
    ctx->backend = ops->id;
    ctx->device = -1;
    ih_params_default(&ctx->params);
    return ctx;
}

void imghist_destroy(imghist_ctx *ctx)
{
    if (ctx == NULL) {
        return;
    }
    ctx->ops->close(ctx);
    free(ctx->scratch);
    free(ctx);
}

void *ih_scratch(imghist_ctx *ctx, size_t bytes)
{
    if (bytes > ctx->scratch_bytes) {
        free(ctx->scratch);
        ctx->scratch_bytes = 0;
        ctx->scratch = malloc(bytes);
        if (ctx->scratch == NULL) {
            ih_fail(ctx, IMGHIST_E_NOMEM, "out of memory for %zu bytes of scratch", bytes);
            return NULL;
        }
        ctx->scratch_bytes = bytes;
    }
    return ctx->scratch;
}

imghist_backend imghist_get_backend(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->backend : IMGHIST_BACKEND_CPU;
}

imghist_status imghist_get_device(const imghist_ctx *ctx, int *device)
{
    if (ctx == NULL || device == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    *device = ctx->backend == IMGHIST_BACKEND_CUDA ? ctx->device : -1;
    return IMGHIST_OK;
}

const char *imghist_last_error(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->err : "no context";
}

const char *imghist_last_note(const imghist_ctx *ctx)
{
    return ctx != NULL ? ctx->note : "";
}

imghist_status imghist_set_stream(imghist_ctx *ctx, imghist_stream stream)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (ctx->ops->set_stream == NULL) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "the %s backend has no stream",
                       imghist_backend_name(ctx->backend));
    }
    return ctx->ops->set_stream(ctx, stream);
}

imghist_status imghist_get_stream(const imghist_ctx *ctx, imghist_stream *stream)
{
    if (ctx == NULL || stream == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    if (ctx->ops->get_stream == NULL) {
        return IMGHIST_E_UNSUPPORTED;
    }
    return ctx->ops->get_stream(ctx, stream);
}
