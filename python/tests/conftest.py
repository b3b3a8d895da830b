"""Shared fixtures of the imghist Python tests.

Run from the repository root with the library of a build:
    IMGHIST_NATIVE=build/python/_imghist.cpython-311-x86_64-linux-gnu.so \
        PYTHONPATH=python python3 -m pytest python/tests
(or against an installed package, without either variable). Without them,
the first build*/python/_imghist*.so of the checkout is used.
"""
import glob
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import imghist  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python"))
    if "IMGHIST_NATIVE" not in os.environ:
        mods = sorted(glob.glob(os.path.join(ROOT, "build*", "python", "_imghist*.so")))
        if mods:
            os.environ["IMGHIST_NATIVE"] = mods[0]


# Scripts beside the tests, not tests (run_pytest.py runs pytest itself).
collect_ignore = ["run_pytest.py"]


@pytest.fixture(scope="session")
def samples():
    return os.environ.get("IMGHIST_SAMPLES", os.path.join(ROOT, "samples"))


@pytest.fixture
def rng(request):
    # A seed per test, printed on failure by the assertion's message.
    seed = int.from_bytes(os.urandom(4), "little")
    request.node.user_properties.append(("seed", seed))
    return np.random.default_rng(seed)
