"""What the reference scripts under tests/ share: a skip (exit 77) where
OpenCV or NumPy is missing, a list of failed checks, and the closing line
and exit status (0 when every check passed, 1 otherwise)."""
import sys

FAILURES = []


def need_opencv():
    """(cv2, numpy), or exit 77 (skipped) when either is not installed."""
    try:
        import cv2
        import numpy
    except ImportError as e:  # pragma: no cover
        print(f"skipping: {e}")
        sys.exit(77)
    return cv2, numpy


def fail(what):
    FAILURES.append(what)
    print("FAIL:", what)


def check(cond, what):
    if not cond:
        fail(what)


def finish(what):
    """The exit status of the script, after a line saying how it went."""
    if FAILURES:
        print(f"{what}: {len(FAILURES)} failed")
        return 1
    print(f"{what}: all checks passed")
    return 0
