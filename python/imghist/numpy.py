"""numpy.histogram's signature and results, counted by imghist.

    >>> import numpy as np, imghist.numpy
    >>> x = np.float32([0.1, 0.2, 0.2, 0.9])
    >>> imghist.numpy.histogram(x, bins=3)
    (array([3, 0, 1]), array([0.1       , 0.36666667, 0.6333333 , 0.9       ], dtype=float32))
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
        x = _api._exact(a, "a")
    except (TypeError, ValueError):
        return _np.histogram(_api._host(a), n, range)  # data imghist cannot count exactly
    flat = x.reshape(1, -1)
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        if not (_np.isfinite(lo) and _np.isfinite(hi)):
            raise ValueError(f"supplied range of [{lo}, {hi}] is not finite")
    elif flat.shape[-1]:
        lo, hi = flat.min().item(), flat.max().item()
        if not (_np.isfinite(lo) and _np.isfinite(hi)):
            raise ValueError(f"autodetected range of [{lo}, {hi}] is not finite")
    else:
        lo, hi = 0.0, 1.0
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    if _api._is_float32(a) and hi - lo < 4 * n * float(_np.spacing(_np.float32(max(abs(lo), abs(hi))))):
        return _np.histogram(_api._host(a), n, range)  # bins a float32 cannot tell apart
    return _api.histogram(flat, n, (lo, hi), channel_axis=None, return_edges=True)
