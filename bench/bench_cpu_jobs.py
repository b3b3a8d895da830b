#!/usr/bin/env python3
"""The CPU backend's histogram loops through the Python package, on NumPy
arrays of 24 MB each: one-channel 8-bit images (the table-free loop), masks,
fewer bins, interleaved channels, 16-bit into bins, floats.

Usage: IMGHIST_NATIVE=build/python/_imghist*.so bench_cpu_jobs.py LABEL
(an A/B of two builds is two runs of this script, alternating). Prints one
line a group: ms, median of --runs calls after one warm-up, on every core
the library's default uses.
"""
import argparse
import statistics
import time

import numpy as np

import imghist


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("label")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)

    def t(f):
        f()
        ts = []
        for _ in range(args.runs):
            a = time.perf_counter()
            f()
            ts.append(time.perf_counter() - a)
        return statistics.median(ts) * 1e3

    g = rng.integers(0, 256, (4000, 6000), dtype=np.uint8)
    c = rng.integers(0, 256, (4000, 2000, 3), dtype=np.uint8)
    c4 = rng.integers(0, 256, (3000, 2000, 4), dtype=np.uint8)
    m = (rng.random((4000, 6000)) < 0.7).astype(np.uint8)
    m2 = (rng.random((4000, 2000)) < 0.7).astype(np.uint8)
    b = rng.integers(0, 256, (500, 128, 128, 3), dtype=np.uint8)
    u = rng.integers(0, 4096, (3000, 4000), dtype=np.uint16)
    u3 = rng.integers(0, 65536, (1000, 4000, 3), dtype=np.uint16)
    mu = (rng.random((3000, 4000)) < 0.7).astype(np.uint8)
    f = rng.random((3000, 2000), dtype=np.float32)
    h = imghist.histogram
    groups = [
        [("gray 4000x6000", lambda: h(g, backend="cpu")),
         ("gray 4000x6000 masked (70 %)", lambda: h(g, mask=m, backend="cpu")),
         ("gray 4000x6000 into 32 bins", lambda: h(g, 32, backend="cpu")),
         ("RGB 4000x2000", lambda: h(c, channels=True, backend="cpu")),
         ("RGB 4000x2000 masked (70 %)", lambda: h(c, mask=m2, channels=True, backend="cpu")),
         ("RGBA 3000x2000", lambda: h(c4, channels=True, backend="cpu")),
         ("RGB batch 500 x 128x128", lambda: h(b, channels=True, backend="cpu"))],
        [("u16 natural", lambda: h(u, backend="cpu")),
         ("u16 4096 bins", lambda: h(u, 4096, (0, 4096), backend="cpu")),
         ("u16 natural masked", lambda: h(u, mask=mu, backend="cpu")),
         ("u16 RGB natural", lambda: h(u3, channels=True, backend="cpu")),
         ("f32 256 bins", lambda: h(f, 256, (0, 1), backend="cpu"))],
    ]
    for rows in groups:
        print(args.label, " | ".join(f"{n}: {t(fn):.2f}" for n, fn in rows), flush=True)


if __name__ == "__main__":
    main()
