"""The native binding (_imghist, nanobind): its constants, the errors it
raises, and the per-thread contexts. Private: the public functions are in
_api.py.

The binding releases the GIL during every library call.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import threading

__all__ = ["ImghistError", "ImghistArgumentError"]


def _native():
    """imghist._imghist: the package's own, or the module file named by
    IMGHIST_NATIVE (a build folder's, for the tests)."""
    path = os.environ.get("IMGHIST_NATIVE")
    if path:
        spec = importlib.util.spec_from_file_location("imghist._imghist", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        sys.modules["imghist._imghist"] = mod
        return mod
    from . import _imghist
    return _imghist


N = _native()

# The header's constants, as the binding reads them from imghist.h.
globals().update({k: getattr(N, k) for k in dir(N) if k.isupper()})
version_string = N.version_string()


class ImghistError(RuntimeError):
    """A call into libimghist failed. The message is the library's
    (imghist_last_error); ``status`` is the imghist_status number and
    ``status_name`` its name (imghist_strerror)."""

    def __init__(self, message: str, status: int = 0, status_name: str = ""):
        RuntimeError.__init__(self, message)
        self.status = status
        self.status_name = status_name

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ImghistArgumentError(ImghistError, ValueError):
    """The library refused an argument (IMGHIST_E_INVALID_ARG): also a
    ValueError."""


class ImghistBufferError(ImghistArgumentError):
    """An output is shorter than the call needs (IMGHIST_E_BUFSIZE)."""


class ImghistMemoryError(ImghistError, MemoryError):
    """Host memory ran out (IMGHIST_E_NOMEM): also a MemoryError."""


class ImghistIOError(ImghistError, OSError):
    """A file could not be opened, read or written (IMGHIST_E_IO): also an
    OSError."""


class ImghistDecodeError(ImghistError, OSError):
    """The bytes are not an image imghist can decode (IMGHIST_E_DECODE):
    also an OSError, as Pillow's UnidentifiedImageError."""


class ImghistEncodeError(ImghistError, OSError):
    """An output image could not be encoded (IMGHIST_E_ENCODE)."""


class ImghistLimitError(ImghistError, ValueError):
    """The input is over a pixel or byte limit (IMGHIST_E_LIMIT)."""


class ImghistNoGPUError(ImghistError):
    """The CUDA backend was asked for and no usable GPU exists
    (IMGHIST_E_NO_GPU)."""


class ImghistCudaError(ImghistError):
    """A CUDA call failed; the message names it (IMGHIST_E_CUDA)."""


class ImghistUnsupportedError(ImghistError, NotImplementedError):
    """Not available in this build or on this backend
    (IMGHIST_E_UNSUPPORTED)."""


class ImghistFaultedError(ImghistCudaError):
    """The GPU faulted under this thread's context: its later calls are
    refused (IMGHIST_E_FAULTED)."""


class ImghistCanceledError(ImghistError):
    """A progress callback stopped the call (IMGHIST_E_CANCELED)."""


_BY_STATUS = {
    E_INVALID_ARG: ImghistArgumentError, E_NOMEM: ImghistMemoryError, E_IO: ImghistIOError,
    E_DECODE: ImghistDecodeError, E_ENCODE: ImghistEncodeError, E_LIMIT: ImghistLimitError,
    E_NO_GPU: ImghistNoGPUError, E_CUDA: ImghistCudaError,
    E_UNSUPPORTED: ImghistUnsupportedError, E_BUFSIZE: ImghistBufferError,
    E_FAULTED: ImghistFaultedError,
    E_CANCELED: ImghistCanceledError,
}
ERRORS = [ImghistError, ImghistArgumentError, ImghistBufferError, ImghistMemoryError,
          ImghistIOError, ImghistDecodeError, ImghistEncodeError, ImghistLimitError,
          ImghistNoGPUError, ImghistCudaError, ImghistUnsupportedError, ImghistFaultedError,
          ImghistCanceledError]
N.set_errors([_BY_STATUS.get(st, ImghistError) for st in range(STATUS_COUNT)])


def cpu_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    lo, hi = N.param_bounds(P_CPU_THREADS)
    return max(int(lo), min(int(hi), n))


def device_count() -> int:
    return N.device_count()


_tls = threading.local()


def context(backend: int, device: int):
    """The calling thread's context for (backend, device), made on first use
    (CPU contexts with a thread per core; CUDA ones on GPU 0 unless one is
    named, never the thread's current GPU)."""
    try:
        ctxs = _tls.ctxs
    except AttributeError:
        ctxs = _tls.ctxs = {}
    key = (backend, device)
    ctx = ctxs.get(key)
    if ctx is None:
        ctx = N.Context(backend, max(device, 0))
        if ctx.backend == BACKEND_CPU:
            ctx.set_param(P_CPU_THREADS, cpu_threads())
        ctxs[key] = ctx
    return ctx


def cuda_context(device: int):
    return context(BACKEND_CUDA, device)

for _cls in ERRORS:
    _cls.__module__ = "imghist"
