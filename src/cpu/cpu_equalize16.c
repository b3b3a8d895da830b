/* 16-bit equalization of small images: the levels they hold alone. */
#include "cpu_equalize16.h"

static const void *row_of(const imghist_view *v, uint32_t y)
{
    return (const uint8_t *)v->data + (size_t)y * v->pitch;
}

int ih_sparse16_takes(const imghist_view *src)
{
    return src->dtype == IMGHIST_U16 && (uint64_t)src->width * src->height <= SPARSE16_MAX;
}

int ih_equalize16_sparse(sparse16 *sp, const imghist_view *src, const imghist_view *mask,
                             const imghist_view *dst)
{
    uint64_t total = 0;
    for (uint32_t y = 0; y < src->height; y++) {
        const uint16_t *row = row_of(src, y);
        const uint8_t *m = mask != NULL ? row_of(mask, y) : NULL;
        for (uint32_t x = 0; x < src->width; x++) {
            /* without branches: a random mask mispredicts */
            const uint32_t v = row[x];
            const uint64_t bit = UINT64_C(1) << (v & 63);
            const uint32_t keep = m == NULL || m[x] != 0;
            const uint64_t all = 0 - (uint64_t)keep; /* keep: every bit */
            sp->count[v] = (uint16_t)(sp->count[v] + keep);
            sp->seen[v >> 6] |= bit & all;
            sp->want[v >> 6] |= bit & ~all;
            total += keep;
        }
    }
    size_t n = 0;
    for (uint32_t k = 0; k < 1024; k++) {
        uint64_t w = sp->seen[k];
        sp->seen[k] = 0;
        while (w != 0) {
            sp->levels[n++] = (uint16_t)(k * 64 + (uint32_t)__builtin_ctzll(w));
            w &= w - 1;
        }
    }
    if (n > 0) {
        ih_equalize_lut_u16_at(sp->count, sp->levels, n, total, sp->lut);
    }
    /* values of unmasked pixels alone: the entry of the level below, 0
     * under the first (themselves when one value is counted) */
    const uint32_t first = n > 0 ? sp->levels[0] : 0;
    const int one = n > 0 && sp->count[first] == total;
    size_t j = 0; /* levels[0..j) are below v */
    for (uint32_t k = 0; mask != NULL && k < 1024; k++) {
        uint64_t w = sp->want[k];
        sp->want[k] = 0;
        while (w != 0 && n > 0) {
            const uint32_t v = k * 64 + (uint32_t)__builtin_ctzll(w);
            w &= w - 1;
            while (j < n && sp->levels[j] < v) {
                j++;
            }
            if (j < n && sp->levels[j] == v) {
                continue; /* counted too: its entry is made */
            }
            sp->lut[v] = one ? (uint16_t)v : j == 0 ? 0 : sp->lut[sp->levels[j - 1]];
        }
    }
    for (size_t k = 0; k < n; k++) {
        sp->count[sp->levels[k]] = 0;
    }
    if (n == 0) {
        return 0;
    }
    for (uint32_t y = 0; y < src->height; y++) {
        const uint16_t *sr = row_of(src, y);
        uint16_t *dr = (uint16_t *)((uint8_t *)dst->data + (size_t)y * dst->pitch);
        for (uint32_t x = 0; x < src->width; x++) {
            dr[x] = sp->lut[sr[x]];
        }
    }
    return 1;
}

