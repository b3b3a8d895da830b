#!/usr/bin/env python3
"""Compare the imghist timings of two sets of benchmark logs taken in one
device call (an A/B of two builds, alternating): for every table row of
imghist_bench_wide, _batch and _views16, every timed line of
imghist_bench_joint and every imghist row of imghist_bench (compare_logs.py's
rows), the best (smallest) time of each side over its runs and their ratio. Reference columns (read ceiling, copy, CUB) and derived ones
(percentages, speed-ups) are left out.

usage: compare_tables.py --old A1.log [A2.log ...] --new B1.log [B2.log ...]
       [--worse 1.02]   rows slower than this ratio are listed last
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_logs  # noqa: E402

NUM = re.compile(r"[-+]?\d+(?:\.\d+)?")
SKIP = ("read", "copy", "cub", "ceiling", "%", "speed-up", "check", "mb", "route",
        "same pixels", "x 1.5", "blocks/sm", "largest", "views", "mask", "batch")
KEYS = ("workload", "pattern", "blocks/sm knob", "batch", "views", "largest", "mask")
LINE = re.compile(r"^\s*(?P<name>[A-Za-z(][^|]*?)\s+(?P<v>\d+(?:\.\d+)?) (?P<u>ms|us)\b")


def times(path):
    sectioned = compare_logs.rows(path, "imghist")
    if sectioned:
        return {(f"{k[0][:40]} | {k[1]} | {k[2]}", ""): v / 1e3 for k, v in sectioned.items()}
    out, header = {}, None
    for line in open(path, errors="replace"):
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if set(cells[0]) <= set("-"):
                continue
            if header is None or not NUM.match(cells[-1] or "x") and not any(
                    NUM.match(c) for c in cells[1:]):
                header = cells
                continue
            key = " | ".join(c for h, c in zip(header, cells) if h.lower() in KEYS)
            for h, c in zip(header, cells):
                if h.lower() in KEYS or (any(s in h.lower() for s in SKIP) and not any(
                        w in h.lower() for w in ("imghist", "call", "equalize", "histogram"))):
                    continue
                m = NUM.match(c)
                if m and c != cells[0]:
                    out[(key, h)] = float(m.group())
        else:
            header = None if not line.strip() else header
            m = LINE.match(line)
            if m and "read" not in m.group("name") and "copy" not in m.group("name"):
                scale = 1e-3 if m.group("u") == "us" else 1.0
                out[(m.group("name").strip(), "")] = float(m.group("v")) * scale
    return out


def best(paths):
    acc = {}
    for p in paths:
        for k, v in times(p).items():
            acc[k] = min(v, acc.get(k, v))
    return acc


def main():
    args = sys.argv[1:]
    worse = 1.02
    if "--worse" in args:
        i = args.index("--worse")
        worse = float(args[i + 1])
        del args[i:i + 2]
    i_old, i_new = args.index("--old"), args.index("--new")
    old = best(args[i_old + 1:i_new])
    new = best(args[i_new + 1:])
    rows = sorted(k for k in old if k in new and old[k] > 0)
    flagged = []
    for k in rows:
        r = new[k] / old[k]
        print(f"{r:7.3f}  {old[k]:10.4f} {new[k]:10.4f}  {k[0]}  [{k[1]}]")
        if r > worse:
            flagged.append((r, k))
    print(f"\n{len(rows)} timings compared; {len(flagged)} slower than {worse}x:")
    for r, k in sorted(flagged, reverse=True):
        print(f"{r:7.3f}  {k[0]}  [{k[1]}]")


if __name__ == "__main__":
    main()
