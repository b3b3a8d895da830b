#!/usr/bin/env python3
"""Streams of unknown length that are no image (a character device, endless
standard input) are refused from their first bytes, with the decoder's
reason, not after --max-bytes (2 GiB) of them are read; an image through a
pipe still loads. A CSV of 2^24 bins (hundreds of megabytes, minutes of
writing) leaves no file when SIGKILL ends it: the output is unnamed until it
is complete.

usage: test_streams.py IMGHIST_BINARY SAMPLES_DIR
"""
import os
import subprocess
import sys
import tempfile
import time

from refcheck import fail, finish

EXE, SAMPLES = sys.argv[1], sys.argv[2]


def main():
    runs = [("/dev/zero as a file", [EXE, "/dev/zero"], subprocess.DEVNULL),
            ("endless standard input", [EXE, "-"], open("/dev/zero", "rb"))]
    for what, args, stdin in runs:
        try:
            r = subprocess.run(args, stdin=stdin, capture_output=True, text=True, timeout=20)
        except subprocess.TimeoutExpired:
            fail(f"{what}: still reading after 20 s")
            continue
        if r.returncode != 1 or "unrecognised format" not in r.stderr:
            fail(f"{what}: exit {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(SAMPLES, "moon.png"), "rb") as f:
        r = subprocess.run([EXE, "-"], stdin=f, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or "512x512" not in r.stdout:
        fail(f"a PNG through standard input: exit {r.returncode}: {r.stderr.strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "big.csv")
        # SIGKILL mid-write: the output is an unnamed file, nothing is left.
        # (SIGINT mid-write: test_signals.py.)
        p = subprocess.Popen([EXE, os.path.join(SAMPLES, "moon.png"), "--bins", "16777216",
                              "--range", "0:256", "--csv", csv], stderr=subprocess.DEVNULL)
        time.sleep(2)
        p.kill()
        p.wait()
        if os.listdir(tmp):
            fail(f"SIGKILL mid-write left {os.listdir(tmp)}")
    return finish("streams")


if __name__ == "__main__":
    sys.exit(main())
