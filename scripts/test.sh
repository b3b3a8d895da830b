#!/bin/sh
# Set up, build, and run every test suite twice: the normal build (CUDA when
# nvcc is there; the GPU suite skips without a GPU) and a CPU build under
# AddressSanitizer + UndefinedBehaviorSanitizer. The normal build has MPI
# (Open MPI), so the scale suite runs mpirun -np 4; the sanitized one has not
# (Open MPI's own allocations would read as leaks). The normal build has the
# Python binding too (nanobind from PyPI, scripts/nanobind.sh). Then the CPU
# wheel is built and tested on a bare Debian 12 (scripts/wheel.sh,
# scripts/test-wheel-bare.sh), counted as one test.
# Builds use scripts/setup-build.sh's build type, as scripts/demo.sh does.
# Ends with a line per skipped test ("skipped: BUILD: NAME: reason") and
# then the line "N passed, N failed, N skipped" over all of them, always
# last (scripts/test-summary.py).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh --test
nb=$(scripts/nanobind.sh)
scripts/setup-build.sh build -Dmpi=enabled -Dnanobind_dir="$nb"
scripts/setup-build.sh build-asan -Dcuda=disabled -Dmpi=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false
status=0
for b in build build-asan; do
    echo "== $b"
    ninja -C "$b" || { status=1; continue; }
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
        meson test -C "$b" --print-errorlogs || status=1
done
# The CPU wheel (scripts/wheel.sh) on a bare Debian 12 root: one more test,
# "wheel", skipped (77) where debootstrap's mirror or PyPI cannot be reached.
echo "== wheel: the CPU wheel (scripts/wheel.sh, log build-wheel/ci.log), then on a bare"
echo "   Debian 12 root (scripts/test-wheel-bare.sh, log build-wheel/bare.log); minutes"
wheellog=build-wheel/testlog.json
mkdir -p build-wheel
rm -rf build-wheel/ci build-wheel/bare.log "$wheellog"
t0=$(date +%s)
set +e
scripts/wheel.sh --cpu --out build-wheel/ci >build-wheel/ci.log 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    tail -n 1 build-wheel/ci.log
    scripts/test-wheel-bare.sh build-wheel/ci/*.whl >build-wheel/bare.log 2>&1
    rc=$?
    [ $rc -eq 0 ] || tail -n 60 build-wheel/bare.log
    tail -n 1 build-wheel/bare.log
else
    tail -n 40 build-wheel/ci.log
fi
set -e
case $rc in 0) r=OK ;; 77) r=SKIP ;; *) r=FAIL; status=1 ;; esac
echo "wheel: $r in $(($(date +%s) - t0)) s"
# Its last line says why it skipped (or failed).
why=$(tail -n 1 build-wheel/bare.log 2>/dev/null || tail -n 1 build-wheel/ci.log)
python3 -c 'import json, sys; print(json.dumps({"name": "wheel", "result": sys.argv[1],
    "stdout": sys.argv[2]}))' "$r" "$why" >"$wheellog"
python3 scripts/test-summary.py build/meson-logs/testlog.json \
    build-asan/meson-logs/testlog.json "$wheellog"
exit $status
