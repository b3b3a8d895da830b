#!/bin/bash
# One device session for a build made elsewhere: the GPU suites, the
# sanitizer on the new kernels, and the benchmarks, logs under $OUT.
#   bench/device_suite.sh BUILD_DIR [tests|bench|all]
# LD_LIBRARY_PATH must already reach the build's shared libraries.
set -u
B=$1
what=${2:-all}
OUT=${OUT:-device-logs}
mkdir -p "$OUT"
sum=$OUT/summary.txt
step() { # name timeout command...
    name=$1; t=$2; shift 2
    start=$(date +%s)
    timeout "$t" "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    printf '%-18s rc=%-3s %4ss  %s\n' "$name" "$rc" "$(( $(date +%s) - start ))" \
        "$(tail -n 1 "$OUT/$name.log")" | tee -a "$sum"
}
nvidia-smi -L | tee "$OUT/gpu.txt"
git log -1 --format='commit %H %cd' >>"$OUT/gpu.txt" 2>/dev/null
if [ "$what" != bench ]; then
    for t in context histogram equalize joint clahe; do
        step "cuda_$t" 300 "$B/tests/test_$t" cuda samples
    done
    export IMGHIST_TEST_QUICK=1
    for t in histogram equalize joint; do
        step "memcheck_$t" 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$B/tests/test_$t" cuda samples
    done
    # the one-block 16-bit kernel's shared memory
    step racecheck_eq16 200 compute-sanitizer --tool racecheck --error-exitcode 9 \
        --kernel-name kns=eq16_small "$B/tests/test_equalize" cuda samples
    unset IMGHIST_TEST_QUICK
    step cli_cuda 60 "$B/src/imghist" samples/moon.png --backend cuda --bins 64 --range 0:256 -v
fi
if [ "$what" != tests ]; then
    step bench_wide 200 "$B/bench/imghist_bench_wide" --runs 15
    step bench_joint 200 "$B/bench/imghist_bench_joint" --runs 15
    step bench_u8 240 "$B/bench/imghist_bench" --no-npp
    step bench_views16 120 "$B/bench/imghist_bench_views16" --runs 15
fi
cat "$sum"
