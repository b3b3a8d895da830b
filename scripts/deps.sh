#!/bin/sh
# Install the Debian 12 packages imghist needs, when any is missing.
# usage: scripts/deps.sh [extra-package ...]
set -eu
pkgs="meson ninja-build pkg-config gcc g++ libc6-dev dpkg-dev libstb-dev libpng-dev libjpeg62-turbo-dev libexif-dev libdeflate-dev libisal-dev libtiff-dev libgif-dev libcmocka-dev libopenmpi-dev openmpi-bin libcairo2-dev $*"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "scripts/deps.sh: installing:$missing"
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
