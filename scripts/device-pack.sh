#!/bin/sh
# Copy what scripts/device-ab.sh runs out of a build folder into DEST (the
# library, the CLI, the GPU test suites and the benchmarks, in the build's
# own layout, so their relative run paths still find the library), and the
# shared libraries they load that a bare GPU machine lacks into .devlibs/.
#   scripts/device-pack.sh BUILD DEST
set -eu
B=$1
D=$2
mkdir -p "$D/src" "$D/tests" "$D/bench" .devlibs
for f in "$B"/src/libimghist.so*; do
    [ -d "$f" ] || cp -a "$f" "$D/src/"
done
cp "$B/src/imghist" "$D/src/"
for t in test_context test_histogram test_equalize test_joint test_clahe test_ndhist test_compare test_files \
    make_jpeg; do
    [ -x "$B/tests/$t" ] && cp "$B/tests/$t" "$D/tests/"
done
for b in imghist_bench imghist_bench_wide imghist_bench_joint imghist_bench_batch \
    imghist_bench_views16 imghist_bench_ndhist imghist_bench_host_cost imghist_bench_backproject; do
    [ -x "$B/bench/$b" ] && cp "$B/bench/$b" "$D/bench/"
done
# Everything they load from outside the C library and the CUDA driver.
for f in "$D"/src/* "$D"/tests/* "$D"/bench/*; do
    ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | grep -v -e '/libc\.so' -e '/libm\.so' -e '/libpthread' -e '/libdl\.so' \
    -e '/librt\.so' -e 'ld-linux' -e '/libstdc++' -e '/libgcc_s' -e 'libimghist' -e 'libcuda\.' |
    while read -r lib; do cp -L "$lib" .devlibs/; done
# nvJPEG, which the CLI opens at run time (no ldd sees it), when the build has
# it: from -Dnvjpeg_dir, else from the CUDA toolkit.
if grep -q 'IH_HAVE_NVJPEG=1' "$B/build.ninja" 2>/dev/null; then
    dir=$(python3 -c 'import json, sys
print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "nvjpeg_dir"), ""))' \
        <"$B/meson-info/intro-buildoptions.json")
    nvcc=$(command -v nvcc || true)
    for lib in "$dir/lib/libnvjpeg.so.13" "${nvcc%/bin/nvcc}/lib64/libnvjpeg.so.13"; do
        if [ -f "$lib" ]; then
            cp -L "$lib" .devlibs/
            break
        fi
    done
fi
du -sh "$D" .devlibs
