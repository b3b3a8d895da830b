#!/usr/bin/env python3
"""Checks for bench/folder/run.sh (not timed; needs cv2 and numpy).

    check_outputs.py eq color|gray OUTDIR INPUT...
        OUTDIR/NAME.png (NAME: each input's file name without its extension)
        must be 8-bit gray and identical to OpenCV's equalizeHist of the input
        read in that mode (color: imread(IMREAD_COLOR) + cvtColor(BGR2GRAY),
        gray: imread(IMREAD_GRAYSCALE)).
    check_outputs.py total REF.csv GOT.csv [OTHER.csv]
        GOT (CSV ...,count, 256 bins, an optional header) holds the same
        counts as REF (when not: says whether it equals OTHER, the other
        gray mode's reference).
    check_outputs.py csvsum REF.csv GOT.csv [OTHER.csv]
        GOT is a per-file CSV (file,bin,lower,upper,count): its counts added
        up per bin equal REF's; prints the number of files seen.

Prints one short line ("3/3 identical to OpenCV", "DIFFERS: ...") and exits
0 when the check holds, 1 when it does not, 2 when it could not be made.
"""
import csv
import os
import sys


def read_counts(path, per_file=False):
    """bin -> count, from the last column, rows whose bin column is a number."""
    counts = [0] * 256
    files = set()
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        for row in csv.reader(f):
            if len(row) < 2:
                continue
            bcol = len(row) - 4 if len(row) >= 4 else 0
            try:
                b = int(row[bcol])
                c = int(row[-1])
            except ValueError:
                continue  # header
            if not 0 <= b < 256:
                raise ValueError("%s: bin %d out of range" % (path, b))
            counts[b] += c
            if per_file and bcol > 0:
                files.add(",".join(row[:bcol]))
    return counts, len(files)


def reference(cv2, path, mode):
    if mode == "gray":
        g = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
    else:
        g = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    return cv2.equalizeHist(g)


def eq(mode, outdir, inputs):
    import cv2
    import numpy as np
    cv2.setNumThreads(1)
    for p in inputs:
        name = os.path.splitext(os.path.basename(p))[0] + ".png"
        got = cv2.imread(os.path.join(outdir, name), cv2.IMREAD_UNCHANGED)
        if got is None:
            print("DIFFERS: %s missing or unreadable" % name)
            return 1
        ref = reference(cv2, p, mode)
        if got.dtype != np.uint8 or got.ndim != 2 or got.shape != ref.shape:
            print("DIFFERS: %s is %s %s, expected 8-bit gray %s"
                  % (name, got.dtype, got.shape, ref.shape))
            return 1
        n = int(np.count_nonzero(got != ref))
        if n:
            other = "gray" if mode == "color" else "color"
            same = not np.count_nonzero(got != reference(cv2, p, other))
            print("DIFFERS: %s, %d pixels%s" % (
                name, n, " (identical to OpenCV's %s mode)" % other if same else ""))
            return 1
    print("%d/%d identical to OpenCV" % (len(inputs), len(inputs)))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "eq" and argv[1] in ("color", "gray"):
        return eq(argv[1], argv[2], argv[3:])
    if len(argv) in (3, 4) and argv[0] in ("total", "csvsum"):
        ref, _ = read_counts(argv[1])
        got, nfiles = read_counts(argv[2], per_file=argv[0] == "csvsum")
        other = None
        if len(argv) == 4 and os.path.exists(argv[3]):
            other, _ = read_counts(argv[3])
        if sum(got) == 0:
            print("DIFFERS: no counts in %s" % os.path.basename(argv[2]))
            return 1
        bad = [b for b in range(256) if ref[b] != got[b]]
        what = "sum over %d files " % nfiles if argv[0] == "csvsum" else ""
        if bad:
            print("DIFFERS: %s%d bins (bin %d: %d, OpenCV %d)%s"
                  % (what, len(bad), bad[0], got[bad[0]], ref[bad[0]],
                     " (equal to OpenCV's total in the other mode)" if other == got else ""))
            return 1
        print("%sequal to OpenCV's calcHist" % what)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as e:  # a check that cannot be made is no verdict
        print("check not made: %s" % e)
        sys.exit(2)
