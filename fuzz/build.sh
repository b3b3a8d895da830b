#!/bin/sh
# Build the libFuzzer targets with clang, outside Meson:
#   fuzz/out/fuzz_load   imghist_load_memory + histogram + equalize
#   fuzz/out/fuzz_args   the CLI's ih_parse_args
# Both run under AddressSanitizer and UndefinedBehaviorSanitizer (any UB report
# is a crash). stb_image is compiled from Debian's header into the targets
# (Debian's libstb is that same code built with no options), so that the
# fuzzer sees its coverage and ASan its memory accesses; libpng and
# libjpeg-turbo are the system's shared libraries (not instrumented: their
# internals give no coverage, but ASan still checks what they hand back).
# usage: fuzz/build.sh            (CC=clang-14 etc. to pick another clang)
set -eu
cd "$(dirname "$0")/.."

# clang and libFuzzer (clang's runtime package on Debian 12).
scripts/deps.sh --fuzz

CC=${CC:-clang}
out=fuzz/out
mkdir -p "$out/include" "$out/obj"

# The public header, configured as Meson would with the CUDA backend off.
version=$(sed -n "s/^ *version: *'\([0-9][0-9.]*\)'.*/\1/p" meson.build | head -n 1)
major=${version%%.*}
rest=${version#*.}
minor=${rest%%.*}
patch=${rest#*.}
sed -e "s/@VERSION@/$version/g" -e "s/@VERSION_MAJOR@/$major/g" \
    -e "s/@VERSION_MINOR@/$minor/g" -e "s/@VERSION_PATCH@/$patch/g" \
    -e "s/@WITH_CUDA@/0/g" include/imghist.h.in > "$out/include/imghist.h.tmp"
if grep -q '@[A-Z_]*@' "$out/include/imghist.h.tmp"; then
    echo "fuzz/build.sh: unconfigured @VAR@ left in imghist.h:" >&2
    grep -n '@[A-Z_]*@' "$out/include/imghist.h.tmp" >&2
    exit 1
fi
mv "$out/include/imghist.h.tmp" "$out/include/imghist.h"

# stb_image 2.27 as Debian ships it: imghist guards against its known hang
# (CVE-2021-42715, an RLE HDR that ends early) and crash (Softimage PIC), so
# the fuzz build must not patch them away.
rm -rf "$out/stb"
printf '#define STB_IMAGE_IMPLEMENTATION\n#include <stb_image.h>\n' > "$out/stb_image_impl.c"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
CFLAGS="-g -O1 -std=c11 $SAN $(pkg-config --cflags stb libpng libjpeg libexif libdeflate libtiff-4)"
INC="-I$out/include -Isrc/core -Isrc/cpu -Isrc/io -Isrc/common -Isrc/cli"
LIBS="$(pkg-config --libs libpng zlib libjpeg libexif libdeflate libtiff-4) -lgif -lm -pthread"

# The library's C sources (those of src/meson.build without CUDA): every C
# file of the library's folders but the stand-in for a build without I/O, so
# that a new source file cannot be left out of the fuzz build.
lib_src="src/create.c $(ls src/core/*.c src/cpu/*.c src/io/*.c src/common/*.c | grep -v '/io_disabled\.c$')"

compile() { # source object [extra flags]
    src=$1 obj=$2
    shift 2
    $CC $CFLAGS -fsanitize=fuzzer-no-link $INC "$@" -c "$src" -o "$obj"
}

# Per-pixel loops (gray conversion, histogram, LUT, the harness's checks; the
# format dispatch is on memcmp, which libFuzzer hooks anyway) gain nothing from
# comparison tracing, which took 3/4 of the time on large images: off there.
NOCMP="-fno-sanitize-coverage=trace-cmp"
lib_obj=""
for src in $lib_src; do
    obj="$out/obj/$(basename "$src" .c).o"
    case $src in
        */cpu_hist.c | */equalize_lut.c | */load.c) compile "$src" "$obj" $NOCMP ;;
        *) compile "$src" "$obj" ;;
    esac
    lib_obj="$lib_obj $obj"
done
# stb_image's own code; warnings there are not ours. Its known undefined
# behaviour (tests/crashers/stb_*: PSD matte removal, the JPEG DHT reader) is
# kept from running by imghist's guards, so UB there is fatal like anywhere
# else: a new report is a new finding.
compile "$out/stb_image_impl.c" "$out/obj/stb_image_impl.o" -w
# The CLI's parser and what it calls (every CLI file but main.c), without MPI
# or cairo.
cli_obj=""
for src in $(ls src/cli/*.c | grep -v '/main\.c$'); do
    obj="$out/obj/cli_$(basename "$src" .c).o"
    compile "$src" "$obj" -DIH_HAVE_MPI=0 -DIH_HAVE_CAIRO=0
    cli_obj="$cli_obj $obj"
done

$CC $CFLAGS -fsanitize=fuzzer $NOCMP $INC fuzz/fuzz_load.c $lib_obj "$out/obj/stb_image_impl.o" \
    $LIBS -o "$out/fuzz_load"
# The parser asks the library for backend names (imghist_backend_from_name).
$CC $CFLAGS -fsanitize=fuzzer $INC fuzz/fuzz_args.c $cli_obj $lib_obj \
    "$out/obj/stb_image_impl.o" $LIBS -o "$out/fuzz_args"
echo "fuzz/build.sh: built $out/fuzz_load and $out/fuzz_args"
