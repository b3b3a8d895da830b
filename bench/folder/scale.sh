#!/bin/bash
# Scale-out benchmark (issue 16): images/s of one imghist batch run on 1 GPU
# against 2 GPUs (--gpus 0 vs --gpus 0,1), and of mpirun with 1, 2, 4 ranks,
# on the folder benchmark's JPEGs.
#
#   bench/folder/scale.sh DATA_DIR
#
# DATA_DIR holds make_data.py's jpeg/ folder; when it does not and BENCHSRC
# is set, make_data.py makes it there first from BENCHSRC (the unpacked
# Debian packages, e.g. .benchsrc; needs python3 with cv2).
#
# Environment:
#   IMGHIST=PATH     imghist built with CUDA and -Dmpi=enabled (default
#                    build/src/imghist); its libimghist.so.1 beside it or on
#                    LD_LIBRARY_PATH
#   MPI_DIR=DIR      a folder made by pack_mpi.sh (its env.sh is sourced);
#                    otherwise the mpirun on the PATH; none: MPI rows skipped
#   BENCHSRC=DIR     see above;  COUNT=200 images made
#   COPIES=5         the folder is COPIES links to each JPEG (1000 images),
#                    so that a run lasts seconds, not process start-up
#   REPS=3           repetitions per row (the table gives the median)
#   JOBS=N           worker threads of a single process (default nproc);
#                    each of R ranks gets N / R
#   RANKS="1 2 4"    MPI rank counts (empty: no MPI rows)
#   ONLY=REGEX       only rows whose label matches
#   IMGHIST_COMMIT=TEXT  what the header says the binary was built from
#                    (default: this checkout's commit)
#   OUT=DIR          where scale.md (the table) and scale.log go (default
#                    bench/folder/results)
#   AUTO_ROWS=1      rows with the default backend (auto: the CPU counts
#                    while the GPUs start), on every GPU and on --gpus 0;
#                    empty: none
#   FORMATS="jpg"    folders to run the 1-GPU / 2-GPU rows on: jpg (the
#                    JPEGs), pgm (the same photographs as gray 12 MP PGM
#                    files) and vga (their 640x480 tiles as PGM, 7200 files,
#                    linked VGA_COPIES times, default 1); make_raw.py makes
#                    pgm/ and vga/ when missing. The MPI rows use the JPEGs.
#                    Before them, rows "start-up" time a run over 64 links
#                    to one 640x480 tile (vga in FORMATS) or one JPEG: the
#                    fixed cost of a process on each backend and GPU count.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ $# -ne 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
data=$1
IMGHIST=${IMGHIST:-$root/build/src/imghist}
COUNT=${COUNT:-200}
COPIES=${COPIES:-5}
REPS=${REPS:-3}
JOBS=${JOBS:-$(nproc)}
RANKS=${RANKS-"1 2 4"}
ONLY=${ONLY:-}
OUT=${OUT:-$here/results}
mkdir -p "$OUT"
log=$OUT/scale.log
table=$OUT/scale.md
: >"$log"
say() { echo "scale.sh: $*" | tee -a "$log" >&2; }

# ---- MPI ----
if [ -n "${MPI_DIR:-}" ]; then
    # shellcheck disable=SC1091
    . "$MPI_DIR/env.sh"
fi
MPIRUN=$(command -v mpirun || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# NVLink multicast stays off (device rules), also for the ranks.
export NCCL_NVLS_ENABLE=0

if ! ver=$("$IMGHIST" --version 2>&1); then
    say "$IMGHIST does not run: $(echo "$ver" | head -1)"
    exit 1
fi

# ---- data ----
mkdir -p "$data"
data=$(cd "$data" && pwd)
if [ ! -d "$data/jpeg" ]; then
    [ -n "${BENCHSRC:-}" ] || { say "no $data/jpeg and no BENCHSRC to make it"; exit 2; }
    say "making $COUNT images in $data from $BENCHSRC"
    t0=$(date +%s)
    python3 "$here/make_data.py" "$BENCHSRC" "$data" -j "$(nproc)" --count "$COUNT" >>"$log" 2>&1 ||
        { say "make_data.py failed (see $log)"; exit 1; }
    say "made in $(( $(date +%s) - t0 )) s"
fi
FORMATS=${FORMATS:-jpg}
case " $FORMATS " in
    *" pgm "* | *" vga "*)
        if [ ! -d "$data/vga" ] || [ ! -d "$data/pgm" ]; then
            say "making gray PGM copies in $data/pgm and $data/vga"
            python3 "$here/make_raw.py" "$data" -j "$(nproc)" >>"$log" 2>&1 ||
                { say "make_raw.py failed (see $log)"; exit 1; }
        fi ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/imghist-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A folder of links per format: in_jpg, in_pgm (COPIES links to each
# file), in_vga (VGA_COPIES links each: 7200 files already). nfiles[F],
# mbytes[F].
declare -A nfiles mbytes
for fmt in $FORMATS; do
    case $fmt in
        jpg) src=("$data"/jpeg/*.jpg); copies=$COPIES ;;
        pgm) src=("$data"/pgm/*.pgm); copies=$COPIES ;;
        vga) src=("$data"/vga/*.pgm); copies=${VGA_COPIES:-1} ;;
        *) say "unknown format $fmt in FORMATS"; exit 2 ;;
    esac
    mkdir -p "$work/in_$fmt"
    k=0
    for c in $(seq 1 "$copies"); do
        for f in "${src[@]}"; do
            ln -s "$f" "$work/in_$fmt/c${c}_$(basename "$f")"
            k=$((k + 1))
        done
    done
    cat "${src[@]}" >/dev/null # into the page cache
    nfiles[$fmt]=$k
    mbytes[$fmt]=$(du -Lcb "${src[@]}" | tail -1 | awk -v c="$copies" '{printf "%.1f", $1 * c / 1e6}')
done

# ---- the machine ----
if [ -n "${IMGHIST_COMMIT:-}" ]; then
    built_from=$IMGHIST_COMMIT
else
    built_from="commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') (this checkout; set IMGHIST_COMMIT for a binary built elsewhere)"
fi
{
    echo "# Scale-out benchmark, $(date -u +%Y-%m-%d)"
    echo
    echo "- host: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
    echo "- GPUs: $(nvidia-smi -L 2>/dev/null | tr '\n' ';' || echo none)"
    echo "- imghist: $("$IMGHIST" --version 2>&1 | head -1), $built_from"
    echo "- MPI: ${MPIRUN:-none}$( [ -n "$MPIRUN" ] && "$MPIRUN" --version 2>/dev/null | head -1 | sed 's/^/ (/; s/$/)/')"
    for fmt in $FORMATS; do
        case $fmt in
            jpg) what="JPEGs ($COPIES links to each of $(ls "$data"/jpeg/*.jpg | wc -l) 12 MP photographs)" ;;
            pgm) what="gray 12 MP PGM files ($COPIES links to each of $(ls "$data"/pgm/*.pgm | wc -l))" ;;
            vga) what="gray 640x480 PGM files (${VGA_COPIES:-1} links to each of 7200 tiles of the photographs)" ;;
        esac
        echo "- data, $fmt: ${nfiles[$fmt]} $what, ${mbytes[$fmt]} MB; page cache warm"
    done
    echo "- $REPS repetitions per row, median; wall clock around the whole command (process start, mpirun start included)"
    echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| # | label | command | wall s median (runs) | best s | images/s | vs first row of its group | output |"
    echo "|---|---|---|---|---|---|---|---|"
} >"$table"

now() { date +%s.%N; }
# Arithmetic on decimals with awk (the GPU hosts have no bc).
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
row=0
declare -A ref_rate ref_out
# row GROUP LABEL OUTFILE CMD...: runs it REPS times; OUTFILE (the --total or
# --csv the command writes) is compared with the group's first row's.
bench_row() {
    local group=$1 label=$2 outfile=$3
    shift 3
    [ -z "$ONLY" ] || echo "$label" | grep -qE "$ONLY" || return 0
    row=$((row + 1))
    local times=() status=ok rc t0 t1
    for r in $(seq 1 "$REPS"); do
        rm -rf "$work/eq" "$outfile"
        t0=$(now)
        "$@" >>"$log" 2>&1
        rc=$?
        t1=$(now)
        echo "[$label rep $r] exit $rc, $(calc "$t1 - $t0") s: $*" >>"$log"
        if [ $rc -ne 0 ]; then status="failed (exit $rc; see scale.log)"; break; fi
        times+=("$(calc "$t1 - $t0")")
    done
    local med=– best=– rate=– rel=–
    if [ ${#times[@]} -gt 0 ]; then
        med=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
        best=$(printf '%s\n' "${times[@]}" | sort -g | head -1)
        rate=$(calc "$n / $med" 1)  # n: the row's file count
        if [ -z "${ref_rate[$group]:-}" ]; then
            ref_rate[$group]=$rate
            ref_out[$group]=$work/ref_$group
            cp "$outfile" "${ref_out[$group]}" 2>/dev/null
            rel=1.00
        else
            rel=$(calc "$rate / ${ref_rate[$group]}" 2)
        fi
        if [ "$status" = ok ]; then
            if cmp -s "$outfile" "${ref_out[$group]}"; then status="identical to row 1 of $group"
            else status="DIFFERS from row 1 of $group"; fi
        fi
    fi
    printf '| %d | %s | `%s` | %s (%d) | %s | %s | %s | %s |\n' "$row" "$label" \
        "$(echo "$*" | sed "s|$work|\$W|g; s|$IMGHIST|imghist|g")" "$med" "${#times[@]}" "$best" "$rate" "$rel" "$status" >>"$table"
    tail -1 "$table" >&2
}

ih=("$IMGHIST" -q)
T=$work/total.csv
C=$work/hist.csv
half=$((JOBS / 2 > 0 ? JOBS / 2 : 1))

# ---- start-up: 64 small images, so that every worker gets a context ----
one=$(ls "$data"/vga/*.pgm 2>/dev/null | head -1)
[[ " $FORMATS " == *" vga "* ]] || one=$(ls "$data"/jpeg/*.jpg | head -1)
mkdir -p "$work/in_one"
for c in $(seq 1 64); do ln -s "$one" "$work/in_one/c${c}_$(basename "$one")"; done
n=64
bench_row start-up "start-up: 64 x $(basename "$one"), CPU backend, -j $JOBS" "$T" "${ih[@]}" -j "$JOBS" --backend cpu --gray luma --total "$T" "$work/in_one"
bench_row start-up "start-up: 64 x $(basename "$one"), 1 GPU, -j $JOBS" "$T" "${ih[@]}" -j "$JOBS" --backend cuda --gpus 0 --gray luma --total "$T" "$work/in_one"
bench_row start-up "start-up: 64 x $(basename "$one"), 2 GPUs, -j $JOBS" "$T" "${ih[@]}" -j "$JOBS" --backend cuda --gpus 0,1 --gray luma --total "$T" "$work/in_one"
bench_row start-up "start-up: 64 x $(basename "$one"), auto (every GPU), -j $JOBS" "$T" "${ih[@]}" -j "$JOBS" --gray luma --total "$T" "$work/in_one"

# ---- 1 GPU vs 2 GPUs, one process ----
for fmt in $FORMATS; do
    folder=$work/in_$fmt
    n=${nfiles[$fmt]}
    if [ "$fmt" = jpg ]; then modes="luma-total bgr2gray-csv bgr2gray-equalize"; p=""
    else modes="luma-total bgr2gray-csv"; p="$fmt "; fi
    for mode in $modes; do
        case $mode in
            luma-total) opts=(--gray luma --total "$T"); o=$T ;;
            bgr2gray-csv) opts=(--csv "$C"); o=$C ;;
            bgr2gray-equalize) opts=(--equalize "$work/eq" --total "$T"); o=$T ;;
        esac
        g="$p$mode"
        bench_row "$g" "$g, CPU backend, -j $JOBS" "$o" "${ih[@]}" -j "$JOBS" --backend cpu "${opts[@]}" "$folder"
        if [ -n "${AUTO_ROWS:-1}" ]; then
            bench_row "$g" "$g, auto (every GPU), -j $JOBS" "$o" "${ih[@]}" -j "$JOBS" "${opts[@]}" "$folder"
            bench_row "$g" "$g, auto --gpus 0, -j $JOBS" "$o" "${ih[@]}" -j "$JOBS" --gpus 0 "${opts[@]}" "$folder"
        fi
        bench_row "$g" "$g, 1 GPU (--gpus 0), -j $JOBS" "$o" "${ih[@]}" -j "$JOBS" --backend cuda --gpus 0 "${opts[@]}" "$folder"
        bench_row "$g" "$g, 2 GPUs (--gpus 0,1), -j $JOBS" "$o" "${ih[@]}" -j "$JOBS" --backend cuda --gpus 0,1 "${opts[@]}" "$folder"
        bench_row "$g" "$g, 1 GPU (--gpus 0), -j $half" "$o" "${ih[@]}" -j "$half" --backend cuda --gpus 0 "${opts[@]}" "$folder"
        bench_row "$g" "$g, 2 GPUs (--gpus 0,1), -j $half" "$o" "${ih[@]}" -j "$half" --backend cuda --gpus 0,1 "${opts[@]}" "$folder"
    done
done
folder=$work/in_jpg
n=${nfiles[jpg]:-0}

# ---- MPI ranks on this host ----
if [[ " $FORMATS " != *" jpg "* ]]; then
    say "no jpg in FORMATS: MPI rows skipped"
elif [ -z "$MPIRUN" ]; then
    say "no mpirun (set MPI_DIR to a pack_mpi.sh folder): MPI rows skipped"
    echo "| – | MPI rows | – | – | – | – | – | skipped (no mpirun) |" >>"$table"
else
    for mode in "luma-total" "bgr2gray-csv"; do
        case $mode in
            luma-total) opts=(--gray luma --total "$T"); o=$T ;;
            bgr2gray-csv) opts=(--csv "$C"); o=$C ;;
        esac
        for backend in cpu cuda; do
            for r in $RANKS; do
                j=$((JOBS / r > 0 ? JOBS / r : 1))
                bench_row "$mode" "$mode, MPI $r ranks x -j $j, $backend" "$o" \
                    "$MPIRUN" --oversubscribe --bind-to none -np "$r" "${ih[@]}" -j "$j" --backend "$backend" "${opts[@]}" "$folder"
            done
        done
    done
fi
echo >>"$table"
echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$table"
echo "- 'vs first row': images/s over the group's first row (the CPU backend in one process)." >>"$table"
cat "$table"
