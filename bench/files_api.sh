#!/bin/sh
# A/B of imghist_histogram_files (bench/files_api.c) against the CLI's batch
# run with --csv on one folder, the same threads, as whole processes timed
# from outside, alternating, ROUNDS rounds; prints each run and the medians.
#   bench/files_api.sh BUILD FILES_API DIR THREADS [ROUNDS] [cpu|cuda]
set -eu
build=$1 bench=$2 dir=$3 threads=$4 rounds=${5:-7} backend=${6:-cpu}
n=$(ls "$dir" | wc -l)
csv=$(mktemp)
trap 'rm -f "$csv"' EXIT
wall() { # seconds the command took
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    awk "BEGIN { print $t1 - $t0 }"
}
cli_t="" lib_t=""
for r in $(seq "$rounds"); do
    c=$(wall "$build/src/imghist" -q --backend "$backend" -j "$threads" --csv "$csv" "$dir")
    l=$(wall "$bench" "$dir" "$threads" "$backend")
    echo "round $r: cli $c s, library $l s"
    cli_t="$cli_t $c" lib_t="$lib_t $l"
done
median() { echo "$@" | tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
mc=$(median $cli_t) ml=$(median $lib_t)
awk -v n="$n" -v t="$threads" -v b="$backend" -v c="$mc" -v l="$ml" 'BEGIN {
    printf "%d images, %d threads, %s: cli median %.3f s (%.2f images/s), library median %.3f s (%.2f images/s), library/cli speed %.3f\n", n, t, b, c, n / c, l, n / l, c / l }'
