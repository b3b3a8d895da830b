/* Sticky context parameters, each with its bounds and default (zstd's
 * ZSTD_CCtx_setParameter is the model). They replace 0.1's environment
 * variables, which were read on every call and documented nowhere. */
#include <stddef.h>
#include <stdint.h>

#include "core.h"

typedef struct param_info {
    imghist_param id;
    const char *name;
    int64_t lo, hi, def;
    size_t offset; /* in ih_params */
} param_info;

static const param_info params[] = {
    {IMGHIST_P_MAX_PIXELS, "IMGHIST_P_MAX_PIXELS", 1, INT64_C(1) << 48, INT64_C(1) << 30,
     offsetof(ih_params, max_pixels)},
    /* stb_image and libjpeg take sizes as int: 2 GiB - 1 is the most any
     * loader can read. */
    {IMGHIST_P_MAX_INPUT_BYTES, "IMGHIST_P_MAX_INPUT_BYTES", 1, INT32_MAX, INT32_MAX,
     offsetof(ih_params, max_input_bytes)},
    {IMGHIST_P_CPU_THREADS, "IMGHIST_P_CPU_THREADS", 1, 256, 1, offsetof(ih_params, cpu_threads)},
    {IMGHIST_P_STAGING_BYTES, "IMGHIST_P_STAGING_BYTES", 0, INT64_MAX, 0,
     offsetof(ih_params, staging_bytes)},
    {IMGHIST_P_LOAD_GRAY, "IMGHIST_P_LOAD_GRAY", IMGHIST_GRAY_BGR2GRAY, IMGHIST_GRAY_LUMA,
     IMGHIST_GRAY_BGR2GRAY, offsetof(ih_params, load_gray)},
    /* 1: OpenCV's imwrite settings, several times faster than libpng's
     * default 6 and about as small on equalized images (src/io/encode_png.c,
     * bench/PNG-CODECS.md). */
    {IMGHIST_P_PNG_LEVEL, "IMGHIST_P_PNG_LEVEL", 0, 9, 1, offsetof(ih_params, png_level)},
    {IMGHIST_P_LOAD_DEPTH, "IMGHIST_P_LOAD_DEPTH", 0, 1, 0, offsetof(ih_params, load_depth)},
    {IMGHIST_P_LOAD_CHANNELS, "IMGHIST_P_LOAD_CHANNELS", 0, 1, 0,
     offsetof(ih_params, load_channels)},
    {IMGHIST_P_LOAD_TRUNCATED, "IMGHIST_P_LOAD_TRUNCATED", 0, 1, 0,
     offsetof(ih_params, load_truncated)},
    {IMGHIST_P_DECODE, "IMGHIST_P_DECODE", IMGHIST_DECODE_AUTO, IMGHIST_DECODE_GPU,
     IMGHIST_DECODE_AUTO, offsetof(ih_params, decode)},
    {IMGHIST_P_EXP_HIST_BLOCKS_PER_SM, "IMGHIST_P_EXP_HIST_BLOCKS_PER_SM", 0, 64, 0,
     offsetof(ih_params, hist_blocks_per_sm)},
    {IMGHIST_P_EXP_BATCH_RUN, "IMGHIST_P_EXP_BATCH_RUN", 0, INT64_C(1) << 24, 0,
     offsetof(ih_params, batch_run)},
    {IMGHIST_P_EXP_EQ_BATCH_SMALL, "IMGHIST_P_EXP_EQ_BATCH_SMALL", 0, INT32_MAX, 0,
     offsetof(ih_params, eq_batch_small)},
    {IMGHIST_P_EXP_BATCH_TINY, "IMGHIST_P_EXP_BATCH_TINY", -1, INT32_MAX, 0,
     offsetof(ih_params, batch_tiny)},
    {IMGHIST_P_EXP_AUTO_DECODE_BYTES, "IMGHIST_P_EXP_AUTO_DECODE_BYTES", 0, INT64_MAX, 0,
     offsetof(ih_params, auto_decode_bytes)},
    {IMGHIST_P_EXP_HIST16_GLOBAL, "IMGHIST_P_EXP_HIST16_GLOBAL", -1, INT32_MAX, 0,
     offsetof(ih_params, hist16_global)},
};

static const param_info *find(imghist_param id)
{
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        if (params[i].id == id) {
            return &params[i];
        }
    }
    return NULL;
}

static int64_t *field(ih_params *p, const param_info *info)
{
    return (int64_t *)((char *)p + info->offset);
}

void ih_params_default(ih_params *p)
{
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        *field(p, &params[i]) = params[i].def;
    }
}

imghist_status imghist_param_bounds(imghist_param param, int64_t *lo, int64_t *hi)
{
    const param_info *info = find(param);
    if (info == NULL) {
        return IMGHIST_E_UNSUPPORTED;
    }
    if (lo == NULL || hi == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    *lo = info->lo;
    *hi = info->hi;
    return IMGHIST_OK;
}

imghist_status imghist_set_param(imghist_ctx *ctx, imghist_param param, int64_t value)
{
    imghist_status st = ih_begin(ctx);
    if (st != IMGHIST_OK) {
        return st;
    }
    const param_info *info = find(param);
    if (info == NULL) {
        return ih_fail(ctx, IMGHIST_E_UNSUPPORTED, "unknown parameter %d", (int)param);
    }
    if (value < info->lo || value > info->hi) {
        return ih_fail(ctx, IMGHIST_E_INVALID_ARG, "%s must be in [%lld, %lld], not %lld",
                       info->name, (long long)info->lo, (long long)info->hi, (long long)value);
    }
    *field(&ctx->params, info) = value;
    return IMGHIST_OK;
}

imghist_status imghist_get_param(const imghist_ctx *ctx, imghist_param param, int64_t *value)
{
    if (ctx == NULL || value == NULL) {
        return IMGHIST_E_INVALID_ARG;
    }
    const param_info *info = find(param);
    if (info == NULL) {
        return IMGHIST_E_UNSUPPORTED;
    }
    *value = *field((ih_params *)&ctx->params, info);
    return IMGHIST_OK;
}
