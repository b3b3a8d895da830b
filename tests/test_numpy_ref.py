#!/usr/bin/env python3
"""imghist's histograms beyond 8 bits against NumPy, through the CLI.

Images are written with OpenCV (16-bit PNG, 32-bit float TIFF, colour PNG),
read back by imghist, and every histogram is compared with numpy.histogram /
numpy.histogram2d on float64 copies of the same samples: NumPy's edges
(linspace: i * step + lo) and its bin rule (e(i) <= v < e(i+1), the last bin
closed for the default range) are the ones imghist documents.

usage: test_numpy_ref.py IMGHIST SAMPLES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import cv2
except ImportError:  # pragma: no cover
    print("SKIP: python3-opencv is missing")
    sys.exit(77)

EXE, SAMPLES = sys.argv[1], sys.argv[2]
FAILED = []
rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))


def run(*args, ok=True):
    r = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise AssertionError(f"imghist {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr}")
    return r


def check(cond, what):
    if not cond:
        FAILED.append(what)
        print("FAIL:", what)


def json_of(path, *args):
    out = os.path.join(TMP, "out.json")  # never beside the input (samples/ is read-only)
    run(path, "--json", out, *args)
    with open(out) as f:
        return json.loads(f.read())


def compare(tag, got, data, bins, lo, hi):
    """got: imghist's JSON object; data: the samples (any shape)."""
    a = np.asarray(data, dtype=np.float64).ravel()
    want, _ = np.histogram(a[np.isfinite(a)], bins=bins, range=(lo, hi))
    # NumPy's last bin is closed; imghist's is open for an explicit range.
    at_hi = np.count_nonzero(a == hi)
    want[-1] -= at_hi
    hist = np.array(got["histogram"], dtype=np.int64)
    check(hist.shape == want.shape, f"{tag}: {hist.shape} bins, want {want.shape}")
    if hist.shape == want.shape:
        bad = np.nonzero(hist != want)[0]
        check(bad.size == 0, f"{tag}: bins {bad[:5]} differ: {hist[bad[:5]]} vs {want[bad[:5]]}")
    below = np.count_nonzero(a < lo)
    above = np.count_nonzero(a >= hi)
    check(got["below"] == below, f"{tag}: below {got['below']}, want {below}")
    check(got["above"] == above, f"{tag}: above {got['above']}, want {above}")
    check(got["nan"] == np.count_nonzero(np.isnan(a)), f"{tag}: nan {got['nan']}")


def test_8bit_bins_and_ranges(tmp):
    path = os.path.join(SAMPLES, "moon.png")
    gray = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    for bins, lo, hi in [(256, 0, 256), (100, 0, 256), (7, -3.5, 300.25), (16, 64, 128),
                         (3, 10.1, 10.9)]:
        got = json_of(path, "--bins", bins, "--range", f"{lo}:{hi}")
        compare(f"moon.png {bins} bins [{lo},{hi})", got, gray, bins, lo, hi)
        check(got["bins"] == bins and got["range"] == [lo, hi], f"moon.png: bins/range fields")


def test_16bit_png(tmp):
    h, w = 301, 419
    img = (rng.integers(0, 4096, size=(h, w)) << 4).astype(np.uint16)  # 12-bit data
    img[0, :8] = [0, 1, 65535, 65534, 4095, 4096, 32768, 16]
    path = os.path.join(tmp, "u16.png")
    cv2.imwrite(path, img)
    got = json_of(path, "--depth", "native")
    check(got["bins"] == 65536, "16-bit default: 65536 bins")
    compare("u16 natural", got, img, 65536, 0, 65536)
    check(got["min"] == int(img.min()) and got["max"] == int(img.max()), "u16 min/max exact")
    for bins, lo, hi in [(4096, 0, 65536), (1000, 0, 65535), (333, 100.5, 60000.75),
                         (4096, 0, 4096)]:
        got = json_of(path, "--depth", "native", "--bins", bins, "--range", f"{lo}:{hi}")
        compare(f"u16 {bins} bins [{lo},{hi})", got, img, bins, lo, hi)
    # Default depth: >> 8, as OpenCV's IMREAD_COLOR.
    got = json_of(path)
    compare("u16 read as 8-bit", got, img >> 8, 256, 0, 256)

    # 16-bit equalization: OpenCV's formula with 65536 levels, float32 math.
    out = os.path.join(tmp, "u16-eq.png")
    run(path, "--depth", "native", "--equalize", out)
    eq = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    check(eq is not None and eq.dtype == np.uint16, "16-bit equalization writes a 16-bit PNG")
    hist = np.bincount(img.ravel(), minlength=65536)
    first = int(np.nonzero(hist)[0][0])
    scale = np.float32(65535) / np.float32(img.size - hist[first])
    cum = np.cumsum(hist) - hist[first]
    cum[:first + 1] = 0
    lut = np.minimum(np.rint(cum.astype(np.float32) * scale), np.float32(65535)).astype(np.uint16)
    if eq is not None:
        check(np.array_equal(eq, lut[img]), "16-bit equalization equals the formula")


def test_float_tiff(tmp):
    h, w = 257, 311
    img = rng.normal(0.5, 0.2, size=(h, w)).astype(np.float32)
    img[0, :6] = [np.nan, np.inf, -np.inf, 0.0, 1.0, -0.0]
    path = os.path.join(tmp, "f32.tiff")
    if not cv2.imwrite(path, img):
        check(False, "OpenCV could not write a float TIFF")
        return
    back = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    check(np.array_equal(np.isnan(back), np.isnan(img)), "OpenCV's float TIFF keeps NaN")
    got = json_of(path, "--depth", "native")
    finite = img[np.isfinite(img)].astype(np.float64)
    want, _ = np.histogram(finite, bins=256)  # NumPy's default range: closed last bin
    check(got["bins"] == 256, "float default: 256 bins")
    check(got["range"] == [float(finite.min()), float(finite.max())], "float default range")
    check(np.array_equal(np.array(got["histogram"]), want), "float default = numpy.histogram")
    check(got["nan"] == 1 and got["below"] == 1 and got["above"] == 1, "float NaN/-inf/+inf")
    check(got["min"] == float(finite.min()) and got["max"] == float(finite.max()),
          "float min/max exact")
    for bins, lo, hi in [(10000, 0, 1), (10, 0, 1), (7, -0.3, 0.9)]:
        got = json_of(path, "--depth", "native", "--bins", bins, "--range", f"{lo}:{hi}")
        compare(f"f32 {bins} bins [{lo},{hi})", got, img, bins, lo, hi)


def test_mask(tmp):
    path = os.path.join(SAMPLES, "moon.png")
    gray = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    mask = np.zeros_like(gray)
    mask[gray.shape[0] // 4: gray.shape[0] // 2, :] = 255
    mask[::7, ::3] = 1
    mpath = os.path.join(tmp, "mask.png")
    cv2.imwrite(mpath, mask)
    got = json_of(path, "--mask", mpath)
    compare("masked moon.png", got, gray[mask != 0], 256, 0, 256)
    # Equalization with a mask: the LUT from the masked pixels, applied to all.
    out = os.path.join(tmp, "masked-eq.png")
    run(path, "--mask", mpath, "--equalize", out)
    eq = cv2.imread(out, cv2.IMREAD_UNCHANGED)
    hist = np.bincount(gray[mask != 0], minlength=256)
    first = int(np.nonzero(hist)[0][0])
    scale = np.float32(255) / np.float32(hist.sum() - hist[first])
    cum = np.cumsum(hist) - hist[first]
    cum[:first + 1] = 0
    lut = np.minimum(np.rint(cum.astype(np.float32) * scale), 255).astype(np.uint8)
    check(np.array_equal(eq, lut[gray]), "masked equalization: LUT of the masked pixels")
    # An all-zero mask: a clear error, no output file.
    zpath = os.path.join(tmp, "zero.png")
    cv2.imwrite(zpath, np.zeros_like(gray))
    out2 = os.path.join(tmp, "none.png")
    r = run(path, "--mask", zpath, "--equalize", out2, ok=False)
    check(r.returncode == 1 and "mask" in r.stderr and not os.path.exists(out2),
          f"all-zero mask: exit {r.returncode}, {r.stderr.strip()}")
    r = run(path, "--mask", os.path.join(SAMPLES, "coffee.png"), ok=False)
    check(r.returncode == 1 and "mask" in r.stderr, "a mask of another size is refused")


def test_channels(tmp):
    path = os.path.join(SAMPLES, "astronaut.png")
    bgr = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    csv = os.path.join(tmp, "ch.csv")
    run(path, "--channels", "--csv", csv)
    rows = open(csv).read().split("\n")
    check(rows[0] == "bin,lower,upper,r,g,b", f"channel CSV header: {rows[0]}")
    table = np.array([[int(x) for x in r.split(",")] for r in rows[1:] if r])
    for k, c in enumerate((2, 1, 0)):  # r, g, b columns from OpenCV's b, g, r
        want = np.bincount(bgr[:, :, c].ravel(), minlength=256)
        check(np.array_equal(table[:, 3 + k], want), f"channel {'rgb'[k]} counts")


def test_joint(tmp):
    a = cv2.cvtColor(cv2.imread(os.path.join(SAMPLES, "astronaut.png")), cv2.COLOR_BGR2GRAY)
    b = np.clip(a.astype(np.int32) + rng.integers(-20, 21, size=a.shape), 0, 255).astype(np.uint8)
    pa, pb = os.path.join(tmp, "a.png"), os.path.join(tmp, "b.png")
    cv2.imwrite(pa, a)
    cv2.imwrite(pb, b)
    for bins in (256, 64):
        csv, js = os.path.join(tmp, f"j{bins}.csv"), os.path.join(tmp, f"j{bins}.json")
        run(pa, "--joint", pb, "--bins", bins, "--csv", csv, "--json", js)
        want, _, _ = np.histogram2d(a.ravel().astype(np.float64), b.ravel().astype(np.float64),
                                    bins=bins, range=[[0, 256], [0, 256]])
        got = np.zeros((bins, bins))
        for line in open(csv).read().split("\n")[1:]:
            if line:
                i, j, n = map(int, line.split(","))
                got[i, j] = n
        check(np.array_equal(got, want), f"joint {bins}x{bins} = numpy.histogram2d")
        p = want / want.sum()
        pa_, pb_ = p.sum(1), p.sum(0)
        ent = lambda q: -np.sum(q[q > 0] * np.log2(q[q > 0]))
        mi = ent(pa_) + ent(pb_) - ent(p)
        nmi = (ent(pa_) + ent(pb_)) / ent(p)
        obj = json.load(open(js))
        check(abs(obj["mutual_information"] - mi) < 1e-9, f"MI {obj['mutual_information']} vs {mi}")
        check(abs(obj["normalized_mutual_information"] - nmi) < 1e-9, f"NMI vs {nmi}")
    # With itself: MI = H(A).
    js = os.path.join(tmp, "self.json")
    run(pa, "--joint", pa, "--json", js)
    h = np.bincount(a.ravel(), minlength=256) / a.size
    ha = -np.sum(h[h > 0] * np.log2(h[h > 0]))
    check(abs(json.load(open(js))["mutual_information"] - ha) < 1e-9, "MI with itself = entropy")


TMP = None


def main():
    global TMP
    with tempfile.TemporaryDirectory() as tmp:
        TMP = tmp
        for t in (test_8bit_bins_and_ranges, test_16bit_png, test_float_tiff, test_mask,
                  test_channels, test_joint):
            try:
                t(tmp)
            except AssertionError as e:
                check(False, f"{t.__name__}: {e}")
            print(f"{t.__name__}: done")
    if FAILED:
        print(f"{len(FAILED)} checks failed")
        sys.exit(1)
    print("all checks passed")


main()
