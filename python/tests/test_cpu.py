"""imghist's Python package on NumPy arrays (the CPU backend) against NumPy,
OpenCV and Pillow."""
import os
import subprocess
import threading
import warnings

import numpy as np
import pytest

import imghist
import reference as ref

try:
    import cv2
except ImportError:  # pragma: no cover
    cv2 = None

needs_cv2 = pytest.mark.skipif(cv2 is None, reason="python3-opencv is missing")


def u8(rng, *shape):
    return rng.integers(0, 256, shape, dtype=np.uint8)


# ---- histogram ----

def test_version_and_devices():
    assert imghist.__version__.count(".") == 2
    assert isinstance(imghist.device_count(), int)
    assert imghist.cuda_available() == (imghist.device_count() > 0)


def test_u8_natural(rng):
    x = u8(rng, 123, 77)
    h = imghist.histogram(x)
    assert h.dtype == np.int64 and h.shape == (256,)
    np.testing.assert_array_equal(h, ref.natural(x, 256))


@pytest.mark.parametrize("make", [
    lambda x: x[5:100, 3:60],          # pitched rows
    lambda x: x[::2, ::3],             # strided columns: copied
    lambda x: x.T,                     # transposed: copied
    lambda x: np.asfortranarray(x),
    lambda x: x[::-1, ::-1],           # negative strides: copied
    lambda x: x[:1],                   # one row
    lambda x: x[:, :1],                # one column
])
def test_u8_layouts(rng, make):
    y = make(u8(rng, 120, 90))
    np.testing.assert_array_equal(imghist.histogram(y), ref.natural(y, 256))


def test_list_input():
    np.testing.assert_array_equal(imghist.histogram(np.array([[1, 2], [2, 3]], np.uint8))[:4],
                                  [0, 1, 2, 1])


@pytest.mark.parametrize("bins,lo,hi", [(100, 0, 256), (7, -3.5, 300.25), (16, 64, 128),
                                        (3, 10.1, 10.9), (1, 0, 255)])
def test_u8_bins_ranges(rng, bins, lo, hi):
    x = u8(rng, 64, 64)
    x[0, 0] = 255
    got, extra = imghist.histogram(x, bins, (lo, hi), outliers=True)
    want, wextra = ref.hist(x, bins, lo, hi)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(extra, wextra)


def test_u8_bins_only_spans_levels(rng):
    x = u8(rng, 50, 50)
    np.testing.assert_array_equal(imghist.histogram(x, 64), ref.hist(x, 64, 0, 256)[0])


def test_u16(rng):
    x = rng.integers(0, 65536, (70, 90), dtype=np.uint16)
    h = imghist.histogram(x)
    assert h.shape == (65536,)
    np.testing.assert_array_equal(h, ref.natural(x, 65536))
    np.testing.assert_array_equal(imghist.histogram(x, 1000, (100, 60000)),
                                  ref.hist(x, 1000, 100, 60000)[0])
    np.testing.assert_array_equal(imghist.histogram(x, 256), ref.hist(x, 256, 0, 65536)[0])


def test_f32_default_range_is_numpys(rng):
    x = ref.floats(rng, (80, 60))
    got, extra = imghist.histogram(x, outliers=True)
    fin = x[np.isfinite(x)].astype(np.float64)
    want, _ = np.histogram(fin, bins=256)  # NumPy's own default range, last bin closed
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(extra, [1, 1, 2])
    np.testing.assert_array_equal(imghist.histogram(x, 17), np.histogram(fin, 17)[0])


def test_f32_explicit_range(rng):
    x = ref.floats(rng, (80, 60))
    x[1, 1] = 50.0  # exactly hi
    got, extra = imghist.histogram(x, 33, (-120.5, 50.0), outliers=True)
    want, wextra = ref.hist(x, 33, -120.5, 50.0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(extra, wextra)


def test_f32_constant_and_empty():
    x = np.full((5, 5), 3.0, np.float32)
    np.testing.assert_array_equal(imghist.histogram(x, 10), np.histogram(x, 10)[0])
    nan = np.full((3, 3), np.nan, np.float32)
    with pytest.raises(ValueError, match="finite"):
        imghist.histogram(nan)
    np.testing.assert_array_equal(imghist.histogram(nan, 4, (0, 1)), [0, 0, 0, 0])
    assert imghist.histogram(np.zeros((0, 4), np.float32), 8).tolist() == [0] * 8
    assert imghist.histogram(np.zeros((0, 4), np.uint8)).sum() == 0


def test_batch(rng):
    x = u8(rng, 5, 31, 47)
    h = imghist.histogram(x)
    assert h.shape == (5, 256)
    for i in range(5):
        np.testing.assert_array_equal(h[i], ref.natural(x[i], 256))
    y = x[::2, 3:, :40]  # strided batch, pitched rows
    hy = imghist.histogram(y, 10, (0, 200))
    for i in range(y.shape[0]):
        np.testing.assert_array_equal(hy[i], ref.hist(y[i], 10, 0, 200)[0])
    z = u8(rng, 2, 3, 8, 9)  # any leading dimensions
    hz = imghist.histogram(z)
    assert hz.shape == (2, 3, 256)
    np.testing.assert_array_equal(hz[1, 2], ref.natural(z[1, 2], 256))
    assert imghist.histogram(np.zeros((0, 4, 4), np.uint8), channel_axis=None).shape == (0, 256)


def test_batch_float_range_is_shared(rng):
    x = ref.floats(rng, (3, 20, 30))
    h = imghist.histogram(x, 50)
    fin = x[np.isfinite(x)].astype(np.float64)
    lo, hi = fin.min(), fin.max()
    for i in range(3):
        np.testing.assert_array_equal(h[i], ref.hist(x[i], 50, lo, hi)[0])


def test_channels(rng):
    x = u8(rng, 40, 30, 3)
    h = imghist.histogram(x, channel_axis=-1)
    assert h.shape == (3, 256)
    for c in range(3):
        np.testing.assert_array_equal(h[c], ref.natural(x[..., c], 256))
    b = rng.integers(0, 65536, (2, 10, 12, 4), dtype=np.uint16)
    hb, extra = imghist.histogram(b, 16, (0, 50000), channel_axis=-1, outliers=True)
    assert hb.shape == (2, 4, 16) and extra.shape == (2, 4, 3)
    for n in range(2):
        for c in range(4):
            w, we = ref.hist(b[n, ..., c], 16, 0, 50000)
            np.testing.assert_array_equal(hb[n, c], w)
            np.testing.assert_array_equal(extra[n, c], we)
    planar = np.ascontiguousarray(x.transpose(2, 0, 1)).transpose(1, 2, 0)  # copied
    np.testing.assert_array_equal(imghist.histogram(planar, channel_axis=-1), h)
    five = u8(rng, 4, 4, 5)  # more than 4 channels: counted as planes
    h5 = imghist.histogram(five, channel_axis=-1)
    assert h5.shape == (5, 256)
    for c in range(5):
        np.testing.assert_array_equal(h5[c], ref.natural(five[..., c], 256))


def test_masks(rng):
    x = u8(rng, 60, 50)
    m = rng.random((60, 50)) < 0.3
    np.testing.assert_array_equal(imghist.histogram(x, mask=m), ref.natural(x[m], 256))
    np.testing.assert_array_equal(imghist.histogram(x, mask=m.astype(np.uint8) * 7),
                                  ref.natural(x[m], 256))
    f = ref.floats(rng, (60, 50))
    fin = f[m & np.isfinite(f)].astype(np.float64)
    np.testing.assert_array_equal(imghist.histogram(f, 20, mask=m), np.histogram(fin, 20)[0])
    b = u8(rng, 3, 60, 50)
    mb = rng.random((3, 60, 50)) < 0.5
    hb = imghist.histogram(b, mask=mb)
    hs = imghist.histogram(b, mask=m)  # one mask for every image
    for i in range(3):
        np.testing.assert_array_equal(hb[i], ref.natural(b[i][mb[i]], 256))
        np.testing.assert_array_equal(hs[i], ref.natural(b[i][m], 256))
    with pytest.raises(ValueError, match="mask"):
        imghist.histogram(x, mask=m[:10])
    with pytest.raises(TypeError, match="mask"):
        imghist.histogram(x, mask=m.astype(np.float32))


def test_masked_batches(rng):
    # A batch with its masks is one call (0.3.8): tensors (strided), layouts
    # that are not one stride apart (views), channels, 16-bit and floats.
    b4 = u8(rng, 2, 3, 40, 30)[:, ::2]  # lead (2, 2): not one stride
    m4 = rng.random((2, 3, 40, 30)) < 0.4
    m4s = m4[:, ::2]
    h = imghist.histogram(b4, mask=m4s)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(h[i, j], ref.natural(b4[i, j][m4s[i, j]], 256))
    c = u8(rng, 5, 30, 20, 3)
    mc = rng.random((5, 30, 20)) < 0.6
    hc = imghist.histogram(c, mask=mc, channel_axis=-1)
    for i in range(5):
        for k in range(3):
            np.testing.assert_array_equal(hc[i, k], ref.natural(c[i, :, :, k][mc[i]], 256))
    w = rng.integers(0, 65536, (4, 33, 17), dtype=np.uint16)
    mw = rng.random((33, 17)) < 0.5  # one mask for all
    hw = imghist.histogram(w, 100, (0, 65536), mask=mw)
    for i in range(4):
        np.testing.assert_array_equal(hw[i], np.histogram(w[i][mw], 100, (0, 65536))[0])
    f = rng.random((3, 25, 25), dtype=np.float32)
    mf = rng.random((3, 25, 25)) < 0.5
    hf = imghist.histogram(f, 10, (0, 1), mask=mf)
    for i in range(3):
        np.testing.assert_array_equal(hf[i], np.histogram(f[i][mf[i]], 10, (0, 1))[0])


def test_histogram_out(rng):
    """out= (0.3.9): filled and returned, the same counts as a new array, with
    outliers one buffer; wrong dtype, shape, layout or kind refused."""
    x16 = (rng.beta(2, 5, (3, 20, 30)) * 65535).astype(np.uint16)
    out = np.full((3, 65536), -7, np.int64)
    got = imghist.histogram(x16, out=out)
    assert got is out
    np.testing.assert_array_equal(out, imghist.histogram(x16))
    x8 = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
    out = np.full((3, 16 + 3), -7, np.int64)
    counts, extra = imghist.histogram(x8, 16, (10, 200), channel_axis=-1, outliers=True, out=out)
    want_c, want_e = imghist.histogram(x8, 16, (10, 200), channel_axis=-1, outliers=True)
    np.testing.assert_array_equal(counts, want_c)
    np.testing.assert_array_equal(extra, want_e)
    assert np.shares_memory(counts, out) and np.shares_memory(extra, out)
    m = rng.random((40, 50)) < 0.5
    out = np.zeros(256, np.int64)
    imghist.histogram(x8[..., 0], mask=m, out=out)
    np.testing.assert_array_equal(out, ref.natural(x8[..., 0][m], 256))
    out = np.full(256, 5, np.int64)  # an empty image: zeros
    imghist.histogram(np.zeros((0, 4), np.uint8), out=out)
    assert (out == 0).all()
    for bad in (np.zeros(256, np.int32), np.zeros(255, np.int64), np.zeros((256, 2), np.int64)[:, 0]):
        with pytest.raises(ValueError, match="out must be"):
            imghist.histogram(x8[..., 0], out=bad)
    with pytest.raises(TypeError, match="out must be"):
        imghist.histogram(x8[..., 0], out=[0] * 256)


def test_histogram_out_torch_cpu(rng):
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(rng.integers(0, 256, (2, 30, 40), dtype=np.uint8))
    out = torch.full((2, 256), -1, dtype=torch.int64)
    assert imghist.histogram(x, out=out) is out
    np.testing.assert_array_equal(out.numpy(), imghist.histogram(x.numpy()))
    with pytest.raises(TypeError, match="torch CPU tensor"):
        imghist.histogram(x, out=np.zeros((2, 256), np.int64))


def test_errors(rng):
    with pytest.raises(ValueError, match="float32 holds exactly"):
        imghist.histogram(np.full((4, 4), 0.1))
    with pytest.raises(ValueError, match="2\\^24"):
        imghist.histogram(np.full((4, 4), 1 << 40, np.int64))
    with pytest.raises(TypeError, match="complex"):
        imghist.histogram(np.zeros((4, 4), np.complex64))
    with pytest.raises(ValueError, match="scalar"):
        imghist.histogram(np.uint8(3))
    with pytest.raises(ValueError, match="bins"):
        imghist.histogram(np.zeros((4, 4), np.uint8), 0)
    with pytest.raises(ValueError, match="bins"):
        imghist.histogram(np.zeros((4, 4), np.uint8), 1 << 25)
    with pytest.raises(TypeError):
        imghist.histogram(np.zeros((4, 4), np.uint8), 2.5)
    with pytest.raises(ValueError, match="backend"):
        imghist.histogram(np.zeros((4, 4), np.uint8), backend="gpu")
    # Refused by the library: its message, as an ImghistError that is a ValueError.
    with pytest.raises(imghist.ImghistArgumentError) as e:
        imghist.histogram(np.zeros((4, 4), np.float32), 10, (5, 1))
    assert isinstance(e.value, ValueError) and isinstance(e.value, imghist.ImghistError)
    assert e.value.status == 1 and str(e.value)
    with pytest.raises(ValueError):
        imghist.histogram(np.zeros((4, 4), np.float32), 10, (0, np.inf))


@pytest.mark.skipif(imghist.cuda_available(), reason="a GPU is usable here")
def test_backend_cuda_without_gpu():
    for b in ("cuda", "cuda:0", "CUDA:1"):
        with pytest.raises(imghist.ImghistError) as e:
            imghist.histogram(np.zeros((4, 4), np.uint8), backend=b)
        assert str(e.value)


def test_backend_gpu_index_refused():
    x = np.zeros((4, 4), np.uint8)
    for b in ("cuda:", "cuda:x", "cuda:-1", "cuda:1.0", "cuda: 1", "cuda:\u00b2", "cpu:0",
              "auto:0"):
        with pytest.raises(ValueError, match="backend"):
            imghist.histogram(x, backend=b)
        with pytest.raises(ValueError, match="backend"):
            imghist.equalize(x, backend=b)


def test_backend_auto_and_cpu(rng):
    x = u8(rng, 30, 30)
    for b in ("auto", "CPU", "cpu"):
        np.testing.assert_array_equal(imghist.histogram(x, backend=b), ref.natural(x, 256))


def test_threads(rng):
    xs = [u8(rng, 200, 100) for _ in range(8)]
    out = [None] * 8

    def work(i):
        for _ in range(20):
            out[i] = imghist.histogram(xs[i])

    ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i in range(8):
        np.testing.assert_array_equal(out[i], ref.natural(xs[i], 256))


# ---- equalize ----

@needs_cv2
@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (97, 131), (480, 640)])
def test_equalize_opencv(rng, shape):
    x = (rng.beta(2, 5, shape) * 255).astype(np.uint8)
    e = imghist.equalize(x)
    assert e.dtype == np.uint8 and e.shape == x.shape
    np.testing.assert_array_equal(e, cv2.equalizeHist(x))


@needs_cv2
def test_equalize_layouts_and_out(rng):
    x = u8(rng, 100, 80)
    want = cv2.equalizeHist(np.ascontiguousarray(x[10:, 5:70]))
    np.testing.assert_array_equal(imghist.equalize(x[10:, 5:70]), want)
    np.testing.assert_array_equal(imghist.equalize(x.T), cv2.equalizeHist(np.ascontiguousarray(x.T)))
    out = np.zeros((200, 100), np.uint8)
    r = imghist.equalize(x[10:, 5:70], out=out[:90, 10:75])
    np.testing.assert_array_equal(out[:90, 10:75], want)
    assert out[:, :10].sum() == 0 and out[90:].sum() == 0 and r.base is out
    y = x.copy()
    assert imghist.equalize(y, out=y) is y
    np.testing.assert_array_equal(y, cv2.equalizeHist(x))
    with pytest.raises(ValueError, match="out"):
        imghist.equalize(x, out=np.zeros((100, 81), np.uint8))
    with pytest.raises(ValueError, match="out"):
        imghist.equalize(x, out=np.zeros((80, 100), np.uint8).T)
    ro = np.zeros_like(x)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        imghist.equalize(x, out=ro)


def test_equalize_u16(rng):
    x = (rng.beta(2, 5, (60, 70)) * 65535).astype(np.uint16)
    e = imghist.equalize(x)
    assert e.dtype == np.uint16
    np.testing.assert_array_equal(e, ref.equalize(x))
    b = np.stack([x, x[::-1].copy(), np.full_like(x, 9)])
    eb = imghist.equalize(b)  # one call (0.3.9)
    for i in range(3):
        np.testing.assert_array_equal(eb[i], ref.equalize(b[i]))
    # a strided batch of pitched images (views), into a pitched out
    s = b[::-1, 3:, 1:50]
    out = np.zeros((3, 60, 64), np.uint16)
    imghist.equalize(s, out=out[:, :57, 2:51])
    for i in range(3):
        np.testing.assert_array_equal(out[i, :57, 2:51], ref.equalize(np.ascontiguousarray(s[i])))


def test_equalize_masked(rng):
    x = u8(rng, 50, 60)
    m = rng.random((50, 60)) < 0.4
    np.testing.assert_array_equal(imghist.equalize(x, mask=m), ref.equalize(x, mask=m))
    b = u8(rng, 3, 50, 60)
    eb = imghist.equalize(b, mask=m)
    for i in range(3):
        np.testing.assert_array_equal(eb[i], ref.equalize(b[i], mask=m))
    with pytest.raises(imghist.ImghistArgumentError):
        imghist.equalize(x, mask=np.zeros((50, 60), bool))


def test_equalize_masked_batches(rng):
    """A mask an image or one for all, 8- and 16-bit, tensors and strided
    views: one call (0.3.9), each image as equalize(image, mask) alone."""
    b8 = u8(rng, 4, 30, 41)
    b16 = (rng.beta(2, 5, (4, 30, 41)) * 65535).astype(np.uint16)
    ms = rng.random((4, 30, 41)) < 0.5
    m1 = rng.random((30, 41)) < 0.3
    for b in (b8, b16):
        for m in (ms, m1):
            e = imghist.equalize(b, mask=m)
            for i in range(4):
                mi = m if m.ndim == 2 else m[i]
                np.testing.assert_array_equal(e[i], ref.equalize(b[i], mask=mi))
        # strided views of the images and of the masks
        v, mv = b[::-2, 1:, 2:], ms[::-2, 1:, 2:]
        e = imghist.equalize(v, mask=mv)
        for i in range(2):
            np.testing.assert_array_equal(
                e[i], ref.equalize(np.ascontiguousarray(v[i]), mask=np.ascontiguousarray(mv[i])))
    # an empty mask of one image: refused, naming it, and nothing written
    mz = ms.copy()
    mz[2] = False
    out = np.full_like(b8, 7)
    with pytest.raises(imghist.ImghistArgumentError, match="batch mask 2 has no non-zero"):
        imghist.equalize(b8, mask=mz, out=out)
    assert (out == 7).all()


def test_equalize_list(rng):
    """A list of images of their own sizes (0.3.12): one batch call, each
    image as equalize(image) alone; masks and outs as lists; 8- and 16-bit."""
    for hi, dt in ((255, np.uint8), (65535, np.uint16)):
        xs = [(rng.beta(2, 5, (h, w)) * hi).astype(dt)
              for h, w in ((1, 1), (17, 5), (40, 61), (3, 300), (64, 64))]
        xs.append(np.full((9, 7), 3, dt))  # one value
        xs.append((rng.beta(2, 5, (30, 80)) * hi).astype(dt)[::2, 3:71])  # strided
        got = imghist.equalize(xs)
        assert isinstance(got, list) and len(got) == len(xs)
        for g, x in zip(got, xs):
            np.testing.assert_array_equal(g, imghist.equalize(np.ascontiguousarray(x)))
        ms = [rng.random(x.shape) < 0.5 for x in xs]
        for m in ms:
            m.flat[0] = True  # none empty
        outs = [np.zeros_like(x) for x in xs]
        assert imghist.equalize(xs, mask=ms, out=outs) == outs
        for o, x, m in zip(outs, xs, ms):
            np.testing.assert_array_equal(o, ref.equalize(np.ascontiguousarray(x), mask=m))
    assert imghist.equalize([]) == []


def test_equalize_list_errors(rng):
    a, b = u8(rng, 10, 12), u8(rng, 7, 9)
    with pytest.raises(ValueError, match="list of 2"):
        imghist.equalize([a, b], mask=[a > 9])
    with pytest.raises(ValueError, match="list of 2"):
        imghist.equalize([a, b], out=np.zeros_like(a))
    with pytest.raises(TypeError, match="one library"):
        imghist.equalize([a, b.astype(np.uint16)])
    with pytest.raises(ValueError, match=r"\(H, W\) images"):
        imghist.equalize([a, u8(rng, 2, 7, 9)])
    with pytest.raises(TypeError, match="uint8 or uint16"):
        imghist.equalize([a.astype(np.float32)])
    with pytest.raises(ValueError, match=r"mask\[1\] is None"):
        imghist.equalize([a, b], mask=[a > 9, None])
    out = [np.full_like(a, 7), np.full_like(b, 7)]
    with pytest.raises(imghist.ImghistArgumentError, match="batch mask 1 has no non-zero"):
        imghist.equalize([a, b], mask=[a > 0, b > 255], out=out)
    assert (out[0] == 7).all() and (out[1] == 7).all()


@needs_cv2
def test_equalize_batch(rng):
    b = (rng.beta(2, 5, (7, 45, 33)) * 255).astype(np.uint8)
    b[3] = 17  # a constant image
    e = imghist.equalize(b)
    assert e.shape == b.shape
    for i in range(7):
        np.testing.assert_array_equal(e[i], cv2.equalizeHist(b[i]))
    s = b[::2, 2:, 1:30]  # strided batch of pitched images, into a pitched out
    out = np.zeros((4, 50, 40), np.uint8)
    imghist.equalize(s, out=out[:, :43, :29])
    for i in range(4):
        np.testing.assert_array_equal(out[i, :43, :29], cv2.equalizeHist(np.ascontiguousarray(s[i])))
    nchw = u8(rng, 2, 3, 20, 24)  # torchvision's layout: every channel alone
    e4 = imghist.equalize(nchw)
    np.testing.assert_array_equal(e4[1, 2], cv2.equalizeHist(nchw[1, 2]))


def test_equalize_pil(rng):
    for shape in [(1, 1), (2, 2), (64, 48), (300, 200)]:
        x = (rng.beta(2, 5, shape) * 255).astype(np.uint8)
        np.testing.assert_array_equal(imghist.equalize(x, method="pil"), ref.equalize(x, "pil"))
    x = np.zeros((10, 10), np.uint8)
    x[0, :3] = 200  # a step of 0: identity
    np.testing.assert_array_equal(imghist.equalize(x, method="pil"), x)
    m = rng.random((64, 48)) < 0.5
    y = u8(rng, 64, 48)
    np.testing.assert_array_equal(imghist.equalize(y, "pil", mask=m), ref.equalize(y, "pil", m))
    # The context's method goes back to OpenCV's on the next call.
    if cv2 is not None:
        np.testing.assert_array_equal(imghist.equalize(y), cv2.equalizeHist(y))


def test_equalize_pil_against_pillow(rng):
    Image = pytest.importorskip("PIL.Image")
    ImageOps = pytest.importorskip("PIL.ImageOps")
    for shape in [(5, 7), (240, 320)]:
        x = (rng.beta(3, 2, shape) * 255).astype(np.uint8)
        want = np.asarray(ImageOps.equalize(Image.fromarray(x)))
        np.testing.assert_array_equal(imghist.equalize(x, method="pil"), want)
        m = (rng.random(shape) < 0.5).astype(np.uint8) * 255
        want_m = np.asarray(ImageOps.equalize(Image.fromarray(x), Image.fromarray(m)))
        np.testing.assert_array_equal(imghist.equalize(x, method="pil", mask=m), want_m)


def test_equalize_errors():
    with pytest.raises(TypeError, match="float32"):
        imghist.equalize(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="method"):
        imghist.equalize(np.zeros((4, 4), np.uint8), method="skimage")


# ---- joint histograms and mutual information ----

def test_histogram2d(rng):
    a = u8(rng, 40, 50)
    b = (a // 2 + u8(rng, 40, 50) // 4).astype(np.uint8)
    j = imghist.histogram2d(a, b)
    assert j.shape == (256, 256) and j.dtype == np.int64
    want, _, _ = np.histogram2d(a.ravel(), b.ravel(), bins=256, range=[[0, 256], [0, 256]])
    np.testing.assert_array_equal(j, want)
    j2 = imghist.histogram2d(a, b, bins=(16, 8))
    want2, _, _ = np.histogram2d(a.ravel(), b.ravel(), bins=(16, 8), range=[[0, 256], [0, 256]])
    np.testing.assert_array_equal(j2, want2)
    f = (rng.standard_normal((40, 50)) * 3).astype(np.float32)
    j3 = imghist.histogram2d(f, a, bins=(20, 32))  # f's range from its data, closed
    want3, _, _ = np.histogram2d(f.ravel().astype(np.float64), a.ravel(), bins=(20, 32),
                                 range=[[f.min(), f.max()], [0, 256]])
    np.testing.assert_array_equal(j3, want3)
    m = rng.random((40, 50)) < 0.5
    j4 = imghist.histogram2d(a, b, 64, range=((0, 256), (0, 128)), mask=m)
    keep = m  # the last bins closed, as NumPy's
    want4, _, _ = np.histogram2d(a[keep], b[keep], bins=64, range=[[0, 256], [0, 128]])
    np.testing.assert_array_equal(j4, want4)
    with pytest.raises(ValueError, match="size"):
        imghist.histogram2d(a, b[:10])
    with pytest.raises(ValueError, match="2\\^24"):
        imghist.histogram2d(a, b, bins=(8192, 8192))


def test_mutual_information(rng):
    a = u8(rng, 64, 64)
    b = ((a.astype(np.uint16) * 3) // 4 + u8(rng, 64, 64) // 8).astype(np.uint8)
    mi = imghist.mutual_information(a, b, bins=32)
    assert mi.dtype == np.float64 and mi.shape == (2,)
    joint = imghist.histogram2d(a, b, bins=32)
    np.testing.assert_allclose(mi, ref.mutual_information(joint), rtol=1e-9)
    c = np.full((8, 8), 5, np.uint8)
    np.testing.assert_allclose(imghist.mutual_information(c, c), [0.0, 2.0])
    with pytest.raises(imghist.ImghistArgumentError):
        imghist.mutual_information(a, b, mask=np.zeros((64, 64), bool))


# ---- load and the CLI ----

@needs_cv2
@pytest.mark.parametrize("name", ["moon.png", "camera.png", "astronaut.png", "coffee.png",
                                  "hubble_deep_field.jpg"])
def test_load_matches_opencv(samples, name):
    path = os.path.join(samples, name)
    g = imghist.load(path)
    want = cv2.cvtColor(cv2.imread(path, cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    assert g.dtype == np.uint8 and g.flags.c_contiguous
    np.testing.assert_array_equal(g, want)
    if cv2.__version__.startswith("4.6."):
        # The luma mode is OpenCV 4.6's IMREAD_GRAYSCALE (imghist.h); later
        # OpenCVs convert a colour PNG to gray with other rounding.
        np.testing.assert_array_equal(imghist.load(path, gray="luma"),
                                      cv2.imread(path, cv2.IMREAD_GRAYSCALE))
    c = imghist.load(path, channels=True)
    assert c.ndim == 3
    bgr = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if c.shape[2] >= 3 and name.endswith(".png"):
        np.testing.assert_array_equal(c[..., :3], bgr[..., 2::-1][..., :3])
    with open(path, "rb") as f:
        np.testing.assert_array_equal(imghist.load(f.read()), g)


@needs_cv2
def test_load_native_depths(tmp_path, rng):
    x16 = rng.integers(0, 65536, (20, 30), dtype=np.uint16)
    p = str(tmp_path / "x16.png")
    cv2.imwrite(p, x16)
    np.testing.assert_array_equal(imghist.load(p, depth="native"), x16)
    np.testing.assert_array_equal(imghist.load(p), (x16 >> 8).astype(np.uint8))
    f = rng.standard_normal((20, 30)).astype(np.float32)
    pt = str(tmp_path / "f.tiff")
    cv2.imwrite(pt, f)
    got = imghist.load(pt, depth="native")
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, f)


@needs_cv2
def test_load_read_truncated(samples, tmp_path):
    path = os.path.join(samples, "hubble_deep_field.jpg")
    with open(path, "rb") as f:
        data = f.read()
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(imghist.ImghistError, match="truncated"):
        imghist.load(cut)
    with pytest.warns(RuntimeWarning, match="ends early"):
        g = imghist.load(cut, read_truncated=True)
    want = cv2.cvtColor(cv2.imread(str(cut), cv2.IMREAD_COLOR), cv2.COLOR_BGR2GRAY)
    np.testing.assert_array_equal(g, want)
    with pytest.warns(RuntimeWarning, match="<memory>"):
        np.testing.assert_array_equal(imghist.load(cut.read_bytes(), read_truncated=True), g)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a whole file gives no warning
        np.testing.assert_array_equal(imghist.load(path, read_truncated=True), imghist.load(path))


def test_load_first_frame_and_page(tmp_path):
    """An animated PNG gives its default image and a multi-page TIFF its
    first page (docs/formats.md), as OpenCV reads them."""
    Image = pytest.importorskip("PIL.Image")
    a = np.full((20, 30), 10, np.uint8)
    b = np.full((20, 30), 200, np.uint8)
    for name in ("anim.png", "pages.tif"):
        p = str(tmp_path / name)
        Image.fromarray(a).save(p, save_all=True, append_images=[Image.fromarray(b)])
        np.testing.assert_array_equal(imghist.load(p), a)
    assert b"acTL" in (tmp_path / "anim.png").read_bytes()  # really animated


def test_load_errors(tmp_path):
    with pytest.raises(imghist.ImghistError, match="nope"):
        imghist.load(str(tmp_path / "nope.png"))
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)
    with pytest.raises(imghist.ImghistError) as e:
        imghist.load(bad)
    assert e.value.status != 0 and str(e.value)
    with pytest.raises(ValueError, match="depth"):
        imghist.load(bad, depth="16")
    with pytest.raises(ValueError, match="gray"):
        imghist.load(bad, gray="average")


@pytest.mark.skipif(not os.environ.get("IMGHIST_EXE"), reason="IMGHIST_EXE (the CLI) not set")
@pytest.mark.parametrize("name", ["moon.png", "coffee.png"])
def test_cli_agrees(samples, tmp_path, name):
    path = os.path.join(samples, name)
    out = tmp_path / "h.csv"
    eq = tmp_path / "e.png"
    subprocess.run([os.environ["IMGHIST_EXE"], "--backend", "cpu", path, "--csv", str(out),
                    "--equalize", str(eq)], check=True)
    rows = out.read_text().splitlines()[1:]
    cli = np.array([int(r.split(",")[-1]) for r in rows])
    g = imghist.load(path)
    np.testing.assert_array_equal(imghist.histogram(g), cli)
    np.testing.assert_array_equal(imghist.load(str(eq)), imghist.equalize(g))


# ---- torch CPU tensors, where torch is installed ----

def test_torch_cpu(rng):
    torch = pytest.importorskip("torch")
    x = u8(rng, 30, 40)
    t = torch.from_numpy(x)
    h = imghist.histogram(t)
    assert isinstance(h, torch.Tensor) and h.dtype == torch.int64
    np.testing.assert_array_equal(h.numpy(), ref.natural(x, 256))
    e = imghist.equalize(t)
    assert isinstance(e, torch.Tensor)
    np.testing.assert_array_equal(e.numpy(), ref.equalize(x))


def test_statistics_of_a_histogram(rng):
    cv2 = pytest.importorskip("cv2")
    bimodal = np.concatenate([rng.normal(60, 12, 5000), rng.normal(190, 20, 3000)])
    images = [np.clip(bimodal, 0, 255).astype(np.uint8).reshape(80, 100),
              rng.integers(0, 256, (50, 70), dtype=np.uint8),
              np.full((9, 9), 77, np.uint8),
              (rng.integers(0, 8, (40, 30)) * 32).astype(np.uint8),
              rng.integers(0, 65536, (40, 50), dtype=np.uint16)]
    for x in images:
        h = imghist.histogram(x)
        top = 255 if x.dtype == np.uint8 else 65535
        assert imghist.otsu(h) == cv2.threshold(x, 0, top, cv2.THRESH_BINARY | cv2.THRESH_OTSU)[0]
        for p in (0, 1, 5, 50, 95, 99, 100, 33.3):
            assert imghist.percentile(h, p) == np.percentile(x, p, method="inverted_cdf")
        c = np.bincount(x.ravel()).astype(float)
        q = c[c > 0] / c.sum()
        assert imghist.entropy(h) == pytest.approx(float(-(q * np.log2(q)).sum()), abs=1e-12)
    assert imghist.entropy([5, 0, 5]) == pytest.approx(1.0)
    assert imghist.percentile(np.array([0, 3, 1], np.uint32), 80) == 2
    for bad in ([], [[1, 2]], [-1, 3], [0.0, 0.0], [np.nan, 1.0]):
        with pytest.raises(ValueError):
            imghist.entropy(bad)
    with pytest.raises(ValueError):
        imghist.percentile([1.5, 2.0], 50)
    # Normalised histograms: the same entropy as their counts.
    h = imghist.histogram(images[0])
    assert imghist.entropy(h / h.sum()) == pytest.approx(imghist.entropy(h), abs=1e-12)
    assert imghist.entropy(np.float32([0.25, 0.25, 0.5])) == pytest.approx(1.5)
    with pytest.raises(imghist.ImghistArgumentError, match="no count"):
        imghist.otsu(np.zeros(256, np.int64))
    with pytest.raises(ValueError, match="0 to 100"):
        imghist.percentile([1, 2], 101)


# ---- histogram matching ----

def test_match_histograms(rng):
    """Against scikit-image's match_histograms (rounded with np.rint) where it
    is installed, and against the definition (NumPy's interp over the
    cumulative quantiles) everywhere."""
    try:
        from skimage.exposure import match_histograms as sk_match
    except ImportError:  # pragma: no cover
        sk_match = None
    cases = [
        (u8(rng, 120, 77), u8(rng, 33, 41)),
        (np.full((9, 13), 90, np.uint8), u8(rng, 50, 50)),
        (u8(rng, 40, 40), np.full((3, 3), 17, np.uint8)),
        (rng.integers(100, 104, (31, 7), dtype=np.uint8), rng.integers(0, 3, (5, 5), dtype=np.uint8)),
        (np.array([[201]], np.uint8), u8(rng, 2, 2)),
        (u8(rng, 4, 6, 5), u8(rng, 7, 3)),  # any shape
    ]
    for x, ref in cases:
        got = imghist.match_histograms(x, ref)
        assert got.dtype == np.uint8 and got.shape == x.shape
        hs = np.bincount(x.ravel(), minlength=256)
        hr = np.bincount(ref.ravel(), minlength=256)
        levels = np.nonzero(hr)[0]
        want_lut = np.rint(np.interp(np.cumsum(hs) / x.size, np.cumsum(hr[levels]) / ref.size,
                                     levels)).astype(np.uint8)
        assert np.array_equal(got, want_lut[x])
        assert np.array_equal(imghist.match_lut(hs, hr), want_lut)
        if sk_match is not None and x.ndim == ref.ndim:  # scikit-image wants equal ndim
            assert np.array_equal(got, np.rint(sk_match(x, ref)).astype(np.uint8))
    with pytest.raises(ValueError):
        imghist.match_histograms(np.zeros((2, 2), np.uint16), u8(rng, 2, 2))
    with pytest.raises(imghist.ImghistError):
        imghist.match_lut(np.zeros(256, np.uint64), np.ones(256, np.uint64))


# ---- CLAHE ----

@pytest.mark.skipif(cv2 is None, reason="python3-opencv is missing")
def test_clahe_against_opencv(rng):
    """cv2.createCLAHE(clip, tiles).apply() bit for bit: 8- and 16-bit, odd
    sizes, tiles larger than the image, a stack (imghist_clahe_batch), in
    place, out=."""
    cases = [u8(rng, 240, 321), np.full((17, 9), 77, np.uint8), u8(rng, 1, 40), u8(rng, 33, 1),
             rng.integers(0, 65536, (70, 45), dtype=np.uint16),
             (rng.integers(0, 1024, (64, 64)) * 64).astype(np.uint16)]
    for x in cases:
        for clip, tiles in ((40.0, (8, 8)), (2.0, (3, 7)), (0.0, (2, 2)), (3.0, (16, 1))):
            want = cv2.createCLAHE(clip, tiles).apply(x)
            got = imghist.clahe(x, clip, tiles)
            assert got.dtype == x.dtype and np.array_equal(got, want), (x.shape, clip, tiles)
    stack = u8(rng, 5, 48, 61)
    got = imghist.clahe(stack, 3.0, (4, 4))
    for i in range(5):
        assert np.array_equal(got[i], cv2.createCLAHE(3.0, (4, 4)).apply(stack[i]))
    x = u8(rng, 50, 60)
    want = cv2.createCLAHE(40.0, (8, 8)).apply(x)
    out = np.empty_like(x)
    assert imghist.clahe(x, out=out) is out and np.array_equal(out, want)
    imghist.clahe(x, out=x)
    assert np.array_equal(x, want)
    with pytest.raises(ValueError):
        imghist.clahe(x, tiles=(0, 8))
    with pytest.raises(TypeError):
        imghist.clahe(np.zeros((4, 4), np.float32))


def test_load_refuses_nul_in_the_name(tmp_path):
    # C would open the name up to the NUL: "a" instead of "a\0/etc/shadow".
    (tmp_path / "a").write_bytes(b"not read")
    for name in (str(tmp_path / "a") + "\0/etc/shadow", os.fsencode(str(tmp_path / "a")) + b"\0x"):
        with pytest.raises(ValueError, match="null byte"):
            imghist.load(name if isinstance(name, str) else os.fsdecode(name))


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (2, 0, 5), (0, 3, 4)])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_empty_images(shape, dtype):
    # NumPy's convention: an empty array in, an empty array of its shape out.
    x = np.zeros(shape, dtype)
    for f in (imghist.equalize, imghist.clahe):
        y = f(x)
        assert y.shape == shape and y.dtype == x.dtype
        out = np.empty(shape, dtype)
        assert f(x, out=out) is out


@needs_cv2
@pytest.mark.parametrize("progressive", [0, 1])
def test_load_refuses_made_up_jpeg_pixels(samples, progressive):
    # Scan data cut short but closed with an EOI marker ("premature end of
    # data segment"), and corrupt scan data: refused by default, read with a
    # warning on request; a read with read_truncated leaves nothing behind
    # for the next plain load on the same thread.
    img = cv2.imread(os.path.join(samples, "astronaut.png"), cv2.IMREAD_COLOR)
    ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_PROGRESSIVE, progressive])
    data = enc.tobytes()
    sos = data.find(b"\xff\xda")
    for frac in (0.3, 0.6, 0.999):
        cut = data[: int(sos + (len(data) - sos) * frac)] + b"\xff\xd9"
        with pytest.raises(imghist.ImghistError, match="file is truncated"):
            imghist.load(cut)
        with pytest.warns(RuntimeWarning, match="ends early"):
            imghist.load(cut, read_truncated=True)
        with pytest.raises(imghist.ImghistError, match="file is truncated"):
            imghist.load(cut)
    if progressive:
        bad = bytearray(data)
        for k in range(sos + 2000, sos + 2100, 7):
            bad[k] ^= 0x5A
        with pytest.raises(imghist.ImghistError, match="Corrupt JPEG data"):
            imghist.load(bytes(bad))
    assert imghist.load(data).shape == img.shape[:2]


@needs_cv2
def test_load_refuses_progressive_bombs(samples):
    # A progressive file declaring far more blocks than its bytes can hold
    # one bit of is refused before libjpeg allocates its coefficients
    # (16000 x 16000: 1.5 GB); a real flat progressive file of the same kind
    # (about two bits a block) loads.
    import struct
    img = cv2.imread(os.path.join(samples, "camera.png"), cv2.IMREAD_GRAYSCALE)
    data = bytearray(cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1].tobytes())
    sof = data.find(b"\xff\xc2")
    struct.pack_into(">HH", data, sof + 5, 16000, 16000)
    with pytest.raises(imghist.ImghistError, match="cannot hold the first scan"):
        imghist.load(bytes(data))
    flat = np.full((3000, 4000), 128, np.uint8)
    enc = cv2.imencode(".jpg", flat, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1,
                                      cv2.IMWRITE_JPEG_QUALITY, 10])[1].tobytes()
    assert imghist.load(enc).shape == (3000, 4000)
