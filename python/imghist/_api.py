"""imghist's Python functions over the C library (see __init__.py)."""
from __future__ import annotations

import builtins
import math
import operator
import os
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from . import _lib as L

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_HOST, _DEVICE = L.MEM_HOST, L.MEM_DEVICE
_LEVELS = {L.U8: 256, L.U16: 65536, L.F32: 0}
_METHODS = {"opencv": L.EQ_OPENCV, "pil": L.EQ_PIL}
_BACKENDS = {"cpu": L.BACKEND_CPU, "cuda": L.BACKEND_CUDA, "auto": L.BACKEND_AUTO}
_N = L.N

Array = Any  # numpy.ndarray, torch.Tensor or cupy.ndarray
Range = Optional[Tuple[float, float]]


def _parse_backend(backend: str) -> Tuple[int, int]:
    """(backend, GPU index or -1) of 'cpu', 'cuda', 'cuda:N' or 'auto'."""
    name = str(backend).lower()
    dev = -1
    if name.startswith("cuda:"):
        digits = name[5:]
        if not digits.isdigit() or not digits.isascii():
            raise ValueError(f"imghist: backend={backend!r}; want 'cuda:N' with N a GPU index "
                             "(0, 1, ...)")
        name, dev = "cuda", int(digits)
    b = _BACKENDS.get(name)
    if b is None:
        raise ValueError(f"imghist: backend={backend!r}; want None, 'cpu', 'cuda', 'cuda:N' "
                         "or 'auto'")
    return b, dev


def _context(a: A.Arr, backend: Optional[str]) :
    """The calling thread's context for a: CUDA on a's GPU for device
    memory; the CPU for host memory unless backend says otherwise ('cuda:N':
    GPU N; 'cuda' and 'auto': GPU 0)."""
    if backend is None:
        if a.mem == _DEVICE:
            ctx = L.context(L.BACKEND_CUDA, a.dev)
            ctx.set_stream(A.stream(a))
            return ctx
        return L.context(L.BACKEND_CPU, -1)
    b, dev = _parse_backend(backend)
    if a.mem == _DEVICE:
        if b == L.BACKEND_CPU:
            raise ValueError("imghist: backend='cpu' cannot read GPU memory; copy the array "
                             "to the host first")
        if dev >= 0 and dev != a.dev:
            raise ValueError(f"imghist: backend={backend!r} for an array on GPU {a.dev}; a "
                             "device array runs on its own GPU")
        ctx = L.context(L.BACKEND_CUDA, a.dev)
        ctx.set_stream(A.stream(a))
        return ctx
    return L.context(b, -1 if b == L.BACKEND_CPU else max(dev, 0))


def _layout(a: A.Arr, nimg: int):
    """(ok, lead shape, lead strides, H, W, C, pitch) of a's last nimg axes:
    (H, W) or (H, W, C). ok: rows of packed pixels, any pitch."""
    shape, st = a.shape, a.strides
    if len(shape) < nimg:
        raise ValueError(f"imghist: an array of shape {tuple(shape)}; want at least {nimg} "
                         f"dimensions ({'H, W, C' if nimg == 3 else 'H, W'})")
    item = a.item
    if nimg == 2:
        H, W = shape[-2:]
        C = 1
        ok = W <= 1 or st[-1] == item
    else:
        H, W, C = shape[-3:]
        ok = (C == 1 or st[-1] == item) and (W <= 1 or st[-2] == C * item)
    row = W * C * item
    pitch = st[-nimg] if H > 1 else row
    return (ok and pitch >= row, tuple(shape[:-nimg]), tuple(st[:-nimg]), H, W, C, pitch)


def _image_layout(a: A.Arr, nimg: int, what: str = "x"):
    """_layout of a, or of a contiguous copy of a when its rows are not
    packed (negative, zero or element strides)."""
    lay = _layout(a, nimg)
    if not lay[0]:
        a = A.contiguous(a)
        lay = _layout(a, nimg)
    if lay[3] > 0xFFFFFFFF or lay[4] > 0xFFFFFFFF:
        raise ValueError(f"imghist: {what}: images up to 2^32 - 1 pixels wide and high")
    return a, lay


def _view(ptr: int, a: A.Arr, H: int, W: int, C: int, pitch: int, count: int = 1,
          stride: int = 0, mask=None) -> tuple:
    """The binding's imghist_view: count images stride bytes apart, mask a
    view tuple or None."""
    return (ptr, a.dt, a.mem, W, H, pitch, C, count, stride, mask)


def _offsets(lead, lst) -> List[int]:
    off = [0]
    for n, s in zip(lead, lst):
        off = [o + i * s for o in off for i in builtins.range(n)]
    return off


def _stride(lead, lst):
    """The one stride (bytes) between consecutive images of a batch whose
    leading dimensions nest like a contiguous array's, so that image i lies
    at i * stride from the first; None for other layouts. Dimensions of
    one element do not count."""
    dims = [(n, s) for n, s in zip(lead, lst) if n != 1]
    if not dims:
        return 0
    for (_, s_outer), (n_inner, s_inner) in zip(dims, dims[1:]):
        if s_outer != n_inner * s_inner:
            return None
    return dims[-1][1]


def _images(a: A.Arr, lay, mlay=None, o: Optional[A.Arr] = None, olay=None):
    """a's images (with their masks, into o's) as the library takes them:
    ('one', source view, destination view) when the leading dimensions nest
    like a contiguous array's; else (and for a batch of one, whose errors
    should not name batch images) ('list', source views, destination
    views)."""
    _, lead, lst, H, W, C, pitch = lay
    n = math.prod(lead)
    ss = _stride(lead, lst)
    ds = _stride(olay[1], olay[2]) if o is not None else 0
    ms = 0
    if mlay is not None:
        ma, ml = mlay
        ms = _stride(lead, ml[2]) if ml[1] else 0  # one mask for all: stride 0
    if ss is not None and ds is not None and ms is not None and (n > 1 or not lead):
        m = None
        if mlay is not None:
            m = _view(ma.ptr, ma, H, W, 1, ml[6], n if ml[1] else 1, ms)
        src = _view(a.ptr, a, H, W, C, pitch, n, ss, m)
        dst = _view(o.ptr, o, H, W, C, olay[6], n, ds) if o is not None else None
        return "one", src, dst
    moffs = None
    if mlay is not None:
        ma, ml = mlay
        moffs = _offsets(lead, ml[2]) if ml[1] else [0] * n
    srcs = [_view(a.ptr + off, a, H, W, C, pitch,
                  mask=None if moffs is None else _view(ma.ptr + moffs[i], ma, H, W, 1, ml[6]))
            for i, off in enumerate(_offsets(lead, lst))]
    dsts = None
    if o is not None:
        dsts = [_view(o.ptr + off, o, H, W, C, olay[6]) for off in _offsets(olay[1], olay[2])]
    return "list", srcs, dsts


def _mask(m, a: A.Arr, lead, H, W):
    """The mask's Arr and layout: uint8 or bool, (H, W) or a's lead + (H, W),
    in a's memory."""
    if m is None:
        return None
    ma = A.describe(m, "mask")
    if ma.dt != L.U8:
        raise TypeError("imghist: mask must be uint8 or bool")
    if ma.mem != a.mem or (a.mem == _DEVICE and ma.dev != a.dev):
        raise ValueError("imghist: mask must be in the same memory (and on the same GPU) as x")
    if ma.mem == _DEVICE and ma.kind != a.kind:
        raise TypeError("imghist: mask must be of x's library (torch or cupy)")
    ma, lay = _image_layout(ma, 2, "mask")
    if (lay[3], lay[4]) != (H, W) or (lay[1] and lay[1] != tuple(lead)):
        raise ValueError(f"imghist: mask of shape {tuple(ma.shape)} for images of {H}x{W} "
                         f"(batch {tuple(lead)}); want (H, W) or the whole batch's shape")
    return ma, lay


def _bins(bins, default: int) -> int:
    if bins is None:
        return default
    try:
        n = operator.index(bins)
    except TypeError:
        raise TypeError(f"imghist: bins must be an integer, not {type(bins).__name__}") from None
    if not 1 <= n <= L.MAX_BINS:
        raise ValueError(f"imghist: bins={n}; want 1 to 2^24")
    return n


def _pair(rng) -> Tuple[float, float]:
    try:
        lo, hi = rng
        lo, hi = float(lo), float(hi)
        return lo, hi
    except (TypeError, ValueError):
        raise ValueError(f"imghist: range={rng!r}; want (lo, hi)") from None


# NumPy 2 computes the edges of float32 ends (the data's own range) in
# float32 arithmetic; NumPy 1 in float64, then rounds them.
_NUMPY2 = int(np.__version__.split(".")[0]) >= 2
_F32 = np.float32


def _float32_ends(rng) -> bool:
    return rng is not None and all(isinstance(v, _F32) for v in rng)


def _spec(dt: int, bins, rng, flags: int, data_range, float32: bool = False):
    """(spec tuple or None, bins, lo, hi, edge rule). Integers: one bin per
    level over [0, levels) by default; float32: 256 bins over data_range()
    (the finite minimum and maximum, NumPy's default). The last bin is
    closed (numpy.histogram's rule); the edges of float32 data are made as
    the installed NumPy makes them: edge rule 1, the float64 edges rounded
    to float32; 2 (NumPy 2, float32 ends: the data's range, or float32
    scalars given), computed in float32."""
    levels = _LEVELS[dt]
    if rng is None and levels and (bins is None or bins == levels):
        return (None if not flags else (0, 0.0, 0.0, flags)), levels, 0.0, float(levels), 0
    n = _bins(bins, levels or 256)
    rule = 0
    if float32 and dt == L.F32:
        rule = 2 if _NUMPY2 and (rng is None or _float32_ends(rng)) else 1
    if rng is not None:
        lo, hi = _pair(rng)
    elif levels:
        lo, hi = 0.0, float(levels)
    else:
        lo, hi = data_range()
    if lo == hi:
        if rule == 2:  # float32 arithmetic, as NumPy 2's float32 scalars
            lo, hi = float(_F32(lo) - _F32(0.5)), float(_F32(hi) + _F32(0.5))
        else:
            lo, hi = lo - 0.5, hi + 0.5
    flags |= L.CLOSED | (0, L.FLOAT_EDGES, L.FLOAT_STEP_EDGES)[rule]
    return (n, lo, hi, flags), n, lo, hi, rule


def _range_of(ctx, a: A.Arr, lay, mlay) -> Tuple[float, float]:
    """The finite minimum and maximum of every image of a (where the mask is
    not 0): imghist_range per image (it waits for the GPU)."""
    _, lead, lst, H, W, C, pitch = lay
    lo = hi = None
    moffs = _offsets(lead, mlay[1][2]) if (mlay is not None and mlay[1][1]) else None
    for i, off in enumerate(_offsets(lead, lst)):
        m = None
        if mlay is not None:
            ma, ml = mlay
            m = _view(ma.ptr + (moffs[i] if moffs is not None else 0), ma, H, W, 1, ml[6])
        r = ctx.range(_view(a.ptr + off, a, H, W, C, pitch, mask=m))
        if r is None:
            continue  # an image with no finite sample; others may have some
        lo = r[0] if lo is None else min(lo, r[0])
        hi = r[1] if hi is None else max(hi, r[1])
    if lo is None:
        raise L.ImghistArgumentError("imghist: no finite sample to take the range from; "
                                     "give range=(lo, hi)", L.E_INVALID_ARG, "invalid argument")
    return lo, hi


def _counts_out(a: A.Arr, out, shape):
    """histogram's out=: int64, C-contiguous, of the result's shape, x's kind
    and device. Returns the array the library fills (a torch CPU tensor's
    NumPy view)."""
    want = "int64 counts of x's kind and device, C-contiguous, of shape " + str(shape)
    if a.kind in (A.NUMPY, A.TORCH_HOST):
        if a.kind == A.TORCH_HOST:
            if not (hasattr(out, "numpy") and getattr(out, "device", None) is not None
                    and out.device.type == "cpu"):
                raise TypeError(f"imghist: out must be a torch CPU tensor ({want})")
            out = out.numpy()
        if not isinstance(out, np.ndarray):
            raise TypeError(f"imghist: out must be a NumPy array ({want})")
        ok = out.dtype == np.int64 and out.flags.c_contiguous and out.flags.writeable
    elif a.kind == A.TORCH:
        import torch
        ok = (isinstance(out, torch.Tensor) and out.dtype == torch.int64 and out.is_contiguous()
              and out.device == a.obj.device)
    else:
        import cupy
        ok = (isinstance(out, cupy.ndarray) and out.dtype == np.int64
              and out.flags.c_contiguous and out.device.id == a.dev)
    if not ok or tuple(out.shape) != tuple(shape):
        raise ValueError(f"imghist: out must be {want}")
    return out


# ---- what arrays are taken, and how ----

_AUTO = "auto"


def _namespace(x):
    """'numpy', 'torch' or 'cupy': the library of an array object."""
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):
        return "torch"
    if mod.startswith("cupy"):
        return "cupy"
    return "numpy"


def _exact(x, what: str):
    """x as an array of a sample type the library counts: uint8, uint16 and
    float32 as they are; bool as uint8; other integers as the narrowest of
    uint8, uint16 and float32 that holds every value; float64 as float32 and
    float16 as float32 where every value is exactly a float32. Anything else
    (and values no type holds) is refused with the reason."""
    if isinstance(x, (list, tuple)) or not hasattr(x, "dtype"):
        kind = A._kind_of(type(x))
        if kind < 0:
            x = A._other(x, what)
    ns = _namespace(x)
    name = str(x.dtype).split(".")[-1]
    if name in ("uint8", "uint16", "float32", "bool"):
        return x
    if ns == "torch":
        import torch
        to = lambda t: x.to(getattr(torch, t))  # noqa: E731
        lo_hi = (lambda: (x.min().item(), x.max().item())) if x.numel() else (lambda: (0, 0))
        isnan = torch.isnan
    else:
        xp = np if ns == "numpy" else A._cupy
        to = lambda t: x.astype(t)  # noqa: E731
        lo_hi = (lambda: (x.min().item(), x.max().item())) if x.size else (lambda: (0, 0))
        isnan = xp.isnan
    if name.startswith(("int", "uint")):
        lo, hi = lo_hi()
        if lo >= 0 and hi <= 255:
            return to("uint8")
        if lo >= 0 and hi <= 65535:
            return to("uint16")
        if -(1 << 24) <= lo and hi <= (1 << 24):
            return to("float32")
        raise ValueError(f"imghist: {what} holds {name} values from {lo} to {hi}; integers are "
                         "counted as uint8, uint16 or (up to 2^24 in magnitude) float32")
    if name == "float16":
        return to("float32")
    if name == "float64":
        y = to("float32")
        back = y.double() if ns == "torch" else y.astype("float64")
        same = (back == x) | (isnan(x) & isnan(back))
        if bool(same.all()):
            return y
        raise ValueError(f"imghist: {what} is float64 with values no float32 holds exactly; "
                         "count x.astype(float32) (NumPy's result for float32 data) or give "
                         "float32 data")
    raise TypeError(f"imghist: {what} has dtype {name}; want uint8, uint16, float32, or data "
                    "that converts to them exactly (bool, integers, float64, float16)")


def _is_float32(x) -> bool:
    """Whether x's own samples are float32 (NumPy then rounds the edges)."""
    return str(getattr(x, "dtype", "")).split(".")[-1] == "float32"


def _channel_axis(x, channel_axis) -> Optional[int]:
    """The axis of channels, as a non-negative index, or None. 'auto': the
    last axis of a 3-D or 4-D array when it has 3 or 4 elements."""
    nd = len(x.shape)
    if isinstance(channel_axis, str):
        if channel_axis != _AUTO:
            raise ValueError(f"imghist: channel_axis={channel_axis!r}; want None, an axis or "
                             "'auto'")
        return nd - 1 if nd in (3, 4) and x.shape[-1] in (3, 4) else None
    if channel_axis is None:
        return None
    try:
        k = operator.index(channel_axis)
    except TypeError:
        raise TypeError("imghist: channel_axis must be None, an integer or 'auto'") from None
    if not -nd <= k < nd or nd < 3:
        raise ValueError(f"imghist: channel_axis={k} for an array of shape {tuple(x.shape)}; "
                         "want an axis other than the image's last two")
    k %= nd
    if k >= nd - 2 and k != nd - 1:
        raise ValueError(f"imghist: channel_axis={k} is an axis of the image (H, W)")
    return k


def _moveaxis(x, src: int, dst: int):
    ns = _namespace(x)
    if ns == "torch":
        return x.movedim(src, dst)
    if ns == "cupy":
        return A._cupy.moveaxis(x, src, dst)
    return np.moveaxis(x, src, dst)


def _edges(a: A.Arr, n: int, lo: float, hi: float, rule: int):
    """numpy.histogram's edges, in x's library and device: float64, or for
    float32 data float32 by the edge rule of _spec."""
    if rule == 2:
        lo32, hi32 = _F32(lo), _F32(hi)
        step = (hi32 - lo32) / _F32(n)
        e = np.arange(n + 1, dtype=np.float32) * step + lo32
        e[-1] = hi32
    else:
        e = np.linspace(lo, hi, n + 1)
        if rule == 1:
            e = e.astype(np.float32)
    if a.kind == A.TORCH or a.kind == A.TORCH_HOST:
        t = A._torch.from_numpy(e)
        return t.to(a.obj.device) if a.kind == A.TORCH else t
    if a.kind == A.CUPY:
        with A._cupy.cuda.Device(a.dev):
            return A._cupy.asarray(e)
    return e


def histogram(x: Array, bins: Optional[int] = None, range: Range = None, mask: Array = None, *,
              channel_axis: Union[int, None, str] = "auto", outliers: bool = False,
              return_edges: bool = False, backend: Optional[str] = None, out: Array = None):
    """Histogram of an image or a batch of images.

    x: a NumPy array (counted on the CPU, with every core), or a PyTorch
    tensor or CuPy array on a GPU (counted there, queued on the array's
    current stream, nothing copied); lists and other arrays go through
    numpy.asarray. Samples: uint8, uint16 and float32; bool is counted as
    uint8, other integers as the narrowest of uint8, uint16 and float32
    that holds every value, float64 and float16 as float32 where every value
    is exactly a float32 (refused with the reason otherwise).

    Shapes: (W,) and (H, W) give (bins,); leading dimensions are a batch
    counted in one call: (N, H, W) gives (N, bins). channel_axis (scikit-
    image's name) says which axis holds colour channels, counted apart:
    'auto' (the default) takes the last axis of a 3-D or 4-D array when it
    has 3 or 4 elements, so (H, W, 3) gives (3, bins) and (N, H, W, 4)
    gives (N, 4, bins); None has no channels (an (H, W, 3) array is then a
    batch of H images of W rows and 3 columns); an integer names the axis:
    channel_axis=1 of an (N, C, H, W) torch batch gives (N, C, bins).

    bins, range: bins equal bins over [lo, hi] with numpy.histogram's edges
    and its last-bin rule: every bin is half-open [e(i), e(i+1)) but the
    last, which is closed (a sample equal to hi is in it). For float32 data
    the edges are float32 as the installed NumPy makes them (docs/python.md),
    so the counts equal numpy.histogram(x, bins, range) on the same float32
    array (and on float64 data, NumPy's float64 result). Defaults: one bin per level for
    integers (256 over [0, 256) for uint8, 65536 for uint16; bins alone also
    spans [0, levels)); float32 has 256 bins over the data's finite minimum
    and maximum (a constant image gets [v - 0.5, v + 0.5]; finding the range
    waits for the GPU).

    mask: uint8 or bool of shape (H, W), or the batch's (N, H, W), in x's
    memory: only pixels where it is not 0 are counted.

    outliers=True returns (counts, extra): extra[..., 0:3] are the samples
    below lo (-inf too), above hi (+inf too) and NaN.
    return_edges=True returns (counts, edges) as numpy.histogram does (with
    outliers: (counts, extra, edges)).

    Returns int64 counts of x's kind: NumPy for NumPy, torch for torch (CPU
    or the same GPU), CuPy for CuPy. backend: None (above), 'cpu', 'cuda'
    (GPU 0), 'cuda:N' or 'auto' for host arrays; device arrays always run on
    their GPU. out: None, or int64 counts of x's kind and device,
    C-contiguous, of the result's shape (with outliers=True, of
    (..., bins + 3): both results are views of it), overwritten and
    returned.

    >>> import numpy as np, imghist
    >>> imghist.histogram(np.array([[0, 1], [1, 255]], np.uint8))[[0, 1, 255]]
    array([1, 2, 1])
    >>> counts, edges = imghist.histogram(np.float32([0.5, 1.5, 2.0]), 2, return_edges=True)
    >>> counts, edges
    (array([1, 2]), array([0.5 , 1.25, 2.  ], dtype=float32))
    """
    if (bins is None and range is None and mask is None and backend is None
            and not outliers and not return_edges and channel_axis in (_AUTO, None)):
        r = _N.fast_histogram(x, out)
        if r is not None:
            return r
    f32 = _is_float32(x)
    x = _exact(x, "x")
    axis = _channel_axis(x, channel_axis)
    if len(x.shape) == 1:
        x = x.reshape(1, -1)
    elif len(x.shape) == 0:
        raise ValueError("imghist: x is a scalar; want an image (W,), (H, W) or a batch")
    interleaved = axis is not None and axis == len(x.shape) - 1 and x.shape[-1] <= L.MAX_CHANNELS
    if axis is not None and not interleaved:
        x = _moveaxis(x, axis, -3)  # planes: a batch of (H, W) images
    a = A.describe(x)
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 3 if interleaved else 2)
    _, lead, lst, H, W, C, pitch = lay
    mlay = _mask(mask, a, lead, H, W)
    n_img = math.prod(lead)
    empty_input = n_img == 0 or H == 0 or W == 0
    if empty_input and a.dt == L.F32 and range is None:
        range = (0.0, 1.0)  # numpy.histogram's range for no data
    spec, nb, lo, hi, fe = _spec(a.dt, bins, range, L.OUTLIERS if outliers else 0,
                                 lambda: _range_of(ctx, a, lay, mlay), f32)
    per = nb + 3 if outliers else nb
    shape = tuple(lead) + ((C, per) if interleaved else (per,))
    given = out
    if given is not None:
        out = _counts_out(a, given, shape)
        if empty_input:
            out[...] = 0
    elif empty_input:
        out = A.zeros(a, shape, _I64)
    else:
        out = A.empty(a, shape, _I64)
    if not empty_input:
        counts = (A.pointer(a.kind, out), n_img * C * per, a.mem)
        how, src, _ = _images(a, lay, mlay)
        if how == "one":
            ctx.histogram(src, spec, counts)
        else:
            ctx.histogram_list(src, spec, counts)
    out = A.result(a, out) if given is None else given
    res = (out[..., :nb], out[..., nb:]) if outliers else (out,)
    if return_edges:
        res = res + (_edges(a, nb, lo, hi, fe),)
    return res if len(res) > 1 else res[0]


def _image_out(a: A.Arr, out: Array):
    """The destination of an image-to-image call: a new array like a when out
    is None, else out checked against a. Returns (its Arr, what to return,
    its layout)."""
    if out is None:
        o_obj = A.empty(a, tuple(a.shape), a.np_dtype)
        o = A.describe(o_obj, "out")
        if a.kind == A.TORCH_HOST:
            o.kind = A.TORCH_HOST
        o_res = A.result(a, o_obj)
    else:
        o = A.describe(out, "out")
        if (o.kind != a.kind or o.mem != a.mem or o.dev != a.dev or o.dt != a.dt
                or tuple(o.shape) != tuple(a.shape)):
            raise ValueError("imghist: out must be of x's kind, shape, dtype and device")
        if o.mem == _HOST and not o.obj.flags.writeable:
            raise ValueError("imghist: out is read-only")
        o_res = out
    olay = _layout(o, 2)
    if not olay[0] and math.prod(o.shape) > 0:  # an empty array has no rows to pack
        raise ValueError("imghist: out must have packed rows (last axis contiguous)")
    return o, o_res, olay


def _integer_images(a: A.Arr, what: str) -> None:
    """equalize's and clahe's refusal of float and bool images."""
    if a.dt == L.F32 or a.is_bool:
        raise TypeError(f"imghist: {what} takes uint8 or uint16, not {a.np_dtype}")


def _planes(x, channel_axis, what: str):
    """x with its channel axis (if any) moved before the image's (H, W), and
    the axis it came from (None: no channels)."""
    axis = _channel_axis(x, channel_axis) if len(x.shape) >= 3 else None
    if axis is None:
        return x, None
    return _moveaxis(x, axis, -3), axis


def _equalize_list(xs, method: int, mask, out, backend):
    """equalize of a list of (H, W) images of their own sizes: one batch
    call (imghist_equalize_list, masks carried by the views)."""
    n = len(xs)
    for what, lst in (("mask", mask), ("out", out)):
        if lst is not None and (not isinstance(lst, (list, tuple)) or len(lst) != n):
            raise ValueError(f"imghist: for a list of {n} images, {what} must be None or a "
                             f"list of {n}")
    if n == 0:
        return []
    srcs, dsts, res, masks = [], [], [], []
    a0 = None
    for i, x in enumerate(xs):
        a = A.describe(x, f"x[{i}]")
        _integer_images(a, "equalize")
        if len(a.shape) != 2:
            raise ValueError(f"imghist: x[{i}] has shape {tuple(a.shape)}; a list holds "
                             "(H, W) images")
        a0 = a0 or a
        if (a.kind, a.mem, a.dev, a.dt) != (a0.kind, a0.mem, a0.dev, a0.dt):
            raise TypeError("imghist: the images of a list must be of one library, memory, "
                            "device and dtype")
        a, lay = _image_layout(a, 2, f"x[{i}]")
        o, o_res, olay = _image_out(a, None if out is None else out[i])
        m = None
        if mask is not None:
            if mask[i] is None:
                raise ValueError(f"imghist: mask[{i}] is None; give every image of the list a "
                                 "mask, or none")
            ma, ml = _mask(mask[i], a, (), lay[3], lay[4])
            masks.append(ma)
            m = _view(ma.ptr, ma, lay[3], lay[4], 1, ml[6])
        srcs.append(_view(a.ptr, a, lay[3], lay[4], 1, lay[6], mask=m))
        dsts.append(_view(o.ptr, o, lay[3], lay[4], 1, olay[6]))
        res.append(o_res)
    ctx = _context(a0, backend)
    ctx.equalize_list(srcs, dsts, method)
    return res


def equalize(x: Array, method: str = "opencv", mask: Array = None, out: Array = None, *,
             channel_axis: Union[int, None, str] = "auto", backend: Optional[str] = None):
    """Histogram equalization of uint8 or uint16 images, each with the table
    of its own histogram.

    x: (H, W), or (N, H, W) and any leading dimensions (a batch: one call);
    colour channels (channel_axis as in histogram(): by default the last
    axis of a 3-D or 4-D array of 3 or 4 elements) are equalized each on its
    own, as Pillow's ImageOps.equalize and torchvision do; or a list of
    (H, W) images of their own sizes, of one library, device and dtype, with
    mask and out None or lists of as many, returning a list. NumPy runs on
    the CPU, PyTorch and CuPy GPU arrays on their GPU, queued on the current
    stream.

    method: 'opencv' (default) is cv2.equalizeHist bit for bit (and its
    formula with 65536 levels for uint16); 'pil' is Pillow's
    ImageOps.equalize and torchvision's equalize.

    mask: uint8 or bool (H, W) or the batch's shape: the histogram, and so
    the table, is counted where it is not 0 and applied to every pixel
    (scikit-image's equalize_hist(mask=...)).

    out: None (a new array), or an array of x's kind, shape, dtype and
    device with packed rows; x itself equalizes in place. Returns the
    equalized array.

    >>> import numpy as np, imghist
    >>> imghist.equalize(np.array([[10, 20], [20, 30]], np.uint8))
    array([[  0, 170],
           [170, 255]], dtype=uint8)
    """
    m = _METHODS.get(method)
    if m is None:
        raise ValueError(f"imghist: method={method!r}; want 'opencv' or 'pil'")
    if isinstance(x, (list, tuple)):
        return _equalize_list(x, m, mask, out, backend)
    if mask is None and out is None and backend is None and channel_axis in (_AUTO, None):
        r = _N.fast_equalize(x, m)
        if r is not None:
            return r
    x = _exact(x, "x")
    x, axis = _planes(x, channel_axis, "x")
    if axis is not None:
        r = _moveaxis(equalize(x, method, mask, None, channel_axis=None, backend=backend), -3, axis)
        if out is None:
            return r
        out[...] = r
        return out
    a = A.describe(x)
    _integer_images(a, "equalize")
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 2)
    _, lead, lst, H, W, C, pitch = lay
    o, o_res, olay = _image_out(a, out)
    mlay = _mask(mask, a, lead, H, W)
    n_img = math.prod(lead)
    if n_img == 0 or H == 0 or W == 0:
        return o_res
    how, src, dst = _images(a, lay, mlay, o, olay)
    if how == "one":
        ctx.equalize(src, dst, m, None)
    else:
        ctx.equalize_list(src, dst, m)
    return o_res


def clahe(x: Array, clip_limit: float = 40.0, tiles: Tuple[int, int] = (8, 8),
          out: Array = None, *, channel_axis: Union[int, None, str] = "auto",
          backend: Optional[str] = None):
    """Contrast-limited adaptive histogram equalization of uint8 or uint16
    images (any leading dimensions: a batch in one call; colour channels,
    channel_axis as in histogram(), each on its own), identical to OpenCV's
    cv2.createCLAHE(clip_limit, tiles).apply(x) image by image. tiles:
    (columns, rows) of the grid, as OpenCV's tileGridSize. NumPy runs on the
    CPU threads, PyTorch and CuPy GPU arrays on their GPU (queued on the
    current stream). out: None (a new array) or an array of x's kind,
    shape, dtype and device with packed rows; x itself works in place.

    >>> import numpy as np, imghist
    >>> imghist.clahe(np.full((4, 4), 7, np.uint8), tiles=(2, 2))[0]  # as OpenCV: clipped flat
    array([128, 128, 128, 128], dtype=uint8)
    """
    try:
        tx, ty = (int(tiles[0]), int(tiles[1]))
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"imghist: tiles={tiles!r}; want (columns, rows)") from None
    x = _exact(x, "x")
    x, axis = _planes(x, channel_axis, "x")
    if axis is not None:
        r = _moveaxis(clahe(x, clip_limit, tiles, None, channel_axis=None, backend=backend), -3, axis)
        if out is None:
            return r
        out[...] = r
        return out
    a = A.describe(x)
    _integer_images(a, "clahe")
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 2)
    _, lead, lst, H, W, C, pitch = lay
    o, o_res, olay = _image_out(a, out)
    n_img = math.prod(lead)
    if n_img == 0 or H == 0 or W == 0:
        return o_res
    how, src, dst = _images(a, lay, None, o, olay)
    if how == "one":
        ctx.clahe(src, dst, float(clip_limit), tx, ty)
    else:
        ctx.clahe_list(src, dst, float(clip_limit), tx, ty)
    return o_res


def _axis_bins(bins) -> Tuple[Any, Any]:
    if bins is None or isinstance(bins, (int, np.integer)):
        return bins, bins
    try:
        ba, bb = bins
    except (TypeError, ValueError):
        raise ValueError(f"imghist: bins={bins!r}; want an integer or (bins_a, bins_b)") from None
    return ba, bb


def _axis_ranges(rng) -> Tuple[Any, Any]:
    if rng is None:
        return None, None
    try:
        r0, r1 = rng
    except (TypeError, ValueError):
        raise ValueError(f"imghist: range={rng!r}; want (lo, hi) or ((lo, hi), (lo, hi))") from None
    if np.ndim(r0) == 0:
        return (r0, r1), (r0, r1)
    return r0, r1


def _joint(a, b, bins, rng, mask, backend):
    """Describes, checks and counts the joint histogram of a and b into a new
    int64 array of a's kind; returns (Arr of a, context, out, bins_a, bins_b)."""
    A_ = A.describe(_exact(a, "a"), "a")
    B_ = A.describe(_exact(b, "b"), "b")
    if A_.mem != B_.mem or A_.dev != B_.dev or (A_.mem == _DEVICE and A_.kind != B_.kind):
        raise ValueError("imghist: a and b must be arrays of one kind in one memory (one GPU)")
    ctx = _context(A_, backend)
    A_, la = _image_layout(A_, 2, "a")
    B_, lb = _image_layout(B_, 2, "b")
    if la[1] or lb[1]:
        raise ValueError("imghist: histogram2d and mutual_information take two 2-D images")
    H, W = la[3], la[4]
    if (lb[3], lb[4]) != (H, W):
        raise ValueError(f"imghist: a is {H}x{W} and b is {lb[3]}x{lb[4]}; want one size")
    mlay = _mask(mask, A_, (), H, W)
    ba, bb = _axis_bins(bins)
    ra, rb = _axis_ranges(rng)
    if H == 0 or W == 0:
        raise ValueError("imghist: empty images")
    sa, na, _, _, _ = _spec(A_.dt, ba, ra, 0, lambda: _range_of(ctx, A_, la, mlay))
    sb, nbb, _, _, _ = _spec(B_.dt, bb, rb, 0, lambda: _range_of(ctx, B_, lb, mlay))
    if na * nbb > L.MAX_BINS:
        raise ValueError(f"imghist: {na} x {nbb} cells; at most 2^24")
    out = A.empty(A_, (na * nbb,), _I64)
    counts = (A.pointer(A_.kind, out), na * nbb, A_.mem)
    _, src, _ = _images(A_, la, mlay)
    ctx.histogram2d(src, _view(B_.ptr, B_, H, W, 1, lb[6]), sa, sb, counts)
    return A_, ctx, out, na, nbb


def histogram2d(a: Array, b: Array, bins: Union[int, Sequence[int], None] = 256,
                range: Any = None, mask: Array = None, *, backend: Optional[str] = None):
    """Joint histogram of two one-channel images of one size: counts[i, j]
    is the number of pixels whose a-sample is in a's bin i and b-sample in
    b's bin j, as numpy.histogram2d(a.ravel(), b.ravel(), bins, range): each
    axis's last bin closed, float64 edges (NumPy's histogramdd keeps its
    edges in float64 for every type).

    a, b: (H, W), samples as histogram() takes them (the two types may
    differ), both NumPy or both on one GPU (torch or CuPy). bins: one
    integer for both axes or (bins_a, bins_b), bins_a * bins_b at most
    2^24; None is one bin per level. range: None (per axis as in
    histogram()), (lo, hi) for both axes, or ((lo_a, hi_a), (lo_b, hi_b)).
    mask as in histogram(). Pixels outside either range, or NaN, are in no
    cell. Returns int64 counts of shape (bins_a, bins_b), of the inputs' kind.

    >>> import numpy as np, imghist
    >>> imghist.histogram2d(np.uint8([[0, 1]]), np.uint8([[1, 1]]), bins=2, range=(0, 2))
    array([[0, 1],
           [0, 1]])
    """
    A_, ctx, out, na, nbb = _joint(a, b, bins, range, mask, backend)
    return A.result(A_, out.reshape(na, nbb))


def mutual_information(a: Array, b: Array, bins: Union[int, Sequence[int], None] = 256,
                       range: Any = None, mask: Array = None, *,
                       backend: Optional[str] = None):
    """Mutual information of two images from their joint histogram
    (arguments as histogram2d()): a float64 array [MI, NMI] of the inputs'
    kind, MI in bits (H(A) + H(B) - H(A, B)) and Studholme's normalised MI
    (H(A) + H(B)) / H(A, B), 2 when both images are constant. GPU arrays
    are computed on the GPU and queued on the current stream, with no wait
    for the host (an empty histogram, a mask of zeros, gives NaN there; on
    the CPU it raises ImghistArgumentError).

    >>> import numpy as np, imghist
    >>> x = np.uint8([[0, 255], [255, 0]])
    >>> imghist.mutual_information(x, x)
    array([1., 2.])
    """
    A_, ctx, joint, na, nbb = _joint(a, b, bins, range, mask, backend)
    res = A.empty(A_, (2,), _F64)
    ctx.mutual_information((A.pointer(A_.kind, joint), na * nbb, A_.mem), na, nbb,
                           A.pointer(A_.kind, res), A_.mem)
    return A.result(A_, res)


_DEPTHS = {"8": 0, 8: 0, "native": 1}
_GRAYS = {"bgr2gray": L.GRAY_BGR2GRAY, "luma": L.GRAY_LUMA}


def load(path: Union[str, bytes, os.PathLike, bytearray, memoryview], depth: str = "8",
         channels: bool = False, gray: str = "bgr2gray",
         read_truncated: bool = False) -> np.ndarray:
    """Load an image file (PNG, JPEG, TIFF, BMP, TGA, GIF, PNM, PFM, PSD, HDR,
    chosen by content) as a NumPy array, as the imghist CLI reads it.

    path: a file name (str or os.PathLike), or the file's contents (bytes,
    bytearray, memoryview: these are never file names). depth: '8' (uint8;
    16-bit samples >> 8) or 'native' (uint16 for 16-bit PNG, PNM, PSD and
    TIFF, float32 for float TIFF, Radiance HDR and PFM, uint8 for the rest).
    channels: False gives gray (H, W), converted as gray says: 'bgr2gray'
    (OpenCV's imread(IMREAD_COLOR) + cvtColor(BGR2GRAY), the default) or
    'luma' (OpenCV's imread(IMREAD_GRAYSCALE)); True gives the file's
    channels as (H, W, C), C = 1 (gray), 2 (gray, alpha), 3 (RGB) or 4
    (RGBA). EXIF and TIFF orientations are applied. read_truncated: a JPEG
    whose data ends early is refused (False, the default) or read as
    OpenCV's imread reads it, the rest made up by libjpeg-turbo, with a
    RuntimeWarning (True). Raises ImghistIOError, ImghistDecodeError or
    ImghistLimitError (with the library's message) when the file cannot be
    read or decoded.
    """
    d = _DEPTHS.get(depth)
    if d is None:
        raise ValueError(f"imghist: depth={depth!r}; want '8' or 'native'")
    g = _GRAYS.get(gray)
    if g is None:
        raise ValueError(f"imghist: gray={gray!r}; want 'bgr2gray' or 'luma'")
    ctx = L.context(L.BACKEND_CPU, -1)
    # Every load parameter, every call: the thread's context keeps them.
    ctx.set_param(L.P_LOAD_DEPTH, d)
    ctx.set_param(L.P_LOAD_CHANNELS, 1 if channels else 0)
    ctx.set_param(L.P_LOAD_GRAY, g)
    ctx.set_param(L.P_LOAD_TRUNCATED, 1 if read_truncated else 0)
    if isinstance(path, (bytes, bytearray, memoryview)):
        name = "<memory>"
        arr, flags = ctx.load(None, path, name)
    else:
        name = os.fspath(path)
        fs = os.fsencode(path)
        if b"\0" in fs:
            # C would read the name up to the NUL: another file (Python's
            # own open refuses it the same way).
            raise ValueError(f"imghist: embedded null byte in the file name {name!r}")
        arr, flags = ctx.load(fs, None, "")
    if read_truncated and flags & L.IMAGE_TRUNCATED:
        warnings.warn(f"imghist: {name!s}: JPEG data ends early; read as OpenCV reads it, "
                      f"the rest of the picture made up", RuntimeWarning, stacklevel=2)
    return arr if channels else arr[:, :, 0]


def _counts(hist) -> np.ndarray:
    """hist as a C-contiguous uint64 NumPy vector on the host (torch and CuPy
    counts are copied back), for the statistics calls."""
    h = _host(hist)
    if h.ndim != 1 or h.size == 0 or h.dtype.kind not in "iu":
        raise ValueError("imghist: want one histogram: a non-empty 1-D array of integer counts")
    if h.dtype.kind == "i" and (h < 0).any():
        raise ValueError("imghist: counts must not be negative")
    return np.ascontiguousarray(h, dtype=np.uint64)


def _host(hist) -> np.ndarray:
    if hasattr(hist, "get") and hasattr(hist, "__cuda_array_interface__"):
        hist = hist.get()  # CuPy
    elif hasattr(hist, "detach") and hasattr(hist, "cpu"):
        hist = hist.detach().cpu().numpy()  # torch
    return np.asarray(hist)


def entropy(hist) -> float:
    """Shannon entropy in bits of a histogram's bins: -sum(p log2 p), p =
    count / total. hist: a 1-D array of counts (e.g. histogram(x)), or of
    non-negative weights such as a normalised histogram (any float type,
    summing to anything above 0).

    >>> import imghist
    >>> imghist.entropy([2, 2, 0, 4]), imghist.entropy([0.25, 0.25, 0.5])
    (1.5, 1.5)
    """
    h = _host(hist)
    if h.dtype.kind == "f":
        if h.ndim != 1 or h.size == 0:
            raise ValueError("imghist: want one histogram: a non-empty 1-D array")
        if not np.isfinite(h).all() or (h < 0).any() or not h.sum() > 0:
            raise ValueError("imghist: weights must be finite, non-negative and not all 0")
        p = h[h > 0].astype(np.float64) / h.sum(dtype=np.float64)
        return float(-(p * np.log2(p)).sum()) + 0.0
    return _N.entropy(_counts(h))


def percentile(hist, p: float) -> int:
    """The bin of the p-th percentile (0 <= p <= 100) of a histogram, by the
    inverted empirical CDF (numpy.percentile(x, p, method="inverted_cdf")):
    with one bin per level, the k-th smallest sample, k = max(1, ceil(N p / 100)).

    >>> import imghist
    >>> imghist.percentile([1, 1, 1, 1], 50)
    1
    """
    h = _counts(hist)
    p = float(p)
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"imghist: p={p}; want 0 to 100")
    return _N.percentile(h, p)


def otsu(hist) -> int:
    """Otsu's threshold of a histogram as a bin t (classes: bins 0..t and
    t+1..), equal to cv2.threshold(img, 0, max, THRESH_BINARY | THRESH_OTSU)'s
    for the 256 bins of an 8-bit image (or the 65536 of a 16-bit one).

    >>> import imghist
    >>> imghist.otsu([5, 5, 0, 0, 5, 5])
    1
    """
    return _N.otsu(_counts(hist))


def match_lut(hist, ref_hist) -> np.ndarray:
    """The 256-entry uint8 lookup table that maps an 8-bit image with
    histogram hist onto the distribution of ref_hist (both 256 counts):
    scikit-image's match_histograms for unsigned images, rounded to a level
    with halves to even (np.rint)."""
    lut = np.empty(256, np.uint8)
    _N.match_lut(_counts(hist), _counts(ref_hist), lut)
    return lut


def _lookup(x, lut: np.ndarray):
    """lut[x] in x's own library and device."""
    ns = _namespace(x)
    if ns == "cupy":
        import cupy
        return cupy.asarray(lut)[x]
    if ns == "torch":
        import torch
        return torch.as_tensor(lut, device=x.device)[x.long()]
    return lut[np.asarray(x)]


def match_histograms(x: Array, reference: Array, *,
                     channel_axis: Union[int, None, str] = "auto",
                     backend: Optional[str] = None) -> Array:
    """x (uint8, any shape; NumPy, torch or CuPy) with its histogram matched
    to reference's (uint8, any shape and library), as
    np.rint(skimage.exposure.match_histograms(x, reference,
    channel_axis=...)).astype(np.uint8): both histograms counted by imghist
    (on the GPU for device arrays), the table from match_lut, looked up in
    x's own library and device. channel_axis: as in histogram() ('auto':
    the last axis of a 3-D or 4-D array of 3 or 4 elements): each channel
    of x is matched to the same channel of reference, which must have as
    many, and rounded as one channel is (scikit-image's own channel_axis
    path truncates instead: it stores into uint8); None matches all
    samples together.

    >>> import numpy as np, imghist
    >>> imghist.match_histograms(np.uint8([[0, 1]]), np.uint8([[10, 200]]))
    array([[ 10, 200]], dtype=uint8)
    """
    for a, what in ((x, "x"), (reference, "reference")):
        if str(getattr(a, "dtype", "")).split(".")[-1] != "uint8":
            raise ValueError(f"imghist: match_histograms takes uint8 arrays; {what} is "
                             f"{getattr(a, 'dtype', type(a).__name__)}")
    axis = _channel_axis(x, channel_axis) if len(x.shape) >= 3 else None
    if axis is None:
        lut = match_lut(histogram(x.reshape(1, -1), channel_axis=None, backend=backend),
                        histogram(reference.reshape(1, -1), channel_axis=None, backend=backend))
        return _lookup(x, lut)
    raxis = axis - len(x.shape) + len(reference.shape)
    if not 0 <= raxis < len(reference.shape) or reference.shape[raxis] != x.shape[axis]:
        raise ValueError(f"imghist: reference of shape {tuple(reference.shape)} for x of shape "
                         f"{tuple(x.shape)} with channel_axis={axis}; want as many channels on "
                         "the same axis (counted from the end)")
    xs, rs = _moveaxis(x, axis, 0), _moveaxis(reference, raxis, 0)
    planes = [match_histograms(xs[c], rs[c], channel_axis=None, backend=backend)
              for c in builtins.range(x.shape[axis])]
    ns = _namespace(x)
    stack = (A._torch.stack if ns == "torch" else A._cupy.stack if ns == "cupy" else np.stack)
    return _moveaxis(stack(planes), 0, axis)


def cuda_available() -> bool:
    """True when this libimghist has the CUDA backend and a usable GPU."""
    return L.device_count() > 0


def device_count() -> int:
    """GPUs the CUDA backend can use (CUDA_VISIBLE_DEVICES respected); 0 in
    a build without CUDA."""
    return L.device_count()
