#!/bin/sh
# Set up, build, and run imghist on a sample photograph (the main job).
# The CUDA backend is built when nvcc is on PATH; without a GPU the CPU runs.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/setup-build.sh build
echo "demo: building imghist (ninja -C build)"
ninja -C build
mkdir -p out
./build/src/imghist samples/moon.png -v
./build/src/imghist samples/moon.png --equalize out/moon-equalized.png --csv out/moon-hist.csv -v
echo "demo: wrote out/moon-equalized.png and out/moon-hist.csv"
# One image runs on the CPU by default (done before CUDA would have started);
# with a GPU, the same job on it gives the same bytes.
if ./build/src/imghist samples/moon.png --backend cuda -q \
        --equalize out/moon-equalized-gpu.png 2>/dev/null; then
    cmp out/moon-equalized.png out/moon-equalized-gpu.png
    echo "demo: on the GPU (--backend cuda): the same equalized image, byte for byte"
fi
echo "demo: the tool is build/src/imghist; export PATH=\"\$PWD/build/src:\$PATH\" puts it on the PATH"
