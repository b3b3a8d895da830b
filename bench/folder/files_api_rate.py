#!/usr/bin/env python3
"""imghist.histogram_files over a folder of JPEGs with each decode choice
(the library's IMGHIST_P_DECODE) on one GPU context: images/s of the best of
REPS passes after a warm-up pass, files read from the page cache, and
whether every choice gave the same counts.

usage: files_api_rate.py DIR [GRAY] [THREADS] [REPS]
"""
import sys
import time

import numpy as np

import imghist


def main():
    folder = sys.argv[1]
    gray = sys.argv[2] if len(sys.argv) > 2 else "luma"
    threads = int(sys.argv[3]) if len(sys.argv) > 3 else None
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    ref = None
    for decode in ("cpu", "gpu", "auto"):
        best = None
        for k in range(reps + 1):
            t0 = time.perf_counter()
            r = imghist.histogram_files(folder, gray=gray, threads=threads, backend="cuda",
                                        decode=decode)
            t = time.perf_counter() - t0
            if k > 0:
                best = t if best is None else min(best, t)
        n = len(r.files)
        same = ref is None or np.array_equal(ref, r.counts)
        ref = r.counts if ref is None else ref
        print(f"histogram_files gray={gray} decode={decode:4s} threads={threads}: {n} files, "
              f"best {best:.3f} s = {n / best:.1f} images/s, failures {len(r.failures)}, "
              f"counts {'equal' if same else 'DIFFERENT'} to decode=cpu", flush=True)


if __name__ == "__main__":
    main()
