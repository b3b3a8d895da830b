#!/usr/bin/env python3
"""The summary's and the JSON's statistics against their references:
`otsu` against OpenCV's cv2.threshold(THRESH_OTSU) (8-bit and 16-bit),
`percentiles` against numpy.percentile(method="inverted_cdf"), `entropy`
against the entropy of numpy.bincount; on the sample photographs and on
adversarial images (constant, two values, one pixel, bimodal, multiples of
32, 16-bit noise).

usage: test_stats_ref.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv or numpy is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)

EXE, SAMPLES = sys.argv[1], sys.argv[2]
PHOTOS = ["moon.png", "camera.png", "coffee.png", "astronaut.png", "hubble_deep_field.jpg"]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def stats_of(path, *args):
    proc = subprocess.run([EXE, path, "--json", "-", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{path}: exit {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def entropy(x, levels):
    c = np.bincount(x.ravel(), minlength=levels).astype(np.float64)
    p = c[c > 0] / c.sum()
    return float(-(p * np.log2(p)).sum()) + 0.0


def check(label, path, img, levels, *args):
    js = stats_of(path, *args)
    maxval = levels - 1
    want_otsu = cv2.threshold(img, 0, maxval, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0]
    if js["otsu"] != want_otsu:
        fail(f"{label}: otsu {js['otsu']}, OpenCV {want_otsu}")
    for p, got in js["percentiles"].items():
        want = np.percentile(img, float(p), method="inverted_cdf")
        if got != want:
            fail(f"{label}: percentile {p} is {got}, numpy {want}")
    want_h = entropy(img, levels)
    if abs(js["entropy"] - want_h) > 5e-6:
        fail(f"{label}: entropy {js['entropy']}, numpy {want_h}")
    return js


def main():
    checked = 0
    for name in PHOTOS:
        path = os.path.join(SAMPLES, name)
        img = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
        check(name, path, img, 256)
        checked += 1
    rng = np.random.default_rng(5)
    bimodal = np.concatenate([rng.normal(60, 12, 5000), rng.normal(190, 20, 3000)])
    cases8 = {
        "constant": np.full((31, 47), 173, np.uint8),
        "zeros": np.zeros((8, 9), np.uint8),
        "two-values": np.where(rng.random((64, 81)) < 0.3, 12, 240).astype(np.uint8),
        "one-pixel": np.array([[201]], np.uint8),
        "multiples-of-32": (rng.integers(0, 8, (120, 99)) * 32).astype(np.uint8),
        "bimodal": np.clip(bimodal, 0, 255).astype(np.uint8).reshape(80, 100),
        "uniform": rng.integers(0, 256, (333, 517), dtype=np.uint8),
        "ends": np.array([[0, 255] * 50], np.uint8),
    }
    cases16 = {
        "noise16": rng.integers(0, 65536, (45, 67), dtype=np.uint16),
        "bimodal16": (np.clip(bimodal, 0, 255) * 257).astype(np.uint16).reshape(80, 100),
        "two-values16": np.where(rng.random((30, 40)) < 0.5, 1000, 60000).astype(np.uint16),
    }
    with tempfile.TemporaryDirectory() as d:
        for name, img in cases8.items():
            p = os.path.join(d, name + ".png")
            assert cv2.imwrite(p, img)
            js = check(name, p, img, 256)
            checked += 1
            if name == "constant" and (js["entropy"] != 0 or js["otsu"] != 0):
                fail(f"constant: entropy {js['entropy']} otsu {js['otsu']}, want 0 and 0")
        for name, img in cases16.items():
            p = os.path.join(d, name + ".png")
            assert cv2.imwrite(p, img)
            check(name, p, img, 65536, "--depth", "native")
            checked += 1
        # Statistics go with the bins: bins other than levels report bin
        # values (midpoints); with no sample in the bins they are null.
        img = cases8["bimodal"]
        js = stats_of(os.path.join(d, "bimodal.png"), "--bins", "4")
        which = img.astype(np.int64) // 64  # the bin of each sample: 4 bins of 64 levels
        for p, got in js["percentiles"].items():
            want = 32 + 64 * np.percentile(which, float(p), method="inverted_cdf")
            if got != want:
                fail(f"4 bins: percentile {p} is {got}, want the bin's midpoint {want}")
        otsu_bin = cv2.threshold(which.astype(np.uint8), 0, 255,
                                 cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0]
        if js["otsu"] != 32 + 64 * otsu_bin:
            fail(f"4 bins: otsu {js['otsu']}, want the midpoint of bin {otsu_bin}")
        js = stats_of(os.path.join(d, "bimodal.png"), "--range", "300:400")
        if js["entropy"] is not None or js["percentiles"] is not None or js["otsu"] is not None:
            fail(f"no sample in the bins: {js}")
    print(f"{checked} images checked, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
