#!/usr/bin/env python3
"""The GPU peer of `imghist --gray luma --decode gpu --total`: torchvision's
batched `decode_jpeg(device='cuda')` to gray plus `torch.bincount`, over the
JPEGs of a folder, in batches of BATCH files read from the page cache.

Prints images/s of the second of two passes (the first warms nvJPEG and
CUDA), and, when IMGHIST_TOTAL names a `--total` CSV of imghist over the same
folder, how far torchvision's summed histogram is from it (its decoder's
luma is not libjpeg-turbo's everywhere).

usage: torchvision_decode.py DIR [BATCH]
"""
import csv
import os
import sys
import time

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_jpeg


def main():
    folder = sys.argv[1]
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 48
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith((".jpg", ".jpeg")))
    datas = [torchvision.io.read_file(os.path.join(folder, n)) for n in names]
    total = None
    rate = 0.0
    for _ in range(2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        total = torch.zeros(256, dtype=torch.int64, device="cuda")
        for k in range(0, len(datas), batch):
            imgs = decode_jpeg(datas[k:k + batch], mode=ImageReadMode.GRAY, device="cuda")
            for img in imgs:
                total += torch.bincount(img.reshape(-1), minlength=256)
        torch.cuda.synchronize()
        rate = len(datas) / (time.perf_counter() - t0)
    print(f"torchvision {torchvision.__version__} decode_jpeg(cuda, GRAY) + bincount, "
          f"batch {batch}: {len(datas)} images, {rate:.1f} images/s")
    ref = os.environ.get("IMGHIST_TOTAL")
    if ref:
        with open(ref) as f:
            rows = [r for r in csv.reader(f) if r and r[0].isdigit()]
        want = torch.tensor([int(r[-1]) for r in rows], dtype=torch.int64)
        got = total.cpu()
        moved = int((got - want).abs().sum().item()) // 2
        print(f"against imghist's total: {moved} of {int(want.sum())} pixels in other bins "
              f"({100.0 * moved / max(1, int(want.sum())):.3f} %)")


if __name__ == "__main__":
    main()
