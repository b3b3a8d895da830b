"""imghist's Python functions over the C library (see __init__.py)."""
from __future__ import annotations

import ctypes
import math
import operator
import os
import warnings
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as A
from . import _lib as L
from ._lib import ImghistError

_I64 = np.dtype(np.int64)
_F64 = np.dtype(np.float64)
_HOST, _DEVICE = L.MEM_HOST, L.MEM_DEVICE
_LEVELS = {L.U8: 256, L.U16: 65536, L.F32: 0}
_METHODS = {"opencv": L.EQ_OPENCV, "pil": L.EQ_PIL}
_BACKENDS = {"cpu": L.BACKEND_CPU, "cuda": L.BACKEND_CUDA, "auto": L.BACKEND_AUTO}

# One imghist_view per element, as the C structure (for lists of images).
_VIEW_FIELDS = [("data", np.uint64), ("dtype", np.int32), ("mem", np.int32),
                ("width", np.uint32), ("height", np.uint32), ("pitch", np.uint64),
                ("channels", np.uint32), ("count", np.uint64), ("image_stride", np.int64),
                ("mask", np.uint64)]
_VIEW_DT = np.dtype({"names": [n for n, _ in _VIEW_FIELDS],
                     "formats": [f for _, f in _VIEW_FIELDS],
                     "offsets": [getattr(L.View, n).offset for n, _ in _VIEW_FIELDS],
                     "itemsize": ctypes.sizeof(L.View)})

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


def _context(a: A.Arr, backend: Optional[str]) -> L.Context:
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
        if not 1 <= C <= L.MAX_CHANNELS:
            raise ValueError(f"imghist: {C} channels; want 1 to {L.MAX_CHANNELS} "
                             "(channels=True reads (..., H, W, C))")
        ok = (C == 1 or st[-1] == item) and (W <= 1 or st[-2] == C * item)
    row = W * C * item
    pitch = st[-nimg] if H > 1 else row
    return (ok and pitch >= row, shape[:-nimg], st[:-nimg], H, W, C, pitch)


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


def _set_view(v: L.View, ptr: int, a: A.Arr, H: int, W: int, C: int, pitch: int,
              count: int = 1, stride: int = 0, mask: int = 0) -> None:
    """Every field of v: count images stride bytes apart, mask the address of
    their mask view (0: none)."""
    L.VIEW_PACK.pack_into(v, 0, ptr, a.dt, a.mem, W, H, pitch, C, count, stride, mask)


def _offsets(lead, lst):
    off = np.zeros(1, np.int64)
    for n, s in zip(lead, lst):
        off = (off[:, None] + np.arange(n, dtype=np.int64) * s).ravel()
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


def _view_array(data, dt: int, mem: int, H, W, C, pitch) -> np.ndarray:
    """A host array of imghist_view, one image each at the addresses data
    (an integer array; H, W and pitch may be arrays too)."""
    v = np.zeros(len(data), _VIEW_DT)
    v["data"] = data
    v["dtype"] = dt
    v["mem"] = mem
    v["width"] = W
    v["height"] = H
    v["pitch"] = pitch
    v["channels"] = C
    return v


def _views(ctx: L.Context, slot: str, a: A.Arr, lead, lst, H, W, C, pitch):
    """A host array of imghist_view, one per image of the batch; the last
    one of each slot is kept for the next call with the same array."""
    key = (a.ptr, lead, lst, a.dt, a.mem, H, W, C, pitch)
    if slot == "src":
        if ctx.batch_key == key:
            return ctx.batch_views
    elif ctx.batch_dst_key == key:
        return ctx.batch_dst_views
    v = _view_array((_offsets(lead, lst) + a.ptr).astype(np.uint64), a.dt, a.mem, H, W, C,
                    pitch)
    if slot == "src":
        ctx.batch_key, ctx.batch_views = key, v
    else:
        ctx.batch_dst_key, ctx.batch_dst_views = key, v
    return v


def _with_masks(v: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A copy of the views v whose image i carries masks[i] (masks must
    outlive the call that reads the copy)."""
    v = v.copy()
    v["mask"] = masks.ctypes.data + np.arange(len(masks), dtype=np.uint64) * masks.itemsize
    return v


def _images(ctx: L.Context, a: A.Arr, lay, mlay=None, o: Optional[A.Arr] = None, olay=None):
    """a's images (with their masks, into o's) as the library takes them:
    one view each in ctx.src (ctx.mask) and ctx.dst when the leading
    dimensions nest like a contiguous array's, returning None; else (and for
    a batch of one) a list, returning (source views, destination views, mask
    views) for a _list call, the mask views kept alive by the caller."""
    _, lead, lst, H, W, C, pitch = lay
    n = math.prod(lead)
    ss = _stride(lead, lst)
    ds = _stride(olay[1], olay[2]) if o is not None else 0
    ms = 0
    if mlay is not None:
        ma, ml = mlay
        ms = _stride(lead, ml[2]) if ml[1] else 0  # one mask for all: stride 0
    # A batch of one stays a batch (a view of count 1 is one image, whose
    # errors do not name batch images), so it goes as a list of one.
    if ss is not None and ds is not None and ms is not None and (n > 1 or not lead):
        m = 0
        if mlay is not None:
            _set_view(ctx.mask, ma.ptr, ma, H, W, 1, ml[6], n if ml[1] else 1, ms)
            m = ctx.mask_a
        _set_view(ctx.src, a.ptr, a, H, W, C, pitch, n, ss, m)
        if o is not None:
            _set_view(ctx.dst, o.ptr, o, H, W, C, olay[6], n, ds)
        return None
    sv = _views(ctx, "src", a, lead, lst, H, W, C, pitch)
    dv = _views(ctx, "dst", o, olay[1], olay[2], H, W, C, olay[6]) if o is not None else None
    mv = None
    if mlay is not None:
        off = _offsets(lead, ml[2]) if ml[1] else np.zeros(n, np.int64)
        mv = _view_array((off + ma.ptr).astype(np.uint64), L.U8, ma.mem, H, W, 1, ml[6])
        sv = _with_masks(sv, mv)
    return sv, dv, mv


def _mask(m, a: A.Arr, lead, H, W, ctx: L.Context):
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
    if (lay[3], lay[4]) != (H, W) or (lay[1] and lay[1] != lead):
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
        return float(lo), float(hi)
    except (TypeError, ValueError):
        raise ValueError(f"imghist: range={rng!r}; want (lo, hi)") from None


def _spec(spec: L.Spec, dt: int, bins, rng, flags: int, data_range) -> int:
    """Fill spec; returns the bins. Integers: one bin per level over
    [0, levels) by default; float32: 256 bins over data_range() (the finite
    minimum and maximum, NumPy's default) with the last bin closed."""
    levels = _LEVELS[dt]
    if rng is None and levels and (bins is None or bins == levels):
        spec.bins = 0
        spec.flags = flags
        return levels
    n = _bins(bins, levels or 256)
    if rng is not None:
        lo, hi = _pair(rng)
    elif levels:
        lo, hi = 0.0, float(levels)
    else:
        lo, hi = data_range()
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        flags |= L.CLOSED
    spec.bins = n
    spec.lo = lo
    spec.hi = hi
    spec.flags = flags
    return n


def _range_of(ctx: L.Context, a: A.Arr, lay, mlay) -> Tuple[float, float]:
    """The finite minimum and maximum of every image of a (where the mask is
    not 0): imghist_range per image (it waits for the GPU)."""
    _, lead, lst, H, W, C, pitch = lay
    lo = hi = None
    offs = _offsets(lead, lst)
    moffs = _offsets(lead, mlay[1][2]) if (mlay is not None and mlay[1][1]) else None
    for i, off in enumerate(offs.tolist()):
        m = 0
        if mlay is not None:
            ma, ml = mlay
            mo = moffs[i] if moffs is not None else 0
            _set_view(ctx.mask, ma.ptr + int(mo), ma, H, W, 1, ml[6])
            m = ctx.mask_a
        _set_view(ctx.src, a.ptr + off, a, H, W, C, pitch, mask=m)
        st = L.lib.imghist_range(ctx.ptr, ctx.src_a, ctx.d2_a, ctx.d2_a + 8)
        if st == L.E_INVALID_ARG and len(offs) > 1:
            continue  # an image with no finite sample; others may have some
        ctx.check(st)
        lo = ctx.d2[0] if lo is None else min(lo, ctx.d2[0])
        hi = ctx.d2[1] if hi is None else max(hi, ctx.d2[1])
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


def histogram(x: Array, bins: Optional[int] = None, range: Range = None, mask: Array = None, *,
              channels: bool = False, outliers: bool = False, closed: bool = False,
              backend: Optional[str] = None, out: Array = None):
    """Histogram of an image or a batch of images.

    x: uint8, uint16 or float32; a NumPy array (counted on the CPU, with every
    core), or a PyTorch tensor or CuPy array on a GPU (counted there, queued on
    the array's current stream, nothing copied). Shapes: (H, W) gives
    (bins,); (N, H, W), or any leading dimensions, a batch counted in one
    call, gives (N, bins). With channels=True the last axis holds 1 to 4
    interleaved channels counted apart: (H, W, C) gives (C, bins) and
    (N, H, W, C) gives (N, C, bins).

    bins, range: bins equal bins over [lo, hi) with NumPy's edges
    (linspace); a sample equal to hi is in no bin unless closed=True. The
    defaults: one bin per level for integers (256 over [0, 256) for uint8,
    65536 over [0, 65536) for uint16; bins alone also spans [0, levels));
    float32 has 256 bins over the data's finite minimum and maximum with the
    last bin closed (numpy.histogram's rule; a constant image gets
    [v - 0.5, v + 0.5]); finding that range waits for the GPU.

    mask: uint8 or bool of shape (H, W), or the batch's (N, H, W), in x's
    memory: only pixels where it is not 0 are counted (a batch with its masks
    is one call).

    outliers=True returns (counts, extra): extra[..., 0:3] are the samples
    below lo (-inf too), above hi (+inf too) and NaN; both are views of one
    buffer.

    Returns int64 counts of x's kind: NumPy for NumPy (and anything
    np.asarray takes), torch for torch (CPU or the same GPU), CuPy for CuPy.
    Rows may be pitched (any row stride); other layouts are copied to a
    contiguous array first, in x's memory. backend: None (above), 'cpu',
    'cuda' (GPU 0), 'cuda:N' (GPU N) or 'auto' (CUDA if a GPU is usable)
    for host arrays; device arrays always run on their GPU ('cuda:N' naming
    another GPU is an error).

    out: None (new counts), or int64 counts of x's kind and device,
    C-contiguous, of the result's shape (with outliers=True, the one buffer
    of both: (..., bins + 3)), overwritten and returned. Reusing
    one spares a 65536-bin NumPy histogram of a small image most of its
    time: a fresh array's pages fault when first written.
    """
    if (bins is None and range is None and mask is None and backend is None and not channels
            and not outliers and not closed and out is None):
        p = A.plain(x)
        if p is not None:
            return _plain_histogram(x, p)
    a = A.describe(x)
    if a.is_bool:
        raise TypeError("imghist: x is bool; want uint8, uint16 or float32")
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 3 if channels else 2)
    _, lead, lst, H, W, C, pitch = lay
    mlay = _mask(mask, a, lead, H, W, ctx)
    n_img = math.prod(lead)
    flags = (L.OUTLIERS if outliers else 0) | (L.CLOSED if closed else 0)
    empty_input = n_img == 0 or H == 0 or W == 0
    if empty_input and a.dt == L.F32 and range is None:
        range = (0.0, 1.0)  # numpy.histogram's range for no data
    spec = ctx.spec
    nb = _spec(spec, a.dt, bins, range, flags, lambda: _range_of(ctx, a, lay, mlay))
    per = nb + 3 if outliers else nb
    shape = tuple(lead) + ((C, per) if channels else (per,))
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
        L.COUNTS_PACK.pack_into(ctx.counts, 0, A.pointer(a.kind, out), n_img * C * per, a.mem)
        views = _images(ctx, a, lay, mlay)
        if views is None:
            ctx.check(L.lib.imghist_histogram(ctx.ptr, ctx.src_a, ctx.spec_a, ctx.counts_a))
        else:
            ctx.check(L.lib.imghist_histogram_list(ctx.ptr, views[0].ctypes.data, n_img,
                                                   ctx.spec_a, ctx.counts_a))
    out = A.result(a, out) if given is None else given
    if outliers:
        return out[..., :nb], out[..., nb:]
    return out


def _plain_context(p) -> L.Context:
    kind, dt, ptr, H, W, pitch, dev, stream, _ = p
    ctx = L.context(L.BACKEND_CUDA, dev)
    if stream != ctx.stream:
        ctx.set_stream(stream)
    L.VIEW_PACK.pack_into(ctx.src, 0, ptr, dt, _DEVICE, W, H, pitch, 1, 1, 0, 0)
    return ctx


def _plain_histogram(x, p):
    """histogram(x) of a 2-D GPU image, default arguments (A.plain)."""
    ctx = _plain_context(p)
    kind, dt = p[0], p[1]
    n = _LEVELS[dt]
    out = A.new_counts(x, kind, n)
    spec = ctx.spec
    spec.bins = 0
    spec.flags = 0
    L.COUNTS_PACK.pack_into(ctx.counts, 0, A.pointer(kind, out), n, _DEVICE)
    ctx.check(L.lib.imghist_histogram(ctx.ptr, ctx.src_a, ctx.spec_a, ctx.counts_a))
    return out


def _plain_equalize(x, p, method: int):
    """equalize(x, method) of a dense 2-D GPU image into a new array (A.plain)."""
    ctx = _plain_context(p)
    kind, dt, _, H, W, pitch = p[:6]
    out = A.new_like(x, kind)
    L.VIEW_PACK.pack_into(ctx.dst, 0, A.pointer(kind, out), dt, _DEVICE, W, H, pitch, 1, 1, 0, 0)
    ctx.check(L.lib.imghist_equalize(ctx.ptr, ctx.src_a, ctx.dst_a, method, None))
    return out


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


def _list_views(items: List[A.Arr], lays) -> np.ndarray:
    """A host array of imghist_view, one per (H, W) image of a list."""
    return _view_array([a.ptr for a in items], items[0].dt, items[0].mem,
                       [lay[3] for lay in lays], [lay[4] for lay in lays], 1,
                       [lay[6] for lay in lays])


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
    srcs, lays, dsts, dlays, res, mas, mls = [], [], [], [], [], [], []
    for i, x in enumerate(xs):
        a = A.describe(x, f"x[{i}]")
        _integer_images(a, "equalize")
        if len(a.shape) != 2:
            raise ValueError(f"imghist: x[{i}] has shape {tuple(a.shape)}; a list holds "
                             "(H, W) images")
        a0 = srcs[0] if srcs else a
        if (a.kind, a.mem, a.dev, a.dt) != (a0.kind, a0.mem, a0.dev, a0.dt):
            raise TypeError("imghist: the images of a list must be of one library, memory, "
                            "device and dtype")
        a, lay = _image_layout(a, 2, f"x[{i}]")
        o, o_res, olay = _image_out(a, None if out is None else out[i])
        srcs.append(a)
        lays.append(lay)
        dsts.append(o)
        dlays.append(olay)
        res.append(o_res)
        if mask is not None:
            if mask[i] is None:
                raise ValueError(f"imghist: mask[{i}] is None; give every image of the list a "
                                 "mask, or none")
            ma, ml = _mask(mask[i], a, (), lay[3], lay[4], None)
            mas.append(ma)
            mls.append(ml)
    ctx = _context(srcs[0], backend)
    sv, dv = _list_views(srcs, lays), _list_views(dsts, dlays)
    mv = None
    if mask is not None:
        mv = _list_views(mas, mls)
        sv = _with_masks(sv, mv)
    ctx.check(L.lib.imghist_equalize_list(ctx.ptr, sv.ctypes.data, dv.ctypes.data, n, method,
                                          None))
    return res


def equalize(x: Array, method: str = "opencv", mask: Array = None, out: Array = None, *,
             backend: Optional[str] = None):
    """Histogram equalization of a one-channel uint8 or uint16 image, or of
    a batch of them.

    x: (H, W), or (N, H, W) and any leading dimensions: each (H, W) image
    equalized with its own histogram (a torchvision (N, C, H, W) tensor has
    each channel equalized, as torchvision does); or a list of (H, W)
    images of their own sizes (regions of interest: one batch call), of one
    library, device and dtype, with mask and out None or lists of as many,
    returning a list. NumPy runs on the CPU, PyTorch and CuPy GPU arrays on
    their GPU, queued on the current stream. A batch is one call:
    imghist_equalize on one view of all the images for arrays laid out as
    contiguous ones are, else imghist_equalize_list; the library picks its
    launches on the GPU and spreads NumPy batches over the CPU threads.

    method: 'opencv' (default) is cv2.equalizeHist bit for bit (and its
    formula with 65536 levels for uint16); 'pil' is Pillow's
    ImageOps.equalize and torchvision's equalize (step from the last
    non-empty bin).

    mask: uint8 or bool (H, W) or the batch's shape: the histogram, and so
    the lookup table, is counted where it is not 0 and applied to every pixel
    (scikit-image's equalize_hist(mask=...)).

    out: None (a new array), or an array of x's kind, shape, dtype and
    device with packed rows; x itself equalizes in place. Returns the
    equalized array.
    """
    m = _METHODS.get(method)
    if m is None:
        raise ValueError(f"imghist: method={method!r}; want 'opencv' or 'pil'")
    if isinstance(x, (list, tuple)):
        return _equalize_list(x, m, mask, out, backend)
    if mask is None and out is None and backend is None:
        p = A.plain(x)
        if p is not None and p[8]:
            return _plain_equalize(x, p, m)
    a = A.describe(x)
    _integer_images(a, "equalize")
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 2)
    _, lead, lst, H, W, C, pitch = lay
    o, o_res, olay = _image_out(a, out)
    mlay = _mask(mask, a, lead, H, W, ctx)
    n_img = math.prod(lead)
    if n_img == 0 or H == 0 or W == 0:
        return o_res
    views = _images(ctx, a, lay, mlay, o, olay)
    if views is None:
        ctx.check(L.lib.imghist_equalize(ctx.ptr, ctx.src_a, ctx.dst_a, m, None))
    else:
        ctx.check(L.lib.imghist_equalize_list(ctx.ptr, views[0].ctypes.data,
                                              views[1].ctypes.data, n_img, m, None))
    return o_res


def clahe(x: Array, clip_limit: float = 40.0, tiles: Tuple[int, int] = (8, 8),
          out: Array = None, *, backend: Optional[str] = None):
    """Contrast-limited adaptive histogram equalization of a one-channel
    uint8 or uint16 image, or of a batch of them (any leading dimensions),
    identical to OpenCV's cv2.createCLAHE(clip_limit, tiles).apply(x) image by
    image. tiles: (columns, rows) of the grid, as OpenCV's tileGridSize.
    NumPy runs on the CPU threads, PyTorch and CuPy GPU arrays on their GPU
    (tile histograms, clipping, LUTs and the blend on the device, queued on
    the current stream). out: None (a new array) or an array of x's kind,
    shape, dtype and device with packed rows; x itself works in place.
    Returns the result."""
    try:
        tx, ty = (int(tiles[0]), int(tiles[1]))
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"imghist: tiles={tiles!r}; want (columns, rows)") from None
    a = A.describe(x)
    _integer_images(a, "clahe")
    ctx = _context(a, backend)
    a, lay = _image_layout(a, 2)
    _, lead, lst, H, W, C, pitch = lay
    o, o_res, olay = _image_out(a, out)
    n_img = math.prod(lead)
    if n_img == 0 or H == 0 or W == 0:
        return o_res
    views = _images(ctx, a, lay, None, o, olay)
    if views is None:
        ctx.check(L.lib.imghist_clahe(ctx.ptr, ctx.src_a, ctx.dst_a, float(clip_limit), tx, ty))
    else:
        ctx.check(L.lib.imghist_clahe_list(ctx.ptr, views[0].ctypes.data, views[1].ctypes.data,
                                           n_img, float(clip_limit), tx, ty))
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
    A_ = A.describe(a, "a")
    B_ = A.describe(b, "b")
    if A_.is_bool or B_.is_bool:
        raise TypeError("imghist: a and b must be uint8, uint16 or float32")
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
    mlay = _mask(mask, A_, (), H, W, ctx)
    ba, bb = _axis_bins(bins)
    ra, rb = _axis_ranges(rng)
    if H == 0 or W == 0:
        raise ValueError("imghist: empty images")
    # The data range of a float axis is found before the views are set for the call.
    na = _spec(ctx.spec, A_.dt, ba, ra, 0, lambda: _range_of(ctx, A_, la, mlay))
    nbb = _spec(ctx.spec2, B_.dt, bb, rb, 0, lambda: _range_of(ctx, B_, lb, mlay))
    if na * nbb > L.MAX_BINS:
        raise ValueError(f"imghist: {na} x {nbb} cells; at most 2^24")
    out = A.empty(A_, (na * nbb,), _I64)
    L.COUNTS_PACK.pack_into(ctx.counts, 0, A.pointer(A_.kind, out), na * nbb, A_.mem)
    _images(ctx, A_, la, mlay)  # one image: a's view, with its mask, in ctx.src
    _set_view(ctx.dst, B_.ptr, B_, H, W, 1, lb[6])
    ctx.check(L.lib.imghist_histogram2d(ctx.ptr, ctx.src_a, ctx.dst_a, ctx.spec_a, ctx.spec2_a,
                                        ctx.counts_a))
    return A_, ctx, out, na, nbb


def histogram2d(a: Array, b: Array, bins: Union[int, Sequence[int], None] = 256,
                range: Any = None, mask: Array = None, *, backend: Optional[str] = None):
    """Joint histogram of two one-channel images of one size: counts[i, j]
    is the number of pixels whose a-sample is in a's bin i and b-sample in
    b's bin j (numpy.histogram2d(a.ravel(), b.ravel(), ...) for integer
    data, with each axis's last bin open unless the range comes from float
    data).

    a, b: (H, W) uint8, uint16 or float32 (the two may differ), both NumPy
    or both on one GPU (torch or CuPy). bins: one integer for both axes or
    (bins_a, bins_b), bins_a * bins_b at most 2^24; None is one bin per
    level. range: None (per axis as in histogram()), (lo, hi) for both
    axes, or ((lo_a, hi_a), (lo_b, hi_b)). mask as in histogram(). Pixels
    outside either range, or NaN, are in no cell.

    Returns int64 counts of shape (bins_a, bins_b), of the inputs' kind.
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
    """
    A_, ctx, joint, na, nbb = _joint(a, b, bins, range, mask, backend)
    res = A.empty(A_, (2,), _F64)
    L.COUNTS_PACK.pack_into(ctx.counts, 0, A.pointer(A_.kind, joint), na * nbb, A_.mem)
    ctx.check(L.lib.imghist_mutual_information(ctx.ptr, ctx.counts_a, na, nbb,
                                               A.pointer(A_.kind, res), A_.mem))
    return A.result(A_, res)


_DEPTHS = {"8": 0, 8: 0, "native": 1}
_GRAYS = {"bgr2gray": 0, "luma": 1}


def load(path: Union[str, bytes, os.PathLike, bytearray, memoryview], depth: str = "8",
         channels: bool = False, gray: str = "bgr2gray",
         read_truncated: bool = False) -> np.ndarray:
    """Load an image file (PNG, JPEG, TIFF, BMP, TGA, GIF, PNM, PFM, PSD, HDR,
    chosen by content) as a NumPy array, as the imghist CLI reads it.

    path: a file name (str or os.PathLike), or the file's contents (bytes,
    bytearray, memoryview: these are never file names). depth: '8' (uint8; 16-bit samples >> 8) or
    'native' (uint16 for 16-bit PNG, PNM, PSD and TIFF, float32 for float
    TIFF, Radiance HDR and PFM, uint8 for the rest). channels: False gives gray
    (H, W), converted as gray says: 'bgr2gray' (OpenCV's
    imread(IMREAD_COLOR) + cvtColor(BGR2GRAY), the default) or 'luma'
    (OpenCV's imread(IMREAD_GRAYSCALE)); True gives the file's channels as
    (H, W, C), C = 1 (gray), 2 (gray, alpha), 3 (RGB) or 4 (RGBA). EXIF and
    TIFF orientations are applied. read_truncated: a JPEG whose data ends
    early is refused (False, the default) or read as OpenCV's imread reads
    it, the part the data does not reach made up by libjpeg-turbo, with a
    RuntimeWarning (True). Raises ImghistError (with
    the library's message) when the file cannot be read or decoded.
    """
    d = _DEPTHS.get(depth)
    if d is None:
        raise ValueError(f"imghist: depth={depth!r}; want '8' or 'native'")
    g = _GRAYS.get(gray)
    if g is None:
        raise ValueError(f"imghist: gray={gray!r}; want 'bgr2gray' or 'luma'")
    ctx = L.context(L.BACKEND_CPU, -1)
    ctx.set_param(L.P_LOAD_DEPTH, d)
    ctx.set_param(L.P_LOAD_CHANNELS, 1 if channels else 0)
    ctx.set_param(L.P_LOAD_GRAY, g)
    # Every load parameter, every call: the thread's context keeps them.
    ctx.set_param(L.P_LOAD_TRUNCATED, 1 if read_truncated else 0)
    img = ctypes.c_void_p()
    if isinstance(path, (bytes, bytearray, memoryview)):
        buf = np.frombuffer(path, np.uint8)
        st = L.lib.imghist_load_memory(ctx.ptr, buf.ctypes.data if buf.size else None, buf.size,
                                       b"<memory>", ctypes.addressof(img))
    else:
        name = os.fsencode(path)
        if b"\0" in name:
            # C would read the name up to the NUL: another file (Python's
            # own open refuses it the same way).
            raise ValueError(f"imghist: embedded null byte in the file name {os.fspath(path)!r}")
        st = L.lib.imghist_load_file(ctx.ptr, name, ctypes.addressof(img))
    ctx.check(st)
    try:
        image = L.Image.from_address(img.value)
        if read_truncated and image.flags & L.IMAGE_TRUNCATED:
            name = "<memory>" if isinstance(path, (bytes, bytearray, memoryview)) else os.fspath(path)
            warnings.warn(f"imghist: {name!s}: JPEG data ends early; read as OpenCV reads it, "
                          f"the rest of the picture made up", RuntimeWarning, stacklevel=2)
        v = image.view
        dtype = {L.U8: np.uint8, L.U16: np.uint16, L.F32: np.float32}[v.dtype]
        C = v.channels or 1
        n = v.pitch * v.height
        raw = (ctypes.c_char * n).from_address(v.data)
        arr = np.frombuffer(raw, dtype).copy()
        shape = (v.height, v.width, C) if channels else (v.height, v.width)
        return arr.reshape(shape)
    finally:
        L.lib.imghist_image_free(img.value)


def _counts(hist) -> np.ndarray:
    """hist as a C-contiguous uint64 NumPy vector on the host (torch and CuPy
    counts are copied back), for the statistics calls."""
    if hasattr(hist, "get") and hasattr(hist, "__cuda_array_interface__"):
        hist = hist.get()  # CuPy
    elif hasattr(hist, "detach") and hasattr(hist, "cpu"):
        hist = hist.detach().cpu().numpy()  # torch
    h = np.asarray(hist)
    if h.ndim != 1 or h.size == 0 or h.dtype.kind not in "iu":
        raise ValueError("imghist: want one histogram: a non-empty 1-D array of integer counts")
    if h.dtype.kind == "i" and (h < 0).any():
        raise ValueError("imghist: counts must not be negative")
    return np.ascontiguousarray(h, dtype=np.uint64)


def _stat(call, h, *args):
    st = call(h.ctypes.data, h.size, *args)
    if st != L.OK:
        raise L.error(st, "imghist: no count in the histogram" if st == L.E_INVALID_ARG
                      else "")


def entropy(hist) -> float:
    """Shannon entropy in bits of a histogram's bins (a 1-D array of counts,
    e.g. histogram(x)): -sum(p log2 p), p = count / total."""
    h = _counts(hist)
    out = ctypes.c_double()
    _stat(L.lib.imghist_entropy, h, ctypes.addressof(out))
    return out.value


def percentile(hist, p: float) -> int:
    """The bin of the p-th percentile (0 <= p <= 100) of a histogram, by the
    inverted empirical CDF (numpy.percentile(x, p, method="inverted_cdf")):
    with one bin per level, the k-th smallest sample, k = max(1, ceil(N p / 100))."""
    h = _counts(hist)
    p = float(p)
    if not 0.0 <= p <= 100.0:
        raise ValueError(f"imghist: p={p}; want 0 to 100")
    out = ctypes.c_size_t()
    _stat(L.lib.imghist_percentile, h, p, ctypes.addressof(out))
    return out.value


def otsu(hist) -> int:
    """Otsu's threshold of a histogram as a bin t (classes: bins 0..t and
    t+1..), equal to cv2.threshold(img, 0, max, THRESH_BINARY | THRESH_OTSU)'s
    for the 256 bins of an 8-bit image (or the 65536 of a 16-bit one)."""
    h = _counts(hist)
    out = ctypes.c_size_t()
    _stat(L.lib.imghist_otsu, h, ctypes.addressof(out))
    return out.value


def match_lut(hist, ref_hist) -> np.ndarray:
    """The 256-entry uint8 lookup table that maps an 8-bit image with
    histogram hist onto the distribution of ref_hist (both 256 counts):
    scikit-image's match_histograms for unsigned images, rounded to a level
    with halves to even (np.rint)."""
    h, r = _counts(hist), _counts(ref_hist)
    if h.size != 256 or r.size != 256:
        raise ValueError("imghist: match_lut wants two histograms of 256 counts")
    lut = np.empty(256, np.uint8)
    st = L.lib.imghist_match_lut(h.ctypes.data, r.ctypes.data, lut.ctypes.data)
    if st != L.OK:
        raise L.error(st, "imghist: no count in a histogram" if st == L.E_INVALID_ARG else "")
    return lut


def match_histograms(x: Array, reference: Array, *, backend: Optional[str] = None) -> Array:
    """x (uint8, any shape; NumPy, torch or CuPy) with its histogram matched
    to reference's (uint8, any shape and library), as
    np.rint(skimage.exposure.match_histograms(x, reference)).astype(np.uint8):
    both histograms counted by imghist (on the GPU for device arrays), the
    table from match_lut, looked up in x's own library and device."""
    for a, what in ((x, "x"), (reference, "reference")):
        if str(getattr(a, "dtype", "")).split(".")[-1] != "uint8":
            raise ValueError(f"imghist: match_histograms takes uint8 arrays; {what} is "
                             f"{getattr(a, 'dtype', type(a).__name__)}")
    lut = match_lut(histogram(x.reshape(1, -1), backend=backend),
                    histogram(reference.reshape(1, -1), backend=backend))
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):  # CuPy
        import cupy
        return cupy.asarray(lut)[x]
    if hasattr(x, "detach") and hasattr(x, "long"):  # torch
        import torch
        return torch.as_tensor(lut, device=x.device)[x.long()]
    return lut[np.asarray(x)]


def cuda_available() -> bool:
    """True when this libimghist has the CUDA backend and a usable GPU."""
    return L.device_count() > 0


def device_count() -> int:
    """GPUs the CUDA backend can use (CUDA_VISIBLE_DEVICES respected); 0 in
    a build without CUDA."""
    return L.device_count()
