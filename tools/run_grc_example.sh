#!/usr/bin/env bash
# Compile one .grc with grcc against this module's block YAML and, with --run, run the
# generated Python flowgraph (it must stop by itself). Used by ctest for examples/.
#   tools/run_grc_example.sh <example.grc> <out-dir> <test_modules-dir> [--run]
set -euo pipefail
grc=$1 out=$2 modules=$3
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
GRC_BLOCKS_PATH="$here/grc" grcc -o "$out" "$grc"
name=$(sed -n 's/^    id: //p' "$grc" | head -1)
[ -f "$out/$name.py" ] || { echo "grcc produced no $out/$name.py" >&2; exit 1; }
if [ "${4:-}" = "--run" ]; then
    PYTHONPATH="$modules" timeout 120 /usr/bin/python3 "$out/$name.py"
fi
