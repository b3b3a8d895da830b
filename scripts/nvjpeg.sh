#!/bin/sh
# Fetch nvJPEG (the CUDA toolkit's JPEG decoder, on PyPI as nvidia-nvjpeg:
# nvjpeg.h and libnvjpeg.so.13) once, into the user's cache, and print its
# folder for meson's -Dnvjpeg_dir. The CLI opens the library at run time
# (docs/gpu-decode.md). Exits 77 when PyPI cannot be reached.
set -eu
# The 13.0 series: CUDA 13.0's toolkit and the drivers that run it.
version=13.0.4.44
cache=${XDG_CACHE_HOME:-$HOME/.cache}/imghist
dest=$cache/nvjpeg-$version
if [ ! -f "$dest/nvidia/cu13/lib/libnvjpeg.so.13" ]; then
    mkdir -p "$cache/wheels"
    if ! python3 -m pip download -q --disable-pip-version-check --no-deps \
        --only-binary=:all: --platform manylinux2014_x86_64 --python-version 3.12 \
        -d "$cache/wheels" "nvidia-nvjpeg==$version" >&2; then
        echo "nvjpeg.sh: nvidia-nvjpeg==$version cannot be fetched from PyPI" >&2
        exit 77
    fi
    rm -rf "$dest.tmp"
    python3 -m zipfile -e "$cache/wheels/nvidia_nvjpeg-$version"-*.whl "$dest.tmp" >&2
    mv "$dest.tmp" "$dest"
fi
echo "$dest/nvidia/cu13"
