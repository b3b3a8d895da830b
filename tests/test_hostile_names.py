#!/usr/bin/env python3
"""A folder run over file names that are not UTF-8 or hold JSON's and CSV's
special characters: every image is processed (exit 0), every --json line is
valid UTF-8 JSON whose "file" gives the name's bytes back through
os.fsencode (bytes outside UTF-8 as \\udcXX, Python's surrogateescape),
every --plot-dir picture is written, and the CSV holds each path.

usage: test_hostile_names.py IMGHIST_BINARY SAMPLES_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from refcheck import fail, finish

EXE, SAMPLES = sys.argv[1], sys.argv[2]
NAMES = [b"caf\xe9 \xff.png", b"\xc3\xa9t\xc3\xa9.png", b'quo"te\\back.png',
         b"over\xc0\xaflong.png", b"sur\xed\xa0\x80rogate.png", b"tab\there.png"]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(os.fsencode(tmp), b"in")
        os.mkdir(src)
        for n in NAMES:
            shutil.copy(os.path.join(SAMPLES, "moon.png"), os.path.join(src, n))
        jsonl, csv, plots = (os.path.join(tmp, x) for x in ("h.jsonl", "h.csv", "plots"))
        r = subprocess.run([EXE, src, "--json", jsonl, "--csv", csv, "--plot-dir", plots],
                           capture_output=True)
        if r.returncode != 0:
            fail(f"exit {r.returncode}: {r.stderr!r}")
        got = set()
        with open(jsonl, "rb") as f:
            for line in f:
                try:
                    got.add(os.fsencode(json.loads(line.decode("utf-8"))["file"]))
                except (UnicodeDecodeError, ValueError) as e:
                    fail(f"not a UTF-8 JSON line ({e}): {line[:60]!r}")
        want = {os.path.join(src, n) for n in NAMES}
        if got != want:
            fail(f"JSON names {sorted(got)} != {sorted(want)}")
        if len(os.listdir(plots)) != len(NAMES):
            fail(f"{len(os.listdir(plots))} plots for {len(NAMES)} images")
        with open(csv, "rb") as f:
            data = f.read()
        for n in NAMES:
            if n.replace(b'"', b'""') not in data:
                fail(f"CSV lacks {n!r}")
    return finish("hostile file names")


if __name__ == "__main__":
    sys.exit(main())
