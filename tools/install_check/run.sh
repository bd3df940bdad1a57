#!/usr/bin/env bash
# ctest install_check: install the build into a scratch prefix, then build and run a
# consumer project against it with find_package(gnuradio-gpuradar).
#   tools/install_check/run.sh <build-dir> <scratch-dir>
set -euo pipefail
build=$1 scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
for f in include/gnuradio/gpuradar/device_buffer.h share/gnuradio/grc/blocks/gpuradar_envelope.block.yml; do
    [ -f "$scratch/prefix/$f" ] || { echo "install_check: $f not installed" >&2; exit 1; }
done
ls "$scratch"/prefix/lib*/python*/*-packages/gnuradio/gpuradar/gpuradar_python*.so >/dev/null
cmake -S "$here" -B "$scratch/consumer" -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/consumer" >/dev/null
# No LD_LIBRARY_PATH: the consumer finds libgnuradio-gpuradar through its build RPATH
# and that library finds libgpuradar-kernels through its $ORIGIN RPATH.
env -u LD_LIBRARY_PATH "$scratch/consumer/consumer"
