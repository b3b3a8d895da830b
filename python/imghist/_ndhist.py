"""N-dimensional histograms of an image's channels, OpenCV's 8-bit colour
conversions for counting, and back-projection (docs/ndhist.md)."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _arrays as A
from . import _lib as L
from ._api import _context, _exact, _host, _image_layout, _images, _mask, _view

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_LEVELS = {L.U8: 256, L.U16: 65536, L.F32: 0}
_NP_OF = {L.U8: np.dtype(np.uint8), L.U16: np.dtype(np.uint16), L.F32: np.dtype(np.float32)}

_SPACES = {
    "bgr2hsv": L.SPACE_BGR2HSV, "rgb2hsv": L.SPACE_RGB2HSV,
    "bgr2hsv_full": L.SPACE_BGR2HSV_FULL, "rgb2hsv_full": L.SPACE_RGB2HSV_FULL,
    "bgr2lab": L.SPACE_BGR2LAB, "rgb2lab": L.SPACE_RGB2LAB,
}


def _space(code) -> int:
    if code is None:
        return L.SPACE_NONE
    s = _SPACES.get(str(code).lower().replace("cv2.color_", "").replace("color_", ""))
    if s is None:
        raise ValueError(f"imghist: colour conversion {code!r}; want one of "
                         f"{', '.join(sorted(_SPACES))}")
    return s


def _colour_image(image, what="image"):
    """(Arr, layout) of an (..., H, W, C) image, C from 1 to 4; (H, W) is
    one channel."""
    a = A.describe(_exact(image, what), what)
    nimg = 3 if len(a.shape) >= 3 and a.shape[-1] <= L.MAX_CHANNELS else 2
    a, lay = _image_layout(a, nimg, what)
    return a, lay, nimg


def cvt_color(image, code: str, *, backend: Optional[str] = None):
    """cv2.cvtColor(image, code) for 8-bit images, bit for bit (OpenCV
    4.6's integer rules): code 'bgr2hsv', 'rgb2hsv' (H in [0, 180)),
    'bgr2hsv_full', 'rgb2hsv_full' (H in [0, 256)), 'bgr2lab', 'rgb2lab'.
    image: uint8 (..., H, W, 3 or 4), NumPy or a GPU tensor; returns
    uint8 (..., H, W, 3) of its kind.

    >>> import numpy as np, imghist
    >>> imghist.cvt_color(np.uint8([[[255, 0, 0]]]), "bgr2hsv")
    array([[[120, 255, 255]]], dtype=uint8)
    """
    space = _space(code)
    a, lay, nimg = _colour_image(image)
    if nimg != 3 or a.dt != L.U8 or lay[5] < 3:
        raise ValueError("imghist: cvt_color takes uint8 images of shape (..., H, W, 3 or 4)")
    ctx = _context(a, backend)
    _, lead, _, H, W, _, _ = lay
    out = A.empty(a, tuple(lead) + (H, W, 3), _NP_OF[L.U8])
    if math.prod(lead) == 0 or H == 0 or W == 0:
        return A.result(a, out)
    o = A.describe(out, "out")
    for s, d in _pairs(a, lay, o, 3):
        ctx.cvt_color(s, d, space)
    return A.result(a, out)


def _pairs(a, lay, o, cout: int):
    """(source view, destination view) pairs of a's images and o's (a new
    contiguous array of cout channels an image)."""
    _, lead, _, H, W, _, _ = lay
    n = math.prod(lead)
    step = H * W * cout * o.item
    how, src, _ = _images(a, lay)
    if how == "one":
        return [(src, _view(o.ptr, o, H, W, cout, W * cout * o.item, n, step))]
    return [(s, _view(o.ptr + i * step, o, H, W, cout, W * cout * o.item))
            for i, s in enumerate(src)]


def _axis(b, rng, dt: int, data, opencv: bool, what: str):
    """One axis: (spec tuple, edges array or None, bins, edges for the caller)."""
    flag = 0 if opencv else L.CLOSED
    if b is not None and np.ndim(b) == 1:
        e = np.ascontiguousarray(b, dtype=np.float64)
        if e.size < 2:
            raise ValueError(f"imghist: {what}: explicit edges need at least two values")
        return (e.size - 1, 0.0, 1.0, flag), e, e.size - 1, e
    levels = _LEVELS[dt]
    n = 10 if b is None and not levels else (levels if b is None else operator.index(b))
    if not 1 <= n <= L.MAX_BINS:
        raise ValueError(f"imghist: {what}: bins={n}; want 1 to 2^24")
    if rng is None:
        if levels:
            lo, hi = 0.0, float(levels)
        else:
            lo, hi = data()
    elif opencv:  # cv2 takes its ranges as float32
        lo, hi = float(np.float32(rng[0])), float(np.float32(rng[1]))
    else:
        lo, hi = float(rng[0]), float(rng[1])
    if lo == hi and not opencv:  # numpy.histogramdd's widening of an empty range
        lo, hi = lo - 0.5, hi + 0.5
    return (n, lo, hi, L.OPENCV_BINS if opencv else flag), None, n, None


def _ndaxes(a, lay, dims: int, channels, bins, rng, space: int, opencv: bool, host_data):
    """(axes tuple for the binding, bins per axis, edges per axis, arrays to keep)."""
    if channels is None:
        channels = list(builtins.range(dims))
    channels = [operator.index(c) for c in channels]
    nd = len(channels)
    if not 1 <= nd <= L.MAX_DIMS:
        raise ValueError(f"imghist: {nd} dimensions; want 1 to {L.MAX_DIMS}")
    if bins is None or isinstance(bins, (int, np.integer)):
        bins = [bins] * nd
    elif len(bins) != nd:
        raise ValueError(f"imghist: {len(bins)} bins for {nd} dimensions")
    if rng is None:
        rng = [None] * nd
    elif len(rng) != nd:
        raise ValueError(f"imghist: {len(rng)} ranges for {nd} dimensions")
    dt = L.U8 if space != L.SPACE_NONE else a.dt
    specs, eptrs, counts, edges, keep = [], [], [], [], []
    for d in builtins.range(nd):
        def data(d=d):
            return host_data(channels[d])
        spec, e, n, ue = _axis(bins[d], rng[d], dt, data, opencv, f"axis {d}")
        specs.append(spec)
        counts.append(n)
        if e is not None:
            keep.append(e)
            eptrs.append(e.__array_interface__["data"][0])
            edges.append(ue)
        else:
            eptrs.append(0)
            edges.append(np.linspace(spec[1], spec[2], n + 1))
    return (space, channels, specs, eptrs), counts, edges, keep


def _channel_range(a, c: int):
    """The finite minimum and maximum of channel c of a host float image:
    numpy.histogramdd's default range."""
    if a.mem != L.MEM_HOST:
        raise ValueError("imghist: float images on a GPU need range=")
    x = np.asarray(a.obj)
    v = x[..., c] if x.ndim >= 3 else x
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise ValueError("imghist: no finite sample to take the range from; give range=")
    return float(v.min()), float(v.max())


def histogramdd(image, bins: Any = 10, range: Optional[Sequence] = None, mask=None, *,
                channels: Optional[Sequence[int]] = None, space: Optional[str] = None,
                rule: str = "numpy", return_edges: bool = False,
                backend: Optional[str] = None):
    """N-dimensional histogram of the channels of an image, channels last,
    as numpy.histogramdd(image.reshape(-1, C), bins, range) gives it (and
    cv2.calcHist([image], channels, mask, bins, ranges) with rule='opencv').

    image: (H, W) or (..., H, W, C) with C from 1 to 4 (leading dimensions
    are a batch, counted in one call), uint8, uint16 or float32, NumPy or a
    GPU tensor (torch, CuPy). channels: the channels that
    are the axes, in order (default: all). space: None, or a cvt_color code
    ('bgr2hsv', ...): every pixel is converted first, and channels index the
    converted pixel. bins: one entry for every axis, or one per axis; an
    entry is a number of equal bins or an array of explicit increasing
    edges (NumPy's form). range: None, or one (lo, hi) per axis (None:
    [0, 256) or [0, 65536) for integer samples, as one bin per level; the
    channel's finite minimum and maximum for float32, as NumPy). rule:
    'numpy' (numpy.histogramdd): equal bins have linspace edges, a sample
    is in bin i when e(i) <= v < e(i+1), and the last bin holds a sample
    equal to its upper edge; 'opencv' (cv2.calcHist): a sample in [lo, hi)
    is in bin floor(v * bins / (hi - lo) - lo * bins / (hi - lo)) clamped
    to the bins (the two differ for a few samples near edges, 26 bins over
    [0, 180) say), lo and hi rounded to float32 as cv2 receives them, and
    every bin, the last too, half-open. mask: uint8 or bool (H, W) or the
    batch's shape: only pixels where it is not 0 count.

    Returns int64 counts of shape (..., bins0, bins1, ...), of the image's
    kind; with return_edges=True, (counts, list of float64 edge arrays).

    >>> import numpy as np, imghist
    >>> img = np.zeros((2, 2, 3), np.uint8); img[0, 0] = 255
    >>> imghist.histogramdd(img, bins=2, range=[(0, 256)] * 3)[:, 0, 0]
    array([3, 0])
    """
    if rule not in ("numpy", "opencv"):
        raise ValueError(f"imghist: rule={rule!r}; want 'numpy' or 'opencv'")
    sp = _space(space)
    a, lay, nimg = _colour_image(image)
    _, lead, _, H, W, C, _ = lay
    if sp != L.SPACE_NONE and (a.dt != L.U8 or C < 3 or nimg != 3):
        raise ValueError("imghist: space= takes uint8 images of shape (..., H, W, 3 or 4)")
    dims = 3 if sp != L.SPACE_NONE else C
    ctx = _context(a, backend)
    axes, nbins, edges, keep = _ndaxes(a, lay, dims, channels, bins, range, sp, rule == "opencv",
                                       lambda c: _channel_range(a, c))
    mlay = _mask(mask, a, lead, H, W)
    cells = math.prod(nbins)
    if cells > L.MAX_BINS:
        raise ValueError(f"imghist: {cells} cells; at most 2^24")
    n_img = math.prod(lead)
    out = A.empty(a, (n_img, cells), _I64)
    if n_img == 0 or H == 0 or W == 0:
        if hasattr(out, "fill_"):
            out.fill_(0)
        else:
            out.fill(0)
    else:
        how, src, _ = _images(a, lay, mlay)
        if how == "one":
            ctx.histogramdd(src, axes, (A.pointer(a.kind, out), n_img * cells, a.mem))
        else:
            for i, s in enumerate(src):
                ptr = A.pointer(a.kind, out) + i * cells * 8
                ctx.histogramdd(s, axes, (ptr, cells, a.mem))
    del keep
    res = A.result(a, out.reshape(tuple(lead) + tuple(nbins)))
    return (res, edges) if return_edges else res


def backproject(image, hist, ranges: Optional[Sequence] = None, scale: float = 1.0, *,
                channels: Optional[Sequence[int]] = None, space: Optional[str] = None,
                uniform: bool = True, backend: Optional[str] = None):
    """cv2.calcBackProject([image], channels, hist, ranges, scale, uniform):
    every pixel becomes hist[cell of the pixel] * scale (single precision),
    0 where the pixel is in no cell; uint8 and uint16 images give the
    product rounded half to even and saturated, float32 the product.

    image: (H, W) or (..., H, W, C), C up to 4 (a batch: leading
    dimensions), uint8, uint16 or float32, NumPy or a GPU tensor (torch,
    CuPy: back-projected on its GPU, on its current stream, the same bits).
    hist: a float32 array (NumPy, or a tensor: copied to the host) with one
    axis per channel (1 to 4), C order. channels: as histogramdd (default: the first
    hist.ndim). ranges: one (lo, hi) per axis with uniform=True (None:
    [0, 256) or [0, 65536) for integers), binned by calcHist's rule
    (histogramdd's rule='opencv'), or one array of hist.shape[d] + 1
    increasing edges per axis with uniform=False; every bin is half-open, as
    calcHist's. space: as histogramdd. Returns (..., H, W) of the image's
    type and kind.

    >>> import numpy as np, imghist
    >>> h = np.float32([1, 2]); img = np.uint8([[0, 200]])
    >>> imghist.backproject(img, h, [(0, 256)], scale=10)
    array([[10, 20]], dtype=uint8)
    """
    sp = _space(space)
    a, lay, nimg = _colour_image(image)
    _, lead, _, H, W, C, _ = lay
    if sp != L.SPACE_NONE and (a.dt != L.U8 or C < 3 or nimg != 3):
        raise ValueError("imghist: space= takes uint8 images of shape (..., H, W, 3 or 4)")
    h = np.ascontiguousarray(_host(hist), dtype=np.float32)
    if h.ndim == 2 and h.shape[1] == 1 and (channels is None or len(channels) == 1):
        h = h.reshape(-1)  # cv2.calcHist's 1-D histograms are (bins, 1)
    nd = h.ndim
    if channels is None:
        channels = list(builtins.range(nd))
    if len(channels) != nd:
        raise ValueError(f"imghist: {len(channels)} channels for a histogram of {nd} axes")
    if uniform:
        bins = list(h.shape)
        rng = ranges
    else:
        if ranges is None or len(ranges) != nd:
            raise ValueError("imghist: uniform=False needs one edge array per axis")
        bins = [np.asarray(r, np.float64) for r in ranges]
        for d, e in enumerate(bins):
            if e.size != h.shape[d] + 1:
                raise ValueError(f"imghist: axis {d}: {e.size} edges for {h.shape[d]} bins")
        rng = None
    dims = 3 if sp != L.SPACE_NONE else C
    ctx = _context(a, backend)
    axes, nbins, _, keep = _ndaxes(a, lay, dims, channels, bins, rng, sp, True,
                                   lambda c: (0.0, 1.0))
    if list(nbins) != list(h.shape):
        raise ValueError(f"imghist: bins {nbins} differ from the histogram's shape {h.shape}")
    out = A.empty(a, tuple(lead) + (H, W), _NP_OF[a.dt])
    if math.prod(lead) == 0 or H == 0 or W == 0:
        return A.result(a, out)
    o = A.describe(out, "out")
    for s, d in _pairs(a, lay, o, 1):
        ctx.backproject(s, axes, h.__array_interface__["data"][0], float(scale), d)
    del keep
    return A.result(a, out)
