#!/bin/sh
# The README's library example, compiled and run as written: the first ```c
# block under "## The library", built with the pkg-config line the README
# gives (against this build's uninstalled imghist.pc), run on a sample.
# Then `meson install` into a scratch root: the library and imghist.pc must
# land where Debian's loader and pkg-config look (not lib64).
# usage: readme_example.sh SOURCE_ROOT BUILD_ROOT
set -eu
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk '/^## The library/ {lib=1} lib && /^```c$/ {on=1; next} on && /^```$/ {exit} on {print}' \
    "$src/README.md" > "$tmp/equalize.c"
grep -q 'int main' "$tmp/equalize.c" || { echo "no C example found in README.md"; exit 1; }

export PKG_CONFIG_PATH="$build/meson-uninstalled"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$tmp/equalize.c" -o "$tmp/equalize" \
    $(pkg-config --cflags --libs imghist)
IMGHIST_BACKEND=cpu LD_LIBRARY_PATH="$build/src" "$tmp/equalize" "$src/samples/moon.png" \
    "$tmp/out.png" | tee "$tmp/stdout"
grep -q '^512x512 on cpu, ' "$tmp/stdout"
[ "$(head -c 8 "$tmp/out.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    { echo "the example wrote no PNG"; exit 1; }
# A failing call reports and exits 1.
if LD_LIBRARY_PATH="$build/src" "$tmp/equalize" "$tmp/missing.png" "$tmp/x.png" 2> "$tmp/err"; then
    echo "the example accepted a missing file"; exit 1
fi
grep -q 'missing.png' "$tmp/err"

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
echo "README example and install layout: ok"
