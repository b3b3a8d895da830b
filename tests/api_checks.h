/*
 * Checks of the public API the suites by operation share (include after
 * <cmocka.h> and "imghist.h"): EXPECT(ctx, call, status) with its check that
 * a failure leaves one printable line in imghist_last_error, host views and
 * counts, poisoned outputs, the reference equalization, the samples folder.
 */
#ifndef IMGHIST_API_CHECKS_H
#define IMGHIST_API_CHECKS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* A U8 host view; the library only reads an input, so const goes for the
 * struct's sake. */
static inline imghist_view u8_view(const uint8_t *p, uint32_t w, uint32_t h, size_t pitch)
{
    imghist_view v = {.data = (void *)(uintptr_t)p, .dtype = IMGHIST_U8, .mem = IMGHIST_MEM_HOST,
                      .width = w, .height = h, .pitch = pitch};
    return v;
}

static inline imghist_counts host_counts(uint64_t *d, size_t len)
{
    imghist_counts c = {.data = d, .len = len, .mem = IMGHIST_MEM_HOST};
    return c;
}

/* imghist_last_error after a failure: non-empty, one line, printable. */
static inline void check_message(const imghist_ctx *ctx, const char *call, const char *file, int line)
{
    const char *m = imghist_last_error(ctx);
    if (m == NULL) {
        fail_msg("%s:%d: %s: imghist_last_error is NULL", file, line, call);
    }
    if (m[0] == '\0') {
        fail_msg("%s:%d: %s failed with an empty imghist_last_error", file, line, call);
    }
    for (const unsigned char *p = (const unsigned char *)m; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fail_msg("%s:%d: %s: control character 0x%02x in imghist_last_error \"%s\"", file,
                     line, call, *p, m);
        }
    }
}

static inline void expect_status(imghist_ctx *ctx, imghist_status got, imghist_status want,
                          const char *call, const char *file, int line)
{
    if (got != want) {
        fail_msg("%s:%d: %s returned %d (%s), expected %d (%s); last error \"%s\"", file, line,
                 call, (int)got, imghist_strerror(got), (int)want, imghist_strerror(want),
                 ctx ? imghist_last_error(ctx) : "");
    }
    if (ctx != NULL && want != IMGHIST_OK) {
        check_message(ctx, call, file, line);
    }
}

/* A successful call on ctx, so that the message a failure leaves can only
 * come from that failure (not from an earlier one still standing). */
static inline void clear_error(imghist_ctx *ctx, const char *file, int line)
{
    if (ctx == NULL) {
        return;
    }
    int64_t v = 0;
    if (imghist_get_param(ctx, IMGHIST_P_CPU_THREADS, &v) != IMGHIST_OK ||
        imghist_set_param(ctx, IMGHIST_P_CPU_THREADS, v) != IMGHIST_OK) {
        fail_msg("%s:%d: could not clear the last error: \"%s\"", file, line,
                 imghist_last_error(ctx));
    }
    if (imghist_last_error(ctx)[0] != '\0') {
        fail_msg("%s:%d: a successful call left imghist_last_error \"%s\"", file, line,
                 imghist_last_error(ctx));
    }
}

/* EXPECT(ctx, call, status): the call returns status; when it is a failure
 * and ctx is not NULL, ctx's message is one non-empty printable line, set by
 * this call (the comma operator runs clear_error before the call). */
#define EXPECT(ctx, call, want)                                                 \
    (clear_error((ctx), __FILE__, __LINE__),                                    \
     expect_status((ctx), (call), (want), #call, __FILE__, __LINE__))

static inline void fill_random(tu_rng *r, uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)(tu_next(r) >> 56);
    }
}

/* The reference equalization: naive histogram, the public (pure) LUT. */
static inline void reference_equalize(const uint8_t *src, size_t sp, uint32_t w, uint32_t h,
                               uint8_t *dst, size_t dp, uint64_t hist[256])
{
    uint8_t lut[256];
    tu_naive_hist(src, sp, w, h, hist);
    assert_int_equal(imghist_equalize_lut(hist, 256, IMGHIST_EQ_OPENCV, lut), IMGHIST_OK);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            dst[(size_t)y * dp + x] = lut[src[(size_t)y * sp + x]];
        }
    }
}

static inline const char *samples_dir(void)
{
    const char *d = getenv("IMGHIST_SAMPLES");
    if (d == NULL || *d == '\0') {
        fail_msg("IMGHIST_SAMPLES is not set (meson test sets it to the samples folder)");
    }
    return d;
}

#define POISON UINT64_C(0xdeadbeefcafef00d)

static inline void poison(uint64_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = POISON;
    }
}

static inline void assert_poisoned(const uint64_t *p, size_t from, size_t to, const char *what)
{
    for (size_t i = from; i < to; i++) {
        if (p[i] != POISON) {
            fail_msg("%s: counts[%zu] was written (0x%llx)", what, i, (unsigned long long)p[i]);
        }
    }
}

/* ---- version, statuses, backend names ---- */

/* One sample of image i of a tensor of bytes: image i at base + i * stride. */
static inline uint8_t *tensor_image(uint8_t *base, ptrdiff_t stride, size_t i)
{
    return base + (ptrdiff_t)i * stride;
}

/* The small image of the refusal checks. */
enum { W = 16, H = 4, PITCH = 20 };

#endif
