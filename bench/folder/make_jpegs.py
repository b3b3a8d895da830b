#!/usr/bin/env python3
"""FILES 12-megapixel baseline JPEGs (4000x3000, 4:2:0, quality 90, PIL)
in OUT from the pictures of SAMPLES: 32 different crops, upscaled with
bicubic filtering, copied to the other names.
usage: make_jpegs.py SAMPLES OUT FILES"""
import os, shutil, sys
from multiprocessing import Pool
from PIL import Image
samples, out, files = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sorted(n for n in os.listdir(samples) if n.endswith((".png", ".jpg")))
def make(k):
    img = Image.open(os.path.join(samples, names[k % len(names)])).convert("RGB")
    # A different crop of each sample for each k, scaled to 4000x3000.
    w, h = img.size
    d = (k // len(names)) * 7 % max(1, min(w, h) // 8)
    img = img.crop((d, d, w - d // 2, h - d // 2)).resize((4000, 3000), Image.BICUBIC)
    img.save(os.path.join(out, f"p{k:04d}.jpg"), quality=90)
distinct = min(files, 32)
with Pool() as p:
    p.map(make, range(distinct))
for k in range(distinct, files):
    shutil.copy(os.path.join(out, f"p{k % distinct:04d}.jpg"), os.path.join(out, f"p{k:04d}.jpg"))
