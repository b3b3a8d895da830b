"""N-dimensional histograms, colour conversion and back-projection against
OpenCV (cv2.cvtColor, cv2.calcHist, cv2.calcBackProject) and NumPy
(numpy.histogramdd), on the sample photographs and on adversarial data."""
import glob
import os

import numpy as np
import pytest

import imghist

cv2 = pytest.importorskip("cv2")

CODES = {"bgr2hsv": cv2.COLOR_BGR2HSV, "rgb2hsv": cv2.COLOR_RGB2HSV,
         "bgr2hsv_full": cv2.COLOR_BGR2HSV_FULL, "rgb2hsv_full": cv2.COLOR_RGB2HSV_FULL,
         "bgr2lab": cv2.COLOR_BGR2Lab, "rgb2lab": cv2.COLOR_RGB2Lab}


def photos(samples):
    out = []
    for p in sorted(glob.glob(os.path.join(samples, "*.png")) +
                    glob.glob(os.path.join(samples, "*.jpg"))):
        img = cv2.imread(p, cv2.IMREAD_COLOR)
        if img is not None:
            out.append((os.path.basename(p), img))
    assert out, "no sample photographs"
    return out


@pytest.fixture(scope="module")
def all_colours():
    v = np.arange(1 << 24, dtype=np.uint32)
    img = np.stack([(v >> 16) & 255, (v >> 8) & 255, v & 255], -1).astype(np.uint8)
    return img.reshape(4096, 4096, 3)


@pytest.mark.parametrize("code", sorted(CODES))
def test_cvt_color_every_colour(all_colours, code):
    got = imghist.cvt_color(all_colours, code)
    want = cv2.cvtColor(all_colours, CODES[code])
    bad = np.any(got != want, axis=-1)
    assert not bad.any(), (code, all_colours[bad][:4], got[bad][:4], want[bad][:4])


@pytest.mark.parametrize("code", sorted(CODES))
def test_cvt_color_photos_bgra_odd_and_batches(samples, code):
    for name, img in photos(samples):
        assert np.array_equal(imghist.cvt_color(img, code), cv2.cvtColor(img, CODES[code])), name
        bgra = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
        odd = bgra[:, 1:-2]  # strided rows, odd width, 4 channels
        assert np.array_equal(imghist.cvt_color(odd, code),
                              cv2.cvtColor(np.ascontiguousarray(odd), CODES[code])), name
    batch = np.stack([img[:31, :17], img[1:32, 2:19]])
    got = imghist.cvt_color(batch, code)
    assert got.shape == (2, 31, 17, 3)
    for i in range(2):
        assert np.array_equal(got[i], cv2.cvtColor(np.ascontiguousarray(batch[i]), CODES[code]))


def test_hs_histogram_equals_opencv_tutorial(samples):
    # The H-S histogram of OpenCV's histogram tutorial: 30 x 32 bins.
    for name, img in photos(samples):
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        want = cv2.calcHist([hsv], [0, 1], None, [30, 32], [0, 180, 0, 256])
        got = imghist.histogramdd(img, bins=(30, 32), range=[(0, 180), (0, 256)],
                                   channels=(0, 1), space="bgr2hsv", rule="opencv")
        assert got.shape == (30, 32)
        assert np.array_equal(got, want.astype(np.int64)), name


def np_dd(img, bins, rng, channels=None):
    x = img.reshape(-1, img.shape[-1] if img.ndim == 3 else 1)
    if channels is not None:
        x = x[:, list(channels)]
    return np.histogramdd(x, bins=bins, range=rng)[0].astype(np.int64)


def test_rgb_8x8x8_photos_numpy_and_opencv(samples):
    for name, img in photos(samples):
        got = imghist.histogramdd(img, bins=8, range=[(0, 256)] * 3)
        assert np.array_equal(got, np_dd(img, 8, [(0, 256)] * 3)), name
        cv = cv2.calcHist([img], [0, 1, 2], None, [8, 8, 8], [0, 256] * 3).astype(np.int64)
        assert np.array_equal(imghist.histogramdd(img, bins=8, range=[(0, 256)] * 3,
                                                  rule="opencv"), cv), name
        # Lab and HSV_FULL histograms of the converted image
        for code in ("bgr2lab", "bgr2hsv_full"):
            conv = cv2.cvtColor(img, CODES[code])
            got = imghist.histogramdd(img, bins=(5, 7, 9), range=[(0, 256)] * 3, space=code)
            assert np.array_equal(got, np_dd(conv, (5, 7, 9), [(0, 256)] * 3)), (name, code)


def test_opencv_uniform_rule_every_bin_count():
    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    for lo, hi in [(0, 256), (0, 180), (3, 250), (0.5, 200.5), (7.25, 99.75), (-10, 300)]:
        for bins in range(1, 257, 5):
            cv = cv2.calcHist([img], [0], None, [bins], [lo, hi]).ravel().astype(np.int64)
            got = imghist.histogramdd(img, bins=bins, range=[(lo, hi)], rule="opencv")
            assert np.array_equal(got, cv), (lo, hi, bins)
            nb = np.histogramdd(img.reshape(-1, 1), bins=bins, range=[(lo, hi)])[0]
            assert np.array_equal(imghist.histogramdd(img, bins=bins, range=[(lo, hi)]), nb)


def test_rules_differ_where_documented():
    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    a = imghist.histogramdd(img, bins=26, range=[(0, 180)], rule="opencv")
    b = imghist.histogramdd(img, bins=26, range=[(0, 180)])
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("shape", [(1, 1, 3), (1, 7, 3), (13, 1, 3), (5, 11, 3), (3, 9, 4)])
def test_adversarial_shapes_and_constants(rng, shape):
    for img in (np.full(shape, 7, np.uint8), np.zeros(shape, np.uint8),
                np.full(shape, 255, np.uint8), rng.integers(0, 256, shape, dtype=np.uint8)):
        C = shape[-1]
        rg = [(0, 256)] * C
        assert np.array_equal(imghist.histogramdd(img, bins=4, range=rg), np_dd(img, 4, rg))
        cv = cv2.calcHist([img], list(range(C)), None, [4] * C, [0, 256] * C).astype(np.int64)
        assert np.array_equal(imghist.histogramdd(img, bins=4, range=rg, rule="opencv"), cv)
        # NumPy's default range of a constant image: [v - 0.5, v + 0.5]
        f = img.astype(np.float32)
        got = imghist.histogramdd(f, bins=3)
        want = np.histogramdd(f.reshape(-1, C), bins=3)[0].astype(np.int64)
        assert np.array_equal(got, want)


def test_values_on_edges_last_edge_rules():
    # Samples on every edge, the last one included: NumPy closes the last
    # bin, OpenCV's calcHist (and rule='opencv') does not.
    edges = [0.0, 10.0, 100.0, 200.0]
    vals = np.array([0, 9, 10, 99, 100, 199, 200, 255], np.uint8)
    img = np.stack([vals, vals[::-1]], -1).reshape(2, 4, 2)
    got = imghist.histogramdd(img, bins=[edges, edges])
    want = np.histogramdd(img.reshape(-1, 2), bins=[edges, edges])[0].astype(np.int64)
    assert np.array_equal(got, want)
    # OpenCV's non-uniform rule (calcHist_8u's tables: bin i is
    # [ceil(e_i), ceil(e_i+1)), the last edge excluded), which cv2's Python
    # calcHist cannot be asked for: equal to NumPy's but for the last edge.
    ocv = imghist.histogramdd(img, bins=[edges, edges], rule="opencv")
    idx = [np.searchsorted(edges, img.reshape(-1, 2)[:, d], side="right") - 1 for d in range(2)]
    keep = (idx[0] >= 0) & (idx[0] < 3) & (idx[1] >= 0) & (idx[1] < 3)
    ref = np.zeros((3, 3), np.int64)
    np.add.at(ref, (idx[0][keep], idx[1][keep]), 1)
    assert np.array_equal(ocv, ref)
    assert ocv.sum() == want.sum() - 2  # the two samples equal to 200


def test_float_edges_exact(rng):
    e = np.array([-1.5, 0.0, 0.25, 1.0, 3.0])
    vals = np.concatenate([e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf),
                           rng.uniform(-2, 4, 40), [np.nan, np.inf, -np.inf]]).astype(np.float32)
    img = np.stack([vals, vals[::-1], np.roll(vals, 3)], -1).reshape(1, -1, 3)
    got = imghist.histogramdd(img, bins=[e, 3, e], range=[None, (-1, 2), None])
    want = np.histogramdd(img.reshape(-1, 3).astype(np.float64), bins=[e, 3, e],
                          range=[None, (-1, 2), None])[0]
    assert np.array_equal(got, want.astype(np.int64))


def test_uint16_masks_batches_and_four_dims(rng):
    img = rng.integers(0, 65536, (3, 9, 11, 2), dtype=np.uint16)
    got = imghist.histogramdd(img, bins=(6, 5), range=[(0, 65536), (100, 60000)])
    for i in range(3):
        assert np.array_equal(got[i], np_dd(img[i], (6, 5), [(0, 65536), (100, 60000)]))
    rgba = rng.integers(0, 256, (2, 17, 5, 4), dtype=np.uint8)
    mask = rng.integers(0, 2, (17, 5), dtype=np.uint8)
    got = imghist.histogramdd(rgba, bins=(2, 3, 4, 5), range=[(0, 256)] * 4, mask=mask)
    for i in range(2):
        sel = rgba[i][mask != 0]
        want = np.histogramdd(sel, bins=(2, 3, 4, 5), range=[(0, 256)] * 4)[0]
        assert np.array_equal(got[i], want.astype(np.int64))
        cv = cv2.calcHist([rgba[i]], [0, 1, 2, 3], mask, [2, 3, 4, 5], [0, 256] * 4)
        got_cv = imghist.histogramdd(rgba[i], bins=(2, 3, 4, 5), range=[(0, 256)] * 4,
                                     mask=mask, rule="opencv")
        assert np.array_equal(got_cv, cv.astype(np.int64))
    # per-image masks, channels chosen and reordered
    masks = rng.integers(0, 2, (2, 17, 5), dtype=np.uint8)
    got = imghist.histogramdd(rgba, bins=4, range=[(0, 256)] * 2, channels=(3, 1), mask=masks)
    for i in range(2):
        sel = rgba[i][masks[i] != 0][:, [3, 1]]
        assert np.array_equal(got[i], np.histogramdd(sel, bins=4, range=[(0, 256)] * 2)[0])


def test_return_edges_and_errors():
    img = np.zeros((2, 2, 3), np.uint8)
    counts, edges = imghist.histogramdd(img, bins=(2, 3, 4), range=[(0, 256)] * 3,
                                        return_edges=True)
    assert counts.shape == (2, 3, 4) and [len(e) for e in edges] == [3, 4, 5]
    ref = np.histogramdd(img.reshape(-1, 3), bins=(2, 3, 4), range=[(0, 256)] * 3)[1]
    assert all(np.array_equal(a, b) for a, b in zip(edges, ref))
    with pytest.raises(ValueError):
        imghist.histogramdd(img, bins=4, channels=(0, 5))
    with pytest.raises(ValueError):
        imghist.histogramdd(img, bins=[[0, 1, 1, 2]] * 3)  # edges not increasing
    with pytest.raises(ValueError):
        imghist.histogramdd(img.astype(np.float32), space="bgr2hsv")
    with pytest.raises(ValueError):
        imghist.histogramdd(img, bins=(300, 300, 300))  # over 2^24 cells
    with pytest.raises(ValueError):
        imghist.cvt_color(img[..., :2], "bgr2hsv")


def ref_backproject(img, model, lo_hi, scale):
    """calcBackProject's rule in NumPy: OpenCV's uniform bins, the float32
    product, rounded half to even and saturated to uint8. (cv2's Python
    binding cannot take a 3-D histogram back: it reads an (8, 8, 8) array
    as an 8 x 8 image of 8 channels.)"""
    idx, ok = [], np.ones(img.shape[:-1], bool)
    for d, (lo, hi) in enumerate(lo_hi):
        v = img[..., d].astype(np.float64)
        t = model.shape[d] / (hi - lo)
        i = np.clip(np.floor(v * t + (-t * lo)), 0, model.shape[d] - 1).astype(np.int64)
        ok &= (v >= lo) & (v < hi)
        idx.append(i)
    prod = model[tuple(idx)].astype(np.float32) * np.float32(scale)
    return np.where(ok, np.clip(np.rint(prod), 0, 255), 0).astype(np.uint8)


@pytest.mark.parametrize("scale", [1.0, 0.5, 3.7, 255.0 / 1000.0])
def test_backproject_equals_opencv(samples, scale):
    for name, img in photos(samples)[:3]:
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        for ch, bins, rng_ in (([0], [30], [0, 180]), ([0, 1], [30, 32], [0, 180, 0, 256]),
                               ([0, 1, 2], [8, 8, 8], [0, 256] * 3)):
            model = cv2.calcHist([hsv[::2, ::2]], ch, None, bins, rng_)
            pairs = [(rng_[2 * i], rng_[2 * i + 1]) for i in range(len(ch))]
            if len(ch) < 3:
                want = cv2.calcBackProject([hsv], ch, model, rng_, scale)
                assert np.array_equal(ref_backproject(hsv, model.reshape(bins), pairs, scale),
                                      want)
            else:
                want = ref_backproject(hsv, model, pairs, scale)
            got = imghist.backproject(hsv, model, pairs, scale, channels=ch)
            assert np.array_equal(got, want), (name, ch, scale)
            # converted on the fly from BGR
            got2 = imghist.backproject(img, model, pairs, scale, channels=ch, space="bgr2hsv")
            assert np.array_equal(got2, want), (name, ch, scale)


def test_backproject_float_uint16_batches_and_edges(rng):
    f = rng.uniform(-0.2, 1.2, (20, 30)).astype(np.float32)
    model = rng.uniform(0, 2, 10).astype(np.float32)
    want = cv2.calcBackProject([f], [0], model, [0, 1], 2.5)
    assert np.array_equal(imghist.backproject(f, model, [(0, 1)], 2.5), want)
    u = rng.integers(0, 65536, (9, 13), dtype=np.uint16)
    m16 = rng.uniform(0, 300, 16).astype(np.float32)
    want = cv2.calcBackProject([u], [0], m16, [0, 65536], 300.0)
    assert np.array_equal(imghist.backproject(u, m16, [(0, 65536)], 300.0), want)
    batch = rng.integers(0, 256, (3, 8, 7, 3), dtype=np.uint8)
    m3 = rng.uniform(0, 100, (4, 4, 4)).astype(np.float32)
    got = imghist.backproject(batch, m3, [(0, 256)] * 3, 1.5)
    for i in range(3):
        assert np.array_equal(got[i], ref_backproject(batch[i], m3, [(0, 256)] * 3, 1.5))
    m2 = rng.uniform(0, 100, (4, 6)).astype(np.float32)
    got = imghist.backproject(batch, m2, [(0, 256)] * 2, 1.5, channels=(2, 0))
    for i in range(3):
        want = cv2.calcBackProject([batch[i]], [2, 0], m2, [0, 256] * 2, 1.5)
        assert np.array_equal(got[i], want)
    # non-uniform edges: the bins of histogramdd(rule='opencv')
    e = [0, 50, 51, 200, 256]
    m = np.float32([10, 20, 30, 40])
    img = np.arange(256, dtype=np.uint8).reshape(16, 16)
    got = imghist.backproject(img, m, [e], 1.0, uniform=False)
    idx = np.searchsorted(e, img, side="right") - 1
    assert np.array_equal(got, m[idx].astype(np.uint8))


def test_cli_space_csv_and_backproject(samples, tmp_path):
    import subprocess
    exe = os.environ.get("IMGHIST_EXE")
    if not exe:
        pytest.skip("IMGHIST_EXE names no imghist program")
    photo = os.path.join(samples, "astronaut.png")
    csv, png = tmp_path / "hs.csv", tmp_path / "like.png"
    subprocess.run([exe, "--space", "hsv", "--channels", "0,1", "--bins", "30,32", photo,
                    "--csv", str(csv)], check=True)
    rows = np.loadtxt(csv, delimiter=",", skiprows=1, dtype=np.int64)
    assert open(csv).readline() == "h,s,count\n" and rows.shape == (960, 3)
    hsv = cv2.cvtColor(cv2.imread(photo, cv2.IMREAD_COLOR), cv2.COLOR_BGR2HSV)
    want = cv2.calcHist([hsv], [0, 1], None, [30, 32], [0, 180, 0, 256]).astype(np.int64)
    assert np.array_equal(rows[:, 0] * 32 + rows[:, 1], np.arange(960))
    assert np.array_equal(rows[:, 2].reshape(30, 32), want)
    subprocess.run([exe, "--space", "hsv", "--channels", "0,1", "--bins", "30,32",
                    "--backproject", str(csv), str(png), photo], check=True)
    model = (want * (255.0 / want.max())).astype(np.float32)
    bp = cv2.calcBackProject([hsv], [0, 1], model, [0, 180, 0, 256], 1)
    assert np.array_equal(cv2.imread(str(png), cv2.IMREAD_GRAYSCALE), bp)
    bad = subprocess.run([exe, "--space", "hsv", "--channels", "0,1", "--bins", "30",
                          photo], capture_output=True, text=True)
    assert bad.returncode == 2 and "--bins" in bad.stderr
    gone = subprocess.run([exe, "--space", "lab", str(tmp_path / "none.png"), "--backproject",
                           str(csv), str(tmp_path / "x.png")], capture_output=True, text=True)
    assert gone.returncode == 1 and "none.png" in gone.stderr
    assert not (tmp_path / "x.png").exists()


def _gpu_libraries():
    libs = []
    try:
        import torch
        if torch.cuda.is_available():
            libs.append(("torch", lambda x: torch.from_numpy(np.ascontiguousarray(x)).cuda(),
                         lambda y: y.cpu().numpy()))
    except ImportError:
        pass
    try:
        import cupy
        libs.append(("cupy", cupy.asarray, cupy.asnumpy))
    except ImportError:
        pass
    return libs


def _gpu_libraries_or_skip():
    if not imghist.cuda_available():
        pytest.skip("no GPU usable by libimghist (or a build without CUDA)")
    libs = _gpu_libraries()
    if not libs:
        pytest.skip("neither torch with CUDA nor CuPy")
    return libs


def test_gpu_arrays_equal_numpy(samples):
    libs = _gpu_libraries_or_skip()
    imgs = np.stack([img[:96, :128] for _, img in photos(samples)[:3]])
    for name, dev, host in libs:
        d = dev(imgs)
        got = host(imghist.histogramdd(d, bins=(30, 32), range=[(0, 180), (0, 256)],
                                       channels=(0, 1), space="bgr2hsv", rule="opencv"))
        want = imghist.histogramdd(imgs, bins=(30, 32), range=[(0, 180), (0, 256)],
                                   channels=(0, 1), space="bgr2hsv", rule="opencv")
        assert np.array_equal(got, want), name
        got = host(imghist.histogramdd(d, bins=8, range=[(0, 256)] * 3))
        assert np.array_equal(got, imghist.histogramdd(imgs, bins=8, range=[(0, 256)] * 3))
        for code in ("bgr2hsv", "rgb2lab"):
            assert np.array_equal(host(imghist.cvt_color(d, code)),
                                  imghist.cvt_color(imgs, code)), (name, code)


def test_gpu_wide_types_equal_numpy(rng):
    """uint16 and float32 GPU tensors: the GPU's counts are numpy.histogramdd's."""
    libs = _gpu_libraries_or_skip()
    u16 = rng.integers(0, 65536, size=(2, 37, 53, 3), dtype=np.uint16)
    f32 = rng.normal(0, 3, size=(2, 37, 53, 3)).astype(np.float32)
    f32[0, 0, :5, 0] = [np.nan, np.inf, -np.inf, 4.0, -4.0]  # outside or on the edges
    for name, dev, host in libs:
        for img, rng_ in ((u16, [(0, 65536)] * 3), (f32, [(-4, 4)] * 3)):
            got = host(imghist.histogramdd(dev(img), bins=(8, 5, 3), range=rng_))
            for i in range(2):
                want, _ = np.histogramdd(img[i].reshape(-1, 3).astype(np.float64),
                                         bins=(8, 5, 3), range=rng_)
                assert np.array_equal(got[i], want.astype(np.int64)), (name, img.dtype)


def test_gpu_backproject_equals_cpu(samples, rng):
    """imghist.backproject of GPU tensors: on the GPU, a tensor of the same
    library and device, the same bytes as the CPU's (and cv2's)."""
    libs = _gpu_libraries_or_skip()
    imgs = np.stack([img[:96, :128] for _, img in photos(samples)[:3]])
    hsv = np.stack([cv2.cvtColor(i, cv2.COLOR_BGR2HSV) for i in imgs])
    model = cv2.calcHist([hsv[0]], [0, 1], None, [30, 32], [0, 180, 0, 256])
    model[:3] = -1.0  # negative values saturate to 0
    model[3, :5] = 0.5 + np.arange(5)  # half-way products
    hs = [(0, 180), (0, 256)]
    f = rng.uniform(-0.2, 1.2, (2, 20, 31)).astype(np.float32)
    f[0, 0, :4] = [np.nan, np.inf, 0.0, 1.0]
    m10 = rng.uniform(0, 2, 10).astype(np.float32)
    u = rng.integers(0, 65536, (3, 9, 13), dtype=np.uint16)
    m16 = rng.uniform(0, 300, 16).astype(np.float32)
    e = [0, 50, 51, 200, 256]
    m4 = np.float32([10, 20, 30, 40])
    for name, dev, host in libs:
        for scale in (1.0, 3.7, 1000.0):
            got = imghist.backproject(dev(hsv), model, hs, scale, channels=(0, 1))
            assert type(got) is type(dev(hsv[:1])), name
            want = imghist.backproject(hsv, model, hs, scale, channels=(0, 1))
            assert np.array_equal(host(got), want), (name, scale)
            assert np.array_equal(want[1], cv2.calcBackProject([hsv[1]], [0, 1], model,
                                                               [0, 180, 0, 256], scale))
            got = imghist.backproject(dev(imgs), model, hs, scale, channels=(0, 1),
                                      space="bgr2hsv")
            assert np.array_equal(host(got), want), (name, scale, "fused")
        # a tensor as the model; one image; a padded view of a wider tensor
        got = imghist.backproject(dev(hsv[0]), dev(model), hs, 2.0, channels=(0, 1))
        assert np.array_equal(host(got), imghist.backproject(hsv[0], model, hs, 2.0,
                                                             channels=(0, 1)))
        wide = dev(np.ascontiguousarray(np.pad(hsv[0], ((0, 0), (0, 5), (0, 0)))))
        got = imghist.backproject(wide[:, :128], model, hs, 1.0, channels=(0, 1))
        assert np.array_equal(host(got), imghist.backproject(hsv[0], model, hs, 1.0,
                                                             channels=(0, 1)))
        for img, m, r, s in ((f, m10, [(0, 1)], 2.5), (u, m16, [(0, 65536)], 300.0)):
            got = host(imghist.backproject(dev(img), m, r, s))
            want = imghist.backproject(img, m, r, s)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (name, img.dtype)
        got = imghist.backproject(dev(hsv[..., 0]), m4, [e], 1.0, uniform=False)
        assert np.array_equal(host(got), imghist.backproject(hsv[..., 0], m4, [e], 1.0,
                                                             uniform=False))
