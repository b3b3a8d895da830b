#!/usr/bin/env python3
"""The Meson test 'python': pytest over python/tests with the environment
tests/meson.build gives (IMGHIST_NATIVE, PYTHONPATH, IMGHIST_EXE,
IMGHIST_SAMPLES). Exits 77 (skipped) when pytest is missing."""
import os
import sys

try:
    import pytest
except ImportError:
    print("SKIP: pytest is missing (Debian: python3-pytest)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
package = os.path.join(os.path.dirname(here), "imghist")
# The tests, and the docstrings' examples run as doctests.
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", "--doctest-modules", here, package]
                     + sys.argv[1:]))
