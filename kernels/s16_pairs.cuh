/*
 * Two 16-bit counters in one 32-bit shared word, for blocks that count more
 * values than 32-bit counters fit (the wide 16-bit histograms, joint
 * histograms). Slot s is half s & 1 of word s >> 1; the 64-bit target the
 * block ends in takes what the halves cannot hold.
 */
#ifndef IMGHIST_S16_PAIRS_CUH
#define IMGHIST_S16_PAIRS_CUH

#include <stdint.h>

namespace {

/* What an add of n to the low (high == false) or high half of a word that
 * held `old` lost: a carry out of the word (65536 of the high half) and a
 * wrap of the low half (65536 of it, which went into the high half as 1). */
struct S16Lost {
    bool carry, wrap;
};

__device__ __forceinline__ S16Lost s16_lost(uint32_t old, bool high, uint32_t n)
{
    const uint32_t delta = high ? n << 16 : n;
    return {old + delta < old, !high && (old & 0xffffu) + n > 0xffffu};
}

/*
 * The word is the running sum W = L + 65536 H (mod 2^32) of what was added
 * to its low half (L) and high half (H). The low 16 bits of W are L mod
 * 65536, so the thread whose add carries out of the low half knows it: L
 * gained 65536 that W does not show, and the carry went into the high half
 * (+1 there that H did not gain). The thread whose add carries out of the
 * word lost 2^32 = 65536 of H. Adding those into the 64-bit target makes
 * target + decoded halves exact, in any interleaving of the adds, with no
 * second atomic on the word.
 *
 * ih_s16_settle: after an atomic that added n (at most 65535) to slot's
 * half and saw `old`, the lost 65536s into t.target (t.len counters: a high
 * half past them is not a counter). t is the caller's own arguments, read
 * where used: the two as function arguments cost the wide kernels spills.
 */
template <class T>
__device__ __forceinline__ void ih_s16_settle(const T &t, uint32_t slot, uint32_t n, uint32_t old)
{
    const S16Lost l = s16_lost(old, (slot & 1u) != 0, n);
    const bool carry = l.carry, wrap = l.wrap;
    if (carry || wrap) {
        const uint32_t base = slot & ~1u;
        if (wrap) {
            atomicAdd(t.target + base, 65536ull);
            if (base + 1 < t.len) {
                atomicAdd(t.target + base + 1, ~0ull); /* -1 */
            }
        }
        if (carry && base + 1 < t.len) {
            atomicAdd(t.target + base + 1, 65536ull);
        }
    }
}

} // namespace

#endif
