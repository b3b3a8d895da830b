/*
 * Helpers of the CPU reference suite's files (include after <cmocka.h> and
 * "imghist.h"): a CPU context, a host view, a loaded image's pixels, OpenCV's
 * BGR2GRAY rounding, a memory sink for stb_image_write.
 */
#ifndef IMGHIST_CPU_SUITE_H
#define IMGHIST_CPU_SUITE_H

#include <stdint.h>
#include <string.h>

static inline imghist_ctx *cpu_ctx(void)
{
    imghist_ctx *ctx = NULL;
    assert_int_equal(imghist_create(IMGHIST_BACKEND_CPU, -1, &ctx), IMGHIST_OK);
    assert_int_equal(imghist_get_backend(ctx), IMGHIST_BACKEND_CPU);
    return ctx;
}

/* A U8 host view of w x h samples at p. The library only reads an input view,
 * so const is cast away for the struct's sake. */
static inline imghist_view u8_view(const uint8_t *p, size_t pitch, uint32_t w, uint32_t h)
{
    imghist_view v = {.data = (void *)(uintptr_t)p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                      .width = w, .height = h, .pitch = pitch};
    return v;
}

static inline const uint8_t *pixels_of(const imghist_image *img)
{
    return (const uint8_t *)img->view.data;
}

static inline uint8_t cv_gray(int r, int g, int b)
{
    return (uint8_t)((9798 * r + 19235 * g + 3735 * b + 16384) >> 15);
}

struct membuf {
    uint8_t data[1 << 16];
    size_t len;
};

static inline void to_mem(void *ctx, void *data, int size)
{
    struct membuf *m = ctx;
    memcpy(m->data + m->len, data, (size_t)size);
    m->len += (size_t)size;
}

#endif
