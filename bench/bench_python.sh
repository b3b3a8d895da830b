#!/usr/bin/env bash
# The device side of bench/bench_python.py: install the carried peer wheels,
# point Python at the carried imghist package and library, run the benchmark,
# logs under $OUT.
#
#   bench/bench_python.sh PKG LIB [WHEELS [bench_python.py options...]]
#
# PKG: the imghist package folder (the one holding __init__.py), e.g.
#   .devlibs/imghist; LIB: its libimghist.so(.2), e.g. .devlibs/libimghist.so.2
#   (a CUDA build, -Dgpu_archs=90); WHEELS: the folder of wheels from
#   bench/python_wheels.sh (default .whl; absent or empty: peers that need them
#   say "not installed").
# Writes $OUT/bench_python.md, bench_python.json, bench.log, pip.log, env.txt
# ($OUT defaults to bench-python-out). Exit status: the benchmark's (3: an
# imghist result differed from its reference).
set -u
if [ $# -lt 2 ]; then
    sed -n '2,16p' "$0" >&2
    exit 2
fi
pkg=$(cd "$1" && pwd) || exit 2
lib=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
whl=${3:-.whl}
if [ $# -ge 3 ]; then shift 3; else shift $#; fi
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-bench-python-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

if [ ! -f "$pkg/__init__.py" ]; then
    echo "bench_python.sh: $pkg has no __init__.py: give the imghist package folder" >&2
    exit 2
fi
if [ ! -f "$lib" ]; then
    echo "bench_python.sh: no library at $lib" >&2
    exit 2
fi

site=/tmp/site
: >"$OUT/pip.log"
if compgen -G "$whl/*.whl" >/dev/null; then
    # One wheel at a time, so that one that does not install leaves the others.
    for w in "$whl"/*.whl; do
        if ! python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
                --upgrade --target "$site" "$w" >>"$OUT/pip.log" 2>&1; then
            echo "bench_python.sh: $(basename "$w") did not install (pip.log)" | tee -a "$OUT/pip.log" >&2
        fi
    done
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
else
    echo "no wheels in $whl" >"$OUT/pip.log"
fi
# The carried package first, whatever else is on the path.
export PYTHONPATH=$(dirname "$pkg")${PYTHONPATH:+:$PYTHONPATH}
if [ "$(basename "$pkg")" != imghist ]; then
    # Python imports the folder by its name: give it one called imghist.
    mkdir -p /tmp/imghist-pkg && ln -sfn "$pkg" /tmp/imghist-pkg/imghist
    export PYTHONPATH=/tmp/imghist-pkg:$PYTHONPATH
fi
export IMGHIST_LIBRARY=$lib
export LD_LIBRARY_PATH=$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
    nvidia-smi -L 2>&1
    git -C "$here" log -1 --format='commit %H %cd' 2>/dev/null
    echo "PYTHONPATH=$PYTHONPATH"
    echo "IMGHIST_LIBRARY=$IMGHIST_LIBRARY"
    python3 -m pip list 2>/dev/null | grep -i -E '^(torch|torchvision|numpy|cupy|opencv|kornia|cucim|cvcuda|scikit-image|scipy) '
    python3 -c 'import imghist, sys; print("imghist", getattr(imghist, "__version__", "?"), imghist.__file__, sys.modules["imghist._lib"].library_path)' 2>&1
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

set -o pipefail
python3 "$here/bench_python.py" --out "$OUT" "$@" 2>&1 | tee "$OUT/bench.log"
rc=$?
echo "bench_python.sh: exit status $rc; logs in $OUT"
exit $rc
