#!/usr/bin/env python3
"""imghist's PNG writer, read back by decoders imghist does not use.

`imghist IN --equalize OUT.png` on adversarial 8-bit gray images (one pixel,
one row, one column, odd widths, constant images, incompressible noise,
flat images with edges, an image large enough to be written in bands) and
on the sample photographs: OpenCV (libpng) and Pillow (its own inflate and
CRC checks) must both read OUT.png back as OpenCV's equalizeHist of the
input, bit for bit. A 16-bit image (written through libpng) too. And
every process writes the same bytes for one input.

usage: test_png_writer.py IMGHIST_BINARY SAMPLES_DIR
Exits 77 (skipped) when python3-opencv or python3-pil is not installed.
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
    from PIL import Image
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)


def synthetic(rng):
    """(name, 8-bit gray image) pairs at the writer's edges."""
    def blocks(h, w):
        y, x = np.mgrid[0:h, 0:w]
        return (((x // 97) * 37 + (y // 61) * 91) & 0xF0).astype(np.uint8)

    def smooth(h, w):
        y, x = np.mgrid[0:h, 0:w]
        base = (x // 7 + y // 5) % 256
        return ((base + rng.integers(0, 4, (h, w))) % 256).astype(np.uint8)

    noise = lambda h, w: rng.integers(0, 256, (h, w), dtype=np.uint8)
    yield "1x1", noise(1, 1)
    yield "1x1-255", np.full((1, 1), 255, np.uint8)
    yield "column", noise(9, 1)
    yield "row", noise(1, 9)
    yield "zeros-column", np.zeros((300, 1), np.uint8)
    yield "const-odd", np.full((77, 333), 200, np.uint8)
    for w in (2, 3, 5, 15, 16, 17, 31, 33, 63, 65, 127, 129):
        yield f"noise-w{w}", noise(7, w)
    yield "noise", noise(999, 1001)
    yield "blocks", blocks(480, 641)
    yield "smooth", smooth(513, 1023)
    yield "banded-blocks", blocks(3600, 4801)  # 17.3 MB: bands
    yield "banded-smooth", smooth(4097, 4099)


def check(exe, src, want, out_dir, name, extra=()):
    out = os.path.join(out_dir, name + ".png")
    r = subprocess.run([exe, src, *extra, "--equalize", out], capture_output=True, text=True)
    assert r.returncode == 0, f"{name}: {r.stderr}"
    got_cv = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    assert got_cv is not None, f"{name}: OpenCV cannot read {out}"
    with Image.open(out) as im:
        im.load()
        got_pil = np.asarray(im)
    for who, got in (("OpenCV", got_cv), ("Pillow", got_pil)):
        assert got.shape == want.shape and got.dtype == want.dtype, \
            f"{name}: {who} reads {got.shape} {got.dtype}, want {want.shape} {want.dtype}"
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)[0]
            raise AssertionError(f"{name}: {who} differs first at {tuple(bad)}")
    return os.path.getsize(out)


def same_bytes_every_process(exe, src, out_dir, name, runs):
    """The PNG of `runs` processes (16 at a time, address-space layouts of
    their own) must be one file, byte for byte."""
    import concurrent.futures
    import hashlib

    def one(k):
        out = os.path.join(out_dir, f"{name}-{k}.png")
        r = subprocess.run([exe, src, "--equalize", out, "-q"], capture_output=True, text=True)
        assert r.returncode == 0, f"{name}: {r.stderr}"
        with open(out, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        os.unlink(out)
        return digest

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        digests = set(pool.map(one, range(runs)))
    assert len(digests) == 1, f"{name}: {len(digests)} different PNGs from {runs} runs"


def main():
    exe, samples = sys.argv[1], sys.argv[2]
    rng = np.random.default_rng(20261128)
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, img in synthetic(rng):
            src = os.path.join(tmp, name + ".pgm")
            assert cv2.imwrite(src, img)
            check(exe, src, cv2.equalizeHist(img), tmp, name)
            n += 1
        for f in sorted(os.listdir(samples)):
            if not f.endswith((".png", ".jpg")):
                continue
            path = os.path.join(samples, f)
            want = cv2.equalizeHist(cv2.imread(path, cv2.IMREAD_GRAYSCALE))
            check(exe, path, want, tmp, "sample-" + f, ("--gray", "luma"))
            n += 1
        # The same bytes from every process: small PngSuite images (ISA-L
        # gave some of them a different stream in about one process in a
        # hundred) and a photograph, deflated by ISA-L.
        suite = os.path.join(os.path.dirname(os.path.abspath(samples)), "tests", "conformance",
                             "pngsuite")
        for name, src, runs in (("s04n3p01", os.path.join(suite, "s04n3p01.png"), 200),
                                ("s06n3p02", os.path.join(suite, "s06n3p02.png"), 200),
                                ("s09i3p02", os.path.join(suite, "s09i3p02.png"), 200),
                                ("moon", os.path.join(samples, "moon.png"), 48)):
            same_bytes_every_process(exe, src, tmp, name, runs)
            n += 1
        # 16-bit samples go through libpng; the pixels must come back too.
        img16 = rng.integers(0, 65536, (37, 53), dtype=np.uint16)
        src = os.path.join(tmp, "u16.png")
        assert cv2.imwrite(src, img16)
        out = os.path.join(tmp, "u16-eq.png")
        r = subprocess.run([exe, src, "--depth", "native", "--equalize", out],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        a = cv2.imread(out, cv2.IMREAD_UNCHANGED)
        with Image.open(out) as im:
            b = np.asarray(im.convert("I")).astype(np.uint16)
        assert a.dtype == np.uint16 and np.array_equal(a, b), "16-bit: OpenCV and Pillow differ"
        n += 1
    print(f"{n} images: OpenCV and Pillow read imghist's PNGs back as equalizeHist's pixels")


if __name__ == "__main__":
    main()
