#!/usr/bin/env python3
"""Histogram comparison on the GPU: imghist_compare_all (every pair of N
histograms) and imghist_compare_many (one against N) against straightforward
PyTorch code on the same GPU and data, timed with CUDA events on one stream.

usage: bench_compare.py LIBIMGHIST.so [N] [BINS]   (defaults 20000 and 256)

libimghist is called through ctypes with the tensors' device pointers and
torch's current stream, so no binding for this Python is needed. PyTorch's
versions are what one would write: matrix products where the method is one
(correlation, Hellinger), else broadcasts over row blocks; in float64, the
precision imghist sums in, and in float32 where a product makes that a
choice. Each time is the median of 3 runs after a warm-up. The check line
gives imghist's largest difference from the float64 PyTorch result.
"""
import ctypes as C
import statistics
import sys

import torch

LIB = C.CDLL(sys.argv[1])
N = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
BINS = int(sys.argv[3]) if len(sys.argv) > 3 else 256


class Hists(C.Structure):
    _fields_ = [("data", C.c_void_p), ("type", C.c_int), ("mem", C.c_int), ("bins", C.c_size_t),
                ("count", C.c_size_t), ("stride", C.c_size_t)]


U64, F32, F64, DEVICE = 1, 2, 3, 1
METHODS = {"correlation": 0, "chisqr": 1, "intersect": 2, "hellinger": 3, "chisqr_alt": 4,
           "kl_div": 5, "emd": 6}


def timed(fn, reps=3):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def torch_rowwise(h, fn, block):
    """fn(a_block[:, None, :], h[None]) summed over bins, block rows at a time."""
    out = torch.empty(h.shape[0], h.shape[0], dtype=h.dtype, device=h.device)
    for i in range(0, h.shape[0], block):
        out[i:i + block] = fn(h[i:i + block, None, :], h[None, :, :]).sum(-1)
    return out


def torch_all(name, h):
    if name == "correlation":
        c = h - h.mean(1, keepdim=True)
        num = c @ c.T
        d = num.diagonal().sqrt()
        return num / (d[:, None] * d[None, :])
    if name == "hellinger":
        s = h.sum(1)
        bc = h.sqrt() @ h.sqrt().T
        return (1 - bc / (s[:, None] * s[None, :]).sqrt()).clamp_min(0).sqrt()
    block = max(1, (1 << 27) // (h.shape[0] * h.shape[1]))
    if name == "intersect":
        return torch_rowwise(h, torch.minimum, block)
    if name == "chisqr":
        return torch_rowwise(h, lambda a, b: torch.where(a != 0, (a - b) ** 2 / a, 0), block)
    raise ValueError(name)


def main():
    torch.manual_seed(0)
    dev = torch.device("cuda")
    counts = torch.randint(0, 5000, (N, BINS), device=dev, dtype=torch.int64)
    counts[torch.rand(N, BINS, device=dev) < 0.2] = 0
    h64 = counts.double()
    ctx = C.c_void_p()
    assert LIB.imghist_create(2, 0, C.byref(ctx)) == 0  # IMGHIST_BACKEND_CUDA
    stream = torch.cuda.current_stream().cuda_stream
    assert LIB.imghist_set_stream(ctx, C.c_void_p(stream)) == 0
    out = torch.empty(N, N, dtype=torch.float64, device=dev)
    out1 = torch.empty(N, dtype=torch.float64, device=dev)
    hs = Hists(counts.data_ptr(), U64, DEVICE, BINS, N, 0)
    q = Hists(counts.data_ptr(), U64, DEVICE, BINS, 1, 0)
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, N={N}, bins={BINS}, "
          "int64 counts (a fifth of the bins empty)")
    print("| method | imghist all pairs (ms) | PyTorch float64 (ms) | PyTorch float32 (ms) | "
          "speed-up vs float64 | imghist one vs N (ms) | PyTorch one vs N float64 (ms) | "
          "max abs diff vs PyTorch float64 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in ("correlation", "intersect", "hellinger", "chisqr", "chisqr_alt", "kl_div",
                 "emd"):
        m = METHODS[name]

        def ours():
            st = LIB.imghist_compare_all(ctx, C.byref(hs), m, C.c_void_p(out.data_ptr()),
                                         DEVICE)
            assert st == 0, LIB.imghist_last_error(ctx)

        def ours_many():
            st = LIB.imghist_compare_many(ctx, C.byref(q), C.byref(hs), m,
                                          C.c_void_p(out1.data_ptr()), DEVICE)
            assert st == 0

        t_ours = timed(ours)
        t_many = timed(ours_many)
        t64 = t32 = t64_many = diff = None
        if name in ("correlation", "intersect", "hellinger", "chisqr"):
            t64 = timed(lambda: torch_all(name, h64), reps=3)
            if name in ("correlation", "hellinger"):
                t32 = timed(lambda: torch_all(name, h64.float()), reps=3)
            ref = torch_all(name, h64)
            ours()
            torch.cuda.synchronize()
            diff = (out - ref).abs().nan_to_num(0).max().item()
            t64_many = timed(lambda: torch_all_one(name, h64), reps=3)
        fmt = lambda v: "-" if v is None else f"{v:.3g}"
        print(f"| {name} | {t_ours:.3g} | {fmt(t64)} | {fmt(t32)} | "
              f"{fmt(t64 / t_ours if t64 else None)} | {t_many:.3g} | {fmt(t64_many)} | "
              f"{fmt(diff)} |")
    LIB.imghist_destroy(ctx)


def torch_all_one(name, h):
    """The first histogram against all: one row of torch_all's matrix."""
    a = h[:1]
    if name == "correlation":
        c = h - h.mean(1, keepdim=True)
        return (c[:1] @ c.T) / (c[:1].norm() * c.norm(dim=1))
    if name == "hellinger":
        s = h.sum(1)
        return (1 - (a.sqrt() @ h.sqrt().T)[0] / (s[0] * s).sqrt()).clamp_min(0).sqrt()
    if name == "intersect":
        return torch.minimum(a, h).sum(1)
    return torch.where(a != 0, (a - h) ** 2 / a, 0).sum(1)


if __name__ == "__main__":
    LIB.imghist_last_error.restype = C.c_char_p
    main()
