#!/usr/bin/env python3
"""Batch runs of the imghist CLI over folders, checked against OpenCV.

A nested folder of mixed formats (real photographs from samples/, synthetic
BMP/PNM/GIF/TGA/JPEG images), files that are not images, and corrupt images:
- every equalized output equals OpenCV's equalizeHist of OpenCV's gray image,
  pixel for pixel, in both gray modes (imread + cvtColor(BGR2GRAY), and
  imread(IMREAD_GRAYSCALE) for --gray luma, on the formats where OpenCV's
  IMREAD_GRAYSCALE is what imghist documents: PNG and JPEG);
- -j 1 and -j 3 write byte-identical files (PNGs, CSV, JSON Lines, total);
- the CSV, the JSON Lines and --total agree with the per-image histograms;
- a corrupt image fails alone (exit 1, one line naming it), non-images are
  skipped, an output-name collision and an output that is an input are usage
  errors before any work, an unwritable output sub-folder fails only its
  images, SIGINT mid-run leaves no partial file and exits 130.

usage: test_batch.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv is not installed.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import cv2
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)

EXE, SAMPLES = sys.argv[1], sys.argv[2]
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(*args, **kw):
    return subprocess.run([EXE, *args], capture_output=True, text=True, **kw)


def opencv_gray(path, luma):
    if luma:
        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        assert img is not None, path
        return img
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    assert img is not None, path
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


def make_tree(root):
    """The input folder; returns (images, skipped, corrupt) relative paths."""
    rng = np.random.default_rng(20261123)
    images, skipped, corrupt = [], [], []

    def put(rel, img=None, data=None, ext=None):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if img is not None:
            ok, buf = cv2.imencode(ext or os.path.splitext(rel)[1], img)
            assert ok, rel
            data = buf.tobytes()
        with open(path, "wb") as f:
            f.write(data)
        return rel

    for name in ["moon.png", "camera.png", "coffee.png", "astronaut.png", "hubble_deep_field.jpg"]:
        with open(os.path.join(SAMPLES, name), "rb") as f:
            images.append(put("photos/" + name, data=f.read()))
    coffee = cv2.imread(os.path.join(SAMPLES, "coffee.png"), cv2.IMREAD_COLOR)
    images.append(put("photos/deeper/coffee_q80.jpg", coffee, ext=".jpg"))
    images.append(put("photos/deeper/coffee.bmp", coffee))
    images.append(put("synthetic/noise_odd.ppm",
                      rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)))
    images.append(put("synthetic/constant.pgm", np.full((16, 9), 77, np.uint8)))
    images.append(put("synthetic/multiples_of_32.png",
                      (rng.integers(0, 8, (64, 64), dtype=np.uint8) * 32)))
    images.append(put("synthetic/one_pixel.png", np.array([[200]], np.uint8)))
    # An image without an extension, and one with a misleading one.
    images.append(put("synthetic/noext", coffee[:50, :70], ext=".png"))
    images.append(put("synthetic/actually_png.jpg", coffee[10:60, 5:90], ext=".png"))
    # Not images.
    skipped.append(put("notes.txt", data=b"a text file\n"))
    skipped.append(put("photos/empty", data=b""))
    skipped.append(put("synthetic/data.bin", data=bytes(range(256)) * 4))
    # Images that fail to decode.
    with open(os.path.join(SAMPLES, "coffee.png"), "rb") as f:
        png = f.read()
    corrupt.append(put("photos/truncated.png", data=png[: len(png) // 3]))
    corrupt.append(put("synthetic/bad_header.jpg", data=b"\xff\xd8\xff\xe0garbage" * 3))
    return sorted(images), skipped, sorted(corrupt)


def comparable(rel, luma):
    """Whether OpenCV's gray is imghist's documented result for this file:
    always with BGR2GRAY; with luma, for PNG and JPEG files."""
    if not luma:
        return True
    with open(rel, "rb") as f:
        head = f.read(8)
    return head.startswith(b"\x89PNG") or head.startswith(b"\xff\xd8\xff")


def out_name(rel):
    stem, _ = os.path.splitext(rel)
    if os.path.basename(rel).startswith(".") or "." not in os.path.basename(rel):
        stem = rel
    return stem + ".png"


def read_csv_rows(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return lines


def per_image_hists(csv_lines):
    assert csv_lines[0] == "file,bin,lower,upper,count", csv_lines[0]
    hists = {}
    for line in csv_lines[1:]:
        file, b, lo, hi, count = line.rsplit(",", 4)
        hists.setdefault(file, [0] * 256)[int(b)] = int(count)
        assert int(hi) == int(lo) + 1 == int(b) + 1
    return hists


def batch_run(src, tmp, tag, *extra):
    out = os.path.join(tmp, f"out_{tag}")
    csv, jsonl, total = (os.path.join(tmp, f"{tag}.{x}") for x in ("csv", "jsonl", "total.csv"))
    r = run("-r", src, "--equalize", out, "--csv", csv, "--json", jsonl, "--total", total,
            "--backend", "cpu", *extra)
    return r, out, csv, jsonl, total


def main():
    tmp = tempfile.mkdtemp(prefix="imghist-batch-")
    try:
        src = os.path.join(tmp, "in")
        images, skipped, corrupt = make_tree(src)

        # The run's outputs to a device (written directly): each one alone.
        for opt in ("--csv", "--json", "--total"):
            r = run("-r", "-q", "--backend", "cpu", opt, "/dev/null", src)
            check(r.returncode == 1 and "/dev/null" not in r.stderr,
                  f"{opt} /dev/null: exit {r.returncode} (want 1: the corrupt files), {r.stderr!r}")

        for luma in (False, True):
            mode = ["--gray", "luma"] if luma else []
            runs = {}
            for jobs in ("1", "3"):
                tag = f"{'luma' if luma else 'bgr'}_j{jobs}"
                r, out, csv, jsonl, total = batch_run(src, tmp, tag, "-j", jobs, *mode)
                runs[jobs] = (out, csv, jsonl, total)
                check(r.returncode == 1, f"{tag}: exit {r.returncode} (one or more corrupt)")
                err_lines = r.stderr.splitlines()
                for rel in corrupt:
                    hits = [l for l in err_lines if os.path.join(src, rel) in l]
                    check(len(hits) == 1 and hits[0].startswith("imghist: "),
                          f"{tag}: one error line for {rel}: {hits}")
                summary = err_lines[-1] if err_lines else ""
                check(f"{len(images) + len(corrupt)} images" in summary and
                      f"{len(images)} processed" in summary and
                      f"{len(corrupt)} failed" in summary and
                      f"{len(skipped)} skipped" in summary, f"{tag}: summary line: {summary}")
                # Outputs: every image, nothing else, no temporary files.
                written = sorted(os.path.relpath(os.path.join(d, f), out)
                                 for d, _, fs in os.walk(out) for f in fs)
                check(written == sorted(out_name(rel) for rel in images),
                      f"{tag}: outputs {written}")
                # Against OpenCV.
                for rel in images:
                    path = os.path.join(src, rel)
                    if not comparable(path, luma):
                        continue
                    gray = opencv_gray(path, luma)
                    want = cv2.equalizeHist(gray)
                    got = cv2.imread(os.path.join(out, out_name(rel)), cv2.IMREAD_UNCHANGED)
                    check(got is not None and got.shape == want.shape and
                          np.array_equal(got, want), f"{tag}: {rel} equalized != OpenCV")
                # CSV, JSON Lines and total agree.
                hists = per_image_hists(read_csv_rows(csv))
                check(list(hists) == sorted(hists), f"{tag}: CSV not in sorted order")
                check(sorted(hists) == sorted(os.path.join(src, rel) for rel in images),
                      f"{tag}: CSV files {sorted(hists)}")
                with open(jsonl) as f:
                    objs = [json.loads(line) for line in f]
                check([o["file"] for o in objs] == list(hists), f"{tag}: JSON order")
                for o in objs:
                    h = hists.get(o["file"])
                    check(h == o["histogram"], f"{tag}: JSON histogram of {o['file']}")
                    n = o["width"] * o["height"]
                    check(sum(o["histogram"]) == n, f"{tag}: JSON count of {o['file']}")
                    values = np.repeat(np.arange(256), o["histogram"])
                    check(o["min"] == values.min() and o["max"] == values.max(),
                          f"{tag}: min/max of {o['file']}")
                    check(abs(o["mean"] - values.mean()) < 1e-4 and
                          abs(o["std"] - values.std()) < 1e-4, f"{tag}: mean/std of {o['file']}")
                    if comparable(o["file"], luma):
                        gray = opencv_gray(o["file"], luma)
                        ref = np.bincount(gray.ravel(), minlength=256).tolist()
                        check(ref == o["histogram"], f"{tag}: histogram of {o['file']} != OpenCV")
                tot = read_csv_rows(total)
                check(tot[0] == "bin,lower,upper,count", f"{tag}: total header")
                summed = [sum(h[b] for h in hists.values()) for b in range(256)]
                check([int(l.split(",")[3]) for l in tot[1:]] == summed, f"{tag}: total")
            # -j 1 and -j 3: identical files.
            a, b = runs["1"], runs["3"]
            for rel in images:
                with open(os.path.join(a[0], out_name(rel)), "rb") as f1, \
                        open(os.path.join(b[0], out_name(rel)), "rb") as f2:
                    check(f1.read() == f2.read(), f"-j 1 vs -j 3: {rel}")
            for k in (1, 2, 3):
                with open(a[k], "rb") as f1, open(b[k], "rb") as f2:
                    check(f1.read() == f2.read(), f"-j 1 vs -j 3: {os.path.basename(a[k])}")

        # Without -r only the folder's own files; a file named directly maps
        # to its own name.
        r = run(os.path.join(src, "photos"), os.path.join(src, "synthetic", "constant.pgm"),
                "--equalize", os.path.join(tmp, "flat"), "--backend", "cpu", "-q")
        flat = sorted(os.listdir(os.path.join(tmp, "flat")))
        check(r.returncode == 1 and "deeper" not in flat and "constant.png" in flat and
              "moon.png" in flat, f"no -r: exit {r.returncode}, {flat}")
        check(r.stderr.count("\n") == 1, f"-q prints only the error: {r.stderr!r}")

        # A JPEG that ends early: one failure by default; with --read-truncated
        # it is read as OpenCV reads it, with one warning naming it.
        cutdir = os.path.join(tmp, "cutjpeg")
        os.makedirs(cutdir)
        shutil.copy(os.path.join(SAMPLES, "moon.png"), os.path.join(cutdir, "a.png"))
        with open(os.path.join(SAMPLES, "hubble_deep_field.jpg"), "rb") as f:
            data = f.read()
        cut = os.path.join(cutdir, "b.jpg")
        with open(cut, "wb") as f:
            f.write(data[: len(data) * 2 // 3])
        for flag in ([], ["--read-truncated"]):
            out = os.path.join(tmp, "cut-eq" + "".join(flag))
            r = run(cutdir, "--equalize", out, "--backend", "cpu", *flag)
            lines = [l for l in r.stderr.splitlines() if "b.jpg" in l]
            made = sorted(os.listdir(out)) if os.path.isdir(out) else []
            if flag:
                want = cv2.equalizeHist(opencv_gray(cut, False))
                got = cv2.imread(os.path.join(out, "b.png"), cv2.IMREAD_UNCHANGED)
                check(r.returncode == 0 and made == ["a.png", "b.png"] and len(lines) == 1 and
                      "warning" in lines[0] and "ends early" in lines[0] and
                      got is not None and np.array_equal(got, want),
                      f"--read-truncated: exit {r.returncode}, {made}, {r.stderr!r}")
            else:
                check(r.returncode == 1 and made == ["a.png"] and len(lines) == 1 and
                      "truncated" in lines[0], f"cut JPEG: exit {r.returncode}, {made}, {r.stderr!r}")

        # Collisions and outputs that are inputs: usage errors, nothing written.
        col = os.path.join(tmp, "collide")
        os.makedirs(col)
        shutil.copy(os.path.join(SAMPLES, "moon.png"), os.path.join(col, "a.png"))
        shutil.copy(os.path.join(SAMPLES, "hubble_deep_field.jpg"), os.path.join(col, "a.jpg"))
        r = run(col, "--equalize", os.path.join(tmp, "col_out"))
        check(r.returncode == 2 and "a.jpg" in r.stderr and "a.png" in r.stderr and
              not os.path.exists(os.path.join(tmp, "col_out")), f"collision: {r.stderr}")
        only_jpg = os.path.join(tmp, "self")
        os.makedirs(only_jpg)
        shutil.copy(os.path.join(SAMPLES, "moon.png"), os.path.join(only_jpg, "m.png"))
        with open(os.path.join(only_jpg, "m.png"), "rb") as f:
            before = f.read()
        r = run(only_jpg, "--equalize", only_jpg)
        with open(os.path.join(only_jpg, "m.png"), "rb") as f:
            check(r.returncode == 2 and "overwrite" in r.stderr and f.read() == before,
                  f"output is input: {r.returncode} {r.stderr}")
        r = run(src, "-", "--csv", "x.csv")
        check(r.returncode == 2, f"stdin among several inputs: {r.returncode}")

        # An output sub-folder that cannot be made fails its images only.
        blocked = os.path.join(tmp, "blocked")
        os.makedirs(blocked)
        with open(os.path.join(blocked, "photos"), "w") as f:
            f.write("a file where a folder would go")
        r = run("-r", src, "--equalize", blocked, "--backend", "cpu", "-j", "2")
        made = sorted(os.listdir(os.path.join(blocked, "synthetic")))
        check(r.returncode == 1 and "noise_odd.png" in made, f"blocked: {r.returncode} {made}")
        photo_errors = [l for l in r.stderr.splitlines() if "blocked/photos/" in l]
        check(len(photo_errors) >= 5, f"blocked: one error per photo: {photo_errors}")

        # SIGINT mid-run: exit 130, only complete PNGs, no temporary file,
        # no CSV.
        many = os.path.join(tmp, "many")
        os.makedirs(many)
        big = cv2.resize(cv2.imread(os.path.join(SAMPLES, "astronaut.png")), (1536, 1536))
        ok, buf = cv2.imencode(".png", big)
        for i in range(200):
            with open(os.path.join(many, f"img{i:03d}.png"), "wb") as f:
                f.write(buf.tobytes())
        out = os.path.join(tmp, "many_out")
        csv = os.path.join(tmp, "many.csv")
        p = subprocess.Popen([EXE, many, "--equalize", out, "--csv", csv, "-j", "1",
                              "--backend", "cpu"], stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and (not os.path.isdir(out) or len(os.listdir(out)) < 3):
            time.sleep(0.02)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        names = os.listdir(out) if os.path.isdir(out) else []
        check(p.returncode == 130, f"SIGINT: exit {p.returncode}")
        check("interrupted after" in err, f"SIGINT: summary {err!r}")
        check(0 < len(names) < 200, f"SIGINT: {len(names)} outputs")
        check(all(n.endswith(".png") and not n.startswith(".") for n in names),
              f"SIGINT: temporary files left: {[n for n in names if n.startswith('.')]}")
        for n in names:
            img = cv2.imread(os.path.join(out, n), cv2.IMREAD_UNCHANGED)
            check(img is not None and img.shape == (1536, 1536), f"SIGINT: {n} incomplete")
        check(not os.path.exists(csv) and not [n for n in os.listdir(tmp) if n.startswith(".many")],
              "SIGINT: CSV written or left behind")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if FAILURES:
        print(f"{len(FAILURES)} checks failed")
        return 1
    print("batch runs: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
