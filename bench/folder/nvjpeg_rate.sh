#!/bin/sh
# The sustained decode-and-count rate of folder runs in --gray luma mode:
# --decode gpu (nvJPEG's hardware decoder), --decode cpu on every core, and
# auto (both at once), over a folder of 12-megapixel baseline JPEGs (4:2:0,
# quality 90) made from the samples. Each mode runs twice; the second run's
# summary line (images/s, timed from the first image on, so CUDA's and
# nvJPEG's start is not in it) is kept, and the totals must be equal.
#   bench/folder/nvjpeg_rate.sh IMGHIST [FILES] [JOBS]
set -eu
exe=$1
files=${2:-256}
jobs=${3:-$(nproc)}
root=${IMGHIST_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)} # where samples/ is
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/in"
python3 - "$root/samples" "$tmp/in" "$files" <<'PY'
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
PY
echo "$files files, $(du -sm "$tmp/in" | cut -f1) MB, $jobs CPU threads, $(nproc) cores"
for mode in gpu cpu auto; do
    for pass in 1 2; do
        "$exe" --gray luma --decode "$mode" -j "$jobs" --total "$tmp/$mode.csv" "$tmp/in" \
            2>"$tmp/$mode.log" || { cat "$tmp/$mode.log"; exit 1; }
    done
    echo "$mode: $(tail -1 "$tmp/$mode.log")"
done
cmp "$tmp/gpu.csv" "$tmp/cpu.csv" && cmp "$tmp/auto.csv" "$tmp/cpu.csv" && echo "totals equal"
# Where the images went, and the GPU thread's time.
for mode in gpu auto; do
    echo "$mode -v: $("$exe" --gray luma --decode $mode -v -j "$jobs" --total "$tmp/v.csv" \
        "$tmp/in" 2>&1 | grep decode:)"
done
