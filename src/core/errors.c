/* A context's message, note and fault latch: what every call reports. */
#include <stdarg.h>
#include <stdio.h>

#include "core.h"
#include "sanitize.h"

static void vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
    vsnprintf(buf, len, fmt, ap);
    ih_sanitize_line(buf);
}

imghist_status ih_fail(imghist_ctx *ctx, imghist_status status, const char *fmt, ...)
{
    if (ctx != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vformat(ctx->err, sizeof ctx->err, fmt, ap);
        va_end(ap);
    }
    return status;
}

imghist_status ih_fault(imghist_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx->fault, sizeof ctx->fault, fmt, ap);
    va_end(ap);
    ctx->faulted = 1;
    return ih_fail(ctx, IMGHIST_E_FAULTED, "the GPU faulted: %s; destroy this context",
                   ctx->fault);
}

void ih_note(imghist_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx->note, sizeof ctx->note, fmt, ap);
    va_end(ap);
}

imghist_status ih_begin(imghist_ctx *ctx)
{
    if (ctx == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    ctx->err[0] = '\0';
    ctx->layout.count = 0;
    ctx->note[0] = '\0';
    if (ctx->faulted) {
        return ih_fail(ctx, IMGHIST_E_FAULTED,
                       "an earlier call found that the GPU faulted (%s); destroy this context",
                       ctx->fault);
    }
    return IMGHIST_OK;
}
