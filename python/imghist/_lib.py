"""The C library through ctypes: loading, structures, signatures, errors and
the per-thread contexts. Private: the public functions are in _api.py.

ctypes releases the GIL during every call into the library.
"""
from __future__ import annotations

import ctypes
import glob
import os
import struct
import threading

__all__ = ["ImghistError", "ImghistArgumentError"]

# The header's enums and constants (include/imghist.h.in): only those the
# package passes or compares.
OK = 0
E_INVALID_ARG = 1
E_BUFSIZE = 10
BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2
U8, U16, F32 = 1, 2, 3
MEM_HOST, MEM_DEVICE = 0, 1
OUTLIERS, CLOSED = 2, 4
MAX_BINS = 1 << 24
MAX_CHANNELS = 4
P_CPU_THREADS = 3
P_LOAD_GRAY = 5
P_LOAD_DEPTH = 7
P_LOAD_CHANNELS = 8
P_LOAD_TRUNCATED = 10
IMAGE_TRUNCATED = 1
IMAGE_REDUCED = 2
EQ_OPENCV, EQ_PIL = 0, 1


class ImghistError(RuntimeError):
    """A call into libimghist failed. The message is the library's
    (imghist_last_error); ``status`` is the imghist_status number and
    ``status_name`` its name (imghist_strerror)."""

    def __init__(self, message: str, status: int = 0, status_name: str = ""):
        super().__init__(message)
        self.status = status
        self.status_name = status_name


class ImghistArgumentError(ImghistError, ValueError):
    """The library refused an argument (IMGHIST_E_INVALID_ARG or
    IMGHIST_E_BUFSIZE): both an ImghistError and a ValueError."""


class View(ctypes.Structure):
    """imghist_view: one image, or `count` images image_stride bytes apart,
    with the address of an optional mask view."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("mem", ctypes.c_int),
                ("width", ctypes.c_uint32), ("height", ctypes.c_uint32),
                ("pitch", ctypes.c_size_t), ("channels", ctypes.c_uint32),
                ("count", ctypes.c_size_t), ("image_stride", ctypes.c_ssize_t),
                ("mask", ctypes.c_void_p)]


# A View's fields in one struct.pack_into call, for the calls that must be
# cheap (a few attribute writes through ctypes cost as much as a launch).
VIEW_PACK = struct.Struct("=QiiIIQI4xQqQ")
assert [View.data.offset, View.dtype.offset, View.mem.offset, View.width.offset,
        View.height.offset, View.pitch.offset, View.channels.offset, View.count.offset,
        View.image_stride.offset, View.mask.offset] == [0, 8, 12, 16, 20, 24, 32, 40, 48, 56]
assert VIEW_PACK.size == ctypes.sizeof(View)


class Counts(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_size_t), ("mem", ctypes.c_int)]


# A Counts' fields likewise.
COUNTS_PACK = struct.Struct("=QQi")
assert [Counts.data.offset, Counts.len.offset, Counts.mem.offset] == [0, 8, 16]


class Spec(ctypes.Structure):
    _fields_ = [("bins", ctypes.c_uint32), ("lo", ctypes.c_double), ("hi", ctypes.c_double),
                ("flags", ctypes.c_uint32)]


class Image(ctypes.Structure):
    _fields_ = [("view", View), ("flags", ctypes.c_uint)]


# The soname of the library this package is written for; the views above are
# its structures, so an older library would misread them.
SONAME = "libimghist.so.2"


def _candidates():
    env = os.environ.get("IMGHIST_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    names = [os.path.join(here, n) for n in (SONAME, "libimghist.so")]
    return names + sorted(glob.glob(os.path.join(here, "libimghist.so.*")))


def _load():
    errors = []
    for path in _candidates():
        if not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            found = ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
            continue
        # imghist_histogram_list arrived with the views that carry count,
        # stride and mask; a library without it takes other structures.
        if not hasattr(found, "imghist_histogram_list"):
            errors.append(f"{path}: a libimghist older than the 1.0 API "
                          "(no imghist_histogram_list)")
            continue
        return found, path
    raise ImportError(f"imghist: cannot load {SONAME} (set IMGHIST_LIBRARY to its path): "
                      + "; ".join(errors))


lib, library_path = _load()

_p = ctypes.c_void_p
_i = ctypes.c_int
_u32 = ctypes.c_uint32
_size = ctypes.c_size_t
_sigs = {
    "imghist_version": (_i, []),
    "imghist_version_string": (ctypes.c_char_p, []),
    "imghist_strerror": (ctypes.c_char_p, [_i]),
    "imghist_create": (_i, [_i, _i, _p]),
    "imghist_device_count": (_i, [_p]),
    "imghist_get_device": (_i, [_p, _p]),
    "imghist_destroy": (None, [_p]),
    "imghist_get_backend": (_i, [_p]),
    "imghist_last_error": (ctypes.c_char_p, [_p]),
    "imghist_last_note": (ctypes.c_char_p, [_p]),
    "imghist_set_param": (_i, [_p, _i, ctypes.c_int64]),
    "imghist_get_param": (_i, [_p, _i, _p]),
    "imghist_param_bounds": (_i, [_i, _p, _p]),
    "imghist_set_stream": (_i, [_p, _p]),
    "imghist_histogram": (_i, [_p, _p, _p, _p]),
    "imghist_histogram_list": (_i, [_p, _p, _size, _p, _p]),
    "imghist_range": (_i, [_p, _p, _p, _p]),
    "imghist_histogram2d": (_i, [_p, _p, _p, _p, _p, _p]),
    "imghist_mutual_information": (_i, [_p, _p, _u32, _u32, _p, _i]),
    "imghist_equalize_lut": (_i, [_p, _u32, _i, _p]),
    "imghist_equalize": (_i, [_p, _p, _p, _i, _p]),
    "imghist_equalize_list": (_i, [_p, _p, _p, _size, _i, _p]),
    "imghist_clahe": (_i, [_p, _p, _p, ctypes.c_double, _u32, _u32]),
    "imghist_clahe_list": (_i, [_p, _p, _p, _size, ctypes.c_double, _u32, _u32]),
    "imghist_entropy": (_i, [_p, _size, _p]),
    "imghist_percentile": (_i, [_p, _size, ctypes.c_double, _p]),
    "imghist_otsu": (_i, [_p, _size, _p]),
    "imghist_match_lut": (_i, [_p, _p, _p]),
    "imghist_load_file": (_i, [_p, ctypes.c_char_p, _p]),
    "imghist_load_memory": (_i, [_p, _p, _size, ctypes.c_char_p, _p]),
    "imghist_image_free": (None, [_p]),
}
for _name, (_res, _args) in _sigs.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args

version_string = lib.imghist_version_string().decode()


def status_name(st: int) -> str:
    return lib.imghist_strerror(st).decode()


def error(st: int, message: str) -> ImghistError:
    cls = ImghistArgumentError if st in (E_INVALID_ARG, E_BUFSIZE) else ImghistError
    name = status_name(st)
    return cls(message or name, st, name)


def cpu_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    lo, hi = ctypes.c_int64(), ctypes.c_int64()
    if lib.imghist_param_bounds(P_CPU_THREADS, ctypes.addressof(lo), ctypes.addressof(hi)) == OK:
        n = max(int(lo.value), min(int(hi.value), n))
    return n


def device_count() -> int:
    n = ctypes.c_int(0)
    if lib.imghist_device_count(ctypes.addressof(n)) != OK:
        return 0
    return n.value


class Context:
    """One library context with the structures its calls pass, so that a
    call fills fields instead of building objects. Used by one thread only."""

    __slots__ = ("ptr", "backend", "device", "stream", "src", "src_a", "mask",
                 "mask_a", "dst", "dst_a", "spec", "spec_a", "spec2", "spec2_a", "counts",
                 "counts_a", "d2", "d2_a", "batch_key", "batch_views", "batch_dst_key",
                 "batch_dst_views", "__weakref__")

    def __init__(self, backend: int, device: int):
        self.ptr = None
        out = ctypes.c_void_p()
        # GPU 0 unless one is named, never the thread's current GPU (-1).
        st = lib.imghist_create(backend, max(device, 0), ctypes.addressof(out))
        if out.value is None:
            raise MemoryError("imghist: no memory for a context")
        if st != OK:
            msg = lib.imghist_last_error(out.value).decode()
            lib.imghist_destroy(out.value)
            raise error(st, msg)
        self.ptr = out.value
        self.backend = lib.imghist_get_backend(self.ptr)
        dev = ctypes.c_int(-1)
        lib.imghist_get_device(self.ptr, ctypes.addressof(dev))
        self.device = dev.value
        self.stream = -1  # the context's own stream: set the caller's on first use
        if self.backend == BACKEND_CPU:
            self.check(lib.imghist_set_param(self.ptr, P_CPU_THREADS, cpu_threads()))
        self.src, self.mask, self.dst = View(), View(), View()
        self.src_a, self.mask_a, self.dst_a = (ctypes.addressof(self.src),
                                               ctypes.addressof(self.mask),
                                               ctypes.addressof(self.dst))
        self.spec, self.spec2, self.counts = Spec(), Spec(), Counts()
        self.spec_a, self.spec2_a, self.counts_a = (ctypes.addressof(self.spec),
                                                    ctypes.addressof(self.spec2),
                                                    ctypes.addressof(self.counts))
        self.d2 = (ctypes.c_double * 2)()
        self.d2_a = ctypes.addressof(self.d2)
        self.batch_key = self.batch_views = None
        self.batch_dst_key = self.batch_dst_views = None

    def check(self, st: int) -> None:
        if st != OK:
            raise error(st, lib.imghist_last_error(self.ptr).decode())

    def set_param(self, param: int, value: int) -> None:
        self.check(lib.imghist_set_param(self.ptr, param, value))

    def set_stream(self, stream: int) -> None:
        if stream != self.stream:
            self.check(lib.imghist_set_stream(self.ptr, stream or None))
            self.stream = stream

    def __del__(self):
        ptr, self.ptr = self.ptr, None
        if ptr is not None:
            try:
                lib.imghist_destroy(ptr)
            except Exception:  # interpreter shutdown
                pass


_tls = threading.local()


def context(backend: int, device: int) -> Context:
    """The calling thread's context for (backend, device), made on first use.
    backend is CPU (device ignored), CUDA or AUTO."""
    try:
        ctxs = _tls.ctxs
    except AttributeError:
        ctxs = _tls.ctxs = {}
    key = (backend, device)
    ctx = ctxs.get(key)
    if ctx is None:
        ctx = ctxs[key] = Context(backend, device)
    return ctx
