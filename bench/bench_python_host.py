#!/usr/bin/env python3
"""The host time of one imghist Python call on a GPU array: the median of
10,000 calls of imghist.histogram / equalize on a 1x1 device array (torch
and CuPy), each call timed on its own by the host clock, the GPU synchronised
every 100 calls (outside the timing) so that a full launch queue never
stalls the host; torch.bincount, torch.empty and CuPy's empty beside them.

    PYTHONPATH=<package parent> python3 bench/bench_python_host.py [--label L] [--calls N]

Prints a Markdown table (microseconds). Runs with any imghist version: out=
rows need one whose histogram takes out=.
"""
import argparse
import statistics
import time

import imghist


def host_us(fn, sync, calls):
    for _ in range(300):
        fn()
    sync()
    t = []
    clock = time.perf_counter_ns
    while len(t) < calls:
        for _ in range(100):
            t0 = clock()
            fn()
            t.append(clock() - t0)
        sync()
    return statistics.median(t) / 1e3, statistics.quantiles(t, n=10)[8] / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default=getattr(imghist, "__version__", "?"))
    ap.add_argument("--calls", type=int, default=10000)
    a = ap.parse_args()
    rows = []
    try:
        import torch
        x = torch.zeros((1, 1), dtype=torch.uint8, device="cuda")
        out = torch.empty(256, dtype=torch.int64, device="cuda")
        s = torch.cuda.synchronize
        rows += [("torch", "imghist.histogram(x)", lambda: imghist.histogram(x), s),
                 ("torch", "imghist.histogram(x, out=out)",
                  lambda: imghist.histogram(x, out=out), s),
                 ("torch", "imghist.equalize(x)", lambda: imghist.equalize(x), s),
                 ("torch", "torch.bincount(x.view(-1), minlength=256)",
                  lambda: torch.bincount(x.view(-1), minlength=256), s),
                 ("torch", "torch.empty(256, int64, cuda)",
                  lambda: torch.empty(256, dtype=torch.int64, device="cuda"), s)]
    except ImportError:
        pass
    try:
        import cupy
        y = cupy.zeros((1, 1), cupy.uint8)
        yo = cupy.empty(256, cupy.int64)
        s = cupy.cuda.get_current_stream().synchronize
        rows += [("cupy", "imghist.histogram(y)", lambda: imghist.histogram(y), s),
                 ("cupy", "imghist.histogram(y, out=out)", lambda: imghist.histogram(y, out=yo), s),
                 ("cupy", "imghist.equalize(y)", lambda: imghist.equalize(y), s),
                 ("cupy", "cupy.empty(256, int64)", lambda: cupy.empty(256, cupy.int64), s)]
    except ImportError:
        pass
    print(f"\n### host time per call, {a.label}, median of {a.calls} (us)\n")
    print("| array | call | median | 90th percentile |\n|---|---|---|---|")
    for lib, what, fn, sync in rows:
        try:
            med, p90 = host_us(fn, sync, a.calls)
            print(f"| {lib} | `{what}` | {med:.2f} | {p90:.2f} |")
        except Exception as e:  # an older package without out=, say
            print(f"| {lib} | `{what}` | error: {type(e).__name__}: {str(e)[:60]} | |")


if __name__ == "__main__":
    main()
