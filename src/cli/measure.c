#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *names_for(uint32_t channels)
{
    switch (channels) {
    case 2: return "la";
    case 3: return "rgb";
    case 4: return "rgba";
    default: return "l";
    }
}

static imghist_status lib_fail(const imghist_ctx *ctx, imghist_status st, char *msg, size_t len)
{
    snprintf(msg, len, "%s", imghist_last_error(ctx)[0] ? imghist_last_error(ctx)
                                                        : imghist_strerror(st));
    return st;
}

imghist_status ih_cli_spec(imghist_ctx *ctx, const ih_cli_args *a, uint32_t default_bins,
                           const imghist_view *img, const imghist_view *mask,
                           imghist_histspec *spec, ih_hist_out *h, char *msg, size_t msglen)
{
    memset(spec, 0, sizeof *spec);
    h->closed = 0;
    h->has_data_range = 0;
    if (img->dtype == IMGHIST_F32) {
        double lo = a->lo, hi = a->hi;
        if (!a->has_range) {
            /* numpy.histogram's default: the finite extremes, the max in the
             * last bin; a constant image gets [v - 0.5, v + 0.5]. */
            imghist_view masked = *img;
            masked.mask = mask;
            imghist_status st = imghist_range(ctx, &masked, &lo, &hi);
            if (st != IMGHIST_OK) {
                return lib_fail(ctx, st, msg, msglen);
            }
            h->has_data_range = 1;
            h->data_min = lo;
            h->data_max = hi;
            if (lo == hi) {
                lo -= 0.5;
                hi += 0.5;
            } else {
                h->closed = 1;
            }
        }
        spec->bins = a->bins ? a->bins : (default_bins ? default_bins : 256);
        spec->lo = lo;
        spec->hi = hi;
    } else {
        const double levels = img->dtype == IMGHIST_U8 ? 256.0 : 65536.0;
        spec->bins = a->bins ? a->bins : (default_bins ? default_bins : (uint32_t)levels);
        spec->lo = a->has_range ? a->lo : 0.0;
        spec->hi = a->has_range ? a->hi : levels;
    }
    spec->flags = IMGHIST_OUTLIERS | (h->closed ? IMGHIST_CLOSED : 0);
    h->levels_max = img->dtype == IMGHIST_U8 ? 255u : img->dtype == IMGHIST_F32 ? 0u : 65535u;
    h->bins = spec->bins;
    h->lo = spec->lo;
    h->hi = spec->hi;
    h->natural = img->dtype != IMGHIST_F32 && spec->lo == 0.0 &&
                 spec->hi == (img->dtype == IMGHIST_U8 ? 256.0 : 65536.0) &&
                 spec->bins == (uint32_t)spec->hi;
    if (imghist_bins(spec, img->dtype) == 0) {
        snprintf(msg, msglen, "%u bins over [%g, %g) cannot be told apart in double precision",
                 spec->bins, spec->lo, spec->hi);
        return IMGHIST_E_INVALID_ARG;
    }
    return IMGHIST_OK;
}

imghist_status ih_measure(imghist_ctx *ctx, const ih_cli_args *a, const imghist_view *img,
                          const imghist_view *mask, const imghist_view *eq, ih_hist_out *out,
                          char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    const uint32_t channels = img->channels > 1 ? img->channels : 1;
    out->channels = channels;
    out->names = names_for(channels);
    imghist_histspec spec;
    imghist_status st = ih_cli_spec(ctx, a, 0, img, mask, &spec, out, msg, msglen);
    if (st != IMGHIST_OK) {
        return st;
    }
    if (eq != NULL && (img->dtype == IMGHIST_F32 || channels > 1)) {
        snprintf(msg, msglen, "--equalize takes 8- or 16-bit gray images, not %s",
                 channels > 1 ? "colour channels" : "float samples");
        return IMGHIST_E_UNSUPPORTED;
    }
    const size_t stride = ih_hist_stride(out);
    out->counts = calloc(stride * channels, sizeof *out->counts);
    if (out->counts == NULL) {
        snprintf(msg, msglen, "out of memory for %u bins", out->bins);
        return IMGHIST_E_NOMEM;
    }
    const imghist_counts counts = {out->counts, stride * channels, IMGHIST_MEM_HOST};
    imghist_view masked = *img;
    masked.mask = mask;
    if (eq != NULL && out->natural) {
        /* One pass counts and equalizes; the histogram has no outliers. */
        const imghist_counts levels = {out->counts, out->bins, IMGHIST_MEM_HOST};
        st = imghist_equalize(ctx, &masked, eq, IMGHIST_EQ_OPENCV, &levels);
    } else {
        st = imghist_histogram(ctx, &masked, &spec, &counts);
        if (st == IMGHIST_OK && eq != NULL) {
            st = imghist_equalize(ctx, &masked, eq, IMGHIST_EQ_OPENCV, NULL);
        }
    }
    if (st != IMGHIST_OK) {
        lib_fail(ctx, st, msg, msglen);
        ih_hist_out_free(out);
    }
    return st;
}
