#!/usr/bin/env bash
# The README's first command: dependencies, build, then the apps on their built-in
# scenarios (GPU when present, else CPU):
#   gpuradar-sim      -> a pulse-Doppler SigMF recording (4 targets) and a SAR phase history
#   gpuradar-process  -> detections (JSON, CSV), range-Doppler map (PNG), truth table
#   gpuradar-sar      -> SAR image (PNG, .npy), focus of the point targets
# Outputs go to build/demo/ (or $GPURADAR_DEMO_OUT). Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install_deps.sh
tools/build.sh "$@"
out="${GPURADAR_DEMO_OUT:-$PWD/build/demo}"
mkdir -p "$out"
run() { PYTHONPATH="$PWD/build/test_modules" /usr/bin/python3 "$@"; }
echo "== gpuradar-sim: pulse-Doppler recording"
run apps/gpuradar_sim.py --output "$out/pd"
echo "== gpuradar-process: pulse framer -> pulse-Doppler chain -> CFAR"
run apps/gpuradar_process.py --input "$out/pd" --output "$out/pd_detections"
echo "== gpuradar-sim sar: SAR phase history"
run apps/gpuradar_sim.py sar --output "$out/sar_ph"
echo "== gpuradar-sar: backprojection image"
run apps/gpuradar_sar.py --input "$out/sar_ph" --output "$out/sar_image"
echo
echo "Recordings: $out/pd.sigmf-{meta,data}, $out/sar_ph.sigmf-{meta,data} + .geometry.f64"
echo "Pictures:   $out/pd_detections.png (range-Doppler map), $out/sar_image.png (SAR image)"
echo "Reports:    $out/pd_detections.json and .csv (detections, truth comparison),"
echo "            $out/sar_image.npy (complex image)"
