#!/usr/bin/env python3
"""NumPy batches through imghist.equalize on the CPU backend: one call on the
batch against a call per image (uint16 and masked batches), median of 7,
checked equal. IMGHIST_NATIVE picks the binding
(and so the library) to load (IMGHIST_LIBRARY for a 0.3 package)."""
import time, numpy as np, imghist, os
rng = np.random.default_rng(1)
def med(f, n=7):
    ts=[]
    for _ in range(n):
        t=time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return sorted(ts)[n//2]*1e3
print("cores:", os.cpu_count(), "imghist", imghist.__version__)
for shape in [(512,64,64),(64,512,512)]:
    for dt in (np.uint16, np.uint8):
        x = (rng.integers(0, 65536 if dt==np.uint16 else 256, shape, dtype=np.int64)**2 // (65536 if dt==np.uint16 else 256)).astype(dt)
        m = rng.random(shape) < 0.6
        for mm in (None, m):
            if dt == np.uint8 and mm is None: continue
            one = med(lambda: imghist.equalize(x, mask=mm))
            loop = med(lambda: [imghist.equalize(x[i], mask=None if mm is None else mm[i]) for i in range(shape[0])])
            a = imghist.equalize(x, mask=mm); b = np.stack([imghist.equalize(x[i], mask=None if mm is None else mm[i]) for i in range(shape[0])])
            print(f"{dt.__name__} {shape} mask={'60%' if mm is not None else '-'}: one call {one:.1f} ms, a call per image {loop:.1f} ms, same={np.array_equal(a,b)}")
