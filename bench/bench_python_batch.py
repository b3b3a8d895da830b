#!/usr/bin/env python3
"""Batches beyond the 8-bit, 256-bin, one-channel histogram through the
Python package, on GPU tensors: float images into bins over a range, RGB
per channel, 8-bit into fewer bins, 16-bit into 4096 bins, masked 8-bit
and float batches (a mask an image). Each against
PyTorch's batched idiom (one bincount over image-offset bins, checked equal
bit for bit), torch.histc image by image where it applies, and the read
ceiling of the same bytes (a CuPy 16-byte read kernel), all in one run.

CUDA events around each call after warm-up, median of --runs, L2 flushed
(a 256 MiB write) before each call. Prints a Markdown table; --json writes
the rows. IMGHIST_NATIVE picks the binding
(and so the library) to load (IMGHIST_LIBRARY for a 0.3 package) (an A/B of two
builds is two runs of this script in one device call).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_python import READ_KERNEL  # noqa: E402 (the same 16-byte read kernel)
from timing import torch_timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--label", default=os.environ.get("IMGHIST_NATIVE") or os.environ.get("IMGHIST_LIBRARY", "default library"))
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--quick", action="store_true", help="smaller shapes (a smoke test)")
    args = ap.parse_args()

    import torch
    import imghist
    try:
        import cupy
    except ImportError:
        cupy = None
    if not torch.cuda.is_available():
        print("bench_python_batch: no GPU", file=sys.stderr)
        return 77
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    read = cupy.RawKernel(READ_KERNEL, "read16") if cupy is not None else None
    gen = torch.Generator(device=dev)
    gen.manual_seed(7)

    def timed(fn):
        return torch_timed(torch, fn, args.runs, args.warmup, flush)

    def ceiling(x):
        if read is None:
            return None
        flat = cupy.asarray(x).reshape(-1).view(cupy.uint8)
        n16 = flat.size // 16
        grid = props.multi_processor_count * 4
        out = cupy.empty(grid, dtype=cupy.uint32)
        k_args = (flat, cupy.uint64(n16), flat[n16 * 16:] if flat.size % 16 else flat,
                  cupy.uint32(flat.size % 16), out)
        ts = torch.cuda.current_stream()
        try:
            stream = cupy.cuda.Stream.from_external(ts)
        except (AttributeError, TypeError, ValueError):
            stream = cupy.cuda.ExternalStream(ts.cuda_stream)

        def fn():
            with stream:
                read((grid,), (512,), k_args)
        return timed(fn)

    def offsets(n, per, shape_tail):
        o = torch.arange(n, device=dev, dtype=torch.int64) * per
        return o.view((n,) + (1,) * len(shape_tail))

    rows = []

    def case(name, x, ours, peers):
        nbytes = x.nbytes
        ref = None
        row = {"case": name, "shape": list(x.shape), "dtype": str(x.dtype).replace("torch.", ""),
               "bytes": nbytes, "label": args.label}
        row["ceiling_ms"] = ceiling(x)
        got = torch.as_tensor(ours(), device=dev)
        torch.cuda.synchronize()
        row["imghist_ms"] = timed(ours)
        for pname, pfn, exact in peers:
            try:
                out = pfn()
                torch.cuda.synchronize()
                if exact:
                    out = torch.as_tensor(out, device=dev)
                    ok = torch.equal(out.to(torch.int64).reshape(got.shape), got)
                    row[pname + "_check"] = "equal" if ok else "DIFFERS"
                    if ref is None:
                        ref = ok
                row[pname + "_ms"] = timed(pfn)
            except Exception as e:  # a peer that cannot run this shape
                row[pname + "_ms"] = None
                row[pname + "_check"] = f"failed: {type(e).__name__}: {str(e)[:80]}"
        rows.append(row)
        c = row["ceiling_ms"]
        pk = [p for p, _, _ in peers]
        line = f"| {name} | {tuple(x.shape)} {row['dtype']} | "
        line += f"{c:.3f} | " if c else "- | "
        line += f"{row['imghist_ms']:.3f} | "
        line += f"{100 * c / row['imghist_ms']:.1f} % | " if c else "- | "
        for p in pk:
            t = row.get(p + "_ms")
            line += (f"{t:.3f} ({t / row['imghist_ms']:.1f}x, {row.get(p + '_check', '')}) | "
                     if t else f"- ({row.get(p + '_check', '')}) | ")
        print(line, flush=True)

    q = args.quick
    print(f"# bench_python_batch: {props.name}, imghist {imghist.__version__}, "
          f"library {args.label}, torch {torch.__version__}, median of {args.runs}")
    print("| case | shape | read ceiling ms | imghist ms | % of ceiling | peers: ms (imghist's speed-up, check) |")
    print("|---|---|---|---|---|---|")

    # 1. float images into 256 bins over [0, 1): floor(x * 256) is NumPy's bin
    #    exactly (256 is a power of two), so the bincount idiom is a true peer.
    for n, h, w in ([(16, 64, 64)] if q else [(256, 224, 224), (4096, 32, 32), (32, 1024, 1024)]):
        x = torch.rand((n, h, w), generator=gen, device=dev)
        off = offsets(n, 256, (h, w))
        case(f"f32 256 bins [0,1)", x, lambda: imghist.histogram(x, 256, (0.0, 1.0)),
             [("torch bincount", lambda: torch.bincount(((x * 256).long() + off).view(-1),
                                                        minlength=n * 256).view(n, 256), True),
              ("torch.histc per image", lambda: torch.stack([torch.histc(x[i], 256, 0, 1)
                                                             for i in range(n)]), False)])

    # 2. RGB, each channel: (N, H, W, 3) uint8, channels=True -> (N, 3, 256).
    for n, h, w in ([(8, 32, 32)] if q else [(256, 224, 224), (8192, 32, 32)]):
        x = torch.randint(0, 256, (n, h, w, 3), generator=gen, device=dev, dtype=torch.uint8)
        off = (torch.arange(n, device=dev).view(n, 1, 1, 1) * 768 +
               torch.arange(3, device=dev).view(1, 1, 1, 3) * 256)
        case("u8 RGB per channel", x, lambda: imghist.histogram(x, channels=True),
             [("torch bincount", lambda: torch.bincount((x.long() + off).view(-1),
                                                        minlength=n * 768).view(n, 3, 256), True)])

    # 3. 8-bit into 32 bins.
    for n, h, w in ([(8, 64, 64)] if q else [(1024, 128, 128)]):
        x = torch.randint(0, 256, (n, h, w), generator=gen, device=dev, dtype=torch.uint8)
        off = offsets(n, 32, (h, w))
        case("u8 32 bins", x, lambda: imghist.histogram(x, 32),
             [("torch bincount", lambda: torch.bincount(((x >> 3).long() + off).view(-1),
                                                        minlength=n * 32).view(n, 32), True)])

    # 4. 16-bit (12-bit data) into 4096 bins over [0, 65536): CuPy holds uint16.
    if cupy is not None:
        for n, h, w in ([(4, 64, 64)] if q else [(64, 512, 512), (2048, 64, 64)]):
            xc = cupy.random.default_rng(3).integers(0, 65536, (n, h, w), dtype=cupy.uint16)
            x = xc
            offc = cupy.arange(n, dtype=cupy.int64).reshape(n, 1, 1) * 4096

            def peer():
                b = (xc >> 4).astype(cupy.int64) + offc
                return cupy.bincount(b.ravel(), minlength=n * 4096).reshape(n, 4096)
            case("u16 4096 bins", x, lambda: imghist.histogram(xc, 4096, (0, 65536)),
                 [("cupy bincount", peer, True)])

    # 5. Masked batches (0.3.8: one call; before, one call per image): 8-bit
    #    and float images, a mask an image, against bincount of the masked
    #    samples (boolean indexing, then offset bins).
    for n, h, w in ([(8, 64, 64)] if q else [(256, 224, 224), (4096, 32, 32)]):
        x = torch.randint(0, 256, (n, h, w), generator=gen, device=dev, dtype=torch.uint8)
        m = torch.rand((n, h, w), generator=gen, device=dev) < 0.6
        off = offsets(n, 256, (h, w))
        case("u8 masked", x, lambda: imghist.histogram(x, mask=m),
             [("torch bincount", lambda: torch.bincount((x.long() + off)[m],
                                                        minlength=n * 256).view(n, 256), True)])
        xf = torch.rand((n, h, w), generator=gen, device=dev)
        case("f32 256 bins [0,1) masked", xf, lambda: imghist.histogram(xf, 256, (0.0, 1.0), mask=m),
             [("torch bincount", lambda: torch.bincount(((xf * 256).long() + off)[m],
                                                        minlength=n * 256).view(n, 256), True)])

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
