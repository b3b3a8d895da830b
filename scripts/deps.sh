#!/bin/sh
# The Debian 12 packages imghist needs: the one list of them. Installs those
# that are missing, saying which and showing apt's progress.
#
# usage: scripts/deps.sh [--test] [--fuzz] [--list] [extra-package ...]
#   --test   also the packages the test suites use (scripts/test.sh)
#   --fuzz   also clang and libFuzzer (fuzz/build.sh)
#   --list   print the packages, one per line, and install nothing
# As root it runs apt-get itself, otherwise through sudo; where neither can
# work it prints the command to run as root and exits 1.
set -eu

# Building the library, the CLI (plots, MPI) and its man page and
# completions, and the Python package from source (pip install . in a venv:
# Python's headers and venv).
build="meson ninja-build pkg-config gcc g++ libc6-dev dpkg-dev libstb-dev libpng-dev
libjpeg62-turbo-dev libexif-dev libdeflate-dev libisal-dev libtiff-dev libgif-dev libcmocka-dev
libopenmpi-dev openmpi-bin libcairo2-dev scdoc bash-completion python3-dev python3-venv"
# The test suites: reference libraries, valgrind, strace, the wheel's bare
# root (debootstrap), and the shells whose completions are checked.
tests="python3 python3-opencv python3-numpy valgrind python3-pytest python3-pil python3-skimage
python3-venv strace debootstrap zsh fish"
# The fuzz targets: libFuzzer ships in clang's runtime package.
fuzz="clang libclang-rt-14-dev"

list=0
with_tests=0
with_fuzz=0
extra=""
for a in "$@"; do
    case $a in
    --list) list=1 ;;
    --test) with_tests=1 ;;
    --fuzz) with_fuzz=1 ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "scripts/deps.sh: unknown option $a (see --help)" >&2; exit 2 ;;
    *) extra="$extra $a" ;;
    esac
done
pkgs="$build"
[ $with_tests = 1 ] && pkgs="$pkgs $tests"
[ $with_fuzz = 1 ] && pkgs="$pkgs $fuzz"
pkgs="$pkgs $extra"

if [ $list = 1 ]; then
    for p in $pkgs; do echo "$p"; done
    exit 0
fi

missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "scripts/deps.sh: every package is installed"
    exit 0
fi
echo "scripts/deps.sh: to install:$missing"

# Root runs apt-get; anyone else needs sudo that can ask (a terminal) or need
# not ask (-n).
if [ "$(id -u)" = 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
    as_root="sudo"
else
    echo "scripts/deps.sh: cannot install as $(id -un) (not root, no usable sudo); as root run:" >&2
    echo "  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "scripts/deps.sh: apt-get update"
$as_root apt-get update
echo "scripts/deps.sh: apt-get install$missing"
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing
echo "scripts/deps.sh: installed:$missing"
