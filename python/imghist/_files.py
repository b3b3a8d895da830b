"""Histograms of whole folders of image files in one call, on the library's
threaded decode engine (the CLI's batch run). Private: see __init__.py."""
from __future__ import annotations

import builtins
import os
import sys
from typing import Any, Callable, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _api
from . import _lib as L

PathLike = Union[str, bytes, os.PathLike]

# Files per library call: the engine's output for them is held at once, so a
# total over any number of files stays within this many histograms.
_CHUNK = 4096


class FilesHistogram(NamedTuple):
    """counts: uint64, (N, bins) (histogram_files) or (bins,) (total_files),
    row i for files[i]; files: the files counted, in order (sorted by path,
    as the CLI's batch run takes them); failures: (path, message) of every
    file or folder that could not be read or decoded, in order."""
    counts: np.ndarray
    files: List[str]
    failures: List[Tuple[str, str]]


class _Bar:
    """progress=True: tqdm when it is installed, else a line on stderr
    redrawn in place when stderr is a terminal (nothing otherwise)."""

    def __init__(self, total: int):
        self.bar = None
        self.tty = sys.stderr.isatty()
        try:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, unit="img", desc="imghist")
        except ImportError:
            pass
        self.base = 0
        self.last = 0

    def update(self, done: int, total: int) -> None:
        now = self.base + done
        if self.bar is not None:
            self.bar.update(now - self.last)
        elif self.tty:
            sys.stderr.write(f"\rimghist: {now} images")
            sys.stderr.flush()
        self.last = now

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.tty:
            sys.stderr.write("\n")


def _inputs(paths_or_folder) -> List[bytes]:
    if isinstance(paths_or_folder, (str, bytes, os.PathLike)):
        paths_or_folder = [paths_or_folder]
    out = []
    for p in paths_or_folder:
        b = os.fsencode(p)
        if b"\0" in b:
            raise ValueError(f"imghist: embedded null byte in the file name {os.fsdecode(b)!r}")
        out.append(b)
    if not out:
        raise ValueError("imghist: no files or folders given")
    return out


_DECODES = {"auto": L.DECODE_AUTO, "cpu": L.DECODE_CPU, "gpu": L.DECODE_GPU}


def _run(paths_or_folder, recursive, gray, depth, bins, range, threads, backend, progress,
         read_truncated, decode, total: bool) -> FilesHistogram:
    g = _api._GRAYS.get(gray)
    if g is None:
        raise ValueError(f"imghist: gray={gray!r}; want 'bgr2gray' or 'luma'")
    d = _api._DEPTHS.get(depth)
    if d is None:
        raise ValueError(f"imghist: depth={depth!r}; want '8' or 'native'")
    if threads is None:
        threads = 0
    elif not isinstance(threads, int) or threads < 0:
        raise ValueError(f"imghist: threads={threads!r}; want None (a thread per core) or a count")
    dec = _DECODES.get(decode)
    if dec is None:
        raise ValueError(f"imghist: decode={decode!r}; want 'auto', 'cpu' or 'gpu'")
    if backend is None:
        # decode='gpu' decodes on a GPU: the first, unless backend names one.
        b, dev = (L.BACKEND_CUDA, 0) if dec == L.DECODE_GPU else (L.BACKEND_CPU, -1)
    else:
        b, dev = _api._parse_backend(backend)
    if dec == L.DECODE_GPU and b == L.BACKEND_CPU:
        raise ValueError("imghist: decode='gpu' decodes on a GPU; backend='cpu' has none")
    ctx = L.context(b, -1 if b == L.BACKEND_CPU else max(dev, 0))
    ctx.set_param(L.P_DECODE, dec)
    ctx.set_param(L.P_LOAD_DEPTH, d)
    ctx.set_param(L.P_LOAD_CHANNELS, 0)
    ctx.set_param(L.P_LOAD_GRAY, g)
    ctx.set_param(L.P_LOAD_TRUNCATED, 1 if read_truncated else 0)
    spec = None
    if bins is not None or range is not None:
        n = _api._bins(bins, 256)
        lo, hi = _api._pair(range) if range is not None else (0.0, 256.0)
        spec = (n, lo, hi, L.CLOSED)
    per = ctx.files_counts_len(spec)
    if per == 0:
        raise ValueError("imghist: depth='native' loads 8-bit, 16-bit and float files alike: "
                         "give bins and range" if d else "imghist: bins or range refused")
    found, unreadable, _ = ctx.list_files(_inputs(paths_or_folder), bool(recursive))
    failures = [(os.fsdecode(p), m) for p, m in unreadable]
    bar = _Bar(len(found)) if progress is True else None
    report = bar.update if bar is not None else (progress if callable(progress) else None)
    rows, files = [], []
    acc = np.zeros(per, np.uint64) if total else None
    try:
        for start in builtins.range(0, len(found), _CHUNK):
            chunk = found[start:start + _CHUNK]
            out = np.zeros((len(chunk), per), np.uint64)
            if bar is not None:
                bar.base = start
            results, _ = ctx.histogram_files(chunk, threads, spec, out.ctypes.data, out.size,
                                             report)
            ok = np.fromiter((st == L.OK for st, _ in results), bool, len(results))
            for p, (st, msg) in zip(chunk, results):
                if st == L.OK:
                    files.append(os.fsdecode(p))
                else:
                    failures.append((os.fsdecode(p), msg or L.N.strerror(st)))
            if total:
                acc += out[ok].sum(axis=0, dtype=np.uint64)
            else:
                rows.append(out[ok])
    finally:
        if bar is not None:
            bar.close()
    if total:
        return FilesHistogram(acc, files, failures)
    counts = np.concatenate(rows) if rows else np.zeros((0, per), np.uint64)
    return FilesHistogram(counts, files, failures)



def histogram_files(paths_or_folder: Union[PathLike, Sequence[PathLike]], *,
                    recursive: bool = False, gray: str = "bgr2gray", depth: str = "8",
                    bins: Optional[int] = None, range: Optional[Tuple[float, float]] = None,
                    threads: Optional[int] = None, backend: Optional[str] = None,
                    progress: Union[bool, Callable[[int, int], Any]] = False,
                    read_truncated: bool = False, decode: str = "auto") -> FilesHistogram:
    """Histograms of many image files in one call, decoded on the library's
    threads (the CLI's batch engine; the GIL is released), each as
    histogram(load(file, depth, gray=gray), bins, range) counts it.

    paths_or_folder: a file or folder, or a list of them; folders give their
    image files (files whose first bytes are an image, whatever their name),
    with recursive=True those of their sub-folders too, sorted by path as
    the CLI's batch run takes them. threads: decoding threads (None: one per
    core). backend: None or 'cpu' counts on the CPU; 'cuda'/'cuda:N' counts
    large images on that GPU. decode: where baseline JPEGs are decoded, with
    the same bits either way: 'cpu' (libjpeg-turbo), 'gpu' (the GPU's
    hardware JPEG decoder, nvJPEG; the first GPU unless backend names one;
    an error where the build or the GPU lacks it) or 'auto' (the GPU for 64
    files or more and 64 MiB of files a thread when backend is a GPU and it
    has the decoder, else the CPU). progress: True shows a bar (tqdm when
    installed), or a callable(done, total) called on this thread. Ctrl-C
    stops the call (KeyboardInterrupt). Memory: the decoded images in flight
    (one a thread) and the result.

    Returns FilesHistogram(counts, files, failures): counts uint64 (N, bins)
    for the N files counted, files their paths in order, failures (path,
    message) of the files and folders that could not be read or decoded —
    a bad file never stops the others, and none is silently left out.

    >>> import imghist, os
    >>> r = imghist.histogram_files(os.path.join(os.environ.get("IMGHIST_SAMPLES",
    ...                             "samples"), "moon.png"))
    >>> r.counts.shape, r.counts.dtype, len(r.files), r.failures
    ((1, 256), dtype('uint64'), 1, [])
    """
    return _run(paths_or_folder, recursive, gray, depth, bins, range, threads, backend,
                progress, read_truncated, decode, False)


def total_files(paths_or_folder: Union[PathLike, Sequence[PathLike]], *,
                recursive: bool = False, gray: str = "bgr2gray", depth: str = "8",
                bins: Optional[int] = None, range: Optional[Tuple[float, float]] = None,
                threads: Optional[int] = None, backend: Optional[str] = None,
                progress: Union[bool, Callable[[int, int], Any]] = False,
                read_truncated: bool = False, decode: str = "auto") -> FilesHistogram:
    """The summed histogram of many image files (arguments as
    histogram_files()): FilesHistogram(counts, files, failures) with counts
    uint64 (bins,), the sum over the files counted. Memory stays bounded
    whatever the number of files (they go to the library in chunks)."""
    return _run(paths_or_folder, recursive, gray, depth, bins, range, threads, backend,
                progress, read_truncated, decode, True)
