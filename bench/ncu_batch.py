#!/usr/bin/env python3
"""The 8-bit batch kernel on a few data patterns, for ncu.

2000 CuPy images of 640x480 (a batch of many small images), each pattern counted three
times through imghist.histogram (one library call for the batch each):

    ncu --clock-control none -k regex:hist_u8_batch --section ... \\
        python3 bench/ncu_batch.py

Patterns: uniform, normal (N(128, 20^2) rounded, as the bench's), normal40
(mean 120, sd 40), constant (127), runs64 (runs of 64 equal bytes). Needs CuPy and the package on PYTHONPATH
(IMGHIST_NATIVE naming the CUDA build's binding). With --time it prints
each pattern's median call time between CUDA events instead (after an L2
flush, and back to back), for comparison with the bench's rows.
"""
import sys

import cupy as cp

import imghist

N, H, W = 2000, 480, 640


def pattern(name, rng):
    if name == "uniform":
        return rng.integers(0, 256, (N, H, W), dtype=cp.uint8)
    if name in ("normal", "normal40"):  # the bench's normal: N(128, 20^2), rounded
        mean, sd = (128, 20) if name == "normal" else (120, 40)
        return cp.clip(cp.rint(cp.random.normal(mean, sd, (N, H, W), dtype=cp.float32)), 0,
                       255).astype(cp.uint8)
    if name == "constant":
        return cp.full((N, H, W), 127, cp.uint8)
    if name == "runs64":
        v = rng.integers(0, 256, (N * H * W) // 64, dtype=cp.uint8)
        return cp.repeat(v, 64).reshape(N, H, W)
    raise ValueError(name)


def timed(x, flush, runs=15):
    """Median of `runs` calls, each between two events, after reading `flush`
    (larger than L2) when it is given."""
    ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
    t = []
    for _ in range(runs):
        if flush is not None:
            flush.sum()
        ev0.record()
        imghist.histogram(x)
        ev1.record()
        ev1.synchronize()
        t.append(cp.cuda.get_elapsed_time(ev0, ev1) * 1000)
    return sorted(t)[runs // 2]


def main():
    rng = cp.random.default_rng(13)
    cp.random.seed(13)
    timing = "--time" in sys.argv
    flush = cp.ones(64 << 20, cp.uint32) if timing else None  # 256 MiB
    for name in ("uniform", "normal", "normal40", "constant", "runs64"):
        x = pattern(name, rng)
        want = cp.bincount(x[:4].reshape(4, -1)[0], minlength=256)
        for _ in range(3):
            h = imghist.histogram(x)
        cp.cuda.Device().synchronize()
        assert (h[0] == want).all(), name
        if timing:
            print(f"{name:9s} {timed(x, flush):7.1f} us after an L2 flush, "
                  f"{timed(x, None):7.1f} us back to back")
        else:
            print(name, "ok")
        del x


if __name__ == "__main__":
    main()
