#!/bin/bash
# Copy this machine's Open MPI runtime (Debian 12: openmpi-bin, libopenmpi3,
# libpmix2) into a folder that can travel to a host without it, for
# bench/folder/scale.sh:
#
#   bench/folder/pack_mpi.sh DEST        (e.g. .devmpi; about 20 MB)
#
# DEST/usr mirrors the Debian layout: lib/ (libmpi.so.40 and the libraries
# it needs that a bare host may lack), lib/x86_64-linux-gnu/openmpi/lib/openmpi3
# (Open MPI's plugins), lib/x86_64-linux-gnu/pmix2 (PMIx and its plugins),
# share/openmpi and share/pmix (help texts), bin/ (orterun as mpirun, orted).
# DEST/env.sh sets what makes Open MPI look there (OPAL_PREFIX and the
# other OPAL_* folders, PMIX_INSTALL_PREFIX, LD_LIBRARY_PATH, PATH):
#   . DEST/env.sh
set -euo pipefail
[ $# -eq 1 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 2; }
dest=$1
ma=x86_64-linux-gnu
[ -x /usr/bin/orterun ] || { echo "pack_mpi.sh: no /usr/bin/orterun (apt-get install openmpi-bin)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/usr/bin" "$dest/usr/lib" "$dest/usr/lib/$ma" "$dest/usr/share"
cp -L /usr/bin/orterun "$dest/usr/bin/mpirun"
cp -L /usr/bin/orted "$dest/usr/bin/orted"
cp -a "/usr/lib/$ma/openmpi" "$dest/usr/lib/$ma/"
rm -rf "$dest/usr/lib/$ma/openmpi/include"
cp -a "/usr/lib/$ma/pmix2" "$dest/usr/lib/$ma/"
rm -rf "$dest/usr/lib/$ma/pmix2/include"
# Not needed to run C programs: Java, Fortran, C++ bindings, OpenSHMEM.
find "$dest/usr/lib/$ma/openmpi/lib" \( -name 'libmpi_java*' -o -name 'liboshmem*' \
    -o -name 'libmpi_mpifh*' -o -name 'libmpi_usempi*' -o -name 'libmpi_cxx*' \
    -o -name 'mca_spml_*' -o -name 'mca_sshmem_*' -o -name 'mca_atomic_*' -o -name 'mca_scoll_*' \
    -o -name 'mca_memheap_*' -o -name '*.jar' -o -name '*.a' -o -name '*.la' \) -exec rm -rf {} +
find "$dest/usr/lib/$ma/pmix2" \( -name '*.a' -o -name '*.la' \) -exec rm -f {} +
cp -a /usr/share/openmpi "$dest/usr/share/"
[ ! -d /usr/share/pmix ] || cp -a /usr/share/pmix "$dest/usr/share/"
# Shared libraries: what mpirun, orted, libmpi and the plugins link, minus
# what any glibc host has. Plugins whose libraries are missing (verbs, UCX,
# libfabric, PSM) are not needed on one host and their libraries stay
# behind: those plugins fail to load and Open MPI skips them.
objs=(/usr/bin/orterun /usr/bin/orted "/usr/lib/$ma/libmpi.so.40")
while IFS= read -r -d '' f; do objs+=("$f"); done < <(find "/usr/lib/$ma/openmpi/lib" "/usr/lib/$ma/pmix2" -name '*.so*' -print0)
ldd "${objs[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s|libz|libatomic|liboshmem|libmpi_mpifh)\.so' |
    grep -vE '/(libfabric|libpsm|libpsm2|libpsm_infinipath|libinfinipath|libuc[pmst]|libibverbs|librdmacm|libefa|libnl-3|libnl-route-3)\.so' |
    while read -r lib; do cp -Ln "$lib" "$dest/usr/lib/"; done
cat >"$dest/env.sh" <<'EOF'
# . this file: Open MPI from this folder (made by bench/folder/pack_mpi.sh)
_m=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)/usr
export OPAL_PREFIX=$_m OPAL_EXEC_PREFIX=$_m OPAL_BINDIR=$_m/bin
export OPAL_LIBDIR=$_m/lib/x86_64-linux-gnu/openmpi/lib
export OPAL_PKGLIBDIR=$_m/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
export OPAL_DATADIR=$_m/share OPAL_PKGDATADIR=$_m/share/openmpi
export PMIX_INSTALL_PREFIX=$_m/lib/x86_64-linux-gnu/pmix2
export PMIX_MCA_mca_base_component_path=$_m/lib/x86_64-linux-gnu/pmix2/lib/pmix
export OMPI_MCA_mca_base_component_path=$_m/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
export LD_LIBRARY_PATH=$_m/lib:$_m/lib/x86_64-linux-gnu/openmpi/lib:$_m/lib/x86_64-linux-gnu/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$_m/bin:$PATH
# one host, as root: shared memory between the ranks, no network transports
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_mca_base_component_show_load_errors=0
unset _m
EOF
du -sh "$dest" | awk '{print "pack_mpi.sh: " $1 " in " $2}'
