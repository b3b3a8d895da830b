#!/usr/bin/env python3
"""Natural histograms (one bin per value) with and without a 60 % mask on the
CPU backend through the Python package: a 4096 x 4096 16-bit and 8-bit
image, a batch of 64 16-bit 512 x 512 images and of 512 8-bit 64 x 64 ones,
median of 7, results into reused out= arrays. IMGHIST_NATIVE picks the
binding (IMGHIST_LIBRARY the library of a 0.3 package)."""
import time, numpy as np, imghist, os
rng=np.random.default_rng(0)
x=(rng.integers(0,65536,(4096,4096),dtype=np.int64)**2//65536).astype(np.uint16)
m=rng.random((4096,4096))<0.6
def t(f,n=7):
    f(); ts=[]
    for _ in range(n):
        t0=time.perf_counter(); f(); ts.append(time.perf_counter()-t0)
    return sorted(ts)[n//2]*1e3
out=np.empty(65536,np.int64); out8=np.empty(256,np.int64)
x8=(x>>8).astype(np.uint8)
b=x.reshape(64,512,512); mb=m.reshape(64,512,512); ob=np.empty((64,65536),np.int64)
b8=x8.ravel()[:512*64*64].reshape(512,64,64); mb8=m.ravel()[:512*64*64].reshape(512,64,64); ob8=np.empty((512,256),np.int64)
print(os.environ.get("IMGHIST_NATIVE") or os.environ.get("IMGHIST_LIBRARY"))
print("u16 4096^2: %.1f ms, masked %.1f ms" % (t(lambda: imghist.histogram(x,out=out)), t(lambda: imghist.histogram(x,mask=m,out=out))))
print("u8 4096^2: %.1f ms, masked %.1f ms" % (t(lambda: imghist.histogram(x8,out=out8)), t(lambda: imghist.histogram(x8,mask=m,out=out8))))
print("u16 (64,512,512): %.1f ms, masked %.1f ms" % (t(lambda: imghist.histogram(b,out=ob)), t(lambda: imghist.histogram(b,mask=mb,out=ob))))
print("u8 (512,64,64): %.2f ms, masked %.2f ms" % (t(lambda: imghist.histogram(b8,out=ob8)), t(lambda: imghist.histogram(b8,mask=mb8,out=ob8))))
