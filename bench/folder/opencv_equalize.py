#!/usr/bin/env python3
"""opencv_equalize.py: the Python (cv2) fallback of opencv_equalize.cpp.

    opencv_equalize.py [-j N] [-o OUTDIR] [--total FILE] [-q] color|gray INPUT...

Same interface, same work per image and the same printed line (impl=py):
for hosts where the C++ program cannot be built or run (no libopencv-dev, or
a binary linked against another system's OpenCV). N threads of a
ThreadPoolExecutor take the files in order; cv2's imread, cvtColor,
equalizeHist, calcHist and imwrite release the GIL, so they run in parallel.
The interpreter's start and `import cv2` are not in wall_s (they are in the
runner's wall clock).
"""
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cv2

USAGE = """usage: opencv_equalize.py [-j N] [-o OUTDIR] [--total FILE] [-q] color|gray INPUT...
  INPUT: an image file, a folder (its files), or @LIST / -l LIST (one path a line)
  color: imread(IMREAD_COLOR) + cvtColor(BGR2GRAY); gray: imread(IMREAD_GRAYSCALE)
  -o OUTDIR: equalizeHist + imwrite(OUTDIR/NAME.png); without: calcHist only"""


def fail_usage(msg=None):
    if msg:
        print("opencv_equalize.py: " + msg, file=sys.stderr)
    print(USAGE, file=sys.stderr)
    sys.exit(2)


def add_input(arg, items):
    if arg.startswith("@"):
        with open(arg[1:], encoding="utf-8") as f:
            items.extend(line.rstrip("\r\n") for line in f if line.strip())
    elif os.path.isdir(arg):
        items.extend(sorted(os.path.join(arg, n) for n in os.listdir(arg)
                            if os.path.isfile(os.path.join(arg, n))))
    else:
        items.append(arg)


def main(argv):
    threads = os.cpu_count() or 1
    outdir = total_path = mode = None
    quiet = False
    items = []
    i = 0
    while i < len(argv):
        a = argv[i]

        def need():
            nonlocal i
            if i + 1 >= len(argv):
                fail_usage("%s needs a value" % a)
            i += 1
            return argv[i]
        if a in ("-j", "--jobs"):
            v = need()
            if not v.isdigit() or not 1 <= int(v) <= 1024:
                fail_usage("-j %s: expected 1..1024" % v)
            threads = int(v)
        elif a.startswith("-j") and a[2:].isdigit():
            threads = max(1, min(1024, int(a[2:])))
        elif a in ("-o", "--out"):
            outdir = need()
        elif a == "--total":
            total_path = need()
        elif a in ("-l", "--list"):
            add_input("@" + need(), items)
        elif a in ("-q", "--quiet"):
            quiet = True
        elif a == "--version":
            print("opencv_equalize.py (Python %d.%d) OpenCV %s" % (sys.version_info[0], sys.version_info[1], cv2.__version__))
            return 0
        elif a in ("-h", "--help"):
            print(USAGE)
            return 0
        elif mode is None and a in ("color", "gray"):
            mode = a
        elif a.startswith("-") and a != "-" and not os.path.exists(a):
            fail_usage("unknown option " + a)
        else:
            add_input(a, items)
        i += 1
    if mode is None or not items:
        fail_usage()
    if outdir:
        os.makedirs(outdir, exist_ok=True)
    in_bytes = 0
    for p in items:
        try:
            in_bytes += os.path.getsize(p)
        except OSError:
            pass

    hist_only = outdir is None
    want_hist = hist_only or total_path is not None
    workers = min(threads, len(items))
    cv_threads = max(1, threads // workers)
    cv2.setNumThreads(cv_threads)
    flag = cv2.IMREAD_GRAYSCALE if mode == "gray" else cv2.IMREAD_COLOR
    lock = threading.Lock()
    total = [0] * 256
    failed = [0]

    def one(path):
        try:
            img = cv2.imread(path, flag)
            if img is None:
                print("opencv_equalize.py: %s: cannot read or decode" % path, file=sys.stderr)
                return False
            gray = img if mode == "gray" else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
            if want_hist:
                h = cv2.calcHist([gray], [0], None, [256], [0, 256])
                counts = [int(round(float(x))) for x in h.ravel()]
                with lock:
                    for b in range(256):
                        total[b] += counts[b]
            if not hist_only:
                eq = cv2.equalizeHist(gray)
                name = os.path.splitext(os.path.basename(path))[0] + ".png"
                out = os.path.join(outdir, name)
                if not cv2.imwrite(out, eq):
                    print("opencv_equalize.py: %s: cannot write" % out, file=sys.stderr)
                    return False
            return True
        except cv2.error as e:
            print("opencv_equalize.py: %s: %s" % (path, e), file=sys.stderr)
            return False

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as ex:
        for ok in ex.map(one, items):
            if not ok:
                failed[0] += 1
    secs = time.perf_counter() - t0

    if total_path:
        with open(total_path, "w", encoding="ascii") as f:
            f.write("bin,lower,upper,count\n")
            for b in range(256):
                f.write("%d,%d,%d,%d\n" % (b, b, b + 1, total[b]))
    if not quiet:
        n = len(items)
        print("opencv_equalize impl=py opencv=%s mode=%s output=%s threads=%d opencv_threads=%d "
              "images=%d failed=%d input_MB=%.1f wall_s=%.3f images_per_s=%.2f MB_per_s=%.1f"
              % (cv2.__version__, mode, "none" if hist_only else "png", workers, cv_threads, n,
                 failed[0], in_bytes / 1e6, secs, n / secs, in_bytes / 1e6 / secs))
    return 1 if failed[0] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
