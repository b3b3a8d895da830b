"""A pytest plugin that routes numpy.histogram through imghist.histogram, so
that NumPy's own histogram tests (and scikit-image's, which call
np.histogram) check imghist's counts.

Every call whose arguments imghist takes is counted by
imghist.numpy.histogram, and NumPy's own counts and edges of it are compared
(a difference fails the test that made the call): an integer number of
bins, no weights, float32 data, or data whose values (and range) float32 or
uint16 holds exactly, finite data or an explicit range. Density follows
from the counts and edges. Any other call (bins as edges or a rule name,
weights, float64 values float32 cannot hold, objects, complex numbers) goes
to NumPy itself, and so do the errors NumPy raises for bad arguments. At the end the plugin says how many calls imghist counted; a
session in which it counted none fails, so that the shim cannot pass by
handing everything back to NumPy.
"""
import operator

import numpy as np
import numpy.lib.histograms as nh
import pytest

import imghist
import imghist.numpy

_numpy_histogram = nh.histogram
_calls = {"imghist": 0, "numpy": 0}


def _exact(values, dtype):
    with np.errstate(all="ignore"):
        return np.array_equal(values.astype(dtype).astype(values.dtype), values)


def _samples(a):
    """Whether imghist counts a's values as they are: integers uint16 holds,
    float32 data, float64 data float32 holds exactly (finite, all three)."""
    if a.dtype == np.bool_ or a.dtype.kind not in "uif" or a.size == 0:
        return False
    if a.dtype.kind in "ui":
        return bool(a.min() >= 0 and a.max() <= 65535)
    if a.dtype not in (np.float32, np.float64) or not np.isfinite(a).all():
        return False
    return a.dtype == np.float32 or _exact(a, np.float32)


def _edges(a, n, range_):
    """NumPy's edges for n equal bins (numpy.lib.histograms' rule for the
    outer edges and the edges' type), or None where NumPy would raise."""
    if range_ is not None:
        lo, hi = range_
        if lo > hi or not (np.isfinite(lo) and np.isfinite(hi)):
            return None
    else:
        lo, hi = a.min(), a.max()
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    kind = np.result_type(lo, hi, a)
    if np.issubdtype(kind, np.integer):
        kind = np.result_type(kind, float)
    return np.linspace(lo, hi, n + 1, endpoint=True, dtype=kind)


def histogram(a, bins=10, range=None, density=None, weights=None):
    try:
        n = operator.index(bins)
    except TypeError:
        n = None
    flat = np.asarray(a).ravel()
    ok = _samples(flat) if n is not None and n >= 1 and weights is None else False
    edges = _edges(flat, n, range) if ok else None
    if edges is not None and _exact(edges[[0, -1]].astype(np.float64), np.float32):
        counts, got_edges = imghist.numpy.histogram(flat, n, range)
        _calls["imghist"] += 1
        # NumPy's counts and edges too: a test that checks only shapes still compares.
        want, want_edges = _numpy_histogram(a, bins=bins, range=range)
        if not np.array_equal(counts, want):
            diff = np.flatnonzero(counts != want)
            raise AssertionError(f"imghist and NumPy count differently: bins {diff[:8]}, "
                                 f"imghist {counts[diff[:8]]}, NumPy {want[diff[:8]]}")
        if got_edges.dtype != want_edges.dtype or not np.array_equal(got_edges, want_edges):
            raise AssertionError(f"imghist's edges differ from NumPy's: {got_edges[:4]} "
                                 f"({got_edges.dtype}), NumPy {want_edges[:4]} "
                                 f"({want_edges.dtype})")
        if density:
            db = np.array(np.diff(edges), float)
            return counts / db / counts.sum(), edges
        return counts, edges
    _calls["numpy"] += 1
    return _numpy_histogram(a, bins=bins, range=range, density=density, weights=weights)


nh.histogram = histogram
np.histogram = histogram


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(
        f"imghist counted {_calls['imghist']} np.histogram calls; NumPy took "
        f"{_calls['numpy']} it does not (weights, edges, float64 values)")


def pytest_sessionfinish(session, exitstatus):
    if _calls["imghist"] == 0 and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
