#!/bin/bash
# Folder benchmark: imghist's batch mode against OpenCV, a shell loop of
# single-file imghist calls and ImageMagick, on the data of make_data.sh.
#
#   bench/folder/run.sh DATA_DIR [THREADS...]        (default: nproc)
#
# DATA_DIR is what make_data.sh made: jpeg/ and png/ (200 photographs of
# 12 MP each) and single/photo24.{jpg,png} (24 MP). Every row is timed with
# the wall clock around the whole command (process start included), its
# output folder emptied before each repetition; the table gives the median
# and the best of the repetitions. A row whose tool is missing says
# "skipped", a row whose command fails says "failed" and the run goes on.
# The markdown table goes to stdout and to the results file.
#
# Environment:
#   IMGHIST=PATH          imghist binary (default: build/src/imghist)
#   IMGHIST_COMMIT=TEXT   what the report says the binary was built from
#                         (default: this checkout's HEAD, and whether src/
#                         has changes or files newer than the binary)
#   BACKENDS="cpu cuda"   one set of imghist rows per --backend value
#                         (default: "default", no --backend option)
#   OPENCV_EQUALIZE=PATH  a prebuilt opencv_equalize (otherwise build.sh
#                         builds one, installing libopencv-dev if it can)
#   OPENCV_IMPL=auto|cpp|py|both   auto: the C++ program when it builds or
#                         runs, else opencv_equalize.py (default: auto)
#   PYTHON=PATH           a python3 with cv2 (default: the first of
#                         /usr/bin/python3, python3 that imports cv2)
#   REPS=3                repetitions of each folder row
#   REPS_SLOW=1           repetitions of the shell loop and ImageMagick rows
#   REPS_SINGLE=5         repetitions of each 24 MP row
#   SINGLE_THREADS=2      threads for the 24 MP rows
#   LIMIT=K               only the first K files of each folder (quick tries)
#   SLOW_LIMIT=K          the per-file loop and ImageMagick rows only: the
#                         first K files (ImageMagick takes ~5 s per 12 MP
#                         image and core)
#   ONLY=REGEX            only rows whose label matches (grep -E)
#   MOGRIFY=PATH|none     ImageMagick's mogrify (default: on the PATH, else
#                         apt-get install imagemagick), none: no such rows
#   NO_INSTALL=1          never run apt-get (libopencv-dev, imagemagick)
#   NO_CHECKS=1           leave out the output checks against OpenCV
#   RESULTS=FILE          results file (default:
#                         bench/folder/results/DATE-NCPUcpu[-GPU]-COMMIT.md)
#   TMPDIR                where the scratch folder goes (outputs, ~1 GB)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
data=$(cd "$1" 2>/dev/null && pwd) || { echo "run.sh: no folder $1" >&2; exit 2; }
shift
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=("$(nproc)")
for n in "${threads[@]}"; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: thread count '$n'?" >&2; exit 2; }
done

IMGHIST=${IMGHIST:-$root/build/src/imghist}
case "$IMGHIST" in
    */*) [ ! -d "$(dirname "$IMGHIST")" ] || IMGHIST=$(cd "$(dirname "$IMGHIST")" && pwd)/$(basename "$IMGHIST") ;;
    *) IMGHIST=$(command -v "$IMGHIST" || echo "$IMGHIST") ;;
esac
read -r -a backends <<<"${BACKENDS:-default}"
OPENCV_IMPL=${OPENCV_IMPL:-auto}
REPS=${REPS:-3}
REPS_SLOW=${REPS_SLOW:-1}
REPS_SINGLE=${REPS_SINGLE:-5}
SINGLE_THREADS=${SINGLE_THREADS:-2}
LIMIT=${LIMIT:-}
SLOW_LIMIT=${SLOW_LIMIT:-}
ONLY=${ONLY:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/imghist-folder-bench.XXXXXX") || exit 1
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
OUT=$work/out
export OUT IMGHIST

notes=()     # lines for the "Notes" section
note() { notes+=("$*"); echo "run.sh: $*" >&2; }

now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi; }

can_install() {
    [ -z "${NO_INSTALL:-}" ] && command -v apt-get >/dev/null 2>&1 &&
        { [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null; }
}
apt_install() {  # PACKAGE...: quietly, with a time limit (no network: fails)
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
    if ! timeout 120 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends "$@" >"$work/apt.log" 2>&1; then
        timeout 120 $sudo apt-get update -qq >>"$work/apt.log" 2>&1 || true
        timeout 300 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends "$@" >>"$work/apt.log" 2>&1
    fi
}

# ---------------------------------------------------------------- the tools
have_imghist=1
imghist_why=
if [ ! -x "$IMGHIST" ]; then
    have_imghist=
    imghist_why="no imghist at $IMGHIST (build it, or set IMGHIST)"
    note "$imghist_why"
fi
# Run a private copy: a rebuild of build/ during the run must not mix builds
# in one table. The copy finds its libimghist beside it (RUNPATH $ORIGIN, as
# in a meson build tree); where it would not, the original runs.
imghist_src=$IMGHIST
if [ -n "$have_imghist" ]; then
    mkdir -p "$work/imghist"
    cp "$IMGHIST" "$work/imghist/imghist"
    lib=$(ldd "$IMGHIST" 2>/dev/null | awk '$1 ~ /^libimghist/ {print $1, $3}')
    if [ -n "$lib" ] && [ -f "${lib#* }" ]; then
        cp -L "${lib#* }" "$work/imghist/${lib%% *}"
    fi
    if [ -z "$lib" ] || ldd "$work/imghist/imghist" 2>/dev/null | grep -q "$work/imghist/libimghist"; then
        IMGHIST=$work/imghist/imghist
    else
        note "imghist is not copied for the run (its libimghist is not found beside it): a rebuild during the run would mix builds"
    fi
fi
jflag=()      # single-file rows: -j only where this imghist knows it
if [ -n "$have_imghist" ] && "$IMGHIST" --help 2>&1 | grep -qE '(^|[ ,])-j'; then
    jflag=(-j "$SINGLE_THREADS")
elif [ -n "$have_imghist" ]; then
    note "this imghist has no -j: the 24 MP rows run with its default threads"
fi

PY=
for p in ${PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import cv2, numpy' 2>/dev/null; then
        PY=$(command -v "$p"); break
    fi
done
[ -n "$PY" ] || note "no python3 with cv2 and numpy: no opencv_equalize.py rows, no checks"

cpp_bin=
cpp_why=
if [ "$OPENCV_IMPL" != py ]; then
    if [ -n "${OPENCV_EQUALIZE:-}" ]; then
        if "$OPENCV_EQUALIZE" --help >/dev/null 2>"$work/cpp.err"; then
            cpp_bin=$OPENCV_EQUALIZE
        else
            cpp_why="OPENCV_EQUALIZE=$OPENCV_EQUALIZE does not run: $(head -c 200 "$work/cpp.err" | head -1)"
        fi
    else
        if ! pkg-config --exists opencv4 2>/dev/null && ! can_install; then
            cpp_why="no libopencv-dev (pkg-config opencv4), and it cannot be installed here (NO_INSTALL, no apt-get, or not root)"
        elif b=$(NO_INSTALL=${NO_INSTALL:-} "$here/build.sh" "$work/opencv_equalize" 2>"$work/build.log") &&
             "$b" --help >/dev/null 2>&1; then
            cpp_bin=$b
        else
            cpp_why="opencv_equalize.cpp did not build: $(grep -m1 -iE 'error|cannot|no ' "$work/build.log" | head -c 200)"
        fi
    fi
    [ -z "$cpp_why" ] || note "C++ OpenCV program: $cpp_why"
fi
impls=()
case "$OPENCV_IMPL" in
    auto) if [ -n "$cpp_bin" ]; then impls=(cpp); elif [ -n "$PY" ]; then impls=(py); fi ;;
    both) [ -z "$cpp_bin" ] || impls+=(cpp); [ -z "$PY" ] || impls+=(py) ;;
    cpp) impls=(cpp) ;;
    py) impls=(py) ;;
    *) echo "run.sh: OPENCV_IMPL=$OPENCV_IMPL? (auto, cpp, py, both)" >&2; exit 2 ;;
esac
[ ${#impls[@]} -gt 0 ] || note "no OpenCV implementation could run: OpenCV rows skipped"
opencv_cmd() {  # IMPL -> the command words, in $ocv
    if [ "$1" = cpp ]; then ocv=$(q "$cpp_bin"); else ocv="$(q "$PY") $(q "$here/opencv_equalize.py")"; fi
}

MOGRIFY=${MOGRIFY:-}
mogrify_why="no ImageMagick (mogrify), and it could not be installed"
if [ "$MOGRIFY" = none ]; then
    MOGRIFY=
    mogrify_why="no ImageMagick rows (MOGRIFY=none)"
elif [ -n "$MOGRIFY" ]; then
    "$MOGRIFY" -version 2>/dev/null | grep -q ImageMagick || { note "MOGRIFY=$MOGRIFY is no ImageMagick mogrify"; MOGRIFY=; }
elif command -v mogrify >/dev/null 2>&1 && mogrify -version 2>/dev/null | grep -q ImageMagick; then
    MOGRIFY=$(command -v mogrify)
elif can_install && apt_install imagemagick && command -v mogrify >/dev/null 2>&1; then
    MOGRIFY=$(command -v mogrify)
    note "installed imagemagick for this benchmark"
fi
[ -n "$MOGRIFY" ] || note "$mogrify_why: its rows skipped"
export MOGRIFY

# ---------------------------------------------------------------- the data
declare -A set_dir set_n set_bytes
prepare_set() {  # NAME SUBFOLDER: a folder of the inputs (LIMIT: links to the first K)
    local name=$1 dir=$data/$2 files=() f
    mapfile -t files < <(find "$dir" -maxdepth 1 -type f ! -name '.*' | LC_ALL=C sort)
    if [ ${#files[@]} -eq 0 ]; then
        note "no files in $dir: its rows skipped"
        return
    fi
    if [ -n "$LIMIT" ] && [ "$LIMIT" -lt ${#files[@]} ]; then
        files=("${files[@]:0:$LIMIT}")
        mkdir -p "$work/sets/$name"
        for f in "${files[@]}"; do ln -s "$f" "$work/sets/$name/"; done
        dir=$work/sets/$name
    fi
    set_dir[$name]=$dir
    set_n[$name]=${#files[@]}
    set_bytes[$name]=$(cat "${files[@]}" | wc -c)
    # the slow rows' share (SLOW_LIMIT)
    set_dir[${name}_slow]=$dir
    set_n[${name}_slow]=${#files[@]}
    set_bytes[${name}_slow]=${set_bytes[$name]}
    if [ -n "$SLOW_LIMIT" ] && [ "$SLOW_LIMIT" -lt ${#files[@]} ]; then
        files=("${files[@]:0:$SLOW_LIMIT}")
        mkdir -p "$work/sets/${name}_slow"
        for f in "${files[@]}"; do ln -s "$f" "$work/sets/${name}_slow/"; done
        set_dir[${name}_slow]=$work/sets/${name}_slow
        set_n[${name}_slow]=${#files[@]}
        set_bytes[${name}_slow]=$(cat "${files[@]}" | wc -c)
    fi
}
prepare_set jpeg jpeg
prepare_set png png
[ -n "$LIMIT" ] && note "LIMIT=$LIMIT: only the first $LIMIT files of each folder"
[ -n "$SLOW_LIMIT" ] && note "SLOW_LIMIT=$SLOW_LIMIT: the per-file loop and ImageMagick rows take the first $SLOW_LIMIT files of each folder (their images/s is over those)"
single_jpg=$data/single/photo24.jpg
single_png=$data/single/photo24.png
# The page cache holds the inputs for every row alike (a first pass reads them).
cat "$data"/jpeg/* "$data"/png/* "$data"/single/* >/dev/null 2>&1
describe() {  # FILE -> "WxH" through cv2, if there
    [ -n "$PY" ] || return 0
    "$PY" -c 'import cv2,sys; i=cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE); print("%dx%d" % (i.shape[1], i.shape[0]))' "$1" 2>/dev/null
}

# ---------------------------------------------------------------- rows
rows=()     # markdown table rows
row_no=0
results_line() {  # the fields -> one table row
    local line="|" f
    for f in "$@"; do line+=" $f |"; done
    rows+=("$line")
    printf '%s\n' "$line" >&2
}
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) exit; m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
fmt() { awk -v x="$1" -v d="$2" 'BEGIN {printf "%.*f", d, x}'; }

# run_row LABEL INPUT IMPL MODE OUTPUT THREADS NIMG BYTES REPS EXPECT CHECK CMD
#   EXPECT: number of .png files the command must leave in $OUT (0: none)
#   CHECK:  a command run on the last repetition's output (prints one line)
#   CMD:    a bash command line ($OUT, $IMGHIST, $MOGRIFY are exported)
run_row() {
    local label=$1 input=$2 impl=$3 mode=$4 output=$5 nthr=$6 nimg=$7 bytes=$8 reps=$9
    local expect=${10} check=${11} cmd=${12}
    if [ -n "$ONLY" ] && ! grep -qE -- "$ONLY" <<<"$label $impl $input"; then return; fi
    row_no=$((row_no + 1))
    local times=() status=ok r t0 t1 rc
    echo "run.sh: [$row_no] $label | $input | $impl | -j $nthr ..." >&2
    for ((r = 0; r < reps; r++)); do
        rm -rf "$OUT" && mkdir -p "$OUT"
        t0=$(now)
        bash -c "$cmd" >"$work/stdout" 2>"$work/stderr"
        rc=$?
        t1=$(now)
        if [ $rc -ne 0 ]; then
            local why
            why=$(grep -v '^$' "$work/stderr" | head -1 | tr '|' '/' | cut -c1-120)
            status="failed (exit $rc${why:+: $why})"
            times=()
            break
        fi
        times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')")
        if [ "$expect" -gt 0 ]; then
            local got
            got=$(find "$OUT" -type f -name '*.png' | wc -l)
            if [ "$got" -ne "$expect" ]; then
                status="failed ($got of $expect PNG files written)"
                times=()
                break
            fi
        fi
    done
    local med="–" best="–" ips="–" mbs="–" outmb="–"
    if [ ${#times[@]} -gt 0 ]; then
        med=$(printf '%s\n' "${times[@]}" | median)
        best=$(printf '%s\n' "${times[@]}" | sort -g | head -1)
        ips=$(fmt "$(awk -v n="$nimg" -v t="$med" 'BEGIN {print n / t}')" 2)
        mbs=$(fmt "$(awk -v b="$bytes" -v t="$med" 'BEGIN {print b / 1e6 / t}')" 1)
        best=$(fmt "$best" 3)
        [ "$output" = none ] || outmb=$(fmt "$(du -sb "$OUT" | awk '{print $1 / 1e6}')" 1)
        if [ -n "$check" ] && [ -z "${NO_CHECKS:-}" ]; then
            local verdict crc
            verdict=$(bash -c "$check" 2>&1)
            crc=$?
            verdict=$(tail -1 <<<"$verdict" | tr '|' '/' | cut -c1-140)
            if [ $crc -eq 1 ]; then
                status="ran, but its output is WRONG: $verdict"
            else
                status="ok; ${verdict:-check printed nothing}"
            fi
        fi
    fi
    results_line "$row_no" "$input" "$label" "$impl" "$mode" "$output" "$nthr" "$nimg" \
        "$(fmt "$(awk -v b="$bytes" 'BEGIN {print b / 1e6}')" 1)" "$med (${#times[@]})" "$best" \
        "$ips" "$mbs" "$outmb" "$status"
}
skip_row() {  # LABEL INPUT IMPL MODE OUTPUT THREADS WHY
    if [ -n "$ONLY" ] && ! grep -qE -- "$ONLY" <<<"$1 $3 $2"; then return; fi
    row_no=$((row_no + 1))
    results_line "$row_no" "$2" "$1" "$3" "$4" "$5" "$6" "–" "–" "–" "–" "–" "–" "–" "skipped ($7)"
}

q() { printf '%q' "$1"; }
check_eq() {  # MODE FILE... -> check command line
    [ -n "$PY" ] || return 0
    local m=$1; shift
    local s
    s="$(q "$PY") $(q "$here/check_outputs.py") eq $m \"\$OUT\""
    local f
    for f in "$@"; do s+=" $(q "$f")"; done
    echo "$s"
}
check_total() {  # KIND REF GOTNAME OTHER_REF -> check command line
    [ -n "$PY" ] || return 0
    echo "if [ -f $(q "$2") ]; then $(q "$PY") $(q "$here/check_outputs.py") $1 $(q "$2") \"\$OUT/$3\" $(q "$4"); else echo 'no OpenCV total to compare with'; exit 2; fi"
}
samples() {  # SET -> first, middle and last file
    local d=${set_dir[$1]} files=()
    mapfile -t files < <(find "$d" -maxdepth 1 \( -type f -o -type l \) ! -name '.*' | LC_ALL=C sort)
    local n=${#files[@]}
    printf '%s\n' "${files[0]}" "${files[$((n / 2))]}" "${files[$((n - 1))]}" | awk '!seen[$0]++'
}
bk_flag() { [ "$1" = default ] && return 0; printf -- '--backend %s' "$1"; }
bk_name() { if [ "$1" = default ]; then echo imghist; else echo "imghist ($1)"; fi; }

folder_rows() {  # SET THREADS
    local set=$1 n=$2 dir=${set_dir[$1]} nimg=${set_n[$1]} bytes=${set_bytes[$1]}
    local label_in="$nimg × 12 MP ${set^^}"
    local smp=() slow_smp=()
    mapfile -t smp < <(samples "$set")
    mapfile -t slow_smp < <(samples "${set}_slow")
    local slow_dir=${set_dir[${set}_slow]} slow_n=${set_n[${set}_slow]} slow_bytes=${set_bytes[${set}_slow]}
    local slow_in="$slow_n × 12 MP ${set^^}"
    local ref_color=$work/ref-$set-$n-color.csv ref_gray=$work/ref-$set-$n-gray.csv
    rm -f "$ref_color" "$ref_gray"

    # OpenCV: histogram only (its totals are the references), then equalize.
    local impl ocv m
    if [ ${#impls[@]} -eq 0 ]; then
        for m in color gray; do
            skip_row "opencv_equalize $m (calcHist)" "$label_in" "–" "$m" none "$n" "no OpenCV"
            skip_row "opencv_equalize $m -o" "$label_in" "–" "$m" png "$n" "no OpenCV"
        done
    fi
    for impl in "${impls[@]}"; do
        opencv_cmd "$impl"
        if [ "$impl" = cpp ] && [ -z "$cpp_bin" ]; then
            skip_row "opencv_equalize color|gray" "$label_in" cpp "–" "–" "$n" "$cpp_why"; continue
        fi
        if [ "$impl" = py ] && [ -z "$PY" ]; then
            skip_row "opencv_equalize.py color|gray" "$label_in" py "–" "–" "$n" "no python3 with cv2"; continue
        fi
        for m in color gray; do
            local ref=$ref_color; [ $m = gray ] && ref=$ref_gray
            # the first implementation's totals are the references
            local tot=$ref; [ -f "$ref" ] && tot=$OUT/total.csv
            run_row "opencv_equalize $m (calcHist)" "$label_in" "$impl" "$m" none "$n" "$nimg" "$bytes" \
                "$REPS" 0 "" "$ocv -q -j $n --total $(q "$tot") $m $(q "$dir")"
        done
        for m in color gray; do
            run_row "opencv_equalize $m -o" "$label_in" "$impl" "$m" png "$n" "$nimg" "$bytes" \
                "$REPS" "$nimg" "" "$ocv -q -j $n -o \"\$OUT\" $m $(q "$dir")"
        done
    done

    local bk bf who
    for bk in "${backends[@]}"; do
        bf=$(bk_flag "$bk"); who=$(bk_name "$bk")
        if [ -z "$have_imghist" ]; then
            skip_row "$who: every folder row" "$label_in" native "–" "–" "$n" "$imghist_why"
            continue
        fi
        run_row "$who folder --equalize" "$label_in" native bgr2gray png "$n" "$nimg" "$bytes" \
            "$REPS" "$nimg" "$(check_eq color "${smp[@]}")" \
            "\"\$IMGHIST\" -q $bf -j $n --equalize \"\$OUT\" $(q "$dir")"
        run_row "$who folder --gray luma --equalize" "$label_in" native luma png "$n" "$nimg" "$bytes" \
            "$REPS" "$nimg" "$(check_eq gray "${smp[@]}")" \
            "\"\$IMGHIST\" -q $bf -j $n --gray luma --equalize \"\$OUT\" $(q "$dir")"
        run_row "$who folder --total" "$label_in" native bgr2gray none "$n" "$nimg" "$bytes" \
            "$REPS" 0 "$(check_total total "$ref_color" total.csv "$ref_gray")" \
            "\"\$IMGHIST\" -q $bf -j $n --total \"\$OUT/total.csv\" $(q "$dir")"
        run_row "$who folder --gray luma --total" "$label_in" native luma none "$n" "$nimg" "$bytes" \
            "$REPS" 0 "$(check_total total "$ref_gray" total.csv "$ref_color")" \
            "\"\$IMGHIST\" -q $bf -j $n --gray luma --total \"\$OUT/total.csv\" $(q "$dir")"
        run_row "$who folder --gray luma --csv" "$label_in" native luma none "$n" "$nimg" "$bytes" \
            "$REPS" 0 "$(check_total csvsum "$ref_gray" all.csv "$ref_color")" \
            "\"\$IMGHIST\" -q $bf -j $n --gray luma --csv \"\$OUT/all.csv\" $(q "$dir")"
        # One process per image, N at a time (what a script does today).
        run_row "$who per-file loop (xargs -P $n)" "$slow_in" native bgr2gray png "$n" "$slow_n" "$slow_bytes" \
            "$REPS_SLOW" "$slow_n" "$(check_eq color "${slow_smp[@]}")" \
            "find $(q "$slow_dir") -maxdepth 1 \\( -type f -o -type l \\) ! -name '.*' -print0 | LC_ALL=C sort -z | xargs -0 -P $n -n 1 sh -c '\"\$IMGHIST\" -q $bf \"\$1\" --equalize \"\$OUT/\$(basename \"\${1%.*}\").png\"' sh"
    done

    # ImageMagick: one mogrify per 10 files, N at a time, one thread each.
    if [ -z "$MOGRIFY" ]; then
        skip_row "mogrify -colorspace Gray -equalize" "$slow_in" ImageMagick "IM gray" png "$n" "no ImageMagick"
    else
        run_row "mogrify -colorspace Gray -equalize" "$slow_in" "ImageMagick" "IM gray" png "$n" "$slow_n" "$slow_bytes" \
            "$REPS_SLOW" "$slow_n" "" \
            "find $(q "$slow_dir") -maxdepth 1 \\( -type f -o -type l \\) ! -name '.*' -print0 | LC_ALL=C sort -z | xargs -0 -P $n -n 10 \"\$MOGRIFY\" -limit thread 1 -path \"\$OUT\" -format png -colorspace Gray -equalize"
    fi
}

single_rows() {  # FILE KIND
    local f=$1 kind=$2 n=$SINGLE_THREADS
    local label_in="1 × 24 MP $kind"
    if [ ! -f "$f" ]; then note "no $f: its rows skipped"; return; fi
    local bytes
    bytes=$(wc -c <"$f")
    local bk bf who impl ocv m
    for bk in "${backends[@]}"; do
        bf=$(bk_flag "$bk"); who=$(bk_name "$bk")
        if [ -z "$have_imghist" ]; then
            skip_row "$who: both 24 MP rows" "$label_in" native "–" png "$n" "$imghist_why"
            continue
        fi
        run_row "$who IN --equalize OUT.png" "$label_in" native bgr2gray png "$n" 1 "$bytes" \
            "$REPS_SINGLE" 1 "$(check_eq color "$f")" \
            "\"\$IMGHIST\" -q $bf ${jflag[*]} $(q "$f") --equalize \"\$OUT/photo24.png\""
        run_row "$who --gray luma IN --equalize OUT.png" "$label_in" native luma png "$n" 1 "$bytes" \
            "$REPS_SINGLE" 1 "$(check_eq gray "$f")" \
            "\"\$IMGHIST\" -q $bf ${jflag[*]} --gray luma $(q "$f") --equalize \"\$OUT/photo24.png\""
    done
    [ ${#impls[@]} -gt 0 ] || skip_row "opencv_equalize color|gray -o" "$label_in" "–" "–" png "$n" "no OpenCV"
    for impl in "${impls[@]}"; do
        if [ "$impl" = cpp ] && [ -z "$cpp_bin" ]; then
            skip_row "opencv_equalize color|gray -o" "$label_in" cpp "–" png "$n" "$cpp_why"; continue
        fi
        if [ "$impl" = py ] && [ -z "$PY" ]; then
            skip_row "opencv_equalize.py color|gray -o" "$label_in" py "–" png "$n" "no python3 with cv2"; continue
        fi
        opencv_cmd "$impl"
        for m in color gray; do
            run_row "opencv_equalize $m -o" "$label_in" "$impl" "$m" png "$n" 1 "$bytes" \
                "$REPS_SINGLE" 1 "" "$ocv -q -j $n -o \"\$OUT\" $m $(q "$f")"
        done
    done
}

# ---------------------------------------------------------------- header
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=
if [ "$commit" != unknown ] && [ -n "$(git -C "$root" status --porcelain -- src include kernels meson.build 2>/dev/null)" ]; then
    dirty=" (work tree: uncommitted changes in src/, include/ or kernels/)"
fi
if [ -n "${IMGHIST_COMMIT:-}" ]; then
    commit=$IMGHIST_COMMIT
elif [ -n "$have_imghist" ] && [ "$commit" != unknown ] && [ "${imghist_src#"$root"/}" = "$imghist_src" ]; then
    dirty=" of this checkout; the binary is from elsewhere (set IMGHIST_COMMIT)"
elif [ -n "$have_imghist" ] && [ "$commit" != unknown ]; then
    newer=$(find "$root/src" "$root/include" "$root/kernels" -type f -newer "$imghist_src" 2>/dev/null | head -3 | sed "s|^$root/||" | tr '\n' ' ')
    [ -z "$newer" ] || dirty+=" (sources newer than the binary: ${newer% }: rebuild?)"
fi
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')
gpu=
command -v nvidia-smi >/dev/null 2>&1 && gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
os=$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}")
mem=$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
ncpu=$(nproc)
if [ -z "${RESULTS:-}" ]; then
    tag=${ncpu}cpu
    [ -z "$gpu" ] || tag+=-$(echo "$gpu" | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//' | sed 's/^NVIDIA-//')
    RESULTS=$here/results/$(date +%F)-$tag-$(echo "${commit%% *}" | tr -c "A-Za-z0-9._\n-" _).md
fi
ocv_ver=
[ -z "$cpp_bin" ] || ocv_ver="opencv_equalize: $("$cpp_bin" --version 2>/dev/null)"
[ -z "$PY" ] || ocv_ver+="${ocv_ver:+; }$PY: cv2 $("$PY" -c 'import cv2; print(cv2.__version__)' 2>/dev/null)"
buildtype=
bo=$(dirname "$imghist_src")/../meson-info/intro-buildoptions.json
[ -f "$bo" ] && buildtype=$(grep -o '"name": "buildtype", "value": "[a-z]*"' "$bo" | sed 's/.*"value": "//; s/"$//')
load0=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%F %T UTC')
t_start=$(now)

# ---------------------------------------------------------------- run
for n in "${threads[@]}"; do
    for s in jpeg png; do
        [ -n "${set_dir[$s]:-}" ] && folder_rows "$s" "$n"
    done
done
single_rows "$single_jpg" JPEG
single_rows "$single_png" PNG

t_end=$(now)
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# ---------------------------------------------------------------- report
{
    echo "# Folder benchmark: imghist batch mode vs OpenCV, per-file calls, ImageMagick"
    echo
    echo "- date: $started; run took $(fmt "$(awk -v a="$t_start" -v b="$t_end" 'BEGIN {print (b - a) / 60}')" 1) min"
    echo "- machine: $ncpu cores (nproc), ${cpu:-unknown CPU}, $mem${gpu:+, GPU $gpu}; ${os:-unknown OS}"
    echo "- load average before / after: $load0 / $load1"
    echo "- imghist: commit $commit$dirty, $imghist_src ($("$IMGHIST" --version 2>/dev/null | head -1 || echo 'does not run')${buildtype:+, meson buildtype $buildtype}); backends: ${backends[*]}"
    echo "- OpenCV: ${ocv_ver:-none}; implementations run: ${impls[*]:-none}"
    echo "- ImageMagick: $([ -n "$MOGRIFY" ] && "$MOGRIFY" -version | head -1 | sed 's/^Version: //' || echo none)"
    for s in jpeg png; do
        [ -n "${set_dir[$s]:-}" ] || continue
        echo "- data: $s: ${set_n[$s]} files, $(fmt "$(awk -v b="${set_bytes[$s]}" 'BEGIN {print b / 1e6}')" 1) MB ($(describe "$(samples "$s" | head -1)") each)"
    done
    [ -f "$single_jpg" ] && echo "- data: single: photo24.jpg $(fmt "$(awk -v b="$(wc -c <"$single_jpg")" 'BEGIN {print b / 1e6}')" 1) MB, photo24.png $(fmt "$(awk -v b="$(wc -c <"$single_png")" 'BEGIN {print b / 1e6}')" 1) MB ($(describe "$single_jpg"))"
    echo "- repetitions: folder rows $REPS, loop and ImageMagick rows $REPS_SLOW, 24 MP rows $REPS_SINGLE; threads: ${threads[*]} (24 MP rows: $SINGLE_THREADS)"
    echo
    echo "Wall clock around the whole command, process start included, inputs in the page"
    echo "cache, outputs written to an emptied folder on $(df -P "$work" | awk 'NR==2 {print $1}'). images/s and MB/s"
    echo "(input bytes, 10^6) from the median. Mode: bgr2gray / color = imread(IMREAD_COLOR) +"
    echo "cvtColor(BGR2GRAY); luma / gray = imread(IMREAD_GRAYSCALE). impl: native = imghist's CLI,"
    echo "cpp = opencv_equalize.cpp, py = opencv_equalize.py (cv2, ThreadPoolExecutor)."
    echo
    echo "| # | input | command | impl | mode | output | threads | images | input MB | wall s, median (runs) | best s | images/s | MB/s | output MB | status |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    echo "Notes:"
    echo "- output checks: imghist's PNGs (first, middle and last image) decoded and compared with"
    echo "  OpenCV's equalizeHist in the matching mode; --total/--csv counts compared with the"
    echo "  OpenCV row's calcHist total for the same folder and mode."
    echo "- ImageMagick's -equalize is not OpenCV's equalizeHist (and it works in 16-bit): a reference"
    echo "  for speed only. It runs as one mogrify per 10 files, N at a time, each with -limit thread 1."
    echo "- The per-file loop starts one imghist process per image (xargs -P N -n 1), default threads"
    echo "  inside each."
    echo "- OpenCV rows: N worker threads over the files; OpenCV's own threads are set to"
    echo "  max(1, N / workers), so the 24 MP rows give OpenCV's parallel loops all N threads."
    for l in "${notes[@]}"; do echo "- $l"; done
} >"$work/report.md"

mkdir -p "$(dirname "$RESULTS")"
cp "$work/report.md" "$RESULTS"
cat "$work/report.md"
echo >&2
echo "run.sh: results in $RESULTS" >&2
