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
python3 "$(dirname "$0")/make_jpegs.py" "$root/samples" "$tmp/in" "$files"
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
