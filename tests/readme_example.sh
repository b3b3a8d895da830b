#!/bin/sh
# The README's examples, run as printed (tests/readme_examples.py: every
# shell, C and CPU Python block of its "Examples" section, and the shell
# blocks of docs/cli.md, against this build's tool, uninstalled imghist.pc and
# Python binding). Then `meson install` into a scratch root: the library and
# imghist.pc must land where Debian's loader and pkg-config look (not lib64).
# usage: readme_example.sh SOURCE_ROOT BUILD_ROOT [PYTHON_BINDING]
set -eu
src=$1
build=$2
binding=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python=/usr/bin/python3
[ -x "$python" ] || python=python3
"$python" "$src/tests/readme_examples.py" "$src" "$build" "$binding"

# Install layout.
meson install -C "$build" --no-rebuild --destdir "$tmp/root" > "$tmp/install.log"
lib=$(cd "$tmp/root" && find . -name 'libimghist.so.2' | head -n 1 | sed 's|^\.||')
pc=$(cd "$tmp/root" && find . -name 'imghist.pc' | head -n 1 | sed 's|^\.||')
[ -n "$lib" ] && [ -n "$pc" ] || { echo "install is missing the library or imghist.pc"; exit 1; }
libdir=$(dirname "$lib")
pcdir=$(dirname "$pc")
echo "installed: $lib, $pc"
# The loader's folders: its built-in ones and those of ld.so.conf (Debian
# lists them one per line in /etc/ld.so.conf.d/).
{ printf '/lib\n/usr/lib\n'; cat /etc/ld.so.conf /etc/ld.so.conf.d/*.conf 2>/dev/null; } |
    grep -qx "$libdir" ||
    { echo "$libdir is not searched by the dynamic loader (is dpkg-dev installed?)"; exit 1; }
pkg-config --variable pc_path pkg-config | tr ':' '\n' | grep -qx "$pcdir" ||
    { echo "$pcdir is not on pkg-config's search path"; exit 1; }
echo "README examples and install layout: ok"
