"""numpy.histogram's signature and results, counted by imghist.

    >>> import numpy as np, imghist.numpy
    >>> x = np.float32([0.5, 1.0, 1.25, 4.0])
    >>> imghist.numpy.histogram(x, bins=7)
    (array([1, 2, 0, 0, 0, 0, 1]), array([0.5, 1. , 1.5, 2. , 2.5, 3. , 3.5, 4. ], dtype=float32))
"""
from __future__ import annotations

import operator

import numpy as _np

from . import _api

__all__ = ["histogram"]


def histogram(a, bins=10, range=None, density=None, weights=None):
    """numpy.histogram(a, bins, range) for integer bins: (counts, edges),
    identical to NumPy's on the same array (float32 data: float32 edges;
    other data: float64 edges). a: any shape (flattened), of any library
    histogram() takes (torch and CuPy arrays count on their GPU and the
    results are of their kind). The default range is the data's minimum and
    maximum; data with NaN or infinities then raises ValueError, as NumPy
    does. What imghist does not count (bins given as edges, weights,
    density, data no float32 holds exactly, float32 bins narrower than four
    float32 spacings) is numpy.histogram's own, on the host.
    """
    if weights is not None or density or not isinstance(bins, (int, _np.integer)):
        counts, edges = _np.histogram(_api._host(a), bins, range, density, weights)
        return counts, edges
    n = operator.index(bins)
    if n < 1:
        raise ValueError("`bins` must be positive, when an integer")
    try:
        x = _api._exact(a, "a")  # only whether imghist counts it: histogram() converts
    except (TypeError, ValueError):
        return _np.histogram(_api._host(a), n, range)  # data imghist cannot count exactly
    if not hasattr(a, "reshape"):
        a = _np.asarray(a)  # a list: NumPy's type for it decides the edges
    flat = a.reshape(1, -1)
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(lo) and _np.isfinite(hi)):
            raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
    elif flat.shape[-1]:
        lo, hi = x.min().item(), x.max().item()
        if not (_np.isfinite(lo) and _np.isfinite(hi)):
            raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")
        if _api._is_float32(a):
            lo, hi = _np.float32(lo), _np.float32(hi)  # the data's own: NumPy 2's edge rule
    else:
        lo, hi = 0, 1
    span = abs(float(hi) - float(lo)) or 1.0
    if _api._is_float32(a) and span < 4 * n * float(_np.spacing(_np.float32(max(abs(lo), abs(hi))))):
        return _np.histogram(_api._host(a), n, range)  # bins a float32 cannot tell apart
    return _api.histogram(flat, n, (lo, hi), channel_axis=None, return_edges=True)
