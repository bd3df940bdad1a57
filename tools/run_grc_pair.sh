#!/usr/bin/env bash
# Runs a transmitter / receiver pair of ZMQ examples, as two processes (used by ctest for
# examples/): compiles both with grcc, starts the transmitter's flowgraph in the background
# bound to an ipc:// socket in a fresh private directory, sending until stopped (--ncpi 0),
# runs the receiver through tools/run_grc_example.sh connected to the same socket with
# --ncpi NCPI (it stops by itself after NCPI CPIs: its ZMQ source ends once the Head after
# it is full and more samples arrive), then stops the transmitter with SIGTERM.
#   tools/run_grc_pair.sh <tx.grc> <rx.grc> <out-dir> <test_modules-dir> <ncpi>
#                         [run_grc_example.sh options for the receiver] [-- receiver arguments]
# Both flowgraphs get --address (a GRC parameter). The pair passes only when the receiver
# exits with status 0, the transmitter was still running when the receiver ended and, if
# it stops within TX_GRACE_S of SIGTERM, it exits with status 0. A transmitter that does
# not stop is only warned about (its Python stacks printed) and killed: now and then
# GNU Radio's ZMQ PUSH sink, its receiver gone, keeps polling and ignores the stop.
set -euo pipefail
tx_grc=$1 rx_grc=$2 out=$3 modules=$(realpath -m "$4") ncpi=$5
shift 5
TX_GRACE_S=10
here=$(cd "$(dirname "$0")/.." && pwd)
rx_opts=() rx_args=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then shift; rx_args=("$@"); break; fi
    rx_opts+=("$1"); shift
done
mkdir -p "$out/tx"
"$here/tools/run_grc_example.sh" "$tx_grc" "$out/tx" "$modules"
tx_name=$(sed -n 's/^    id: //p' "$tx_grc" | head -1)
sock_dir=$(mktemp -d)  # mode 0700: only this user reaches the socket
address="ipc://$sock_dir/pair"
# -X faulthandler: a transmitter that does not stop is aborted with its threads' stacks.
(ulimit -c 0; cd "$out/tx" && PYTHONPATH="$modules" exec /usr/bin/python3 -X faulthandler "$tx_name.py" \
    --address "$address" --ncpi 0) &
tx_pid=$!
cleanup() { kill -KILL "$tx_pid" 2>/dev/null || true; rm -rf "$sock_dir"; }
trap cleanup EXIT
rx_rc=0
"$here/tools/run_grc_example.sh" "$rx_grc" "$out" "$modules" "${rx_opts[@]}" -- \
    "${rx_args[@]}" --address "$address" --ncpi "$ncpi" || rx_rc=$?
tx_rc=0
if kill -TERM "$tx_pid" 2>/dev/null; then
    for _ in $(seq $((TX_GRACE_S * 10))); do
        kill -0 "$tx_pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$tx_pid" 2>/dev/null; then
        echo "run_grc_pair.sh: warning: $tx_name did not stop within ${TX_GRACE_S} s" \
             "of SIGTERM; aborted" >&2
        kill -ABRT "$tx_pid" 2>/dev/null || true
        wait "$tx_pid" || true
    else
        wait "$tx_pid" || tx_rc=$?
    fi
else
    wait "$tx_pid" || true
    echo "run_grc_pair.sh: $tx_name ended before the receiver" >&2
    tx_rc=1
fi
[ $tx_rc -eq 0 ] || echo "run_grc_pair.sh: $tx_name failed ($tx_rc)" >&2
[ $rx_rc -eq 0 ] && [ $tx_rc -eq 0 ]
