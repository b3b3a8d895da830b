#!/usr/bin/env python3
"""16-bit colour to gray against OpenCV's cvtColor(BGR2GRAY) on CV_16U.

Inputs: the colour photographs of samples/ as 16-bit PNGs (each 8-bit value
v as 257 v plus a random low byte, so that every bit matters), RGBA, and a
PNG of random 16-bit pixels. For each, in both gray modes:
- the CLI's 65536-bin histogram (--depth native) equals np.bincount of
  OpenCV's gray image;
- the Python package's load(depth='native') equals OpenCV's gray image;
- the CLI's 16-bit --equalize equals the documented rule applied to
  OpenCV's gray image (the README's rule for L = 65536 levels, in single
  precision).

usage: test_gray16_ref.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import subprocess
import sys
import tempfile

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()

EXE, SAMPLES = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))


def inputs(tmp):
    rng = np.random.default_rng(16)
    out = []
    for name in ("astronaut.png", "coffee.png", "hubble_deep_field.jpg"):
        bgr = cv2.imread(os.path.join(SAMPLES, name), cv2.IMREAD_COLOR)
        wide = bgr.astype(np.uint16) * 257 + rng.integers(0, 256, bgr.shape, dtype=np.uint16)
        path = os.path.join(tmp, name.split(".")[0] + "16.png")
        cv2.imwrite(path, wide)
        out.append(path)
    bgra = np.dstack([cv2.imread(out[0], cv2.IMREAD_UNCHANGED),
                      rng.integers(0, 65536, (512, 512), dtype=np.uint16)])
    out.append(os.path.join(tmp, "rgba16.png"))
    cv2.imwrite(out[-1], bgra)
    out.append(os.path.join(tmp, "random16.png"))
    cv2.imwrite(out[-1], rng.integers(0, 65536, (333, 517, 3), dtype=np.uint16))
    return out


def opencv_gray(path):
    img = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    assert img is not None and img.dtype == np.uint16, path
    code = cv2.COLOR_BGRA2GRAY if img.shape[2] == 4 else cv2.COLOR_BGR2GRAY
    return cv2.cvtColor(img, code)


def equalized(gray):
    """The README's 16-bit rule, in single precision."""
    hist = np.bincount(gray.ravel(), minlength=65536).astype(np.int64)
    first = int(np.flatnonzero(hist)[0])
    n = gray.size
    if hist[first] == n:
        return gray  # a constant image stays as it is
    scale = np.float32(65535) / np.float32(n - hist[first])
    c = (np.cumsum(hist) - np.cumsum(hist)[first]).astype(np.float32)
    lut = np.minimum(np.rint(c * scale), 65535).astype(np.uint16)
    lut[:first + 1] = 0
    return lut[gray]


def main():
    import imghist
    with tempfile.TemporaryDirectory() as tmp:
        for path in inputs(tmp):
            want = opencv_gray(path)
            name = os.path.basename(path)
            for mode in ("bgr2gray", "luma"):
                csv = os.path.join(tmp, "h.csv")
                eq = os.path.join(tmp, "eq.png")
                r = subprocess.run([EXE, path, "--depth", "native", "--gray", mode, "--bins",
                                    "65536", "--range", "0:65536", "--csv", csv, "--equalize",
                                    eq, "--backend", "cpu"], capture_output=True, text=True)
                check(r.returncode == 0, f"{name} {mode}: exit {r.returncode}: {r.stderr}")
                if r.returncode != 0:
                    continue
                with open(csv) as f:
                    counts = np.array([int(l.split(",")[3]) for l in f.read().splitlines()[1:]])
                hist = np.bincount(want.ravel(), minlength=65536)
                check(np.array_equal(counts[:65536], hist),
                      f"{name} {mode}: histogram differs in "
                      f"{int(np.count_nonzero(counts[:65536] != hist))} bins")
                got_eq = cv2.imread(eq, cv2.IMREAD_UNCHANGED)
                check(got_eq is not None and np.array_equal(got_eq, equalized(want)),
                      f"{name} {mode}: --equalize differs from the rule on OpenCV's gray")
                loaded = imghist.load(path, depth="native", gray=mode)
                check(np.array_equal(np.asarray(loaded), want),
                      f"{name} {mode}: imghist.load differs from cvtColor")
    return finish(f"16-bit gray against OpenCV {cv2.__version__}")


if __name__ == "__main__":
    sys.exit(main())
