#!/usr/bin/env python3
"""16-bit and masked equalization batches through the Python package on GPU
tensors (and the natural 16-bit histograms of such batches): imghist.equalize(batch[, mask]) as one call (0.3.9) against the
same images equalized one call at a time from Python (what 0.3.8 did), and
the time to read the batch twice and write it once (a CuPy-free estimate:
torch's copy_ of the batch, which reads and writes it once, times 1.5).
Checks that both give the same pixels.

CUDA events around each call after warm-up, median of --runs. Prints a
Markdown table. IMGHIST_NATIVE picks the binding
(and so the library) to load (IMGHIST_LIBRARY for a 0.3 package).
"""
import argparse
import os

from timing import torch_timed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller shapes (a smoke test)")
    ap.add_argument("--only", choices=("tensors", "views", "histograms"),
                    help="one of the three tables")
    args = ap.parse_args()

    import torch
    import imghist

    if not torch.cuda.is_available():
        raise SystemExit("bench_equalize_batch: no CUDA device")
    dev = torch.device("cuda")

    def timed(f):
        return torch_timed(torch, f, args.runs, args.warmup)

    g = torch.Generator(device=dev).manual_seed(7)
    shapes = [(8, 256, 256), (128, 256, 256), (256, 128, 128), (64, 512, 512), (32, 1200, 1600),
              (16, 2048, 2048), (512, 64, 64)]
    if args.quick:
        shapes = [(4, 64, 64)]
    print(f"bench_equalize_batch: {torch.cuda.get_device_name()}, imghist {imghist.__version__}, "
          f"library {os.environ.get('IMGHIST_NATIVE') or os.environ.get('IMGHIST_LIBRARY', 'default')}, median of {args.runs} (ms)\n")
    if args.only in (None, "tensors"):
        tensors(args, torch, imghist, timed, g, dev, shapes)
    if args.only in (None, "views"):
        views(args, torch, imghist, timed, g, dev)
    if args.only in (None, "histograms"):
        histograms(torch, imghist, timed, g, dev, shapes)


def tensors(args, torch, imghist, timed, g, dev, shapes):
    print("| batch | mask | one call | a call per image | speed-up | copy x 1.5 (estimate of "
          "read 2x + write 1x) | same pixels |")
    print("|---|---|---|---|---|---|---|")
    # skewed random samples (equalization has work to do), then "flat" ones:
    # one value but for 1 % (the worst case for counters in shared memory)
    cases = [(dtype, shape, False) for dtype in (torch.uint16, torch.uint8) for shape in shapes]
    cases += [(torch.uint16, shape, True) for shape in shapes if shape[1] * shape[2] <= 65536]
    # batches of 16 to 64 small images (a block an image from 0.3.12)
    if not args.quick:
        cases += [(torch.uint16, shape, False) for shape in
                  ((16, 256, 256), (32, 256, 256), (64, 256, 256), (16, 64, 64), (64, 64, 64))]
    for dtype, shape, flat in cases:
        hi = 65536 if dtype == torch.uint16 else 256
        x = torch.randint(0, hi, shape, generator=g, device=dev, dtype=torch.int64)
        x = (x * x // hi).to(torch.int32)
        if flat:
            x = torch.where(torch.rand(shape, generator=g, device=dev) < 0.01, x, 40000)
        x = x.to(dtype)
        for masked in (False, True):
            if dtype == torch.uint8 and not masked:
                continue  # 8-bit unmasked batches were one launch before
            m = (torch.rand(shape, generator=g, device=dev) < 0.6) if masked else None
            out_a = torch.empty_like(x)
            out_b = torch.empty_like(x)

            def one():
                imghist.equalize(x, mask=m, out=out_a)

            def loop():
                for i in range(shape[0]):
                    imghist.equalize(x[i], mask=None if m is None else m[i], out=out_b[i])

            t_one = timed(one)
            t_loop = timed(loop)
            t_copy = timed(lambda: out_b.copy_(x)) * 1.5
            one()
            loop()
            torch.cuda.synchronize()
            ok = torch.equal(out_a.view(torch.int8), out_b.view(torch.int8))
            name = f"{str(dtype).replace('torch.', '')} {tuple(shape)}{' flat' if flat else ''}"
            print(f"| {name} | {'60 %' if masked else '-'} | {t_one:.3f} | {t_loop:.3f} | "
                  f"{t_loop / t_one:.1f}x | {t_copy:.3f} | {'ok' if ok else 'DIFFER'} |")


def views(args, torch, imghist, timed, g, dev):
    # Batches that are no tensor: some channels of an (N, C, H, W) batch,
    # views of one shape anywhere (0.3.11: the tensor's launches with the
    # images' pointers; before, image by image inside the library), and
    # crops of them (rows not packed: 16-bit masked histograms of up to 2^20
    # samples one launch from 0.3.12, an image at a time before).
    print("\n| channels 0-1 of (N, 3, H, W) | crop | mask | one call | a call per image | "
          "speed-up | copy x 1.5 | same pixels |")
    print("|---|---|---|---|---|---|---|---|")
    for dtype, shape, crop in ((torch.uint16, (16, 3, 1024, 1024), 0),
                               (torch.uint16, (64, 3, 256, 256), 0),
                               (torch.uint8, (16, 3, 1024, 1024), 0),
                               (torch.uint16, (16, 3, 1024, 1024), 4),
                               (torch.uint16, (64, 3, 256, 256), 4),
                               (torch.uint16, (256, 3, 64, 64), 2)):
        if args.quick:
            shape = (2, 3, 64, 64)
        hi = 65536 if dtype == torch.uint16 else 256
        full = torch.randint(0, hi, shape, generator=g, device=dev, dtype=torch.int64)
        full = (full * full // hi).to(torch.int32).to(dtype)
        cut = (slice(None), slice(0, 2), slice(crop, shape[2] - crop), slice(crop, shape[3] - crop))
        x = full[cut]
        for masked in (False, True):
            if dtype == torch.uint8 and not masked:
                continue
            m = (torch.rand(shape, generator=g, device=dev) < 0.6)[cut] if masked else None
            out_a = torch.empty_like(full)[cut]
            out_b = torch.empty_like(x)

            def vone():
                imghist.equalize(x, mask=m, out=out_a)

            def vloop():
                for i in range(shape[0]):
                    for c in range(2):
                        imghist.equalize(x[i, c], mask=None if m is None else m[i, c],
                                         out=out_b[i, c])

            t_one, t_loop = timed(vone), timed(vloop)
            t_copy = timed(lambda: out_b.copy_(x)) * 1.5
            vone()
            vloop()
            torch.cuda.synchronize()
            ok = torch.equal(out_a.contiguous().view(torch.int8), out_b.view(torch.int8))
            name = f"{str(dtype).replace('torch.', '')} {tuple(shape)}"
            print(f"| {name} | {crop or '-'} | {'60 %' if masked else '-'} | {t_one:.3f} | "
                  f"{t_loop:.3f} | {t_loop / t_one:.1f}x | {t_copy:.3f} | "
                  f"{'ok' if ok else 'DIFFER'} |")


def histograms(torch, imghist, timed, g, dev, shapes):
    # The natural 16-bit histograms alone (65536 bins an image), the first
    # step of the above: one call against a call per image.
    print("\n| histogram, 65536 bins an image | mask | one call | a call per image | speed-up | "
          "copy x 0.5 (estimate of read 1x) | same counts |")
    print("|---|---|---|---|---|---|---|")
    for shape in shapes:
        x = torch.randint(0, 65536, shape, generator=g, device=dev, dtype=torch.int64)
        x = (x * x // 65536).to(torch.int32).to(torch.uint16)
        for masked in (False, True):
            m = (torch.rand(shape, generator=g, device=dev) < 0.6) if masked else None
            ha = imghist.histogram(x, mask=m)
            hb = torch.empty_like(ha)

            def hone():
                imghist.histogram(x, mask=m)

            def hloop():
                for i in range(shape[0]):
                    hb[i] = imghist.histogram(x[i], mask=None if m is None else m[i])

            t_one, t_loop = timed(hone), timed(hloop)
            t_read = timed(lambda: torch.empty_like(x).copy_(x)) * 0.5
            hloop()
            torch.cuda.synchronize()
            ok = torch.equal(imghist.histogram(x, mask=m), hb)
            print(f"| uint16 {tuple(shape)} | {'60 %' if masked else '-'} | {t_one:.3f} | "
                  f"{t_loop:.3f} | {t_loop / t_one:.1f}x | {t_read:.3f} | "
                  f"{'ok' if ok else 'DIFFER'} |")


if __name__ == "__main__":
    main()
