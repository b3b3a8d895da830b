#!/usr/bin/env python3
"""CLAHE benchmark: imghist.clahe against OpenCV's CPU CLAHE, kornia
enhance.equalize_clahe and cuCIM exposure.equalize_adapthist, in one run.

Workloads:
  24mp     one 6000x4000 8-bit photograph (astronaut.png resized), device
           data for the GPU implementations, 8x8 tiles, clip 40;
  batch    256 images of 640x480 (crops of that photograph), one call each
           where the implementation takes a batch (imghist, kornia), a loop
           otherwise (OpenCV, cuCIM);
  cpu2     the 24 MP image on the CPU with 2 threads: imghist's CPU backend
           against OpenCV, both pinned to the same 2 cores.
GPU calls are timed with CUDA events after warm-up, the L2 cache flushed
(a 512 MiB write) before each call, median of --runs; CPU calls with
perf_counter, median. imghist's results are checked against OpenCV's first
(bit for bit); kornia and cuCIM compute CLAHE differently (float, their own
clipping and interpolation), so only their times are compared.

usage: bench_clahe.py [--runs N] [--samples DIR]   (prints a Markdown table)
"""
import argparse
import os
import statistics
import sys
import time


def median_gpu(torch, fn, runs, flush):
    times = []
    for i in range(runs + 2):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        if i >= 2:
            times.append(s.elapsed_time(e))
    return statistics.median(times)


def median_cpu(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--samples", default=os.path.join(os.path.dirname(__file__), "..", "samples"))
    args = ap.parse_args()
    import cv2
    import numpy as np
    import torch
    import imghist
    rows = []

    def row(work, impl, ms, note=""):
        rows.append((work, impl, ms, note))
        print(f"  {work:6s} {impl:40s} {ms:10.3f} ms {note}", file=sys.stderr, flush=True)

    photo = cv2.cvtColor(cv2.imread(os.path.join(args.samples, "astronaut.png")),
                         cv2.COLOR_BGR2GRAY)
    big = cv2.resize(photo, (6000, 4000), interpolation=cv2.INTER_CUBIC)
    dev = torch.device("cuda")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device=dev)
    want = cv2.createCLAHE(40.0, (8, 8)).apply(big)
    ncpu = len(os.sched_getaffinity(0))
    print(f"GPU {torch.cuda.get_device_name()}, host {ncpu} CPUs, OpenCV {cv2.__version__}, "
          f"imghist {imghist.__version__}, torch {torch.__version__}", file=sys.stderr)

    # ---- 24 MP ----
    cv2.setNumThreads(ncpu)
    clahe = cv2.createCLAHE(40.0, (8, 8))
    t_cv = median_cpu(lambda: clahe.apply(big), max(5, args.runs // 3))
    row("24mp", f"OpenCV createCLAHE, CPU, {ncpu} threads", t_cv)
    x = torch.from_numpy(big).to(dev)
    out = torch.empty_like(x)
    got = imghist.clahe(x).cpu().numpy()
    ok = np.array_equal(got, want)
    t_ih = median_gpu(torch, lambda: imghist.clahe(x, out=out), args.runs, flush)
    row("24mp", "imghist.clahe, torch device tensor", t_ih,
        "identical to OpenCV" if ok else "DIFFERS FROM OpenCV")
    try:
        import kornia
        xf = (x.float() / 255.0)[None, None]
        t = median_gpu(torch, lambda: kornia.enhance.equalize_clahe(xf, 40.0, (8, 8)), args.runs,
                       flush)
        row("24mp", f"kornia {kornia.__version__} equalize_clahe (float)", t)
    except Exception as e:  # noqa: BLE001
        row("24mp", "kornia equalize_clahe", float("nan"), f"not run: {str(e)[:60]}")
    try:
        import cupy
        from cucim.skimage.exposure import equalize_adapthist
        xc = cupy.asarray(big)
        t = median_gpu(torch, lambda: equalize_adapthist(xc, kernel_size=(500, 750),
                                                          clip_limit=0.01), args.runs, flush)
        row("24mp", "cuCIM equalize_adapthist", t)
    except Exception as e:  # noqa: BLE001
        row("24mp", "cuCIM equalize_adapthist", float("nan"), f"not run: {str(e)[:60]}")

    # ---- batch of 256 x 640x480 ----
    rng = np.random.default_rng(7)
    crops = np.stack([big[y:y + 480, x0:x0 + 640] for y, x0 in
                      zip(rng.integers(0, 4000 - 480, 256), rng.integers(0, 6000 - 640, 256))])
    t = median_cpu(lambda: [clahe.apply(c) for c in crops], 3)
    row("batch", f"OpenCV createCLAHE loop, CPU, {ncpu} threads", t)
    xb = torch.from_numpy(crops).to(dev)
    ob = torch.empty_like(xb)
    gotb = imghist.clahe(xb).cpu().numpy()
    okb = all(np.array_equal(gotb[i], clahe.apply(crops[i])) for i in range(0, 256, 17))
    t = median_gpu(torch, lambda: imghist.clahe(xb, out=ob), args.runs, flush)
    row("batch", "imghist.clahe, one call on (256, 480, 640)", t,
        "identical to OpenCV (every 17th checked)" if okb else "DIFFERS FROM OpenCV")
    try:
        import kornia
        xbf = (xb.float() / 255.0)[:, None]
        t = median_gpu(torch, lambda: kornia.enhance.equalize_clahe(xbf, 40.0, (8, 8)),
                       max(3, args.runs // 3), flush)
        row("batch", "kornia equalize_clahe, one call (float)", t)
    except Exception as e:  # noqa: BLE001
        row("batch", "kornia equalize_clahe", float("nan"), f"not run: {str(e)[:60]}")
    try:
        import cupy
        from cucim.skimage.exposure import equalize_adapthist
        xcs = [cupy.asarray(c) for c in crops]
        t = median_gpu(torch, lambda: [equalize_adapthist(c, kernel_size=(60, 80), clip_limit=0.01)
                                       for c in xcs], 3, flush)
        row("batch", "cuCIM equalize_adapthist loop", t)
    except Exception as e:  # noqa: BLE001
        row("batch", "cuCIM equalize_adapthist", float("nan"), f"not run: {str(e)[:60]}")

    # ---- CPU, 2 threads ----
    cpus = sorted(os.sched_getaffinity(0))[:2]
    os.sched_setaffinity(0, set(cpus))
    cv2.setNumThreads(2)
    t_cv2 = median_cpu(lambda: clahe.apply(big), 5)
    row("cpu2", "OpenCV createCLAHE, 2 threads", t_cv2)
    ocpu = np.empty_like(big)
    got_cpu = imghist.clahe(big)
    t_ih2 = median_cpu(lambda: imghist.clahe(big, out=ocpu), 5)
    row("cpu2", "imghist.clahe, NumPy, CPU backend, 2 threads", t_ih2,
        "identical to OpenCV" if np.array_equal(got_cpu, want) else "DIFFERS FROM OpenCV")

    print("| workload | implementation | ms (median) | note |")
    print("|---|---|---|---|")
    for w, impl, ms, note in rows:
        print(f"| {w} | {impl} | {ms:.3f} | {note} |")
    print()
    print(f"- 24 MP: OpenCV CPU ({ncpu} threads) / imghist GPU = {t_cv / t_ih:.1f}x "
          f"(target >= 20x)")
    print(f"- CPU, 2 threads: imghist / OpenCV = {t_ih2 / t_cv2:.3f} (target <= 1)")
    return 0 if ok and okb else 1


if __name__ == "__main__":
    sys.exit(main())
