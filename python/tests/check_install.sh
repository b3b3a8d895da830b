#!/bin/sh
# The Meson test 'python_package': `pip install SRC` into a fresh venv, as a
# user installs the package (CPU backend only, which builds in a minute),
# then imports it and runs a few calls. meson-python and meson come from
# PyPI: skipped (77) when PyPI cannot be reached or python3-venv is missing.
# usage: check_install.sh SRC [PYTHON]
set -eu
src=$1
python=${2:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$python" -m venv "$tmp/venv" >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    echo "SKIP: cannot make a venv (Debian: python3-venv)"
    exit 77
fi
if ! "$tmp/venv/bin/pip" install --disable-pip-version-check --no-cache-dir \
        --config-settings=setup-args=-Dcuda=disabled "$src" >"$tmp/log" 2>&1; then
    cat "$tmp/log"
    if grep -qiE 'NewConnectionError|name resolution|Network is unreachable|ConnectTimeout|ProxyError|No matching distribution found for (meson|nanobind)' "$tmp/log"; then
        echo "SKIP: PyPI cannot be reached"
        exit 77
    fi
    echo "FAIL: pip install $src"
    exit 1
fi
tail -n 1 "$tmp/log"
cd "$tmp"
# A wheel carries the package and its library only.
for f in venv/bin/imghist venv/include/imghist.h; do
    if [ -e "$f" ]; then echo "FAIL: the package installed $f"; exit 1; fi
done
env -u IMGHIST_NATIVE IMGHIST_SAMPLES="$src/samples" venv/bin/python - <<'PY'
import os
import numpy as np
import imghist
pkg = os.path.dirname(imghist.__file__)
native = imghist._lib.N.__file__
assert native.startswith(pkg), native  # the binding and libimghist.so.N in the package
x = np.arange(256, dtype=np.uint8).reshape(16, 16)
assert (imghist.histogram(x) == 1).all()
assert imghist.histogram(np.stack([x, x])).shape == (2, 256)
assert (imghist.equalize(x) == x).all()
g = imghist.load(os.path.join(os.environ["IMGHIST_SAMPLES"], "moon.png"))
assert imghist.histogram(g).sum() == g.size
assert imghist.cuda_available() is False
record = [l.split(",")[0] for d in os.listdir(os.path.dirname(pkg)) if d.startswith("imghist-")
          for l in open(os.path.join(os.path.dirname(pkg), d, "RECORD"))]
stray = [r for r in record if not r.startswith(("imghist/", "imghist-"))]
assert not stray, stray
print("imghist", imghist.__version__, "from", pkg, "numpy", np.__version__, ":", len(record), "files")
PY
