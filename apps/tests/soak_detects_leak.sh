#!/bin/sh
# gpuradar_soak's memory bound can fail: with host memory leaked on purpose in every
# start/stop cycle (8 MiB a cycle, bound 16 MiB) it must exit 1 with the cycles phase's
# summary saying memory_ok false; a crash, a hang or a pass fails this test.
#   soak_detects_leak.sh <path to gpuradar_soak>
soak=${1:?usage: soak_detects_leak.sh <gpuradar_soak>}
out=$("$soak" --backend cpu --cpis 0 --apertures 0 --cycles 6 --cycle-cpis 1 --samples 6 \
      --leak-kib-per-cycle 8192 --rss-bound-mib 16 --phase-timeout 120)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "soak_detects_leak: exit status $rc, expected 1" >&2; exit 1; }
echo "$out" | grep -q '"phase":"cycles","summary":true.*"memory_ok":false' ||
    { echo "soak_detects_leak: no cycles summary with memory_ok false" >&2; exit 1; }
