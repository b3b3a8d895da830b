/*
 * Wide histograms: 8-bit samples of 2-4 interleaved channels, one bin per
 * value, in the plain layout (every lane its own bank; u8_channels_kernel
 * and the lean walk's PLAIN form).
 */
#ifndef IMGHIST_WIDE_U8_CHANNELS_CUH
#define IMGHIST_WIDE_U8_CHANNELS_CUH

#include <stdint.h>

#include "hist_u8_block.cuh"
#include "wide_bin.cuh"

namespace {

/*
 * A granule of 8-bit samples of 2-4 interleaved channels, one bin per value,
 * in the plain layout: counter (channel c, value x) of lane L at
 * byte col + c * 32768 + x * 128, where col is the lane's counter of (0, 0),
 * so that every lane keeps to its own bank as in hist_u8's kernel. A byte
 * costs a PRMT, an address and the atomic (lean_granule's form, wide_lean.cuh: the
 * channel's wrap, its offset, the swizzle and the address, about twice the
 * integer work, which bounds 8-bit RGB below the read rate).
 * c0: the channel of the granule's first byte (in a flat run, granule gi
 * starts at sample 16 gi: channel 0 for two or four channels, gi mod 3 for
 * three); ROWS: any c0 (a granule anywhere in a row), else 0 for two or
 * four channels.
 */
__device__ __forceinline__ void red_shared(uint32_t addr)
{
    asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(addr) : "memory");
}

/* Adds n (0 or 1) to the counter at addr: a masked byte's atomic adds 0
 * rather than sit under an if, which ptxas makes a branch (predicated or
 * not), divergent on a mask's bits. */
__device__ __forceinline__ void red_shared_n(uint32_t addr, uint32_t n)
{
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(n) : "memory");
}

/* The pixel (from the granule's first) of byte j of a granule whose byte 0
 * is of channel c0, for ch channels (3, else 2 or 4). */
__device__ __forceinline__ uint32_t pixel_of(uint32_t c0, uint32_t j, uint32_t ch)
{
    return ch == 3 ? ((c0 + j) * 11u) >> 5 : (c0 + j) >> (ch >> 1); /* (c0 + j) / 3 below 32 */
}

/* The spread tables of channel_keep in shared memory: spread[p] repeats bit
 * k of p over bits ch k .. ch k + ch - 1; 64 entries for three channels
 * (six pixels a granule), then 32 for four (five). */
constexpr uint32_t SPREAD3 = 0, SPREAD4 = 64, SPREAD_WORDS = 96;

__device__ __forceinline__ void spread_tables(uint32_t *t)
{
    for (uint32_t i = threadIdx.x; i < SPREAD_WORDS; i += blockDim.x) {
        const uint32_t ch = i < SPREAD4 ? 3u : 4u, p = i < SPREAD4 ? i : i - SPREAD4;
        uint32_t w = 0;
        for (uint32_t k = 0; k * ch < 32; k++) {
            w |= ((p >> k) & 1u) ? ((1u << ch) - 1u) << (k * ch) : 0u;
        }
        t[i] = w;
    }
}

/* u8_channels_granule's keep from a granule's mask bits (channel_mask_bits):
 * bit j for byte j, the pixel (c0 + j) / ch's bit, each pixel's bit spread
 * over its ch bytes and shifted by the first byte's channel. Two channels by
 * bit interleaving, three and four through the tables (t). */
__device__ __forceinline__ uint32_t channel_keep(const uint32_t *t, uint32_t pix, uint32_t c0,
                                                 uint32_t ch)
{
    uint32_t w;
    if (ch == 2) {
        w = (pix | (pix << 8)) & 0x00ff00ffu;
        w = (w | (w << 4)) & 0x0f0f0f0fu;
        w = (w | (w << 2)) & 0x33333333u;
        w = (w | (w << 1)) & 0x55555555u;
        w |= w << 1;
    } else {
        w = ch == 3 ? t[SPREAD3 + (pix & 63u)] : t[SPREAD4 + (pix & 31u)];
    }
    return w >> c0;
}

/* MASKED: bit k of pix says whether the granule's k-th pixel has a non-zero
 * mask byte (channel_mask_bits; spread: channel_keep's tables), and a byte
 * of a pixel outside the mask adds 0 to its counter. */
template <bool ROWS, bool MASKED = false>
__device__ __forceinline__ void u8_channels_granule(const uint32_t (&col4)[4], const Args &a,
                                                    const uint4 &v, uint32_t c0,
                                                    uint32_t pix = 0,
                                                    const uint32_t *spread = nullptr)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
    const uint32_t col = col4[0];
    if (a.channels == 3) {
        const uint32_t c1 = c0 == 2u ? 0u : c0 + 1u;
        const uint32_t c2 = c0 == 0u ? 2u : c0 - 1u;
        const uint32_t base[3] = {col + (c0 << 15), col + (c1 << 15), col + (c2 << 15)};
        /* bit j: byte j's pixel is in the mask */
        const uint32_t keep = MASKED ? channel_keep(spread, pix, c0, 3u) : 0u;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t addr = base[j % 3] + (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7);
            if constexpr (MASKED) {
                red_shared_n(addr, (keep >> j) & 1u);
            } else {
                red_shared(addr);
            }
        }
    } else {
        /* byte j of channel (c0 + j) mod 2 or 4: base[j & 3] */
        uint32_t base[4] = {col4[0], col4[1], col4[2], col4[3]};
        if constexpr (ROWS) {
            const uint32_t m = a.channels - 1u;
#pragma unroll
            for (uint32_t k = 0; k < 4; k++) {
                base[k] = col + (((c0 + k) & m) << 15);
            }
        }
        if constexpr (MASKED) {
            if (c0 == 0u) {
                /* the granule starts a pixel: byte j is of pixel j / ch, and
                 * its add is that pixel's bit (one extraction a pixel) */
                if (a.channels == 4) {
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        red_shared_n(base[j & 3] +
                                         (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7),
                                     (pix >> (j >> 2)) & 1u);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < 16; j++) {
                        red_shared_n(base[j & 3] +
                                         (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7),
                                     (pix >> (j >> 1)) & 1u);
                    }
                }
                return;
            }
        }
        /* bit j: byte j's pixel is in the mask */
        const uint32_t keep = MASKED ? channel_keep(spread, pix, c0, a.channels) : 0u;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t addr = base[j & 3] + (__byte_perm(w[j >> 2], 0, 0x4440 + (j & 3)) << 7);
            if constexpr (MASKED) {
                red_shared_n(addr, (keep >> j) & 1u);
            } else {
                red_shared(addr);
            }
        }
    }
}

/* Bit k of the result: byte k of w is not 0 (k < 4). */
__device__ __forceinline__ uint32_t nonzero_bytes(uint32_t w)
{
    const uint32_t h = (((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u;
    return (h * 0x00204081u) >> 28; /* bits 7, 15, 23, 31 to 28..31 */
}

/* Bit k: m[k] is not 0, for n (at most 9) mask bytes from m, byte p of a run
 * of px mask bytes: inside the run, the two aligned 8-byte words that hold
 * them (at most 7 + 9 bytes from the first's start); at the run's ends
 * (the words would reach bytes outside it: other rows' padding, or past the
 * view's end) byte by byte. */
__device__ __forceinline__ uint32_t mask_bits_at(const uint8_t *m, uint32_t p, uint32_t n,
                                                 uint32_t px)
{
    const uint32_t off = (uint32_t)(uintptr_t)m & 7u;
    if (p >= off && p - off + 16u <= px) {
        const uint2 *w = reinterpret_cast<const uint2 *>(m - off);
        const uint2 lo = __ldg(w), hi = __ldg(w + 1);
        const uint32_t z = nonzero_bytes(lo.x) | (nonzero_bytes(lo.y) << 4) |
                           (nonzero_bytes(hi.x) << 8) | (nonzero_bytes(hi.y) << 12);
        return (z >> off) & ((1u << n) - 1u);
    }
    uint32_t pix = 0;
#pragma unroll
    for (uint32_t k = 0; k < 9; k++) {
        if (k < n && __ldg(m + k) != 0) {
            pix |= 1u << k;
        }
    }
    return pix;
}

/* The mask bits of the granule at byte x of row r, whose byte 0 is of
 * channel c0 (bit k: its k-th pixel's mask byte is not 0): the granule
 * touches pixels (x - c0) / ch to that + (c0 + 15) / ch, at most 9, each a
 * byte of the mask row (px: the row's pixels). */
__device__ __forceinline__ uint32_t channel_mask_bits(const Args &a, uint32_t r, uint32_t x,
                                                     uint32_t c0, uint32_t ch, uint32_t px)
{
    /* (x - c0) is a multiple of ch: for 3, exact division by the inverse */
    const uint32_t p = ch == 3 ? (x - c0) * 0xaaaaaaabu : x >> (ch >> 1);
    const uint8_t *row = a.mask + (size_t)r * a.mask_pitch;
    return mask_bits_at(row + p, p, pixel_of(c0, 15u, ch) + 1u, px);
}

/* u8_channels_granule's bases: col4[k] the lane's counter of (channel of
 * byte k of a granule of a flat run, 0) for two or four channels, col4[0]
 * its counter of (0, 0) always. */
__device__ __forceinline__ void u8_channel_bases(uint32_t col, const Args &a, uint32_t (&col4)[4])
{
    const uint32_t m = a.channels == 3 ? 0u : a.channels - 1u;
#pragma unroll
    for (uint32_t k = 0; k < 4; k++) {
        col4[k] = col + ((k & m) << 15);
    }
}

} // namespace

#endif
