#!/usr/bin/env python3
"""OpenCV's back-projection of the image imghist_bench_backproject wrote
(OpenCV's tutorial: the H-S model, 30 x 32 bins over [0, 180) x [0, 256)),
on cv2.setNumThreads(THREADS) threads: cv2.calcBackProject of the HSV
image, and cv2.cvtColor(BGR2HSV) + cv2.calcBackProject of the BGR one;
median of REPS after a warm-up. Checks cv2's output against the GPU's and
prints the GPU's speed-ups: of HSV against the GPU's back-projection of
HSV; with the conversion against the GPU's cvt_color + backproject (two
calls) and its fused call.

usage: bench_backproject_cv2.py DIR GPU_HSV_MS GPU_TWO_MS GPU_FUSED_MS [THREADS]
"""
import sys
import time

import cv2
import numpy as np

H, W, REPS = 4000, 6000, 15


def median_ms(f):
    f()
    ts = []
    for _ in range(REPS):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1e3


def main():
    d = sys.argv[1]
    gpu_hsv, gpu_two, gpu_fused = (float(a) for a in sys.argv[2:5])
    threads = int(sys.argv[5]) if len(sys.argv) > 5 else 16
    bgr = np.fromfile(f"{d}/bgr.raw", np.uint8).reshape(H, W, 3)
    hsv = np.fromfile(f"{d}/hsv.raw", np.uint8).reshape(H, W, 3)
    model = np.fromfile(f"{d}/model.raw", np.float32).reshape(30, 32)
    gpu = np.fromfile(f"{d}/backproject.raw", np.uint8).reshape(H, W)
    cv2.setNumThreads(threads)
    rng = [0, 180, 0, 256]

    def bp():
        return cv2.calcBackProject([hsv], [0, 1], model, rng, 1)

    def conv_bp():
        return cv2.calcBackProject([cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)], [0, 1], model, rng, 1)

    same = np.array_equal(bp(), gpu) and np.array_equal(conv_bp(), gpu)
    same_hsv = np.array_equal(cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV), hsv)
    t_bp, t_conv = median_ms(bp), median_ms(conv_bp)
    print(f"OpenCV {cv2.__version__}, cv2.setNumThreads({threads}) "
          f"(getNumThreads {cv2.getNumThreads()}), {W}x{H}, median of {REPS}:")
    print(f"  cv2.calcBackProject of HSV          {t_bp:8.2f} ms; imghist GPU "
          f"{t_bp / gpu_hsv:6.1f}x faster")
    print(f"  cv2.cvtColor + cv2.calcBackProject  {t_conv:8.2f} ms; imghist GPU "
          f"{t_conv / gpu_two:6.1f}x faster (cvt_color + backproject), "
          f"{t_conv / gpu_fused:6.1f}x (fused)")
    print(f"  cv2's HSV {'equals' if same_hsv else 'DIFFERS FROM'} imghist's; "
          f"cv2's back-projection {'equals' if same else 'DIFFERS FROM'} the GPU's")
    return 0 if same and same_hsv else 1


if __name__ == "__main__":
    sys.exit(main())
