#!/usr/bin/env python3
"""Arithmetic-coded progressive JPEGs (written by tests/make_jpeg.c): real
ones load as OpenCV reads them, and a forged size is refused before libjpeg
allocates the coefficients of every block.

- A 512x384 picture loads, equal to OpenCV's IMREAD_GRAYSCALE.
- Flat 4000x3000 and 8192x8192 files (206 bytes each: 0.009 and 0.002 bits
  a block) load: up to 2^20 blocks nothing is refused for its size.
- The 512x384 picture with its header saying 16000x16000 (63 KB for 4
  million blocks) is refused in a few milliseconds and megabytes, before
  libjpeg's 488 MiB of coefficients; so is a flat 9000x9000 file, the
  documented loss.
- Progressive files cut at the start of a scan and closed with an EOI
  (Huffman, from OpenCV, and arithmetic) are refused as truncated: libjpeg
  warns of nothing there, but some coefficients never reach full precision,
  and the rest of the picture would be made up.

usage: test_jpeg_bounds.py IMGHIST MAKE_JPEG
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import resource
import struct
import subprocess
import sys
import tempfile

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()
EXE, MAKE_JPEG = sys.argv[1], sys.argv[2]


def make(tmp, name, kind, w, h):
    path = os.path.join(tmp, name)
    subprocess.run([MAKE_JPEG, path, kind, str(w), str(h), "7"], check=True)
    return path


def histogram(path):
    """(exit status, counts or None, stderr, the run's peak RSS in MiB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = subprocess.run([EXE, path, "--csv", "-", "--backend", "cpu"], capture_output=True,
                       text=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    counts = None
    if r.returncode == 0:
        counts = np.array([int(l.split(",")[3]) for l in r.stdout.splitlines()[1:]])
    # ru_maxrss of children is the largest of them so far (KiB): only a new
    # peak shows; the runs go from small to large where it matters.
    return r.returncode, counts, r.stderr, max(peak, before) / 1024


def main():
    with tempfile.TemporaryDirectory() as tmp:
        pic = make(tmp, "pic.jpg", "arith", 512, 384)
        ref = cv2.imread(pic, cv2.IMREAD_GRAYSCALE)
        check(ref is not None and ref.shape == (384, 512), "OpenCV cannot read the picture")
        rc, counts, err, _ = histogram(pic)
        check(rc == 0 and ref is not None and
              np.array_equal(counts, np.bincount(ref.ravel(), minlength=256)),
              f"pic.jpg: exit {rc} {err.strip()}, or counts differ from OpenCV's image")
        for w, h in ((4000, 3000), (8192, 8192)):
            flat = make(tmp, f"flat{w}.jpg", "arith-flat", w, h)
            rc, counts, err, _ = histogram(flat)
            check(rc == 0 and counts[128] == w * h,
                  f"flat {w}x{h} ({os.path.getsize(flat)} bytes): exit {rc}: {err.strip()}")
        forged = bytearray(open(pic, "rb").read())
        sof = forged.find(b"\xff\xca")
        check(sof > 0, "no SOF10 marker in the arithmetic progressive file")
        struct.pack_into(">HH", forged, sof + 5, 16000, 16000)
        bomb = os.path.join(tmp, "bomb.jpg")
        with open(bomb, "wb") as f:
            f.write(forged)
        rc, _, err, peak = histogram(bomb)
        check(rc == 1 and "under half a bit a block" in err and err.count("\n") == 1,
              f"forged 16000x16000: exit {rc}: {err!r}")
        print(f"forged 16000x16000: exit {rc}, peak of the runs so far {peak:.0f} MiB")
        check(peak < 400, f"the runs reached {peak:.0f} MiB (a 16000x16000 allocation is 488)")
        photo = cv2.imread(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                        "samples", "coffee.png"))
        huffman = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes()
        for what, data in (("Huffman", huffman), ("arithmetic", open(pic, "rb").read())):
            starts = [i for i in range(len(data) - 1) if data[i:i + 2] == b"\xff\xda"]
            check(len(starts) >= 4, f"{what}: {len(starts)} scans")
            cut = os.path.join(tmp, f"cut_{what}.jpg")
            with open(cut, "wb") as f:
                f.write(data[:starts[3]] + b"\xff\xd9")
            rc, _, err, _ = histogram(cut)
            check(rc == 1 and "file is truncated" in err,
                  f"{what} progressive cut before its 4th scan: exit {rc}: {err.strip()}")
        big_flat = make(tmp, "flat9000.jpg", "arith-flat", 9000, 9000)
        rc, _, err, _ = histogram(big_flat)
        check(rc == 1 and "under half a bit a block" in err,
              f"flat 9000x9000: exit {rc}: {err.strip()}")
    return finish("progressive JPEG bounds")


if __name__ == "__main__":
    sys.exit(main())
