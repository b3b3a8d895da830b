"""imghist.compare and compare_all against cv2.compareHist (bit for bit on
float32 histograms and on counts) and cv2.EMD, on histograms of the sample
images, with empty bins and empty histograms."""
import os

import numpy as np
import pytest

import imghist

try:
    import cv2
except ImportError:  # pragma: no cover
    cv2 = None

needs_cv2 = pytest.mark.skipif(cv2 is None, reason="python3-opencv is missing")

NAMES = ["correlation", "chisqr", "intersect", "bhattacharyya", "chisqr_alt", "kl_div"]
IMAGES = ["astronaut.png", "camera.png", "coffee.png", "moon.png", "hubble_deep_field.jpg"]


# imghist follows OpenCV 4's order and precision of operations
# (docs/compare.md): equal bits there. OpenCV 5 sums in another order and
# takes chi-square's differences in another precision, so against it the
# results are held to float32's precision instead.
EXACT = cv2 is None or int(cv2.__version__.split(".")[0]) < 5


def same(a, b):
    """Equal bits (within 2e-6 relative against OpenCV 5), NaN equal to NaN."""
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    if EXACT or a == b:
        return a == b
    return abs(a - b) <= 2e-6 * max(abs(a), abs(b))


@pytest.fixture(scope="module")
def sample_hists(samples):
    """cv2.calcHist's float32 (bins, 1) histograms of the gray samples at
    256, 64 and 30 bins (30: not a multiple of 4, so the last bins fall
    outside OpenCV's vector part), and imghist's int64 counts of them."""
    out = []
    for bins in (256, 64, 30):
        for name in IMAGES:
            img = cv2.imread(os.path.join(samples, name), cv2.IMREAD_GRAYSCALE)
            cv = cv2.calcHist([img], [0], None, [bins], [0, 256])
            ours = imghist.histogram(img, bins=bins, range=(0, 256))
            np.testing.assert_array_equal(cv.reshape(-1), ours)  # (bins, 1) before OpenCV 5
            out.append((bins, name, cv, ours))
    return out


@needs_cv2
def test_against_cv2_on_samples(sample_hists):
    for bins, n1, c1, o1 in sample_hists:
        for _, n2, c2, o2 in (h for h in sample_hists if h[0] == bins):
            for m, name in enumerate(NAMES):
                want = cv2.compareHist(c1, c2, m)
                for a, b in ((c1, c2), (o1, o2), (c1.reshape(-1), o2)):
                    got = imghist.compare(a, b, name)
                    assert same(got, want), (bins, n1, n2, name, got, want)
                assert same(imghist.compare(o1, o2, m), want)


@needs_cv2
def test_empty_bins_and_sums(rng):
    """Sparse histograms (most bins 0), one histogram all 0, both all 0,
    normalised float histograms: cv2's bits in every case."""
    cases = []
    for bins in (1, 2, 3, 4, 5, 7, 8, 33, 256):
        a = rng.integers(0, 50, bins).astype(np.float32)
        b = rng.integers(0, 50, bins).astype(np.float32)
        a[rng.random(bins) < 0.6] = 0
        b[rng.random(bins) < 0.6] = 0
        z = np.zeros(bins, np.float32)
        cases += [(a, b), (a, z), (z, b), (z, z), (a / max(a.sum(), 1), b / max(b.sum(), 1)),
                  (a * np.float32(1e-20), b)]
    for a, b in cases:
        a, b = a.astype(np.float32), b.astype(np.float32)
        for m, name in enumerate(NAMES):
            want = cv2.compareHist(a, b, m)
            got = imghist.compare(a, b, name)
            assert same(got, want), (a, b, name, got, want)


@needs_cv2
def test_many_and_all(sample_hists):
    hs = np.stack([o for bins, _, _, o in sample_hists if bins == 64] + [np.zeros(64, np.int64)])
    cvs = [h.astype(np.float32) for h in hs]
    for m, name in enumerate(NAMES):
        allp = imghist.compare_all(hs, name)
        assert allp.shape == (len(hs), len(hs)) and allp.dtype == np.float64
        for i in range(len(hs)):
            many = imghist.compare(hs[i], hs, m)
            for j in range(len(hs)):
                want = cv2.compareHist(cvs[i], cvs[j], m)
                assert same(allp[i, j], want), (name, i, j)
                assert same(many[j], want), (name, i, j)


@needs_cv2
def test_emd_is_cv2_emd_l1(sample_hists, rng):
    """EMD of 1-D histograms with |i - j| ground distance: cv2.EMD of the
    normalised signatures (float32 there, so to 1e-5)."""
    hs = [o for bins, _, _, o in sample_hists if bins == 30]
    for _ in range(5):
        x = rng.integers(0, 100, 30)
        x[rng.random(30) < 0.3] = 0
        hs.append(x)
    pos = np.arange(30, dtype=np.float32)
    for a in hs:
        for b in hs:
            sa = np.stack([a / a.sum(), pos], 1).astype(np.float32)
            sb = np.stack([b / b.sum(), pos], 1).astype(np.float32)
            want = cv2.EMD(sa, sb, cv2.DIST_L1)[0]
            got = imghist.compare(a, b, "emd")
            assert abs(got - want) <= 1e-5 * max(1.0, want), (got, want)
    assert np.isnan(imghist.compare(np.zeros(4), np.ones(4), "emd"))


def test_metric_names():
    a, b = np.array([1, 2, 3, 4, 0]), np.array([2, 2, 0, 4, 1])
    assert imghist.compare(a, b, "hellinger") == imghist.compare(a, b, "bhattacharyya")
    assert imghist.compare(a, b, 3) == imghist.compare(a, b, "bhattacharyya")
    assert imghist.compare(a, b, "intersect") == 7.0
    assert imghist.compare(a, b, "chisqr") == 4.0
    assert imghist.compare(a, b, 6) == imghist.compare(a, b, "emd")
    for bad in ("cosine", 7, -1, 2.0, True):
        with pytest.raises((ValueError, TypeError)):
            imghist.compare(a, b, bad)


def test_shapes_and_types():
    a = np.array([1, 2, 3, 4], np.uint8)
    s = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [0, 0, 0, 0]], np.uint16)
    many = imghist.compare(a, s, "intersect")
    np.testing.assert_array_equal(many, [10, 6, 0])
    # A 2-D histogram (cv2's 2-D calcHist) against one of its shape: read flat.
    assert imghist.compare(s, s, "correlation") == 1.0
    with pytest.raises(ValueError):
        imghist.compare(a, s[:, :3])
    with pytest.raises(ValueError):
        imghist.compare(np.array([-1, 2]), np.array([1, 2]))
    with pytest.raises(ValueError):
        imghist.compare_all(np.zeros(5))
    assert imghist.compare_all(np.zeros((0, 4))).shape == (0, 0)
    # float64 is compared in double: no float rounding of the difference.
    x = np.array([1.0 + 2**-40, 1.0])
    y = np.array([1.0, 1.0])
    assert imghist.compare(x, y, "chisqr") > 0
    assert imghist.compare(x.astype(np.float32), y.astype(np.float32), "chisqr") == 0


def test_torch_host():
    torch = pytest.importorskip("torch")
    h = torch.tensor([[1, 2, 3], [3, 2, 1]])
    r = imghist.compare_all(h, "intersect")
    assert isinstance(r, torch.Tensor) and r.tolist() == [[6, 4], [4, 6]]
