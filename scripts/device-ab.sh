#!/bin/bash
# On a GPU machine, with two builds made elsewhere (scripts/device-pack.sh):
# the GPU suites, compute-sanitizer and the Python package's CUDA tests on the
# new build, then every GPU benchmark of both builds, alternating old and new
# in this one process tree (an A/B on the same card). Logs go to $OUT as one
# tarball and a summary; bench/compare_logs.py compares the two sides.
#   scripts/device-ab.sh NEW OLD [tests|bench|all] [ROUNDS]
# With `tests`, one build's GPU suites alone: OLD is not run (give NEW again).
# BENCHES (default "u8 wide joint batch views16") picks the benchmarks.
set -u
N=$1
O=$2
what=${3:-all}
rounds=${4:-2}
OUT=${OUT:-device-logs}
logs=$OUT/logs
mkdir -p "$logs"
sum=$OUT/summary.txt
: >"$sum"
export LD_LIBRARY_PATH=$PWD/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
step() { # name timeout command...
    name=$1 t=$2
    shift 2
    start=$(date +%s)
    timeout "$t" "$@" >"$logs/$name.log" 2>&1
    rc=$?
    printf '%-22s rc=%-3s %4ss  %s\n' "$name" "$rc" "$(($(date +%s) - start))" \
        "$(tail -n 1 "$logs/$name.log" | cut -c1-100)" | tee -a "$sum"
}
nvidia-smi -L | tee -a "$sum"
if [ "$what" != bench ]; then
    export IMGHIST_SAMPLES=$PWD/samples
    for t in context histogram equalize joint clahe; do
        step "cuda_$t" 400 "$N/tests/test_$t" cuda samples
    done
    export IMGHIST_TEST_QUICK=1
    for t in context histogram equalize joint clahe; do
        step "memcheck_$t" 400 compute-sanitizer --tool memcheck --error-exitcode 9 \
            "$N/tests/test_$t" cuda samples
    done
    step racecheck_eq16 300 compute-sanitizer --tool racecheck --error-exitcode 9 \
        --kernel-name kns=eq16_small "$N/tests/test_equalize" cuda samples
    unset IMGHIST_TEST_QUICK
    step cli_cuda 60 "$N/src/imghist" samples/moon.png --backend cuda --bins 64 --range 0:256 -v
    step opencv_ref_cuda 300 python3 tests/test_opencv_ref.py "$N/src/imghist" samples
    lib=$(ls "$N"/src/libimghist.so.* | head -n 1)
    step python_cuda 300 env IMGHIST_LIBRARY="$lib" PYTHONPATH=python \
        python3 -m pytest -q -p no:cacheprovider python/tests
fi
if [ "$what" != tests ]; then
    for r in $(seq 1 "$rounds"); do
        for side in old new; do
            B=$O
            [ $side = new ] && B=$N
            for b in ${BENCHES:-u8 wide joint batch views16}; do
                case $b in
                u8) step "u8_${side}_$r" 300 "$B/bench/imghist_bench" --no-npp ;;
                batch) step "batch_${side}_$r" 300 "$B/bench/imghist_bench_batch" ;;
                *) step "${b}_${side}_$r" 300 "$B/bench/imghist_bench_$b" --runs 15 ;;
                esac
            done
        done
    done
fi
tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$logs"
cat "$sum"
