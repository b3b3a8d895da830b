#!/bin/sh
# Fetch nanobind (the Python binding's generator; Debian 12 has no package)
# from PyPI once, into the user's cache (outside the source tree, where
# Meson takes include folders by absolute path), and print its package
# folder for meson's -Dnanobind_dir. pip install . needs none of this: pyproject.toml lists
# nanobind as a build requirement.
set -eu
cd "$(dirname "$0")/.."
version=3.1.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/imghist
dest=$cache/nanobind-$version
if [ ! -f "$dest/nanobind/__init__.py" ]; then
    echo "scripts/nanobind.sh: fetching nanobind $version from PyPI into $dest" >&2
    [ -x "$cache/venv/bin/pip" ] || python3 -m venv "$cache/venv" >&2
    "$cache/venv/bin/pip" install --disable-pip-version-check --progress-bar off \
        --target "$dest" "nanobind==$version" >&2
fi
echo "$dest/nanobind"
