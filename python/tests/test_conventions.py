"""The Python API's conventions against NumPy, scikit-image and OpenCV users'
expectations: colour as a channel axis, 1-D and any-dimensional arrays, the
sample types converted where exact, numpy.histogram's edges and last bin,
float32 histograms equal to NumPy's on the same float32 array."""
import numpy as np
import pytest

import imghist
import imghist.numpy


def u8(rng, *shape):
    return rng.integers(0, 256, shape, dtype=np.uint8)


def test_rgb_is_channels_not_rows(rng):
    x = u8(rng, 20, 30, 3)
    h = imghist.histogram(x)
    assert h.shape == (3, 256)
    for c in range(3):
        np.testing.assert_array_equal(h[c], np.bincount(x[..., c].ravel(), minlength=256))
    hb = imghist.histogram(np.stack([x, x[::-1]]))  # a batch of colour images
    assert hb.shape == (2, 3, 256)
    np.testing.assert_array_equal(hb[0], h)
    rows = imghist.histogram(x, channel_axis=None)  # said outright: 20 images of 30x3
    assert rows.shape == (20, 256)
    # NCHW, as torchvision holds colour: the axis named.
    nchw = np.ascontiguousarray(np.stack([x, x]).transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(imghist.histogram(nchw, channel_axis=1), hb[[0, 0]])
    with pytest.raises(ValueError, match="channel_axis"):
        imghist.histogram(x, channel_axis=1)  # an axis of the image
    with pytest.raises(ValueError, match="channel_axis"):
        imghist.histogram(x, channel_axis="last")


def test_equalize_and_clahe_per_channel(rng):
    cv2 = pytest.importorskip("cv2")
    x = u8(rng, 33, 47, 3)
    e = imghist.equalize(x)
    assert e.shape == x.shape
    for c in range(3):
        np.testing.assert_array_equal(e[..., c], cv2.equalizeHist(np.ascontiguousarray(x[..., c])))
    k = imghist.clahe(x, 2.0, (4, 4))
    cl = cv2.createCLAHE(2.0, (4, 4))
    for c in range(3):
        np.testing.assert_array_equal(k[..., c], cl.apply(np.ascontiguousarray(x[..., c])))
    out = np.empty_like(x)
    assert imghist.equalize(x, out=out) is out
    np.testing.assert_array_equal(out, e)


def test_one_dimensional_and_lists(rng):
    v = u8(rng, 1000)
    np.testing.assert_array_equal(imghist.histogram(v), np.bincount(v, minlength=256))
    np.testing.assert_array_equal(imghist.histogram([1, 2, 2, 300])[:3], [0, 1, 2])
    assert imghist.histogram([1, 2, 2, 300]).shape == (65536,)  # uint16 holds them


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint32, np.uint64])
def test_integers_converted_where_exact(rng, dtype):
    x = rng.integers(0, 128, (17, 23)).astype(dtype)
    np.testing.assert_array_equal(imghist.histogram(x), np.bincount(x.ravel().astype(np.int64),
                                                                    minlength=256))
    if np.iinfo(dtype).min < 0:
        y = x.astype(np.int64) - 60
        c, e = imghist.histogram(y.astype(dtype), 16, return_edges=True)
        wc, we = np.histogram(y.astype(dtype), 16)
        np.testing.assert_array_equal(c, wc)
        np.testing.assert_array_equal(e, we)
        assert e.dtype == np.float64


def test_bool_and_float64(rng):
    b = rng.random((9, 11)) < 0.3
    h = imghist.histogram(b)
    assert h[0] == (~b).sum() and h[1] == b.sum() and h[2:].sum() == 0
    f = rng.integers(0, 1000, (30, 40)).astype(np.float64) / 8  # exact float32 values
    c, e = imghist.histogram(f, 50, return_edges=True)
    wc, we = np.histogram(f, 50)
    np.testing.assert_array_equal(c, wc)
    np.testing.assert_array_equal(e, we)
    assert e.dtype == np.float64


def test_last_bin_is_closed_as_numpy(rng):
    x = np.uint8([[0, 10, 20, 30, 40]])
    c, e = imghist.histogram(x, 4, (0, 40), return_edges=True)
    wc, we = np.histogram(x, 4, (0, 40))
    np.testing.assert_array_equal(c, wc)
    assert c[-1] == 2  # 30 and 40: hi is in the last bin
    np.testing.assert_array_equal(e, we)


def _edge_valued(rng, lo, hi, bins, n):
    """float32 samples on NumPy's float32 edges, one float32 step either side,
    the ends, NaN and infinities, and uniform ones."""
    e = np.linspace(lo, hi, bins + 1).astype(np.float32)
    pick = e[rng.integers(0, bins + 1, n)]
    v = np.concatenate([pick, np.nextafter(pick, np.float32(np.inf)),
                        np.nextafter(pick, np.float32(-np.inf)),
                        rng.uniform(lo, hi, n).astype(np.float32),
                        np.float32([lo, hi, np.nan, np.inf, -np.inf])])
    return v


@pytest.mark.parametrize("lo,hi,bins", [(0, 1, 10), (0, 1, 10000), (-3, 7, 333),
                                        (1000, 1001, 100), (0.1, 0.7, 3), (-1e6, 1e6, 4096),
                                        (1e-3, 2e-3, 77)])
def test_float32_equals_numpy_on_float32(rng, lo, hi, bins):
    x = _edge_valued(rng, lo, hi, bins, 5000)
    c, e = imghist.histogram(x, bins, (lo, hi), return_edges=True)
    wc, we = np.histogram(x, bins, (lo, hi))
    assert e.dtype == np.float32 and we.dtype == np.float32
    np.testing.assert_array_equal(e, we)
    np.testing.assert_array_equal(c, wc)
    # Batched and 2-D, the same counts.
    np.testing.assert_array_equal(imghist.histogram(np.stack([x, x])[:, None], bins, (lo, hi))[1], wc)


@pytest.mark.parametrize("make", [
    lambda r: r.random(200_000, dtype=np.float32),
    lambda r: r.standard_normal(200_000, dtype=np.float32) * 1e3,
    lambda r: np.float32(r.integers(0, 64, 10_000)) * 0.03125,  # multiples of 1/32
    lambda r: np.full(777, 3.25, np.float32),                   # constant
])
@pytest.mark.parametrize("bins", [1, 10, 256, 10000])
def test_float32_default_range_equals_numpy(rng, make, bins):
    x = make(rng)
    c, e = imghist.numpy.histogram(x, bins)
    wc, we = np.histogram(x, bins)
    np.testing.assert_array_equal(e, we)
    np.testing.assert_array_equal(c, wc)
    c2 = imghist.histogram(x.reshape(-1, 1), bins)  # the image API, the same rule
    np.testing.assert_array_equal(c2, wc)


def test_numpy_histogram_drop_in(rng):
    x = rng.standard_normal((31, 29)).astype(np.float32)
    x[3, 4] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        imghist.numpy.histogram(x)
    with pytest.raises(ValueError, match="not finite"):
        np.histogram(x)
    c, e = imghist.numpy.histogram(x, 20, (-1, 1))
    wc, we = np.histogram(x, 20, (-1, 1))
    np.testing.assert_array_equal(c, wc)
    np.testing.assert_array_equal(e, we)
    d = rng.random(1000)  # float64 no float32 holds: NumPy's own
    for args in [(10,), (10, (0.2, 0.4)), ([0, 0.5, 1],)]:
        c, e = imghist.numpy.histogram(d, *args)
        wc, we = np.histogram(d, *args)
        np.testing.assert_array_equal(c, wc)
        np.testing.assert_array_equal(e, we)
    c, e = imghist.numpy.histogram(np.zeros(0, np.float32), 4)
    wc, we = np.histogram(np.zeros(0, np.float32), 4)
    np.testing.assert_array_equal(c, wc)
    np.testing.assert_array_equal(e, we)


def test_match_histograms_channel_axis(rng):
    try:
        from skimage import exposure
    except Exception as e:  # missing, or built for another NumPy
        pytest.skip(f"scikit-image does not import: {e}")
    x = u8(rng, 40, 30, 3)
    r = (u8(rng, 20, 50, 3) // 2 + 64).astype(np.uint8)
    got = imghist.match_histograms(x, r)
    # Each channel as scikit-image matches one channel, rounded (its own
    # channel_axis path stores into uint8, truncating).
    for c in range(3):
        want = np.rint(exposure.match_histograms(x[..., c], r[..., c])).astype(np.uint8)
        np.testing.assert_array_equal(got[..., c], want)
    with pytest.raises(ValueError, match="channels"):
        imghist.match_histograms(x, r[..., :2], channel_axis=-1)


def test_errors_are_subclasses(tmp_path):
    with pytest.raises(imghist.ImghistIOError) as e:
        imghist.load(str(tmp_path / "missing.png"))
    assert isinstance(e.value, OSError) and e.value.status_name
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image at all")
    with pytest.raises(imghist.ImghistDecodeError) as e:
        imghist.load(str(bad))
    assert "bad.png" in str(e.value)
    with pytest.raises(imghist.ImghistArgumentError):
        imghist.histogram(np.zeros((4, 4), np.float32), 10, (5, 1))


def test_package_docstring_lists_every_function():
    doc = imghist.__doc__
    for name in imghist.__all__:
        obj = getattr(imghist, name)
        if callable(obj) and not isinstance(obj, type):
            assert name in doc, name
