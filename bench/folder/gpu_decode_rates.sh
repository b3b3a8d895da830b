#!/bin/sh
# GPU JPEG decoding on one and on every GPU, and --equalize with the GPU's
# decode against the CPU's and OpenCV's, over 1024 12-megapixel JPEGs made
# from the samples (as nvjpeg_rate.sh makes them). Rates: the CLI's summary
# line of the second of two runs; --equalize: wall clock of the command.
# "16c" rows run under taskset -c 0-15 with -j 16. Run from the source root.
#   bench/folder/gpu_decode_rates.sh IMGHIST LOGDIR
set -u
X=$1
L=$2; mkdir -p "$L"
nvidia-smi -L
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT; mkdir -p $D/in
python3 "$(dirname "$0")/make_jpegs.py" samples $D/in 1024
mkdir -p $D/in256; for f in $(ls $D/in | head -256); do ln $D/in/$f $D/in256/$f; done
echo "data: $(ls $D/in | wc -l) files, $(du -sm $D/in | cut -f1) MB" | tee -a $L/summary.txt
cat $D/in/* > /dev/null
rate() { # label, then the command; runs twice, keeps the second summary line
  lab=$1; shift
  for p in 1 2; do "$@" > $L/r.out 2> $L/r.err; done
  printf '%-34s %s\n' "$lab" "$(grep 'images in' $L/r.err | tail -n 1)" | tee -a $L/rates.txt
  grep "decode:" $L/r.err | sed 's/^/    /' >> $L/rates.txt
}
T16="taskset -c 0-15"
rate "gpu0 16c" $T16 $X --gray luma --decode gpu --gpus 0 -j 16 -v --total $D/t.csv $D/in
rate "cpu -j16 16c" $T16 $X --gray luma --decode cpu -j 16 --total $D/c.csv $D/in
rate "auto gpu0 -j16 16c" $T16 $X --gray luma -j 16 --gpus 0 -v --total $D/a.csv $D/in
cmp $D/t.csv $D/c.csv && cmp $D/a.csv $D/c.csv && echo "totals equal" | tee -a $L/rates.txt
# The GPU peer on the same files: torchvision's batched GPU decode + bincount.
IMGHIST_TOTAL=$D/c.csv python3 "$(dirname "$0")/torchvision_decode.py" $D/in 48 2>&1 | tee -a $L/rates.txt
for r in 1 2; do
  rate "gpu0 all cores" $X --gray luma --decode gpu --gpus 0 -v --total $D/t.csv $D/in
  rate "gpu0,1 all cores" $X --gray luma --decode gpu --gpus 0,1 -v --total $D/t2.csv $D/in
  rate "gpu all all cores" $X --gray luma --decode gpu -v --total $D/t3.csv $D/in
done
rate "cpu all cores" $X --gray luma --decode cpu --total $D/c2.csv $D/in
rate "auto all cores" $X --gray luma -v --total $D/a2.csv $D/in
cmp $D/t2.csv $D/c.csv && cmp $D/t3.csv $D/c.csv && cmp $D/a2.csv $D/c.csv && echo "totals equal (2)" | tee -a $L/rates.txt
# --equalize: 256 files to PNG, 16 cores
eq() { lab=$1; shift; rm -rf $D/eq; mkdir $D/eq; s=$(date +%s.%N); "$@" > $L/e.out 2> $L/e.err; rc=$?; e=$(date +%s.%N); printf "%-34s rc=%s %s s  %s\n" "$lab" $rc $(python3 -c "print(round($e-$s,2))") "$(tail -n 1 $L/e.err)" | tee -a $L/rates.txt; grep "decode:" $L/e.err | sed 's/^/    /' >> $L/rates.txt; }
for r in 1 2; do
  eq "eq cpu -j16 16c" $T16 $X --gray luma --decode cpu -j 16 -q --equalize $D/eq $D/in256
  eq "eq gpu0 -j16 16c" $T16 $X --gray luma --decode gpu --gpus 0 -j 16 -v --equalize $D/eq $D/in256
  eq "eq auto gpu0 -j16 16c" $T16 $X --gray luma --gpus 0 -j 16 -v --equalize $D/eq $D/in256
  eq "eq auto1024 gpu0 -j16 16c" $T16 $X --gray luma --gpus 0 -j 16 -v --equalize $D/eq $D/in
  eq "eq cpu-decode1024 -j16 16c" $T16 $X --gray luma --decode cpu -j 16 -v --equalize $D/eq $D/in
  eq "eq gpu1024 -j16 16c" $T16 $X --gray luma --decode gpu --gpus 0 -j 16 -v --equalize $D/eq $D/in
  eq "eq opencv py -j16 16c" $T16 python3 bench/folder/opencv_equalize.py -j 16 -o $D/eq gray $D/in256
done
eq "eq gpu0 stats 16c" $T16 $X --gray luma --decode gpu --gpus 0 -j 16 -v --stats --equalize $D/eq $D/in256
cp $L/e.err $L/stats_gpu.txt
eq "eq cpu stats 16c" $T16 $X --gray luma --decode cpu -j 16 -v --stats --equalize $D/eq $D/in256
cp $L/e.err $L/stats_cpu.txt
eq "eq gpu all cores" $X --gray luma --decode gpu -v --equalize $D/eq $D/in256
eq "eq cpu all cores" $X --gray luma --decode cpu -q --equalize $D/eq $D/in256

