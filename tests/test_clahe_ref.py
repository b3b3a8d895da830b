#!/usr/bin/env python3
"""imghist --clahe against OpenCV's createCLAHE(clip, tiles).apply(), bit for
bit: photographs and adversarial images (sizes that are not multiples of the
grid, 1xN, Nx1, 1x1, tiles larger than the image, constant images, values
that are multiples of 32), 8-bit and 16-bit (--depth native), several clip
limits and grids, on the cpu backend and on CUDA where there is a GPU; and
the option refusals.

usage: test_clahe_ref.py IMGHIST_BINARY SAMPLES_DIR
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

PHOTOS = ["moon.png", "camera.png", "coffee.png", "astronaut.png", "hubble_deep_field.jpg"]
SETTINGS = [(40.0, (8, 8)), (2.0, (8, 8)), (0.0, (4, 4)), (1.0, (3, 5)), (4.0, (16, 16)),
            (100.0, (1, 1)), (0.5, (7, 3))]


def images(samples, work, rng):
    out = []
    for p in PHOTOS:
        g = cv2.cvtColor(cv2.imread(os.path.join(samples, p), cv2.IMREAD_COLOR),
                         cv2.COLOR_BGR2GRAY)
        out.append((p, g))
    out += [
        ("random-333x517", rng.integers(0, 256, (333, 517), dtype=np.uint8)),
        ("constant", np.full((31, 47), 173, np.uint8)),
        ("1x1", np.array([[201]], np.uint8)),
        ("1xN", rng.integers(0, 256, (1, 77), dtype=np.uint8)),
        ("Nx1", rng.integers(0, 256, (50, 1), dtype=np.uint8)),
        ("3x5", rng.integers(0, 256, (3, 5), dtype=np.uint8)),
        ("multiples-of-32", (rng.integers(0, 8, (120, 99)) * 32).astype(np.uint8)),
        ("u16-random", rng.integers(0, 65536, (65, 97), dtype=np.uint16)),
        ("u16-12bit", (rng.integers(0, 4096, (128, 256)) * 16).astype(np.uint16)),
        ("u16-camera", cv2.cvtColor(cv2.imread(os.path.join(samples, "camera.png")),
                                    cv2.COLOR_BGR2GRAY).astype(np.uint16) * 257),
    ]
    files = []
    for name, img in out:
        path = os.path.join(work, f"in-{name}.png")
        assert cv2.imwrite(path, img)
        files.append((name, path, img))
    return files


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True)


def main():
    exe, samples = sys.argv[1], sys.argv[2]
    on = backends(exe, samples)
    seed = int(os.environ.get("IMGHIST_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"OpenCV {cv2.__version__}, seed {seed}")
    rng = np.random.default_rng(seed)
    ok = True
    checks = 0
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out.png")
        for name, path, img in images(samples, work, rng):
            for clip, tiles in SETTINGS:
                want = cv2.createCLAHE(clip, tiles).apply(img)
                for backend in on:
                    args = [path, "-q", "--backend", backend, "--clahe", "--clip", str(clip),
                            "--tiles", f"{tiles[0]}x{tiles[1]}", "--equalize", out]
                    if img.dtype == np.uint16:
                        args += ["--depth", "native"]
                    p = run(exe, *args)
                    got = cv2.imread(out, cv2.IMREAD_UNCHANGED) if p.returncode == 0 else None
                    checks += 1
                    if got is None or got.dtype != want.dtype or not np.array_equal(got, want):
                        ok = False
                        what = (p.stderr.strip() if got is None else
                                f"{int(np.count_nonzero(got != want))} pixels differ")
                        print(f"FAIL {name} clip {clip} tiles {tiles} {backend}: {what}")
                    if os.path.exists(out):
                        os.remove(out)
        # Refusals: each a one-line usage error, exit 2, no output file.
        photo = os.path.join(samples, "moon.png")
        for args in (["--clahe"], ["--clahe", "--equalize", out, "--tiles", "0x8"],
                     ["--clahe", "--equalize", out, "--tiles", "8x2147483648"],
                     ["--clahe", "--equalize", out, "--clip", "abc"],
                     ["--clahe", "--equalize", out, "--channels"],
                     ["--clahe", "--equalize", out, "--bins", "16"]):
            p = run(exe, photo, *args)
            checks += 1
            lines = p.stderr.strip().splitlines()
            if p.returncode != 2 or len(lines) != 1 or os.path.exists(out):
                ok = False
                print(f"FAIL refusal {args}: exit {p.returncode}, {lines}")
    print(f"{checks} checks, {'all passed' if ok else 'FAILURES'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
