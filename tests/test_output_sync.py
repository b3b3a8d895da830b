#!/usr/bin/env python3
"""Outputs reach the disk before they are renamed into place: one fsync per
output file (strace counts them), none with --no-sync, the same bytes either
way.

usage: test_output_sync.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when strace is not installed or cannot trace here.
"""
import os
import shutil
import subprocess
import sys
import tempfile

EXE, SAMPLES = sys.argv[1], sys.argv[2]


def fsyncs(args, tmp):
    log = os.path.join(tmp, "trace")
    r = subprocess.run(["strace", "-f", "-e", "trace=fsync,fdatasync", "-o", log, EXE, *args],
                       capture_output=True)
    if r.returncode != 0:
        return None
    with open(log) as f:
        return sum(1 for line in f if "fsync(" in line and "= 0" in line)


def main():
    if shutil.which("strace") is None:
        print("skipping: strace is not installed")
        return 77
    img = os.path.join(SAMPLES, "camera.png")
    with tempfile.TemporaryDirectory() as tmp:
        got = {}
        for flag in ([], ["--no-sync"]):
            outs = [os.path.join(tmp, f"o{len(flag)}.png"), os.path.join(tmp, f"o{len(flag)}.csv")]
            n = fsyncs([img, "--equalize", outs[0], "--csv", outs[1], *flag], tmp)
            if n is None:
                print("skipping: strace cannot trace here")
                return 77
            got[bool(flag)] = (n, [open(p, "rb").read() for p in outs])
    failures = []
    if got[False][0] != 2:
        failures.append(f"{got[False][0]} fsyncs for two outputs, want 2")
    if got[True][0] != 0:
        failures.append(f"{got[True][0]} fsyncs with --no-sync, want 0")
    if got[False][1] != got[True][1]:
        failures.append("--no-sync wrote other bytes")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("outputs synced before the rename: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
