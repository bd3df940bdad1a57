#!/bin/sh
# gpuradar_soak's memory bound can fail: with host memory leaked on purpose for every SAR
# aperture (4 MiB an aperture, 16 apertures, bound 16 MiB) it must exit 1 with the
# apertures phase's summary saying memory_ok false; a crash, a hang or a pass fails this
# test. (The bound and the samples are one piece of code for all three phases.)
#   soak_detects_leak.sh <path to gpuradar_soak>
soak=${1:?usage: soak_detects_leak.sh <gpuradar_soak>}
out=$("$soak" --backend cpu --cpis 0 --apertures 16 --cycles 0 --samples 16 \
      --leak-kib-per-aperture 4096 --rss-bound-mib 16 --phase-timeout 120)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || { echo "soak_detects_leak: exit status $rc, expected 1" >&2; exit 1; }
echo "$out" | grep -q '"phase":"apertures","summary":true.*"memory_ok":false' ||
    { echo "soak_detects_leak: no apertures summary with memory_ok false" >&2; exit 1; }
