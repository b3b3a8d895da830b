#!/usr/bin/python3
"""Uncompressed gray copies of the folder benchmark's JPEGs, for scale.sh.

    make_raw.py DATA_DIR [-j N]

From DATA_DIR/jpeg/img_NNN.jpg (make_data.py's files) it writes

    pgm/img_NNN.pgm          the photograph in gray (IMREAD_GRAYSCALE), 4000x3000
    vga/img_NNN_RC.pgm       its 36 tiles of 640x480 (rows R, columns C: 0-5)

as binary PGM. Reading such a file costs the CPU little more than a copy, so
a batch run over them measures the pipeline around the decoder (file reads,
uploads, the GPUs) rather than JPEG decoding. Existing files are kept.
"""
import argparse
import glob
import os
from concurrent.futures import ProcessPoolExecutor

import cv2

TW, TH = 640, 480


def write(path, img):
    if not os.path.exists(path):
        cv2.imwrite(path + ".tmp.pgm", img)
        os.replace(path + ".tmp.pgm", path)


def one(args):
    data, jpg = args
    stem = os.path.splitext(os.path.basename(jpg))[0]
    img = cv2.imread(jpg, cv2.IMREAD_GRAYSCALE)
    if img is None:
        raise SystemExit("make_raw: cannot read %s" % jpg)
    write(os.path.join(data, "pgm", stem + ".pgm"), img)
    h, w = img.shape
    for r in range(h // TH):
        for c in range(w // TW):
            tile = img[r * TH:(r + 1) * TH, c * TW:(c + 1) * TW]
            write(os.path.join(data, "vga", "%s_%d%d.pgm" % (stem, r, c)), tile)
    return stem


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    jpgs = sorted(glob.glob(os.path.join(a.data, "jpeg", "*.jpg")))
    if not jpgs:
        raise SystemExit("make_raw: no %s/jpeg/*.jpg (run make_data.py first)" % a.data)
    for d in ("pgm", "vga"):
        os.makedirs(os.path.join(a.data, d), exist_ok=True)
    cv2.setNumThreads(1)
    with ProcessPoolExecutor(max_workers=max(1, a.j)) as ex:
        n = sum(1 for _ in ex.map(one, [(a.data, j) for j in jpgs]))
    print("make_raw: %d photographs in %s/pgm, their tiles in %s/vga" % (n, a.data, a.data))


if __name__ == "__main__":
    main()
