#!/usr/bin/env bash
# Build imghist_bench if needed and run it, teeing everything it prints.
#
#   bench/run.sh [LOG] [imghist_bench options...]
#
# LOG defaults to bench-results.txt (relative to where this is started).
# Environment: BUILD_DIR (default <repo>/build-bench); GPU_ARCHS to override the
# architecture list of a fresh build dir (default: the GPU's own, from
# nvidia-smi, which keeps the first build short).
#
# Where meson and ninja are missing (a GPU machine without a toolchain), a
# binary already in the build dir (built elsewhere and copied along) is run as
# it is; libraries copied into <repo>/.devlibs are put on the loader's path.
# The benchmark runs from the repository root, where its default photo is.
set -euo pipefail

log=${1:-bench-results.txt}
if [ $# -gt 0 ]; then shift; fi
case $log in /*) ;; *) log=$PWD/$log ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-bench}
bin=$build/bench/imghist_bench
cd "$root"

if command -v meson >/dev/null 2>&1 && command -v ninja >/dev/null 2>&1; then
    if [ ! -f "$build/build.ninja" ]; then
        archs=${GPU_ARCHS:-}
        if [ -z "$archs" ] && command -v nvidia-smi >/dev/null 2>&1; then
            # "9.0" -> "90"; one entry per kind of GPU.
            archs=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
                    tr -d ' .' | sort -u | paste -sd, - || true)
        fi
        setup_args=(-Dbench=true -Dtests=false -Dbuildtype=release)
        if [ -n "$archs" ]; then setup_args+=("-Dgpu_archs=$archs"); fi
        meson setup "$build" "${setup_args[@]}"
    else
        meson configure "$build" -Dbench=true >/dev/null
    fi
    ninja -C "$build" bench/imghist_bench
elif [ -x "$bin" ]; then
    echo "run.sh: meson/ninja not found; running the existing $bin" >&2
else
    echo "run.sh: no meson/ninja here and no $bin; build it elsewhere with" >&2
    echo "  meson setup build-bench -Dbench=true -Dgpu_archs=90 && ninja -C build-bench" >&2
    echo "and bring build-bench/ (and .devlibs/ if the libraries are missing) along." >&2
    exit 2
fi

if [ -d "$root/.devlibs" ]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$root/.devlibs"
fi

set +e
"$bin" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo "imghist_bench exit status $rc; log in $log"
exit "$rc"
