#!/bin/sh
# Set up, build, and run every test suite twice: the normal build (CUDA when
# nvcc is there; the GPU suite skips without a GPU) and a CPU build under
# AddressSanitizer + UndefinedBehaviorSanitizer. The normal build has MPI
# (Open MPI), so the scale suite runs mpirun -np 4; the sanitized one has not
# (Open MPI's own allocations would read as leaks). The normal build has the
# Python binding too (nanobind from PyPI, scripts/nanobind.sh).
# Ends with the line "N passed, N failed, N skipped" over both.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh python3 python3-opencv python3-numpy valgrind python3-pytest python3-pil python3-skimage python3-venv strace
nb=$(scripts/nanobind.sh)
[ -f build/build.ninja ] || meson setup build -Dmpi=enabled -Dnanobind_dir="$nb"
meson configure build -Dmpi=enabled -Dnanobind_dir="$nb"
[ -f build-asan/build.ninja ] || meson setup build-asan -Dcuda=disabled -Dmpi=disabled \
    -Db_sanitize=address,undefined -Db_lundef=false --buildtype=debugoptimized
meson configure build-asan -Dmpi=disabled
status=0
for b in build build-asan; do
    echo "== $b"
    ninja -C "$b" || { status=1; continue; }
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp \
        meson test -C "$b" --print-errorlogs || status=1
done
python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json <<'PY'
import json, os, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for path in sys.argv[1:]:
    if not os.path.exists(path):
        counts["FAIL"] += 1
        continue
    for line in open(path):
        r = json.loads(line)["result"]
        counts[{"OK": "OK", "SKIP": "SKIP", "EXPECTEDFAIL": "OK"}.get(r, "FAIL")] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
