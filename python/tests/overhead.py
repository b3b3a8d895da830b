#!/usr/bin/env python3
"""The Python call's own cost on a GPU: microseconds per call of
imghist.histogram / equalize on a 1x1 device array (torch and CuPy where
present), the calls queued back to back, one synchronisation at the end.
Issue 12's target: <= 15 us per call. Not a pytest test; run on a GPU host:
    IMGHIST_LIBRARY=build/src/libimghist.so PYTHONPATH=python python3 python/tests/overhead.py
"""
import time

import imghist


def per_call(fn, sync, n=20000):
    for _ in range(200):
        fn()
    sync()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def main():
    if not imghist.cuda_available():
        print("no GPU: nothing to measure")
        return
    rows = []
    try:
        import torch
        x = torch.zeros((1, 1), dtype=torch.uint8, device="cuda")
        b = torch.zeros((64, 1, 1), dtype=torch.uint8, device="cuda")
        sync = torch.cuda.synchronize
        rows += [("torch", "histogram 1x1", per_call(lambda: imghist.histogram(x), sync)),
                 ("torch", "equalize 1x1", per_call(lambda: imghist.equalize(x), sync)),
                 ("torch", "histogram 64x1x1", per_call(lambda: imghist.histogram(b), sync)),
                 ("torch", "torch.empty(256) alone",
                  per_call(lambda: torch.empty(256, dtype=torch.int64, device="cuda"), sync))]
    except ImportError:
        pass
    try:
        import cupy
        y = cupy.zeros((1, 1), cupy.uint8)
        sync = cupy.cuda.get_current_stream().synchronize
        rows += [("cupy", "histogram 1x1", per_call(lambda: imghist.histogram(y), sync)),
                 ("cupy", "equalize 1x1", per_call(lambda: imghist.equalize(y), sync))]
    except ImportError:
        pass
    for lib, what, us in rows:
        print(f"{lib:6} {what:26} {us:7.2f} us/call")


if __name__ == "__main__":
    main()
