"""Arrays of NumPy, PyTorch and CuPy as the library's views: what memory
they are in, their layout, and new arrays of the same kind. Private."""
from __future__ import annotations

import sys

import numpy as np

from . import _lib

NUMPY, TORCH_HOST, TORCH, CUPY = 0, 1, 2, 3

_NP_DT = {np.dtype(np.uint8): _lib.U8, np.dtype(np.uint16): _lib.U16,
          np.dtype(np.float32): _lib.F32, np.dtype(np.bool_): _lib.U8}
_NP_BOOL = np.dtype(np.bool_)
_ITEM = {_lib.U8: 1, _lib.U16: 2, _lib.F32: 4}
_SUPPORTED = "uint8, uint16 or float32"


class Arr:
    """One input or output: the object (after any conversion), its kind,
    first byte, shape, strides in bytes, sample type, memory and device."""

    __slots__ = ("obj", "kind", "ptr", "shape", "strides", "dt", "item", "mem", "dev", "is_bool",
                 "np_dtype")

    def __init__(self, obj, kind, ptr, shape, strides, dt, mem, dev, is_bool, np_dtype):
        self.obj, self.kind, self.ptr, self.shape, self.strides = obj, kind, ptr, shape, strides
        self.dt, self.item, self.mem, self.dev, self.is_bool = dt, _ITEM[dt], mem, dev, is_bool
        self.np_dtype = np_dtype


# type -> kind, filled on first sight of a type so that torch and cupy are
# imported only by their users.
_kinds: dict = {np.ndarray: NUMPY}
_torch = None
_torch_dt: dict = {}
_torch_np: dict = {}
_torch_stream = None
_cupy = None


def _init_torch():
    global _torch, _torch_stream
    import torch
    _torch = torch
    _torch_dt.update({torch.uint8: (_lib.U8, np.dtype(np.uint8)),
                      torch.uint16 if hasattr(torch, "uint16") else None: (_lib.U16, np.dtype(np.uint16)),
                      torch.float32: (_lib.F32, np.dtype(np.float32)),
                      torch.bool: (_lib.U8, _NP_BOOL)})
    _torch_dt.pop(None, None)
    _torch_np.update({np.dtype(np.int64): torch.int64, np.dtype(np.float64): torch.float64,
                      np.dtype(np.uint8): torch.uint8, np.dtype(np.float32): torch.float32,
                      np.dtype(np.bool_): torch.bool})
    if hasattr(torch, "uint16"):
        _torch_np[np.dtype(np.uint16)] = torch.uint16
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        _torch_stream = raw
    else:  # pragma: no cover (older torch)
        _torch_stream = lambda dev: torch.cuda.current_stream(dev).cuda_stream
    _lib.N.set_torch(torch.Tensor, torch.uint8, getattr(torch, "uint16", None), torch.int64,
                     _torch_stream, torch.empty_like)


def _init_cupy():
    global _cupy
    import cupy
    _cupy = cupy
    _lib.N.set_cupy(cupy.ndarray, cupy.cuda.get_current_stream, cupy.cuda.runtime.getDevice,
                    cupy.empty, cupy.empty_like)


def _kind_of(t):
    kind = _kinds.get(t)
    if kind is not None:
        return kind
    mod = t.__module__ or ""
    kind = -1
    if issubclass(t, np.ndarray):
        kind = NUMPY
    elif mod.startswith("torch") and "torch" in sys.modules:
        if _torch is None:
            _init_torch()
        if issubclass(t, _torch.Tensor):
            kind = TORCH
    elif mod.startswith("cupy") and "cupy" in sys.modules:
        if _cupy is None:
            _init_cupy()
        if issubclass(t, _cupy.ndarray):
            kind = CUPY
    _kinds[t] = kind
    return kind


def _other(x, what):
    """An object that is not a NumPy, torch or CuPy array: CUDA arrays
    through __cuda_array_interface__ or DLPack as torch tensors (or CuPy
    arrays where torch is missing), anything else through np.asarray."""
    cuda = hasattr(x, "__cuda_array_interface__")
    if not cuda and hasattr(x, "__dlpack_device__"):
        try:
            cuda = x.__dlpack_device__()[0] in (2, 3)  # kDLCUDA, kDLCUDAHost
        except Exception:
            cuda = False
    if cuda:
        try:
            import torch
            if hasattr(x, "__cuda_array_interface__"):
                return torch.as_tensor(x, device="cuda:%d" % _cai_device(x))
            return torch.from_dlpack(x)
        except ImportError:
            pass
        try:
            import cupy
            return cupy.asarray(x) if hasattr(x, "__cuda_array_interface__") else cupy.from_dlpack(x)
        except ImportError:
            raise TypeError(f"imghist: {what} is a CUDA array; reading it needs torch or cupy") from None
    try:
        return np.asarray(x)
    except Exception as e:
        raise TypeError(f"imghist: {what} is not an array ({type(x).__name__})") from e


def _cai_device(x):
    ptr = x.__cuda_array_interface__["data"][0]
    try:
        import torch
        return torch.cuda.current_device() if ptr == 0 else _pointer_device(ptr)
    except Exception:
        return 0


def _pointer_device(ptr):  # pragma: no cover (GPU only)
    import cupy
    return cupy.cuda.runtime.pointerGetAttributes(ptr).device


def describe(x, what="x"):
    """The Arr of x; TypeError for a sample type the library has not."""
    kind = _kind_of(type(x))
    if kind == TORCH:
        if x.is_cuda:
            t = _torch_dt.get(x.dtype)
            if t is None:
                raise TypeError(f"imghist: {what} has dtype {x.dtype}; want {_SUPPORTED}")
            dt, npd = t
            item = _ITEM[dt]
            return Arr(x, TORCH, x.data_ptr(), tuple(x.shape), tuple(s * item for s in x.stride()),
                       dt, _lib.MEM_DEVICE, x.get_device(), npd is _NP_BOOL, npd)
        if x.device.type != "cpu":
            raise TypeError(f"imghist: {what} is on {x.device}; imghist reads CPU and CUDA memory")
        a = describe(x.detach().numpy(), what)
        a.kind = TORCH_HOST
        return a
    if kind == CUPY:
        npd = x.dtype
        dt = _NP_DT.get(npd)
        if dt is None:
            raise TypeError(f"imghist: {what} has dtype {npd}; want {_SUPPORTED}")
        return Arr(x, CUPY, x.data.ptr, x.shape, x.strides, dt, _lib.MEM_DEVICE, x.device.id,
                   npd is _NP_BOOL or npd == _NP_BOOL, npd)
    if kind != NUMPY:
        return describe(_other(x, what), what)
    npd = x.dtype
    dt = _NP_DT.get(npd)
    if dt is None:
        raise TypeError(f"imghist: {what} has dtype {npd}; want {_SUPPORTED} (native byte order)")
    return Arr(x, NUMPY, x.__array_interface__["data"][0], x.shape, x.strides, dt,
               _lib.MEM_HOST, -1, npd == _NP_BOOL, npd)


def contiguous(a):
    """A C-contiguous copy of a, in the same memory and of the same kind."""
    if a.kind == TORCH:
        b = describe(a.obj.contiguous())
    elif a.kind == CUPY:
        with _cupy.cuda.Device(a.dev):
            b = describe(_cupy.ascontiguousarray(a.obj))
    else:
        b = describe(np.ascontiguousarray(a.obj))
        b.kind = a.kind
    return b


def empty(a, shape, np_dtype):
    """A new C-contiguous array of a's kind and device."""
    if a.kind == TORCH:
        return _torch.empty(shape, dtype=_torch_np[np_dtype], device=a.obj.device)
    if a.kind == CUPY:
        if _cupy.cuda.runtime.getDevice() == a.dev:
            return _cupy.empty(shape, np_dtype)
        with _cupy.cuda.Device(a.dev):
            return _cupy.empty(shape, np_dtype)
    return np.empty(shape, np_dtype)


def zeros(a, shape, np_dtype):
    if a.kind == TORCH:
        return _torch.zeros(shape, dtype=_torch_np[np_dtype], device=a.obj.device)
    if a.kind == CUPY:
        with _cupy.cuda.Device(a.dev):
            return _cupy.zeros(shape, np_dtype)
    return np.zeros(shape, np_dtype)


def pointer(kind, obj):
    if kind == TORCH:
        return obj.data_ptr()
    if kind == CUPY:
        return obj.data.ptr
    return obj.__array_interface__["data"][0]


def result(a, obj):
    """obj (made by empty()) as what the caller gets: torch CPU tensors for
    torch CPU inputs, else obj itself."""
    if a.kind == TORCH_HOST:
        if _torch is None:
            _init_torch()
        return _torch.from_numpy(obj)
    return obj


def stream(a):
    """The current stream of a's library on a's device, as an integer."""
    if a.kind == TORCH:
        return _torch_stream(a.dev)
    try:
        return _cupy.cuda.get_current_stream(a.dev).ptr
    except TypeError:  # pragma: no cover (CuPy without the device argument)
        with _cupy.cuda.Device(a.dev):
            return _cupy.cuda.get_current_stream().ptr


_lib.N.set_numpy(np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.int64), _lib.cuda_context)
