#!/usr/bin/env python3
"""Compare imghist's rows of two imghist_bench logs taken in the same device call
(say, the previous release's build and this one's): for each section, kernel
and pattern, both times and their ratio, and the worst ratio per section.

usage: compare_logs.py BEFORE.txt AFTER.txt [--prefix imghist]"""
import re
import sys

UNITS = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
ROW = re.compile(r"^(?P<kernel>\S.*?)\s{2,}(?P<pattern>\S+(?: x\d+)?)\s+"
                 r"(?P<time>[\d.]+) (?P<unit>ns|us|ms|s)\s")


def rows(path, prefix):
    section, out = None, {}
    for line in open(path, errors="replace"):
        if line.startswith("== "):
            section = line.strip("= \n")
            continue
        m = ROW.match(line)
        if section and m and m.group("kernel").startswith(prefix):
            key = (section, m.group("kernel").strip(), m.group("pattern"))
            out[key] = float(m.group("time")) * UNITS[m.group("unit")]
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    prefix = "imghist"
    if "--prefix" in sys.argv:
        prefix = sys.argv[sys.argv.index("--prefix") + 1]
        args.remove(prefix)
    if len(args) != 2:
        sys.exit(__doc__)
    before, after = rows(args[0], prefix), rows(args[1], prefix)
    worst = {}
    print(f"{'section':40.40} {'kernel':38.38} {'pattern':9} {'before':>10} {'after':>10} after/before")
    for key in before:
        if key not in after:
            continue
        r = after[key] / before[key]
        sec = key[0]
        worst[sec] = max(worst.get(sec, 0.0), r)
        print(f"{key[0]:40.40} {key[1]:38.38} {key[2]:9} {before[key]:9.2f}u {after[key]:9.2f}u {r:8.3f}")
    print("\nworst after/before per section (above 1: slower now):")
    for sec, r in worst.items():
        print(f"  {r:6.3f}  {sec}")
    missing = sorted(set(before) ^ set(after))
    if missing:
        print(f"\n{len(missing)} rows in only one log")


if __name__ == "__main__":
    main()
