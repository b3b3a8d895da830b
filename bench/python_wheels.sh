#!/usr/bin/env bash
# Download the wheels of the Python peers that bench/bench_python.py compares
# imghist with and that the GPU machine lacks, for the device tool to carry.
#
#   bench/python_wheels.sh [DEST]        (DEST default /work/main/.whl)
#
# Environment: BUDGET_MIB (default 40) is what the wheels may take of the
# device tool's 64 MiB carry limit (the tree ~8 MiB and the library build
# ~10 MiB travel in the same call); TRY_CVCUDA=0 skips downloading CV-CUDA
# only to leave it out again.
#
# The GPU machine cannot reach PyPI, so the wheels are fetched here with
# `pip download --no-deps --only-binary=:all: --python-version 3.12` for the
# manylinux x86-64 platforms (its python3 is 3.12 with torch 2.11 cu130,
# torchvision 0.26, cupy-cuda13x, numpy 2.x, scipy, scikit-image, opencv,
# click and lazy-loader already installed), and installed there with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#       --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
# (bench/bench_python.sh does that). Only this script's own packages are
# replaced in DEST; other wheels there are left alone.
#
# What it takes and what it leaves out (sizes seen on 2026-11-23):
#   kornia 0.9.0 (py3-none-any, 1.9 MB) and kornia-rs 0.2.0 (cp312, 5.3 MB),
#     which kornia requires (torch and numpy are on the device).
#   cucim-cu13 26.10.0 (cp312, 16.7 MB): a CUDA 13 build exists, so the cu12
#     one (which needs libcudart.so.12 and cupy-cuda12x, neither on the
#     device) is not needed. Its needs click, lazy-loader, numpy, scipy,
#     scikit-image and cupy-cuda13x (>= 14.0.1) are on the device;
#     nvidia-nvimgcodec-cu13 is not and is left out: only cucim.clara's image
#     decoding uses it, not cucim.skimage.
#   LEFT OUT: CV-CUDA. cvcuda-cu13 0.19.0 is a 128 MB wheel (0.16.0: 103 MB;
#     cvcuda-cu12 0.15.0: 139 MB), nearly all of it one 187 MB libcvcuda.so
#     with kernels for every architecture; even xz -9 only brings that to
#     112 MB. It cannot travel within one call's 64 MiB. (Carrying it in
#     pieces over three warm calls would work but costs more device time than
#     one peer row is worth.) The benchmark reports it as "not installed".
set -euo pipefail

dest=${1:-/work/main/.whl}
budget_mib=${BUDGET_MIB:-40}
try_cvcuda=${TRY_CVCUDA:-1}
py=${PYTHON:-python3}

# name==version, in order of priority (what fits the budget first is kept).
# A second spec after '|' is the fallback when the first has no wheel.
specs=(
    "kornia-rs==0.2.0"
    "kornia==0.9.0"
    "cucim-cu13==26.10.0|cucim-cu12==26.10.0"
)
if [ "$try_cvcuda" = 1 ]; then
    specs+=("cvcuda-cu13==0.19.0|cvcuda-cu12==0.19.0")
fi

# Needs the device already has (KINDS.md "Python packages already there"),
# normalised as pip writes distribution names.
have="torch torchvision numpy scipy scikit-image click lazy-loader cupy-cuda13x
opencv-python-headless pillow kornia-rs"
# Needs left behind on purpose (see above).
unneeded="nvidia-nvimgcodec-cu13"

platforms=()
for p in manylinux_2_35_x86_64 manylinux_2_34_x86_64 manylinux_2_31_x86_64 \
         manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done

mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The distribution name of a wheel file, normalised (cucim_cu13-... -> cucim-cu13).
wheel_name() { basename "$1" | cut -d- -f1 | tr '_A-Z' '-a-z'; }

used=0
kept=()
left=()
for spec in "${specs[@]}"; do
    got=
    for one in ${spec//|/ }; do
        name=${one%%==*}
        rm -rf "$tmp/dl" && mkdir -p "$tmp/dl"
        if "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
               --implementation cp "${platforms[@]}" -d "$tmp/dl" "$one" >"$tmp/pip.log" 2>&1; then
            got=$one
            break
        fi
        echo "python_wheels: no wheel for $one: $(tail -n 1 "$tmp/pip.log")" >&2
    done
    if [ -z "$got" ]; then
        left+=("$spec: no wheel for Python 3.12 / manylinux x86-64")
        continue
    fi
    whl=$(ls "$tmp"/dl/*.whl)
    size=$(stat -c %s "$whl")
    mib=$(( (size + 1048575) / 1048576 ))
    if [ $(( used + mib )) -gt "$budget_mib" ]; then
        left+=("$got: $mib MiB would bring the wheels to $(( used + mib )) MiB, over BUDGET_MIB=$budget_mib")
        continue
    fi
    # One version of each package in DEST: two stop the whole install.
    n=$(wheel_name "$whl")
    for old in "$dest"/*.whl; do
        [ -e "$old" ] || continue
        if [ "$(wheel_name "$old")" = "$n" ] && [ "$(basename "$old")" != "$(basename "$whl")" ]; then
            echo "python_wheels: replacing $(basename "$old")"
            rm -f "$old"
        fi
    done
    mv -f "$whl" "$dest/"
    used=$(( used + mib ))
    kept+=("$(basename "$whl")")
    # Its needs that the device may lack (extras skipped).
    needs=$(unzip -p "$dest/$(basename "$whl")" '*.dist-info/METADATA' | grep '^Requires-Dist:' |
            grep -v 'extra ==' | sed 's/^Requires-Dist: *//; s/[ ;<>=!~\[].*//' |
            tr '_A-Z' '-a-z' | sort -u || true)
    for d in $needs; do
        case " $(echo $have $unneeded) " in *" $d "*) ;; *)
            echo "python_wheels: $got needs $d, which is neither on the device's list nor carried" ;;
        esac
    done
done

echo
echo "Wheels in $dest (this script's):"
for w in "${kept[@]}"; do
    printf '  %8.1f MiB  %s\n' "$(awk -v s="$(stat -c %s "$dest/$w")" 'BEGIN{print s/1048576}')" "$w"
done
total=$(du -cb "$dest"/*.whl 2>/dev/null | tail -n 1 | cut -f1)
printf 'All wheels in %s: %.1f MiB (carry limit 64 MiB for tree + carried paths)\n' \
    "$dest" "$(awk -v s="${total:-0}" 'BEGIN{print s/1048576}')"
if [ ${#left[@]} -gt 0 ]; then
    echo "Left out:"
    for l in "${left[@]}"; do echo "  $l"; done
fi
