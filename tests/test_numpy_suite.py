#!/usr/bin/env python3
"""NumPy's and scikit-image's own histogram tests, run with numpy.histogram
routed through imghist.histogram (tests/numpy_shim/imghist_numpy_shim.py):
the test files that python3-numpy and python3-skimage install
(numpy/lib/tests/test_histograms.py, skimage/exposure/tests/test_exposure.py),
as those projects wrote them. NumPy's test of arrays over 2^32 elements is
left out (marked slow: half a minute of NumPy alone).

usage: test_numpy_suite.py
Exits 77 (skipped) when pytest or NumPy's test files are not installed.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def installed_test(module, name):
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "tests", name)
    return path if os.path.exists(path) else None


def main():
    try:
        import pytest
    except ImportError:
        print("skipping: pytest is not installed")
        return 77
    numpy_tests = installed_test("numpy.lib", "test_histograms.py")
    if numpy_tests is None:
        print("skipping: NumPy's test files are not installed")
        return 77
    files = [numpy_tests]
    try:
        skimage_tests = installed_test("skimage.exposure", "test_exposure.py")
    except ImportError:
        skimage_tests = None
    if skimage_tests is not None:
        files.append(skimage_tests)
    sys.path[:0] = [os.path.join(HERE, "numpy_shim"), os.path.join(HERE, "..", "python")]
    # --noconftest: NumPy's conftest wants hypothesis, which its tests here do not use.
    return pytest.main(["-q", "-p", "no:cacheprovider", "--noconftest", "-p",
                        "imghist_numpy_shim", "-m", "not slow", "-W",
                        "ignore::pytest.PytestUnknownMarkWarning", *files])


if __name__ == "__main__":
    sys.exit(int(main()))
