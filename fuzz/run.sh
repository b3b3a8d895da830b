#!/bin/sh
# Run one libFuzzer target (build it first with fuzz/build.sh).
# usage: fuzz/run.sh load|args [EXECUTIONS] [MAX_SECONDS]
#   EXECUTIONS   -runs (default 1000000; -1 = until a crash or MAX_SECONDS)
#   MAX_SECONDS  -max_total_time (default 0 = no limit)
# The fuzzer works on a copy of the seeds (fuzz/out/corpus-TARGET/, kept
# between runs, so a later run goes on from what an earlier one found) and
# never writes into fuzz/corpus/. Crashes, leaks, timeouts and out-of-memory
# inputs go to fuzz/findings/TARGET-crash-*, -leak-*, -timeout-*, -oom-*; the
# whole log to fuzz/out/TARGET.log. Ends by printing libFuzzer's final stats.
# Environment: FUZZ_JOBS (default 1) for -jobs/-workers on machines with
# cores to spare; FUZZ_ARGS for further libFuzzer flags.
set -eu
cd "$(dirname "$0")/.."

target=${1:?usage: fuzz/run.sh load|args [EXECUTIONS] [MAX_SECONDS]}
runs=${2:-1000000}
max_time=${3:-0}
bin=fuzz/out/fuzz_$target
[ -x "$bin" ] || { echo "fuzz/run.sh: $bin missing: run fuzz/build.sh" >&2; exit 2; }

case $target in
    load) max_len=16384; dict=fuzz/load.dict ;;
    args) max_len=1024; dict=fuzz/args.dict ;;
    *) echo "fuzz/run.sh: unknown target '$target' (load or args)" >&2; exit 2 ;;
esac

work=fuzz/out/corpus-$target
mkdir -p "$work" fuzz/findings
cp -p fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
cp -p fuzz/corpus/"$target"-found/* "$work"/ 2>/dev/null || true
for f in tests/crashers/*; do
    case $(basename "$f") in README.md) continue ;; esac
    [ -f "$f" ] && cp -p "$f" "$work"/
done

log=fuzz/out/$target.log
jobs=${FUZZ_JOBS:-1}
jobflags=""
if [ "$jobs" -gt 1 ]; then
    jobflags="-jobs=$jobs -workers=$jobs"
fi
echo "fuzz/run.sh: $bin, $runs runs, max ${max_time}s, log $log"
status=0
# shellcheck disable=SC2086
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=0} \
"$bin" -runs="$runs" -max_total_time="$max_time" -max_len="$max_len" -dict="$dict" \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 \
    -artifact_prefix=fuzz/findings/"$target"- $jobflags ${FUZZ_ARGS:-} \
    "$work" > "$log" 2>&1 || status=$?
grep -E '^(Done|stat::|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" || true
# UB that UBSan reported without stopping (none expected: all of it is fatal), once each.
grep -E 'runtime error:' "$log" | awk -F': runtime error: ' '!seen[$1]++' |
    sed 's/^/reported (not fatal): /' || true
if [ "$status" -ne 0 ]; then
    echo "fuzz/run.sh: the fuzzer stopped with status $status: see $log and fuzz/findings/" >&2
fi
exit "$status"
