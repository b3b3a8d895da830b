#!/bin/bash
# Build bench/folder/build/opencv_equalize, the native OpenCV baseline.
# Installs Debian's libopencv-dev when pkg-config does not know opencv4 and
# apt-get can (root, or sudo without a password; not with NO_INSTALL=1): for
# the benchmark only, imghist does not depend on it. Prints the binary's path
# on success.
#   bench/folder/build.sh [OUT_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build/opencv_equalize}
cxx=${CXX:-g++}

if ! pkg-config --exists opencv4 2>/dev/null; then
    if [ -z "${NO_INSTALL:-}" ] && command -v apt-get >/dev/null 2>&1; then
        sudo=; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
        echo "build.sh: installing libopencv-dev (benchmark only)" >&2
        # time limits: a host without the network must not hang here
        if ! timeout 120 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends libopencv-dev >&2; then
            timeout 120 $sudo apt-get update -qq >&2 || true
            timeout 300 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends libopencv-dev >&2 || true
        fi
    fi
fi
pkg-config --exists opencv4 2>/dev/null || { echo "build.sh: no opencv4 (pkg-config): cannot build" >&2; exit 1; }
command -v "$cxx" >/dev/null || { echo "build.sh: no $cxx" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
# shellcheck disable=SC2046
"$cxx" -O2 -std=c++17 -Wall -Wextra "$here/opencv_equalize.cpp" -o "$out" \
    $(pkg-config --cflags --libs opencv4) -pthread >&2
echo "$out"
