#!/usr/bin/env python3
"""imghist's decoders on third-party conformance suites (tests/conformance/):
PngSuite, bmpsuite 2.8 (good g/, questionable q/, bad b/, with its reference
renderings in ref/) and libjpeg-turbo's test images.

Every image file is listed in tests/conformance/expected.tsv with the class it
must have, one of:
  opencv      read, and identical to OpenCV's imread: the gray image in both
              gray modes (IMREAD_COLOR + cvtColor(BGR2GRAY), IMREAD_GRAYSCALE)
              and the colour (channels=True against IMREAD_COLOR); when a
              reference rendering is named, identical to it as well;
  reference   read, and its colour identical to the named reference rendering
              wherever that is not transparent (16-bit renderings reduced
              as round(v * 255 / 65535)); used where OpenCV 4.6 refuses the
              file or reads it wrong (it ignores 32-bit bit masks, for one);
  near        as reference, within the stated number of levels (for a file
              whose suite has no rendering of its own);
  refused     refused: the library raises, and the CLI exits non-zero with one
              line on stderr that names the file and contains the stated
              reason, and writes no output file.
A bmpsuite file's references are the renderings bmpsuite's own page pairs
it with (bmpsuite/references.tsv); every file of bmpsuite's good/ folder must
name one and be identical to it. Each file is also decoded twice and must
come out the same both times. A
file on disk that the list leaves out, or a listed file that is missing,
fails the test, and so does any file that does not have its class. The
table printed at the end counts the classes per suite.

usage: test_conformance.py IMGHIST_EXE CONFORMANCE_DIR [--write]
--write classifies every file anew (OpenCV first, then the references, then
refusal) and rewrites expected.tsv, for review. Needs the imghist Python
package (PYTHONPATH, IMGHIST_NATIVE) and python3-opencv; exits 77 without
OpenCV.
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

import imghist

SUITES = ("pngsuite", "bmpsuite/g", "bmpsuite/q", "bmpsuite/b", "libjpeg-turbo")
IMAGE_EXT = (".png", ".bmp", ".jpg", ".ppm", ".pgm")
# References tried by --write after those bmpsuite pairs the file with
# (stem-0.png: skipped pixels in palette colour 0; stem.png, stem.jpg; the
# picture most bmpsuite files show), for files bmpsuite gives none.
GENERIC_REFS = ("rgb24.png", "rgb24.jpg", "pal8.png", "pal1.png", "rgba32.png")


def bmpsuite_references(root):
    """{"bmpsuite/g/x.bmp": ["bmpsuite/ref/x.png", ...]} from references.tsv."""
    refs = {}
    with open(os.path.join(root, "bmpsuite", "references.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, alts = line.rstrip("\n").split("\t")
            refs[f"bmpsuite/{name}"] = [f"bmpsuite/ref/{a}" for a in alts.split(",")]
    return refs


def files_of(root):
    out = []
    for suite in SUITES:
        d = os.path.join(root, suite)
        for name in sorted(os.listdir(d)):
            if name.lower().endswith(IMAGE_EXT) and not name.startswith("."):
                out.append(f"{suite}/{name}")
    return out


def opencv_read(path, flag):
    try:
        img = cv2.imread(path, flag)
    except cv2.error:
        return None
    return img


def ours(path, **kw):
    try:
        return imghist.load(path, **kw), None
    except imghist.ImghistError as e:
        return None, str(e)


def as_rgb(img):
    """imghist's channels=True image as RGB: gray replicated, alpha dropped."""
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape[2] <= 2:
        return np.repeat(img[:, :, :1], 3, axis=2)
    return img[:, :, :3]


def check_opencv(path):
    """None when imghist and OpenCV agree in every mode, else what differs."""
    color = opencv_read(path, cv2.IMREAD_COLOR)
    gray = opencv_read(path, cv2.IMREAD_GRAYSCALE)
    if color is None or gray is None:
        return "OpenCV does not read it"
    want = {"bgr2gray": cv2.cvtColor(color, cv2.COLOR_BGR2GRAY), "luma": gray}
    for mode, w in want.items():
        got, err = ours(path, gray=mode)
        if got is None:
            return f"imghist refuses it ({err})"
        if got.shape != w.shape or not np.array_equal(got, w):
            n = int(np.count_nonzero(got != w)) if got.shape == w.shape else -1
            return f"gray {mode}: {n} pixels differ from OpenCV"
    got, err = ours(path, channels=True)
    if got is None:
        return f"imghist refuses it with channels ({err})"
    rgb = as_rgb(got)
    w = color[:, :, ::-1]
    if rgb.shape != w.shape or not np.array_equal(rgb, w):
        return "colour differs from OpenCV's IMREAD_COLOR"
    return None


def load_reference(path):
    ref = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    assert ref is not None, path
    if ref.ndim == 2:
        ref = ref[:, :, None]
    if ref.shape[2] == 1:
        ref = np.repeat(ref, 3, axis=2)
    visible = ref[:, :, 3] > 0 if ref.shape[2] == 4 else np.ones(ref.shape[:2], bool)
    rgb = ref[:, :, 2::-1].astype(np.int64)
    if ref.dtype == np.uint16:
        rgb = (rgb * 255 + 32767) // 65535
    return rgb, visible


def check_reference(path, ref_path, tolerance):
    got, err = ours(path, channels=True)
    if got is None:
        return f"imghist refuses it ({err})"
    rgb = as_rgb(got).astype(np.int64)
    ref, visible = load_reference(ref_path)
    if rgb.shape != ref.shape:
        return f"size {rgb.shape} against the reference's {ref.shape}"
    diff = np.abs(rgb - ref).max(axis=2)[visible]
    worst = int(diff.max()) if diff.size else 0
    if worst > tolerance:
        return (f"{int(np.count_nonzero(diff > tolerance))} visible pixels differ from "
                f"{os.path.basename(ref_path)} by up to {worst}")
    return None


def check_refused(exe, path, reason, workdir):
    got, err = ours(path)
    if got is not None:
        return "imghist reads it"
    if reason not in err:
        return f"refused, but for another reason: {err}"
    out = os.path.join(workdir, "out.csv")
    proc = subprocess.run([exe, "-q", path, "--csv", out], capture_output=True, text=True)
    lines = proc.stderr.strip().splitlines()
    if proc.returncode == 0:
        return "the CLI exits 0"
    if len(lines) != 1 or path not in lines[0] or reason not in lines[0]:
        return f"the CLI's message is not one line naming the file and the reason: {lines}"
    if os.path.exists(out):
        return "the CLI left an output file"
    return None


def check_twice(path):
    for kw in ({}, {"gray": "luma"}, {"channels": True, "depth": "native"}):
        a, ea = ours(path, **kw)
        b, eb = ours(path, **kw)
        if (a is None) != (b is None) or ea != eb:
            return f"two loads ({kw}) disagree on success"
        if a is not None and (a.dtype != b.dtype or not np.array_equal(a, b)):
            return f"two loads ({kw}) give different pixels"
    return None


def classify(root, rel, paired):
    """The class --write gives a file."""
    path = os.path.join(root, rel)
    got, err = ours(path)
    if got is None:
        if "(" in err:
            reason = err[err.find("(") + 1:err.rfind(")")]
        else:  # "PATH: reason"
            reason = err[len(path) + 2:] if err.startswith(path + ": ") else err
        return ("refused", reason)
    same = [r for r in paired.get(rel, [])
            if check_reference(path, os.path.join(root, r), 0) is None]
    if check_opencv(path) is None:
        return ("opencv",) + tuple(same[:1])
    if same:
        return ("reference", same[0])
    if rel.startswith("bmpsuite/"):
        stem = os.path.splitext(os.path.basename(rel))[0]
        cands = paired.get(rel) or [f"bmpsuite/ref/{c}" for c in (
            [f"{stem}-0.png", f"{stem}.png", f"{stem}.jpg"] + list(GENERIC_REFS))]
        for tol in (0, 1):
            for ref in cands:
                full = os.path.join(root, ref)
                if os.path.exists(full) and check_reference(path, full, tol) is None:
                    return ("reference", ref) if tol == 0 else ("near", ref, "1")
    return ("differs",)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    exe, root = sys.argv[1], sys.argv[2]
    manifest = os.path.join(root, "expected.tsv")
    files = files_of(root)
    paired = bmpsuite_references(root)
    if "--write" in sys.argv[3:]:
        with open(manifest, "w") as f:
            f.write("# file\tclass\tdetail (see tests/test_conformance.py)\n")
            for rel in files:
                f.write("\t".join((rel,) + classify(root, rel, paired)) + "\n")
        print(f"wrote {manifest}")
        return 0
    expected = {}
    with open(manifest) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            expected[parts[0]] = parts[1:]
    failures = []
    for rel in sorted(set(expected) - set(files)):
        failures.append(f"{rel}: listed in expected.tsv but missing")
    for rel in sorted(set(paired) - set(files)):
        failures.append(f"{rel}: listed in bmpsuite/references.tsv but missing")
    counts = {}
    with tempfile.TemporaryDirectory() as workdir:
        for rel in files:
            suite = rel.rsplit("/", 1)[0]
            row = counts.setdefault(suite, {"files": 0, "opencv": 0, "reference": 0, "near": 0,
                                            "refused": 0, "failed": 0})
            row["files"] += 1
            path = os.path.join(root, rel)
            want = expected.get(rel)
            if want is None:
                problem, kind = "not listed in expected.tsv", None
            else:
                kind = want[0]
                if rel.startswith("bmpsuite/g/") and not (
                        kind in ("opencv", "reference") and len(want) > 1 and
                        want[1] in paired.get(rel, [])):
                    problem = ("a good bmpsuite file must be identical to the rendering "
                               "bmpsuite pairs it with")
                elif kind == "opencv":
                    problem = check_opencv(path)
                    if problem is None and len(want) > 1:
                        problem = check_reference(path, os.path.join(root, want[1]), 0)
                elif kind == "reference":
                    problem = check_reference(path, os.path.join(root, want[1]), 0)
                elif kind == "near":
                    problem = check_reference(path, os.path.join(root, want[1]), int(want[2]))
                elif kind == "refused":
                    problem = check_refused(exe, path, want[1], workdir)
                else:
                    problem = f"class {kind!r} is not allowed"
            if problem is None:
                problem = check_twice(path)
            if problem is None:
                row[kind] += 1
            else:
                row["failed"] += 1
                failures.append(f"{rel} ({kind}): {problem}")
    cols = ("files", "opencv", "reference", "near", "refused", "failed")
    print(f"{'suite':16s}" + "".join(f"{c:>10s}" for c in cols))
    for suite, row in counts.items():
        print(f"{suite:16s}" + "".join(f"{row[c]:10d}" for c in cols))
    for f in failures:
        print("FAIL", f)
    print(f"{sum(r['files'] for r in counts.values())} files, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
