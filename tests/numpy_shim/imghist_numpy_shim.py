"""A pytest plugin that routes numpy.histogram through imghist.histogram, so
that NumPy's own histogram tests (and scikit-image's, which call
np.histogram) check imghist's counts.

Every call whose arguments imghist takes is counted by imghist, and
NumPy's own counts of it are compared (a difference fails the test that
made the call): an integer
number of bins, no weights, real data whose values (and range) float32 or
uint16 holds exactly, finite data or an explicit range. The edges are
NumPy's (linspace over the range, computed here as NumPy computes them), the
counts imghist's, and density follows from them. Any other call (bins as
edges or a rule name, weights, float64 values float32 cannot hold, objects,
complex numbers) goes to NumPy itself, and so do the errors NumPy raises for
bad arguments. At the end the plugin says how many calls imghist counted; a
session in which it counted none fails, so that the shim cannot pass by
handing everything back to NumPy.
"""
import operator

import numpy as np
import numpy.lib.histograms as nh
import pytest

import imghist

_numpy_histogram = nh.histogram
_calls = {"imghist": 0, "numpy": 0}


def _exact(values, dtype):
    with np.errstate(all="ignore"):
        return np.array_equal(values.astype(dtype).astype(values.dtype), values)


def _samples(a):
    """a as an imghist dtype holding exactly its values, or None. Float data
    other than float64 goes to NumPy: it computes float32 data in float32,
    where imghist's documented rule is NumPy's on float64 copies."""
    if a.dtype == np.bool_ or a.dtype.kind not in "uif" or a.size == 0:
        return None
    if a.dtype.kind in "ui":
        if a.min() >= 0 and a.max() <= 65535:
            return a.astype(np.uint8 if a.max() <= 255 else np.uint16)
        return None
    if a.dtype != np.float64 or not np.isfinite(a).all() or not _exact(a, np.float32):
        return None
    return a.astype(np.float32)


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
    s = _samples(flat) if n is not None and n >= 1 and weights is None else None
    edges = _edges(flat, n, range) if s is not None else None
    if edges is not None and _exact(edges[[0, -1]].astype(np.float64), np.float32):
        counts = imghist.histogram(s.reshape(1, -1), bins=n,
                                   range=(float(edges[0]), float(edges[-1])), closed=True,
                                   backend="cpu")
        _calls["imghist"] += 1
        # NumPy's counts too: a test that checks only shapes still compares.
        want, _ = _numpy_histogram(a, bins=bins, range=range)
        if not np.array_equal(counts, want):
            diff = np.flatnonzero(counts != want)
            raise AssertionError(f"imghist and NumPy count differently: bins {diff[:8]}, "
                                 f"imghist {counts[diff[:8]]}, NumPy {want[diff[:8]]}")
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
