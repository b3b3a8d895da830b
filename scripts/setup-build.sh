#!/bin/sh
# Set up a meson build folder, or reconfigure the one there, with the build
# type every script uses: whichever script runs first must not decide it.
# usage: scripts/setup-build.sh DIR [meson option ...]
set -eu
cd "$(dirname "$0")/.."
buildtype=debugoptimized
dir=$1
shift
if [ -f "$dir/build.ninja" ]; then
    echo "scripts/setup-build.sh: reconfiguring $dir (--buildtype=$buildtype $*)"
    meson configure "$dir" --buildtype="$buildtype" "$@"
else
    echo "scripts/setup-build.sh: setting up $dir (--buildtype=$buildtype $*)"
    meson setup "$dir" --buildtype="$buildtype" "$@"
fi
