#!/bin/sh
# Rebuild the CUDA objects of a build directory whose Meson (before 1.4)
# does not track the headers of .cu files: when any header of the project is
# newer than the oldest CUDA object there, every .cu file is compiled again.
# Usage: scripts/cuda-rebuild.sh [BUILDDIR]   (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-build}
[ -f "$dir/build.ninja" ] || { echo "cuda-rebuild: $dir is no build directory" >&2; exit 1; }
oldest=$(find "$dir" -name '*.cu.o' -printf '%T@ %p\n' | sort -n | head -n 1 | cut -d' ' -f2-)
if [ -n "$oldest" ] &&
   [ -n "$(find "$root/src" "$root/kernels" "$root/include" "$root/bench" \
           \( -name '*.h' -o -name '*.h.in' -o -name '*.cuh' \) -newer "$oldest" | head -n 1)" ]; then
    echo "cuda-rebuild: a header is newer than $oldest: compiling every CUDA object again"
    find "$dir" -name '*.cu.o' -delete
fi
ninja -C "$dir"
