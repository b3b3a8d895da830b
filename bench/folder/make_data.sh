#!/bin/bash
# Make the folder benchmark's data: 200 photographs of 12 MP as JPEG and PNG,
# and one of 24 MP as JPEG and PNG, from real photographs that Debian
# packages ship (sources and licences: README.md here, and DIR/MANIFEST.tsv).
#
#   bench/folder/make_data.sh DIR
#
# Environment: DEB_DIR=folder that already holds the four .deb files (nothing
# is downloaded then; for a host without the network), COUNT=200, JOBS=nproc,
# PYTHON=/usr/bin/python3 (needs cv2), FORCE=1 to make the data again.
# The packages are fetched with `apt-get download` and unpacked with
# `dpkg -x` into a temporary folder: nothing is installed. About 5 GB.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$1
count=${COUNT:-200}
jobs=${JOBS:-$(nproc)}
py=${PYTHON:-/usr/bin/python3}
pkgs="lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 mate-backgrounds plasma-workspace-wallpapers"

if [ -z "${FORCE:-}" ] && [ -f "$out/MANIFEST.tsv" ] &&
   [ "$(find "$out/jpeg" -name 'img_*.jpg' 2>/dev/null | wc -l)" -eq "$count" ] &&
   [ "$(find "$out/png" -name 'img_*.png' 2>/dev/null | wc -l)" -eq "$count" ] &&
   [ -f "$out/single/photo24.jpg" ] && [ -f "$out/single/photo24.png" ]; then
    echo "make_data: $out is complete (FORCE=1 makes it again)"
    exit 0
fi

"$py" -c 'import cv2' || { echo "make_data: $py has no cv2 (apt-get install python3-opencv)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
debs=${DEB_DIR:-$tmp/debs}
mkdir -p "$debs" "$tmp/src"
for p in $pkgs; do
    deb=$(ls "$debs"/"${p}"_*.deb 2>/dev/null | head -1 || true)
    if [ -z "$deb" ]; then
        [ -z "${DEB_DIR:-}" ] || { echo "make_data: no ${p}_*.deb in $DEB_DIR" >&2; exit 1; }
        # apt-get download writes into the current folder; _apt cannot write
        # to mktemp's folder, which only makes apt warn.
        if ! (cd "$debs" && apt-get download "$p" >/dev/null 2>&1); then
            apt-get update -qq || true
            (cd "$debs" && apt-get download "$p")
        fi
        deb=$(ls "$debs"/"${p}"_*.deb | head -1)
    fi
    echo "make_data: unpacking $(basename "$deb")"
    dpkg -x "$deb" "$tmp/src/$p"
done

mkdir -p "$out"
"$py" "$here/make_data.py" "$tmp/src" "$out" -j "$jobs" --count "$count"
du -sh "$out/jpeg" "$out/png" "$out/single"
