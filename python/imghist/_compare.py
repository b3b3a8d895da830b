"""Histogram comparison: OpenCV's compareHist methods and the 1-D earth
mover's distance, for one pair, one histogram against many, and every pair
of a set (docs/compare.md)."""
from __future__ import annotations

import math
from typing import Any, Optional, Union

import numpy as np

from . import _arrays as A
from . import _lib as L
from ._api import _context

_U64, _F32, _F64 = 1, 2, 3  # imghist_hist_type
_TYPES = {np.dtype(np.uint64): _U64, np.dtype(np.int64): _U64, np.dtype(np.float32): _F32,
          np.dtype(np.float64): _F64}
_F64_DT = np.dtype(np.float64)
# cv2.HISTCMP_* and the EMD, by number.
_METRIC_COUNT = 7


def _metric(metric: Union[str, int]) -> int:
    if isinstance(metric, (bool, np.bool_)):
        raise TypeError("imghist: metric is a name or an integer, not a bool")
    if isinstance(metric, (int, np.integer)):
        if 0 <= int(metric) < _METRIC_COUNT:
            return int(metric)
        raise ValueError(f"imghist: metric={metric}; want 0 to {_METRIC_COUNT - 1} "
                         "(cv2.HISTCMP_*, or 6 for the EMD)")
    if isinstance(metric, str):
        m = L.N.compare_method(metric)
        if m >= 0:
            return m
    raise ValueError(f"imghist: metric={metric!r}; want correlation, chisqr, intersect, "
                     "bhattacharyya (hellinger), chisqr_alt, kl_div, emd or cv2's number")


class _Hists:
    """An array as histograms: its object (after any conversion), kind,
    memory, device, and the library's tuple for `rows` rows of `bins`."""

    __slots__ = ("obj", "kind", "mem", "dev", "ptr", "type", "arr")

    def __init__(self, obj, kind, mem, dev, ptr, type_):
        self.obj, self.kind, self.mem, self.dev, self.ptr, self.type = obj, kind, mem, dev, ptr, type_
        # An Arr for the shared helpers (context, new arrays, results).
        self.arr = A.Arr(obj, kind, ptr, (), (), L.F32, mem, dev, False, None)

    def tup(self, bins: int, count: int, stride: int = 0):
        return (self.ptr, self.type, self.mem, bins, count, stride)


def _hists(x: Any, what: str) -> tuple:
    """(_Hists, shape) of x, C-contiguous, values of a
    type the library reads (other types converted: integers to int64 counts,
    float16 to float32)."""
    kind = A._kind_of(type(x))
    if kind == A.TORCH and x.is_cuda:
        import torch
        if x.dtype not in (torch.int64, torch.float32, torch.float64):
            x = x.to(torch.float32 if x.dtype == torch.float16 else
                     torch.float64 if x.is_floating_point() else torch.int64)
        x = x.contiguous()
        t = {torch.int64: _U64, torch.float32: _F32, torch.float64: _F64}[x.dtype]
        return _Hists(x, A.TORCH, L.MEM_DEVICE, x.get_device(), x.data_ptr(), t), tuple(x.shape)
    if kind == A.CUPY:
        import cupy
        if x.dtype not in _TYPES:
            x = x.astype(np.float32 if x.dtype == np.float16 else
                         np.float64 if x.dtype.kind == "f" else np.int64)
        x = cupy.ascontiguousarray(x)
        return _Hists(x, A.CUPY, L.MEM_DEVICE, x.device.id, x.data.ptr, _TYPES[x.dtype]), x.shape
    host_kind = A.NUMPY
    if kind == A.TORCH:
        x, host_kind = x.detach().numpy(), A.TORCH_HOST
    elif kind != A.NUMPY:
        x = A._other(x, what)
        if A._kind_of(type(x)) != A.NUMPY:
            return _hists(x, what)
    x = np.asarray(x)
    if x.dtype not in _TYPES or not x.dtype.isnative:
        if x.dtype.kind in "iub":
            if x.size and x.min() < 0:
                raise ValueError(f"imghist: {what} has negative counts")
            x = x.astype(np.int64)
        elif x.dtype.kind == "f":
            x = x.astype(np.float32 if x.dtype.itemsize <= 4 else np.float64)
        else:
            raise TypeError(f"imghist: {what} has dtype {x.dtype}; want counts or floats")
    elif x.dtype == np.int64 and x.size and x.min() < 0:
        raise ValueError(f"imghist: {what} has negative counts")
    x = np.ascontiguousarray(x)
    return (_Hists(x, host_kind, L.MEM_HOST, -1, x.__array_interface__["data"][0],
                   _TYPES[x.dtype]), x.shape)


def _single(shape) -> bool:
    """One histogram: 1-D, or cv2.calcHist's column of shape (bins, 1)."""
    return len(shape) == 1 or (len(shape) == 2 and shape[1] == 1)


def compare(h1: Any, h2: Any, metric: Union[str, int] = "correlation", *,
            backend: Optional[str] = None):
    """cv2.compareHist(h1, h2, metric) for imghist's and cv2's histograms.

    Two histograms of one shape (1-D, cv2.calcHist's (bins, 1), or any
    shape, read flat as cv2 reads it) give a float, the bits cv2 gives for
    float32 histograms (int64/uint64 counts are rounded to float32 first, as
    cv2.calcHist stores them; float64 is compared in double throughout).
    One histogram h1 of `bins` values against h2 of shape (N, bins) gives
    the N values d(h1, h2[i]) as a float64 array of h2's kind (NumPy, torch
    or CuPy: GPU arrays are compared on their GPU, queued on the current
    stream).

    metric: "correlation", "chisqr", "intersect", "bhattacharyya" (or
    "hellinger"), "chisqr_alt", "kl_div", "emd" (1-D EMD with ground
    distance |i - j| bins, of the histograms normalised to sum 1), or
    cv2.HISTCMP_* (0 to 5; 6 is the EMD).

    >>> import numpy as np, imghist
    >>> imghist.compare(np.array([1, 2, 3, 4]), np.array([2, 2, 0, 4]), "intersect")
    7.0
    """
    m = _metric(metric)
    a, sa = _hists(h1, "h1")
    b, sb = _hists(h2, "h2")
    if tuple(sa) == tuple(sb):
        n = math.prod(sa)
        if n == 0:
            raise ValueError("imghist: empty histograms")
        if a.mem == L.MEM_HOST and b.mem == L.MEM_HOST:
            return L.N.compare(a.tup(n, 1), b.tup(n, 1), m)
        res = _many(a, b, n, 1, m, backend)
        return float(res[0]) if b.kind != A.TORCH else float(res[0].item())
    if not _single(sa) or len(sb) != 2:
        raise ValueError(f"imghist: h1 of shape {tuple(sa)} and h2 of shape {tuple(sb)}; want "
                         "two histograms of one shape, or h1 (bins,) and h2 (N, bins)")
    bins = sa[0]
    if sb[1] != bins:
        raise ValueError(f"imghist: h1 has {bins} bins and h2's rows {sb[1]}")
    if bins == 0:
        raise ValueError("imghist: empty histograms")
    return _many(a, b, bins, sb[0], m, backend)


def _many(a: _Hists, b: _Hists, bins: int, n: int, m: int, backend):
    if a.mem != b.mem or a.dev != b.dev:
        raise ValueError("imghist: h1 and h2 must be in one memory (one GPU)")
    ctx = _context(b.arr, backend)
    out = A.empty(b.arr, (n,), _F64_DT)
    if n:
        ctx.compare_many(a.tup(bins, 1), b.tup(bins, n), m, A.pointer(b.arr.kind, out), b.mem)
    return A.result(b.arr, out)


def compare_all(h: Any, metric: Union[str, int] = "correlation", *,
                backend: Optional[str] = None):
    """Every pair of N histograms: an (N, N) float64 array of h's kind whose
    [i, j] is compare(h[i], h[j], metric).

    h: (N, bins) (trailing axes are read flat), NumPy, torch or CuPy. NumPy
    arrays are compared on the CPU with every core, or on GPU 0 with
    backend="cuda"; GPU arrays on their GPU, queued on the current stream.
    On the GPU correlation, chi-square, intersection, Bhattacharyya and
    alternative chi-square give the CPU's bits; KL divergence and EMD are
    within the bounds docs/compare.md gives.

    >>> import numpy as np, imghist
    >>> imghist.compare_all(np.array([[1, 0], [0, 1]]), "intersect")
    array([[1., 0.],
           [0., 1.]])
    """
    m = _metric(metric)
    a, s = _hists(h, "h")
    if len(s) < 2:
        raise ValueError(f"imghist: h of shape {tuple(s)}; want (N, bins)")
    n, bins = s[0], math.prod(s[1:])
    if bins == 0:
        raise ValueError("imghist: empty histograms")
    ctx = _context(a.arr, backend)
    out = A.empty(a.arr, (n, n), _F64_DT)
    if n:
        ctx.compare_all(a.tup(bins, n), m, A.pointer(a.arr.kind, out), a.mem)
    return A.result(a.arr, out)
