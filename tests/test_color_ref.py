#!/usr/bin/env python3
"""imghist --color luma|channels against OpenCV, bit for bit:
  luma:     cvtColor(BGR2YCrCb), equalizeHist (or CLAHE's apply) of Y,
            cvtColor(YCrCb2BGR);
  channels: equalizeHist (or CLAHE) of B, G and R each;
on photographs, an image holding all 2^24 colours (every input of the
colour conversions), RGBA and gray files (imread(IMREAD_COLOR) drops alpha
and replicates gray), on the cpu backend and on CUDA where there is a GPU; and
the refusals.

usage: test_color_ref.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import subprocess
import sys
import tempfile

from backends import backends

try:
    import cv2
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)


def opencv(path, mode, clahe):
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    eq = cv2.createCLAHE(2.0, (8, 8)).apply if clahe else cv2.equalizeHist
    if mode == "luma":
        ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
        ycc[:, :, 0] = eq(np.ascontiguousarray(ycc[:, :, 0]))
        return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
    return cv2.merge([eq(np.ascontiguousarray(bgr[:, :, c])) for c in range(3)])


def main():
    exe, samples = sys.argv[1], sys.argv[2]
    on = backends(exe, samples)
    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))
    ok, checks = True, 0
    with tempfile.TemporaryDirectory() as work:
        inputs = [os.path.join(samples, p) for p in
                  ("coffee.png", "astronaut.png", "hubble_deep_field.jpg", "camera.png")]
        every = np.arange(1 << 24, dtype=np.uint32)
        allc = np.dstack([(every >> 16) & 255, (every >> 8) & 255, every & 255]).astype(
            np.uint8).reshape(4096, 4096, 3)
        extra = {"all-colours.png": allc,
                 "rgba.png": rng.integers(0, 256, (61, 93, 4), dtype=np.uint8),
                 "odd-rgb.png": rng.integers(0, 256, (37, 5, 3), dtype=np.uint8)}
        for name, img in extra.items():
            p = os.path.join(work, name)
            assert cv2.imwrite(p, img)
            inputs.append(p)
        out = os.path.join(work, "out.png")
        for path in inputs:
            for mode in ("luma", "channels"):
                for clahe in (False, True):
                    want = opencv(path, mode, clahe)
                    for backend in on:
                        if os.path.basename(path) == "all-colours.png" and backend == "cuda" \
                                and clahe:
                            continue  # the slowest case once is enough
                        args = [path, "-q", "--backend", backend, "--color", mode,
                                "--equalize", out]
                        if clahe:
                            args += ["--clahe", "--clip", "2"]
                        p = subprocess.run([exe, *args], capture_output=True, text=True)
                        got = cv2.imread(out, cv2.IMREAD_UNCHANGED) if p.returncode == 0 else None
                        checks += 1
                        if got is None or got.shape != want.shape or not np.array_equal(got, want):
                            ok = False
                            what = (p.stderr.strip() if got is None else
                                    f"shape {got.shape}" if got.shape != want.shape else
                                    f"{int(np.count_nonzero((got != want).any(2)))} pixels differ")
                            print(f"FAIL {os.path.basename(path)} {mode} clahe={clahe} "
                                  f"{backend}: {what}")
                        if os.path.exists(out):
                            os.remove(out)
        photo = inputs[0]
        for args in (["--color", "luma"], ["--color", "hsv", "--equalize", out],
                     ["--color", "luma", "--equalize", out, "--depth", "native"],
                     ["--color", "luma", "--equalize", out, "--channels"]):
            p = subprocess.run([exe, photo, *args], capture_output=True, text=True)
            checks += 1
            if p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1 or os.path.exists(out):
                ok = False
                print(f"FAIL refusal {args}: exit {p.returncode}: {p.stderr.strip()}")
    print(f"{checks} checks, {'all passed' if ok else 'FAILURES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
