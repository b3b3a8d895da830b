/*
 * How imghist's kernels walk an 8-bit image: as 16-byte "granules".
 *
 * Every row is cut at 16-byte address boundaries. Granule c of row r starts at
 * (row_r & ~15) + 16*c; the kernels load a granule that lies wholly inside the
 * row with one 16-byte load, and the (at most two) granules a row shares with
 * its neighbours or with padding byte by byte. So any base pointer and any
 * pitch work, only valid bytes are ever read, and an aligned image with a
 * pitch that is a multiple of 16 is read with 16-byte loads only.
 *
 * Granules are numbered row-major, i = r * per_row + c, so that the work is one
 * flat range: a block's tile is a run of consecutive granules, which spans
 * several rows of a narrow image or part of one row of a wide one, and
 * consecutive threads always read consecutive 16-byte words (coalesced).
 */
#ifndef IMGHIST_GRANULES_CUH
#define IMGHIST_GRANULES_CUH

#include <stddef.h>
#include <stdint.h>

/* Unsigned division by a run-time constant with a multiply and a shift,
 * exact for numerators below 2^31. */
struct ih_fastdiv {
    uint32_t d, mul, shift;
};

static inline ih_fastdiv ih_make_fastdiv(uint32_t d)
{
    ih_fastdiv f;
    f.d = d;
    uint32_t s = 0;
    while ((UINT64_C(1) << s) < d) {
        s++;
    }
    f.shift = s;
    f.mul = (uint32_t)(((UINT64_C(1) << 32) * ((UINT64_C(1) << s) - d)) / d + 1);
    return f;
}

__device__ __forceinline__ uint32_t ih_div(const ih_fastdiv &f, uint32_t n)
{
    return (__umulhi(n, f.mul) + n) >> f.shift;
}

/* One image (or a band of its rows) as a range of granules. */
struct ih_geom {
    const uint8_t *base; /* first byte of the first row */
    size_t pitch;
    uint32_t width;
    uint32_t total;      /* rows * per_row, below 2^31 */
    ih_fastdiv per_row;  /* granules per row */
};

/* The largest granule count one launch handles (ih_div's range). */
#define IH_MAX_GRANULES (UINT32_C(1) << 31)

static inline uint32_t ih_granules_per_row(const uint8_t *base, size_t pitch, uint32_t width,
                                           uint32_t rows)
{
    if (rows == 1 || pitch % 16 == 0) {
        /* Every row starts at the same offset within its 16-byte word. */
        uint32_t off = (uint32_t)((uintptr_t)base & 15);
        return (uint32_t)(((uint64_t)off + width + 15) / 16);
    }
    return (uint32_t)(((uint64_t)width + 15) / 16 + 1);
}

/* g as `rows` rows of `width` bytes from base, `pitch` apart (fields only:
 * the caller owns the padding bytes). Below IH_MAX_GRANULES granules. */
static inline void ih_set_geom(ih_geom *g, const uint8_t *base, size_t pitch, uint32_t width,
                               uint32_t rows)
{
    const uint32_t per_row = ih_granules_per_row(base, pitch, width, rows);
    g->base = base;
    g->pitch = pitch;
    g->width = width;
    g->total = rows * per_row;
    g->per_row = ih_make_fastdiv(per_row);
}

/* Image i of a uniform batch: image 0's geometry g, `stride` bytes apart (a
 * multiple of 16, so that every image has the same granules). */
__device__ __forceinline__ ih_geom ih_geom_at(ih_geom g, long long stride, uint32_t i)
{
    g.base += (long long)i * stride;
    return g;
}

/* Where granule i lies: its row (index and first byte) and its first byte. */
__device__ __forceinline__ void ih_locate(const ih_geom &g, uint32_t i, uint32_t &r,
                                          const uint8_t *&row, const uint8_t *&gran)
{
    r = ih_div(g.per_row, i);
    const uint32_t c = i - r * g.per_row.d;
    row = g.base + (size_t)r * g.pitch;
    gran = (const uint8_t *)(((uintptr_t)row & ~(uintptr_t)15) + (uintptr_t)c * 16);
}

/* Granule i of g as a thread meets it: its row (index r, first byte row,
 * end one past its last byte), the granule's first byte gp, and whether all
 * its 16 bytes lie in the row; otherwise it shares only [lo(), hi()) with
 * the row (the rest is padding or a neighbour row's). */
struct ih_granule {
    uint32_t r;
    const uint8_t *row, *gp, *end;
    bool full;

    __device__ __forceinline__ const uint8_t *lo() const { return gp < row ? row : gp; }
    __device__ __forceinline__ const uint8_t *hi() const { return gp + 16 < end ? gp + 16 : end; }
};

__device__ __forceinline__ ih_granule ih_granule_at(const ih_geom &g, uint32_t i)
{
    ih_granule q;
    ih_locate(g, i, q.r, q.row, q.gp);
    q.end = q.row + g.width;
    q.full = q.gp >= q.row && q.gp + 16 <= q.end;
    return q;
}

/* A granule that is one sample of SIZE bytes repeated, bit for bit. */
template <int SIZE> __device__ __forceinline__ bool ih_repeats(const uint4 &v)
{
    const bool words = v.x == v.y && v.x == v.z && v.x == v.w;
    if constexpr (SIZE == 1) {
        return words && v.x == (v.x & 0xffu) * 0x01010101u;
    } else if constexpr (SIZE == 2) {
        return words && (v.x >> 16) == (v.x & 0xffffu);
    } else {
        return words;
    }
}

#endif
