"""imghist's Python package on GPU arrays (PyTorch and CuPy): the same
results as the CPU backend, on the array's device, of the array's library,
queued on its current stream. Skipped where there is no GPU, or neither
torch (with CUDA) nor cupy."""
import numpy as np
import pytest

import imghist
import reference as ref

if not imghist.cuda_available():
    pytest.skip("no GPU usable by libimghist (or a build without CUDA)", allow_module_level=True)


class Torch:
    name = "torch"

    def __init__(self):
        import torch
        if not torch.cuda.is_available():
            raise ImportError("torch has no CUDA")
        self.m = torch

    def dev(self, x, device=0):
        return self.m.from_numpy(np.ascontiguousarray(x)).to(f"cuda:{device}")

    def host(self, x):
        assert isinstance(x, self.m.Tensor) and x.is_cuda
        return x.cpu().numpy()

    def device_of(self, x):
        return x.get_device()

    def new_stream(self, device=0):
        return self.m.cuda.Stream(device=device)

    def using(self, s):
        return self.m.cuda.stream(s)

    def sleep_then_fill(self, x, value):
        # A long kernel, then the fill, both on the current stream: a call
        # not ordered after them reads the old samples.
        self.m.cuda._sleep(200_000_000)
        x.fill_(value)

    def sync(self, s):
        s.synchronize()


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy
        self.m = cupy

    def dev(self, x, device=0):
        with self.m.cuda.Device(device):
            return self.m.asarray(np.ascontiguousarray(x))

    def host(self, x):
        assert isinstance(x, self.m.ndarray)
        return self.m.asnumpy(x)

    def device_of(self, x):
        return x.device.id

    def new_stream(self, device=0):
        with self.m.cuda.Device(device):
            return self.m.cuda.Stream(non_blocking=True)

    def using(self, s):
        return s

    def sleep_then_fill(self, x, value):
        spin = self.m.RawKernel(r'''
        extern "C" __global__ void spin(long long n) {
            long long t0 = clock64(); while (clock64() - t0 < n) {}
        }''', "spin")
        spin((1,), (1,), (np.int64(200_000_000),))
        x.fill(value)

    def sync(self, s):
        s.synchronize()


def _libs():
    out = []
    for cls in (Torch, Cupy):
        try:
            out.append(pytest.param(cls(), id=cls.name))
        except ImportError:
            out.append(pytest.param(None, id=cls.name,
                                    marks=pytest.mark.skip(reason=f"{cls.name} with CUDA missing")))
    return out


@pytest.fixture(params=_libs())
def xp(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(12)


def same(xp, got, want):
    np.testing.assert_array_equal(xp.host(got), want)


def test_histogram_u8(xp, rng):
    x = rng.integers(0, 256, (480, 640), dtype=np.uint8)
    d = xp.dev(x)
    h = imghist.histogram(d)
    assert xp.device_of(h) == 0
    same(xp, h, imghist.histogram(x))
    same(xp, imghist.histogram(d[7:300, 5:600]), ref.natural(x[7:300, 5:600], 256))  # pitched
    same(xp, imghist.histogram(d.T), ref.natural(x, 256))  # copied on the device
    same(xp, imghist.histogram(d, 10, (3, 200)), ref.hist(x, 10, 3, 200)[0])
    one = xp.dev(np.full((1, 1), 9, np.uint8))
    assert xp.host(imghist.histogram(one))[9] == 1


def test_plain_path_shapes(xp, rng):
    """2-D device images with default arguments take a shorter path in the
    binding (_arrays.plain); it must give what the general path gives."""
    for shape in [(1, 1), (1, 777), (777, 1), (3, 5), (481, 643)]:
        x = rng.integers(0, 256, shape, dtype=np.uint8)
        d = xp.dev(x)
        same(xp, imghist.histogram(d), ref.natural(x, 256))
        same(xp, imghist.histogram(d), xp.host(imghist.histogram(d, bins=256)))  # general path
        same(xp, imghist.equalize(d), ref.equalize(x))
        same(xp, imghist.equalize(d, method="pil"), ref.equalize(x, "pil"))
        same(xp, imghist.equalize(d), xp.host(imghist.equalize(d, out=xp.dev(np.zeros(shape, np.uint8)))))
    x16 = rng.integers(0, 65536, (50, 70), dtype=np.uint16)
    d16 = xp.dev(x16)
    same(xp, imghist.histogram(d16), ref.natural(x16, 65536))
    same(xp, imghist.equalize(d16), ref.equalize(x16))
    e = imghist.histogram(xp.dev(np.zeros((0, 5), np.uint8)))
    assert xp.host(e).shape == (256,) and xp.host(e).sum() == 0


def test_histogram_out(xp, rng):
    """out= on the GPU (0.3.9): filled in place on the array's device."""
    x = (rng.beta(2, 5, (4, 30, 40)) * 65535).astype(np.uint16)
    d = xp.dev(x)
    out = xp.dev(np.full((4, 65536), -3, np.int64))
    assert imghist.histogram(d, out=out) is out
    same(xp, out, imghist.histogram(x))
    with pytest.raises(ValueError, match="out must be"):
        imghist.histogram(d, out=xp.dev(np.zeros((4, 65535), np.int64)))
    with pytest.raises((TypeError, ValueError), match="out must be"):
        imghist.histogram(d, out=np.zeros((4, 65536), np.int64))


def test_histogram_u16_f32(xp, rng):
    x = rng.integers(0, 65536, (200, 300), dtype=np.uint16)
    same(xp, imghist.histogram(xp.dev(x)), ref.natural(x, 65536))
    same(xp, imghist.histogram(xp.dev(x), 500, (10, 50000)), imghist.histogram(x, 500, (10, 50000)))
    f = ref.floats(rng, (200, 300))
    c, e = imghist.histogram(xp.dev(f), outliers=True)
    wc, we = imghist.histogram(f, outliers=True)
    same(xp, c, wc)
    same(xp, e, we)
    same(xp, imghist.histogram(xp.dev(f), 64, (-50, 50)),
         imghist.histogram(f, 64, (-50, 50)))


def test_histogram_batch_channels_masks(xp, rng):
    b = rng.integers(0, 256, (16, 64, 48), dtype=np.uint8)
    db = xp.dev(b)
    same(xp, imghist.histogram(db), imghist.histogram(b))
    same(xp, imghist.histogram(db[::3, 2:, :40]), imghist.histogram(b[::3, 2:, :40]))
    same(xp, imghist.histogram(db, 16, (0, 128)), imghist.histogram(b, 16, (0, 128)))
    c = rng.integers(0, 256, (4, 30, 20, 3), dtype=np.uint8)
    same(xp, imghist.histogram(xp.dev(c), channel_axis=-1), imghist.histogram(c, channel_axis=-1))
    m = rng.random((64, 48)) < 0.5
    dm = xp.dev(m.astype(np.uint8))
    same(xp, imghist.histogram(db[0], mask=dm), imghist.histogram(b[0], mask=m))
    same(xp, imghist.histogram(db, mask=dm), imghist.histogram(b, mask=m))
    # a mask an image, one call (0.3.8); channels; floats; a layout of views
    mb = rng.random((16, 64, 48)) < 0.5
    dmb = xp.dev(mb.astype(np.uint8))
    same(xp, imghist.histogram(db, mask=dmb), imghist.histogram(b, mask=mb))
    same(xp, imghist.histogram(db, 16, (0, 128), mask=dmb),
         imghist.histogram(b, 16, (0, 128), mask=mb))
    mc = rng.random((4, 30, 20)) < 0.5
    same(xp, imghist.histogram(xp.dev(c), channel_axis=-1, mask=xp.dev(mc.astype(np.uint8))),
         imghist.histogram(c, channel_axis=-1, mask=mc))
    f = rng.random((6, 40, 40), dtype=np.float32)
    mf = rng.random((6, 40, 40)) < 0.5
    same(xp, imghist.histogram(xp.dev(f), 32, (0, 1), mask=xp.dev(mf.astype(np.uint8))),
         imghist.histogram(f, 32, (0, 1), mask=mf))
    b4 = b.reshape(4, 4, 64, 48)[:, ::2]
    m4 = mb.reshape(4, 4, 64, 48)[:, ::2]
    same(xp, imghist.histogram(xp.dev(b.reshape(4, 4, 64, 48))[:, ::2],
                               mask=xp.dev(mb.astype(np.uint8).reshape(4, 4, 64, 48))[:, ::2]),
         imghist.histogram(b4, mask=m4))
    with pytest.raises(ValueError, match="memory"):
        imghist.histogram(db[0], mask=m)
    with pytest.raises(ValueError, match="GPU"):
        imghist.histogram(db, backend="cpu")


def test_equalize(xp, rng):
    x = (rng.beta(2, 5, (480, 640)) * 255).astype(np.uint8)
    d = xp.dev(x)
    e = imghist.equalize(d)
    assert xp.device_of(e) == 0
    same(xp, e, ref.equalize(x))
    x16 = (rng.beta(2, 5, (100, 120)) * 65535).astype(np.uint16)
    same(xp, imghist.equalize(xp.dev(x16)), ref.equalize(x16))
    m = rng.random((480, 640)) < 0.3
    same(xp, imghist.equalize(d, mask=xp.dev(m.astype(np.uint8))), ref.equalize(x, mask=m))
    y = xp.dev(x)
    assert imghist.equalize(y, out=y) is y
    same(xp, y, ref.equalize(x))


def test_equalize_batch(xp, rng):
    b = (rng.beta(2, 5, (33, 40, 50)) * 255).astype(np.uint8)
    b[5] = 3
    same(xp, imghist.equalize(xp.dev(b)), imghist.equalize(b))
    big = rng.integers(0, 200, (3, 1080, 1920), dtype=np.uint8)
    same(xp, imghist.equalize(xp.dev(big)), imghist.equalize(big))
    d = xp.dev(b)
    out = xp.dev(np.zeros((33, 40, 64), np.uint8))
    imghist.equalize(d[:, :, :50], out=out[:, :, 10:60])
    same(xp, out[:, :, 10:60], imghist.equalize(b))


def test_equalize_u16_and_masked_batches(xp, rng):
    """16-bit and masked batches on the GPU (one call, 0.3.9) against the CPU,
    a mask an image and one for all; an empty device mask gives a copy."""
    b16 = (rng.beta(2, 5, (5, 70, 90)) * 65535).astype(np.uint16)
    b16[2] = 123
    b8 = (rng.beta(2, 5, (5, 70, 90)) * 255).astype(np.uint8)
    ms = rng.random((5, 70, 90)) < 0.5
    m1 = (rng.random((70, 90)) < 0.3).astype(np.uint8)
    same(xp, imghist.equalize(xp.dev(b16)), imghist.equalize(b16))
    for b in (b8, b16):
        for m in (ms, m1):
            same(xp, imghist.equalize(xp.dev(b), mask=xp.dev(m)), imghist.equalize(b, mask=m))
        v, mv = b[::-2, 1:, 3:], ms[::-2, 1:, 3:]
        same(xp, imghist.equalize(xp.dev(v), mask=xp.dev(mv)), imghist.equalize(v, mask=mv))
    # channels 0 and 2 of an (N, C, H, W) batch, cropped: views of one shape
    # anywhere (0.3.11: the tensor's launches with the images' pointers)
    for hi, dt in ((65535, np.uint16), (255, np.uint8)):
        b4 = (rng.beta(2, 5, (3, 4, 70, 90)) * hi).astype(dt)
        m4 = rng.random((3, 4, 70, 90)) < 0.5
        d4, dm4 = xp.dev(b4)[:, ::2, 1:, 3:], xp.dev(m4.astype(np.uint8))[:, ::2, 1:, 3:]
        same(xp, imghist.equalize(d4, mask=dm4),
             imghist.equalize(b4[:, ::2, 1:, 3:], mask=m4[:, ::2, 1:, 3:]))
        if b4.dtype == np.uint16:
            same(xp, imghist.equalize(d4), imghist.equalize(b4[:, ::2, 1:, 3:]))
    mz = ms.copy()
    mz[1] = False
    e = imghist.equalize(xp.dev(b16), mask=xp.dev(mz))
    want = imghist.equalize(b16, mask=np.where(mz.any(axis=(1, 2))[:, None, None], mz, True))
    want[1] = b16[1]
    same(xp, e, want)


def test_equalize_list(xp, rng):
    """Lists of device images of their own sizes (0.3.12; 16-bit ones of at
    most 65536 pixels in one launch, a block an image) against the CPU, with
    masks (one of them empty on the device: a copy) and outs."""
    for hi, dt in ((65535, np.uint16), (255, np.uint8)):
        xs = [(rng.beta(2, 5, (h, w)) * hi).astype(dt)
              for h, w in ((1, 1), (17, 5), (40, 61), (3, 300), (128, 200), (100, 90))]
        xs.append(np.full((9, 7), 3, dt))
        ds = [xp.dev(x) for x in xs]
        ds.append(xp.dev((rng.beta(2, 5, (30, 80)) * hi).astype(dt))[::2, 3:71])
        xs.append(xp.host(ds[-1]))
        for g, x in zip(imghist.equalize(ds), xs):
            same(xp, g, imghist.equalize(np.ascontiguousarray(x)))
        ms = [rng.random(x.shape) < 0.5 for x in xs]
        for m in ms:
            m.flat[0] = True
        outs = [xp.dev(np.zeros_like(x)) for x in xs]
        dms = [xp.dev(m.astype(np.uint8)) for m in ms]
        dms[2] = xp.dev(np.zeros(xs[2].shape, np.uint8))  # empty: a copy
        assert imghist.equalize(ds, mask=dms, out=outs) is not None
        for i, (o, x, m) in enumerate(zip(outs, xs, ms)):
            want = x if i == 2 else imghist.equalize(np.ascontiguousarray(x), mask=m)
            same(xp, o, want)


def test_equalize_pil(xp, rng):
    x = (rng.beta(2, 5, (240, 320)) * 255).astype(np.uint8)
    same(xp, imghist.equalize(xp.dev(x), method="pil"), ref.equalize(x, "pil"))
    b = (rng.beta(2, 5, (9, 24, 32)) * 255).astype(np.uint8)
    same(xp, imghist.equalize(xp.dev(b), method="pil"), imghist.equalize(b, method="pil"))


def test_equalize_pil_matches_torchvision(rng):
    torch = pytest.importorskip("torch")
    F = pytest.importorskip("torchvision.transforms.v2.functional")
    if not torch.cuda.is_available():
        pytest.skip("needs torch with CUDA")
    b = torch.from_numpy((rng.beta(2, 5, (8, 3, 64, 80)) * 255).astype(np.uint8)).cuda()
    torch.testing.assert_close(imghist.equalize(b, method="pil"), F.equalize(b), rtol=0, atol=0)


def test_match_histograms(xp, rng):
    """Device arrays in, the same array library and device out, the same
    pixels as the NumPy call."""
    for shape_x, shape_r in (((123, 77), (40, 51)), ((3, 20, 31), (9,)), ((1, 1), (5, 5))):
        x = rng.integers(0, 256, shape_x, dtype=np.uint8)
        r = rng.integers(30, 90, shape_r, dtype=np.uint8)
        got = imghist.match_histograms(xp.dev(x), xp.dev(r))
        assert np.array_equal(xp.host(got), imghist.match_histograms(x, r))


def test_joint_and_mi(xp, rng):
    a = rng.integers(0, 256, (300, 200), dtype=np.uint8)
    b = ((a.astype(np.uint16) * 3) // 4 + rng.integers(0, 32, (300, 200))).astype(np.uint8)
    da, dbb = xp.dev(a), xp.dev(b)
    same(xp, imghist.histogram2d(da, dbb), imghist.histogram2d(a, b))
    same(xp, imghist.histogram2d(da, dbb, bins=(32, 16)), imghist.histogram2d(a, b, bins=(32, 16)))
    f = ref.floats(rng, (300, 200))
    same(xp, imghist.histogram2d(xp.dev(f), da, bins=64), imghist.histogram2d(f, a, bins=64))
    mi = imghist.mutual_information(da, dbb, bins=64)
    assert xp.device_of(mi) == 0
    np.testing.assert_allclose(xp.host(mi), imghist.mutual_information(a, b, bins=64), rtol=1e-9)
    empty = xp.host(imghist.mutual_information(da, dbb, mask=xp.dev(np.zeros((300, 200), np.uint8))))
    assert np.isnan(empty).all()


def test_current_stream(xp):
    s = xp.new_stream()
    x = xp.dev(np.zeros((2048, 2048), np.uint8))
    with xp.using(s):
        xp.sleep_then_fill(x, 7)
        h = imghist.histogram(x)
        e = imghist.equalize(x)
    xp.sync(s)
    assert xp.host(h)[7] == 2048 * 2048
    assert (xp.host(e) == 7).all()
    # Back on the default stream, the context follows.
    h2 = imghist.histogram(x)
    assert xp.host(h2)[7] == 2048 * 2048


@pytest.mark.skipif(imghist.device_count() < 2, reason="one GPU")
def test_second_gpu(xp, rng):
    x = rng.integers(0, 256, (100, 100), dtype=np.uint8)
    d = xp.dev(x, device=1)
    h = imghist.histogram(d)
    assert xp.device_of(h) == 1
    same(xp, h, ref.natural(x, 256))
    e = imghist.equalize(d)
    assert xp.device_of(e) == 1
    same(xp, e, ref.equalize(x))


def test_numpy_on_cuda_backend(rng):
    x = rng.integers(0, 256, (100, 120), dtype=np.uint8)
    h = imghist.histogram(x, backend="cuda")
    assert isinstance(h, np.ndarray)
    np.testing.assert_array_equal(h, ref.natural(x, 256))
    np.testing.assert_array_equal(imghist.equalize(x, backend="auto"), ref.equalize(x))


def test_numpy_on_gpu_index(xp, rng):
    """backend='cuda:N' puts host arrays on GPU N; one past the last GPU is
    the library's refusal, and a device array named to another GPU a
    ValueError."""
    x = rng.integers(0, 256, (300, 170), dtype=np.uint8)
    n = imghist.device_count()
    for k in range(n):
        np.testing.assert_array_equal(imghist.histogram(x, backend=f"cuda:{k}"),
                                      ref.natural(x, 256))
        np.testing.assert_array_equal(imghist.equalize(x, backend=f"cuda:{k}"), ref.equalize(x))
    with pytest.raises(imghist.ImghistError, match="GPU"):
        imghist.histogram(x, backend=f"cuda:{n}")
    d = xp.dev(x)
    with pytest.raises(ValueError, match="GPU 0"):
        imghist.histogram(d, backend="cuda:1")
    np.testing.assert_array_equal(xp.host(imghist.histogram(d, backend="cuda:0")),
                                  ref.natural(x, 256))


def test_clahe(xp, rng):
    """Device arrays: the same pixels as the NumPy call (itself OpenCV's, in
    test_cpu.py), 8- and 16-bit, a stack, in place."""
    for x in (rng.integers(0, 256, (480, 640), dtype=np.uint8),
              rng.integers(0, 256, (3, 37, 29), dtype=np.uint8),
              rng.integers(0, 65536, (101, 77), dtype=np.uint16),
              np.full((16, 16), 9, np.uint8)):
        for clip, tiles in ((40.0, (8, 8)), (2.0, (3, 5))):
            got = imghist.clahe(xp.dev(x), clip, tiles)
            assert np.array_equal(xp.host(got), imghist.clahe(x, clip, tiles))
    x = rng.integers(0, 256, (64, 48), dtype=np.uint8)
    d = xp.dev(x)
    imghist.clahe(d, out=d)
    assert np.array_equal(xp.host(d), imghist.clahe(x))
