#!/usr/bin/env python3
"""imghist against OpenCV, an implementation nobody here wrote.

For real photographs (and a few adversarial synthetic images) the gray
conversion, the histogram and the equalized image must match OpenCV's
calcHist and equalizeHist bit for bit, on the CPU backend and on CUDA where
there is a GPU, in both gray modes: `--gray bgr2gray` against
imread(IMREAD_COLOR) + cvtColor(BGR2GRAY), `--gray luma` against
imread(IMREAD_GRAYSCALE).

usage: test_opencv_ref.py IMGHIST_BINARY SAMPLES_DIR [MAKE_JPEG]
MAKE_JPEG (tests/make_jpeg.c) adds CMYK and YCCK JPEGs and JPEGs with every
EXIF orientation, which cv::imread turns upright.
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

from backends import backends

try:
    import cv2
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"skipping: {e}")
    sys.exit(77)

PHOTOS = ["moon.png", "camera.png", "coffee.png", "astronaut.png", "hubble_deep_field.jpg"]


GRAY_MODES = ("bgr2gray", "luma")


def opencv_gray(path, gray):
    if gray == "luma":
        img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
        if path.endswith(".hdr") and img is not None and img.ndim == 3:
            # OpenCV 4.6 returns an HDR file's IMREAD_GRAYSCALE in 3 channels
            # (grfmt_hdr.cpp means cvtColor(BGR2GRAY); imghist does that).
            img = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        assert img is not None and img.ndim == 2, path
        return img
    img = cv2.imread(path, cv2.IMREAD_COLOR)  # BGR, alpha dropped, gray replicated
    assert img is not None, path
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)


def run_imghist(exe, src, workdir, backend, gray):
    eq = os.path.join(workdir, "eq.png")
    csv = os.path.join(workdir, "hist.csv")
    extra = ["--read-truncated"] if os.path.basename(src).startswith("truncated-") else []
    proc = subprocess.run([exe, src, "--backend", backend, "--gray", gray, "--equalize", eq,
                           "--csv", csv] + extra, capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{src}: imghist exited {proc.returncode}: {proc.stderr.strip()}")
    warned = [l for l in proc.stderr.splitlines() if "warning" in l]
    if extra and (len(warned) != 1 or src not in warned[0] or "ends early" not in warned[0]):
        raise AssertionError(f"{src}: --read-truncated gave no one-line warning: {proc.stderr!r}")
    with open(csv) as f:
        lines = f.read().splitlines()
    assert lines[0] == "bin,lower,upper,count", lines[0]
    counts = np.array([int(l.split(",")[3]) for l in lines[1:]], dtype=np.int64)
    out = cv2.imread(eq, cv2.IMREAD_UNCHANGED)
    return counts, out


def check(exe, src, workdir, backend, mode, label):
    gray = opencv_gray(src, mode)
    want_hist = cv2.calcHist([gray], [0], None, [256], [0, 256]).ravel().astype(np.int64)
    want_eq = cv2.equalizeHist(gray)
    counts, out = run_imghist(exe, src, workdir, backend, mode)
    errors = []
    if not np.array_equal(counts, want_hist):
        errors.append(f"histogram differs in {int(np.count_nonzero(counts != want_hist))} bins")
    if out is None or out.shape != want_eq.shape or out.dtype != np.uint8:
        errors.append(f"equalized output has shape {None if out is None else out.shape}")
    elif not np.array_equal(out, want_eq):
        diff = np.count_nonzero(out != want_eq)
        errors.append(f"equalized image differs in {diff} pixels")
    status = "ok" if not errors else "FAIL: " + "; ".join(errors)
    print(f"{label:32s} {backend:5s} {mode:8s} {gray.shape[1]}x{gray.shape[0]}  {status}")
    return not errors


def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def write_png(path, img, color_type, chunks=(), palette=None):
    """A PNG with the given chunks before the image data (cv2.imwrite writes
    none): img is rows of samples (uint8 or uint16), or of palette indices."""
    h, w = img.shape[:2]
    depth = 16 if img.dtype == np.uint16 else 8
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(
        b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0))
    for kind, body in chunks:
        data += png_chunk(kind, body)
    if palette is not None:
        data += png_chunk(b"PLTE", palette.astype(np.uint8).tobytes())
    rows = img.astype(">u2" if depth == 16 else np.uint8)
    data += png_chunk(b"IDAT", zlib.compress(b"".join(b"\0" + r.tobytes() for r in rows)))
    with open(path, "wb") as f:
        f.write(data + png_chunk(b"IEND", b""))


def exif_orientation(o):
    """An eXIf chunk body: TIFF, big-endian, IFD 0 with Orientation = o."""
    return (b"MM\0\x2a" + struct.pack(">I", 8) + struct.pack(">H", 1) +
            struct.pack(">HHIHH", 0x0112, 3, 1, o, 0) + struct.pack(">I", 0))


def luma_only(workdir, seed):
    """Cases checked in the luma mode only: a PNG's eXIf orientation (OpenCV
    4.6 applies it; the BGR2GRAY mode keeps 0.2's result and does not) and
    16-bit binary PNM (0.2's BGR2GRAY mode kept stb_image's low byte; since
    0.3 both modes keep the high byte, as OpenCV does)."""
    rng = np.random.default_rng(seed + 1)
    photo = cv2.imread(os.path.join(SAMPLES, "coffee.png"), cv2.IMREAD_COLOR)[:150, :230]
    paths = []
    for o in (3, 6, 8):
        p = os.path.join(workdir, f"png-exif-orientation-{o}.png")
        write_png(p, photo[..., ::-1], 2, [(b"eXIf", exif_orientation(o))])
        paths.append(p)
    for name, img in (("gray16.pgm", rng.integers(0, 65536, (29, 41), dtype=np.uint16)),
                      ("rgb16.ppm", rng.integers(0, 65536, (31, 23, 3), dtype=np.uint16))):
        p = os.path.join(workdir, name)
        assert cv2.imwrite(p, img)
        paths.append(p)
    return paths


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
    # Radiance HDR (float, RLE-coded by imwrite): OpenCV scales it linearly
    # to 8 bits, values above 1 saturate; gray modes both use cvtColor.
    cases["float-rgb.hdr"] = (rng.random((37, 61, 3)) * 1.3).astype(np.float32)
    cases["float-dark.hdr"] = (rng.random((20, 133, 3)) * 0.02).astype(np.float32)
    cases["rgb16.png"] = rng.integers(0, 65536, (45, 67, 3), dtype=np.uint16)
    cases["gray16.png"] = rng.integers(0, 65536, (23, 99), dtype=np.uint16)
    paths = []
    for name, img in cases.items():
        p = os.path.join(workdir, name)
        assert cv2.imwrite(p, img)
        paths.append(p)
    # Flat (not run-length) HDR scanlines, written here (Radiance's
    # float-to-RGBE rule: the largest component's frexp).
    rgb = (rng.random((23, 41, 3)) * 1.5).astype(np.float64)
    rgb[0, :5] = 0.0
    top = rgb.max(axis=2)
    mant, expo = np.frexp(top)
    scale = np.where(top > 1e-32, mant * 256.0 / np.where(top > 0, top, 1), 0.0)
    rgbe = np.zeros(rgb.shape[:2] + (4,), np.uint8)
    rgbe[..., :3] = (rgb * scale[..., None]).astype(np.uint8)
    rgbe[..., 3] = np.where(top > 1e-32, expo + 128, 0)
    p = os.path.join(workdir, "float-flat.hdr")
    with open(p, "wb") as f:
        f.write(b"#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 23 +X 41\n" + rgbe.tobytes())
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
    # PNGs with the chunks that make libpng's rgb_to_gray (the luma mode)
    # work in linear light: gAMA, sRGB, sBIT on 16 bits; a palette.
    srgb = [(b"sRGB", b"\0")]
    gama = [(b"gAMA", struct.pack(">I", 45455))]
    rgb = photo[:200, :300, ::-1]
    pngs = {
        "rgb-gama.png": (rgb, 2, gama, None),
        "rgb-srgb.png": (rgb, 2, srgb, None),
        "rgb16-gama-sbit.png": (rng.integers(0, 65536, (40, 53, 3), dtype=np.uint16), 2,
                                gama + [(b"sBIT", b"\x0b\x0c\x0a")], None),
        "rgba-gama.png": (np.dstack([rgb, rng.integers(0, 256, rgb.shape[:2], dtype=np.uint8)]),
                          6, gama, None),
        "palette-gama.png": (rng.integers(0, 256, (61, 45), dtype=np.uint8), 3, gama,
                             rng.integers(0, 256, (256, 3))),
        "gray-gama.png": (cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY), 0, gama, None),
    }
    for name, (img, color_type, chunks, palette) in pngs.items():
        p = os.path.join(workdir, name)
        write_png(p, img, color_type, chunks, palette)
        paths.append(p)
    # The formats OpenCV 4.6 and stb_image both read (stb_image reads TGA,
    # GIF and PSD too, OpenCV none of them).
    for name, img in (("coffee.bmp", photo), ("coffee-gray.bmp", jpegs["coffee-gray.jpg"][0]),
                      ("coffee.ppm", photo), ("coffee-gray.pgm", jpegs["coffee-gray.jpg"][0])):
        p = os.path.join(workdir, name)
        assert cv2.imwrite(p, img)
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


def netpbm(workdir, seed):
    """Netpbm files written here, byte by byte, in the forms imwrite does not
    make: plain (P1-P3) with comments and uneven whitespace, raw PBM (P4) of
    odd widths, maxvals other than 255 (OpenCV 4.6 scales plain 8-bit samples
    to 255 and keeps raw ones as stored), plain samples above maxval, and
    16-bit samples, plain and raw."""
    rng = np.random.default_rng(seed + 2)
    paths = []

    def plain(magic, w, h, maxval, values, per_line=7):
        head = f"{magic}\n# written by test_opencv_ref.py\n{w}  {h}\n"
        if maxval is not None:
            head += f"{maxval}\n"
        nums = [str(int(v)) for v in values.ravel()]
        lines = [" ".join(nums[i:i + per_line]) for i in range(0, len(nums), per_line)]
        return (head + "\n".join(lines) + "\n").encode()

    def add(name, data):
        p = os.path.join(workdir, name)
        with open(p, "wb") as f:
            f.write(data)
        paths.append(p)

    bits = rng.integers(0, 2, (37, 29))
    add("plain-bits.pbm", plain("P1", 29, 37, None, bits, per_line=70))
    add("plain-bits-touching.pbm", b"P1 5 2\n01101\n10010\n")
    for w in (1, 7, 8, 9, 61):
        rows = rng.integers(0, 256, (13, (w + 7) // 8), dtype=np.uint8)
        add(f"raw-bits-{w}.pbm", f"P4\n{w} 13\n".encode() + rows.tobytes())
    for maxval in (1, 7, 100, 255, 1000, 65535):
        # a few samples above maxval: clamped in plain files
        g = rng.integers(0, maxval + 1 + maxval // 8, (19, 23))
        add(f"plain-gray-{maxval}.pgm", plain("P2", 23, 19, maxval, g))
        c = rng.integers(0, maxval + 1, (17, 11, 3))
        add(f"plain-rgb-{maxval}.ppm", plain("P3", 11, 17, maxval, c))
    for maxval in (100, 255):
        g = rng.integers(0, maxval + 1, (21, 33), dtype=np.uint8)
        add(f"raw-gray-{maxval}.pgm", f"P5 33 21 {maxval}\n".encode() + g.tobytes())
        c = rng.integers(0, maxval + 1, (9, 14, 3), dtype=np.uint8)
        add(f"raw-rgb-{maxval}.ppm", f"P6\n14\n9\n{maxval}\n".encode() + c.tobytes())
    for maxval in (300, 4095):
        g = rng.integers(0, maxval + 1, (15, 27)).astype(">u2")
        add(f"raw-gray-{maxval}.pgm", f"P5 27 15 {maxval}\n".encode() + g.tobytes())
    return paths


SAMPLES = None
MAKE_JPEG = None


def truncated_jpegs(exe, samples, workdir):
    """JPEGs cut short: baseline (a photograph), progressive (written by
    OpenCV) and arithmetic-coded (libjpeg-turbo's test image), each cut at a
    third, a half and 40 bytes before its end (the end-of-image marker and the
    last blocks missing). Without --read-truncated each is refused with one
    line and no output; the caller checks that with it imghist reads each as
    OpenCV does. Returns (paths, ok)."""
    photo = os.path.join(samples, "hubble_deep_field.jpg")
    prog = os.path.join(workdir, "progressive.jpg")
    cv2.imwrite(prog, cv2.imread(photo), [cv2.IMWRITE_JPEG_PROGRESSIVE, 1,
                                            cv2.IMWRITE_JPEG_QUALITY, 90])
    ari = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance",
                       "libjpeg-turbo", "testimgari.jpg")
    out, ok = [], True
    for src in (photo, prog, ari):
        data = open(src, "rb").read()
        for cut in (len(data) // 3, len(data) // 2, len(data) - 40):
            path = os.path.join(workdir, f"truncated-{cut}-{os.path.basename(src)}")
            with open(path, "wb") as f:
                f.write(data[:cut])
            csv = os.path.join(workdir, "refused.csv")
            p = subprocess.run([exe, path, "--csv", csv], capture_output=True, text=True)
            good = (p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and
                    path in p.stderr and "truncated" in p.stderr and not os.path.exists(csv))
            print(f"{os.path.basename(path):32s} refused by default: "
                  f"{'ok' if good else 'FAIL: ' + p.stderr.strip()}")
            ok &= good
            out.append(path)
    return out, ok


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
        inputs += netpbm(work, seed)
        luma_inputs = luma_only(work, seed)
        cut_jpegs, good = truncated_jpegs(exe, samples, work)
        inputs += cut_jpegs
        ok &= good
        # Truncated HDR files (run-length and flat) are refused with one line.
        for name in ("float-rgb.hdr", "float-flat.hdr"):
            data = open(os.path.join(work, name), "rb").read()
            cut = os.path.join(work, "cut-" + name)
            with open(cut, "wb") as f:
                f.write(data[:len(data) - 40])
            p = subprocess.run([exe, cut, "--csv", os.path.join(work, "cut.csv")],
                               capture_output=True, text=True)
            good = (p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and
                    "ends early" in p.stderr and not os.path.exists(os.path.join(work, "cut.csv")))
            print(f"{'cut-' + name:32s} refused: {'ok' if good else 'FAIL: ' + p.stderr.strip()}")
            ok &= good
        for backend in backends(exe, samples):
            for mode in GRAY_MODES:
                for src in inputs + (luma_inputs if mode == "luma" else []):
                    ok &= check(exe, src, work, backend, mode, os.path.basename(src))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
