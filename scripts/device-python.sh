#!/bin/sh
# On the GPU machine: build the Python binding against a carried CUDA build
# of libimghist with the machine's own Python, nanobind and g++ (its Python
# is not this one's), into a package folder beside the carried sources.
#   scripts/device-python.sh LIBDIR INCLUDEDIR DEST
# LIBDIR holds libimghist.so.N; INCLUDEDIR the generated imghist.h; DEST
# receives imghist/ (sources, binding, library). Prints DEST/imghist.
set -eu
lib=$1
inc=$2
dest=$3
src=$(cd "$(dirname "$0")/.." && pwd)/python/imghist
mkdir -p "$dest/imghist" "$dest/obj"
cp "$src"/*.py "$src"/py.typed "$dest/imghist/"
cp -a "$lib"/libimghist.so* "$dest/imghist/"
nb=$(python3 -c 'import nanobind; print(nanobind.source_dir() + "/..")')
pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suffix=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
flags="-O2 -fPIC -std=c++17 -fvisibility=hidden -fno-strict-aliasing -DNDEBUG -I$pyinc -I$nb/include -I$nb/ext/robin_map/include -I$inc"
g++ $flags -c "$nb/src/nb_combined.cpp" -o "$dest/obj/nb.o" &
g++ $flags -c "$src/_imghist.cpp" -o "$dest/obj/ext.o"
wait
g++ -shared -o "$dest/imghist/_imghist$suffix" "$dest/obj/ext.o" "$dest/obj/nb.o" \
    -L"$dest/imghist" -l:"$(basename "$(ls "$dest"/imghist/libimghist.so.[0-9] | head -1)")" \
    -Wl,-rpath,'$ORIGIN'
echo "$dest/imghist"
