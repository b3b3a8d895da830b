#!/usr/bin/env python3
"""imghist compare and imghist similar against cv2.compareHist of the
samples' histograms: the values (to the printed digits on standard output,
exactly in --csv and --json), histogram CSVs as inputs, --sort, the exit
statuses, and no output file when an input cannot be read.

usage: test_compare_cli.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv is not installed.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()

EXE, SAMPLES = sys.argv[1], sys.argv[2]
NAMES = ["correlation", "chisqr", "intersect", "bhattacharyya", "chisqr_alt", "kl_div"]


def run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True)


def cv_hist(path):
    img = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    return cv2.calcHist([img], [0], None, [256], [0, 256])


def main():
    imgs = [os.path.join(SAMPLES, n) for n in ("camera.png", "moon.png", "coffee.png",
                                                "astronaut.png")]
    hs = [cv_hist(p) for p in imgs]
    with tempfile.TemporaryDirectory() as tmp:
        moon_csv = os.path.join(tmp, "moon.csv")
        check(run(imgs[1], "--csv", moon_csv).returncode == 0, "imghist --csv of moon.png")
        for m, name in enumerate(NAMES):
            out = os.path.join(tmp, name + ".csv")
            js = os.path.join(tmp, name + ".jsonl")
            r = run("compare", imgs[0], *imgs[1:], moon_csv, "--metric", name, "--csv", out,
                    "--json", js)
            check(r.returncode == 0, f"compare --metric {name}: {r.stderr}")
            want = [cv2.compareHist(hs[0], h, m) for h in hs[1:] + [hs[1]]]
            with open(out, newline="") as f:
                rows = list(csv.DictReader(f))
            got = [float(row["value"]) for row in rows]
            check(got == want, f"{name}: --csv {got} != cv2 {want}")
            with open(js) as f:
                got = [json.loads(line)["value"] for line in f]
            check(got == want, f"{name}: --json {got} != cv2 {want}")
            lines = r.stdout.splitlines()
            check(len(lines) == len(want), f"{name}: {len(lines)} lines")
            for line, w in zip(lines, want):
                v = float(line.split("\t")[0])
                check(abs(v - w) <= 1e-8 * max(1, abs(w)), f"{name}: printed {v}, want {w}")
        # --sort: most similar first (correlation: descending; chi-square: ascending).
        for name, rev in (("correlation", True), ("chisqr", False)):
            r = run("compare", imgs[0], *imgs, "--metric", name, "--sort")
            vals = [float(line.split("\t")[0]) for line in r.stdout.splitlines()]
            check(vals == sorted(vals, reverse=rev), f"--sort {name}: {vals}")
            check(r.stdout.splitlines()[0].endswith("camera.png"), "REF itself first")
        # An unreadable input: exit 1, the file named, no output written.
        out = os.path.join(tmp, "none.csv")
        r = run("compare", imgs[0], os.path.join(tmp, "missing.png"), "--csv", out)
        check(r.returncode == 1 and "missing.png" in r.stderr and not os.path.exists(out),
              f"missing input: {r.returncode} {r.stderr!r}")
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("bin,lower,upper,count\n0,0,1,x\n")
        r = run("compare", imgs[0], bad)
        check(r.returncode == 1 and "bad.csv:2" in r.stderr, f"bad CSV: {r.stderr!r}")
        for args in (["compare", imgs[0]], ["compare", "--metric", "cosine", *imgs[:2]],
                     ["similar", SAMPLES], ["similar", "--threshold", "x", SAMPLES]):
            r = run(*args)
            check(r.returncode == 2 and r.stderr.count("\n") == 1, f"{args}: {r.stderr!r}")
        check(run("compare", "--help").stdout.startswith("Usage: imghist compare"), "--help")
        # similar: every pair of the folder at or above the threshold, best first.
        d = os.path.join(tmp, "dir")
        os.mkdir(d)
        for p in imgs:
            os.symlink(p, os.path.join(d, os.path.basename(p)))
        os.symlink(imgs[0], os.path.join(d, "camera-copy.png"))
        r = run("similar", d, "--threshold", "0.03", "--backend", "cpu")
        check(r.returncode == 0, f"similar: {r.stderr}")
        pairs = [line.split("\t") for line in r.stdout.splitlines()]
        names = sorted(os.listdir(d))
        paths = {n: cv_hist(os.path.join(d, n)) for n in names}
        want = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                v = cv2.compareHist(paths[a], paths[b], 0)
                if v >= 0.03:
                    want.append((v, a, b))
        want.sort(key=lambda t: -t[0])
        got = [(float(v), os.path.basename(a), os.path.basename(b)) for v, a, b in pairs]
        check([g[1:] for g in got] == [w[1:] for w in want], f"similar pairs {got} != {want}")
        check(got[0][0] == 1.0 and {got[0][1], got[0][2]} == {"camera.png", "camera-copy.png"},
              "the copy first")
    sys.exit(finish("compare and similar"))


if __name__ == "__main__":
    main()
