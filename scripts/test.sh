#!/bin/sh
# Set up, build, and run every test suite (the GPU suite skips without a GPU).
# Ends with the line "N passed, N failed, N skipped".
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh python3 python3-opencv python3-numpy
[ -f build/build.ninja ] || meson setup build
ninja -C build
status=0
meson test -C build --print-errorlogs || status=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line)["result"]
    key = {"OK": "OK", "SKIP": "SKIP", "EXPECTEDFAIL": "OK"}.get(r, "FAIL")
    counts[key] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $status
