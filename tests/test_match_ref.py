"""--match REF against scikit-image's match_histograms (rounded half to even
with np.rint to uint8): the sample photographs onto one another, synthetic
pairs (constant source, constant reference, two levels, noise, 1x1, odd
sizes), a reference given as the CSV imghist writes; and the refusals.

usage: test_match_ref.py IMGHIST SAMPLES_DIR   (exit 77 without scikit-image)
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
    from skimage.exposure import match_histograms
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(77)


def gray(path):
    """The gray image imghist reads by default (imread + BGR2GRAY)."""
    return cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True)


def check(exe, work, src, ref, label, ref_arg=None):
    """imghist's matched output against scikit-image's; returns True when equal."""
    s_path = os.path.join(work, "src.png")
    r_path = os.path.join(work, "ref.png")
    out = os.path.join(work, "out.png")
    assert cv2.imwrite(s_path, src) and cv2.imwrite(r_path, ref)
    p = run(exe, s_path, "--match", ref_arg or r_path, "--equalize", out)
    if p.returncode != 0:
        print(f"{label:40s} FAIL: exit {p.returncode}: {p.stderr.strip()}")
        return False
    got = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    want = np.rint(match_histograms(src, ref)).astype(np.uint8)
    ok = got is not None and got.shape == want.shape and np.array_equal(got, want)
    diff = "" if ok or got is None or got.shape != want.shape else \
        f": {int(np.count_nonzero(got != want))} pixels differ"
    print(f"{label:40s} {'ok' if ok else 'FAIL' + diff}")
    return ok


def main():
    exe, samples = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(int(os.environ.get("IMGHIST_TEST_SEED", "7")))
    ok = True
    with tempfile.TemporaryDirectory() as work:
        photos = [gray(os.path.join(samples, p)) for p in
                  ("moon.png", "camera.png", "coffee.png", "astronaut.png")]
        for i, a in enumerate(photos):
            b = photos[(i + 1) % len(photos)]
            ok &= check(exe, work, a, b, f"photo {i} onto photo {(i + 1) % len(photos)}")
        cases = {
            "constant source": (np.full((33, 47), 90, np.uint8), photos[1]),
            "constant reference": (photos[0], np.full((8, 9), 17, np.uint8)),
            "two levels onto noise": (np.where(rng.random((64, 81)) < 0.3, 12, 240).astype(np.uint8),
                                      rng.integers(0, 256, (50, 70), dtype=np.uint8)),
            "noise onto two levels": (rng.integers(0, 256, (50, 70), dtype=np.uint8),
                                      np.where(rng.random((9, 9)) < 0.5, 3, 200).astype(np.uint8)),
            "1x1 onto photo": (np.array([[201]], np.uint8), photos[2]),
            "odd sizes, narrow bands": (rng.integers(100, 104, (333, 127), dtype=np.uint8),
                                        rng.integers(20, 60, (17, 5), dtype=np.uint8)),
        }
        for label, (a, b) in cases.items():
            ok &= check(exe, work, a, b, label)
        # A reference given as imghist's own histogram CSV.
        ref_png = os.path.join(work, "refcsv.png")
        ref_csv = os.path.join(work, "ref.csv")
        assert cv2.imwrite(ref_png, photos[3])
        assert run(exe, ref_png, "--csv", ref_csv).returncode == 0
        ok &= check(exe, work, photos[0], photos[3], "reference as CSV", ref_arg=ref_csv)
        # Refusals: one line, non-zero exit, no output file.
        src = os.path.join(work, "src.png")
        out = os.path.join(work, "refused.png")
        bad_csv = os.path.join(work, "bad.csv")
        with open(bad_csv, "w") as f:
            f.write("bin,lower,upper,count\n0,0,1,5\n")
        empty_csv = os.path.join(work, "empty.csv")
        with open(empty_csv, "w") as f:
            f.write("bin,lower,upper,count\n" +
                    "".join(f"{i},{i},{i + 1},0\n" for i in range(256)))
        refusals = {
            "without --equalize": ([src, "--match", ref_png], "--match"),
            "with --mask": ([src, "--match", ref_png, "--mask", src, "--equalize", out], "--match"),
            "short CSV": ([src, "--match", bad_csv, "--equalize", out], "256-row"),
            "empty CSV": ([src, "--match", empty_csv, "--equalize", out], "empty"),
            "missing reference": ([src, "--match", os.path.join(work, "nope.png"), "--equalize",
                                   out], "nope.png"),
        }
        for label, (args, why) in refusals.items():
            p = run(exe, *args)
            good = (p.returncode != 0 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1
                    and not os.path.exists(out))
            print(f"{'refuses ' + label:40s} {'ok' if good else 'FAIL: ' + p.stderr.strip()}")
            ok &= good
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
