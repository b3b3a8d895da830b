#!/usr/bin/env python3
"""`imghist --stats`: a batch run's time per stage.

An equalizing folder run with --stats ends with a header line (images,
threads, wall time) and one line per stage: read, decode, gray, count,
LUT, filter, deflate, write (GPU where a GPU ran) and what is left
("other"). Each stage's seconds are non-negative, the ones that did work
are positive, and together they are at most threads x wall; "other" is
what remains of it. A counting run has no filter, deflate or write time;
a run without --stats prints no such line.

usage: test_stats_cli.py IMGHIST_BINARY SAMPLES_DIR
"""
import re
import subprocess
import sys
import tempfile

EXE, SAMPLES = sys.argv[1], sys.argv[2]
HEADER = re.compile(r"^imghist: stats: (\d+) images, (\d+) threads, ([0-9.]+) s wall;")
ROW = re.compile(r"^imghist: stats:   (\S+) +([0-9.]+) s +([0-9.]+) %")
STAGES = ["read", "decode", "gray", "count", "LUT", "filter", "deflate", "write", "other"]


def stats_of(*args):
    r = subprocess.run([EXE, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.startswith("imghist: stats:")]
    if not lines:
        return None
    h = HEADER.match(lines[0])
    assert h, f"no header line: {lines[0]!r}"
    images, threads, wall = int(h[1]), int(h[2]), float(h[3])
    rows = {}
    for l in lines[1:]:
        m = ROW.match(l)
        assert m, f"not a stage line: {l!r}"
        rows[m[1]] = float(m[2])
    names = [n for n in rows if n != "GPU"]
    assert names == STAGES, f"stages {list(rows)}, want {STAGES} (and GPU where one ran)"
    assert all(v >= 0 for v in rows.values()), rows
    work = sum(v for n, v in rows.items() if n != "other")
    budget = threads * wall
    # Each value is printed rounded to the millisecond.
    assert work <= budget + 0.001 * len(rows), f"stages {work:.3f} s > threads x wall {budget:.3f} s"
    assert abs(work + rows["other"] - max(budget, work)) <= 0.001 * (len(rows) + 1), rows
    return images, threads, wall, rows


def main():
    with tempfile.TemporaryDirectory() as tmp:
        s = stats_of("-j", "2", "--backend", "cpu", "--stats", "--equalize", tmp + "/eq", SAMPLES)
        assert s is not None, "--stats printed nothing"
        images, threads, wall, rows = s
        assert images == 5 and threads == 2 and wall > 0, s
        for n in ("decode", "deflate", "write"):
            assert rows[n] > 0, f"{n} took no time in an equalizing run: {rows}"
        s = stats_of("-j", "2", "--backend", "cpu", "--stats", "-q", "--total", tmp + "/t.csv",
                     SAMPLES)
        assert s is not None and s[0] == 5, s
        for n in ("filter", "deflate", "write"):
            assert s[3][n] == 0, f"a counting run spent time in {n}: {s[3]}"
        assert s[3]["decode"] > 0, s
        assert stats_of("-j", "2", "--total", tmp + "/t2.csv", SAMPLES) is None
    print("--stats: every stage listed, non-negative, within threads x wall")


if __name__ == "__main__":
    main()
