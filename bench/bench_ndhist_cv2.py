#!/usr/bin/env python3
"""OpenCV's H-S histograms of the images imghist_bench_ndhist wrote:
cv2.cvtColor(BGR2HSV) + cv2.calcHist([hsv], [0, 1], None, [30, 32],
[0, 180, 0, 256]) per image, timed (a) one image after another with
OpenCV's own threads, (b) on a pool of as many Python threads as cores
with OpenCV's threads off (cv2 releases the GIL); checks every histogram
against the GPU's and prints the speed-up over the GPU's time.

usage: bench_ndhist_cv2.py IMAGES.raw COUNTS.raw GPU_MS
"""
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

N, H, W = 256, 480, 640


def hs(img):
    hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    return cv2.calcHist([hsv], [0, 1], None, [30, 32], [0, 180, 0, 256])


def best_of(f, reps=3):
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return min(ts) * 1e3, sorted(ts)[len(ts) // 2] * 1e3, out


def main():
    imgs = np.fromfile(sys.argv[1], np.uint8).reshape(N, H, W, 3)
    gpu = np.fromfile(sys.argv[2], np.uint64).reshape(N, 30, 32)
    gpu_ms = float(sys.argv[3])
    cores = os.cpu_count()
    print(f"OpenCV {cv2.__version__}, {cores} cores, {N} BGR images of {W}x{H}")
    serial = best_of(lambda: [hs(i) for i in imgs])
    cv2.setNumThreads(1)
    with ThreadPoolExecutor(cores) as pool:
        pooled = best_of(lambda: list(pool.map(hs, imgs)))
    same = all(np.array_equal(h.astype(np.uint64), g) for h, g in zip(pooled[2], gpu))
    for name, (best, med, _) in (("one by one, OpenCV's threads", serial),
                                 (f"{cores} Python threads, cv2.setNumThreads(1)", pooled)):
        print(f"  cv2 {name}: best {best:.1f} ms, median {med:.1f} ms; "
              f"imghist {best / gpu_ms:.1f}x faster than the best")
    print(f"  counts: cv2 {'equals' if same else 'DIFFERS FROM'} imghist's on every image")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
