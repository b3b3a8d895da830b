#!/usr/bin/env python3
"""Masked float32 histograms on the CPU backend (NumPy arrays): a 4096 x 4096
image with a random 60 % mask, the same unmasked, and a masked batch of 64
512 x 512 images, into 256 and 10000 bins over [0, 1); median of 7 calls
(ms). Checks the masked counts against NumPy's on the masked samples as
float64 (NumPy's float32 path computes its bins in float32 and misses some
edges). IMGHIST_NATIVE picks the binding
(and so the library) to load (IMGHIST_LIBRARY for a 0.3 package)."""
import time, statistics, numpy as np, imghist
rng = np.random.default_rng(1)
x = rng.random((4096, 4096), dtype=np.float32)
m = (rng.random((4096, 4096)) < 0.6).astype(np.uint8)
xs = (rng.random((64, 512, 512), dtype=np.float32))
ms = (rng.random((64, 512, 512)) < 0.6).astype(np.uint8)
def t(f, n=7):
    f(); ts=[]
    for _ in range(n):
        a=time.perf_counter(); f(); ts.append(time.perf_counter()-a)
    return statistics.median(ts)*1e3
for bins in (256, 10000):
    print(f"bins {bins}: 4096^2 masked {t(lambda: imghist.histogram(x, bins=bins, range=(0,1), mask=m)):.2f} ms, "
          f"unmasked {t(lambda: imghist.histogram(x, bins=bins, range=(0,1))):.2f} ms, "
          f"batch 64x512^2 masked {t(lambda: imghist.histogram(xs, bins=bins, range=(0,1), mask=ms)):.2f} ms")
h1 = imghist.histogram(x, bins=1000, range=(0,1), mask=m)
ref = np.histogram(x[m != 0].astype(np.float64), bins=1000, range=(0,1))[0]
print("matches numpy (float64):", bool((h1 == ref).all()))
