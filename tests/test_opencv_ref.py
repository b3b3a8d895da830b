#!/usr/bin/env python3
"""imghist against OpenCV, an implementation nobody here wrote.

For real photographs (and a few adversarial synthetic images) the gray
conversion, the histogram and the equalized image must match OpenCV's
cvtColor(BGR2GRAY), calcHist and equalizeHist bit for bit, on the CPU backend
and on whatever `auto` picks (CUDA on a GPU machine).

usage: test_opencv_ref.py IMGHIST_BINARY SAMPLES_DIR [MAKE_JPEG]
MAKE_JPEG (tests/make_jpeg.c) adds CMYK and YCCK JPEGs and JPEGs with every
EXIF orientation, which cv::imread turns upright.
Exits 77 (skipped) when python3-opencv is not installed.
"""
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

PHOTOS = ["moon.png", "camera.png", "coffee.png", "astronaut.png", "hubble_deep_field.jpg"]


def opencv_gray(path):
    img = cv2.imread(path, cv2.IMREAD_COLOR)  # BGR, alpha dropped, gray replicated
    assert img is not None, path
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


def run_imghist(exe, src, workdir, backend):
    eq = os.path.join(workdir, "eq.png")
    csv = os.path.join(workdir, "hist.csv")
    proc = subprocess.run([exe, src, "--backend", backend, "--equalize", eq, "--csv", csv],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{src}: imghist exited {proc.returncode}: {proc.stderr.strip()}")
    with open(csv) as f:
        lines = f.read().splitlines()
    assert lines[0] == "bin,lower,upper,count", lines[0]
    counts = np.array([int(l.split(",")[3]) for l in lines[1:]], dtype=np.int64)
    out = cv2.imread(eq, cv2.IMREAD_UNCHANGED)
    return counts, out


def check(exe, src, workdir, backend, label):
    gray = opencv_gray(src)
    want_hist = cv2.calcHist([gray], [0], None, [256], [0, 256]).ravel().astype(np.int64)
    want_eq = cv2.equalizeHist(gray)
    counts, out = run_imghist(exe, src, workdir, backend)
    errors = []
    if not np.array_equal(counts, want_hist):
        errors.append(f"histogram differs in {int(np.count_nonzero(counts != want_hist))} bins")
    if out is None or out.shape != want_eq.shape or out.dtype != np.uint8:
        errors.append(f"equalized output has shape {None if out is None else out.shape}")
    elif not np.array_equal(out, want_eq):
        diff = np.count_nonzero(out != want_eq)
        errors.append(f"equalized image differs in {diff} pixels")
    status = "ok" if not errors else "FAIL: " + "; ".join(errors)
    print(f"{label:32s} {backend:5s} {gray.shape[1]}x{gray.shape[0]}  {status}")
    return not errors


def synthetic(workdir, seed):
    rng = np.random.default_rng(seed)
    cases = {
        "random-rgb-odd.png": rng.integers(0, 256, (333, 517, 3), dtype=np.uint8),
        "constant.png": np.full((31, 47), 173, dtype=np.uint8),
        "two-values.png": np.where(rng.random((64, 81)) < 0.3, 12, 240).astype(np.uint8),
        "multiples-of-32.png": (rng.integers(0, 8, (120, 99)) * 32).astype(np.uint8),
        "one-pixel.png": np.array([[201]], dtype=np.uint8),
        "narrow-range-rgba.png": np.dstack([rng.integers(100, 110, (50, 77), dtype=np.uint8)
                                            for _ in range(4)]),
    }
    cases["rgb16.png"] = rng.integers(0, 65536, (45, 67, 3), dtype=np.uint16)
    cases["gray16.png"] = rng.integers(0, 65536, (23, 99), dtype=np.uint16)
    paths = []
    for name, img in cases.items():
        p = os.path.join(workdir, name)
        assert cv2.imwrite(p, img)
        paths.append(p)
    # JPEGs re-encoded from a photograph: colour, gray, progressive, and an
    # odd size that exercises chroma upsampling at the edges.
    photo = cv2.imread(os.path.join(SAMPLES, "coffee.png"), cv2.IMREAD_COLOR)
    jpegs = {
        "coffee-q90.jpg": (photo, [cv2.IMWRITE_JPEG_QUALITY, 90]),
        "coffee-gray.jpg": (cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY), []),
        "coffee-progressive.jpg": (photo, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1]),
        "coffee-odd.jpg": (photo[:333, :517], [cv2.IMWRITE_JPEG_QUALITY, 75]),
    }
    for name, (img, params) in jpegs.items():
        p = os.path.join(workdir, name)
        assert cv2.imwrite(p, img, params)
        paths.append(p)
    if MAKE_JPEG:
        # CMYK and YCCK with an Adobe marker (Photoshop's kind), odd sizes.
        made = [(f"{space}-{w}x{h}.jpg", [space, str(w), str(h)])
                for space, (w, h) in (("cmyk", (211, 97)), ("ycck", (64, 49)))]
        # EXIF orientations 1..8 on a non-square image (5..8 transpose it),
        # and 0 and 9, which are not orientations: left as stored.
        made += [(f"exif-orientation-{o}.jpg", ["rgb", "75", "41", "", str(o)])
                 for o in range(0, 10)]
        for name, args in made:
            p = os.path.join(workdir, name)
            args = args[:3] + [str(seed % 100000)] + args[4:]
            subprocess.run([MAKE_JPEG, p] + args, check=True)
            paths.append(p)
    return paths


SAMPLES = None
MAKE_JPEG = None


def main():
    global SAMPLES, MAKE_JPEG
    exe, samples = sys.argv[1], sys.argv[2]
    SAMPLES = samples
    MAKE_JPEG = sys.argv[3] if len(sys.argv) > 3 else None
    seed = int(os.environ.get("IMGHIST_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"OpenCV {cv2.__version__}, seed {seed}")
    ok = True
    with tempfile.TemporaryDirectory() as work:
        inputs = [os.path.join(samples, p) for p in PHOTOS]
        inputs += synthetic(work, seed)
        for backend in ("cpu", "auto"):
            for src in inputs:
                ok &= check(exe, src, work, backend, os.path.basename(src))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
