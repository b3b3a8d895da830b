#!/usr/bin/env python3
"""A --range over a 16-bit or float image read at the default --depth 8
counts its samples made 8-bit (0 to 255): the CLI says so on one warning
line naming the file, one image and folder alike; --depth native counts the
file's own samples with no warning, and an 8-bit file or no --range gives
none.

usage: test_reduced_depth.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv is not installed (it writes the files).
"""
import os
import subprocess
import sys
import tempfile

from refcheck import fail, finish, need_opencv

cv2, np = need_opencv()

EXE, SAMPLES = sys.argv[1], sys.argv[2]


def run(*args):
    return subprocess.run([EXE, *args], capture_output=True, text=True)


def main():
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "in")
        os.mkdir(d)
        flt = os.path.join(d, "scan.tiff")
        cv2.imwrite(flt, rng.random((64, 80), dtype=np.float32))
        u16 = os.path.join(d, "deep.png")
        cv2.imwrite(u16, rng.integers(0, 65536, (40, 30), dtype=np.uint16))
        u8 = os.path.join(d, "flat.png")
        cv2.imwrite(u8, rng.integers(0, 256, (20, 20), dtype=np.uint8))
        csv = os.path.join(tmp, "h.csv")
        for path, rng_arg, native in ((flt, "0:1", False), (u16, "0:65536", False),
                                      (flt, "0:1", True), (u16, "0:65536", True),
                                      (u8, "0:256", False)):
            args = [path, "--bins", "100", "--range", rng_arg, "--csv", csv]
            r = run(*args, *(["--depth", "native"] if native else []))
            warned = [l for l in r.stderr.splitlines() if l.startswith(f"imghist: warning: {path}:")]
            want = not native and path != u8
            if r.returncode != 0 or len(warned) != int(want):
                fail(f"{os.path.basename(path)} native={native}: exit {r.returncode}, "
                                f"{len(warned)} warnings, want {int(want)}: {r.stderr!r}")
            if native and path == flt:
                with open(csv) as f:
                    total = sum(int(l.split(",")[3]) for l in f.read().splitlines()[1:])
                if total != 64 * 80:
                    fail(f"float [0, 1) counted {total} of {64 * 80} samples")
        r = run(flt, "--csv", csv)
        if "warning" in r.stderr:
            fail(f"no --range, yet a warning: {r.stderr!r}")
        r = run(d, "--bins", "100", "--range", "0:1", "--csv", csv)
        warned = sorted(l.split(": ")[2] for l in r.stderr.splitlines() if "warning:" in l)
        if r.returncode != 0 or warned != sorted([u16, flt]):
            fail(f"folder run: exit {r.returncode}, warnings for {warned}")
    return finish("--range over samples made 8-bit")


if __name__ == "__main__":
    sys.exit(main())
