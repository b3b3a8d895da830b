#!/usr/bin/env python3
"""Portable float maps against OpenCV's imread.

Inputs: PFMs that OpenCV writes itself (little-endian, scale -1) and PFMs
written here to cover what its writer never makes: big-endian samples,
scales other than 1 (OpenCV divides every sample by |scale|), gray "Pf"
files, 1x1 and odd widths, samples far outside [0, 1], negative ones, NaN
and infinities. For each, in both gray modes:
- imghist.load(depth='native', channels=True) equals imread(IMREAD_UNCHANGED)
  (RGB order against OpenCV's BGR), bit for bit, NaN where OpenCV has NaN;
- imghist.load(depth='native') equals cvtColor(BGR2GRAY) of those floats;
- imghist.load() (8 bits) equals cvtColor(BGR2GRAY) of imread(IMREAD_COLOR);
- the CLI's histogram equals np.bincount of that 8-bit gray image.
Then files that are not PFMs any more (cut short, scale 0 or NaN, no size,
no whitespace after the magic) are refused with one line naming the file,
and a folder run counts a PFM as an image.

usage: test_pfm_ref.py IMGHIST_BINARY
Exits 77 (skipped) when python3-opencv is not installed.
"""
import os
import subprocess
import sys
import tempfile

from refcheck import check, finish, need_opencv

cv2, np = need_opencv()
EXE = sys.argv[1]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))


def write_pfm(path, rgb_top_down, scale, big_endian=False):
    """rgb_top_down: (H, W, 3) or (H, W) float32 rows top to bottom."""
    color = rgb_top_down.ndim == 3
    h, w = rgb_top_down.shape[:2]
    sign = 1 if big_endian else -1
    head = b"PF\n" if color else b"Pf\n"
    head += f"{w} {h}\n{sign * abs(scale)!r}\n".encode()
    data = np.ascontiguousarray(rgb_top_down[::-1]).astype(">f4" if big_endian else "<f4")
    with open(path, "wb") as f:
        f.write(head + data.tobytes())


def inputs(tmp):
    rng = np.random.default_rng(7)
    out = []
    photo = cv2.imread(os.path.join(ROOT, "samples", "coffee.png"), cv2.IMREAD_COLOR)
    bgr = photo.astype(np.float32) * np.float32(1.7) - np.float32(20)
    bgr += rng.standard_normal(bgr.shape).astype(np.float32)
    out.append(os.path.join(tmp, "opencv_written.pfm"))
    cv2.imwrite(out[-1], bgr)
    gray = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY).astype(np.float32) / np.float32(3)
    out.append(os.path.join(tmp, "opencv_gray.pfm"))
    cv2.imwrite(out[-1], gray)
    rgb = (rng.random((37, 91, 3), dtype=np.float32) * 600 - 100).astype(np.float32)
    rgb[0, 0] = [np.nan, np.inf, -np.inf]
    rgb[5, 7] = [0.5, 1.5, 2.5]  # halves: rounded to even in 8 bits
    out.append(os.path.join(tmp, "big_endian_scale2.pfm"))
    write_pfm(out[-1], rgb, 2.5, big_endian=True)
    out.append(os.path.join(tmp, "little_scale0.25.pfm"))
    write_pfm(out[-1], rgb, 0.25)
    out.append(os.path.join(tmp, "one_pixel.pfm"))
    write_pfm(out[-1], np.array([[[3.0, 200.0, 77.5]]], np.float32), 1.0)
    out.append(os.path.join(tmp, "gray_odd_big.pfm"))
    write_pfm(out[-1], (rng.random((3, 5), dtype=np.float32) * 300).astype(np.float32), 1.0,
              big_endian=True)
    return out


def same_floats(a, b):
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def main():
    import imghist
    with tempfile.TemporaryDirectory() as tmp:
        files = inputs(tmp)
        for path in files:
            name = os.path.basename(path)
            ref = cv2.imread(path, cv2.IMREAD_UNCHANGED)
            check(ref is not None, f"{name}: OpenCV {cv2.__version__} does not read it")
            if ref is None:
                continue
            color = ref.ndim == 3
            got = np.asarray(imghist.load(path, depth="native", channels=True))
            want = ref[:, :, ::-1] if color else ref[:, :, None]
            check(got.dtype == np.float32 and same_floats(got, want),
                  f"{name}: native samples differ from imread(IMREAD_UNCHANGED)")
            # OpenCV 4.6 returns a "Pf" file's one channel even for IMREAD_COLOR.
            ref8 = cv2.imread(path, cv2.IMREAD_COLOR)
            gray8 = cv2.cvtColor(ref8, cv2.COLOR_BGR2GRAY) if ref8.ndim == 3 else ref8
            grayf = cv2.cvtColor(ref, cv2.COLOR_BGR2GRAY) if color else ref
            for mode in ("bgr2gray", "luma"):
                g = np.asarray(imghist.load(path, depth="native", gray=mode))
                check(same_floats(g, grayf), f"{name} {mode}: float gray differs from cvtColor")
                g8 = np.asarray(imghist.load(path, gray=mode))
                check(np.array_equal(g8, gray8),
                      f"{name} {mode}: 8-bit gray differs from cvtColor(imread(IMREAD_COLOR)) "
                      f"in {int(np.count_nonzero(g8 != gray8))} pixels")
                r = subprocess.run([EXE, path, "--gray", mode, "--csv", "-", "--backend", "cpu"],
                                   capture_output=True, text=True)
                check(r.returncode == 0, f"{name} {mode}: exit {r.returncode}: {r.stderr}")
                if r.returncode == 0:
                    counts = [int(l.split(",")[3]) for l in r.stdout.splitlines()[1:]]
                    check(counts == np.bincount(gray8.ravel(), minlength=256).tolist(),
                          f"{name} {mode}: the CLI's histogram differs")
        good = open(files[2], "rb").read()
        head_end = good.index(b"\n", good.index(b"\n", 3) + 1) + 1
        bad = {
            "short.pfm": good[:-1],
            "scale0.pfm": good.replace(b"\n2.5\n", b"\n0.0\n", 1),
            "scalenan.pfm": good.replace(b"\n2.5\n", b"\nnan\n", 1),
            "nosize.pfm": b"PF\n91\n2.5\n" + good[head_end:],
            "zerowidth.pfm": good.replace(b"\n91 37\n", b"\n0 37\n", 1),
            "glued.pfm": b"PF91 37\n2.5\n" + good[head_end:],
        }
        check(all(v != good for v in bad.values()), "a refused input equals the good file")
        for name, data in bad.items():
            p = os.path.join(tmp, name)
            with open(p, "wb") as f:
                f.write(data)
            r = subprocess.run([EXE, p, "--csv", "-"], capture_output=True, text=True)
            lines = r.stderr.splitlines()
            check(r.returncode == 1 and len(lines) == 1 and p in lines[0] and r.stdout == "",
                  f"{name}: want exit 1 and one line naming it, got {r.returncode}: {r.stderr!r}")
        folder = os.path.join(tmp, "folder")
        os.mkdir(folder)
        os.rename(files[0], os.path.join(folder, "a.pfm"))
        os.rename(files[5], os.path.join(folder, "b.pfm"))
        r = subprocess.run([EXE, folder, "--csv", "-", "--backend", "cpu"], capture_output=True,
                           text=True)
        rows = r.stdout.splitlines()[1:]
        check(r.returncode == 0 and len({row.split(",")[0] for row in rows}) == 2,
              f"folder of two PFMs: exit {r.returncode}, files {sorted({x.split(',')[0] for x in rows})}")
    return finish(f"PFM against OpenCV {cv2.__version__}")


if __name__ == "__main__":
    sys.exit(main())
