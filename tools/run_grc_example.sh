#!/usr/bin/env bash
# Compile one .grc with grcc against this module's block YAML and, with --run, run the
# generated Python flowgraph (it must stop by itself). Used by ctest for examples/.
#   tools/run_grc_example.sh <example.grc> <out-dir> <test_modules-dir> [--run] [--xvfb]
#                            [--timeout S] [--check-display REC-DIR [--screenshot PNG]]
#                            [-- flowgraph arguments...]
# --xvfb runs the flowgraph under a virtual X server (xvfb-run), for QT GUI flowgraphs;
# --check-display runs it through tools/check_grc_display.py (implies --run --xvfb): its
# range-Doppler / SAR displays must show the targets of the recordings in REC-DIR;
# arguments after -- go to the generated flowgraph (its GRC "parameter" blocks, e.g.
# --recording FILE --exit-when-done 1).
set -euo pipefail
grc=$1 out=$2 modules=$3
shift 3
run=0 xvfb=0 limit=120 args=() check=()
while [ $# -gt 0 ]; do
    case "$1" in
        --run) run=1 ;;
        --xvfb) xvfb=1 ;;
        --timeout) limit=$2; shift ;;
        --check-display) run=1; xvfb=1; check=(--recordings "$(realpath -m "$2")"); shift ;;
        --screenshot) check+=(--screenshot "$(realpath -m "$2")"); shift ;;
        --) shift; args=("$@"); break ;;
        *) echo "run_grc_example.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# PYTHONPATH: grcc loads embedded Python blocks, which may import gnuradio.gpuradar.
PYTHONPATH="$modules" GRC_BLOCKS_PATH="$here/grc" grcc -o "$out" "$grc"
name=$(sed -n 's/^    id: //p' "$grc" | head -1)
[ -f "$out/$name.py" ] || { echo "grcc produced no $out/$name.py" >&2; exit 1; }
if [ $run -eq 1 ]; then
    cmd=(timeout "$limit" /usr/bin/python3 "$out/$name.py" "${args[@]}")
    if [ ${#check[@]} -gt 0 ]; then
        cmd=(timeout "$limit" /usr/bin/python3 "$here/tools/check_grc_display.py"
             "${check[@]}" "$out/$name.py" -- "${args[@]}")
    fi
    if [ $xvfb -eq 1 ]; then
        command -v xvfb-run >/dev/null || { echo "xvfb-run missing (tools/install_deps.sh)" >&2; exit 1; }
        cmd=(env QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1280x1024x24" "${cmd[@]}")
    fi
    (cd "$out" && PYTHONPATH="$modules" "${cmd[@]}")
fi
