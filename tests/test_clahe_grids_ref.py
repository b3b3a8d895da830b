#!/usr/bin/env python3
"""The library's CLAHE (through the Python package) against OpenCV's
createCLAHE(clip, tiles).apply(), bit for bit, on large grids: sides above
256, grids with more tiles than the image has pixels (a
side, or both), grids one tile short or past the size, 1x1 and thin images,
8-bit and 16-bit; and batches (N, H, W), in place and not, against OpenCV
image by image. On the cpu backend, and on CUDA (host arrays through a CUDA
context) where a GPU answers.

usage: test_clahe_grids_ref.py   (IMGHIST_NATIVE names the built binding)
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import sys

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import imghist  # noqa: E402


def backends():
    try:
        imghist.clahe(np.zeros((2, 2), np.uint8), backend="cuda")
        return ("cpu", "cuda")
    except Exception:  # no GPU, or a build without CUDA
        return ("cpu",)


def grids(h, w, wide):
    """Grids (columns, rows) around and past the image's size; for 16-bit
    images (wide) only those OpenCV has the memory for (65536 levels a
    tile in its tables)."""
    out = [(257, 1), (1, 300), (w, h), (w + 1, h + 1), (w - 1 or 1, h + 2), (2 * w + 3, h),
           (w, 3 * h + 1), (300, 300), (1000, 2), (9, 1000), (4096, 3)]
    return [t for t in out if not wide or t[0] * t[1] <= 2048]


def images(rng):
    cam = cv2.imread(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples",
                                  "camera.png"), cv2.IMREAD_GRAYSCALE)
    out = [
        ("random-37x53", rng.integers(0, 256, (37, 53), dtype=np.uint8)),
        ("1x1", np.array([[201]], np.uint8)),
        ("1x9", rng.integers(0, 256, (1, 9), dtype=np.uint8)),
        ("7x1", rng.integers(0, 256, (7, 1), dtype=np.uint8)),
        ("constant-20x31", np.full((20, 31), 77, np.uint8)),
        ("ramp-64x48", np.tile(np.arange(48, dtype=np.uint8) * 5, (64, 1))),
        ("u16-random-29x41", rng.integers(0, 65536, (29, 41), dtype=np.uint16)),
        ("u16-1x1", np.array([[4097]], np.uint16)),
    ]
    if cam is not None:
        out.append(("camera-crop-101x203", np.ascontiguousarray(cam[50:151, 100:303])))
        out.append(("camera", cam))
    return out


def same(got, want):
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def main():
    seed = int(os.environ.get("IMGHIST_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"OpenCV {cv2.__version__}, seed {seed}")
    rng = np.random.default_rng(seed)
    on = backends()
    print("backends:", ", ".join(on))
    for name, img in images(rng):
        h, w = img.shape
        wide = img.dtype == np.uint16
        sets = grids(h, w, wide)
        if name == "camera":
            sets = [(300, 300), (257, 2), (511, 512)]
        for clip in (40.0, 0.0, 2.5):
            for tiles in sets:
                want = cv2.createCLAHE(clip, tiles).apply(img)
                for b in on:
                    got = imghist.clahe(img, clip, tiles, backend=b)
                    check(same(got, want),
                          f"{name} clip {clip} tiles {tiles} {b}: "
                          f"{int(np.count_nonzero(got != want))} pixels differ")
    # Batches: (N, H, W) at once, against OpenCV image by image; odd sizes,
    # a big grid and a grid past the size; in place through out=.
    for n, h, w, dtype, tiles in ((1, 9, 13, np.uint8, (8, 8)), (2, 31, 17, np.uint8, (300, 2)),
                                  (3, 40, 64, np.uint16, (5, 7)), (17, 11, 23, np.uint8, (24, 12)),
                                  (5, 6, 5, np.uint16, (7, 9))):
        top = 256 if dtype == np.uint8 else 65536
        x = rng.integers(0, top, (n, h, w), dtype=dtype)
        want = np.stack([cv2.createCLAHE(40.0, tiles).apply(im) for im in x])
        for b in on:
            check(same(imghist.clahe(x, 40.0, tiles, backend=b), want),
                  f"batch {n}x{h}x{w} {np.dtype(dtype).name} tiles {tiles} {b}")
            y = x.copy()
            imghist.clahe(y, 40.0, tiles, out=y, backend=b)
            check(same(y, want), f"batch {n}x{h}x{w} in place tiles {tiles} {b}")
    # Refusals: a side of 0 tiles.
    for b in on:
        try:
            imghist.clahe(np.zeros((4, 4), np.uint8), 40.0, (0, 8), backend=b)
            check(False, f"tiles (0, 8) accepted on {b}")
        except Exception as e:  # the library's refusal, whatever the wrapper raises
            check("tile grid" in str(e) or "tiles" in str(e), f"tiles (0, 8) on {b}: {e}")
    return finish("CLAHE grids against OpenCV")


if __name__ == "__main__":
    sys.exit(main())
