#!/bin/sh
# Install a wheel of the Python package on a bare Debian 12 and run the
# package's CPU tests there: a debootstrap'ed bookworm root (minbase, plus
# python3 and python3-venv only: no -dev package, no codec library), a fresh
# venv in it with the wheel, and numpy, pytest and Pillow (for the
# references of some tests) from PyPI, and pytest over python/tests and
# the installed package's docstring examples. It passes only when the package imports, loads the codec
# libraries from the wheel itself, and passes its tests.
#
#   scripts/test-wheel-bare.sh WHEEL
#
# Needs root (chroot, mounts in a namespace of its own), debootstrap, and the
# network (Debian's mirror once, PyPI on each run). The root is kept as a
# tarball under $IMGHIST_BARE_CACHE (default: build-wheel/cache, git-ignored),
# so a second run unpacks it instead of downloading it. Exits 0 on pass, 1 on
# fail, 77 when it cannot run here (not root, no debootstrap, no network).
set -eu
cd "$(dirname "$0")/.."
root=$PWD
[ $# -eq 1 ] || { echo "usage: $0 WHEEL" >&2; exit 2; }
wheel=$(readlink -f "$1")
[ -f "$wheel" ] || { echo "test-wheel-bare: no such wheel: $1" >&2; exit 2; }
case $wheel in
    *.whl) ;;
    *) echo "test-wheel-bare: not a wheel: $1" >&2; exit 2 ;;
esac

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (chroot and mounts)"
command -v debootstrap >/dev/null || skip "debootstrap is missing (Debian: debootstrap)"
command -v unshare >/dev/null || skip "unshare is missing (Debian: util-linux)"
# Inside a chroot whose root is not a mount point (or a container without
# the right), no private mount namespace can be made: skipped, not failed.
unshare --mount --propagation private true 2>/dev/null ||
    skip "no private mount namespace can be made here (a chroot or a container?)"

mirror=${IMGHIST_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache=${IMGHIST_BARE_CACHE:-$root/build-wheel/cache}
tarball=$cache/bookworm-minbase-python3.tar
mkdir -p "$cache"
if [ ! -f "$tarball" ]; then
    echo "== debootstrap: bookworm, minbase + python3 python3-venv (once; cached in $tarball)"
    tmp=$(mktemp -d "$cache/root.XXXXXX")
    if ! debootstrap --variant=minbase --include=python3,python3-venv \
            bookworm "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1; then
        tail -n 20 "$cache/debootstrap.log"
        rm -rf "$tmp"
        if grep -qiE 'Failed getting release file|Temporary failure|Could not resolve|unable to fetch|Connection' \
                "$cache/debootstrap.log"; then
            skip "Debian's mirror cannot be reached"
        fi
        echo "FAIL: debootstrap"
        exit 1
    fi
    apt_cache=$tmp/var/cache/apt/archives
    rm -f "$apt_cache"/*.deb
    tar -C "$tmp" -cf "$tarball.part" . && mv "$tarball.part" "$tarball"
    rm -rf "$tmp"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/imghist-bare.XXXXXX")
# The mounts live in the namespace of the unshare below and end with it, so
# removing the root never reaches the host's /dev or /proc.
trap 'rm -rf "$work"' EXIT
bare=$work/root
mkdir "$bare"
tar -C "$bare" -xf "$tarball"
mkdir -p "$bare/t"
cp "$wheel" "$bare/t/"
cp -r python/tests "$bare/t/tests"
cp -r samples "$bare/t/samples"
cp /etc/resolv.conf "$bare/etc/resolv.conf" 2>/dev/null || true
# PyPI through the same certificate authorities as this machine's pip.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mkdir -p "$bare/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$bare/etc/ssl/certs/ca-certificates.crt"
fi

cat >"$bare/t/run.sh" <<'EOF'
#!/bin/sh
# Runs inside the bare root.
set -eu
export PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1
[ -f "$PIP_CERT" ] || unset PIP_CERT
echo "== the bare root: $(. /etc/os-release; echo "$PRETTY_NAME"), $(python3 --version)"
# The codec libraries are not there: the package can only use its own.
for lib in libpng16.so.16 libjpeg.so.62 libtiff.so.6 libgif.so.7 libexif.so.12 libdeflate.so.0 libisal.so.2; do
    if ldconfig -p | grep -q "$lib"; then
        echo "FAIL: the bare root has $lib"; exit 1
    fi
done
for d in /usr/include/png.h /usr/include/jpeglib.h /usr/include/tiff.h; do
    if [ -e "$d" ]; then echo "FAIL: the bare root has $d"; exit 1; fi
done
python3 -m venv /opt/venv
if ! /opt/venv/bin/pip install -q numpy pytest pillow >/t/pip.log 2>&1; then
    cat /t/pip.log
    if grep -qiE 'NewConnectionError|name resolution|Network is unreachable|ConnectTimeout|ProxyError|No matching distribution found for (numpy|pytest|pillow)' /t/pip.log; then
        echo "SKIP: PyPI cannot be reached"; exit 77
    fi
    echo "FAIL: pip install numpy pytest pillow"; exit 1
fi
/opt/venv/bin/pip install -q --no-index --no-deps /t/*.whl || { echo "FAIL: pip install the wheel"; exit 1; }
cd /t
/opt/venv/bin/python - <<'PY'
import os
import sys
import numpy as np
import imghist
pkg = os.path.dirname(imghist.__file__)
assert pkg.startswith("/opt/venv/"), pkg
maps = open("/proc/self/maps").read().split("\n")
libs = sorted({l.split()[-1] for l in maps if ".so" in l and "/" in l})
ours = [l for l in libs if "/imghist" in l]
own = (sys.prefix + "/", sys.base_prefix + "/lib/python")  # the venv's and Python's modules
foreign = [l for l in libs if "/imghist" not in l and not l.startswith(own)
           and not os.path.basename(l).startswith(("libc.so", "libm.so", "ld-linux", "libz.so",
                                                   "libstdc++", "libgcc_s", "libpython", "libffi",
                                                   "libexpat", "liblzma", "libbz2", "libzstd",
                                                   "libcrypto", "libssl", "libuuid",
                                                   "libpthread", "libdl.so", "librt.so"))]
x = np.arange(256, dtype=np.uint8).reshape(16, 16)
assert (imghist.histogram(x) == 1).all()
g = imghist.load("/t/samples/moon.png")
assert imghist.histogram(g).sum() == g.size
print("imghist", imghist.__version__, "from", pkg)
print("its libraries:", " ".join(os.path.basename(l) for l in ours))
assert any("imghist.libs/libpng16" in l for l in libs), libs
assert not foreign, foreign
PY
# The tests, and the installed package's docstring examples.
cd /t/tests
IMGHIST_SAMPLES=/t/samples /opt/venv/bin/python -m pytest -q -rs -p no:cacheprovider \
    --doctest-modules --import-mode=append /t/tests --pyargs imghist
EOF
chmod +x "$bare/t/run.sh"

echo "== $(basename "$wheel") on bare Debian 12"
set +e
unshare --mount --propagation private sh -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --rbind /dev "$1/dev"
    exec chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        LANG=C.UTF-8 /bin/sh /t/run.sh
' sh "$bare"
rc=$?
set -e
case $rc in
    0) echo "PASS: $(basename "$wheel") on bare Debian 12" ;;
    77) echo "SKIP: $(basename "$wheel") on bare Debian 12" ;;
    *) echo "FAIL: $(basename "$wheel") on bare Debian 12 (exit $rc)"; rc=1 ;;
esac
exit $rc
