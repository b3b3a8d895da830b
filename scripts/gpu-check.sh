#!/bin/sh
# On a GPU machine, with a build folder made elsewhere (or here): the GPU suite,
# the OpenCV reference on the CUDA backend, the demos, compute-sanitizer, and
# the SASS of the kernels. Logs go to $OUT (or ./gpu-logs).
# usage: scripts/gpu-check.sh [BUILD_DIR]
set -u
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: > "$summary"
step() { # name, command...
    name=$1; shift
    start=$(date +%s)
    "$@" > "$OUT/$name.log" 2>&1
    rc=$?
    t=$(( $(date +%s) - start ))
    printf '%-22s rc=%-3s %4ss  %s\n' "$name" "$rc" "$t" "$(tail -n 1 "$OUT/$name.log")" | tee -a "$summary"
}
nvidia-smi -L > "$OUT/gpu.txt" 2>&1; cat "$OUT/gpu.txt"
for t in context histogram equalize joint clahe; do
    step "cuda_$t" "$B/tests/test_$t" cuda samples
done
mkjpeg=""
[ -x "$B/tests/make_jpeg" ] && mkjpeg="$B/tests/make_jpeg"
# shellcheck disable=SC2086
step opencv_ref_auto python3 tests/test_opencv_ref.py "$B/src/imghist" samples $mkjpeg
step cli_cuda "$B/src/imghist" samples/moon.png --backend cuda -v
step two_phase_demo "$B/samples/two_phase_demo"
step device_api_demo "$B/samples/device_api_demo" samples/coffee.png
export IMGHIST_TEST_QUICK=1
step memcheck compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "$B/tests/test_context" cuda samples
step racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$B/tests/test_histogram" cuda samples
step synccheck compute-sanitizer --tool synccheck --error-exitcode 9 "$B/tests/test_equalize" cuda samples
unset IMGHIST_TEST_QUICK
cuobjdump -sass "$B"/src/libimghist.so > "$OUT/sass.txt" 2>&1
echo "SASS instruction mix (sm_90 histogram kernel):" | tee -a "$summary"
awk '/Function/ {f=$0} /arch = sm_90/ {on=1} on && /ATOMS|LDG|RED|ATOMG|STG/ {match($0,/(ATOMS|LDG|RED|ATOMG|STG)[A-Z0-9._]*/); print substr($0,RSTART,RLENGTH)}' "$OUT/sass.txt" | sort | uniq -c | tee -a "$summary"
cat "$summary"
